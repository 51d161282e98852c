"""The English language model of mha-lab in PyTorch: model, vocabulary, file writer and reader.

Shared by scripts/training/train_english_lm.py (training), scripts/training/evaluate_english_lm.py
(its report) and scripts/fixtures (golden data), so that they build exactly the model the C++
core runs (cpp/models/mha/english_lm.*). The file format is docs/english-lm-format.md.

Tokens: subword pieces (scripts/training/english_subwords.py: SentencePiece BPE with byte fallback,
so every text has tokens and <unk> never occurs). Every sequence the model is asked about starts
with <bos>. The model never predicts <unk> or <bos>: their logits are -inf (BLOCKED_TYPES).
Format version 2 files (word tokens, scripts/training/english_tokens.py) are still read by
read_file, for the comparison with the earlier word model (evaluate_english_lm.py --baseline).

Model (decoder-only, pre-norm, causal; shape legend n tokens, d d_model, h heads, V vocabulary):
    x = embedding[ids]                                     (n, d)   no positions in the residual
    for each layer:
        a = norm1(x)
        p = a + PE[0:n]                                    "shortformer" positions: queries and
        x = x + self_attn(query=p, key=p, value=a,         keys only (Press et al. 2021,
                          attn_mask=causal)                 arXiv:2012.15832); PE as in
        if dim_feedforward: x = x + linear2(relu(linear1(norm2(x))))   Vaswani et al. 2017 §3.5
    logits = norm(x) @ embedding.weight^T + generator.bias  (n, V)  tied embedding; -inf for the
                                                                   <unk> and <bos> pieces
self_attn is torch.nn.MultiheadAttention (batch_first=True, dropout 0): the same contract as
mha::MultiheadAttention.
"""
import json
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import xxhash

from common import (
    data_xxh64,
    f16_arrays,
    read_safetensors_parts,
    sinusoidal_pe,
    write_f16_safetensors,
)

# TOKEN_RE and split_tokens are for this module's users (M.split_tokens), not used here.
from english_tokens import TOKEN_RE, normalize, split_tokens  # noqa: F401

FORMAT = "mha-lab-english-lm"
# Version 3: subword pieces, the tokenizer in the metadata ("tokenizer"). Version 2: word tokens;
# "xxh64" covers the data section, the tensor entries and every other metadata value
# (content_xxh64). Version 1: a checksum of the data section alone. read_file reads all three
# (the earlier word models, for comparisons); the C++ loader reads version 3.
FORMAT_VERSION = "3"
READABLE_VERSIONS = ("1", "2", "3")
UNK, BOS = "<unk>", "<bos>"
SPECIALS = [UNK, BOS]  # ids 0 and 1
# Pieces the model never predicts (their logits are -inf).
BLOCKED_TYPES = ("unknown", "control")


class Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, f = cfg["d_model"], cfg["dim_feedforward"]
        eps = cfg["layer_norm_eps"]
        self.norm1 = nn.LayerNorm(d, eps=eps)
        self.self_attn = nn.MultiheadAttention(d, cfg["num_heads"], dropout=0.0, batch_first=True)
        # Learned bias per head and query-key distance i - j (Shaw et al. 2018; Raffel et al.
        # 2020 without buckets), added to the scores: (h, max_len).
        self.relative_bias = (
            nn.Parameter(torch.zeros(cfg["num_heads"], cfg["max_len"]))
            if cfg.get("relative_bias")
            else None
        )
        self.has_ff = f > 0
        if self.has_ff:
            self.norm2 = nn.LayerNorm(d, eps=eps)
            self.linear1 = nn.Linear(d, f)
            self.linear2 = nn.Linear(f, d)

    def attn_mask(self, causal, batch):
        """The additive mask self_attn gets: causal (n, n) float (0 or -inf), plus each head's
        relative position bias when the model has one, as (batch * h, n, n)."""
        if self.relative_bias is None:
            return causal
        n = causal.shape[0]
        offset = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).clamp(min=0)
        m = causal[None] + self.relative_bias[:, offset]  # (h, n, n)
        return m.repeat(batch, 1, 1)

    def forward(self, x, pe, causal, need_weights=False, ablate=None):
        a = self.norm1(x)
        p = a + pe if pe is not None else a
        mask = self.attn_mask(causal, x.shape[0])
        o, w = self.self_attn(
            p,
            p,
            a,
            attn_mask=mask,
            need_weights=need_weights or ablate is not None,
            average_attn_weights=False,
        )
        if ablate:
            # Switch heads off: recompute the output with those heads' contexts zeroed before
            # out_proj.
            o = attention_with_heads_off(self.self_attn, p, a, mask, ablate)
        x = x + o
        if self.has_ff:
            x = x + self.linear2(F.relu(self.linear1(self.norm2(x))))
        return x, w


