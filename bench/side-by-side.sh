#!/usr/bin/env bash
# eredu-bench and llama-bench on the same GGUF files, interleaved round by round in one run (each
# round runs every engine on every file before the next round starts, so load that comes and goes
# on a shared machine hits all of them alike), then the median over rounds of each engine's mean
# t/s and the ratios to llama.cpp.
#
#   bench/side-by-side.sh ROUNDS FILE...
#   bench/side-by-side.sh --from DIR FILE...       print the table of an earlier run's DIR
#
# Environment:
#   EREDU_BENCH       eredu-bench to measure (default build-rel/bin/eredu-bench)
#   EREDU_BENCH_BASE  optional second eredu-bench (e.g. a build of main) measured in the same
#                     rounds: the table then has a "before" and an "after" column per row
#   PEER_BENCH        llama-bench (default ../shared/peer/llama-bench)
#   ARGS              arguments shared by all engines (default: -p 128 -n 64 -r 3 -t 2); one
#                     -p, one -n and at most one -d value (e.g. -d 4096: both engines measure
#                     after that many cached tokens), since a row keeps one pp and one tg figure
#   OUT               folder for the raw JSON (default: a fresh temp dir); the log records the
#                     load average before every run
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
after=${EREDU_BENCH:-$root/build-rel/bin/eredu-bench}
base=${EREDU_BENCH_BASE:-}
peer=${PEER_BENCH:-$root/../shared/peer/llama-bench}
args=${ARGS:--p 128 -n 64 -r 3 -t 2}

if [[ "${1:-}" == "--from" ]]; then
  out=$2
  shift 2
else
  rounds=${1:?usage: side-by-side.sh ROUNDS FILE...}
  shift
  out=${OUT:-$(mktemp -d /tmp/eredu-sbs.XXXXXX)}
  mkdir -p "$out"
  engines=("peer:$peer" "after:$after")
  [[ -n "$base" ]] && engines=("peer:$peer" "base:$base" "after:$after")
  for r in $(seq 1 "$rounds"); do
    for f in "$@"; do
      b=$(basename "$f" .gguf)
      for e in "${engines[@]}"; do
        name=${e%%:*}
        exe=${e#*:}
        echo "$(date -u +%T) round $r $b $name (load $(cut -d' ' -f1-3 /proc/loadavg))" |
          tee -a "$out/log" >&2
        # shellcheck disable=SC2086
        "$exe" -m "$f" $args -o json >"$out/$b.$name.$r.json" 2>>"$out/stderr" ||
          echo "$name failed on $b" >&2
      done
    done
  done
  echo "raw JSON and log in $out" >&2
fi

python3 - "$out" "$@" <<'PY'
import glob, json, os, statistics, sys
out, files = sys.argv[1], sys.argv[2:]
def rows(path):  # {"pp": t/s, "tg": t/s} of one run; empty when it failed
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        return {}
    return {("pp" if x.get("n_gen", 0) == 0 else "tg"): x["avg_ts"] for x in doc}
def median(name, engine, kind):
    v = [rows(p).get(kind) for p in glob.glob(os.path.join(out, f"{name}.{engine}.*.json"))]
    v = [x for x in v if x]
    return (statistics.median(v), len(v)) if v else (None, 0)
has_base = bool(glob.glob(os.path.join(out, "*.base.*.json")))
engines = ["base", "after"] if has_base else ["after"]
label = {"base": "eredu before", "after": "eredu after" if has_base else "eredu"}
head = ["file", "test", "llama.cpp t/s"]
for e in engines:
    head += [f"{label[e]} t/s", f"{label[e]} / llama.cpp"]
head += ["rounds"]
print("| " + " | ".join(head) + " |")
print("| " + " | ".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + " |")
for f in files:
    name = os.path.basename(f)[:-5] if f.endswith(".gguf") else os.path.basename(f)
    for kind in ("pp", "tg"):
        peer, n = median(name, "peer", kind)
        cells = [name, kind, f"{peer:.1f}" if peer else "-"]
        for e in engines:
            v, m = median(name, e, kind)
            n = min(n, m)
            cells += [f"{v:.1f}" if v else "-", f"{v / peer:.2f}x" if v and peer else "-"]
        cells.append(str(n))
        print("| " + " | ".join(cells) + " |")
PY
