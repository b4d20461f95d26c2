#!/usr/bin/env bash
# The GPU check's summary table, from eredu-cuda-probe's output and eredu-bench's CSV:
#   bench/gpu-summary.sh PROBE_LOG BENCH_CSV
# PROBE_LOG: eredu-cuda-probe's stdout; its "metric NAME VALUE" lines give the device-to-device
#   copy bandwidth (d2d_copy_gb_per_s: read + write traffic, 2 x buffer / best time) and cuBLAS's
#   F16 GEMM throughput at the llama1b linear shapes (cublas_gemm_gflop_per_s, at
#   cublas_gemm_tokens tokens).
# BENCH_CSV: eredu-bench -o csv with one pp and one tg test per model (gpu-check.sh: -p 512
#   -n 128), one row per (model, test).
# Prints one Markdown table, one row per model file:
#   tgN t/s      eredu-bench's avg_ts of the tg test;
#   GB/s         its gb_per_s: the bytes of every 2-D weight a decoded token reads (all layers'
#                matrices and the output head; not the token embedding table, of which a token
#                gathers one row, unless it is the tied output head), each read once per token,
#                x tg t/s;
#   % copy       GB/s / d2d_copy_gb_per_s;
#   ppN t/s      avg_ts of the pp test;
#   GFLOP/s      its gflop_per_s: 2 x the layers' matrix parameters x N (every token through every
#                layer's Q, K, V, O, gate, up, down) + 2 x the output head's parameters (the logits
#                of the last token only, as the prefill computes them) + causal attention
#                (4 x q_dim x layers x N (N + 1) / 2), over the mean prefill time;
#   % cuBLAS     GFLOP/s / cublas_gemm_gflop_per_s;
# then the targets (decode >= 80% of copy bandwidth for F16 and >= 65% for Q4_0, prefill
# >= 50% of cuBLAS for F16; the encoding is the second word of eredu-bench's model_type) and
# whether each is met. Missed targets are reported, not failed.
# Exit status: 0 table printed, 1 unreadable or incomplete input (a message on stderr).
# Only POSIX awk (mawk and busybox awk will do) and bash: no python, no jq.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 PROBE_LOG BENCH_CSV" >&2
  exit 1
fi
probe_log=$1
bench_csv=$2
for f in "$probe_log" "$bench_csv"; do
  if [[ ! -r $f ]]; then
    echo "gpu-summary: cannot read $f" >&2
    exit 1
  fi
done

