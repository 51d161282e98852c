#!/usr/bin/python3
"""Write the golden fixtures of mha-lab's native tests into tests/fixtures/.

Run:  OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/make_fixtures.py
(Debian python3-numpy 1.24 and python3-torch 1.13.) The output is deterministic (fixed seeds) and
committed; the tests never run Python. Re-run only when a case is added or changed.

Files (JSON, every float tensor stored as {"shape": [...], "data": [flat, row-major]}):
  numpy_mha.json     module 08's numpy program (X @ W convention, no bias), float64 inputs/outputs.
  numpy_random.json  np.random.seed / randn / random_sample streams and raw MT19937 outputs.
  torch_mha.json     nn.MultiheadAttention (batch_first, batch 1, eval, per-head weights), float32.
  param_counts.json  sum(p.numel() for p in nn.MultiheadAttention(...).parameters()).

Number formats:
  float64 values are written with repr() (17 significant digits at most: exact round trip).
  float32 values are written as the shortest decimal that round-trips to that float32; the script
  checks that parsing it as a double (strtod, as nlohmann-json does) and casting to float gives the
  float32 back bit for bit, so the C++ side reads exactly the tensors PyTorch used.
  -inf inside a float mask is the string "-inf" (JSON has no infinity).
"""

import json
import math
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures")

HEADER = {
    "format": "mha-lab-fixture",
    "version": 1,
    "generator": "scripts/make_fixtures.py",
    "numpy": np.__version__,
    "torch": torch.__version__,
}


# ------------------------------------------------------------------------------------------------
# Number formatting
# ------------------------------------------------------------------------------------------------

def f64_list(a):
    a = np.asarray(a, dtype=np.float64).ravel()
    assert np.all(np.isfinite(a)), "non-finite float64 value in a fixture"
    return [float(x) for x in a]  # json writes repr(): exact round trip


def f32_list(a):
    a = np.asarray(a, dtype=np.float32).ravel()
    assert np.all(np.isfinite(a)), "non-finite float32 value in a fixture"
    out = []
    for x in a:
        s = np.format_float_scientific(x, unique=True)  # shortest string for this float32
        d = float(s)
        assert np.float32(d) == x and np.float32(d).tobytes() == x.tobytes(), (s, x)
        out.append(d)
    return out


