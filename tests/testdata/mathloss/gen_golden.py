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


def case(name, op, inputs, outputs, args=None, tol=1e-5, inplace=()):
    """Records a case: inputs and outputs are lists of arrays (or tensors);
    inplace lists the (input, output) pairs that are one blob."""
    assert all(c["name"] != name for c in cases), name
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
    cases.append({"name": name, "op": op, "args": spec, "inputs": ins, "outputs": outs, "tol": tol,
                  "inplace": [list(p) for p in inplace]})


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


def ranking():
    # CosineEmbeddingCriterion: 1 − S for Y = 1, max(0, S − margin) else.
    S = f32(3, 4, lo=-1, hi=1)
    Y = np.where(rng.uniform(size=(3, 4)) > 0.5, 1, -1).astype(np.int32)
    d = f32(3, 4)
    for name, kw, margin in [("cec", {}, 0.0), ("cec_margin", {"margin": 0.2}, arg(0.2))]:
        St = t64(S, True)
        out = torch.where(torch.tensor(Y == 1), 1 - St, torch.clamp(St - margin, min=0))
        out.backward(t64(d))
        case(name, "CosineEmbeddingCriterion", [S, Y], [out], kw)
        case(name + "_grad", "CosineEmbeddingCriterionGradient", [S, Y, d], [St.grad], kw)
    # MarginRankingCriterion: torch's margin_ranking_loss.
    x1, x2, dl = f32(2, 5), f32(2, 5), f32(2, 5)
    y = np.where(rng.uniform(size=(2, 5)) > 0.5, 1, -1).astype(np.int32)
    for name, kw, margin in [("mrc", {}, 1.0), ("mrc_margin", {"margin": 0.1}, arg(0.1))]:
        X1, X2 = t64(x1, True), t64(x2, True)
        loss = F.margin_ranking_loss(X1, X2, t64(y), margin=margin, reduction="none")
        loss.backward(t64(dl))
        case(name, "MarginRankingCriterion", [x1, x2, y], [loss], kw)
        case(name + "_grad", "MarginRankingCriterionGradient", [x1, x2, y, dl], [X1.grad, X2.grad], kw)
    # PairWiseLoss: per session, the mean over pairs of differing labels of
    # softplus(−(x_hi − x_lo)).
    x = f32(7, 1)
    lab = np.array([[1], [0], [2], [1], [1], [0], [3]], np.float32)
    lengths = np.array([3, 0, 4], np.int32)
    dy = f32(3)

    def pairwise(X, lens):
        out, off = [], 0
        for n in lens:
            terms = []
            for i in range(off, off + n):
                for j in range(off, i):
                    if lab[i, 0] == lab[j, 0]:
                        continue
                    hi, lo = (i, j) if lab[i, 0] > lab[j, 0] else (j, i)
                    terms.append(F.softplus(-(X[hi, 0] - X[lo, 0])))
            out.append(torch.stack(terms).mean() if terms else torch.zeros((), dtype=torch.float64))
            off += n
        return torch.stack(out)

    X = t64(x, True)
    loss = pairwise(X, lengths)
    loss.backward(t64(dy))
    case("pairwise", "PairWiseLoss", [x, lab, lengths], [loss])
    case("pairwise_grad", "PairWiseLossGradient", [x, lab, dy, lengths], [X.grad])
    X = t64(x, True)
    loss = pairwise(X, [7])
    loss.backward(t64(dy[:1]))
    case("pairwise_one", "PairWiseLoss", [x[:, 0], lab[:, 0]], [loss])
    case("pairwise_one_grad", "PairWiseLossGradient", [x[:, 0], lab[:, 0], dy[:1]], [X.grad[:, 0]])
    # BernoulliJSD: H((p + t)/2) − (H(p) + H(t))/2, H the binary entropy.
    p, t = f32(6, lo=0.05, hi=0.95), f32(6, lo=0.05, hi=0.95)
    t[0] = 0  # H(0) = 0
    g = f32(6)

    def H(q):
        return -(q * torch.log(q) + (1 - q) * torch.log(1 - q))

    P = t64(p, True)
    T = t64(t)
    HT = torch.where(T > 0, H(T.clamp(1e-30, 1 - 1e-16)), torch.zeros_like(T))
    L = H((P + T) / 2) - (H(P) + HT) / 2
    L.backward(t64(g))
    case("jsd", "BernoulliJSD", [p, t], [L])
    case("jsd_grad", "BernoulliJSDGradient", [g, p, t], [P.grad])


