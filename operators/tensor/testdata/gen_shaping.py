"""Generates the NumPy golden files of the shaping operators' tests
(Slice, Expand, NumpyTile, Range, Summarize; DiagonalFill's live in
operators/fill).

Run with `go generate` in the package, or `python3 gen_shaping.py` (NumPy only). It is
committed for reference and not run by CI; the .npy files it writes under
shaping/ are. Names: shaping/<case>.<tensor>.npy.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shaping")
rng = np.random.default_rng(14)


def save(case, **tensors):
    for name, a in tensors.items():
        np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.asarray(a))


def caffe2_slice(x, starts, ends):
    """Caffe2's Slice: index i < 0 means dim + 1 + i; indices past the end
    are clamped; dimensions without a start are kept whole."""
    idx = []
    for d, dim in enumerate(x.shape):
        if d >= len(starts):
            idx.append(slice(None))
            continue
        s, e = starts[d], ends[d]
        s = s + dim + 1 if s < 0 else s
        e = e + dim + 1 if e < 0 else e
        idx.append(slice(min(s, dim), min(e, dim)))
    return x[tuple(idx)]


x = rng.normal(size=(3, 4, 5)).astype(np.float32)
for name, starts, ends in [
    ("slice_first", [1], [3]),
    ("slice_last", [0, 0, 2], [-1, -1, -1]),
    ("slice_middle", [0, 1], [3, -2]),
    ("slice_clamped", [0, 2, 0], [9, 9, 3]),
    ("slice_multi", [1, 1, 1], [-1, 3, 4]),
]:
    y = caffe2_slice(x, starts, ends)
    dy = rng.normal(size=y.shape).astype(np.float32)
    dx = np.zeros_like(x)
    idx = tuple(slice(s, s + n) for s, n in zip(
        [(s + dim + 1 if s < 0 else min(s, dim)) for s, dim in zip(starts + [0] * 3, x.shape)], y.shape))
    dx[idx] = dy
    save(name, X=x, starts=np.array(starts, np.int64), ends=np.array(ends, np.int64), Y=y, dY=dy, dX=dx)

for name, xs, shape, dt in [
    ("expand_rows", (3, 1), (3, 4), np.float32),
    ("expand_rank", (4,), (2, 3, 4), np.float64),
    ("expand_both", (2, 1, 3), (4, 1), np.float32),
    ("expand_ones", (2, 3), (1, 1), np.int32),
]:
    xv = (rng.normal(size=xs) * 4).astype(dt)
    y = xv * np.ones(shape, dt)
    dy = (rng.normal(size=y.shape) * 4).astype(dt)
    lead = y.ndim - xv.ndim
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(xs) if d == 1)
    dx = dy.sum(axis=axes, keepdims=True).reshape(xs).astype(dt)
    save(name, X=xv, shape=np.array(shape, np.int64), Y=y, dY=dy, dX=dx)

for name, xs, reps in [
    ("tile_2d", (2, 3), (2, 3)),
    ("tile_3d", (2, 1, 3), (1, 4, 2)),
    ("tile_zero", (2, 3), (3, 0)),
]:
    xv = rng.integers(-9, 9, size=xs).astype(np.int64)
    save(name, X=xv, repeats=np.array(reps, np.int64), Y=np.tile(xv, reps))

for name, dt, args in [
    ("range_stop_i32", np.int32, (7,)),
    ("range_start_i64", np.int64, (-3, 4)),
    ("range_step_i32", np.int32, (10, 1, -3)),
    ("range_empty_i64", np.int64, (5, 1)),
    ("range_float", np.float32, (0.5, 2.25, 0.5)),
    ("range_double", np.float64, (3.0, -1.0, -0.75)),
]:
    inputs = {f"in{i}": np.array(a, dt) for i, a in enumerate(args)}
    save(name, **inputs, Y=np.arange(*args, dtype=dt))

for name, shape in [("summarize_matrix", (4, 5)), ("summarize_one", (1,))]:
    xv = rng.normal(size=shape).astype(np.float32)
    std = xv.std(ddof=1) if xv.size > 1 else 0.0
    save(name, X=xv, Y=np.array([xv.min(), xv.max(), xv.mean(), std], np.float32))
