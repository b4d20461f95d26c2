#!/usr/bin/env python3
"""Writes data/expected.txt: data/chat.jinja rendered with data/context.json by Python jinja2 in
the environment of tests/reference/chat_templates/make_golden.py (Hugging Face's), with
strftime_now at 2025-03-14 09:26:53 (the --now 1741944413 the e2e test passes)."""
import datetime
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "reference/chat_templates"))
from make_golden import compile_template  # noqa: E402

now = datetime.datetime(2025, 3, 14, 9, 26, 53)
template = compile_template((HERE / "data/chat.jinja").read_text(encoding="utf-8"), now)
context = json.loads((HERE / "data/context.json").read_text(encoding="utf-8"))
(HERE / "data/expected.txt").write_bytes(template.render(**context).encode("utf-8"))