def tensor64(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": f64_list(a)}


def tensor32(a):
    if isinstance(a, torch.Tensor):
        a = a.detach().cpu().numpy()
    a = np.asarray(a, dtype=np.float32)
    return {"shape": list(a.shape), "data": f32_list(a)}


def float_mask_tensor(a):
    a = np.asarray(a, dtype=np.float32)
    data = []
    for x in a.ravel():
        if np.isneginf(x):
            data.append("-inf")
        else:
            assert np.isfinite(x)
            data.append(f32_list(np.array([x]))[0])
    return {"shape": list(a.shape), "data": data}


def write_json(name, payload):
    path = os.path.join(OUT_DIR, name)
    doc = dict(HEADER)
    doc.update(payload)
    text = json.dumps(doc, allow_nan=False, separators=(",", ":"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.write("\n")
    return path, len(text) + 1


# ------------------------------------------------------------------------------------------------
# a. Module 08's numpy program
# ------------------------------------------------------------------------------------------------

def np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np_softmax(scores, axis=-1)
    return weights @ V, weights


def module08(seed, n, d_model, num_heads):
    """Module 08's program, verbatim apart from the parameters."""
    np.random.seed(seed)
    d_head = d_model // num_heads
    X = np.random.randn(n, d_model)
    Wq, Wk, Wv, Wo = [np.random.randn(d_model, d_model) for _ in range(4)]
    Q, K, V = X @ Wq, X @ Wk, X @ Wv

    def split_heads(M, num_heads, d_head):
        return M.reshape(M.shape[0], num_heads, d_head).transpose(1, 0, 2)

    Qh, Kh, Vh = (split_heads(m, num_heads, d_head) for m in (Q, K, V))
    outs, weights = zip(*(np_attention(Qh[h], Kh[h], Vh[h]) for h in range(num_heads)))
    mha_out = np.concatenate(outs, axis=-1) @ Wo
    return X, (Wq, Wk, Wv, Wo), mha_out, np.stack(weights)


def make_numpy_mha():
    cases = []
    for seed, n, d, h in [(7, 5, 8, 2), (0, 6, 12, 3), (42, 7, 16, 4), (123, 3, 8, 1), (7, 5, 8, 4)]:
        X, (Wq, Wk, Wv, Wo), out, weights = module08(seed, n, d, h)
        case = {
            "name": f"seed{seed}_n{n}_d{d}_h{h}",
            "seed": seed, "n": n, "d_model": d, "num_heads": h,
            "X": tensor64(X), "Wq": tensor64(Wq), "Wk": tensor64(Wk), "Wv": tensor64(Wv),
            "Wo": tensor64(Wo),
            "expected": {"output": tensor64(out), "attn_weights": tensor64(weights)},
        }
        cases.append(case)
        if (seed, n, d, h) == (7, 5, 8, 2):
            # The module's verified printout.
            r0 = np.round(weights[0][0], 3)
            r1 = np.round(weights[1][0], 3)
            assert np.array_equal(r0, [0.0, 0.0, 0.424, 0.576, 0.0]), r0
            assert np.array_equal(r1, [0.0, 0.0, 0.0, 0.0, 1.0]), r1
            assert not np.allclose(weights[0], weights[1])
            case["module08_rounded"] = {"head0_token0": r0.tolist(), "head1_token0": r1.tolist()}
    return {"description": "Module 08 numpy program: np.random.seed(seed); X = randn(n, d); "
                           "Wq, Wk, Wv, Wo = randn(d, d) x4; X @ W, no bias; per-head softmax; "
                           "concat @ Wo. float64.",
            "cases": cases}


# ------------------------------------------------------------------------------------------------
# b. numpy's legacy random stream
# ------------------------------------------------------------------------------------------------

def mt19937_reference(seed, count):
    """Independent pure-Python MT19937 (init_genrand + genrand_int32), to check numpy's raw stream."""
    mt = [0] * 624
    mt[0] = seed
    for i in range(1, 624):
        mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & 0xFFFFFFFF
    idx, out = 624, []
    for _ in range(count):
        if idx >= 624:
            for i in range(624):
                y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
                mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            idx = 0
        y = mt[idx]
        idx += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        out.append(y)
    return out


def polar_gauss_reference(raw):
    """legacy_gauss on top of a raw uint32 iterator, in Python floats (IEEE double, libm)."""
    def next_double():
        a = next(raw) >> 5
        b = next(raw) >> 6
        return (a * 67108864.0 + b) / 9007199254740992.0

    cached = None
    while True:
        if cached is not None:
            g, cached = cached, None
            yield g
            continue
        while True:
            x1 = 2.0 * next_double() - 1.0
            x2 = 2.0 * next_double() - 1.0
            r2 = x1 * x1 + x2 * x2
            if r2 < 1.0 and r2 != 0.0:
                break
        f = math.sqrt(-2.0 * math.log(r2) / r2)
        cached = f * x1
        yield f * x2


def make_numpy_random():
    streams = []
    for seed in (0, 7, 42, 2**32 - 1):
        np.random.seed(seed)
        randn = np.random.randn(64)
        np.random.seed(seed)
        uniform = np.random.random_sample(8)
        raw = np.random.RandomState(seed).randint(0, 2**32, size=8, dtype=np.uint32)
        # randint over the full uint32 range takes no rejection step and returns the raw
        # MT19937 outputs: checked against an independent implementation here.
        ref_raw = mt19937_reference(seed, 2 * 64 * 3)
        assert raw.tolist() == ref_raw[:8], (seed, raw, ref_raw[:8])
        gen = polar_gauss_reference(iter(ref_raw))
        ref_randn = [next(gen) for _ in range(64)]
        assert ref_randn == randn.tolist(), seed  # bit-identical with Python's libm
        streams.append({
            "seed": seed,
            "randn": f64_list(randn),
            "random_sample": f64_list(uniform),
            "raw_uint32": [int(x) for x in raw],
        })

    # Interleaved calls: the cached second Gaussian of a pair carries over between calls.
    np.random.seed(7)
    first = np.random.randn(3)
    second = np.random.randn(2, 2)
    np.random.seed(7)
    flat = np.random.randn(7)
    assert np.array_equal(np.concatenate([first, second.ravel()]), flat)
    # random_sample after an odd number of randn draws does not consume the cached Gaussian.
    np.random.seed(7)
    g1 = np.random.randn(1)
    u = np.random.random_sample(2)
    g2 = np.random.randn(1)
    interleaved = [
        {"name": "seed7_randn3_then_randn2x2", "seed": 7,
         "calls": [{"op": "randn", "shape": [3]}, {"op": "randn", "shape": [2, 2]}],
         "values": [f64_list(first), f64_list(second)]},
        {"name": "seed7_randn1_random_sample2_randn1", "seed": 7,
         "calls": [{"op": "randn", "shape": [1]}, {"op": "random_sample", "shape": [2]},
                   {"op": "randn", "shape": [1]}],
         "values": [f64_list(g1), f64_list(u), f64_list(g2)]},
    ]
    return {"description": "numpy legacy RandomState (MT19937): after np.random.seed(seed), the "
                           "first 64 np.random.randn values, the first 8 random_sample values, "
                           "and the first 8 raw uint32 outputs (randint(0, 2**32, dtype=uint32)).",
            "streams": streams, "interleaved": interleaved}


# ------------------------------------------------------------------------------------------------
# c. PyTorch nn.MultiheadAttention
# ------------------------------------------------------------------------------------------------

def randomize(mha, gen, std, bias_std=0.2):
    with torch.no_grad():
        for name, p in mha.named_parameters():
            s = bias_std if "bias" in name else std
            p.copy_(torch.randn(p.shape, generator=gen) * s)


def manual_mha64(q_in, k_in, v_in, Wq, Wk, Wv, bq, bk, bv, Wo, bo, h, attn_mask, kpm, causal):
    """The project's contract in float64 numpy: additive masks; a fully masked row gives weights 0
    and head output 0."""
    q_in, k_in, v_in = (np.asarray(t, np.float64) for t in (q_in, k_in, v_in))
    Q = q_in @ Wq.T + bq
    K = k_in @ Wk.T + bk
    V = v_in @ Wv.T + bv
    n, d = Q.shape
    m = K.shape[0]
    dh = d // h
    M = np.zeros((h, n, m))
    if attn_mask is not None:
        am = np.asarray(attn_mask)
        if am.dtype == np.bool_:
            am = np.where(am, -np.inf, 0.0)
        M = M + (am if am.ndim == 3 else am[None])
    if kpm is not None:
        M = M + np.where(np.asarray(kpm), -np.inf, 0.0)[None, None, :]
    if causal:
        M = M + np.where(np.triu(np.ones((n, m), bool), 1), -np.inf, 0.0)[None]
    W = np.zeros((h, n, m))
    heads = np.zeros((n, d))
    full = np.zeros((h, n), dtype=np.uint8)
    for i in range(h):
        sl = slice(i * dh, (i + 1) * dh)
        S = Q[:, sl] @ K[:, sl].T / math.sqrt(dh) + M[i]
        for r in range(n):
            if np.all(np.isneginf(S[r])):
                full[i, r] = 1
                continue
            e = np.exp(S[r] - S[r].max())
            W[i, r] = e / e.sum()
        heads[:, sl] = W[i] @ V[:, sl]
    return heads @ Wo.T + bo, W, full


def torch_case(name, description, *, d, h, n, m=None, kdim=None, vdim=None, bias=True,
               seed, std=0.4, x_scale=1.0, attn_mask=None, key_padding_mask=None, causal=False):
    """Builds one case. attn_mask: None, bool/float tensor (n, m) or (h, n, m)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    self_attn = m is None and kdim is None and vdim is None
    m = n if m is None else m
    mha = nn.MultiheadAttention(d, h, dropout=0.0, bias=bias, batch_first=True,
                                kdim=kdim, vdim=vdim)
    mha.eval()
    randomize(mha, gen, std)
    kd = d if kdim is None else kdim
    vd = d if vdim is None else vdim
    if self_attn:
        x = (torch.randn(1, n, d, generator=gen) * x_scale)
        query = key = value = x
    else:
        query = torch.randn(1, n, d, generator=gen) * x_scale
        key = torch.randn(1, m, kd, generator=gen) * x_scale
        value = torch.randn(1, m, vd, generator=gen) * x_scale

    mask_for_torch = attn_mask
    if causal:
        assert attn_mask is None
        mask_for_torch = torch.triu(torch.ones(n, m, dtype=torch.bool), 1)
    kpm = None if key_padding_mask is None else key_padding_mask.reshape(1, m)
    # Parameters require grad and grad mode is on, so nn.MultiheadAttention takes its documented
    # path, F.multi_head_attention_forward, in every case. (PyTorch 1.13's native fast path would
    # be taken in eval mode under no_grad for some cases, and it crashes for bias=False.)
    with torch.enable_grad():
        out, w = mha(query, key, value, key_padding_mask=kpm, need_weights=True,
                     attn_mask=mask_for_torch, average_attn_weights=False)
    out, w = out[0].detach(), w[0].detach()  # (n, d), (h, n, m)

    # Parameters, as PyTorch names them.
    P = {k: v.detach() for k, v in mha.named_parameters()}
    if mha._qkv_same_embed_dim:
        Wq, Wk, Wv = P["in_proj_weight"].split(d, dim=0)
    else:
        Wq, Wk, Wv = P["q_proj_weight"], P["k_proj_weight"], P["v_proj_weight"]
    if bias:
        bq, bk, bv = P["in_proj_bias"].split(d)
        bo = P["out_proj.bias"]
    else:
        bq = bk = bv = bo = torch.zeros(d)
    Wo = P["out_proj.weight"]

    # Fully masked rows: PyTorch 1.13 returns NaN. The project defines weights 0 and head output 0
    # for such a row; recompute those rows with torch float32 ops.
    nan_rows = torch.isnan(w).all(dim=-1)  # (h, n)
    assert torch.equal(torch.isnan(w).any(dim=-1), nan_rows)
    if bool(nan_rows.any()):
        with torch.no_grad():
            w = torch.nan_to_num(w, nan=0.0)
            V = value[0] @ Wv.T + bv  # (m, d)
            dh = d // h
            heads = torch.cat([w[i] @ V[:, i * dh:(i + 1) * dh] for i in range(h)], dim=-1)
            manual_out = heads @ Wo.T + bo
            # Rows untouched by NaN must agree with PyTorch's own output.
            ok_rows = ~torch.isnan(out).any(dim=-1)
            assert ok_rows.any()
            assert torch.allclose(manual_out[ok_rows], out[ok_rows], rtol=1e-5, atol=1e-5)
            out = manual_out
    assert not torch.isnan(out).any() and not torch.isnan(w).any()

    # Cross-check against the float64 contract (validates mask layout and semantics).
    mask_np = None if attn_mask is None else attn_mask.numpy()
    kpm_np = None if key_padding_mask is None else key_padding_mask.numpy()
    o64, w64, full64 = manual_mha64(
        query[0].numpy(), key[0].numpy(), value[0].numpy(),
        *(t.double().numpy() for t in (Wq, Wk, Wv, bq, bk, bv, Wo, bo)),
        h, mask_np, kpm_np, causal)
    assert np.array_equal(full64, nan_rows.numpy().astype(np.uint8)), name
    dev_w = float(np.max(np.abs(w.double().numpy() - w64)))
    scale = max(1.0, float(np.max(np.abs(o64))))
    dev_o = float(np.max(np.abs(out.double().numpy() - o64))) / scale
    assert dev_w < 2e-5 and dev_o < 2e-5, (name, dev_w, dev_o)

    weights = {}
    if mha._qkv_same_embed_dim:
        weights["in_proj_weight"] = tensor32(P["in_proj_weight"])
    else:
        weights["q_proj_weight"] = tensor32(P["q_proj_weight"])
        weights["k_proj_weight"] = tensor32(P["k_proj_weight"])
        weights["v_proj_weight"] = tensor32(P["v_proj_weight"])
    if bias:
        weights["in_proj_bias"] = tensor32(P["in_proj_bias"])
    weights["out_proj_weight"] = tensor32(P["out_proj.weight"])
    if bias:
        weights["out_proj_bias"] = tensor32(P["out_proj.bias"])

    case = {
        "name": name, "description": description,
        "d_model": d, "num_heads": h, "kdim": kd, "vdim": vd, "n": n, "m": m, "bias": bias,
        "self_attention": self_attn,
        "query": tensor32(query[0]),
        "weights": weights,
        "attn_mask": None, "key_padding_mask": None, "is_causal": causal,
        "expected": {
            "output": tensor32(out),
            "attn_weights": tensor32(w),
            "fully_masked_rows": {"shape": [h, n],
                                  "data": [int(v) for v in nan_rows.numpy().astype(np.uint8).ravel()]},
        },
        "f64_check": {"max_abs_dev_weights": dev_w, "max_rel_dev_output": dev_o},
    }
    if not self_attn:
        case["key"] = tensor32(key[0])
        case["value"] = tensor32(value[0])
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            case["attn_mask"] = {"kind": "bool", "shape": list(attn_mask.shape),
                                 "data": [int(v) for v in attn_mask.numpy().astype(np.uint8).ravel()]}
        else:
            case["attn_mask"] = dict(kind="float", **float_mask_tensor(attn_mask.numpy()))
    if key_padding_mask is not None:
        case["key_padding_mask"] = [int(v) for v in key_padding_mask.numpy().astype(np.uint8)]
    return case


def make_torch_mha():
    torch.set_num_threads(1)
    cases = []
    cases.append(torch_case("bias", "self-attention with in_proj_bias and out_proj.bias",
                            d=8, h=2, n=5, seed=1))
    cases.append(torch_case("no_bias", "self-attention, bias=False", d=8, h=2, n=5, bias=False,
                            seed=2))
    g = torch.Generator().manual_seed(303)
    bool2d = torch.rand(4, 6, generator=g) < 0.35
    bool2d[:, 0] = False  # no fully masked row here
    cases.append(torch_case("bool_mask_2d", "boolean attn_mask (n, m), True = may not attend; "
                            "cross-attention n=4, m=6 with kdim = vdim = d", d=8, h=2, n=4, m=6,
                            kdim=8, vdim=8, seed=3, attn_mask=bool2d))
    bool3d = torch.rand(4, 5, 5, generator=g) < 0.4
    bool3d[:, :, 2] = False
    cases.append(torch_case("bool_mask_per_head", "boolean per-head attn_mask (h, n, m) "
                            "(PyTorch's (batch*h, n, m) for batch 1)", d=12, h=4, n=5, seed=4,
                            attn_mask=bool3d))
    fmask = torch.randn(5, 5, generator=g) * 1.5
    fmask[0, 3] = -math.inf
    fmask[2, 0] = -math.inf
    fmask[2, 4] = -math.inf
    fmask[4, 1] = -math.inf
    cases.append(torch_case("float_mask", "float additive attn_mask (n, m) with finite values and "
                            "some -inf entries", d=8, h=2, n=5, seed=5, attn_mask=fmask))
    cases.append(torch_case("key_padding_mask", "key_padding_mask (m,) bool, True = ignore key",
                            d=8, h=2, n=5, seed=6,
                            key_padding_mask=torch.tensor([False, True, False, False, True])))
    cases.append(torch_case("causal", "causal self-attention: PyTorch got attn_mask = "
                            "triu(ones(n, n, bool), 1); the C++ side sets is_causal", d=8, h=2,
                            n=6, seed=7, causal=True))
    full2d = torch.zeros(5, 5, dtype=torch.bool)
    full2d[2, :] = True
    full2d[0, 1] = True
    cases.append(torch_case("fully_masked_row", "boolean attn_mask whose row 2 masks every key: "
                            "weights 0 and head outputs 0 for that row in every head (output row = "
                            "out_proj.bias); PyTorch's NaN replaced by the project's semantics",
                            d=8, h=2, n=5, seed=8, attn_mask=full2d))
    full3d = torch.zeros(2, 5, 5, dtype=torch.bool)
    full3d[0, 1, :] = True
    full3d[1, 3, 1:] = True
    cases.append(torch_case("fully_masked_row_one_head", "per-head boolean mask: head 0 row 1 is "
                            "fully masked, head 1 is not; only head 0's output for row 1 is 0",
                            d=8, h=2, n=5, seed=9, attn_mask=full3d))
    cases.append(torch_case("causal_key_padding_fully_masked", "key_padding_mask on key 0 "
                            "combined with is_causal: query 0 has no key left",
                            d=8, h=2, n=4, seed=10, causal=True,
                            key_padding_mask=torch.tensor([True, False, False, False])))
    cases.append(torch_case("cross_kdim_vdim", "cross-attention, kdim=6 != vdim=10 != d_model=8, "
                            "m=7 != n=4, separate q/k/v_proj_weight", d=8, h=2, n=4, m=7,
                            kdim=6, vdim=10, seed=11))
    cases.append(torch_case("cross_kdim_vdim_no_bias", "cross-attention, kdim=12, vdim=5, "
                            "d_model=4, bias=False", d=4, h=2, n=3, m=5, kdim=12, vdim=5,
                            bias=False, seed=12))
    cases.append(torch_case("large_logits", "inputs scaled by 30: scores in the thousands; softmax "
                            "must subtract the row max (no NaN, no overflow)", d=8, h=2, n=5,
                            seed=13, std=0.5, x_scale=30.0))
    cases.append(torch_case("d_head_1", "h = d_model = 6 (d_head = 1)", d=6, h=6, n=4, seed=14))
    cases.append(torch_case("one_head", "h = 1", d=8, h=1, n=5, seed=15))
    cases.append(torch_case("larger", "d_model=32, h=4, n=9, bias, float mask", d=32, h=4, n=9,
                            seed=16, std=0.2,
                            attn_mask=torch.randn(9, 9, generator=g)))
    return {"description": "torch.nn.MultiheadAttention(d_model, num_heads, bias, kdim, vdim, "
                           "batch_first=True), eval, dropout 0, batch 1, need_weights=True, "
                           "average_attn_weights=False; float32. Weights in PyTorch names "
                           "(out_proj.weight stored as out_proj_weight).",
            "cases": cases}


# ------------------------------------------------------------------------------------------------
# d. Parameter counts
# ------------------------------------------------------------------------------------------------

def make_param_counts():
    rows = []

    def count(d, h, bias, kdim=None, vdim=None):
        mha = nn.MultiheadAttention(d, h, bias=bias, kdim=kdim, vdim=vdim, batch_first=True)
        rows.append({"d_model": d, "num_heads": h, "bias": bias,
                     "kdim": d if kdim is None else kdim, "vdim": d if vdim is None else vdim,
                     "count": int(sum(p.numel() for p in mha.parameters()))})

    for bias in (False, True):
        for h in (1, 2, 4, 8):
            count(8, h, bias)
        for h in (1, 2, 4, 8, 16):
            count(512, h, bias)
        count(8, 2, bias, kdim=6, vdim=10)
        count(16, 4, bias, kdim=32, vdim=8)
        count(512, 8, bias, kdim=256, vdim=1024)
    assert all(r["count"] == 256 for r in rows if r["d_model"] == 8 and r["kdim"] == 8
               and not r["bias"])
    return {"description": "sum(p.numel() for p in nn.MultiheadAttention(d_model, num_heads, "
                           "bias=bias, kdim=kdim, vdim=vdim).parameters())",
            "counts": rows}


def main():
    torch.manual_seed(0)
    os.makedirs(OUT_DIR, exist_ok=True)
    written = [
        write_json("numpy_mha.json", make_numpy_mha()),
        write_json("numpy_random.json", make_numpy_random()),
        write_json("torch_mha.json", make_torch_mha()),
        write_json("param_counts.json", make_param_counts()),
    ]
    total = 0
    for path, size in written:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        items = doc.get("cases") or doc.get("streams") or doc.get("counts")
        print(f"{os.path.relpath(path, ROOT)}: {size} bytes, {len(items)} entries")
        total += size
    print(f"total {total} bytes (numpy {np.__version__}, torch {torch.__version__})")
    assert total < 1_000_000


if __name__ == "__main__":
    sys.exit(main())
