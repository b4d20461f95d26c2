#!/usr/bin/env bash
# One bounded libFuzzer run, as ctest's fuzz.<name> test runs it:
#   run_fuzzer.sh FUZZER NAME SOURCE_DIR WORK_DIR [DICTIONARY]
# Fuzzes for EREDU_FUZZ_SECONDS (default 60) seconds starting from the generated seeds
# (WORK_DIR/seeds/NAME), the committed regression inputs (SOURCE_DIR/regressions/NAME, every
# crasher ever found) and the corpus kept from earlier runs (WORK_DIR/corpus/NAME, which also
# receives the new inputs), with the libFuzzer DICTIONARY when one is given.
#
# Fails on any crash, leak, abort, timeout (-timeout per input), out-of-memory (-rss_limit_mb, and
# single mallocs above it) or sanitizer report; a reproducer is kept under WORK_DIR/artifacts/.
# Writes WORK_DIR/stats/NAME.txt (runs, seconds, executions per second, corpus size).
set -uo pipefail
if (($# != 4 && $# != 5)); then
  echo "usage: $0 FUZZER NAME SOURCE_DIR WORK_DIR [DICTIONARY]" >&2
  exit 2
fi
fuzzer=$1 name=$2 source_dir=$3 work_dir=$4 dictionary=${5:-}
seconds=${EREDU_FUZZ_SECONDS:-60}
seed_dir=$work_dir/seeds/$name
corpus_dir=$work_dir/corpus/$name
artifact_dir=$work_dir/artifacts
log=$work_dir/logs/$name.log
mkdir -p "$corpus_dir" "$artifact_dir" "$work_dir/logs" "$work_dir/stats"

dirs=("$corpus_dir")
[[ -d "$seed_dir" ]] && dirs+=("$seed_dir")
[[ -d "$source_dir/regressions/$name" ]] && dirs+=("$source_dir/regressions/$name")
if [[ ! -d "$seed_dir" ]]; then
  echo "fuzz $name: no generated seeds at $seed_dir (the fuzz.seeds fixture did not run?)" >&2
  exit 1
fi
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -error_exitcode=77
       -timeout_exitcode=78 -detect_leaks=1 -print_final_stats=1
       -artifact_prefix="$artifact_dir/$name-")
[[ -n "$dictionary" ]] && flags+=(-dict="$dictionary")

# halt_on_error: the first sanitizer report ends the run (libFuzzer then saves the input).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1:symbolize=1}
export EREDU_LOG_LEVEL=off

echo "fuzz $name: ${seconds} s from $(find "${dirs[@]}" -type f | wc -l) inputs (${dirs[*]})"
timeout --signal=KILL $((seconds + 120)) "$fuzzer" "${flags[@]}" "${dirs[@]}" >"$log" 2>&1
rc=$?

# Belt and braces: a report in the log fails the run even if the exit code did not say so.
report=$(grep -m 5 -E 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|==ERROR|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer|out-of-memory|deadly signal' "$log")
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
corpus=$(find "$corpus_dir" -type f | wc -l)
printf 'name=%s\nseconds=%s\nruns=%s\nexec_per_sec=%s\ncorpus=%s\nexit=%s\n' \
  "$name" "$seconds" "${runs:-0}" "${speed:-0}" "$corpus" "$rc" >"$work_dir/stats/$name.txt"

if ((rc != 0)) || [[ -n "$report" ]] || [[ -z "$runs" ]]; then
  echo "fuzz $name: FAILED (exit $rc); last lines of $log:" >&2
  tail -n 60 "$log" >&2
  ls -1 "$artifact_dir"/"$name"-* 2>/dev/null | sed 's/^/fuzz reproducer: /' >&2
  exit 1
fi
echo "fuzz $name: clean: ${runs} runs in ${seconds} s (${speed} exec/s), corpus ${corpus} inputs"
