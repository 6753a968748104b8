"""Generates the PyTorch golden files of package convpool's tests.

Run from this folder with `python3 gen_goldens.py` (PyTorch 1.13, CPU). It is
committed for reference and not run by CI; the .npy files it writes under
golden/ are. Every case writes its inputs, the forward output Y, a random
output gradient dY and the input gradients of sum(Y * dY), all as float64
holding float32-representable inputs. Names: golden/<case>.<tensor>.npy.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
OUT = "golden"


def rand(gen, *shape):
    # float32-representable values, so that float32 and float64 runs see the
    # same inputs.
    return torch.tensor(
        np.float32(gen.uniform(-1, 1, size=shape)).astype(np.float64),
        requires_grad=True,
    )


def save(case, **tensors):
    for name, t in tensors.items():
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.ascontiguousarray(a, dtype=np.float64))


def backward(case, y, inputs, gen):
    dy = torch.tensor(np.float32(gen.uniform(-1, 1, size=y.shape)).astype(np.float64))
    grads = torch.autograd.grad(y, list(inputs.values()), dy)
    save(case, Y=y, dY=dy, **inputs, **{"d" + k: g for k, g in zip(inputs, grads)})


def conv(case, seed, n, c, sp, m, k, stride, pads, dilation=1, groups=1, bias=True):
    """pads: heads then tails, as Caffe2's pads."""
    gen = np.random.default_rng(seed)
    nd = len(sp)
    x = rand(gen, n, c, *sp)
    w = rand(gen, m, c // groups, *k)
    inputs = {"X": x, "W": w}
    b = None
    if bias:
        b = rand(gen, m)
        inputs["b"] = b
    # F.pad takes the last dimension first: (left, right, top, bottom, …).
    fp = []
    for i in reversed(range(nd)):
        fp += [pads[i], pads[nd + i]]
    xp = F.pad(x, fp)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    y = fn(xp, w, b, stride=stride, dilation=dilation, groups=groups)
    backward(case, y, inputs, gen)


def conv_transpose(case, seed, n, m, sp, c, k, stride, pad, adj, groups=1, bias=True):
    gen = np.random.default_rng(seed)
    x = rand(gen, n, m, *sp)
    w = rand(gen, m, c // groups, *k)
    inputs = {"X": x, "W": w}
    b = None
    if bias:
        b = rand(gen, c)
        inputs["b"] = b
    y = F.conv_transpose2d(x, w, b, stride=stride, padding=pad, output_padding=adj, groups=groups)
    backward(case, y, inputs, gen)


def pool(case, seed, shape, fn):
    gen = np.random.default_rng(seed)
    x = rand(gen, *shape)
    backward(case, fn(x), {"X": x}, gen)


def pad(case, seed, shape, mode, t, l, b, r, value=0.0):
    gen = np.random.default_rng(seed)
    x = rand(gen, *shape)
    y = F.pad(x, (l, r, t, b), mode=mode, value=value) if mode == "constant" else F.pad(x, (l, r, t, b), mode=mode)
    backward(case, y, {"X": x}, gen)


def main():
    os.makedirs(OUT, exist_ok=True)
    conv("conv_basic", 1, 2, 3, (7, 6), 4, (3, 3), 1, [1, 1, 1, 1])
    conv("conv_stride_asympad", 2, 2, 4, (9, 8), 6, (3, 2), (2, 1), [1, 0, 2, 1])
    conv("conv_group_dilation", 3, 2, 4, (8, 7), 6, (3, 3), 1, [2, 2, 2, 2], dilation=2, groups=2)
    conv("conv_1x1", 4, 3, 5, (4, 5), 4, (1, 1), 1, [0, 0, 0, 0], bias=False)
    conv("conv_depthwise", 5, 2, 4, (7, 7), 4, (3, 3), 2, [1, 1, 1, 1], groups=4)
    conv("conv_1x1_stride", 6, 2, 3, (5, 6), 2, (1, 1), 2, [0, 0, 0, 0])
    conv("conv1d", 7, 2, 3, (10,), 2, (4,), 2, [1, 2], bias=True)
    conv("conv3d", 8, 2, 2, (4, 5, 4), 3, (2, 3, 2), (1, 2, 1), [1, 1, 0, 1, 0, 1])
    conv_transpose("convt_basic", 9, 2, 3, (4, 5), 4, (3, 3), 2, 1, 1)
    conv_transpose("convt_group", 10, 2, 4, (3, 4), 6, (2, 3), (1, 2), 0, 0, groups=2, bias=False)
    conv_transpose("convt_1x1", 11, 2, 3, (3, 3), 2, (1, 1), 1, 0, 0)
    pool("maxpool_k3s2p1", 12, (2, 3, 7, 8), lambda x: F.max_pool2d(x, 3, 2, 1))
    pool("maxpool_k2s2", 13, (2, 2, 6, 6), lambda x: F.max_pool2d(x, 2, 2))
    pool("maxpool_ceil", 14, (1, 2, 8, 7), lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True))
    pool("avgpool_k3s2p1", 15, (2, 3, 7, 8), lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False))
    pool("avgpool_rect", 16, (2, 2, 6, 7), lambda x: F.avg_pool2d(x, (3, 2), (1, 2), (1, 0), count_include_pad=False))
    pool("avgpool_ceil", 17, (1, 2, 8, 7), lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False))
    pool("avgpool_global", 18, (2, 3, 5, 4), lambda x: x.mean(dim=(2, 3), keepdim=True))
    pool("maxpool_global", 19, (2, 3, 5, 4), lambda x: F.adaptive_max_pool2d(x, 1))
    pool("maxpool3d", 20, (1, 2, 5, 6, 5), lambda x: F.max_pool3d(x, (2, 3, 2), (2, 2, 1), (1, 1, 0)))
    pool("avgpool1d", 21, (2, 3, 9), lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False))
    pad("pad_constant", 22, (2, 3, 4, 5), "constant", 1, 2, 0, 3, value=0.5)
    pad("pad_reflect", 23, (2, 3, 4, 5), "reflect", 2, 1, 1, 3)
    pad("pad_edge", 24, (2, 3, 4, 5), "replicate", 3, 0, 2, 1)
    pad("pad_crop", 25, (1, 2, 6, 6), "constant", -1, 2, 1, -2)


if __name__ == "__main__":
    main()
