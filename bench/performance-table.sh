#!/usr/bin/env bash
# Measures the table of docs/performance.md: eredu-bench (pp128, tg64, 2 threads, 3 repetitions)
# on the issue's seven files, PASSES times over, plus the memory-read bandwidth; prints the
# markdown rows with the median over passes of each row's mean t/s (and the best pass).
#
#   bench/performance-table.sh [PASSES]            measure (default 3 passes) and print
#   bench/performance-table.sh --from DIR          print the table of an earlier run's DIR
#
# Environment: EREDU_BENCH (default build/bin/eredu-bench), EREDU_MODELS (build/models: the
# eredu-synth files smol135m-{F16,Q8_0,Q4_0}.gguf, llama1b-{F16,Q8_0,Q4_0}.gguf), EREDU_STORIES
# (../shared/models/stories260K.gguf), EREDU_THREADS (2), OUT (a fresh temp dir).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=${EREDU_BENCH:-$root/build/bin/eredu-bench}
models=${EREDU_MODELS:-$root/build/models}
stories=${EREDU_STORIES:-${EREDU_SHARED_DIR:-$root/../shared}/models/stories260K.gguf}
threads=${EREDU_THREADS:-2}

if [[ "${1:-}" == "--from" ]]; then
  out=$2
else
  passes=${1:-3}
  out=${OUT:-$(mktemp -d /tmp/eredu-perf.XXXXXX)}
  files=("$stories")
  for m in smol135m llama1b; do
    for t in F16 Q8_0 Q4_0; do files+=("$models/$m-$t.gguf"); done
  done
  for pass in $(seq 1 "$passes"); do
    for f in "${files[@]}"; do
      n=$(basename "$f" .gguf)
      echo "$(date -u +%T) pass $pass $n (load $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out/log" >&2
      "$bench" -m "$f" -p 128 -n 64 -r 3 -t "$threads" -o json -q >"$out/$n.$pass.json"
    done
    "$bench" --bandwidth -t "$threads" -r 10 -o json -q >"$out/bw.$pass.json"
  done
  echo "results in $out" >&2
fi

python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def load(path):  # None for a run still in progress or one that failed
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
# llama.cpp b9749, CPU, 2 threads (issue 5): pp128, tg64.
ref = {"stories260K": (24111, 3380), "smol135m-F16": (462, 41.4), "smol135m-Q8_0": (362, 65.8),
       "smol135m-Q4_0": (389, 85.4), "llama1b-F16": (65.0, 7.02), "llama1b-Q8_0": (46.1, 10.7),
       "llama1b-Q4_0": (58.4, 19.7)}
bw = [b["best_gb_per_s"] for b in map(load, sorted(glob.glob(os.path.join(out, "bw.*.json")))) if b]
bw_best = max(bw) if bw else float("nan")
print(f"memory-read bandwidth, {len(bw)} runs: best {bw_best:.2f} GB/s"
      + (f", median of the runs' best passes {statistics.median(bw):.2f} GB/s" if bw else ""))
print()
print("| model file | size | eredu pp128 t/s | vs llama.cpp | eredu tg64 t/s | vs llama.cpp "
      "| tg GB/s | % of bandwidth | pp GFLOP/s |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, (ref_pp, ref_tg) in ref.items():
    runs = [load(f) for f in sorted(glob.glob(os.path.join(out, name + ".*.json")))]
    runs = [r for r in runs if r]
    if not runs:
        continue
    pp = [row for r in runs for row in r if row["test"] == "pp128"]
    tg = [row for r in runs for row in r if row["test"] == "tg64"]
    med = lambda rows, k: statistics.median(row[k] for row in rows)
    size = runs[0][0]["size_bytes"] / 2**20
    size_s = f"{size / 1024:.2f} GiB" if size >= 1024 else f"{size:.1f} MiB"
    pp_ts, tg_ts = med(pp, "avg_ts"), med(tg, "avg_ts")
    best_pp = max(row["avg_ts"] for row in pp)
    best_tg = max(row["avg_ts"] for row in tg)
    gbs = med(tg, "gb_per_s")
    print(f"| {name} | {size_s} | {pp_ts:.1f} (best {best_pp:.1f}) | {pp_ts / ref_pp:.2f}x "
          f"| {tg_ts:.1f} (best {best_tg:.1f}) | {tg_ts / ref_tg:.2f}x | {gbs:.2f} "
          f"| {100 * gbs / bw_best:.0f}% | {med(pp, 'gflop_per_s'):.1f} |")
PY
