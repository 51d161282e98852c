#!/usr/bin/python3
"""Writes the seed corpus of tests/fuzz/corpus/fuzz_npy/: .npy files as numpy.save writes them
(versions 1.0, 2.0, 3.0; <f4, <f8, <f2; attention stacks of rank 3, 4 and 5) and broken in the
ways mha::read_npy must name (big-endian, object dtype, Fortran order, truncated data, lying
header length, bad dict literal, NaN, a row that does not sum to 1). Run by hand when the reader
changes; tests only read the files. Needs python3-numpy.

The fuzz target (fuzz_npy.cpp) reads the whole input as the file.
"""
import io
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "fuzz_npy")


def saved(a, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, a)
    else:
        np.lib.format.write_array(b, a, version=version)
    return b.getvalue()


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(5)
    attn = softmax(rng.normal(0, 2, (2, 3, 4, 4))).astype("<f4")  # (L, h, n, n)
    causal = attn.copy()
    causal[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] = 0
    causal /= causal.sum(axis=-1, keepdims=True)
    cases = {
        "v1-f4-rank4": saved(attn),
        "v2-f8-rank3": saved(attn[0].astype("<f8"), (2, 0)),
        "v3-f2-rank3": saved(attn[1].astype("<f2"), (3, 0)),
        "v1-f4-rank5-batch1": saved(attn[:, None]),
        "v1-causal-with-masked-row": saved(np.concatenate([causal[0], np.zeros((1, 4, 4), "<f4")])),
        "cross-2x3": saved(softmax(rng.normal(0, 1, (2, 2, 3))).astype("<f4")),
        "scalar": saved(np.float32(1.0)),
        "big-endian": saved(attn[0].astype(">f4")),
        "object": saved(np.array([1, "a"], dtype=object)),
        "fortran": saved(np.asfortranarray(attn[0, 0])),
        "int64": saved(np.arange(6, dtype="<i8").reshape(1, 2, 3)),
        "truncated": saved(attn)[:-7],
        "trailing": saved(attn[0]) + b"\0\0\0\0",
        "nan": saved(np.array([[[np.nan, 1.0]]], dtype="<f4")),
        "row-sum": saved(np.array([[[0.5, 0.4]]], dtype="<f4")),
    }
    lie = bytearray(saved(attn[0]))
    lie[8] = 0xFF
    cases["header-length-lie"] = bytes(lie)
    bad = saved(attn[0]).replace(b"'shape': (3, 4, 4), }", b"'shape': (3, 4 4), }")
    cases["bad-literal"] = bad
    for name, data in cases.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
