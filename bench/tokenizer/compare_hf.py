#!/usr/bin/env python3
"""Times eredu against Hugging Face `tokenizers` on one text with one byte-level BPE vocabulary,
single thread, checks both give identical ids, and prints the speed ratio.

The HF tokenizer is built from the GGUF's tokens and merges (python `gguf` reads them) as GPT-2's
is: BPE model, ByteLevel pre-tokenizer (add_prefix_space=False, the GPT-2 regex). Both tokenize
without BOS and without special-token parsing. Each side's time is the best of REPEATS runs. HF is timed on the whole text as one string (the
same call eredu makes) and, more favourably to it, line by line with encode_batch on one thread.

Usage: compare_hf.py EREDU_BENCH_BINARY VOCAB.gguf TEXT.txt [REPEATS]
Tested with tokenizers 0.23.3 and gguf 0.17 (PyPI).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"

import gguf  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402


def read_strings(reader, key):
    field = reader.fields[key]
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]


def main():
    binary, vocab_path, text_path = sys.argv[1:4]
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    reader = gguf.GGUFReader(vocab_path)
    tokens = read_strings(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in read_strings(reader, "tokenizer.ggml.merges")]
    hf = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    text = open(text_path, "rb").read().decode("utf-8")

    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        hf_ids = hf.encode(text, add_special_tokens=False).ids
        best = min(best, time.perf_counter() - start)

    # HF is much slower on one 1 MB string than on many short ones (offset bookkeeping), so also
    # time it line by line (encode_batch, one thread): the fairer, faster HF number.
    lines = text.splitlines(keepends=True)
    best_lines = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        hf.encode_batch(lines, add_special_tokens=False)
        best_lines = min(best_lines, time.perf_counter() - start)

    with tempfile.TemporaryDirectory() as tmp:
        ids_path = os.path.join(tmp, "ids.txt")
        run = subprocess.run([binary, vocab_path, text_path, str(repeats), ids_path],
                             check=True, capture_output=True, text=True)
        eredu = json.loads(run.stdout)
        eredu_ids = [int(x) for x in open(ids_path).read().split()]

    same = eredu_ids == hf_ids
    first_diff = next((i for i, (a, b) in enumerate(zip(eredu_ids, hf_ids)) if a != b),
                      None if len(eredu_ids) == len(hf_ids) else min(len(eredu_ids), len(hf_ids)))
    nbytes = len(text.encode("utf-8"))
    print(json.dumps({
        "bytes": nbytes,
        "tokens_eredu": len(eredu_ids),
        "tokens_hf": len(hf_ids),
        "ids_identical": same,
        "first_difference": first_diff,
        "eredu_best_s": eredu["best_s"],
        "hf_best_s": round(best, 6),
        "eredu_mb_per_s": eredu["mb_per_s"],
        "hf_mb_per_s": round(nbytes / best / 1e6, 3),
        "hf_lines_best_s": round(best_lines, 6),
        "speedup_eredu_over_hf": round(best / eredu["best_s"], 3),
        "speedup_eredu_over_hf_lines": round(best_lines / eredu["best_s"], 3),
    }, indent=2))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
