#!/usr/bin/env python3
"""Golden ids for the pre-tokenizer names that have no vector file, from llama.cpp itself.

For each `tokenizer.ggml.pre` name below, copies ggml-vocab-gpt-2.gguf to a temporary directory
with the pre value rewritten (the string is patched in place: a vocabulary-only file has no
tensor data whose offsets could move), runs llama.cpp's llama-tokenize on a handful of tricky
strings (`--ids --no-bos --log-disable`) and writes golden.json with {pre, text, ids}. The
vocabulary stays GPT-2's, so only the regex split (and llama.cpp's per-pre flags such as
ignore_merges) changes the ids: this checks each regex list against an independent
implementation.

Usage: make_golden.py [SHARED_DIR] > golden.json
Generated with llama.cpp llama-tokenize version 9749 (d32676d77), Python 3.11.7; no PyPI package
needed.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

PRES = ["default", "gpt-2", "llama-bpe", "qwen2", "smollm", "starcoder", "refact", "mpt", "olmo",
        "falcon", "deepseek-llm", "deepseek-coder", "deepseek-v3", "command-r", "tekken",
        "gpt-4o", "stablelm2", "chatglm-bpe", "poro-chat", "viking", "exaone"]

TEXTS = [
    "Hello World! It's 2024: HE'S here, they'LL go.",
    "   leading spaces\n\n\ttabs and\r\nCRLF  ",
    "numbers 1234567 and 3.14159, $100+200=300",
    "Ünïcödé façade naïve — “quotes” …",
    "中文字符 和 日本語のテキスト 한국어",
    "camelCaseWords XMLHttpRequest don't CAN'T",
    "emoji 🦙🦙 and symbols <=> ^~| `code` /path/to",
    "a\n\n\n   b  \n c",
]


def patch_pre(data: bytes, pre: str) -> bytes:
    key = b"tokenizer.ggml.pre"
    at = data.index(struct.pack("<Q", len(key)) + key)
    value_at = at + 8 + len(key)
    (vtype,) = struct.unpack_from("<I", data, value_at)
    assert vtype == 8, "tokenizer.ggml.pre is not a string"
    (old_len,) = struct.unpack_from("<Q", data, value_at + 4)
    start = value_at + 12
    new = pre.encode()
    return data[:value_at + 4] + struct.pack("<Q", len(new)) + new + data[start + old_len:]


def main():
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                                "../../../../shared")
    source = os.path.join(shared, "testdata/vocab/ggml-vocab-gpt-2.gguf")
    binary = os.path.join(shared, "peer/bin/llama-tokenize")
    data = open(source, "rb").read()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for pre in PRES:
            path = os.path.join(tmp, f"vocab-{pre}.gguf")
            with open(path, "wb") as f:
                f.write(patch_pre(data, pre))
            for text in TEXTS:
                run = subprocess.run([binary, "-m", path, "-p", text, "--ids", "--no-bos",
                                      "--log-disable"], capture_output=True, text=True)
                if run.returncode != 0:
                    sys.exit(f"llama-tokenize failed for pre {pre}: {run.stderr[-400:]}")
                cases.append({"pre": pre, "text": text, "ids": json.loads(run.stdout.strip())})
    source_note = ("llama.cpp llama-tokenize 9749 (d32676d77) on ggml-vocab-gpt-2.gguf "
                   "with tokenizer.ggml.pre rewritten")
    sys.stdout.write(write_golden(source_note, cases))


def write_golden(source_note, cases):
    """One case per line, so that a diff of a regenerated file shows the cases that changed."""
    lines = ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases)
    return '{"source": ' + json.dumps(source_note) + ',\n"cases": [\n' + lines + "\n]}\n"


if __name__ == "__main__":
    main()
