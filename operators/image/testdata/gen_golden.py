#!/usr/bin/env python3
"""Writes the PyTorch golden files the image operator tests compare with.

Run from this folder with `python3 gen_golden.py` (PyTorch 1.13, CPU). Not
run by CI: the .npy files it writes into torch/ are committed. Inputs are
stored as float32; expected outputs and gradients are computed by PyTorch
in float64 from those float32 values and stored as float64.
"""
import os

import numpy as np
import torch

rng = np.random.default_rng(20240607)


OUT = "torch"


def save(name, a):
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a))


def f32(shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


def run(fn, xs, dy_shape=None):
    """Runs fn on float64 copies of the float32 arrays xs and back-propagates
    a random float32 dY; returns (y, dy, grads)."""
    ts = [torch.tensor(x.astype(np.float64), requires_grad=True) for x in xs]
    y = fn(*ts)
    dy = f32(tuple(y.shape))
    y.backward(torch.tensor(dy.astype(np.float64)))
    return y.detach().numpy(), dy, [t.grad.numpy() for t in ts]


# Order switches: NCHW2NHWC is permute(0, 2, …, k+1, 1); NHWC2NCHW its inverse.
for rank in (3, 4, 5):
    shape = {3: (2, 3, 5), 4: (2, 3, 4, 5), 5: (2, 3, 2, 3, 2)}[rank]
    x = f32(shape)
    perm = (0,) + tuple(range(2, rank)) + (1,)
    y, dy, (dx,) = run(lambda t: t.permute(*perm), [x])
    save(f"nchw2nhwc_r{rank}_x", x)
    save(f"nchw2nhwc_r{rank}_y", y)
    save(f"nchw2nhwc_r{rank}_dy", dy)
    save(f"nchw2nhwc_r{rank}_dx", dx)


def shuffle_nchw(t, g):
    n, c = t.shape[0], t.shape[1]
    rest = tuple(t.shape[2:])
    return t.reshape((n, g, c // g) + rest).transpose(1, 2).reshape((n, c) + rest)


# ChannelShuffle: (name, shape in the op's order, group, NHWC?).
for name, shape, g, nhwc in [
    ("shuffle_nchw_g2", (2, 6, 3, 4), 2, False),
    ("shuffle_nchw_g3", (2, 6, 3, 4), 3, False),
    ("shuffle_nchw_r2", (3, 6), 3, False),
    ("shuffle_nchw_r3", (2, 12, 5), 4, False),
    ("shuffle_nhwc_g3", (2, 3, 4, 6), 3, True),
]:
    x = f32(shape)
    if nhwc:
        fn = lambda t: shuffle_nchw(t.permute(0, 3, 1, 2), g).permute(0, 2, 3, 1)
    else:
        fn = lambda t: shuffle_nchw(t, g)
    y, dy, (dx,) = run(fn, [x])
    save(name + "_x", x)
    save(name + "_y", y)
    save(name + "_dy", dy)
    save(name + "_dx", dx)


# PRelu: F.prelu takes channels on dimension 1; NHWC goes through a permute.
for name, shape, nslope, nhwc in [
    ("prelu_nchw_c", (2, 3, 4, 5), 3, False),
    ("prelu_nchw_s", (2, 3, 4, 5), 1, False),
    ("prelu_nhwc_c", (2, 4, 5, 3), 3, True),
    ("prelu_nhwc_s", (2, 4, 5, 3), 1, True),
    ("prelu_nc_c", (4, 3), 3, False),
]:
    x = f32(shape)
    x.flat[::7] = 0  # exact zeros take the slope branch in both frameworks
    w = rng.uniform(-0.5, 0.5, size=(nslope,)).astype(np.float32)
    if nhwc:
        fn = lambda t, s: torch.nn.functional.prelu(t.permute(0, 3, 1, 2), s).permute(0, 2, 3, 1)
    else:
        fn = lambda t, s: torch.nn.functional.prelu(t, s)
    y, dy, (dx, dw) = run(fn, [x, w])
    save(name + "_x", x)
    save(name + "_w", w)
    save(name + "_y", y)
    save(name + "_dy", dy)
    save(name + "_dx", dx)
    save(name + "_dw", dw)
