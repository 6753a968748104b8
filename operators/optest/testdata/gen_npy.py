#!/usr/bin/python3
"""Writes the .npy files TestReadNPYDtypes reads, one per dtype, with
NumPy's own writer, and want.json: each file's values as NumPy reads them
back (tolist; byte strings in hex, floats as decimal strings), its dtype
and shape."""
import json
import os

import numpy as np

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")
os.makedirs(here, exist_ok=True)
arrays = {
    "float16": np.array([[0.5, -2.0, 65504.0], [6.1e-5, 1e-7, np.inf]], dtype=np.float16),
    "int8": np.array([-128, 0, 127], dtype=np.int8),
    "int16": np.array([[-32768], [32767]], dtype=np.int16),
    "uint16": np.array([0, 1, 65535], dtype=np.uint16),
    "bytes": np.array([[b"ab", b""], [b"abcd", b"\xff"]], dtype="S4"),
    "unicode": np.array(["héllo", "", "日本"], dtype="U5"),
}
want = {}
for name, a in arrays.items():
    np.save(os.path.join(here, name + ".npy"), a)
    values = a.tolist()
    if a.dtype.kind == "S":
        values = np.vectorize(lambda b: b.hex())(a).tolist()
    elif a.dtype.kind == "f":
        values = [str(v) for v in a.astype(np.float64).ravel()]
    want[name] = {"dtype": a.dtype.str, "shape": list(a.shape), "values": values}
with open(os.path.join(here, "want.json"), "w") as f:
    json.dump(want, f, indent=1, ensure_ascii=False)
