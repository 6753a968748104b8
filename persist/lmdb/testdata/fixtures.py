#!/usr/bin/env python3
"""LMDB fixtures for persist/lmdb's tests, written by the LMDB C library
through Python's lmdb module (Debian: python3-lmdb), and a dump of an LMDB's
records that the tests compare with what they wrote.

    python3 fixtures.py write DIR   # DIR/records, DIR/mnist, DIR/datum
    python3 fixtures.py dump DB     # one JSON line per record, in key order

The committed fixtures were made with Debian 12's python3-lmdb 1.4.0 on
LMDB 0.9.24 by

    cd persist/lmdb/testdata && python3 fixtures.py write .

(the lock.mdb files removed: an LMDB directory needs only data.mdb). They
are:

records  the records of records() below, put in three transactions (the
         100,000-byte value on overflow pages); "a" is put twice, in
         different transactions, and "deleted" is put and then deleted.
mnist    the first 64 MNIST t10k images as Caffe2's make_mnist_db writes
         them: key %08d, value a TensorProtos of the image (BYTE, dims
         [1, 28, 28], byte_data) and the label (INT32, int32_data).
datum    the first 16 MNIST t10k images as Caffe's convert_mnist_data
         writes them into mnist_train_lmdb: key %08d, value a caffe.Datum
         (channels 1, height 28, width 28, data the pixels, label).

The MNIST images come from data/mnist in the repository (see its README).
"""

import gzip
import hashlib
import json
import os
import struct
import sys

import lmdb

MNIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "data", "mnist")


def pattern(n, seed):
    """n bytes that differ with seed and position (the tests' pattern)."""
    return bytes(((j * 31) ^ (j >> 8) ^ seed) & 0xFF for j in range(n))


def records():
    """The records fixture, in the order put: (key, value)."""
    recs = [
        (b"a", b"1"),
        (b"b#%0", bytes([0, 0xFF, 0, 1])),
        (b"gpu_0/w", b"\x00"),
        (b"k\x00z", b"v" * 300),
        ("\u00e9".encode(), b"utf-8"),
        (b"\xff\xfe", b"high bytes"),
        (b"long/" + b"x" * 506, b"a 511-byte key"),
        (b"big", pattern(100000, 7)),
    ]
    recs += [(b"n%04d" % i, pattern(1 + i * 37 % 300, i & 0xFF)) for i in range(200)]
    return recs


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def tensor_protos(pixels, rows, cols, label):
    """Caffe2's TensorProtos of an MNIST record, fields in number order."""
    image = b"".join(field(1, 0, varint(d)) for d in (1, rows, cols))  # dims
    image += field(2, 0, varint(3))  # data_type BYTE
    image += field(5, 2, pixels)  # byte_data
    lab = field(2, 0, varint(2))  # data_type INT32
    lab += field(4, 2, varint(label))  # int32_data, packed
    return field(1, 2, image) + field(1, 2, lab)


def datum(pixels, rows, cols, label):
    """Caffe's Datum of an MNIST record, as convert_mnist_data fills it."""
    return (field(1, 0, varint(1)) + field(2, 0, varint(rows)) + field(3, 0, varint(cols))
            + field(4, 2, pixels) + field(5, 0, varint(label)))


def mnist(n):
    """The first n t10k images: (pixels, rows, cols, label)."""
    with gzip.open(os.path.join(MNIST, "t10k-images-idx3-ubyte.gz")) as f:
        magic, count, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 0x803 and count >= n
        images = [f.read(rows * cols) for _ in range(n)]
    with gzip.open(os.path.join(MNIST, "t10k-labels-idx1-ubyte.gz")) as f:
        magic, count = struct.unpack(">II", f.read(8))
        assert magic == 0x801 and count >= n
        labels = f.read(n)
    return [(images[i], rows, cols, labels[i]) for i in range(n)]


def write(out):
    recs = records()
    half = len(recs) // 2
    env = lmdb.open(os.path.join(out, "records"))
    with env.begin(write=True) as txn:
        txn.put(b"a", b"old value, replaced in a later transaction")
        txn.put(b"deleted", b"gone")
        for k, v in recs[:half]:
            if k != b"a":
                txn.put(k, v)
    with env.begin(write=True) as txn:
        txn.delete(b"deleted")
        for k, v in recs[half:]:
            txn.put(k, v)
    with env.begin(write=True) as txn:
        txn.put(b"a", dict(recs)[b"a"])
    env.close()

    for name, n, encode in (("mnist", 64, tensor_protos), ("datum", 16, datum)):
        env = lmdb.open(os.path.join(out, name))
        with env.begin(write=True) as txn:
            for i, rec in enumerate(mnist(n)):
                txn.put(b"%08d" % i, encode(*rec))
        env.close()


def dump(path):
    env = lmdb.open(path, readonly=True)
    with env.begin() as txn:
        for k, v in txn.cursor():
            print(json.dumps({"key": k.hex(), "len": len(v), "sha256": hashlib.sha256(v).hexdigest()}))
    env.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "dump"):
        sys.exit(__doc__)
    {"write": write, "dump": dump}[sys.argv[1]](sys.argv[2])
