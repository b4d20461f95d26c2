#!/usr/bin/env bash
# eredu-bench and llama-bench on the same GGUF files, interleaved round by round in one run (each
# round runs every engine on every file before the next round starts, so load that comes and goes
# on a shared machine hits all of them alike), then the median over rounds of each engine's mean
# t/s and the ratios to llama.cpp at its best build for the machine: with several llama-bench
# builds, each row takes the fastest build's median (a build that fails on a file, e.g. with
# SIGILL where the CPU lacks an instruction its flags did not rule out, just has no figure). Even
# rounds run the engines in the reverse order. "paired" is the median over rounds of the ratio
# within each round (against the row's llama.cpp build): a memory state that turns every few
# minutes, as on the shared guests this runs on, cancels out of it, while the ratio of the
# medians can set one engine's fast rounds against the other's slow ones.
#
#   bench/side-by-side.sh ROUNDS FILE...
#   bench/side-by-side.sh --from DIR FILE...       print the table of an earlier run's DIR
#
# Environment:
#   EREDU_BENCH       eredu-bench to measure (default build-rel/bin/eredu-bench)
#   EREDU_BENCH_BASE  optional second eredu-bench (e.g. a build of main) measured in the same
#                     rounds: the table then has a "before" and an "after" column per row
#   PEER_BENCH        llama-bench, or several builds separated by ':' (default: the AVX-512 and
#                     AVX2 builds in ../shared/peer/bin where the CPU lists AVX-512, else
#                     ../shared/peer/llama-bench). Zen 4 lists AVX-512 VNNI but not AVX-VNNI,
#                     which llama.cpp's AVX-512 build also uses: it dies there on Q4_0 and Q8_0.
#   ARGS              arguments shared by all engines (default: -p 128 -n 64 -r 3 -t 2); one
#                     -p, one -n and at most one -d value (e.g. -d 4096: both engines measure
#                     after that many cached tokens), since a row keeps one pp and one tg figure
#   OUT               folder for the raw JSON (default: a fresh temp dir); the log records the
#                     load average before every run
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
after=${EREDU_BENCH:-$root/build-rel/bin/eredu-bench}
base=${EREDU_BENCH_BASE:-}
peer_dir=$root/../shared/peer
if [[ -n "${PEER_BENCH:-}" ]]; then
  peer=$PEER_BENCH
elif grep -qw avx512f /proc/cpuinfo && [[ -x $peer_dir/bin/llama-bench-avx512 ]] &&
  [[ -x $peer_dir/bin/llama-bench-avx2 ]]; then
  peer=$peer_dir/bin/llama-bench-avx512:$peer_dir/bin/llama-bench-avx2
else
  peer=$peer_dir/llama-bench
fi
args=${ARGS:--p 128 -n 64 -r 3 -t 2}

if [[ "${1:-}" == "--from" ]]; then
  out=$2
  shift 2
