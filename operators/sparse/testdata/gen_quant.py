"""Generates quant_golden.json: Caffe2's rowwise quantization arithmetic,
written out in NumPy float32/float16, on random rows and corner cases.

Run from operators/sparse: python3 testdata/gen_quant.py
"""
import json

import numpy as np

f32 = np.float32
rng = np.random.default_rng(14)


def rows():
    x = rng.standard_normal((6, 8)).astype(f32) * f32(3)
    x[1] = f32(0.25)  # a constant row
    x[2, :4] = f32(-1e-3)  # ties at the minimum
    x[3] = np.array([0, 0.5, 1.5, 2.5, 3.5, 100.5, 254.5, 255], dtype=f32)  # codes at exact halves
    x[4] = x[4] * f32(1e-6)  # a tiny range
    return x


def fused8(x):
    out = []
    for row in x:
        lo, hi = f32(row.min()), f32(row.max())
        rng_ = f32(hi - lo)
        scale = f32(rng_ / f32(255))
        inv = f32(f32(255) / f32(rng_ + f32(1e-8)))
        q = np.rint((row - lo).astype(f32) * inv).astype(np.uint8)
        out.append(list(q.tobytes()) + list(np.array([scale, lo], dtype="<f4").tobytes()))
    return out


def fused8_back(b):
    out = []
    for row in b:
        row = np.array(row, dtype=np.uint8)
        scale, bias = np.frombuffer(row[-8:].tobytes(), dtype="<f4")
        out.append((row[:-8].astype(f32) * scale + bias).astype(f32))
    return out


def fused4(x):
    out = []
    for row in x:
        lo, hi = f32(row.min()), f32(row.max())
        lo = f32(np.float16(lo))
        rng_ = f32(hi - lo)
        scale = np.float16(1.0) if rng_ == 0 else np.float16(rng_ / f32(15))
        if scale == 0:
            scale = np.float16(1.0)
        inv = f32(f32(1) / f32(scale))
        if np.isinf(inv):
            scale, inv = np.float16(1.0), f32(1)
        q = np.clip(np.rint((row - lo).astype(f32) * inv), 0, 15).astype(np.uint8)
        packed = (q[0::2] | (q[1::2] << 4)).astype(np.uint8)
        out.append(list(packed.tobytes()) + list(np.array([scale, np.float16(lo)], dtype="<f2").tobytes()))
    return out


def fused4_back(b):
    out = []
    for row in b:
        row = np.array(row, dtype=np.uint8)
        scale, bias = [f32(v) for v in np.frombuffer(row[-4:].tobytes(), dtype="<f2")]
        codes = np.empty(2 * (len(row) - 4), dtype=np.uint8)
        codes[0::2] = row[:-4] & 15
        codes[1::2] = row[:-4] >> 4
        out.append((scale * codes.astype(f32) + bias).astype(f32))
    return out


def rowwise8(x):
    q, sb = [], []
    for row in x:
        lo, hi = f32(row.min()), f32(row.max())
        if f32(hi - lo) < f32(1e-10):
            sb.append([f32(1), lo])
            q.append([0] * len(row))
            continue
        scale = f32(f32(hi - lo) / f32(255))
        inv = f32(f32(1) / scale)
        v = ((row - lo).astype(f32) * inv).astype(f32).astype(np.float64)
        r = np.trunc(v + np.copysign(0.5, v))  # Eigen's round: half away from zero
        q.append([int(c) for c in r.astype(np.uint8)])
        sb.append([scale, lo])
    return q, sb


def main():
    x = rows()
    b8 = fused8(x)
    b4 = fused4(x)
    q, sb = rowwise8(x)
    back8 = fused8_back(b8)
    back4 = fused4_back(b4)
    back_r = [(np.array(qr, dtype=np.uint8).astype(f32) * f32(s[0]) + f32(s[1])).astype(f32) for qr, s in zip(q, sb)]
    bits = lambda a: [int(v) for v in np.asarray(a, dtype=f32).view(np.uint32).ravel()]
    golden = {
        "shape": list(x.shape),
        "x_bits": bits(x),
        "fused8": [int(v) for r in b8 for v in r],
        "fused8_back_bits": bits(np.array(back8)),
        "fused4": [int(v) for r in b4 for v in r],
        "fused4_back_bits": bits(np.array(back4)),
        "rowwise8": [v for r in q for v in r],
        "rowwise8_scale_bias_bits": bits(np.array(sb, dtype=f32)),
        "rowwise8_back_bits": bits(np.array(back_r)),
    }
    with open("testdata/quant_golden.json", "w") as f:
        json.dump(golden, f)
        f.write("\n")


main()
