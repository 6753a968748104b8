#!/usr/bin/env python3
"""Writes the reference outputs the Caffe import tests compare with.

Run from this folder with `python3 gen_reference.py` (NumPy only: Debian's
python3-numpy; no Caffe, Caffe2 or protobuf package). Not run by CI: what it
writes is committed.

It computes Caffe's forward pass in NumPy, in float64, layer by layer,
following Caffe's definitions of each layer (output sizes rounded up in
pooling, average pooling dividing by the window clipped to the padded input,
softmax along one axis, ...), independently of caffe2go: the weights are read
from the .caffemodel with the small protobuf wire decoder below, not with
caffe2go's caffe.proto.

  lenet/      Caffe's LeNet (lenet.prototxt, lenet_iter_10000.caffemodel):
              reference/<layer>.<top>.npy for the first 4 MNIST test images
              (inputs scaled by 1/256 as lenet_train_test.prototxt says), and
              the whole test set's accuracy printed (Caffe reports 0.9914).
  layers/     a made-up net of every layer type the importer converts, in the
              current format: layers.prototxt and layers.caffemodel (random
              weights) are written here too, with reference/*.npy.
  v1/         a small net in the V1 format (V1LayerParameter, input_dim, blob
              shapes in the legacy num/channels/height/width form).
  transform/  a Data layer with mean subtraction, scaling and a centre crop.

Reference files hold float32 (float64 results rounded once); inputs are
stored as float32 (labels as int32) and the reference is computed from them.
"""
import gzip
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MNIST = os.path.join(HERE, "..", "..", "data", "mnist")

# ---------------------------------------------------------------------------
# Protobuf wire format: just enough to read and write Caffe's NetParameter.


