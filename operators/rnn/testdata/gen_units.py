"""Golden values for LSTMUnit and GRUUnit from PyTorch's LSTMCell and GRUCell.

The cells get identity input weights, zero biases and zero recurrent
weights, so that their input is the gate pre-activations themselves.
PyTorch orders the LSTM gates i, f, g, o and Caffe2 i, f, o, g: the
Caffe2-ordered gates are permuted into PyTorch's order on the way in and
their gradients back on the way out, so the golden file checks Caffe2's
order. GRU gates are (reset, update, new) in both. Sequences whose length
is at most the timestep keep their state (Caffe2's drop_states=false); the
loss is sum(h^2)/2 + sum(c^2)/2.

Run from the package directory: python3 testdata/gen_units.py
"""
import json

import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)
N, D, T = 4, 3, 2
lengths = [3, 2, 5, 1]
valid = torch.tensor([T < l for l in lengths]).reshape(N, 1)
forget_bias = 0.5


def lstm():
    x = rng.normal(size=(N, 4 * D)).astype(np.float32)
    h0 = rng.normal(size=(N, D)).astype(np.float32)
    c0 = rng.normal(size=(N, D)).astype(np.float32)
    cell = torch.nn.LSTMCell(4 * D, D)
    with torch.no_grad():
        cell.weight_ih.copy_(torch.eye(4 * D))
        cell.weight_hh.zero_()
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
    xt = torch.tensor(x, requires_grad=True)
    ht = torch.tensor(h0, requires_grad=True)
    ct = torch.tensor(c0, requires_grad=True)
    i, f, o, g = xt[:, :D], xt[:, D:2 * D], xt[:, 2 * D:3 * D], xt[:, 3 * D:]
    h, c = cell(torch.cat([i, f + forget_bias, g, o], dim=1), (ht, ct))
    h = torch.where(valid, h, ht)
    c = torch.where(valid, c, ct)
    loss = (h * h).sum() / 2 + (c * c).sum() / 2
    loss.backward()
    return {
        "gates": x.ravel().tolist(), "h_prev": h0.ravel().tolist(), "c_prev": c0.ravel().tolist(),
        "h": h.detach().numpy().ravel().tolist(), "c": c.detach().numpy().ravel().tolist(),
        "gates_grad": xt.grad.numpy().ravel().tolist(), "h_prev_grad": ht.grad.numpy().ravel().tolist(),
        "c_prev_grad": ct.grad.numpy().ravel().tolist(),
    }


def gru():
    x = rng.normal(size=(N, 3 * D)).astype(np.float32)
    h0 = rng.normal(size=(N, D)).astype(np.float32)
    cell = torch.nn.GRUCell(3 * D, D)
    with torch.no_grad():
        cell.weight_ih.copy_(torch.eye(3 * D))
        cell.weight_hh.zero_()
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
    xt = torch.tensor(x, requires_grad=True)
    ht = torch.tensor(h0, requires_grad=True)
    h = cell(xt, ht)
    h = torch.where(valid, h, ht)
    loss = (h * h).sum() / 2
    loss.backward()
    return {
        "gates": x.ravel().tolist(), "h_prev": h0.ravel().tolist(),
        "h": h.detach().numpy().ravel().tolist(),
        "gates_grad": xt.grad.numpy().ravel().tolist(), "h_prev_grad": ht.grad.numpy().ravel().tolist(),
    }


out = {"n": N, "d": D, "t": T, "lengths": lengths, "forget_bias": forget_bias, "lstm": lstm(), "gru": gru(),
       "torch": torch.__version__}
with open("testdata/units.json", "w") as fh:
    json.dump(out, fh, indent=1)