def focal():
    # SoftmaxFocalLoss (Detectron): softmax over each group of num_classes
    # channels; FL = −(1 − p_t)^γ·log p_t·z, z = (1 − α or α)/max(norm, 1);
    # label −1 is ignored.
    N, A, C, H, W = 2, 2, 3, 2, 2
    x = f32(N, A * C, H, W, lo=-3, hi=3)
    lab = rng.integers(-1, C, size=(N, A, H, W)).astype(np.int32)
    norm = np.array([3.0], np.float32)
    for name, kw, scale, alpha, gamma in [("focal", {"num_classes": C}, 1.0, 0.25, 1.0),
                                          ("focal_args", {"num_classes": C, "scale": 0.5, "alpha": 0.4, "gamma": 2.0},
                                           0.5, arg(0.4), 2.0)]:
        X = t64(x, True)
        p = torch.softmax(X.reshape(N, A, C, H, W), dim=2)
        L = torch.tensor(lab.astype(np.int64))
        pt = torch.gather(p, 2, L.clamp(min=0).unsqueeze(2)).squeeze(2)
        z = torch.where(L == 0, torch.full_like(pt, (1 - alpha) / 3.0), torch.full_like(pt, alpha / 3.0))
        fl = torch.where(L >= 0, -(1 - pt) ** gamma * torch.log(pt) * z, torch.zeros_like(pt))
        loss = scale * fl.sum()
        loss.backward(t64(0.7))
        case(name, "SoftmaxFocalLoss", [x, lab, norm], [loss, p.reshape(-1)], kw)
        case(name + "_grad", "SoftmaxFocalLossGradient",
             [x, lab, norm, arr(p.reshape(-1)).astype(np.float32), np.array([0.7], np.float32)], [X.grad], kw, tol=2e-5)


ranking()
focal()


# ------------------------------------------------------ pointwise operators

