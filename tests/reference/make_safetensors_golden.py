#!/usr/bin/env python3
"""Writes tests/reference/data/safetensors_golden.safetensors with the independent Python
`safetensors` package (see README.md here for the versions used).

The values are chosen to be exactly representable so that the C++ test
(tests/unit/safetensors/test_safetensors_golden.cpp) can compare them literally.
"""
import os

import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "safetensors_golden.safetensors")

tensors = {
    "model.weight_f32": np.array([[1.5, -2.25, 3.0], [0.0, 0.5, -8.0]], dtype=np.float32),
    "model.bias_f16": np.array([1.0, -0.5, 65504.0, 0.25], dtype=np.float16),
    "ids.i64": np.array([-1, 0, 9223372036854775807], dtype=np.int64),
    "mask.bool": np.array([[True, False], [False, True]], dtype=np.bool_),
    "counts.u16": np.array([1, 65535, 300], dtype=np.uint16),
    "scalar.f64": np.array(3.141592653589793, dtype=np.float64),
    "empty.i32": np.zeros((0, 3), dtype=np.int32),
    "bytes.u8": np.array([0, 1, 127, 128, 255], dtype=np.uint8),
    "small.i8": np.array([-128, 127], dtype=np.int8),
}
metadata = {"format": "np", "source": "eredu golden"}

os.makedirs(os.path.dirname(OUT), exist_ok=True)
save_file(tensors, OUT, metadata=metadata)
print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")
