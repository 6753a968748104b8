#!/usr/bin/env python3
"""Generates the PyTorch golden files of package norm's tests (not run by CI).

Run from this directory:  /usr/bin/python3 gen_golden.py
(PyTorch 1.13 and NumPy; the files are committed.)

Every case writes <case>.<name>.npy: the inputs as float32 (what the Go test
feeds the operators) and the expected outputs and gradients as float64,
computed by PyTorch in double precision from those float32 values. Gradients
are autograd's for the given upstream gradient dy.

Where Caffe2 and PyTorch define things differently, the golden is adapted
to Caffe2's definition:

* BatchNorm momentum: Caffe2's running = running*momentum + batch*(1-momentum)
  with momentum 0.9 is PyTorch's momentum 0.1.
* BatchNorm running variance: PyTorch updates it with the unbiased batch
  variance (divided by n-1), Caffe2 with the biased one (divided by n, the
  variance it normalizes with). The golden running_var is PyTorch's with the
  batch term rescaled by (n-1)/n.
* BatchNorm saved statistics: Caffe2's saved_mean and saved_inv_var are
  aten::native_batch_norm's save_mean and save_invstd (1/sqrt(var + eps)).
* InstanceNorm / GroupNorm saved statistics: mean and 1/sqrt(var + eps) per
  (image, channel) and per (image, group), shaped [N, C] and [N, G].
* LayerNorm: Caffe2 also outputs mean and std = sqrt(var + eps) per row,
  shaped like X's leading dimensions plus a trailing 1.
* LRN: both use scale = bias + alpha/size * (sum of squares over a window of
  `size` channels) and Y = X * scale^-beta (PyTorch's k is Caffe2's bias), but
  the window of channel c is [c - size//2, c + (size-1)//2] in PyTorch and
  [c - (size-1)//2, c + size//2] in Caffe2: the same for odd sizes, mirror
  images for even ones. For an even size the golden is PyTorch's LRN of the
  input with its channels reversed, reversed back. The scale output is
  computed here directly from its definition.
"""
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20240611)


def arg(v):
    """v rounded to float32, as an operator argument (a proto float) holds it."""
    return float(np.float32(v))


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def save(case, **arrays):
    for name, a in arrays.items():
        if isinstance(a, torch.Tensor):
            a = a.detach().numpy()
        np.save(f"{case}.{name}.npy", np.ascontiguousarray(a))


def t64(a, grad=False):
    return torch.tensor(a.astype(np.float64), requires_grad=grad)


def grads(y, inputs, dy):
    return torch.autograd.grad(y, inputs, t64(dy))


def batch_norm():
    eps, momentum = arg(1e-5), arg(0.9)
    x = f32(4, 3, 5, 6, lo=-1, hi=3)
    scale, bias = f32(3, lo=0.5, hi=1.5), f32(3)
    rm, rv = f32(3), f32(3, lo=0.5, hi=2)
    dy = f32(*x.shape)
    n = x.size // x.shape[1]

    # Training mode.
    xt, st, bt = t64(x, True), t64(scale, True), t64(bias, True)
    rmt, rvt = t64(rm), t64(rv)
    y = F.batch_norm(xt, rmt, rvt, st, bt, training=True, momentum=1 - momentum, eps=eps)
    dx, ds, db = grads(y, (xt, st, bt), dy)
    _, save_mean, save_invstd = torch.ops.aten.native_batch_norm(
        t64(x), t64(scale), t64(bias), None, None, True, 0.0, eps)
    # PyTorch's batch term of the running variance is unbiased; Caffe2's is biased.
    rv_caffe2 = momentum * t64(rv) + (rvt - momentum * t64(rv)) * (n - 1) / n
    save("bn_train", x=x, scale=scale, bias=bias, rm=rm, rv=rv, dy=dy,
         y=y, running_mean=rmt, running_var=rv_caffe2, saved_mean=save_mean,
         saved_inv_var=save_invstd, dx=dx, dscale=ds, dbias=db)

    # Test mode: the given statistics, which are constants to the gradient.
    xt, st, bt = t64(x, True), t64(scale, True), t64(bias, True)
    y = F.batch_norm(xt, t64(rm), t64(rv), st, bt, training=False, eps=eps)
    dx, ds, db = grads(y, (xt, st, bt), dy)
    save("bn_test", x=x, scale=scale, bias=bias, mean=rm, var=rv, dy=dy, y=y, dx=dx, dscale=ds, dbias=db)