def pointwise():
    """Forward cases, and gradient cases fed the inputs Caffe2's gradient
    maker gives (X, Y, dY in its order), with autograd's dX."""
    sq = math.sqrt
    specs = [
        # name, op, args, torch function, gradient inputs, input range
        ("elu", "Elu", {}, lambda x: F.elu(x), "Y dY", (-3, 3)),
        ("elu_a", "Elu", {"alpha": 0.5}, lambda x: F.elu(x, 0.5), "Y dY", (-3, 3)),
        ("selu", "Selu", {}, lambda x: F.selu(x), "Y dY", (-3, 3)),
        ("selu_args", "Selu", {"alpha": 1.5, "scale": 2.0},
         lambda x: 2.0 * torch.where(x > 0, x, 1.5 * torch.expm1(x)), "Y dY", (-3, 3)),
        ("gelu", "Gelu", {}, lambda x: F.gelu(x), "dY X", (-3, 3)),
        ("gelu_fast", "Gelu", {"fast_gelu": True}, lambda x: F.gelu(x, approximate="tanh"), "dY X", (-3, 3)),
        ("swish", "Swish", {}, lambda x: F.silu(x), "X Y dY", (-4, 4)),
        ("softplus", "Softplus", {}, lambda x: F.softplus(x), "Y dY", (-5, 5)),
        ("softsign", "Softsign", {}, lambda x: F.softsign(x), "X dY", (-3, 3)),
        ("hardsigmoid", "HardSigmoid", {}, lambda x: torch.clamp(0.2 * x + 0.5, 0, 1), "Y dY", (-4, 4)),
        ("hardsigmoid_torch", "HardSigmoid", {"alpha": arg(1 / 6)}, lambda x: F.hardsigmoid(x), "Y dY", (-5, 5)),
        ("relun", "ReluN", {}, lambda x: F.relu6(x), "Y dY", (-3, 9)),
        ("relun_2", "ReluN", {"n": 2.0}, lambda x: F.hardtanh(x, 0.0, 2.0), "Y dY", (-3, 3)),
        ("thresholdedrelu", "ThresholdedRelu", {}, lambda x: F.threshold(x, 1.0, 0.0), "Y dY", (-3, 3)),
        ("thresholdedrelu_a", "ThresholdedRelu", {"alpha": 0.25}, lambda x: F.threshold(x, 0.25, 0.0), "Y dY", (-3, 3)),
        ("logit", "Logit", {"eps": 0.01}, lambda x: torch.logit(x, 0.01), "X dY", (0.001, 0.999)),
        ("mish", "Mish", {}, lambda x: F.mish(x), "X Y dY", (-4, 4)),
        ("sign", "Sign", {}, torch.sign, None, (-3, 3)),
        ("floor", "Floor", {}, torch.floor, None, (-3, 3)),
        ("log1p", "Log1p", {}, torch.log1p, "X dY", (-0.9, 3)),
        ("sin", "Sin", {}, torch.sin, "X dY", (-4, 4)),
        ("cos", "Cos", {}, torch.cos, "X dY", (-4, 4)),
        ("tan", "Tan", {}, torch.tan, "X dY", (-1.2, 1.2)),
        ("asin", "Asin", {}, torch.asin, "X dY", (-0.95, 0.95)),
        ("acos", "Acos", {}, torch.acos, "X dY", (-0.95, 0.95)),
        ("atan", "Atan", {}, torch.atan, "X dY", (-4, 4)),
        ("sinh", "Sinh", {}, torch.sinh, "dY X", (-3, 3)),
        ("cosh", "Cosh", {}, torch.cosh, "dY X", (-3, 3)),
        ("rsqrt", "Rsqrt", {}, torch.rsqrt, "dY Y", (0.1, 4)),
        ("cbrt", "Cbrt", {}, lambda x: torch.sign(x) * torch.abs(x) ** (1 / 3), "dY Y", (-8, 8)),
        ("reciprocal", "Reciprocal", {}, torch.reciprocal, "Y dY", (0.2, 3)),
    ]
    for name, op, kw, fn, gin, (lo, hi) in specs:
        x = f32(4, 5, lo=lo, hi=hi)
        if op in ("Sign", "Floor"):
            x[0, :3] = [0, -2, 2]
        X = t64(x, True)
        y = fn(X)
        case(name, op, [x], [y], kw)
        if gin is None:
            continue
        dy = f32(4, 5)
        y.backward(t64(dy))
        feed = {"X": x, "Y": arr(y).astype(np.float32), "dY": dy}
        case(name + "_grad", op + "Gradient", [feed[k] for k in gin.split()], [X.grad], kw, tol=2e-5)
    # DOUBLE
    x = rng.uniform(-3, 3, (3, 2))
    case("elu_double", "Elu", [x], [F.elu(t64(x))], tol=1e-12)


pointwise()


# ------------------------------------------------------------- optimizers
# PyTorch has no Caffe2-compatible Adadelta (its lr multiplies after the
# ratio, with eps in other places), Wngrad, FTRL or learning-rate
# adaption: the references are Caffe2's update rules (caffe2/sgd/*.h),
# written out here in float64.

