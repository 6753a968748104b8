#!/usr/bin/env python3
"""Writes the PyTorch golden files of the crayon style-transfer model test.

Run from this folder with `python3 gen_style.py` (PyTorch 1.13, CPU). Not
run by CI: the .npy files it writes into style/ are committed.

It reads the crayon model that examples/styletransfer ships (in MODELS:
crayon/init_net.pb and predict_net.pb, which the styles share) with a small
protobuf wire-format decoder (Caffe2's Python package is not needed), runs
the predict net's operators with PyTorch functions in float64 on a
synthetic 48×64 BGRA image, without the preprocessing noise, and saves the
input image, the float planes the deprocessing operator receives (rounded
to float32) and the final BGRA pixels.
"""
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

# MODELS is the style-transfer example's model folder, from this one.
MODELS = os.path.join("..", "..", "..", "examples", "styletransfer", "models")


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """Yields (field number, wire type, value) of a protobuf message."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def argument(b):
    a = {"floats": [], "ints": []}
    for num, wt, v in fields(b):
        if num == 1:
            a["name"] = v.decode()
        elif num == 2:
            a["f"] = struct.unpack("<f", v)[0]
        elif num == 3:
            a["i"] = signed(v)
        elif num == 4:
            a["s"] = v.decode()
        elif num == 5:
            a["floats"] += list(struct.unpack("<%df" % (len(v) // 4), v))
        elif num == 6:
            if wt == 2:
                j = 0
                while j < len(v):
                    x, j = varint(v, j)
                    a["ints"].append(signed(x))
            else:
                a["ints"].append(signed(v))
    return a


def operator(b):
    op = {"input": [], "output": [], "args": {}}
    for num, _, v in fields(b):
        if num == 1:
            op["input"].append(v.decode())
        elif num == 2:
            op["output"].append(v.decode())
        elif num == 4:
            op["type"] = v.decode()
        elif num == 5:
            a = argument(v)
            op["args"][a["name"]] = a
    return op


def net(path):
    with open(path, "rb") as f:
        return [operator(v) for num, _, v in fields(f.read()) if num == 2]


def arg(op, name, default=None):
    a = op["args"].get(name)
    if a is None:
        return default
    for k in ("i", "f", "s"):
        if k in a:
            return a[k]
    return a["ints"] or a["floats"]


def pair(op, name):
    """(h, w) of a conv-style argument given as name or name_h/name_w."""
    if name in op["args"]:
        return arg(op, name), arg(op, name)
    return arg(op, name + "_h", 0 if name == "pad" else 1), arg(op, name + "_w", 0 if name == "pad" else 1)


def main():
    blobs = {}
    for op in net(os.path.join(MODELS, "crayon", "init_net.pb")):
        if op["type"] == "GivenTensorFill":
            shape = arg(op, "shape")
            blobs[op["output"][0]] = np.array(op["args"]["values"]["floats"], dtype=np.float32).reshape(shape)

    h, w = 48, 64
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.zeros((1, h, w, 4), dtype=np.uint8)
    img[0, :, :, 0] = (xx * 4 + yy) % 256
    img[0, :, :, 1] = (yy * 5 + (xx // 8) * 40) % 256
    img[0, :, :, 2] = ((xx + yy) * 3) % 256
    img[0, :, :, 3] = (xx * yy) % 256  # alpha, dropped by the preprocessing
    blobs["data_int8_bgra"] = img

    mean = blobs["mean"]
    out = None
    for op in net(os.path.join(MODELS, "predict_net.pb")):
        t, ins = op["type"], [blobs[i] for i in op["input"]]
        if t == "PackedInt8BGRANHWCToNCHWCStylizerPreprocess":
            planes = ins[0][..., :3].astype(np.float32).transpose(0, 3, 1, 2) - mean.reshape(1, 3, 1, 1)
            y = torch.tensor(planes.astype(np.float64))
        elif t == "AveragePool":
            y = F.avg_pool2d(ins[0], pair(op, "kernel"), pair(op, "stride"), pair(op, "pad"))
        elif t == "PadImage":
            assert arg(op, "mode") == "reflect"
            y = F.pad(ins[0], (arg(op, "pad_l"), arg(op, "pad_r"), arg(op, "pad_t"), arg(op, "pad_b")), mode="reflect")
        elif t == "Conv":
            y = F.conv2d(ins[0], torch.tensor(ins[1].astype(np.float64)), torch.tensor(ins[2].astype(np.float64)),
                         pair(op, "stride"), pair(op, "pad"))
        elif t == "ConvTranspose":
            y = F.conv_transpose2d(ins[0], torch.tensor(ins[1].astype(np.float64)), torch.tensor(ins[2].astype(np.float64)),
                                   pair(op, "stride"), pair(op, "pad"), output_padding=arg(op, "adj", 0))
        elif t == "PRelu":
            y = F.prelu(ins[0], torch.tensor(ins[1].astype(np.float64)))
        elif t == "BRGNCHWCToPackedInt8BGRAStylizerDeprocess":
            planes = ins[0].numpy().astype(np.float32)
            v = planes + mean.reshape(1, 3, 1, 1)
            px = np.floor(np.clip(v, 0, 255)).astype(np.uint8).transpose(0, 2, 3, 1)
            y = np.concatenate([px, np.full(px.shape[:3] + (1,), 255, np.uint8)], axis=3)
        else:
            raise ValueError("operator " + t)
        blobs[op["output"][0]] = y
        out = op

    os.makedirs("style", exist_ok=True)
    np.save("style/input.npy", img)
    np.save("style/planes.npy", blobs[out["input"][0]].numpy().astype(np.float32))
    np.save("style/output.npy", blobs[out["output"][0]])


if __name__ == "__main__":
    main()
