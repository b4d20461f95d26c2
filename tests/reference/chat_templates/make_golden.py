#!/usr/bin/env python3
"""Golden chat-template renders, made the way Hugging Face transformers' apply_chat_template makes
them (transformers/utils/chat_template_utils.py: _compile_jinja_template and render_jinja_template):
an ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
extension and a `generation` tag that renders its body, HF's own `tojson` filter
(json.dumps(ensure_ascii=False, ...)), `raise_exception` and `strftime_now` (here at a fixed date so
the output is reproducible), rendered with messages, tools (None without tools), documents=None,
add_generation_prompt and the bos/eos tokens.

    python3 tests/reference/chat_templates/make_golden.py [TEMPLATE_DIR]

TEMPLATE_DIR defaults to ../shared/testdata/chat-templates (relative to the repository root).
Writes golden/<template stem>.json: for each scenario of scenarios.json either
{"output": TEXT} or {"error": MESSAGE} (jinja2 raised: the C++ engine must fail too). A template
that jinja2 cannot compile gets {"compile_error": MESSAGE}. Outputs longer than BULKY bytes are
stored as sha256 + length only, to keep the committed files small.
"""
import datetime
import hashlib
import json
import pathlib
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BULKY = 16384


def compile_template(source, now):
    class GenerationTag(Extension):
        # transformers' AssistantTracker without the mask bookkeeping: the body renders as is.
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

        def _generation_support(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def main():
    template_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared/testdata/chat-templates"
    spec = json.loads((HERE / "scenarios.json").read_text(encoding="utf-8"))
    now = datetime.datetime.fromisoformat(spec["date"])
    out_dir = HERE / "golden"
    out_dir.mkdir(exist_ok=True)
    total = 0
    for path in sorted(template_dir.glob("*.jinja")):
        source = path.read_text(encoding="utf-8")
        result = {}
        try:
            template = compile_template(source, now)
        except Exception as e:  # noqa: BLE001 - any compile failure is the expected result
            result["compile_error"] = f"{type(e).__name__}: {e}"
            template = None
        if template is not None:
            for scenario in spec["scenarios"]:
                try:
                    text = template.render(messages=scenario["messages"],
                                           tools=spec["tools"] if scenario["with_tools"] else None,
                                           documents=None,
                                           add_generation_prompt=scenario["add_generation_prompt"],
                                           bos_token=spec["bos_token"], eos_token=spec["eos_token"])
                    data = text.encode("utf-8")
                    if len(data) > BULKY:
                        entry = {"sha256": hashlib.sha256(data).hexdigest(), "length": len(data)}
                    else:
                        entry = {"output": text}
                except Exception as e:  # noqa: BLE001
                    entry = {"error": f"{type(e).__name__}: {e}"}
                result[scenario["name"]] = entry
        blob = json.dumps(result, ensure_ascii=False, indent=1) + "\n"
        total += len(blob.encode("utf-8"))
        (out_dir / (path.stem + ".json")).write_text(blob, encoding="utf-8")
    print(f"jinja2 {jinja2.__version__}, python {sys.version.split()[0]}: {total} bytes written")


if __name__ == "__main__":
    main()