def optimizers():
    n = 6
    w, g, lr = f32(n), f32(n), np.array([-0.1], np.float32)
    h, d = f32(n, lo=0.1, hi=1), f32(n, lo=0.01, hi=0.5)
    eps, decay = 1e-5, 0.95

    def adadelta(w, g, h, d, lr, eps, decay):
        w, g, h, d = (a.astype(np.float64) for a in (w, g, h, d))
        nh = decay * h + (1 - decay) * g * g
        ng = np.sqrt(d + eps) / np.sqrt(nh + eps) * g
        return w + lr[0] * ng, nh, decay * d + (1 - decay) * ng * ng

    case("adadelta", "Adadelta", [w, h, d, g, lr], list(adadelta(w, g, h, d, lr, eps, decay)))
    case("adadelta_args", "Adadelta", [w, h, d, g, lr], list(adadelta(w, g, h, d, lr, arg(1e-3), arg(0.5))),
         {"epsilon": 1e-3, "decay": 0.5})

    # SparseAdadelta: rows 3 and 0 (of 4 rows of 3) get blocks 0 and 1.
    W, H, D = f32(4, 3), f32(4, 3, lo=0.1, hi=1), f32(4, 3, lo=0.01, hi=0.5)
    G, idx = f32(2, 3), np.array([3, 0], np.int64)
    nW, nH, nD = W.astype(np.float64), H.astype(np.float64), D.astype(np.float64)
    for i, r in enumerate(idx):
        nW[r], nH[r], nD[r] = adadelta(W[r], G[i], H[r], D[r], lr, eps, decay)
    case("sparse_adadelta", "SparseAdadelta", [W, H, D, idx, G, lr], [nW, nH, nD],
         inplace=[(0, 0), (1, 1), (2, 2)])

    # Wngrad: seq_b is a scalar.
    b = np.array([0.7], np.float32)
    b64, g64 = float(b[0]), g.astype(np.float64)
    eff = lr[0] / (b64 + eps)
    upd = eff * g64
    nb = b64 + (g64 ** 2).sum() / (b64 + eps)
    case("wngrad", "Wngrad", [w, b, g, lr], [w + upd, [nb], [eff], upd])
    case("wngrad_2", "Wngrad", [w, b, g, lr], [w + upd, [nb]])

    # SparseWngrad: seq_b grows by Σg²/seq_b (no ε).
    nW = W.astype(np.float64)
    for i, r in enumerate(idx):
        nW[r] = W[r] + lr[0] * G[i] / (b64 + eps)
    case("sparse_wngrad", "SparseWngrad", [W, b, np.array([3, 0], np.int32), G, lr],
         [nW, [b64 + (G.astype(np.float64) ** 2).sum() / b64]], inplace=[(0, 0), (1, 1)])

    # Ftrl (caffe2/sgd/ftrl_op.cc): n_z holds (n, z) per element.
    nz = np.stack([f32(n, lo=0, hi=1), f32(n)], axis=1).astype(np.float32)

    def ftrl(w, nz, g, alpha, beta, l1, l2):
        w, g = w.astype(np.float64), g.astype(np.float64)
        nn, z = nz[:, 0].astype(np.float64), nz[:, 1].astype(np.float64)
        n2 = nn + g * g
        sigma = (np.sqrt(n2) - np.sqrt(nn)) / alpha
        z2 = z + g - sigma * w
        nw = np.where(np.abs(z2) > l1, (l1 * np.sign(z2) - z2) / ((beta + np.sqrt(n2)) / alpha + l2), 0.0)
        return nw, np.stack([n2, z2], axis=1)

    w3 = w.copy()
    w3[0] = 0
    case("ftrl", "Ftrl", [w3, nz, g], list(ftrl(w3, nz, g, arg(0.005), 1.0, arg(0.001), arg(0.001))))
    kw = {"alpha": 0.1, "beta": 0.5, "lambda1": 0.3, "lambda2": 0.2}
    case("ftrl_args", "Ftrl", [w3, nz, g], list(ftrl(w3, nz, g, arg(0.1), 0.5, arg(0.3), arg(0.2))), kw)
    case("ftrl_alpha_input", "Ftrl", [w3, nz, g, np.array([0.05], np.float32)],
         list(ftrl(w3, nz, g, arg(0.05), 0.5, arg(0.3), arg(0.2))), kw)

    # LearningRateAdaption (caffe2/sgd/learning_rate_adaption_op.h).
    e = f32(n)
    g64, e64 = g.astype(np.float64), e.astype(np.float64)
    x = (g64 * e64).sum()
    cos = x / (max(np.sqrt((g64 ** 2).sum()), 1e-12) * max(np.sqrt((e64 ** 2).sum()), 1e-12))
    case("lr_adaption", "LearningRateAdaption", [lr, g, e], [[lr[0] * (1 - arg(0.01) * cos)]])
    case("lr_adaption_plain", "LearningRateAdaption", [lr, g, e], [[lr[0] - arg(0.2) * x]],
         {"lr_alpha": 0.2, "normalized_lr_adaption": False})


