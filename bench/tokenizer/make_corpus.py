#!/usr/bin/env python3
"""Writes a deterministic ~1 MB English text for the tokenizer benchmark, from files every Debian
system has (no download): the licence texts in /usr/share/common-licenses, then the copyright
files under /usr/share/doc, in sorted path order, each decoded as UTF-8 (files that are not are
skipped), until 1,000,000 bytes; cut at a character boundary.

Usage: make_corpus.py OUT.txt [BYTES]
"""
import pathlib
import sys


def sources():
    for path in sorted(pathlib.Path("/usr/share/common-licenses").iterdir()):
        if path.is_file() and not path.is_symlink():
            yield path
    for path in sorted(pathlib.Path("/usr/share/doc").glob("*/copyright")):
        if path.is_file():
            yield path


def main():
    out = pathlib.Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    data = bytearray()
    for path in sources():
        try:
            text = path.read_bytes().decode("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        data += text.encode("utf-8") + b"\n"
        if len(data) >= limit:
            break
    data = bytes(data[:limit]).decode("utf-8", errors="ignore").encode("utf-8")
    out.write_bytes(data)
    print(f"{out}: {len(data)} bytes")


if __name__ == "__main__":
    main()
