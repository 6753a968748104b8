"""Writes the FloatToHalf golden files: float32 inputs (special values,
rounding ties, subnormals, overflow and random values) and the bit patterns
of NumPy's float16 conversion of each, as int32.

Run from operators/quant: python3 testdata/gen_half.py
"""
import numpy as np

rng = np.random.default_rng(14)
special = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e6, -1e6,
           np.inf, -np.inf, 6.1035156e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08,
           1e-9, -1e-9, 1.0009765625, 1.00048828125, 1.00146484375, 2049.0, 2051.0,
           0.1, 0.2, 0.3, 1.0 / 3.0, 3.14159265]
# Halfway points between neighbouring halves, to check ties to even.
h = np.arange(0, 0x7bff, 97, dtype=np.uint16).view(np.float16)
mid = ((h.astype(np.float64) + np.nextafter(h, np.float16(np.inf)).astype(np.float64)) / 2).astype(np.float32)
x = np.concatenate([np.array(special, dtype=np.float32), mid,
                    rng.standard_normal(500).astype(np.float32) * 10,
                    (rng.standard_normal(200) * 1e-5).astype(np.float32)]).astype(np.float32)
y = x.astype(np.float16).view(np.uint16).astype(np.int32)
np.save("testdata/half_x.npy", x)
np.save("testdata/half_y.npy", y)