def yellowfin():
    """YellowFin (caffe2/sgd/yellowfin_op.{h,cc}) written out: a momentum
    step with the previous lr and mu, then the moving averages, the
    curvature range over the last curv_win_width iterations, and from
    iteration 2 on the cubic for mu and the lr it gives."""

    def step(st, grad, it, beta=0.999, width=3, eps=1e-6, nesterov=False, debias=True):
        w, m, lr, mu, curv, ga, g2a, mem = (np.asarray(a, np.float64).copy() for a in st)
        g = grad.astype(np.float64)
        nm = mu[0] * m + lr[0] * g
        nw = w - (1 + mu[0]) * nm + mu[0] * m if nesterov else w - nm
        df = 1 / (1 - beta ** it) if debias else 1.0

        def avg(old, x):
            v = beta * old + (1 - beta) * x
            return v, df * v

        nga, gdeb = avg(ga, g)
        ng2a, _ = avg(g2a, g * g)
        norm2 = max((g * g).sum(), eps)
        navg2, ndeb2 = avg(mem[1], norm2)
        navg, _ = avg(mem[0], math.sqrt(norm2))
        curv = curv.copy()
        curv[(it - 1) % width] = np.float32(math.log(norm2))
        valid = curv[:min(width, it)]
        minavg, mindeb = avg(mem[2], valid.min())
        maxavg, maxdeb = avg(mem[3], valid.max())
        mindeb, maxdeb = max(math.exp(mindeb), eps), max(math.exp(maxdeb), eps)
        variance = max(ndeb2 - (gdeb * gdeb).sum(), eps)
        davg, ddeb = avg(mem[4], navg / navg2)
        nlr, nmu = lr.copy(), mu.copy()
        if it > 1:
            ratio = math.sqrt(maxdeb / mindeb)
            limit = (ratio - 1) / (ratio + 1)
            p = (ddeb * mindeb) ** 2 / (2 * variance)
            w3 = (-math.sqrt(p * p + 4 / 27 * p ** 3) - p) / 2
            wr = math.copysign(abs(w3) ** (1 / 3), w3)
            root = wr - p / 3 / wr + 1
            newmu = max(root * root, limit * limit)
            newlr = (1 - math.sqrt(newmu)) ** 2 / mindeb
            nmu = np.array([beta * mu[0] + (1 - beta) * newmu])
            nlr = np.array([beta * lr[0] + (1 - beta) * newlr])
        return [nw, nm, nlr, nmu, curv, nga, ng2a, np.array([navg, navg2, minavg, maxavg, davg])]

    for name, kw, opts in [("yellowfin", {"curv_win_width": 3}, {}),
                           ("yellowfin_nesterov", {"curv_win_width": 3, "nesterov": 1, "beta": 0.9, "zero_debias": False},
                            {"nesterov": True, "beta": arg(0.9), "debias": False})]:
        st = [f32(2, 3), np.zeros((2, 3), np.float32), np.array([0.1], np.float32), np.array([0.2], np.float32),
              np.zeros(3, np.float32), np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32), np.zeros(5, np.float32)]
        for it in range(1, 5):
            grad = f32(2, 3)
            out = step(st, grad, it, **opts)
            case(f"{name}_{it}", "YellowFin", st + [grad, np.array([it], np.int64)], out, kw, tol=1e-4,
                 inplace=[(k, k) for k in range(8)])
            st = [np.asarray(a, np.float64).astype(np.float32) for a in out]


optimizers()
yellowfin()


# ------------------------------------------------ row-wise and statistics