def read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """Yields (field number, wire type, value) of a message's bytes; value
    is an int for varints and bytes for the other wire types."""
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def decode_blob(b):
    """BlobProto -> float64 array with its shape (shape, or the legacy
    num/channels/height/width)."""
    data, dims, legacy = [], None, {}
    for num, wt, v in fields(b):
        if num == 5:  # data, float
            data.extend(struct.unpack("<%df" % (len(v) // 4), v) if wt == 2 else struct.unpack("<f", v))
        elif num == 8:  # double_data
            data.extend(struct.unpack("<%dd" % (len(v) // 8), v) if wt == 2 else struct.unpack("<d", v))
        elif num == 7:  # shape: BlobShape
            dims = []
            for n2, wt2, v2 in fields(v):
                if n2 == 1 and wt2 == 2:
                    j = 0
                    while j < len(v2):
                        d, j = read_varint(v2, j)
                        dims.append(d)
                elif n2 == 1:
                    dims.append(v2)
        elif num in (1, 2, 3, 4):
            legacy[num] = v
    if dims is None:
        dims = [legacy.get(k, 0) for k in (1, 2, 3, 4)]
    return np.array(data, dtype=np.float64).reshape(dims)


def read_caffemodel(path):
    """{layer name: [blobs]} of a caffemodel, current (field 100) or V1
    (field 2) layers."""
    with open(path, "rb") as f:
        b = f.read()
    out = {}
    for num, _, v in fields(b):
        if num not in (100, 2):
            continue
        name_field, blob_field = (1, 7) if num == 100 else (4, 6)
        name, blobs = None, []
        for n2, _, v2 in fields(v):
            if n2 == name_field:
                name = v2.decode()
            elif n2 == blob_field:
                blobs.append(decode_blob(v2))
        out[name] = blobs
    return out


def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def field_bytes(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def encode_blob(a, legacy=False):
    """BlobProto of float32 values: with shape (field 7), or with the legacy
    dimensions (the shape left-padded with ones to 4-D)."""
    a = np.asarray(a, dtype=np.float32)
    if legacy:
        dims = [1] * (4 - a.ndim) + list(a.shape)
        head = b"".join(field_varint(n, d) for n, d in zip((1, 2, 3, 4), dims))
    else:
        head = field_bytes(7, field_bytes(1, b"".join(varint(d) for d in a.shape)))
    return head + field_bytes(5, a.tobytes())


def write_caffemodel(path, name, layers, v1_types=None):
    """layers: [(layer name, caffe type, [arrays])]; v1_types maps the type
    to its V1 enum value for the V1 format."""
    out = field_bytes(1, name.encode())
    for lname, ltype, blobs in layers:
        if v1_types is None:
            msg = field_bytes(1, lname.encode()) + field_bytes(2, ltype.encode())
            msg += b"".join(field_bytes(7, encode_blob(x)) for x in blobs)
            out += field_bytes(100, msg)
        else:
            msg = field_bytes(4, lname.encode()) + field_varint(5, v1_types[ltype])
            msg += b"".join(field_bytes(6, encode_blob(x, legacy=True)) for x in blobs)
            out += field_bytes(2, msg)
    with open(path, "wb") as f:
        f.write(out)


# ---------------------------------------------------------------------------
# Caffe's layers in NumPy (float64), NCHW.


def conv(x, w, b, stride, pad, dil, group):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh = (h + 2 * pad[0] - (dil[0] * (kh - 1) + 1)) // stride[0] + 1
    ow = (wd + 2 * pad[1] - (dil[1] * (kw - 1) + 1)) // stride[1] + 1
    xp = np.zeros((n, c, h + 2 * pad[0], wd + 2 * pad[1]))
    xp[:, :, pad[0]:pad[0] + h, pad[1]:pad[1] + wd] = x
    y = np.zeros((n, o, oh, ow))
    og = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y


def deconv(x, w, b, stride, pad, group):
    """Caffe's Deconvolution: weights [C_in, C_out/group, kh, kw]; output
    stride*(in-1) + kernel - 2*pad."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    fh, fw = stride[0] * (h - 1) + kh, stride[1] * (wd - 1) + kw
    full = np.zeros((n, og * group, fh, fw))
    cg = c // group
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg]
        ws = w[g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                full[:, g * og:(g + 1) * og, i:i + stride[0] * (h - 1) + 1:stride[0],
                     j:j + stride[1] * (wd - 1) + 1:stride[1]] += np.einsum("nchw,co->nohw", xs, ws[:, :, i, j])
    y = full[:, :, pad[0]:fh - pad[0], pad[1]:fw - pad[1]]
    if b is not None:
        y = y + b.reshape(1, -1, 1, 1)
    return y


def pool(x, method, kernel, stride, pad, global_pool=False, round_mode="CEIL"):
    n, c, h, w = x.shape
    if global_pool:
        kernel, stride, pad = (h, w), (1, 1), (0, 0)
    kh, kw = kernel
    sh, sw = stride
    ph, pw = pad
    rnd = np.ceil if round_mode == "CEIL" else np.floor
    oh = int(rnd((h + 2 * ph - kh) / sh)) + 1
    ow = int(rnd((w + 2 * pw - kw) / sw)) + 1
    if ph or pw:
        if (oh - 1) * sh >= h + ph:
            oh -= 1
        if (ow - 1) * sw >= w + pw:
            ow -= 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * sh - ph, j * sw - pw
            if method == "MAX":
                he, we = min(hs + kh, h), min(ws + kw, w)
                hs, ws = max(hs, 0), max(ws, 0)
                y[:, :, i, j] = x[:, :, hs:he, ws:we].max(axis=(2, 3))
            else:
                he, we = min(hs + kh, h + ph), min(ws + kw, w + pw)
                size = (he - hs) * (we - ws)
                hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
                y[:, :, i, j] = x[:, :, hs:he, ws:we].sum(axis=(2, 3)) / size
    return y


def inner_product(x, w, b, axis=1, transpose=False):
    lead = x.shape[:axis]
    x2 = x.reshape(int(np.prod(lead)), -1)
    y = x2 @ (w if transpose else w.T)
    if b is not None:
        y = y + b
    return y.reshape(lead + (y.shape[1],))


def lrn_across(x, size, alpha, beta, k):
    c = x.shape[1]
    pre = (size - 1) // 2
    sq = x * x
    s = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(ch - pre, 0), min(ch - pre + size, c)
        s[:, ch] = sq[:, lo:hi].sum(axis=1)
    return x * (k + alpha / size * s) ** -beta


def lrn_within(x, size, alpha, beta):
    # Caffe builds it from layers: square, average pooling (pad (size-1)/2,
    # stride 1), power (shift 1, scale alpha, power -beta), product.
    p = (size - 1) // 2
    avg = pool(x * x, "AVE", (size, size), (1, 1), (p, p))
    return x * (1 + alpha * avg) ** -beta


def batch_norm(x, mean, var, factor, eps=1e-5):
    f = 0.0 if factor[0] == 0 else 1.0 / factor[0]
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return (x - (f * mean).reshape(sh)) / np.sqrt((f * var).reshape(sh) + eps)


def scale(x, s, b=None, axis=1):
    sh = (1,) * axis + s.shape + (1,) * (x.ndim - axis - s.ndim)
    y = x * s.reshape(sh)
    if b is not None:
        y = y + b.reshape(sh)
    return y


def softmax(x, axis=1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_loss(x, label, axis=1):
    p = softmax(x, axis)
    n = int(np.prod(x.shape[:axis]))
    pl = np.take_along_axis(p.reshape(n, x.shape[axis], -1), label.reshape(n, 1, -1).astype(np.int64), axis=1)
    return np.array(-np.log(np.maximum(pl, np.finfo(np.float32).tiny)).sum() / pl.size)


def accuracy(x, label, top_k=1):
    # Caffe counts a sample correct when fewer than top_k other classes
    # score at least as high as the true class.
    n = x.shape[0]
    x2 = x.reshape(n, -1)
    lab = label.reshape(n).astype(np.int64)
    true = x2[np.arange(n), lab]
    better = (x2 >= true[:, None]).sum(axis=1) - 1
    return np.array((better < top_k).mean())


def power(x, p, s, shift):
    return (shift + s * x) ** p


# ---------------------------------------------------------------------------
# Nets.


def save(folder, name, a, dtype=np.float32):
    os.makedirs(os.path.join(HERE, folder, "reference"), exist_ok=True)
    np.save(os.path.join(HERE, folder, "reference", name + ".npy"), np.asarray(a).astype(dtype))


def read_idx(name):
    with gzip.open(os.path.join(MNIST, name), "rb") as f:
        b = f.read()
    ndim = b[3]
    dims = struct.unpack(">%dI" % ndim, b[4:4 + 4 * ndim])
    return np.frombuffer(b, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def lenet_forward(wts, x, keep=None):
    """LeNet (lenet.prototxt); keep collects every layer's tops."""
    out = {}
    conv1 = conv(x, *wts["conv1"], (1, 1), (0, 0), (1, 1), 1)
    pool1 = pool(conv1, "MAX", (2, 2), (2, 2), (0, 0))
    conv2 = conv(pool1, *wts["conv2"], (1, 1), (0, 0), (1, 1), 1)
    pool2 = pool(conv2, "MAX", (2, 2), (2, 2), (0, 0))
    ip1 = inner_product(pool2, *wts["ip1"])
    relu1 = np.maximum(ip1, 0)
    ip2 = inner_product(relu1, *wts["ip2"])
    prob = softmax(ip2)
    out.update({"conv1.conv1": conv1, "pool1.pool1": pool1, "conv2.conv2": conv2, "pool2.pool2": pool2,
                "ip1.ip1": ip1, "relu1.ip1": relu1, "ip2.ip2": ip2, "prob.prob": prob})
    return out


def lenet():
    wts = read_caffemodel(os.path.join(HERE, "lenet", "lenet_iter_10000.caffemodel"))
    wts = {k: v for k, v in wts.items() if v}
    images = read_idx("t10k-images-idx3-ubyte.gz").astype(np.float32)
    labels = read_idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)
    x = (images * np.float32(0.00390625)).reshape(-1, 1, 28, 28)
    first = lenet_forward(wts, x[:4].astype(np.float64))
    save("lenet", "input.data", x[:4])
    save("lenet", "input.label", labels[:4], np.int32)
    for k, v in first.items():
        save("lenet", k, v)
    correct, first2000, loss = 0, 0, 0.0
    for i in range(0, len(x), 1000):
        prob = lenet_forward(wts, x[i:i + 1000].astype(np.float64))["prob.prob"]
        hits = prob.argmax(axis=1) == labels[i:i + 1000]
        correct += int(hits.sum())
        if i < 2000:
            first2000 += int(hits.sum())
        loss += -np.log(prob[np.arange(len(prob)), labels[i:i + 1000]]).sum()
    print("lenet: %d of %d test images correct (%.2f%%), %d of the first 2000; mean SoftmaxWithLoss %.6f"
          % (correct, len(x), 100.0 * correct / len(x), first2000, loss / len(x)))


rng = np.random.default_rng(20250607)


def rand(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32).astype(np.float64)


LAYERS_PROTOTXT = """name: "layers"
layer { name: "input" type: "Input" top: "data" top: "label"
  input_param { shape { dim: 2 dim: 3 dim: 11 dim: 11 } shape { dim: 2 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param { num_output: 6 kernel_size: 3 pad: 1 stride: 2 } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
layer { name: "sc1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" relu_param { negative_slope: 0.1 } }
layer { name: "pool_max" type: "Pooling" bottom: "conv1" top: "pool_max"
  pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "pool_ave0" type: "Pooling" bottom: "conv1" top: "pool_ave0"
  pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
layer { name: "pool_ave1" type: "Pooling" bottom: "conv1" top: "pool_ave1"
  pooling_param { pool: AVE kernel_size: 3 stride: 2 pad: 1 } }
layer { name: "pool_ave2" type: "Pooling" bottom: "conv1" top: "pool_ave2"
  pooling_param { pool: AVE kernel_size: 3 stride: 1 pad: 1 } }
layer { name: "pool_floor" type: "Pooling" bottom: "conv1" top: "pool_floor"
  pooling_param { pool: MAX kernel_h: 3 kernel_w: 2 stride: 2 pad: 1 round_mode: FLOOR } }
layer { name: "pool_glob" type: "Pooling" bottom: "conv1" top: "pool_glob"
  pooling_param { pool: AVE global_pooling: true } }
layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
  convolution_param { num_output: 4 kernel_size: 3 pad: 2 dilation: 2 group: 2 bias_term: false } }
layer { name: "deconv" type: "Deconvolution" bottom: "conv2" top: "deconv"
  convolution_param { num_output: 4 kernel_size: 4 stride: 2 pad: 1 group: 2 } }
layer { name: "prelu" type: "PReLU" bottom: "deconv" top: "deconv" }
layer { name: "prelu_shared" type: "PReLU" bottom: "conv2" top: "prelu_shared" prelu_param { channel_shared: true } }
layer { name: "lrn_a" type: "LRN" bottom: "conv2" top: "lrn_a"
  lrn_param { local_size: 3 alpha: 0.5 beta: 0.75 k: 2 } }
layer { name: "lrn_w" type: "LRN" bottom: "conv2" top: "lrn_w"
  lrn_param { local_size: 3 alpha: 0.5 beta: 0.75 norm_region: WITHIN_CHANNEL } }
layer { name: "sig" type: "Sigmoid" bottom: "lrn_a" top: "sig" }
layer { name: "tanh" type: "TanH" bottom: "lrn_w" top: "tanh" }
layer { name: "absv" type: "AbsVal" bottom: "prelu_shared" top: "absv" }
layer { name: "esum" type: "Eltwise" bottom: "sig" bottom: "tanh" top: "esum"
  eltwise_param { operation: SUM coeff: 0.5 coeff: -2 } }
layer { name: "eprod" type: "Eltwise" bottom: "sig" bottom: "tanh" bottom: "absv" top: "eprod"
  eltwise_param { operation: PROD } }
layer { name: "emax" type: "Eltwise" bottom: "sig" bottom: "tanh" top: "emax" eltwise_param { operation: MAX } }
layer { name: "eplain" type: "Eltwise" bottom: "sig" bottom: "absv" top: "eplain" }
layer { name: "cat" type: "Concat" bottom: "esum" bottom: "eprod" bottom: "emax" top: "cat" }
layer { name: "slice" type: "Slice" bottom: "cat" top: "s1" top: "s2" top: "s3"
  slice_param { axis: 1 slice_point: 3 slice_point: 7 } }
layer { name: "split" type: "Split" bottom: "s2" top: "s2a" top: "s2b" }
layer { name: "pow" type: "Power" bottom: "s2a" top: "pw" power_param { power: 2 scale: 0.5 shift: 1 } }
layer { name: "affine" type: "Power" bottom: "s2b" top: "s2b" power_param { scale: -1 shift: 0.25 } }
layer { name: "bn2" type: "BatchNorm" bottom: "s1" top: "bn2" batch_norm_param { eps: 0.001 } }
layer { name: "flat" type: "Flatten" bottom: "s3" top: "flat" }
layer { name: "flat2" type: "Flatten" bottom: "bn2" top: "flat2" flatten_param { axis: 2 } }
layer { name: "ipa" type: "InnerProduct" bottom: "flat2" top: "ipa" inner_product_param { num_output: 5 axis: 2 } }
layer { name: "rs" type: "Reshape" bottom: "pw" top: "rs"
  reshape_param { shape { dim: 2 dim: -1 } axis: 1 num_axes: 2 } }
layer { name: "rs2" type: "Reshape" bottom: "ipa" top: "rs2" reshape_param { shape { dim: 0 dim: -1 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "flat" top: "ip1" inner_product_param { num_output: 7 } }
layer { name: "ipt" type: "InnerProduct" bottom: "flat" top: "ipt"
  inner_product_param { num_output: 7 transpose: true bias_term: false } }
layer { name: "drop" type: "Dropout" bottom: "ip1" top: "ip1" dropout_param { dropout_ratio: 0.3 } }
layer { name: "drop_train" type: "Dropout" bottom: "ipt" top: "ipt" include { phase: TRAIN } }
layer { name: "prob" type: "Softmax" bottom: "ip1" top: "prob" }
layer { name: "prob4" type: "Softmax" bottom: "rs" top: "prob4" softmax_param { axis: 2 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ipt" bottom: "label" top: "loss" }
layer { name: "acc" type: "Accuracy" bottom: "ip1" bottom: "label" top: "acc" accuracy_param { top_k: 3 } }
layer { name: "sc2" type: "Scale" bottom: "ipt" bottom: "ip1" top: "sc2" scale_param { axis: 0 } }
layer { name: "sc3" type: "Scale" bottom: "rs" top: "sc3" }
"""


def layers_net():
    d = "layers"
    w = {
        "conv1": [rand(6, 3, 3, 3), rand(6)],
        "bn1": [rand(6), rand(6, lo=0.2, hi=2.0), np.array([0.8])],
        "sc1": [rand(6, lo=0.5, hi=1.5), rand(6)],
        "relu1": [],
        "conv2": [rand(4, 3, 3, 3)],
        "deconv": [rand(4, 2, 4, 4), rand(4)],
        "prelu": [rand(4, lo=0, hi=0.5)],
        "prelu_shared": [rand(1, lo=0, hi=0.5)],
        "bn2": [rand(3), rand(3, lo=0.2, hi=2.0), np.array([1.0])],
        "ipa": [rand(5, 36), rand(5)],
        "ip1": [rand(7, 180) * 0.2, rand(7)],
        "ipt": [rand(180, 7) * 0.2],
        "sc3": [rand(2)],
    }
    order = ["conv1", "bn1", "sc1", "conv2", "deconv", "prelu", "prelu_shared", "bn2", "ipa", "ip1", "ipt", "sc3"]
    types = {"conv1": "Convolution", "bn1": "BatchNorm", "sc1": "Scale", "conv2": "Convolution",
             "deconv": "Deconvolution", "prelu": "PReLU", "prelu_shared": "PReLU", "bn2": "BatchNorm",
             "ipa": "InnerProduct", "ip1": "InnerProduct", "ipt": "InnerProduct", "sc3": "Scale"}
    with open(os.path.join(HERE, d, "layers.prototxt"), "w") as f:
        f.write(LAYERS_PROTOTXT)
    write_caffemodel(os.path.join(HERE, d, "layers.caffemodel"), "layers",
                     [(k, types[k], w[k]) for k in order])

    data = rand(2, 3, 11, 11)
    label = np.array([3, 6])
    save(d, "input.data", data)
    save(d, "input.label", label, np.int32)
    r = {}
    conv1 = conv(data, *w["conv1"], (2, 2), (1, 1), (1, 1), 1)
    r["conv1.conv1"] = conv1
    conv1 = batch_norm(conv1, *w["bn1"])
    r["bn1.conv1"] = conv1
    conv1 = scale(conv1, *w["sc1"])
    r["sc1.conv1"] = conv1
    conv1 = np.where(conv1 > 0, conv1, 0.1 * conv1)
    r["relu1.conv1"] = conv1
    r["pool_max.pool_max"] = pool(conv1, "MAX", (3, 3), (2, 2), (0, 0))
    r["pool_ave0.pool_ave0"] = pool(conv1, "AVE", (3, 3), (2, 2), (0, 0))
    r["pool_ave1.pool_ave1"] = pool(conv1, "AVE", (3, 3), (2, 2), (1, 1))
    r["pool_ave2.pool_ave2"] = pool(conv1, "AVE", (3, 3), (1, 1), (1, 1))
    r["pool_floor.pool_floor"] = pool(conv1, "MAX", (3, 2), (2, 2), (1, 1), round_mode="FLOOR")
    r["pool_glob.pool_glob"] = pool(conv1, "AVE", None, None, None, global_pool=True)
    conv2 = conv(conv1, w["conv2"][0], None, (1, 1), (2, 2), (2, 2), 2)
    r["conv2.conv2"] = conv2
    dec = deconv(conv2, *w["deconv"], (2, 2), (1, 1), 2)
    r["deconv.deconv"] = dec
    r["prelu.deconv"] = np.where(dec > 0, dec, w["prelu"][0].reshape(1, -1, 1, 1) * dec)
    ps = np.where(conv2 > 0, conv2, w["prelu_shared"][0][0] * conv2)
    r["prelu_shared.prelu_shared"] = ps
    lrn_a = lrn_across(conv2, 3, 0.5, 0.75, 2.0)
    lrn_w = lrn_within(conv2, 3, 0.5, 0.75)
    r["lrn_a.lrn_a"], r["lrn_w.lrn_w"] = lrn_a, lrn_w
    sig, th, absv = 1 / (1 + np.exp(-lrn_a)), np.tanh(lrn_w), np.abs(ps)
    r["sig.sig"], r["tanh.tanh"], r["absv.absv"] = sig, th, absv
    esum, eprod, emax = 0.5 * sig - 2 * th, sig * th * absv, np.maximum(sig, th)
    r["esum.esum"], r["eprod.eprod"], r["emax.emax"] = esum, eprod, emax
    r["eplain.eplain"] = sig + absv
    cat = np.concatenate([esum, eprod, emax], axis=1)
    r["cat.cat"] = cat
    s1, s2, s3 = cat[:, :3], cat[:, 3:7], cat[:, 7:]
    r["slice.s1"], r["slice.s2"], r["slice.s3"] = s1, s2, s3
    r["split.s2a"], r["split.s2b"] = s2, s2
    pw = power(s2, 2, 0.5, 1)
    r["pow.pw"] = pw
    r["affine.s2b"] = power(s2, 1, -1, 0.25)
    bn2 = batch_norm(s1, *w["bn2"], eps=np.float64(np.float32(0.001)))
    r["bn2.bn2"] = bn2
    flat = s3.reshape(2, -1)
    r["flat.flat"] = flat
    flat2 = bn2.reshape(2, 3, -1)
    r["flat2.flat2"] = flat2
    ipa = inner_product(flat2, *w["ipa"], axis=2)
    r["ipa.ipa"] = ipa
    rs = pw.reshape(2, 2, 12, 6)
    r["rs.rs"] = rs
    r["rs2.rs2"] = ipa.reshape(2, -1)
    ip1 = inner_product(flat, *w["ip1"])
    ipt = inner_product(flat, w["ipt"][0], None, transpose=True)
    r["ip1.ip1"], r["ipt.ipt"] = ip1, ipt
    r["drop.ip1"] = ip1
    r["prob.prob"] = softmax(ip1)
    r["prob4.prob4"] = softmax(rs, axis=2)
    r["loss.loss"] = softmax_loss(ipt, label)
    r["acc.acc"] = accuracy(ip1, label, top_k=3)
    r["sc2.sc2"] = ipt * ip1
    r["sc3.sc3"] = scale(rs, w["sc3"][0])
    for k, v in r.items():
        save(d, k, v)


V1_PROTOTXT = """name: "v1"
input: "data"
input_dim: 2
input_dim: 3
input_dim: 8
input_dim: 8
layers { name: "conv" type: CONVOLUTION bottom: "data" top: "conv"
  blobs_lr: 1 blobs_lr: 2 convolution_param { num_output: 4 kernel_size: 3 } }
layers { name: "relu" type: RELU bottom: "conv" top: "conv" }
layers { name: "pool" type: POOLING bottom: "conv" top: "pool" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layers { name: "ip" type: INNER_PRODUCT bottom: "pool" top: "ip" inner_product_param { num_output: 5 } }
layers { name: "prob" type: SOFTMAX bottom: "ip" top: "prob" }
"""


def v1_net():
    d = "v1"
    w = {"conv": [rand(4, 3, 3, 3), rand(4)], "ip": [rand(5, 36), rand(5)]}
    with open(os.path.join(HERE, d, "v1.prototxt"), "w") as f:
        f.write(V1_PROTOTXT)
    write_caffemodel(os.path.join(HERE, d, "v1.caffemodel"), "v1",
                     [("conv", "CONVOLUTION", w["conv"]), ("ip", "INNER_PRODUCT", w["ip"])],
                     v1_types={"CONVOLUTION": 4, "INNER_PRODUCT": 14})
    data = rand(2, 3, 8, 8)
    save(d, "input.data", data)
    r = {}
    c = conv(data, *w["conv"], (1, 1), (0, 0), (1, 1), 1)
    r["conv.conv"] = c
    c = np.maximum(c, 0)
    r["relu.conv"] = c
    p = pool(c, "MAX", (3, 3), (2, 2), (0, 0))
    r["pool.pool"] = p
    ip = inner_product(p, *w["ip"])
    r["ip.ip"] = ip
    r["prob.prob"] = softmax(ip)
    for k, v in r.items():
        save(d, k, v)


TRANSFORM_PROTOTXT = """name: "transform"
layer { name: "data" type: "Data" top: "data" top: "label"
  include { phase: TEST }
  transform_param { scale: 0.5 mean_value: 10 mean_value: 20 mean_value: 30 crop_size: 5 }
  data_param { source: "unused" batch_size: 2 } }
layer { name: "data" type: "Data" top: "data" top: "label"
  include { phase: TRAIN }
  transform_param { scale: 0.5 mirror: true crop_size: 5 }
  data_param { source: "unused" batch_size: 64 } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 2 kernel_size: 1 } }
"""


def transform_net():
    d = "transform"
    w = {"conv": [rand(2, 3, 1, 1), rand(2)]}
    with open(os.path.join(HERE, d, "transform.prototxt"), "w") as f:
        f.write(TRANSFORM_PROTOTXT)
    write_caffemodel(os.path.join(HERE, d, "transform.caffemodel"), "transform",
                     [("conv", "Convolution", w["conv"])])
    raw = np.round(rand(2, 3, 8, 7, lo=0, hi=255))
    save(d, "input.data", raw)
    # Caffe's test-phase crop is centred: offsets (8-5)//2 = 1 and (7-5)//2 = 1.
    x = (raw[:, :, 1:6, 1:6] - np.array([10, 20, 30]).reshape(1, 3, 1, 1)) * 0.5
    r = {"data.data": x, "conv.conv": conv(x, *w["conv"], (1, 1), (0, 0), (1, 1), 1)}
    for k, v in r.items():
        save(d, k, v)


if __name__ == "__main__":
    for sub in ("layers", "v1", "transform"):
        os.makedirs(os.path.join(HERE, sub), exist_ok=True)
    layers_net()
    v1_net()
    transform_net()
    lenet()