def attention_with_heads_off(attn, qk, v, mask, heads):
    """nn.MultiheadAttention's forward written out, with the given heads' outputs set to zero
    before out_proj (as mha::ForwardOptions::ablated_heads). qk, v: (B, n, d)."""
    d = attn.embed_dim
    h = attn.num_heads
    dh = d // h
    w, b = attn.in_proj_weight, attn.in_proj_bias
    q = F.linear(qk, w[:d], b[:d])
    k = F.linear(qk, w[d : 2 * d], b[d : 2 * d])
    vv = F.linear(v, w[2 * d :], b[2 * d :])
    B, n, _ = q.shape
    q = q.view(B, n, h, dh).transpose(1, 2) / (dh**0.5)
    k = k.view(B, n, h, dh).transpose(1, 2)
    vv = vv.view(B, n, h, dh).transpose(1, 2)
    s = q @ k.transpose(-1, -2)
    s = s + (mask if mask.dim() == 2 else mask.view(B, h, n, n))
    ctx = torch.softmax(s, -1) @ vv
    keep = torch.ones(h, dtype=ctx.dtype)
    keep[list(heads)] = 0
    ctx = ctx * keep[None, :, None, None]
    return attn.out_proj(ctx.transpose(1, 2).reshape(B, n, d))


class EnglishLM(nn.Module):
    def __init__(self, cfg, blocked=(0, 1)):
        """cfg: docs/english-lm-format.md "config"; blocked: ids whose logits are -inf (the
        tokenizer's unknown and control pieces; () for a word model of version 1 or 2)."""
        super().__init__()
        self.cfg = dict(cfg)
        V, d = cfg["vocab_size"], cfg["d_model"]
        mask = torch.zeros(V)
        mask[list(blocked)] = float("-inf")
        self.register_buffer("logit_mask", mask, persistent=False)
        self.embedding = nn.Embedding(V, d)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg["num_layers"])])
        self.norm = nn.LayerNorm(d, eps=cfg["layer_norm_eps"])
        self.generator_bias = nn.Parameter(torch.zeros(V))
        self.register_buffer("pe", sinusoidal_pe(cfg["max_len"], d), persistent=False)
        # Tied embedding: rows of norm 1 on average, so that the initial logits (unit-variance
        # features against the rows) have standard deviation 1.
        nn.init.normal_(self.embedding.weight, std=d**-0.5)

    def forward(self, ids, need_weights=False, ablate=None):
        """ids (B, n) with ids[:, 0] = <bos> -> logits (B, n, V), [per layer (B, h, n, n) or None].
        ablate: {layer: [heads]} to switch off."""
        n = ids.shape[1]
        assert n <= self.cfg["max_len"], (n, self.cfg["max_len"])
        causal = torch.full((n, n), float("-inf")).triu(1)
        pe = self.pe[:n] if self.cfg.get("shortformer_positions", True) else None
        x = self.embedding(ids)
        weights = []
        for i, layer in enumerate(self.layers):
            x, w = layer(x, pe, causal, need_weights, (ablate or {}).get(i))
            weights.append(w)
        logits = self.norm(x) @ self.embedding.weight.T + self.generator_bias + self.logit_mask
        return logits, weights


def export_tensors(model):
    """[(file tensor name, float32 array)] in a fixed order (docs/english-lm-format.md)."""
    out = [("embedding.weight", model.embedding.weight)]
    for i, layer in enumerate(model.layers):
        p = f"layers.{i}."
        out += [
            (p + "norm1.weight", layer.norm1.weight),
            (p + "norm1.bias", layer.norm1.bias),
            (p + "self_attn.in_proj_weight", layer.self_attn.in_proj_weight),
            (p + "self_attn.in_proj_bias", layer.self_attn.in_proj_bias),
            (p + "self_attn.out_proj.weight", layer.self_attn.out_proj.weight),
            (p + "self_attn.out_proj.bias", layer.self_attn.out_proj.bias),
        ]
        if layer.relative_bias is not None:
            out += [(p + "self_attn.relative_bias", layer.relative_bias)]
        if layer.has_ff:
            out += [
                (p + "norm2.weight", layer.norm2.weight),
                (p + "norm2.bias", layer.norm2.bias),
                (p + "linear1.weight", layer.linear1.weight),
                (p + "linear1.bias", layer.linear1.bias),
                (p + "linear2.weight", layer.linear2.weight),
                (p + "linear2.bias", layer.linear2.bias),
            ]
    out += [
        ("norm.weight", model.norm.weight),
        ("norm.bias", model.norm.bias),
        ("generator.bias", model.generator_bias),
    ]
    return [(k, v.detach().cpu().numpy().astype(np.float32)) for k, v in out]


