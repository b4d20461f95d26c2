#!/usr/bin/env bash
# Installs what eredu needs, then builds and runs all of its tests. `.ci/run` runs exactly this.
#
# Three passes, each in its own build folder (all ignored by git):
#   main      build-tests/  g++, warnings as errors, every backend whose toolchain is found
#             (EREDU_WITH_*=AUTO), examples and benchmarks; runs the whole ctest suite (unit, e2e,
#             package, and the vulkan/cuda labels, which skip without a device).
#   release   build-release/ g++ -O3 (CMAKE_BUILD_TYPE=Release, what users build), warnings as
#             errors, everything the main pass builds; runs the tests labelled `unit` and `e2e`
#             (the -O3 code paths, the examples and the main job).
#   sanitize  build-asan/   g++ with -fsanitize=address,undefined (CPU only); runs the tests
#             labelled `unit` with leak detection on.
#   fuzz      build-fuzz/   clang with libFuzzer + ASan + UBSan; runs every fuzz target for
#             EREDU_FUZZ_SECONDS (default 60) seconds, failing on any crash, leak, abort,
#             timeout, out-of-memory or sanitizer report.
# It stops at the first failing pass and ends with one line counting every test run.
#
# Environment:
#   EREDU_TEST_PASSES   passes to run, in order (default "main release sanitize fuzz")
#   EREDU_FUZZ_SECONDS  seconds per fuzz target (default 60)
#   EREDU_JOBS          parallel build and test jobs (default: nproc)
#   EREDU_CMAKE_ARGS    extra arguments for the main pass's configure, e.g. -DEREDU_WITH_CUDA=OFF
#   EREDU_SKIP_DEPS=1   do not check the Debian packages (scripts/install-deps.sh)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${EREDU_JOBS:-$(nproc)}
passes=${EREDU_TEST_PASSES:-main release sanitize fuzz}
export EREDU_FUZZ_SECONDS=${EREDU_FUZZ_SECONDS:-60}
read -r -a extra_cmake_args <<<"${EREDU_CMAKE_ARGS:-}"

started=$(date +%s)
timings=()
total_passed=0 total_failed=0 total_skipped=0

phase_start() {
  phase_name=$1
  phase_t0=$(date +%s)
  echo
  echo "==== run-tests: $phase_name ($(date -u +%H:%M:%S) UTC)"
}
phase_end() {
  local seconds=$(($(date +%s) - phase_t0))
  timings+=("$(printf '%-30s %5d s' "$phase_name" "$seconds")")
}

# Runs ctest with the given arguments, shows its output, and adds its counts to the totals.
# ctest's own exit status decides (set -e stops the script on a failure, its summary last).
run_ctest() {
  local log
  log=$(mktemp)
  ctest "$@" 2>&1 | tee "$log"
  local summary total failed skipped
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  failed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$summary")
  # One progress line per skipped test ("The following tests did not run" repeats them).
  skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log" || true)
  rm -f "$log"
  if [[ -z "$summary" ]]; then
    echo "run-tests: ctest ran no test ($*)" >&2
    exit 1
  fi
  total_passed=$((total_passed + total - failed - skipped))
  total_failed=$((total_failed + failed))
  total_skipped=$((total_skipped + skipped))
}

phase_start "dependencies"
bash scripts/install-deps.sh
phase_end

for pass in $passes; do
  case "$pass" in
    main)
      phase_start "main: configure + build"
      # -g1: line tables are enough for failure reports and much cheaper to compile than -g.
      cmake -S . -B build-tests -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" \
        -DEREDU_WARNINGS_AS_ERRORS=ON -DEREDU_BUILD_TESTS=ON -DEREDU_BUILD_EXAMPLES=ON \
        -DEREDU_BUILD_BENCH=ON "${extra_cmake_args[@]}"
      cmake --build build-tests -j "$jobs"
      phase_end
      phase_start "main: ctest"
      run_ctest --test-dir build-tests --output-on-failure -j "$jobs" --timeout 900
      phase_end
      ;;
    release)
      phase_start "release: configure + build"
      cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DEREDU_WARNINGS_AS_ERRORS=ON -DEREDU_BUILD_TESTS=ON -DEREDU_BUILD_EXAMPLES=ON \
        -DEREDU_BUILD_BENCH=ON "${extra_cmake_args[@]}"
      cmake --build build-release -j "$jobs"
      phase_end
      phase_start "release: ctest -L unit|e2e"
      run_ctest --test-dir build-release -L '^(unit|e2e)$' --output-on-failure -j "$jobs" --timeout 900
      phase_end
      ;;
    sanitize)
      phase_start "sanitize: configure + build"
      # -O1 -g1 (line tables only): fast enough to run, symbolized reports, and a much cheaper
      # compile of the template-heavy tests than -O2 -g; assertions stay on.
      cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DEREDU_SANITIZE=address,undefined \
        -DEREDU_WARNINGS_AS_ERRORS=ON -DEREDU_BUILD_TESTS=ON -DEREDU_BUILD_EXAMPLES=OFF -DEREDU_BUILD_BENCH=OFF \
        -DEREDU_WITH_CUDA=OFF -DEREDU_WITH_VULKAN=OFF
      cmake --build build-asan -j "$jobs"
      phase_end
      phase_start "sanitize: ctest -L unit"
      ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1 \
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        run_ctest --test-dir build-asan -L unit --output-on-failure -j "$jobs" --timeout 1800
      phase_end
      ;;
    fuzz)
      phase_start "fuzz: configure + build"
      CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1" -DEREDU_FUZZ=ON -DEREDU_WARNINGS_AS_ERRORS=ON \
        -DEREDU_BUILD_TESTS=OFF -DEREDU_BUILD_EXAMPLES=OFF -DEREDU_BUILD_BENCH=OFF \
        -DEREDU_WITH_CUDA=OFF -DEREDU_WITH_VULKAN=OFF
      cmake --build build-fuzz -j "$jobs" --target eredu_fuzzers
      phase_end
      phase_start "fuzz: ${EREDU_FUZZ_SECONDS} s per target"
      rm -rf build-fuzz/tests/fuzz/stats build-fuzz/tests/fuzz/artifacts
      run_ctest --test-dir build-fuzz/tests/fuzz -L fuzz --output-on-failure -j "$jobs"
      echo "fuzz statistics:"
      for stats in build-fuzz/tests/fuzz/stats/*.txt; do
        (
          # shellcheck disable=SC1090
          source "$stats"
          printf '  fuzz_%-22s %10s runs in %3s s  %8s exec/s  corpus %s inputs\n' \
            "$name" "$runs" "$seconds" "$exec_per_sec" "$corpus"
        )
      done
      phase_end
      ;;
    *)
      echo "run-tests: unknown pass '$pass' in EREDU_TEST_PASSES (main, release, sanitize, fuzz)" >&2
      exit 2
      ;;
  esac
done

echo
echo "==== run-tests: timings"
printf '  %s\n' "${timings[@]}"
printf '  %-30s %5d s\n' "total" "$(($(date +%s) - started))"
echo "tests: ${total_passed} passed, ${total_failed} failed, ${total_skipped} skipped"
