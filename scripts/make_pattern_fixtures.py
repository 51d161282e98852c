#!/usr/bin/python3
"""Write the golden fixtures of issue 5 (head patterns, file loading) into tests/fixtures/.

Run:  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/make_pattern_fixtures.py
(Debian python3-numpy 1.24, python3-torch 1.13.) Deterministic (fixed seeds); the tests never run
Python. Re-run only when a case or a formula of docs/patterns.md changes.

Files:
  patterns.json           head scores, labels and Jensen-Shannon distances, computed here with
                          numpy straight from the formulas of docs/patterns.md (an implementation
                          independent of cpp/analysis/mha/patterns.cpp), for random weight stacks and
                          for module 08's seed-7 preset (its numpy program, as the course prints it).
  torch_mha_layer.safetensors   an nn.MultiheadAttention(8, 2) state_dict with PyTorch's names
                          (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias), written
                          in the safetensors format by hand (Debian has no python3-safetensors):
                          8-byte little-endian header length, JSON header, raw little-endian data.
  torch_mha_layer_x.npy   its input embeddings (5, 8) float32, np.save.
  torch_mha_layer.json    PyTorch's output (5, 8) and per-head weights (2, 5, 5) for that input
                          (batch_first, eval, need_weights=True, average_attn_weights=False).
"""

import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn

from make_fixtures import HEADER as BASE_HEADER, OUT_DIR, tensor32  # sets OPENBLAS_NUM_THREADS

HEADER = dict(BASE_HEADER, generator="scripts/make_pattern_fixtures.py")

# docs/patterns.md "Labels"
THRESHOLDS = {"previous_token": 0.5, "local_band": 0.5, "vertical_stripe": 0.5, "long_range": 0.5,
              "margin": 0.15}


# ------------------------------------------------------------------------------------------------
# The scores of docs/patterns.md, written independently of the C++ (loops over rows, float64)
# ------------------------------------------------------------------------------------------------

def mean_or_none(values):
    return float(np.mean(values)) if len(values) else None


def head_scores(a, scored):
    """a: (n, m) float64 rows already divided by their sums; scored: (n,) bool."""
    n, m = a.shape
    rows = [i for i in range(n) if scored[i]]
    s = {}
    s["previous_token"] = mean_or_none([a[i, i - 1] for i in rows if i >= 1 and i - 1 < m])
    s["diagonal"] = mean_or_none([a[i, i] for i in rows if i < m])
    s["local_band"] = mean_or_none([a[i, max(0, i - 1):i + 2].sum() for i in rows])
    s["first_token"] = mean_or_none([a[i, 0] for i in rows if i >= 1])
    dist = [sum(a[i, j] * abs(i - j) for j in range(m)) for i in rows]
    s["mean_distance"] = mean_or_none(dist)
    ent = [-sum(x * math.log2(x) for x in a[i] if x > 0) for i in rows]
    s["entropy_bits"] = mean_or_none(ent)
    s["max_weight"] = mean_or_none([a[i].max() for i in rows])
    if rows:
        span = max(n, m) - 1
        s["mean_distance_normalized"] = 0.0 if span == 0 else s["mean_distance"] / span
        s["entropy_normalized"] = 0.0 if m == 1 else s["entropy_bits"] / math.log2(m)
        best, key = None, -1
        for j in range(m):
            others = [i for i in rows if i != j]
            if not others:
                continue
            v = float(np.mean([a[i, j] for i in others]))
            if best is None or v > best:
                best, key = v, j
        s["vertical_stripe"], s["stripe_key"] = best, key
    else:
        s.update(mean_distance_normalized=None, entropy_normalized=None, vertical_stripe=None,
                 stripe_key=-1)
    return s


def passes(score, base, threshold, margin):
    return score is not None and score >= threshold and score >= (base or 0.0) + margin


def score_stack(w):
    """w: (h, n, m) float32 weights -> list of per-head dicts."""
    w = np.asarray(w, dtype=np.float64)
    h, n, m = w.shape
    out = []
    for k in range(h):
        sums = w[k].sum(axis=1)
        scored = sums > 0
        a = np.where(scored[:, None], w[k] / np.where(scored, sums, 1.0)[:, None], 0.0)
        causal = n == m and n > 1 and not np.any(np.triu(w[k], 1) != 0)
        u = np.zeros((n, m))
        for i in range(n):
            if scored[i]:
                allowed = i + 1 if causal else m
                u[i, :allowed] = 1.0 / allowed
        s, b = head_scores(a, scored), head_scores(u, scored)
        t = THRESHOLDS
        prev = passes(s["previous_token"], b["previous_token"], t["previous_token"], t["margin"])
        pos = not prev and passes(s["local_band"], b["local_band"], t["local_band"], t["margin"])
        stripe = passes(s["vertical_stripe"], b["vertical_stripe"], t["vertical_stripe"],
                        t["margin"])
        far = not stripe and passes(s["mean_distance_normalized"], b["mean_distance_normalized"],
                                    t["long_range"], t["margin"])
        labels = [name for name, on in (("previous-token", prev), ("positional", pos),
                                        ("vertical-stripe", stripe), ("long-range", far)) if on]
        out.append({"head": k, "rows_scored": int(scored.sum()), "causal": bool(causal),
                    "scores": s, "uniform_baseline": b, "labels": labels})
    return out


