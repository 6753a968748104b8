"""Generates the NumPy golden files of package logic's tests.

Run with `go generate` in the package, or `python3 gen_golden.py` (NumPy only). It is
committed for reference and not run by CI; the .npy files it writes under
golden/ are. Names: golden/<case>.<tensor>.npy, with inputs A, B (C, X, Y
for Where) and the expected output Z.

Caffe2's legacy broadcast (broadcast=1, axis) is written out here the way
its documentation states it: B, without leading and trailing 1s, is
reshaped to line up with A's dimensions starting at axis, then NumPy
broadcasting does the rest.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
rng = np.random.default_rng(14)


def save(case, **tensors):
    for name, a in tensors.items():
        np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.ascontiguousarray(a))


def ints(*shape):
    # Few distinct values, so that equal pairs occur.
    return rng.integers(-2, 3, size=shape)


def legacy(a, b, axis):
    bs = list(b.shape)
    while bs and bs[0] == 1:
        bs.pop(0)
        axis = axis + 1 if axis >= 0 else axis
    while bs and bs[-1] == 1:
        bs.pop()
    if axis < 0:
        axis = a.ndim - len(bs)
    shape = [1] * axis + bs + [1] * (a.ndim - axis - len(bs))
    return b.reshape(shape)


CMP = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}
LOGIC = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}

# (case suffix, A shape, B shape, legacy axis or None for NumPy)
SHAPES = [
    ("same", (3, 4), (3, 4), None),
    ("numpy", (2, 3, 4), (3, 1), None),
    ("numpy_both", (2, 1, 4), (3, 1), None),
    ("scalar", (2, 3), (1,), None),
    ("legacy_suffix", (2, 3, 4), (3, 4), -1),
    ("legacy_axis", (2, 3, 4), (3,), 1),
    ("legacy_ones", (2, 3, 4), (1, 3, 1), 0),
]

DTYPES = ("i4", "i8", "f4", "f8", "b1")
for k, (name, fn) in enumerate(CMP.items()):
    # Each shape case with one element type, the types taking turns.
    for i, (suffix, sa, sb, axis) in enumerate(SHAPES):
        dt = DTYPES[(i + k) % len(DTYPES)]
        if dt == "b1":
            a, b = ints(*sa) > 0, ints(*sb) > 0
        else:
            a, b = ints(*sa).astype(dt), ints(*sb).astype(dt)
        if dt.startswith("f"):
            a.flat[0] = np.nan
        bb = b if axis is None else legacy(a, b, axis)
        save(f"{name}_{suffix}_{dt}", A=a, B=b, Z=fn(a, bb))

for name, fn in LOGIC.items():
    for suffix, sa, sb, axis in SHAPES:
        a, b = ints(*sa) > 0, ints(*sb) > 0
        bb = b if axis is None else legacy(a, b, axis)
        save(f"{name}_{suffix}_b1", A=a, B=b, Z=fn(a, bb))

a = ints(3, 4) > 0
save("Not", A=a, Z=np.logical_not(a))

for dt in ("f4", "f8", "i4", "i8"):
    c = ints(2, 3, 2) > 0
    x, y = ints(2, 3, 2).astype(dt), ints(2, 3, 2).astype(dt)
    save(f"Where_{dt}", C=c, X=x, Y=y, Z=np.where(c, x, y))
c = np.array([True, False, True])
x, y = rng.normal(size=(3, 2, 2)).astype("f4"), rng.normal(size=(3, 2, 2)).astype("f4")
save("Where_rows", C=c, X=x, Y=y, Z=np.where(c[:, None, None], x, y))

for dt in ("f4", "f8"):
    x = rng.normal(size=(4, 5)).astype(dt)
    x[x > 1] = np.nan
    x[0, 0] = np.inf
    save(f"IsNaN_{dt}", A=x, Z=np.isnan(x).astype(np.uint8))
    save(f"ReplaceNaN_{dt}", A=x, Z=np.where(np.isnan(x), np.array(2.5, dt), x))
