#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/corpus/fuzz_model_file/: tiny date-model files in the
format of docs/date-model-format.md (d_model 4, 2 heads, one encoder and one decoder layer, a
6-character vocabulary), valid and broken in the ways the loader must name. Run by hand when the
format changes; tests only read the files. Needs python3-xxhash (install_deps.sh --fixtures).

The fuzz target reads byte 0 as flags (bit 0: re-stamp the checksum, so mutations reach the
config, vocabulary and tensor checks) and the rest as the file.
"""
import json
import os
import random
import struct

import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "fuzz_model_file")
D, H, F, V = 4, 2, 4, 10  # d_model, heads, dim_feedforward, vocab


def half(values):
    return struct.pack("<%de" % len(values), *values)


def tensors():
    rng = random.Random(7)
    t = {}

    def put(name, *shape):
        n = 1
        for s in shape:
            n *= s
        t[name] = (list(shape), [round(rng.uniform(-0.5, 0.5), 3) for _ in range(n)])

    def attn(prefix):
        put(prefix + ".in_proj_weight", 3 * D, D)
        put(prefix + ".in_proj_bias", 3 * D)
        put(prefix + ".out_proj.weight", D, D)
        put(prefix + ".out_proj.bias", D)

    def ff_norms(prefix, norms):
        put(prefix + ".linear1.weight", F, D)
        put(prefix + ".linear1.bias", F)
        put(prefix + ".linear2.weight", D, F)
        put(prefix + ".linear2.bias", D)
        for k in range(1, norms + 1):
            put(prefix + ".norm%d.weight" % k, D)
            put(prefix + ".norm%d.bias" % k, D)

    put("embedding.weight", V, D)
    attn("encoder.layers.0.self_attn")
    ff_norms("encoder.layers.0", 2)
    attn("decoder.layers.0.self_attn")
    attn("decoder.layers.0.multihead_attn")
    ff_norms("decoder.layers.0", 3)
    put("generator.bias", V)
    return t


def model_file(t, config=None, vocab=None, checksum=None):
    data = b""
    header = {}
    for name in sorted(t):
        shape, values = t[name]
        raw = half(values)
        header[name] = {
            "dtype": "F16",
            "shape": shape,
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    cfg = config or {
        "d_model": D,
        "num_heads": H,
        "num_encoder_layers": 1,
        "num_decoder_layers": 1,
        "dim_feedforward": F,
        "activation": "relu",
        "norm_first": False,
        "layer_norm_eps": 1e-5,
        "max_source_len": 12,
        "max_target_len": 4,
        "embed_scale": 2.0,
        "tie_embeddings": True,
        "final_norm": False,
    }
    header["__metadata__"] = {
        "format": "mha-lab-date-model",
        "format_version": "1",
        "xxh64": checksum or xxhash.xxh64(data, seed=0).hexdigest(),
        "config": json.dumps(cfg),
        "vocab": json.dumps(
            vocab or ["<pad>", "<bos>", "<eos>", "<unk>", "0", "1", "2", "-", "a", " "]
        ),
        "training": "{}",
    }
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def write(name, flags, data):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes([flags]) + data)


def main():
    t = tensors()
    good = model_file(t)
    write("valid", 0, good)
    write("valid-restamp", 1, good)
    write("truncated-header", 0, good[:20])
    write("truncated-data", 1, good[:-7])
    write("bad-checksum", 0, model_file(t, checksum="0123456789abcdef"))
    cfg = json.loads(
        json.loads(good[8 : 8 + struct.unpack("<Q", good[:8])[0]])["__metadata__"]["config"]
    )
    write("heads-not-dividing", 1, model_file(t, config={**cfg, "num_heads": 3}))
    write("pre-norm", 1, model_file(t, config={**cfg, "norm_first": True}))
    broken = dict(t)
    del broken["generator.bias"]
    write("missing-tensor", 1, model_file(broken))
    write("short-vocab", 1, model_file(t, vocab=["<pad>", "<bos>"]))


if __name__ == "__main__":
    main()
