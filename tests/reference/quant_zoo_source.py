#!/usr/bin/env python3
"""Regenerates a slice of the quant-zoo source weights (the all-F32 model the zoo variants were
quantized from, which ../shared/testdata/quant-zoo does not ship) so that eredu's reference
quantizers can be checked against the bytes llama-quantize wrote from the very same floats.

Recipe (quant-zoo manifest.json, source_model.weights): numpy.random.default_rng(1234) consumed in
file tensor order; matrices = standard_normal(float32) * 0.05. token_embd.weight is the first tensor
in that order (ne = [256, 512], numpy shape (512, 256)), so its values are the first draws.

Before writing, the script proves the regeneration exact: rounding the regenerated tensor to F16 and
to BF16 must give the zoo's F16 and BF16 references bit for bit.

Writes tests/reference/data/quant_zoo_token_embd_rows0-63.f32: the first 64 rows (16384 floats,
GGUF element order, little-endian float32).

Versions used to generate the committed file: Python 3.11.7, numpy 1.24.2 (the manifest's numpy
version; the PCG64 stream and standard_normal's float32 ziggurat are stable across numpy >= 1.17).
Run:  python3 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy==1.24.2
      /tmp/venv/bin/python tests/reference/quant_zoo_source.py [path/to/quant-zoo]
"""
import pathlib
import sys

import numpy as np

ROWS = 64
HERE = pathlib.Path(__file__).resolve().parent
zoo = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared/testdata/quant-zoo"

rng = np.random.default_rng(1234)
token_embd = rng.standard_normal((512, 256), dtype=np.float32) * np.float32(0.05)
assert token_embd.dtype == np.float32

f16_ref = np.fromfile(zoo / "F16.token_embd.weight.f32", dtype="<f4").reshape(512, 256)
if not np.array_equal(token_embd.astype(np.float16).astype(np.float32), f16_ref):
    sys.exit("regenerated token_embd.weight does not round to the zoo's F16 reference")
bits = token_embd.view(np.uint32).astype(np.uint64)
bf16 = (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)
bf16_ref = np.fromfile(zoo / "BF16.token_embd.weight.f32", dtype="<f4").reshape(512, 256)
if not np.array_equal(bf16, bf16_ref):
    sys.exit("regenerated token_embd.weight does not round to the zoo's BF16 reference")

out = HERE / "data" / f"quant_zoo_token_embd_rows0-{ROWS - 1}.f32"
token_embd[:ROWS].astype("<f4").tofile(out)
print(f"wrote {out} ({ROWS * 256} floats); F16 and BF16 cross-checks passed")