def rowwise_stats():
    x, y, dz = f32(3, 4), f32(3, 4), f32(3)
    X, Y = t64(x, True), t64(y, True)
    z = (X * Y).sum(1)
    z.backward(t64(dz))
    case("dot", "DotProduct", [x, y], [z])
    case("dot_grad", "DotProductGradient", [x, y, dz], [X.grad, Y.grad])
    x1 = f32(5)
    case("dot_1d", "DotProduct", [x1, x1], [x1.astype(np.float64) ** 2])
    X, Y = t64(x, True), t64(y, True)
    z = F.cosine_similarity(X, Y, dim=1)
    z.backward(t64(dz))
    case("cosine", "CosineSimilarity", [x, y], [z])
    case("cosine_grad", "CosineSimilarityGradient", [x, y, dz], [X.grad, Y.grad])
    # SquareRootDivide: row i divided by √scale[i]; a 0 scale leaves it.
    data = f32(4, 2, 3)
    for name, scale in [("srd", np.array([4, 0, 2.25, 9], np.float32)), ("srd_int", np.array([4, 0, 2, 9], np.int32)),
                        ("srd_int64", np.array([1, 16, 0, 3], np.int64))]:
        m = np.where(scale == 0, 1.0, 1 / np.sqrt(np.maximum(scale.astype(np.float64), 1e-300)))
        case(name, "SquareRootDivide", [data, scale], [data * m[:, None, None]])
    # Moments: torch.var_mean (population variance).
    x = f32(2, 3, 4)
    for name, kw, dims, keep in [("moments", {}, (0, 1, 2), True),
                                 ("moments_axes", {"axes": [0, 2], "keepdims": False}, (0, 2), False),
                                 ("moments_neg", {"axes": [-1]}, (2,), True)]:
        X = t64(x, True)
        var, mean = torch.var_mean(X, dims, unbiased=False, keepdim=keep)
        dm, dv = f32(*mean.shape), f32(*var.shape)
        (mean * t64(dm)).sum().add((var * t64(dv)).sum()).backward()
        case(name, "Moments", [x], [mean, var], kw)
        case(name + "_grad", "MomentsGradient", [dm, dv, x, arr(mean).astype(np.float32)], [X.grad], kw)
    # BatchMoments: per-channel mean and mean square.
    x = f32(2, 3, 2, 2)
    for name, kw, xin, dims in [("bmoments", {}, x, (0, 2, 3)),
                                ("bmoments_nhwc", {"order": "NHWC"}, np.ascontiguousarray(x.transpose(0, 2, 3, 1)), (0, 1, 2))]:
        X = t64(xin, True)
        mu, ms = X.mean(dims), (X * X).mean(dims)
        dmu, dms = f32(3), f32(3)
        ((mu * t64(dmu)).sum() + (ms * t64(dms)).sum()).backward()
        case(name, "BatchMoments", [xin], [mu, ms], kw)
        case(name + "_grad", "BatchMomentsGradient", [dmu, dms, xin], [X.grad], kw)
    # LpNorm: Σ|x| or Σx² (no root), optionally averaged.
    x = f32(3, 4)
    dz = f32(1)
    for name, kw, fn in [("lp2", {}, lambda X: (X * X).sum()),
                         ("lp1", {"p": 1}, lambda X: X.abs().sum()),
                         ("lp1_avg", {"p": 1, "average": True}, lambda X: X.abs().mean()),
                         ("lp2_avg", {"average": True}, lambda X: (X * X).mean())]:
        X = t64(x, True)
        z = fn(X).reshape(1)
        z.backward(t64(dz))
        case(name, "LpNorm", [x], [z], kw)
        case(name + "_grad", "LpNormGradient", [x, dz], [X.grad], kw)


