#!/usr/bin/env bash
# The CUDA backend's check on a machine with one NVIDIA GPU, from a clean tree:
#   1. configures a fresh Release build with the CUDA backend, examples and benchmarks on (Vulkan
#      off);
#   2. builds only what the check runs, on all cores: the CUDA tests (eredu_test_cuda,
#      eredu_test_cuda_backend with the eredu-run it compares against), eredu-cuda-probe,
#      eredu-synth and eredu-bench;
#   3. starts writing a synthetic 1B-shape Llama (eredu-synth --preset llama1b) at F16, Q8_0, Q4_0
#      and Q4_K into BUILD/gpu-check-models in the background (kept: a rerun reuses them), and
#      meanwhile runs ctest -L cuda --output-on-failure;
#   4. runs eredu-cuda-probe (device-to-device copy bandwidth, dequantize throughput per encoding,
#      cuBLAS F16 GEMM throughput at the llama1b linear shapes for 512 tokens) and prints its tables;
#   5. runs eredu-bench --backend cuda -p 512 -n 128 on the four files (-o csv);
#   6. prints one summary table (bench/gpu-summary.sh): per file tg128 t/s, GB/s of weights read and
#      % of the copy bandwidth, pp512 t/s, prefill GFLOP/s and % of cuBLAS's, then the issue's
#      targets (decode >= 80% of copy bandwidth for F16, >= 65% for Q4_0; prefill >= 50% of
#      cuBLAS for F16) and whether each is met. A missed target does not fail the script;
#   7. the same decode without CUDA graphs, then compute-sanitizer memcheck and racecheck on the
#      end-to-end session tests (the slowest step, bounded by the deadline below);
#   8. where ncu is installed, bench/gpu-decode-profile.sh on the F16 and Q4_0 files: one eager
#      decode step's kernel time per kernel (informative; also bounded by the deadline).
# Without a usable GPU the probe prints "no CUDA device: ..."; the script says so and stops there.
# A failed test does not stop the measurements (a GPU's minutes are few: one run should say
# everything); the script then exits 1 at the end.
# Exit status: 0 all done (targets met or not), 1 configure/build/test/probe/model/benchmark/
# sanitizer failure, 2 no CUDA device (tests passed).
#
# Environment: EREDU_CUDA_ARCHS (CMAKE_CUDA_ARCHITECTURES, default 90), EREDU_GPU_CHECK_BUILD
# (build directory, default build-gpu-check), EREDU_GPU_CHECK_JOBS (build jobs, default nproc),
# EREDU_GPU_CHECK_REPS (eredu-bench -r, default 2), EREDU_GPU_CHECK_DEADLINE (seconds from the
# start after which the sanitizer steps are skipped with a message, default none),
# EREDU_GPU_CHECK_STEP_TIMEOUT (seconds for one test, one benchmark run or one model file, default
# 300), EREDU_GPU_CHECK_CTEST_JOBS (tests run at once, each its own process and CUDA context,
# default 8), EREDU_GPU_CHECK_NO_BUILD=1 (measure the binaries already built in the build directory:
# no configure, no build), OUT (logs go to $OUT/gpu-check, else
# BUILD/gpu-check-logs), EREDU_SHARED_DIR (the quant-zoo tests' data, default ../shared; they skip
# without it), EREDU_PROBE_COPY_MIB / EREDU_PROBE_RUNS (see bench/cuda-probe).
# Meant to finish in under 5 minutes on an H200 machine (16 cores); it prints each step's start
# time and the total, and says so when the total is over 5 minutes.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EREDU_GPU_CHECK_BUILD:-$root/build-gpu-check}
archs=${EREDU_CUDA_ARCHS:-90}
if [[ -n "${OUT:-}" ]]; then logs=$OUT/gpu-check; else logs=$build/gpu-check-logs; fi
mkdir -p "$logs"
jobs=${EREDU_GPU_CHECK_JOBS:-$(nproc)}
reps=${EREDU_GPU_CHECK_REPS:-2}
step_timeout=${EREDU_GPU_CHECK_STEP_TIMEOUT:-300}
ctest_jobs=${EREDU_GPU_CHECK_CTEST_JOBS:-8}
models=$build/gpu-check-models
types=(F16 Q8_0 Q4_0 Q4_K)
generator=()
if command -v ninja > /dev/null; then generator=(-G Ninja); fi

step() { echo "== $* ($(date -u +%H:%M:%S))"; }
# Runs a step with its output in a log; on failure shows the log's end and exits 1.
logged() {
  local name=$1
  shift
  if ! "$@" > "$logs/$name.log" 2>&1; then
    tail -n 40 "$logs/$name.log"
    echo "gpu-check: $name failed (log: $logs/$name.log)"
    exit 1
  fi
}

start=$SECONDS
deadline=${EREDU_GPU_CHECK_DEADLINE:-0}
failures=()
# Seconds left before the deadline (a large number without one).
remaining() { if ((deadline > 0)); then echo $((deadline - (SECONDS - start))); else echo 100000; fi; }