else
  rounds=${1:?usage: side-by-side.sh ROUNDS FILE...}
  shift
  out=${OUT:-$(mktemp -d /tmp/eredu-sbs.XXXXXX)}
  mkdir -p "$out"
  engines=()
  IFS=: read -ra peers <<<"$peer"
  for i in "${!peers[@]}"; do
    engines+=("peer$((i + 1)):${peers[$i]}")
    echo "peer$((i + 1)) = ${peers[$i]}" | tee -a "$out/log" >&2
  done
  [[ -n "$base" ]] && engines+=("base:$base")
  engines+=("after:$after")
  for r in $(seq 1 "$rounds"); do
    # Even rounds run the engines in the reverse order, so neither engine always runs first after
    # a file change (or always last before the memory state of a shared guest turns).
    order=("${engines[@]}")
    if ((r % 2 == 0)); then
      order=()
      for ((i = ${#engines[@]} - 1; i >= 0; i--)); do order+=("${engines[$i]}"); done
    fi
    for f in "$@"; do
      b=$(basename "$f" .gguf)
      for e in "${order[@]}"; do
        name=${e%%:*}
        exe=${e#*:}
        echo "$(date -u +%T) round $r $b $name (load $(cut -d' ' -f1-3 /proc/loadavg))" |
          tee -a "$out/log" >&2
        status=0
        # shellcheck disable=SC2086
        "$exe" -m "$f" $args -o json >"$out/$b.$name.$r.json" 2>>"$out/stderr" || status=$?
        if ((status != 0)); then
          why=""
          ((status == 132)) && why=" (SIGILL: an instruction this CPU lacks)"
          echo "$name failed on $b: exit status $status$why" | tee -a "$out/log" >&2
        fi
      done
    done
  done
  echo "raw JSON and log in $out" >&2
fi

python3 - "$out" "$@" <<'PY'
import glob, json, os, re, statistics, sys
out, files = sys.argv[1], sys.argv[2:]
def rows(path):  # {"pp": t/s, "tg": t/s} of one run; empty when it failed
    try:
        doc = json.load(open(path))
    except (OSError, ValueError):
        return {}
    return {("pp" if x.get("n_gen", 0) == 0 else "tg"): x["avg_ts"] for x in doc}
def per_round(name, engine, kind):  # {round: t/s} of the rounds that gave a figure
    v = {}
    for p in glob.glob(os.path.join(out, f"{name}.{engine}.*.json")):
        if x := rows(p).get(kind):
            v[int(p.rsplit(".", 2)[1])] = x
    return v
def median(name, engine, kind):
    v = list(per_round(name, engine, kind).values())
    return (statistics.median(v), len(v)) if v else (None, 0)
# "paired" (the header says why): the median over rounds of the ratio within each round.
def paired(name, engine, peer, kind):
    a, b = per_round(name, engine, kind), per_round(name, peer, kind)
    v = [a[r] / b[r] for r in a if r in b]
    return statistics.median(v) if v else None
# The llama.cpp builds measured ("peer" in runs before several builds were supported), with the
# paths the log names.
peers = sorted({m.group(1) for p in glob.glob(os.path.join(out, "*.json"))
                if (m := re.search(r"\.(peer\d*)\.\d+\.json$", p))})
paths = {}
if os.path.exists(os.path.join(out, "log")):
    for line in open(os.path.join(out, "log")):
        if m := re.match(r"(peer\d*) = (.*)$", line.strip()):
            paths[m.group(1)] = os.path.basename(m.group(2))
has_base = bool(glob.glob(os.path.join(out, "*.base.*.json")))
engines = ["base", "after"] if has_base else ["after"]
label = {"base": "eredu before", "after": "eredu after" if has_base else "eredu"}
head = ["file", "test", "llama.cpp t/s"]
if len(peers) > 1:
    head.append("llama.cpp build")
for e in engines:
    head += [f"{label[e]} t/s", f"{label[e]} / llama.cpp", f"{label[e]} paired"]
head += ["rounds"]
print("| " + " | ".join(head) + " |")
print("| " + " | ".join("---" if h in ("file", "test", "llama.cpp build") else "---:" for h in head)
      + " |")
for f in files:
    name = os.path.basename(f)[:-5] if f.endswith(".gguf") else os.path.basename(f)
    for kind in ("pp", "tg"):
        # llama.cpp at its best: the fastest build's median over its rounds.
        peer, n, best, best_id = None, 0, "-", None
        for p in peers:
            v, m = median(name, p, kind)
            if v and (peer is None or v > peer):
                peer, n, best, best_id = v, m, paths.get(p, p), p
        cells = [name, kind, f"{peer:.1f}" if peer else "-"]
        if len(peers) > 1:
            cells.append(best)
        for e in engines:
            v, m = median(name, e, kind)
            n = min(n, m)
            q = paired(name, e, best_id, kind) if best_id else None
            cells += [f"{v:.1f}" if v else "-", f"{v / peer:.2f}x" if v and peer else "-",
                      f"{q:.2f}x" if q else "-"]
        cells.append(str(n))
        print("| " + " | ".join(cells) + " |")
PY
