#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/ (run by hand when the targets change; tests
only read the files). Standard library only.

  fuzz_json_request/  requests built from tests/fixtures/torch_mha.json (numbers cut to 4
                      significant digits to keep the files small), hand-written edge cases and
                      malformed ones
  fuzz_forward/       byte strings decoded by fuzz_forward.cpp (header bytes, then one byte per
                      value), one per configuration and mask kind
  fuzz_numpy_experiment/  8 bytes: seed (little endian), tokens + 1, d_model + 1, heads + 1, flags
  fuzz_english_lm/    a flags byte, then text (flag 2) or a model file: the two tiny English models
                      of tests/fixtures, broken copies of one (a flipped data byte, a truncated
                      file, "the" and "a" swapped in the vocabulary, ...), and texts for the
                      tokenizer
  fuzz_subword_tokenizer/  a flags byte, then text for the English subword tokenizer (flag 0) or a
                      tokenizer description (flag 1): a small one cut from
                      tests/fixtures/english_subword_tokenizer.json and broken copies of it

Regression inputs found by fuzzing are added by hand as crash-<what> files and never rewritten.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    path = os.path.join(CORPUS, target, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def nested(t, boolean=False):
    shape, flat = t["shape"], t["data"]

    def leaf(x):
        if boolean:
            return bool(x)
        return x if isinstance(x, str) else float(f"{x:.4g}")  # "-inf" stays a string

    def build(dims, offset):
        if len(dims) == 1:
            return [leaf(flat[offset + i]) for i in range(dims[0])]
        stride = 1
        for s in dims[1:]:
            stride *= s
        return [build(dims[1:], offset + i * stride) for i in range(dims[0])]

    return build(shape, 0)


def torch_requests():
    with open(os.path.join(ROOT, "tests", "fixtures", "torch_mha.json")) as f:
        cases = json.load(f)["cases"]
    for c in cases:
        if c["name"] == "larger":
            continue  # 40 kB; the others cover its features
        r = {"num_heads": c["num_heads"], "query": nested(c["query"])}
        if not c["self_attention"]:
            r["key"] = nested(c["key"]) if "key" in c else nested(c["query"])
            r["value"] = nested(c["value"]) if "value" in c else nested(c["query"])
        for k, v in c["weights"].items():
            r[k] = nested(v)
        am = c["attn_mask"]
        if am is not None:
            r["attn_mask"] = nested(am, boolean=am.get("kind") == "bool")
        if c["key_padding_mask"] is not None:
            kpm = c["key_padding_mask"]
            r["key_padding_mask"] = (
                kpm["data"]
                if isinstance(kpm, dict) and kpm.get("kind") == "float"
                else [bool(x) for x in kpm]
            )
        if c["is_causal"]:
            r["is_causal"] = True
        write(
            "fuzz_json_request",
            "torch-" + c["name"] + ".json",
            json.dumps(r, separators=(",", ":")),
        )


def small_request(**extra):
    r = {
        "num_heads": 2,
        "query": [[1, 0, 0, 1], [0, 1, 1, 0], [0.5, -0.5, 2, 1]],
        "in_proj_weight": [[1 if i % 4 == j else 0.5 for j in range(4)] for i in range(12)],
        "out_proj_weight": [[1 if i == j else 0 for j in range(4)] for i in range(4)],
    }
    r.update(extra)
    return json.dumps(r, separators=(",", ":"))


def hand_requests():
    t = "fuzz_json_request"
    write(t, "small.json", small_request())
    write(t, "small-bias.json", small_request(in_proj_bias=[0.1] * 12, out_proj_bias=[0] * 4))
    write(
        t,
        "mask-bool-per-head-one-head-all.json",
        small_request(attn_mask=[[[True] * 3] * 3, [[False, True, False]] * 3]),
    )
    write(
        t,
        "mask-float-neg-inf.json",
        small_request(attn_mask=[[0, "-inf", 1.5], ["-Infinity", 0, -2], ["-inf", "-inf", "-inf"]]),
    )
    write(t, "mask-float-plus-inf.json", small_request(attn_mask=[[0, "inf", 0]] * 3))
    write(t, "mask-float-nan.json", small_request(attn_mask=[[0, "NaN", 0]] * 3))
    write(t, "mask-float-huge.json", small_request(attn_mask=[[3e38, 0, -3e38]] * 3))
    write(t, "mask-mixed.json", small_request(attn_mask=[[True, 0, False]] * 3))
    write(t, "causal-kpm.json", small_request(is_causal=True, key_padding_mask=[True, False, True]))
    write(
        t,
        "logits-thousands.json",
        small_request(query=[[3000, 0, 0, 1], [0, 2000, 1, 0], [1, 1, 1, 1]]),
    )
    write(t, "overflow.json", small_request(query=[[1e30, 1e30, 1e30, 1e30]] * 3))
    write(t, "float32-overflow-literal.json", small_request(query=[[1e39, 0, 0, 0]] * 3))
    write(t, "indivisible.json", small_request(num_heads=3))
    write(t, "heads-zero.json", small_request(num_heads=0))
    write(t, "heads-negative.json", small_request(num_heads=-2))
    write(t, "heads-huge.json", small_request(num_heads=18446744073709551615))
    write(t, "heads-float.json", small_request(num_heads=2.0))
    write(
        t,
        "cross-separate.json",
        json.dumps(
            {
                "num_heads": 1,
                "query": [[1, 2]],
                "key": [[1, 0, 1], [0, 1, 0]],
                "value": [[2], [3]],
                "q_proj_weight": [[1, 0], [0, 1]],
                "k_proj_weight": [[1, 0, 0], [0, 1, 1]],
                "v_proj_weight": [[1], [-1]],
                "out_proj_weight": [[1, 0], [0, 1]],
                "kdim": 3,
                "vdim": 1,
            }
        ),
    )
    write(t, "kdim-mismatch.json", small_request(kdim=5))
    write(t, "ragged.json", small_request(query=[[1, 2, 3, 4], [1, 2]]))
    write(t, "empty-query.json", small_request(query=[]))
    write(t, "null-optional.json", small_request(attn_mask=None, key=None, value=None))
    write(t, "unknown-key.json", small_request(dropout=0.1))
    write(t, "duplicate-key.json", '{"num_heads":1,"num_heads":2}')
    write(t, "not-object.json", "[1,2,3]")
    write(t, "truncated.json", small_request()[:40])
    write(t, "trailing.json", small_request() + " {}")
    write(t, "deep-nesting.json", "[" * 3000 + "]" * 3000)
    write(t, "big-number.json", '{"num_heads":1,"query":[[1e999]]}')
    write(t, "unicode-escape.json", '{"n\\u0075m_heads":1,"\\ud800":2}')
    write(t, "empty.json", "")


def forward_seeds():
    t = "fuzz_forward"

    # Header: b0 = d_head-1 | (h-1)<<2 | bad_d<<4 ; b1 = separate | (kdim-1)<<1 | (vdim-1)<<4 ;
    # b2 = n-1 (| 0x80 self-attention) ; b3 = m-1 ; b4 = in_bias | out_bias<<1 | kind<<2 |
    # kpm<<6 | causal<<7 ; b5 = 0xff for a wrong per-head mask. Values: byte 100 + 16 x.
    def vals(count, start=0):
        return bytes((100 + ((start + 7 * i) % 41) - 20) % 200 for i in range(count))

    for kind in range(7):
        for flags, name in ((0x03, "bias"), (0x40 | 0x80, "kpm-causal")):
            hdr = bytes([1 | (1 << 2), 0, 0x80 | 3, 3, flags | (kind << 2), 0])
            write(t, f"self-h2-kind{kind}-{name}", hdr + vals(400, kind))
    write(
        t,
        "cross-separate",
        bytes([0 | (2 << 2), 1 | (2 << 1) | (4 << 4), 2, 4, 3, 0]) + vals(400, 3),
    )
    write(t, "bad-d", bytes([0xF0 | 1 | (1 << 2), 0, 2, 2, 0, 0]) + vals(200))
    write(t, "wrong-mask-heads", bytes([1 | (1 << 2), 0, 2, 2, 3 << 2, 0xFF]) + vals(300))
    write(t, "specials", bytes([3 | (3 << 2), 0, 5, 5, 3, 0]) + bytes(range(200, 240)) * 10)
    write(
        t,
        "additive-specials",
        bytes([1 | (1 << 2), 0, 0x80 | 2, 2, 6 << 2, 0]) + vals(60) + bytes(range(128, 256, 3)) * 2,
    )
    write(
        t, "logits-thousands", bytes([0, 0, 0x80 | 4, 4, 0, 0]) + bytes([239, 230, 220, 100] * 40)
    )
    write(t, "empty", b"")


def numpy_seeds():
    t = "fuzz_numpy_experiment"
    for seed, tokens, d, h, flags in (
        (7, 5, 8, 2, 0),
        (7, 5, 8, 2, 3),
        (0, 1, 1, 1, 0),
        (1, 40, 40, 10, 1),
        (2, 3, 10, 3, 0),
        (3, 0, 8, 2, 0),
        (4, 3, 0, 0, 2),
        (5, 3, 8, -1, 0),
    ):
        write(
            t,
            f"seed{seed}-n{tokens}-d{d}-h{h}-f{flags}",
            struct.pack("<I", seed) + bytes([tokens + 1, d + 1, h + 1, flags]),
        )


def english_lm_seeds():
    t = "fuzz_english_lm"
    models = {}
    for name in ("relbias_mlp", "shortformer"):
        with open(
            os.path.join(ROOT, "tests", "fixtures", f"english_lm_tiny_{name}.safetensors"), "rb"
        ) as f:
            models[name] = f.read()
        write(t, f"model-{name}", b"\x00" + models[name])
    blob = models["shortformer"]
    (n,) = struct.unpack("<Q", blob[:8])
    write(t, "model-bad-checksum", b"\x00" + blob[:-3] + bytes([blob[-3] ^ 0x40]) + blob[-2:])
    write(t, "model-restamp-flipped", b"\x01" + blob[:-3] + bytes([blob[-3] ^ 0x40]) + blob[-2:])
    write(t, "model-truncated", b"\x00" + blob[: 8 + n + 100])
    swapped = blob[8 : 8 + n].replace(
        b'\\"<0x41>\\",\\"<0x42>\\",', b'\\"<0x42>\\",\\"<0x41>\\",', 1
    )
    assert swapped != blob[8 : 8 + n]
    write(t, "model-vocab-swapped", b"\x00" + blob[:8] + swapped + blob[8 + n :])
    header = blob[8 : 8 + n].replace(b'\\"num_layers\\":2', b'\\"num_layers\\":3')
    write(t, "model-three-layers", b"\x01" + blob[:8] + header + blob[8 + n :])
    for i, text in enumerate(
        [
            "The cat sat on the mat.",
            "Don\u2019t stop \u2014 dog's ball!",
            "na\u0308ive \U0001F44D\U0001F3FD \U0001F1EB\U0001F1F7 a\u200bb",
            "\u65e5\u672c\u8a9e \u0663\u0664 it's''s",
            "",
        ]
    ):
        write(t, f"text-{i}", b"\x02" + text.encode("utf-8"))
    write(t, "text-invalid-utf8", b"\x02ab\xff\xc0\xaf\xed\xa0\x80")


def subword_tokenizer_seeds():
    t = "fuzz_subword_tokenizer"
    texts = [
        "The cat sat on the mat.",
        "  Don\u2019t   stop \u2014 the dog's ball!  ",
        "caf\u00e9 na\u0308ive \U0001F468\u200d\U0001F469 \U0001F1EB\U0001F1F7 \u65e5\u672c",
        "a\tb\nc\u00a0d\u3000e \u2581 f\u2581",
        "1,000,000 and 3.14 ... !?",
        "\x00\x01\x7f\ufffd\ufeff",
        "",
    ]
    for i, text in enumerate(texts):
        write(t, f"text-{i}", b"\x00" + text.encode("utf-8"))
    write(t, "text-invalid-utf8", b"\x00ab\xff\xc0\xaf\xed\xa0\x80")
    with open(os.path.join(ROOT, "tests", "fixtures", "english_subword_tokenizer.json")) as f:
        full = json.load(f)
    keep = list(range(258)) + list(range(258, 330)) + list(range(4049, len(full["pieces"])))
    small = dict(full, **{k: [full[k][i] for i in keep] for k in ("pieces", "scores", "types")})

    def description(d):
        return b"\x01" + json.dumps(d, ensure_ascii=False).encode("utf-8")

    write(t, "description-small", description(small))
    write(t, "description-duplicate", description(dict(small, pieces=small["pieces"][:-1] + ["e"])))
    write(t, "description-short-scores", description(dict(small, scores=small["scores"][:-1])))
    write(t, "description-bad-type", description(dict(small, types=["odd"] + small["types"][1:])))
    unused = dict(small, types=small["types"][:300] + ["unused"] + small["types"][301:])
    write(t, "description-unused", description(unused))
    write(t, "description-no-fallback", description(dict(small, byte_fallback=False)))


if __name__ == "__main__":
    torch_requests()
    hand_requests()
    forward_seeds()
    numpy_seeds()
    english_lm_seeds()
    subword_tokenizer_seeds()
