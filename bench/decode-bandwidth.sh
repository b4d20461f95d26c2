#!/usr/bin/env bash
# Decode against the memory-read bandwidth measured in the same run (issue 11's target: llama1b
# Q4_K_M and Q4_0 decode at >= 90% of what `eredu-bench --bandwidth` measures). Each round runs
# the bandwidth test, then a decode (tgN) of every file, so load that comes and goes on a shared
# machine hits both alike; per file it prints the median over rounds of the decode's weight stream
# (GB/s: the bytes of the matrices one token reads, times tokens/s), of the round's bandwidth (best
# and median pass) and of their ratios.
#
#   bench/decode-bandwidth.sh ROUNDS FILE...
#   bench/decode-bandwidth.sh --from DIR            print the table of an earlier run's DIR
#
# Environment: EREDU_BENCH (default build-rel/bin/eredu-bench), THREADS (2), N_GEN (64), OUT (a
# fresh temp dir for the raw JSON).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=${EREDU_BENCH:-$root/build-rel/bin/eredu-bench}
threads=${THREADS:-2}
n_gen=${N_GEN:-64}

if [[ "${1:-}" == "--from" ]]; then
  out=$2
else
  rounds=${1:?usage: decode-bandwidth.sh ROUNDS FILE...}
  shift
  [[ $# -gt 0 ]] || { echo "usage: decode-bandwidth.sh ROUNDS FILE..." >&2; exit 2; }
  out=${OUT:-$(mktemp -d /tmp/eredu-decode-bw.XXXXXX)}
  mkdir -p "$out"
  for r in $(seq 1 "$rounds"); do
    echo "$(date -u +%T) round $r bandwidth (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out/log" >&2
    "$bench" --bandwidth -t "$threads" -r 10 -o json -q >"$out/bw.$r.json"
    for f in "$@"; do
      n=$(basename "$f" .gguf)
      echo "$(date -u +%T) round $r $n (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out/log" >&2
      "$bench" -m "$f" -p 0 -n "$n_gen" -r 3 -t "$threads" -o json -q >"$out/$n.$r.json"
    done
  done
  echo "results in $out" >&2
fi

python3 - "$out" <<'PY'
import glob, json, os, re, statistics, sys
out = sys.argv[1]
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
rounds = {}
for path in glob.glob(os.path.join(out, "bw.*.json")):
    bw = load(path)
    if bw:
        rounds[int(re.search(r"bw\.(\d+)\.json$", path).group(1))] = bw
names = sorted({re.sub(r"\.\d+\.json$", "", os.path.basename(p))
                for p in glob.glob(os.path.join(out, "*.json")) if not os.path.basename(p).startswith("bw.")})
print("| file | rounds | decode t/s | weight stream GB/s | bandwidth best / median GB/s "
      "| % of best | % of median |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name in names:
    ts, gbs, best, median, pct_best, pct_median = [], [], [], [], [], []
    for r, bw in sorted(rounds.items()):
        rows = load(os.path.join(out, f"{name}.{r}.json"))
        if not rows:
            continue
        row = rows[0]
        ts.append(row["avg_ts"])
        gbs.append(row["gb_per_s"])
        best.append(bw["best_gb_per_s"])
        median.append(bw["median_gb_per_s"])
        pct_best.append(100 * row["gb_per_s"] / bw["best_gb_per_s"])
        pct_median.append(100 * row["gb_per_s"] / bw["median_gb_per_s"])
    if not ts:
        continue
    m = statistics.median
    print(f"| {name} | {len(ts)} | {m(ts):.1f} | {m(gbs):.1f} | {m(best):.1f} / {m(median):.1f} "
          f"| {m(pct_best):.0f}% | {m(pct_median):.0f}% |")
PY