def instance_norm():
    eps = arg(1e-5)
    x = f32(3, 4, 5, 5, lo=-1, hi=2)
    scale, bias, dy = f32(4, lo=0.5, hi=1.5), f32(4), f32(3, 4, 5, 5)
    xt, st, bt = t64(x, True), t64(scale, True), t64(bias, True)
    y = F.instance_norm(xt, weight=st, bias=bt, eps=eps)
    dx, ds, db = grads(y, (xt, st, bt), dy)
    x64 = t64(x)
    mean = x64.mean(dim=(2, 3))
    rstd = 1 / torch.sqrt(x64.var(dim=(2, 3), unbiased=False) + eps)
    save("instance_norm", x=x, scale=scale, bias=bias, dy=dy, y=y, mean=mean, inv_stdev=rstd,
         dx=dx, dscale=ds, dbias=db)


def layer_norm():
    eps = arg(1e-5)
    # No affine transform, axis 1 of a 3-D X.
    x, dy = f32(3, 4, 5, lo=-1, hi=2), f32(3, 4, 5)
    xt = t64(x, True)
    y = F.layer_norm(xt, x.shape[1:], eps=eps)
    (dx,) = grads(y, (xt,), dy)
    rows = t64(x).reshape(3, -1)
    mean = rows.mean(dim=1, keepdim=True)
    std = torch.sqrt(rows.var(dim=1, unbiased=False, keepdim=True) + eps)
    save("layer_norm", x=x, dy=dy, y=y, mean=mean, std=std, dx=dx)

    # Elementwise affine, axis 2 of a 4-D X.
    x, dy = f32(2, 3, 4, 5, lo=-1, hi=2), f32(2, 3, 4, 5)
    gamma, beta = f32(4, 5, lo=0.5, hi=1.5), f32(4, 5)
    xt, gt, bt = t64(x, True), t64(gamma, True), t64(beta, True)
    y = F.layer_norm(xt, (4, 5), weight=gt, bias=bt, eps=eps)
    dx, dg, db = grads(y, (xt, gt, bt), dy)
    rows = t64(x).reshape(6, -1)
    mean = rows.mean(dim=1).reshape(2, 3, 1)
    std = torch.sqrt(rows.var(dim=1, unbiased=False) + eps).reshape(2, 3, 1)
    save("layer_norm_affine", x=x, gamma=gamma, beta=beta, dy=dy, y=y, mean=mean, std=std,
         dx=dx, dgamma=dg, dbeta=db)


def group_norm():
    eps, groups = arg(1e-5), 3
    x = f32(2, 6, 4, 3, lo=-1, hi=2)
    gamma, beta, dy = f32(6, lo=0.5, hi=1.5), f32(6), f32(2, 6, 4, 3)
    xt, gt, bt = t64(x, True), t64(gamma, True), t64(beta, True)
    y = F.group_norm(xt, groups, weight=gt, bias=bt, eps=eps)
    dx, dg, db = grads(y, (xt, gt, bt), dy)
    blocks = t64(x).reshape(2, groups, -1)
    mean = blocks.mean(dim=2)
    rstd = 1 / torch.sqrt(blocks.var(dim=2, unbiased=False) + eps)
    save("group_norm", x=x, gamma=gamma, beta=beta, dy=dy, y=y, mean=mean, inv_std=rstd,
         dx=dx, dgamma=dg, dbeta=db)


def caffe2_lrn_scale(x, size, alpha, bias):
    """scale = bias + alpha/size * sum of x^2 over [c - (size-1)//2, c + size//2]."""
    x = x.astype(np.float64)
    c = x.shape[1]
    sq = x * x
    scale = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - (size - 1) // 2), min(c - 1, ch + size // 2)
        scale[:, ch] = bias + alpha / size * sq[:, lo:hi + 1].sum(axis=1)
    return scale


def lrn():
    for case, size, alpha, beta, bias in (("lrn5", 5, 0.05, 0.75, 1.0),
                                          ("lrn4", 4, 0.1, 0.6, 2.0),
                                          ("lrn3", 3, 0.2, 0.5, 1.5)):
        alpha, beta, bias = arg(alpha), arg(beta), arg(bias)
        x, dy = f32(2, 7, 4, 3), f32(2, 7, 4, 3)
        xt = t64(x, True)
        if size % 2 == 1:
            y = F.local_response_norm(xt, size, alpha=alpha, beta=beta, k=bias)
        else:
            y = F.local_response_norm(xt.flip(1), size, alpha=alpha, beta=beta, k=bias).flip(1)
        (dx,) = grads(y, (xt,), dy)
        save(case, x=x, dy=dy, y=y, scale=caffe2_lrn_scale(x, size, alpha, bias), dx=dx)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    batch_norm()
    instance_norm()
    layer_norm()
    group_norm()
    lrn()
