#!/usr/bin/env python3
"""Writes the golden files of ResizeNearest and UpsampleBilinear.

Run from this folder with `/usr/bin/python3 gen_resize.py` (Debian's NumPy
and PyTorch 1.13, CPU). Not run by CI: the .npy files it writes into torch/
are committed. UpsampleBilinear is torch's "bilinear" interpolation with
align_corners=True, differentiated by autograd. ResizeNearest is written
out in NumPy: output pixel (y, x) reads input pixel
(min(floor(y / height_scale), H - 1), min(floor(x / width_scale), W - 1)),
the quotient taken in float32 as Caffe2 does (torch's "nearest" multiplies
by the reciprocal instead, which rounds differently for scales such as
1.5); its gradient adds dY back with np.add.at. Inputs are float32; outputs and the gradients of a
random dY are computed in float64 and stored as float64. NHWC cases are
the NCHW computation with the layout permuted.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20261127)
OUT = "torch"


def save(name, a):
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a))


def nearest(name, x, nhwc, hs, ws, out_hw):
    xn = x.transpose(0, 3, 1, 2) if nhwc else x
    h, w = xn.shape[2:]
    rows = np.minimum((np.arange(out_hw[0], dtype=np.float32) / np.float32(hs)).astype(np.int64), h - 1)
    cols = np.minimum((np.arange(out_hw[1], dtype=np.float32) / np.float32(ws)).astype(np.int64), w - 1)
    y = xn[:, :, rows[:, None], cols[None, :]].astype(np.float64)
    dy = rng.uniform(-1, 1, size=y.shape).astype(np.float32)
    dx = np.zeros(xn.shape)
    np.add.at(dx, (slice(None), slice(None), rows[:, None], cols[None, :]), dy.astype(np.float64))
    if nhwc:
        y, dy, dx = (a.transpose(0, 2, 3, 1) for a in (y, dy, dx))
    save(name + "_x", x)
    save(name + "_y", y)
    save(name + "_dy", dy)
    save(name + "_dx", dx)


def case(name, mode, shape, hs, ws, nhwc=False):
    x = rng.uniform(-1, 1, size=shape).astype(np.float32)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    xin = xt.permute(0, 3, 1, 2) if nhwc else xt
    out_hw = (int(np.float32(xin.shape[2]) * np.float32(hs)), int(np.float32(xin.shape[3]) * np.float32(ws)))
    if mode == "nearest":
        nearest(name, x, nhwc, hs, ws, out_hw)
        return
    else:
        y = F.interpolate(xin, size=out_hw, mode="bilinear", align_corners=True)
    assert tuple(y.shape[2:]) == out_hw, (y.shape, out_hw)
    if nhwc:
        y = y.permute(0, 2, 3, 1)
    dy = rng.uniform(-1, 1, size=tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy.astype(np.float64)))
    save(name + "_x", x)
    save(name + "_y", y.detach().numpy())
    save(name + "_dy", dy)
    save(name + "_dx", xt.grad.numpy())


case("nearest_2x", "nearest", (2, 3, 4, 5), 2, 2)
case("nearest_frac", "nearest", (1, 2, 5, 4), 1.5, 2.5)
case("nearest_down", "nearest", (2, 2, 6, 7), 0.5, 0.75)
case("nearest_nhwc", "nearest", (2, 4, 3, 3), 2, 3, nhwc=True)
case("nearest_nhwc_frac", "nearest", (1, 5, 4, 2), 1.5, 0.5, nhwc=True)
case("bilinear_2x", "bilinear", (2, 3, 4, 5), 2, 2)
case("bilinear_frac", "bilinear", (1, 2, 5, 4), 1.5, 2.5)
case("bilinear_down", "bilinear", (2, 2, 6, 7), 0.5, 0.75)
case("bilinear_one", "bilinear", (1, 1, 3, 4), 0.4, 0.3)