def load_tensors_(model, tensors):
    """Inverse of export_tensors: copy {name: array} into the model (every name must match)."""
    names = [k for k, _ in export_tensors(model)]
    assert sorted(names) == sorted(tensors), sorted(set(names) ^ set(tensors))
    params = dict(model.named_parameters())
    rename = {"generator.bias": "generator_bias"}
    rename.update(
        {
            f"layers.{i}.self_attn.relative_bias": f"layers.{i}.relative_bias"
            for i in range(model.cfg["num_layers"])
        }
    )
    with torch.no_grad():
        for k in names:
            params[rename.get(k, k)].copy_(torch.from_numpy(np.array(tensors[k])))


def _utf8_order(key):
    return key.encode("utf-8")


def content_xxh64(tensors, data, meta):
    """The file's checksum (docs/english-lm-format.md; mha::safetensors_content_xxh64): XXH64
    (seed 0) of the data section; then per tensor, names in ascending byte order: str(name),
    str(dtype), u64(rank), u64(each dimension), u64(begin), u64(end); then per metadata key other
    than "xxh64", in ascending byte order: str(key), str(value). u64 is 8 bytes little-endian,
    str(s) is u64(len of s's UTF-8 bytes) then those bytes.
    tensors: {name: {"dtype", "shape", "data_offsets"}}; data: bytes; meta: {key: str}."""

    def u64(x):
        return struct.pack("<Q", x)

    def text(s):
        b = s.encode("utf-8")
        return u64(len(b)) + b

    h = xxhash.xxh64(seed=0)
    h.update(data)
    for name in sorted(tensors, key=_utf8_order):
        t = tensors[name]
        h.update(text(name) + text(t["dtype"]) + u64(len(t["shape"])))
        h.update(b"".join(u64(dim) for dim in t["shape"]))
        h.update(u64(t["data_offsets"][0]) + u64(t["data_offsets"][1]))
    for key in sorted(meta, key=_utf8_order):
        if key != "xxh64":
            h.update(text(key) + text(meta[key]))
    return h.hexdigest()


def blocked_ids(tokenizer):
    """The ids the model never predicts: pieces of BLOCKED_TYPES in a tokenizer description
    (english_subwords.describe)."""
    return [i for i, t in enumerate(tokenizer["types"]) if t in BLOCKED_TYPES]


def write_file(path, model, tokenizer, training):
    """Write the model as docs/english-lm-format.md (version 3): safetensors, every tensor F16,
    metadata with the format, config, vocabulary (the tokenizer's pieces), the tokenizer
    (english_subwords.describe), training record and the checksum (content_xxh64). Returns
    (bytes written, xxh64 hex)."""
    vocab = tokenizer["pieces"]
    assert vocab[:2] == SPECIALS and len(vocab) == model.cfg["vocab_size"]
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "xxh64": None,  # placed here in the header; not part of what it covers
        "config": json.dumps(model.cfg, separators=(",", ":"), sort_keys=True),
        "vocab": json.dumps(vocab, separators=(",", ":"), ensure_ascii=True),
        "tokenizer": json.dumps(tokenizer, separators=(",", ":"), ensure_ascii=True),
        "training": json.dumps(training, separators=(",", ":"), sort_keys=True),
    }
    return write_f16_safetensors(path, export_tensors(model), meta, content_xxh64)


def read_parts(path):
    """(tensor entries {name: {...}}, data section bytes, metadata {key: str}) of a model file of
    a version in READABLE_VERSIONS, its format and checksum checked (version 1: the data section
    alone; version 2: content_xxh64)."""
    doc, data, meta = read_safetensors_parts(path)
    assert meta["format"] == FORMAT and meta["format_version"] in READABLE_VERSIONS, meta
    if meta["format_version"] == "1":
        actual = data_xxh64(doc, data, meta)
    else:
        actual = content_xxh64(doc, data, meta)
    assert (
        actual == meta["xxh64"]
    ), f"checksum mismatch: the metadata says xxh64 {meta['xxh64']}, the file hashes to {actual}"
    return doc, data, meta


def read_file(path):
    """(model in eval mode, vocab, metadata); the metadata's "tokenizer" (version 3) describes
    the tokens; checks the format and checksum (read_parts) and the
    layout (common.f16_arrays)."""
    doc, data, meta = read_parts(path)
    tensors = f16_arrays(doc, data)
    cfg = json.loads(meta["config"])
    vocab = json.loads(meta["vocab"])
    tokenizer = json.loads(meta["tokenizer"]) if "tokenizer" in meta else None
    model = EnglishLM(cfg, blocked_ids(tokenizer) if tokenizer else ())
    load_tensors_(model, tensors)
    model.eval()
    return model, vocab, meta


class Vocabulary:
    """A word model's vocabulary (format versions 1 and 2)."""

    def __init__(self, words):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    def encode(self, tokens):
        """Tokens (as written) -> ids with <bos> first; unknown words -> <unk>."""
        return [1] + [self.index.get(normalize(t), 0) for t in tokens]