if [[ ${EREDU_GPU_CHECK_NO_BUILD:-0} == 1 ]]; then
  step "no build (EREDU_GPU_CHECK_NO_BUILD=1): the binaries and test lists already in $build"
else
  step "configure: Release, CUDA on, CMAKE_CUDA_ARCHITECTURES=$archs, $build"
  logged configure cmake --fresh -S "$root" -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DEREDU_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" \
    -DEREDU_WITH_VULKAN=OFF -DEREDU_BUILD_TESTS=ON -DEREDU_BUILD_EXAMPLES=ON -DEREDU_BUILD_BENCH=ON
  targets=(eredu_test_cuda eredu_test_cuda_backend eredu-cuda-probe eredu-synth eredu-bench)
  # Ninja goes on past a failed file (-k 0), so one build log names every error.
  keep_going=()
  if ((${#generator[@]} > 0)); then keep_going=(-- -k 0); fi
  step "build: ${targets[*]} (-j$jobs)"
  logged build cmake --build "$build" --parallel "$jobs" --target "${targets[@]}" "${keep_going[@]}"
fi

# The models are written on the CPU while the tests use the GPU. Each under a temporary name and
# renamed, so an interrupted run leaves no partial file.
step "models (background): eredu-synth --preset llama1b --type ${types[*]} in $models"
mkdir -p "$models"
files=()
for type in "${types[@]}"; do files+=("$models/llama1b-$type.gguf"); done
write_models() {
  local type file
  for type in "${types[@]}"; do
    file=$models/llama1b-$type.gguf
    if [[ -s $file ]]; then
      echo "$file: there already (written by an earlier run; the output depends only on the options)"
      continue
    fi
    timeout "$step_timeout" "$build/bin/eredu-synth" --preset llama1b --type "$type" -o "$file.partial" -q &&
      mv "$file.partial" "$file" || echo "eredu-synth --type $type failed"
  done
}
write_models > "$logs/synth.log" 2>&1 &
synth_pid=$!
# An early exit stops the writer and its eredu-synth too.
stop_models() { pkill -P "$synth_pid" 2> /dev/null || true; kill "$synth_pid" 2> /dev/null || true; }
trap stop_models EXIT

step "ctest -L cuda -j$ctest_jobs"
# The full listing goes to the log; the console gets the summary (and the failures' output).
if (cd "$build" && ctest -L cuda -j"$ctest_jobs" --output-on-failure \
  --timeout "$step_timeout") > "$logs/ctest.log" 2>&1; then
  grep -E "tests passed" "$logs/ctest.log"
else
  grep -E -A30 "\*\*\*Failed|\*\*\*Exception|\*\*\*Timeout" "$logs/ctest.log" | head -n 160 || true
  grep -E "tests passed|tests failed" "$logs/ctest.log" || true
  grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)" \
    "$logs/ctest.log" || true
  echo "gpu-check: CUDA tests failed (log: $logs/ctest.log); the measurements go on"
  failures+=("ctest")
fi
skipped=$(grep -c "(Skipped)" "$logs/ctest.log" || true)
echo "of which skipped: $skipped (the reasons: $build/bin/eredu_test_cuda, or $logs/ctest.log)"

step "eredu-cuda-probe"
set +e
timeout "$step_timeout" "$build/bin/eredu-cuda-probe" > "$logs/probe.log" 2>&1
probe_status=$?
set -e
cat "$logs/probe.log"
if [[ $probe_status -eq 2 ]]; then
  echo "gpu-check: no CUDA device here; the tests above ran (GPU tests skipped), nothing measured."
  if ((${#failures[@]} > 0)); then exit 1; fi
  exit 2
elif [[ $probe_status -ne 0 ]]; then
  echo "gpu-check: eredu-cuda-probe failed with status $probe_status (log: $logs/probe.log)"
  failures+=("probe")
fi

step "models: waiting for eredu-synth"
wait "$synth_pid" || true
trap - EXIT
cat "$logs/synth.log"
ls -l "${files[@]}" || true

step "eredu-bench --backend cuda -p 512 -n 128 -r $reps, one run per file"
# One run per file, so that one file's failure still leaves the others' rows in the table (the
# script then exits 1 after printing it). The rows go to bench.csv under one header.
bench_failed=()
: > "$logs/bench.csv"
for i in "${!types[@]}"; do
  type=${types[$i]}
  if [[ ! -s ${files[$i]} ]]; then
    echo "gpu-check: ${files[$i]} was not written (log: $logs/synth.log)"
    bench_failed+=("$type")
    continue
  fi
  bench_cmd=("$build/bin/eredu-bench" --backend cuda -m "${files[$i]}" -p 512 -n 128 -r "$reps"
    -o csv -q)
  if ! timeout "$step_timeout" "${bench_cmd[@]}" > "$logs/bench-$type.csv" 2> "$logs/bench-$type.log"; then
    tail -n 20 "$logs/bench-$type.log"
    echo "gpu-check: ${bench_cmd[*]} failed (log: $logs/bench-$type.log)"
    bench_failed+=("$type")
    continue
  fi
  if [[ ! -s $logs/bench.csv ]]; then head -n 1 "$logs/bench-$type.csv" > "$logs/bench.csv"; fi
  tail -n +2 "$logs/bench-$type.csv" >> "$logs/bench.csv"
done
if ((${#bench_failed[@]} > 0)); then failures+=("eredu-bench on ${bench_failed[*]}"); fi
if [[ -s $logs/bench.csv ]]; then
  cat "$logs/bench.csv"
  step "summary"
  if bash "$root/bench/gpu-summary.sh" "$logs/probe.log" "$logs/bench.csv" > "$logs/summary.md" \
    2> "$logs/summary.log"; then
    echo
    cat "$logs/summary.md"
    echo
  else
    cat "$logs/summary.log"
    echo "gpu-check: the summary table could not be made (inputs: $logs/probe.log, $logs/bench.csv)"
    failures+=("summary")
  fi
else
  echo "gpu-check: eredu-bench failed on every file; no table"
fi

# The same decode without CUDA graphs (EREDU_CUDA_GRAPHS=0), to show what the graphs are worth.
step "eager decode (EREDU_CUDA_GRAPHS=0): eredu-bench -p 0 -n 128"
for i in "${!types[@]}"; do
  [[ -s ${files[$i]} ]] || continue
  if EREDU_CUDA_GRAPHS=0 timeout 120 "$build/bin/eredu-bench" --backend cuda -m "${files[$i]}" \
    -p 0 -n 128 -r "$reps" -o csv -q > "$logs/eager-${types[$i]}.csv" 2>&1; then
    awk -F, -v t="${types[$i]}" 'NR > 1 { printf "%s eager tg128: %s t/s\n", t, $12 }' \
      "$logs/eager-${types[$i]}.csv"
  else
    echo "${types[$i]} eager decode failed (log: $logs/eager-${types[$i]}.csv)"
  fi
done

# compute-sanitizer on the end-to-end session and decode-graph tests (stories260K: prompt, decode
# steps eager and replayed): memcheck (out-of-bounds and misaligned accesses, leaks of device
# memory) and racecheck (shared-memory hazards). A report fails the check.
sanitizer=$(command -v compute-sanitizer || true)
if [[ -z $sanitizer && -x /usr/local/cuda/bin/compute-sanitizer ]]; then
  sanitizer=/usr/local/cuda/bin/compute-sanitizer
fi
sanitized_tests='CudaSession.PrefillAndDecode*:CudaDecodeGraph.ReplayedDecodeSteps*'
if [[ -z $sanitizer ]]; then
  echo "gpu-check: compute-sanitizer not found; memcheck and racecheck skipped"
else
  for tool in memcheck racecheck; do
    left=$(remaining)
    if ((left < 30)); then
      echo "gpu-check: compute-sanitizer --tool $tool skipped: ${left} s left before the deadline"
      continue
    fi
    limit=$((left < 600 ? left - 10 : 600))
    step "compute-sanitizer --tool $tool ($sanitized_tests, at most $limit s)"
    if timeout "$limit" "$sanitizer" --tool "$tool" --error-exitcode 9 \
      "$build/bin/eredu_test_cuda_backend" --gtest_filter="$sanitized_tests" \
      > "$logs/sanitizer-$tool.log" 2>&1; then
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer-$tool.log" || true
    else
      tail -n 40 "$logs/sanitizer-$tool.log"
      echo "gpu-check: compute-sanitizer --tool $tool reported errors or ran out of time" \
        "(log: $logs/sanitizer-$tool.log)"
      failures+=("sanitizer $tool")
    fi
  done
fi

# Where a decode step's time goes (bench/gpu-decode-profile.sh: ncu, one eager step, per-kernel
# totals) for the F16 and Q4_0 files, when ncu is there and time is left. Informative only: a
# failed profile is reported, not failed.
for type in F16 Q4_0; do
  file=$models/llama1b-$type.gguf
  [[ -s $file ]] || continue
  left=$(remaining)
  if ((left < 40)); then
    echo "gpu-check: decode profile of $type skipped: ${left} s left before the deadline"
    continue
  fi
  step "decode profile ($type): bench/gpu-decode-profile.sh"
  if ! timeout $((left < 120 ? left - 10 : 120)) bash "$root/bench/gpu-decode-profile.sh" \
    "$build/bin/eredu-bench" "$file" "$logs/profile-$type.csv" > "$logs/profile-$type.md" \
    2> "$logs/profile-$type.log"; then
    tail -n 5 "$logs/profile-$type.log"
    echo "gpu-check: no decode profile for $type (log: $logs/profile-$type.log)"
    continue
  fi
  cat "$logs/profile-$type.md"
done

elapsed=$((SECONDS - start))
if ((elapsed > 300)); then
  echo "gpu-check: took $elapsed s, over the 5-minute goal (the step times above say where it went)"
fi
step "done in $elapsed s; logs in $logs (summary: $logs/summary.md)"
if ((${#failures[@]} > 0)); then
  echo "gpu-check: failed: ${failures[*]}"
  exit 1
fi