def transforms():
    # Mod: np.fmod keeps the dividend's sign, np.mod the divisor's.
    x = rng.integers(-50, 50, size=(3, 5)).astype(np.int32)
    case("mod", "Mod", [x], [np.fmod(x, 7)], {"divisor": 7})
    case("mod_follow", "Mod", [x.astype(np.int64)], [np.mod(x.astype(np.int64), -6)], {"divisor": -6, "sign_follow_divisor": True})
    case("mod_follow_pos", "Mod", [x], [np.mod(x, 4)], {"divisor": 4, "sign_follow_divisor": True})
    x = f32(2, 3)
    case("negate_gradient", "NegateGradient", [x], [x])
    # BatchBoxCox (Caffe2's definition, eps 1e-6 on the shifted data).
    data = f32(4, 3, lo=-0.5, hi=3)
    l1 = np.array([0, 0.5, -1.5], np.float32)
    l2 = np.array([0.5, 1, 0.25], np.float32)
    b = np.maximum(data.astype(np.float64) + l2, 1e-6)
    with np.errstate(divide="ignore"):
        out = np.where(l1 == 0, np.log(b), (b ** l1.astype(np.float64) - 1) / np.where(l1 == 0, 1, l1))
    case("boxcox", "BatchBoxCox", [data, l1, l2], [out], tol=2e-5)
    # PiecewiseLinearTransform: piece k covers (b[k], b[k+1]]; values
    # outside the bounds take the function's value at the nearer bound.
    bounds = [[0.0, 0.3, 0.6, 1.0], [-1.0, 0.0, 1.0, 2.0]]
    slopes = [[1.0, 2.0, 0.5], [0.2, -1.0, 3.0]]
    inters = [[0.0, -0.3, 0.6], [1.0, 0.5, -2.0]]

    def plt(x, b, s, c):
        b, s, c = np.float32(b).astype(np.float64), np.float32(s).astype(np.float64), np.float32(c).astype(np.float64)
        y = np.empty_like(x, dtype=np.float64)
        for i, v in enumerate(x):
            if v <= b[0]:
                y[i] = s[0] * b[0] + c[0]
            elif v >= b[-1]:
                y[i] = s[-1] * b[-1] + c[-1]
            else:
                k = max(k for k in range(len(s)) if b[k] < v)
                y[i] = s[k] * v + c[k]
        return y

    x = f32(6, 2, lo=-1.5, hi=2.5)
    x[0] = [0.3, 1.0]  # on inner bounds
    want = np.stack([plt(x[:, j], bounds[j], slopes[j], inters[j]) for j in range(2)], axis=1)
    flat = lambda v: [float(np.float32(e)) for row in v for e in row]
    case("plt", "PiecewiseLinearTransform", [x], [want],
         {"bounds": flat(bounds), "slopes": flat(slopes), "intercepts": flat(inters)})
    case("plt_inputs", "PiecewiseLinearTransform",
         [x, np.float32(bounds).ravel(), np.float32(slopes).ravel(), np.float32(inters).ravel()], [want])
    p = f32(5, 2, lo=0, hi=1)
    yb = plt(p[:, 1], bounds[0], slopes[0], inters[0])
    case("plt_binary", "PiecewiseLinearTransform", [p], [np.stack([1 - yb, yb], axis=1)],
         {"bounds": flat(bounds[:1]), "slopes": flat(slopes[:1]), "intercepts": flat(inters[:1]), "binary": True})
    case("plt_binary_1d", "PiecewiseLinearTransform", [p[:, 0]], [plt(p[:, 0], bounds[0], slopes[0], inters[0])],
         {"bounds": flat(bounds[:1]), "slopes": flat(slopes[:1]), "intercepts": flat(inters[:1]), "binary": True})
    # SinusoidPositionEncoding: sin(p/α^(k/E)) for even k, cos for odd;
    # every column of row i encodes positions[i, 0].
    pos = np.array([[0, 3, 9], [7, 1, 1], [120, 5, 2]], np.int64)
    for name, kw, E, alpha, amp in [("sinusoid", {"embedding_size": 6}, 6, 10000.0, 1.0),
                                    ("sinusoid_args", {"embedding_size": 5, "alpha": 100.0, "amplitude": 2.0}, 5, 100.0, 2.0)]:
        k = np.arange(E)
        ang = pos[:, :1, None].astype(np.float64) / alpha ** (k / E)
        enc = amp * np.where(k % 2 == 0, np.sin(ang), np.cos(ang))
        case(name, "SinusoidPositionEncoding", [pos.astype(np.int32) if E == 5 else pos],
             [np.broadcast_to(enc, (3, 3, E))], kw, tol=1e-4)
    # ClipTensorByScaling
    x = f32(2, 3)
    case("clip_scaling", "ClipTensorByScaling", [x, np.array([5], np.float32)], [x * (2 / 5)], {"threshold": 2.0})
    case("clip_scaling_under", "ClipTensorByScaling", [x, np.array([1.5], np.float32)], [x], {"threshold": 2.0})
    case("clip_scaling_input", "ClipTensorByScaling", [x, np.array([5], np.float32), np.array([0.5], np.float32)],
         [x * (1 / 5)], {"threshold": 2.0})


