#!/usr/bin/env bash
# The CUDA backend's check on a machine with one NVIDIA GPU, from a clean tree:
#   1. configures a fresh Release build with the CUDA backend on (Vulkan and examples off);
#   2. builds the CUDA tests and eredu-cuda-probe on all cores;
#   3. runs ctest -L cuda --output-on-failure;
#   4. runs eredu-cuda-probe (device-to-device copy bandwidth, dequantize throughput per encoding)
#      and prints its table.
# Without a usable GPU the probe prints "no CUDA device: ..."; the script says so and stops there.
# Exit status: 0 all done, 1 configure/build/test/probe failure, 2 no CUDA device (tests passed).
#
# Environment: EREDU_CUDA_ARCHS (CMAKE_CUDA_ARCHITECTURES, default 90), EREDU_GPU_CHECK_BUILD
# (build directory, default build-gpu-check), EREDU_GPU_CHECK_JOBS (build jobs, default nproc),
# OUT (logs go to $OUT/gpu-check, else BUILD/gpu-check-logs), EREDU_SHARED_DIR (the quant-zoo
# tests' data, default ../shared; they skip without it), EREDU_PROBE_COPY_MIB / EREDU_PROBE_RUNS
# (see bench/cuda-probe).
# On an H200 (16 cores) the whole run takes a few minutes, nearly all of it the build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${EREDU_GPU_CHECK_BUILD:-$root/build-gpu-check}
archs=${EREDU_CUDA_ARCHS:-90}
if [[ -n "${OUT:-}" ]]; then logs=$OUT/gpu-check; else logs=$build/gpu-check-logs; fi
mkdir -p "$logs"
jobs=${EREDU_GPU_CHECK_JOBS:-$(nproc)}
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
step "configure: Release, CUDA on, CMAKE_CUDA_ARCHITECTURES=$archs, $build"
logged configure cmake --fresh -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DEREDU_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$archs" -DEREDU_WITH_VULKAN=OFF \
  -DEREDU_BUILD_TESTS=ON -DEREDU_BUILD_EXAMPLES=OFF -DEREDU_BUILD_BENCH=OFF
step "build: eredu_test_cuda eredu-cuda-probe (-j$jobs)"
logged build cmake --build "$build" --parallel "$jobs" --target eredu_test_cuda eredu-cuda-probe

step "ctest -L cuda"
# The full listing goes to the log; the console gets the summary (and the failures' output).
if ! (cd "$build" && ctest -L cuda --output-on-failure --timeout 300) > "$logs/ctest.log" 2>&1; then
  grep -E -A30 "\*\*\*Failed|\*\*\*Exception|\*\*\*Timeout" "$logs/ctest.log" | head -n 120 || true
  grep -E "tests passed|tests failed" "$logs/ctest.log" || true
  echo "gpu-check: CUDA tests failed (log: $logs/ctest.log)"
  exit 1
fi
grep -E "tests passed" "$logs/ctest.log"
skipped=$(grep -c "(Skipped)" "$logs/ctest.log" || true)
echo "of which skipped: $skipped (the reasons: $build/bin/eredu_test_cuda, or $logs/ctest.log)"

step "eredu-cuda-probe"
set +e
timeout 300 "$build/bin/eredu-cuda-probe" > "$logs/probe.log" 2>&1
probe_status=$?
set -e
cat "$logs/probe.log"
if [[ $probe_status -eq 2 ]]; then
  echo "gpu-check: no CUDA device here; the tests above ran (GPU tests skipped), nothing measured."
  exit 2
elif [[ $probe_status -ne 0 ]]; then
  echo "gpu-check: eredu-cuda-probe failed with status $probe_status (log: $logs/probe.log)"
  exit 1
fi
step "done in $((SECONDS - start)) s; logs in $logs"