awk -v probe_log="$probe_log" '
# Splits one RFC 4180 CSV line into out[1..n] (quoted fields may hold commas and doubled quotes);
# returns n.
function csv_split(line, out,    n, i, c, field, quoted) {
  n = 0; field = ""; quoted = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (quoted) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { field = field "\""; i++ } else quoted = 0
      } else field = field c
    } else if (c == "\"") quoted = 1
    else if (c == ",") { out[++n] = field; field = "" }
    else field = field c
  }
  out[++n] = field
  return n
}
function die(message) {
  print "gpu-summary: " message > "/dev/stderr"
  failed = 1
  exit 1
}
function percent(part, whole) { return whole > 0 ? 100 * part / whole : 0 }
function basename(path) { sub(/.*\//, "", path); return path }
function is_number(s) { return s ~ /^[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
# The targets: met or missed, never fatal.
function target(label, encoding, value, goal,    r) {
  r = row_of[encoding]
  if (r == "") {
    printf "  %-30s no %s model in the table\n", label, encoding
    return
  }
  printf "  %-30s %6.1f%%  %s\n", label, value[r], (value[r] + 0 >= goal ? "met" : "MISSED")
}
BEGIN {
  while ((status = (getline line < probe_log)) > 0) {
    split(line, w, " ")
    if (w[1] == "metric") metric[w[2]] = w[3]
  }
  if (status < 0) die("cannot read " probe_log)
  close(probe_log)
  copy = metric["d2d_copy_gb_per_s"]
  gemm = metric["cublas_gemm_gflop_per_s"]
  gemm_tokens = metric["cublas_gemm_tokens"]
  if (!is_number(copy) || copy <= 0)
    die(probe_log ": no \"metric d2d_copy_gb_per_s\" line with a positive value")
  if (!is_number(gemm) || gemm <= 0)
    die(probe_log ": no \"metric cublas_gemm_gflop_per_s\" line with a positive value")
  rows = 0
}
NR == 1 {
  ncol = csv_split($0, head)
  for (i = 1; i <= ncol; i++) col[head[i]] = i
  split("model_file model_type test n_prompt n_gen avg_ts gb_per_s gflop_per_s", need, " ")
  for (i = 1; i in need; i++)
    if (!(need[i] in col)) die(FILENAME ": no " need[i] " column in the header")
  next
}
/^[[:space:]]*$/ { next }
{
  n = csv_split($0, f)
  if (n != ncol) die(FILENAME ": line " NR " has " n " fields, the header " ncol)
  file = basename(f[col["model_file"]])
  if (!(file in row)) {
    row[file] = ++rows
    name[rows] = file
    type = f[col["model_type"]]
    sub(/^[^ ]* /, "", type)  # "llama Q4_0" -> "Q4_0"
    encoding[rows] = type
    if (!(type in row_of)) row_of[type] = rows
  }
  r = row[file]
  test = f[col["test"]]
  if (test ~ /^tg/ && !(r in tg_ts)) {
    tg_name = test
    tg_ts[r] = f[col["avg_ts"]]
    tg_gbs[r] = f[col["gb_per_s"]]
  } else if (test ~ /^pp/ && !(r in pp_ts)) {
    pp_name = test
    pp_ts[r] = f[col["avg_ts"]]
    pp_gflops[r] = f[col["gflop_per_s"]]
    pp_tokens = f[col["n_prompt"]]
  }
}
END {
  if (failed) exit 1
  if (rows == 0) die(FILENAME ": no result rows")
  for (r = 1; r <= rows; r++) {
    if (!(r in tg_ts) || !is_number(tg_gbs[r])) die(name[r] ": no tg result with GB/s")
    if (!(r in pp_ts) || !is_number(pp_gflops[r])) die(name[r] ": no pp result with GFLOP/s")
    copy_pct[r] = percent(tg_gbs[r], copy)
    gemm_pct[r] = percent(pp_gflops[r], gemm)
  }
  fmt = "| %-24s | %10s | %9s | %7s | %10s | %10s | %9s |\n"
  printf fmt, "file", tg_name " t/s", "GB/s", "% copy", pp_name " t/s", "GFLOP/s", "% cuBLAS"
  printf "|%s|%s|%s|%s|%s|%s|%s|\n", "--------------------------", "-----------:", "----------:",
    "--------:", "-----------:", "-----------:", "----------:"
  for (r = 1; r <= rows; r++) {
    printf fmt, name[r], sprintf("%.2f", tg_ts[r]), sprintf("%.1f", tg_gbs[r]),
      sprintf("%.1f", copy_pct[r]), sprintf("%.2f", pp_ts[r]), sprintf("%.1f", pp_gflops[r]),
      sprintf("%.1f", gemm_pct[r])
  }
  printf "\ncopy bandwidth (D2D cudaMemcpy, read + write): %.1f GB/s; cuBLAS F16 GEMM at the llama1b linear shapes, N = %s: %.1f GFLOP/s\n", copy, gemm_tokens, gemm
  if (pp_tokens != "" && gemm_tokens != "" && pp_tokens + 0 != gemm_tokens + 0)
    printf "note: the cuBLAS figure is for N = %s tokens, the prefill test for %s\n", gemm_tokens, pp_tokens
  print "targets (the issue'"'"'s; reported, not enforced):"
  target("decode F16 >= 80% of copy", "F16", copy_pct, 80)
  target("decode Q4_0 >= 65% of copy", "Q4_0", copy_pct, 65)
  target("prefill F16 >= 50% of cuBLAS", "F16", gemm_pct, 50)
}
' "$bench_csv"