rowwise_stats()


# -------------------------------------------------- per-feature layers

def layers():
    # ElementwiseLinear: X·a + b over the rows of X flattened at axis.
    for name, kw, shape, d in [("elin", {}, (3, 4), 4), ("elin_axis", {"axis": 2}, (2, 2, 3), 3)]:
        x, a, b = f32(*shape), f32(d), f32(d)
        X, A, B = t64(x, True), t64(a, True), t64(b, True)
        y = X * A + B
        dy = f32(*shape)
        y.backward(t64(dy))
        case(name, "ElementwiseLinear", [x, a, b], [y], kw)
        case(name + "_grad", "ElementwiseLinearGradient", [dy, x, a], [X.grad, A.grad, B.grad], kw)
    # AffineChannel: X·scale[c] + bias[c].
    x, sc, bi = f32(2, 3, 2, 2), f32(3), f32(3)
    for name, kw, xin, view in [("affine", {}, x, (1, 3, 1, 1)),
                                ("affine_nhwc", {"order": "NHWC"}, np.ascontiguousarray(x.transpose(0, 2, 3, 1)), (1, 1, 1, 3))]:
        X, S, B = t64(xin, True), t64(sc, True), t64(bi, True)
        y = X * S.reshape(view) + B.reshape(view)
        dy = f32(*xin.shape)
        y.backward(t64(dy))
        case(name, "AffineChannel", [xin, sc, bi], [y], kw)
        case(name + "_grad", "AffineChannelGradient", [dy, sc], [X.grad], kw)
        case(name + "_grad_learnable", "AffineChannelGradient", [dy, xin, sc], [X.grad, S.grad, B.grad],
             dict(kw, is_learnable=True))
    # RMSNorm: x·(mean(x²) + eps)^-½·gamma + beta over the rows at axis.
    for name, kw, shape, axis, eps in [("rmsnorm", {}, (3, 4), 1, 0.0),
                                       ("rmsnorm_axis", {"axis": 2, "eps": 0.1}, (2, 2, 3), 2, arg(0.1))]:
        x = f32(*shape)
        d = int(np.prod(shape[axis:]))
        g, b = f32(d), f32(d)
        X, G, B = t64(x, True), t64(g, True), t64(b, True)
        flat = X.reshape(-1, d)
        rr = torch.rsqrt((flat * flat).mean(1) + eps)
        y = (flat * rr[:, None] * G + B).reshape(shape)
        dy = f32(*shape)
        y.backward(t64(dy))
        case(name, "RMSNorm", [x, g, b], [y, rr.reshape(shape[:axis])], kw)
        case(name + "_grad", "RMSNormGradient", [dy, x, g, arr(rr).astype(np.float32).reshape(shape[:axis])],
             [X.grad, G.grad, B.grad], kw)
    # Glu: torch's glu.
    x = f32(2, 4, 3)
    case("glu_dim1", "Glu", [x], [F.glu(t64(x), 1)], {"dim": 1})
    x = f32(3, 6)
    case("glu_last", "Glu", [x], [F.glu(t64(x), -1)])


layers()
transforms()

with open("manifest.json", "w") as f:
    json.dump(cases, f, indent=1)