def js_distance(w):
    w = np.asarray(w, dtype=np.float64)
    h, n, _ = w.shape
    d = np.zeros((h, h))
    for x in range(h):
        for y in range(x + 1, h):
            vals = []
            for i in range(n):
                sp, sq = w[x, i].sum(), w[y, i].sum()
                if sp == 0 and sq == 0:
                    continue
                if sp == 0 or sq == 0:
                    vals.append(1.0)
                    continue
                p, q = w[x, i] / sp, w[y, i] / sq
                mid = (p + q) / 2
                kl = lambda a: sum(ai * math.log2(ai / mi) for ai, mi in zip(a, mid) if ai > 0)
                vals.append(math.sqrt(min(max(0.5 * kl(p) + 0.5 * kl(q), 0.0), 1.0)))
            d[x, y] = d[y, x] = float(np.mean(vals)) if vals else 0.0
    return d.tolist()


def softmax_rows(logits, mask=None):
    z = logits.copy()
    if mask is not None:
        z = np.where(mask, -np.inf, z)
    mx = np.max(z, axis=-1, keepdims=True)
    full = ~np.isfinite(mx)
    e = np.exp(z - np.where(full, 0.0, mx))
    s = e.sum(axis=-1, keepdims=True)
    return np.where(full, 0.0, e / np.where(s == 0, 1.0, s))


def module08_weights(seed, n, d_model, num_heads, causal=False):
    """Module 08's program (shared/seeds/module-08), per-head weights (h, n, n)."""
    np.random.seed(seed)
    d_head = d_model // num_heads
    X = np.random.randn(n, d_model)
    Wq, Wk, Wv, Wo = [np.random.randn(d_model, d_model) for _ in range(4)]
    Q, K = X @ Wq, X @ Wk
    out = []
    for h in range(num_heads):
        c = slice(h * d_head, (h + 1) * d_head)
        scores = Q[:, c] @ K[:, c].T / np.sqrt(d_head)
        mask = np.triu(np.ones((n, n), dtype=bool), 1) if causal else None
        out.append(softmax_rows(scores, mask))
    return np.array(out)


def case(name, w, **extra):
    w32 = np.asarray(w, dtype=np.float32)
    c = {"name": name, **extra, "heads": score_stack(w32), "js_distance": js_distance(w32)}
    if "preset" not in extra:
        c["attn_weights"] = tensor32(w32)
    return c


def make_patterns():
    rng = np.random.default_rng(20261130)
    cases = []
    cases.append(case("random h=3 n=6", softmax_rows(rng.normal(0, 2, (3, 6, 6)))))
    causal = np.triu(np.ones((7, 7), dtype=bool), 1)
    w = softmax_rows(rng.normal(0, 3, (4, 7, 7)), causal)
    w[2, 3, :] = 0.0  # a fully masked row in head 2
    cases.append(case("random causal h=4 n=7, head 2 row 3 fully masked", w))
    cases.append(case("random cross-attention h=2 n=4 m=6", softmax_rows(rng.normal(0, 2, (2, 4, 6)))))
    # Synthetic heads whose labels the docs quote: previous-token, diagonal, stripe, far, uniform.
    n = 8
    syn = np.zeros((5, n, n))
    for i in range(n):
        syn[0, i, max(i - 1, 0)] = 1.0
        syn[1, i, i] = 1.0
        syn[2, i, 0] = 1.0
        syn[3, i, (i + 4) % n] = 1.0
        syn[4, i, :] = 1.0 / n
    cases.append(case("synthetic: previous-token, diagonal, first-token, far (+4), uniform", syn))
    for h in (2, 4):
        for causal_flag in (False, True):
            preset = {"seed": 7, "tokens": 5, "d_model": 8, "num_heads": h, "is_causal": causal_flag}
            w = module08_weights(7, 5, 8, h, causal_flag)
            cases.append(case(f"module 08 seed 7, d=8, h={h}{', causal' if causal_flag else ''}",
                              w, preset=preset))
    # The course's printed rows, as a check of the preset itself.
    w = module08_weights(7, 5, 8, 2)
    assert np.allclose(np.round(w[0][0], 3), [0, 0, 0.424, 0.576, 0])
    assert np.allclose(np.round(w[1][0], 3), [0, 0, 0, 0, 1])
    payload = dict(HEADER, thresholds=THRESHOLDS, cases=cases)
    with open(os.path.join(OUT_DIR, "patterns.json"), "w") as f:
        json.dump(payload, f, indent=1)
        f.write("\n")


# ------------------------------------------------------------------------------------------------
# nn.MultiheadAttention saved as safetensors + an .npy embedding
# ------------------------------------------------------------------------------------------------

def write_safetensors(path, tensors, metadata=None):
    """The safetensors format by hand: u64 LE header length, JSON header, data (C order, LE)."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        a = np.ascontiguousarray(t.detach().cpu().numpy().astype("<f4"))
        raw = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)  # align the data section, as safetensors does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def make_torch_layer():
    torch.manual_seed(5)
    mha = nn.MultiheadAttention(8, 2, bias=True, batch_first=True).eval()
    with torch.no_grad():
        for p in mha.parameters():
            p.normal_(0, 0.5)
    x = torch.randn(1, 5, 8)
    with torch.no_grad():
        out, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    write_safetensors(os.path.join(OUT_DIR, "torch_mha_layer.safetensors"), mha.state_dict(),
                      {"num_heads": "2", "generator": "scripts/make_pattern_fixtures.py"})
    np.save(os.path.join(OUT_DIR, "torch_mha_layer_x.npy"), x[0].numpy().astype("<f4"))
    payload = dict(HEADER, d_model=8, num_heads=2, state_dict_keys=list(mha.state_dict().keys()),
                   x=tensor32(x[0].numpy()), output=tensor32(out[0].numpy()),
                   attn_weights=tensor32(w[0].numpy()))
    with open(os.path.join(OUT_DIR, "torch_mha_layer.json"), "w") as f:
        json.dump(payload, f, indent=1)
        f.write("\n")


def main():
    make_patterns()
    make_torch_layer()


if __name__ == "__main__":
    main()
