#!/usr/bin/env python3
"""Generates the golden files of the math, activation, loss and optimizer
operators of issue 14 (items 5 and 6), read by tests/opcases_mathloss_test.go.

Run from this directory:  /usr/bin/python3 gen_golden.py
(Debian's PyTorch 1.13 and NumPy; the files are committed.)

manifest.json lists the cases: an operator type, its arguments, its input
files (the exact dtype the Go test feeds) and its expected output files
(float64 for float outputs, computed in double precision from the float32
inputs), with a tolerance. References are PyTorch's (torch.nn.functional for
activations and losses, autograd for gradient operators) or, where PyTorch
has no such function, Caffe2's definition written out in NumPy below, which
names the formula it follows.
"""
import json
import math

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20261127)
cases = []


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def t64(a, grad=False):
    return torch.tensor(np.asarray(a).astype(np.float64), requires_grad=grad)


def arr(a):
    if isinstance(a, torch.Tensor):
        a = a.detach().numpy()
    return np.ascontiguousarray(a)


def case(name, op, inputs, outputs, args=None, tol=1e-5):
    """Records a case: inputs and outputs are lists of arrays (or tensors)."""
    ins, outs = [], []
    for k, a in enumerate(inputs):
        fn = f"{name}.in{k}.npy"
        np.save(fn, arr(a))
        ins.append(fn)
    for k, a in enumerate(outputs):
        a = arr(a)
        if a.dtype.kind == "f":
            a = a.astype(np.float64)
        fn = f"{name}.out{k}.npy"
        np.save(fn, a)
        outs.append(fn)
    spec = []
    for key, v in (args or {}).items():
        if isinstance(v, bool):
            spec.append({"name": key, "i": int(v)})
        elif isinstance(v, int):
            spec.append({"name": key, "i": v})
        elif isinstance(v, float):
            spec.append({"name": key, "f": v})
        elif isinstance(v, str):
            spec.append({"name": key, "s": v})
        elif all(isinstance(x, int) for x in v):
            spec.append({"name": key, "ints": list(v)})
        else:
            spec.append({"name": key, "floats": [float(x) for x in v]})
    cases.append({"name": name, "op": op, "args": spec, "inputs": ins, "outputs": outs, "tol": tol})


def arg(v):
    """v rounded to float32, as an operator argument (a proto float) holds it."""
    return float(np.float32(v))


# ---------------------------------------------------------------- losses

def sigmoid_xent():
    x, t, w = f32(3, 4, lo=-4, hi=4), rng.uniform(0, 1, (3, 4)).astype(np.float32), f32(3, 4, lo=0.1, hi=2)
    tb = (rng.uniform(0, 1, (3, 4)) > 0.5).astype(np.float32)
    dl = f32(3)
    for name, tgt, kw, fn in [
        ("sxent", t, {}, lambda X, T: F.binary_cross_entropy_with_logits(X, T, reduction="none")),
        # log-D trick: −(2t − 1)·log σ(x)
        ("sxent_logd", tb, {"log_D_trick": True}, lambda X, T: -(2 * T - 1) * F.logsigmoid(X)),
        # unjoined LR loss: −(t·x + (1 − t)·log(1 − σ(x)))
        ("sxent_unjoined", tb, {"unjoined_lr_loss": True}, lambda X, T: -(T * X + (1 - T) * F.logsigmoid(-X))),
    ]:
        X = t64(x, True)
        loss = fn(X, t64(tgt)).mean(-1)
        (loss * t64(dl)).sum().backward()
        case(name, "SigmoidCrossEntropyWithLogits", [x, tgt], [loss], kw)
        case(name + "_grad", "SigmoidCrossEntropyWithLogitsGradient", [dl, x, tgt], [X.grad], kw)
    X = t64(x, True)
    loss = F.binary_cross_entropy_with_logits(X, t64(t), weight=t64(w), reduction="none").mean(-1)
    (loss * t64(dl)).sum().backward()
    case("wsxent", "WeightedSigmoidCrossEntropyWithLogits", [x, t, w], [loss])
    case("wsxent_grad", "WeightedSigmoidCrossEntropyWithLogitsGradient", [dl, x, t, w], [X.grad])
    # 1-D logits: one row; large logits stay finite.
    x1 = np.array([-60, -3, 0, 2.5, 70], np.float32)
    t1 = np.array([0, 1, 0.5, 1, 0], np.float32)
    case("sxent_1d", "SigmoidCrossEntropyWithLogits", [x1, t1],
         [F.binary_cross_entropy_with_logits(t64(x1), t64(t1), reduction="none").mean(-1)])


sigmoid_xent()

with open("manifest.json", "w") as f:
    json.dump(cases, f, indent=1)
