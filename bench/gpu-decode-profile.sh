#!/usr/bin/env bash
# Where one decode step's GPU time goes, kernel by kernel:
#   bench/gpu-decode-profile.sh EREDU_BENCH MODEL [CSV_OUT]   profile with ncu, then summarize
#   bench/gpu-decode-profile.sh --from NCU_CSV                 summarize an earlier profile
# The first form runs `eredu-bench --backend cuda -m MODEL -p 0 -n 1 -r 1` (a warm-up step, then one
# timed step) without CUDA graphs (EREDU_CUDA_GRAPHS=0, so every kernel is its own launch) under
#   ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv
# (ncu from PATH, else /opt/nvidia/nsight-compute/*/ncu), keeping ncu's CSV in CSV_OUT (default: a
# temporary file). ncu runs the kernels one at a time, so the times are each kernel's own, without
# the gaps between launches; the wall time of a step (eredu-bench's tg figure) is the sum plus
# those gaps and the host's part.
# The summary takes the kernels of the last step (from the last embedding launch, which opens every
# step, to the end) and prints one Markdown table: per kernel (the name without its namespace,
# template arguments and parameters) the launches, the total and the mean microseconds and the
# share of the step; then the step's launches and kernel time.
# Exit status: 0 table printed, 1 no ncu, a failed profile, or a CSV without a decode step.
set -euo pipefail
if [[ $# -eq 2 && $1 == "--from" ]]; then
  csv=$2
elif [[ $# -eq 2 || $# -eq 3 ]]; then
  bench=$1
  model=$2
  csv=${3:-$(mktemp)}
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2> /dev/null | head -n 1 || true)
  if [[ -z $ncu ]]; then
    echo "gpu-decode-profile: ncu not found (PATH, /opt/nvidia/nsight-compute/*/ncu)" >&2
    exit 1
  fi
  if ! EREDU_CUDA_GRAPHS=0 "$ncu" --clock-control none --cache-control none \
    --metrics gpu__time_duration.sum --csv "$bench" --backend cuda -m "$model" -p 0 -n 1 -r 1 \
    -q > "$csv" 2> "$csv.err"; then
    tail -n 5 "$csv.err" >&2
    echo "gpu-decode-profile: ncu failed on $model (log: $csv.err)" >&2
    exit 1
  fi
else
  echo "usage: $0 EREDU_BENCH MODEL [CSV_OUT] | --from NCU_CSV" >&2
  exit 1
fi
if [[ ! -r $csv ]]; then
  echo "gpu-decode-profile: cannot read $csv" >&2
  exit 1
fi

# ncu's CSV: lines starting with '"' are the header and one row per kernel launch; names hold commas
# inside quotes, and the values thousands separators ("3,296").
awk '
function parse(line,   i, c, field, quoted, n) {
  n = 0; field = ""; quoted = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (c == "\"") { quoted = !quoted; continue }
    if (c == "," && !quoted) { cell[++n] = field; field = ""; continue }
    field = field c
  }
  cell[++n] = field
  return n
}
# "void unnamed>::matvec_quantized_kernel<dot::DotQ4_0, 1>(const ...)" -> matvec_quantized_kernel
function short_name(name) {
  sub(/\(.*/, "", name)
  while (name ~ /<[^<>]*>/) gsub(/<[^<>]*>/, "", name)
  sub(/.*::/, "", name)
  sub(/^void /, "", name)
  return name
}
/^"/ {
  n = parse($0)
  if (!header) {
    for (i = 1; i <= n; i++) col[cell[i]] = i
    if (!("Kernel Name" in col) || !("Metric Value" in col) || !("Metric Unit" in col)) {
      print "gpu-decode-profile: not an ncu CSV (no Kernel Name / Metric Value column)" > "/dev/stderr"
      bad = 1; exit 1
    }
    header = 1
    next
  }
  name = short_name(cell[col["Kernel Name"]])
  value = cell[col["Metric Value"]]; gsub(/,/, "", value)
  unit = cell[col["Metric Unit"]]
  scale = unit == "ns" ? 0.001 : unit == "us" ? 1 : unit == "ms" ? 1000 : unit == "s" ? 1e6 : -1
  if (scale < 0) {
    print "gpu-decode-profile: unknown time unit " unit > "/dev/stderr"
    bad = 1; exit 1
  }
  if (name ~ /embed/) { steps++; count = 0 }
  if (steps == 0) next
  names[++count] = name; micros[count] = value * scale
}
END {
  if (bad) exit 1
  if (steps == 0 || count == 0) {
    print "gpu-decode-profile: no decode step (no embedding launch) in the profile" > "/dev/stderr"
    exit 1
  }
  total = 0
  for (i = 1; i <= count; i++) {
    if (!(names[i] in launches)) order[++kinds] = names[i]
    launches[names[i]]++; spent[names[i]] += micros[i]; total += micros[i]
  }
  # Largest total first (a selection sort: a step has a dozen kinds of kernel).
  for (i = 1; i <= kinds; i++)
    for (j = i + 1; j <= kinds; j++)
      if (spent[order[j]] > spent[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
  printf "| kernel | launches | total us | us each | share |\n"
  printf "| --- | ---: | ---: | ---: | ---: |\n"
  for (i = 1; i <= kinds; i++) {
    k = order[i]
    printf "| %s | %d | %.1f | %.2f | %.1f%% |\n", k, launches[k], spent[k], spent[k] / launches[k],
      100 * spent[k] / total
  }
  printf "\none decode step: %d launches, %.1f us of kernel time (ncu, one kernel at a time)\n",
    count, total
}
' "$csv"
