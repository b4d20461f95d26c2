#!/usr/bin/env bash
# Peak resident memory and start-up time of eredu and llama.cpp on the same GGUF files, interleaved
# round by round in one run, with the median over rounds and the ratios to llama.cpp.
#
#   bench/startup-memory.sh ROUNDS FILE...
#
# Each round runs, for every file (the page cache is warm for both engines after the first round):
#   peer   llama-bench -p P -n 1 -r 1 --no-warmup   (load, a P-token prompt, one generated token)
#   bench  eredu-bench -p P -n 1 -r 1               (the same work; eredu-bench has no warm-up)
#   run    eredu-run with a prompt, -n 1            (the user-facing program, for its peak RSS)
# under /usr/bin/time: "rss" is the peak resident set (VmHWM, file-backed mapped pages included),
# "start" the process's wall time from exec to exit, i.e. start-up to the first generated token.
# llama-bench has no "run" counterpart here (the peer folder holds only llama-bench), so the
# ratios compare the two benches.
#
# Environment:
#   EREDU_BENCH  eredu-bench (default build-rel/bin/eredu-bench)
#   EREDU_RUN    eredu-run (default build-rel/bin/eredu-run)
#   PEER_BENCH   llama-bench (default ../shared/peer/llama-bench)
#   THREADS      threads for every engine (default 2)
#   PROMPT       prompt tokens for the benches (default 32)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=${EREDU_BENCH:-$root/build-rel/bin/eredu-bench}
run=${EREDU_RUN:-$root/build-rel/bin/eredu-run}
peer=${PEER_BENCH:-$root/../shared/peer/llama-bench}
threads=${THREADS:-2}
prompt=${PROMPT:-32}
rounds=${1:?usage: startup-memory.sh ROUNDS FILE...}
shift
for exe in "$bench" "$run" "$peer" /usr/bin/time; do
  [[ -x "$exe" ]] || { echo "startup-memory.sh: $exe is not executable" >&2; exit 1; }
done

log=$(mktemp /tmp/eredu-startup.XXXXXX)
measure() {  # name file command...
  local name=$1 file=$2
  shift 2
  local stats
  stats=$(mktemp)
  if ! /usr/bin/time -f "%M %e" -o "$stats" "$@" >/dev/null 2>&1; then
    echo "startup-memory.sh: $name failed on $file: $*" >&2
    exit 1
  fi
  echo "$name $(basename "$file" .gguf) $(cat "$stats")" >>"$log"
  rm -f "$stats"
}

for _ in $(seq 1 "$rounds"); do
  for f in "$@"; do
    measure peer "$f" "$peer" -m "$f" -p "$prompt" -n 1 -r 1 --no-warmup -t "$threads"
    measure bench "$f" "$bench" -m "$f" -p "$prompt" -n 1 -r 1 -t "$threads" -q
    measure run "$f" "$run" -m "$f" -p "Once upon a time, in a small village by the sea," -n 1 \
      -t "$threads"
  done
done

python3 - "$log" "$threads" "$prompt" <<'EOF'
import statistics, sys
from collections import defaultdict
log, threads, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
rss, wall = defaultdict(list), defaultdict(list)
files = []
for line in open(log):
    name, model, kb, sec = line.split()
    if model not in files:
        files.append(model)
    rss[name, model].append(int(kb) / 1024)
    wall[name, model].append(float(sec))
med = lambda d, k: statistics.median(d[k])
print(f"peak RSS (MiB) and start-up to the first generated token (s), medians of "
      f"{len(rss['peer', files[0]])} interleaved rounds, -t {threads}, -p {prompt}:\n")
print("| file | llama.cpp RSS | eredu-bench RSS | ratio | eredu-run RSS | llama.cpp start | "
      "eredu-bench start | ratio |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for m in files:
    pr, br, rr = med(rss, ("peer", m)), med(rss, ("bench", m)), med(rss, ("run", m))
    pw, bw = med(wall, ("peer", m)), med(wall, ("bench", m))
    # /usr/bin/time reports wall time in hundredths: a start under 0.01 s has no ratio.
    start_ratio = f"{bw / pw:.2f}x" if bw > 0 and pw > 0 else "n/a (< 0.01 s)"
    print(f"| {m} | {pr:.0f} | {br:.0f} | {br / pr:.2f}x | {rr:.0f} | {pw:.2f} | {bw:.2f} | "
          f"{start_ratio} |")
print("\n(ratio = eredu / llama.cpp: below 1.0x is less memory, a faster start)")
EOF
rm -f "$log"
