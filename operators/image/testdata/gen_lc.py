#!/usr/bin/env python3
"""Writes the PyTorch golden files of the locally connected operators.

Run from this folder with `/usr/bin/python3 gen_lc.py` (Debian's PyTorch
1.13, CPU). Not run by CI: the .npy files it writes into torch/ are
committed. PyTorch has no locally connected layer, so the layer is written
out here from its definition: at every output position the zero-padded,
strided, dilated input patch is contracted (per channel group) with that
position's own filter, plus that position's bias. Autograd gives dX,
dfilter and dbias of a random dY. Inputs are float32; results float64.
"""
import itertools
import os

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20261128)
OUT = "torch"


def save(name, a):
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a))


def lc(x, w, b, kernel, stride, pad, dilation, group):
    """x (N, C, *sp), w (*out, M, C/group, *kernel), b (*out, M) or None."""
    nd = len(kernel)
    pads = []
    for p in reversed(pad):
        pads += [p, p]
    xp = F.pad(x, pads)
    out = w.shape[:nd]
    m = w.shape[nd]
    cg, mg = x.shape[1] // group, m // group
    ys = []
    for pos in itertools.product(*[range(o) for o in out]):
        sl = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dilation[i] * (kernel[i] - 1) + 1, dilation[i]) for i in range(nd))
        patch = xp[(slice(None), slice(None)) + sl]
        parts = []
        for g in range(group):
            pg = patch[:, g * cg:(g + 1) * cg].reshape(x.shape[0], -1)
            wg = w[pos][g * mg:(g + 1) * mg].reshape(mg, -1)
            parts.append(pg @ wg.T)
        y = torch.cat(parts, dim=1)
        if b is not None:
            y = y + b[pos]
        ys.append(y)
    return torch.stack(ys, dim=2).reshape(x.shape[0], m, *out)


def case(name, xshape, m, kernel, stride, pad, dilation, group, bias=True):
    nd = len(kernel)
    out = [(xshape[2 + i] + 2 * pad[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    x = rng.uniform(-1, 1, size=xshape).astype(np.float32)
    w = rng.uniform(-1, 1, size=(*out, m, xshape[1] // group, *kernel)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(*out, m)).astype(np.float32)
    xt, wt, bt = (torch.tensor(a.astype(np.float64), requires_grad=True) for a in (x, w, b))
    y = lc(xt, wt, bt if bias else None, kernel, stride, pad, dilation, group)
    dy = rng.uniform(-1, 1, size=tuple(y.shape)).astype(np.float32)
    y.backward(torch.tensor(dy.astype(np.float64)))
    for k, v in (("x", x), ("w", w), ("b", b), ("y", y.detach().numpy()), ("dy", dy), ("dx", xt.grad.numpy()),
                 ("dw", wt.grad.numpy()), ("db", bt.grad.numpy() if bias else np.zeros(0))):
        save(name + "_" + k, v)


case("lc2d", (2, 3, 5, 6), 4, (3, 2), (1, 2), (1, 0), (1, 1), 1)
case("lc2d_group", (2, 4, 5, 5), 4, (2, 2), (2, 1), (1, 1), (1, 2), 2)
case("lc1d", (3, 2, 7), 3, (3,), (2,), (1,), (1,), 1, bias=False)
case("lc3d", (1, 2, 3, 4, 4), 2, (2, 2, 3), (1, 2, 1), (0, 1, 1), (1, 1, 1), 1)
