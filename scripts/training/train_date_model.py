#!/usr/bin/python3
"""Train mha-lab's date-translation Transformer and write its model file and golden data.

Run (Debian 12: python3-torch 1.13, python3-numpy, python3-xxhash):
    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/training/train_date_model.py  # ~8-10 min
    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/training/train_date_model.py --fixtures-only
(the second: no training)
Options: --steps N (planned optimizer steps; the learning-rate schedule spans them),
--schedule-minutes M (the decay also completes by M minutes; 0: steps only, bit-repeatable),
--budget-minutes M (stop training after M minutes whatever happens), --target A (stop as soon as
the validation exact match with fp16-rounded weights reaches A), --threads (default 1: on a
shared 2-core machine two threads were 6x slower), --seed, --out-root. See --help and
docs/date-model.md.

Writes (and nothing else):
  web/date_model.safetensors          the model, fp16, as docs/date-model-format.md specifies
  tests/fixtures/date_model_golden.json  golden forward passes for the C++/wasm agreement tests
  tests/fixtures/date_heldout.json    the 2000 held-out examples (and PyTorch's answer to each)

Data: scripts/training/date_data.py (formats, vocabulary, roles). The model: PyTorch's own
nn.TransformerEncoderLayer / nn.TransformerDecoderLayer (post-norm, ReLU, dropout 0,
batch_first) inside nn.TransformerEncoder / nn.TransformerDecoder (with their final LayerNorm), an
nn.Embedding shared by source and target (times embed_scale = sqrt(d_model)), the sinusoidal
encoding of mha::sinusoidal_positional_encoding, and a generator nn.Linear whose weight is the
embedding (tied) and whose bias is its own. The state_dict names are the file's tensor names.

Every accuracy this script reports is measured with the fp16-rounded weights (each weight rounded
to IEEE half and back to float32), i.e. with the weights the file holds; the final figures are
measured again on the model read back from the file.

Golden data (float32 from the fp16-rounded weights): per case the source ids, PyTorch's greedy
output, the teacher-forced decoder input (<bos> + output), logits (T, V) and every attention
weight per layer and head, from an explicit forward that calls each nn.MultiheadAttention with
need_weights=True, average_attn_weights=False; that forward is checked against the modules' own
forward. Float32 values are written as the shortest decimal that round-trips (as
scripts/fixtures/make_fixtures.py does).
"""

import argparse
import datetime
import json
import os
import random
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import date_data as D  # noqa: E402
from common import (  # noqa: E402
    Progress,
    cosine_decay,
    data_xxh64,
    f16_arrays,
    read_safetensors_parts,
    round_to_fp16_,
    seed_and_threads,
    sinusoidal_pe,
    write_f16_safetensors,
)

# The repository root: this file is in scripts/training/.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_PATH = os.path.join(ROOT, "web", "date_model.safetensors")
GOLDEN_PATH = os.path.join(ROOT, "tests", "fixtures", "date_model_golden.json")
HELDOUT_PATH = os.path.join(ROOT, "tests", "fixtures", "date_heldout.json")

MAX_FILE_BYTES = 300_000  # "at most 300 KB", read as 300,000 bytes

# Seeds: training stream, validation set (used to stop), held-out set (reported, never used to
# stop).
TRAIN_SEED = 1234
VALID_SEED = 5678
HELDOUT_SEED = 2026
HELDOUT_COUNT = 2000
VALID_COUNT = 1000

CONFIG = {
    "d_model": 64,
    "num_heads": 4,
    "num_encoder_layers": 2,
    "num_decoder_layers": 2,
    "dim_feedforward": 64,
    "activation": "relu",
    "norm_first": False,
    "layer_norm_eps": 1e-5,
    "max_source_len": 32,
    "max_target_len": D.TARGET_LEN,
    "embed_scale": 8.0,  # sqrt(d_model)
    "tie_embeddings": True,
    "final_norm": True,
}


# ------------------------------------------------------------------------------------------------
# Model
# ------------------------------------------------------------------------------------------------


def causal_mask(t):
    """(t, t) float: 0 on and below the diagonal, -inf above (nn.Transformer's square subsequent
    mask)."""
    return torch.triu(torch.full((t, t), float("-inf")), diagonal=1)


class DateTransformer(nn.Module):
    """Encoder-decoder Transformer with PyTorch's layers; names match the model file's tensors."""

    def __init__(self, cfg, vocab_size):
        super().__init__()
        d, h, ff, eps = (
            cfg["d_model"],
            cfg["num_heads"],
            cfg["dim_feedforward"],
            cfg["layer_norm_eps"],
        )
        assert cfg["activation"] == "relu" and cfg["final_norm"]
        self.cfg = dict(cfg)
        self.embedding = nn.Embedding(vocab_size, d)
        # The same layer settings for the encoder and the decoder.
        layer = dict(
            dropout=0.0,
            activation="relu",
            layer_norm_eps=eps,
            batch_first=True,
            norm_first=cfg["norm_first"],
        )
        enc_layer = nn.TransformerEncoderLayer(d, h, ff, **layer)
        self.encoder = nn.TransformerEncoder(
            enc_layer,
            cfg["num_encoder_layers"],
            norm=nn.LayerNorm(d, eps=eps),
            enable_nested_tensor=False,
        )
        dec_layer = nn.TransformerDecoderLayer(d, h, ff, **layer)
        self.decoder = nn.TransformerDecoder(
            dec_layer, cfg["num_decoder_layers"], norm=nn.LayerNorm(d, eps=eps)
        )
        self.generator = nn.Linear(d, vocab_size)
        if cfg["tie_embeddings"]:
            self.generator.weight = self.embedding.weight
        n_pe = max(cfg["max_source_len"], cfg["max_target_len"] + 1)
        self.register_buffer("pe", sinusoidal_pe(n_pe, d), persistent=False)
        self.embed_scale = float(cfg["embed_scale"])

    def reset_parameters(self):
        # As nn.Transformer: xavier_uniform on every matrix of the encoder and decoder (the copies
        # made by nn.TransformerEncoder would otherwise start identical). Embedding N(0, 1/d), so
        # that embedding * sqrt(d) has unit variance.
        for p in list(self.encoder.parameters()) + list(self.decoder.parameters()):
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        nn.init.normal_(self.embedding.weight, 0.0, self.cfg["d_model"] ** -0.5)
        nn.init.zeros_(self.generator.bias)

    def embed(self, ids):
        return self.embedding(ids) * self.embed_scale + self.pe[: ids.shape[1]]

    def encode(self, src, src_pad):
        return self.encoder(self.embed(src), src_key_padding_mask=src_pad)

    def decode(self, tgt_in, memory, src_pad):
        t = tgt_in.shape[1]
        y = self.decoder(
            self.embed(tgt_in), memory, tgt_mask=causal_mask(t), memory_key_padding_mask=src_pad
        )
        return self.generator(y)

    def forward(self, src, src_pad, tgt_in):
        return self.decode(tgt_in, self.encode(src, src_pad), src_pad)


def export_tensors(model):
    """(name, float32 numpy array) in state_dict order; generator.weight left out when tied."""
    out = []
    for name, t in model.state_dict().items():
        if name == "generator.weight" and model.cfg["tie_embeddings"]:
            continue
        out.append((name, t.detach().cpu().numpy().astype(np.float32)))
    return out


def count_params(model):
    return sum(p.numel() for p in model.parameters())  # tied weight counted once


# ------------------------------------------------------------------------------------------------
# Batches and greedy decoding
# ------------------------------------------------------------------------------------------------


def make_source_batch(texts):
    s = max(len(t) for t in texts)
    src = torch.full((len(texts), s), D.PAD, dtype=torch.long)
    for i, t in enumerate(texts):
        ids = D.encode_source(t)
        src[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
    pad = src == D.PAD
    return src, pad


def make_batch(examples):
    src, pad = make_source_batch([e[0] for e in examples])
    tgt = torch.tensor([D.encode_target(e[1]) for e in examples], dtype=torch.long)
    b = tgt.shape[0]
    tgt_in = torch.cat([torch.full((b, 1), D.BOS, dtype=torch.long), tgt], dim=1)
    tgt_out = torch.cat([tgt, torch.full((b, 1), D.EOS, dtype=torch.long)], dim=1)
    return src, pad, tgt_in, tgt_out


@torch.no_grad()
def greedy_batch(model, texts, chunk=500):
    """Greedy outputs (strings) for a list of inputs. Argmax ties go to the lowest id (first
    max)."""
    model.eval()
    outs = []
    max_t = model.cfg["max_target_len"]
    for k in range(0, len(texts), chunk):
        src, pad = make_source_batch(texts[k : k + chunk])
        memory = model.encode(src, pad)
        ys = torch.full((src.shape[0], 1), D.BOS, dtype=torch.long)
        for _ in range(max_t):
            logits = model.decode(ys, memory, pad)[:, -1, :]
            nxt = logits.argmax(dim=-1, keepdim=True)
            ys = torch.cat([ys, nxt], dim=1)
        outs.extend(D.decode_ids(row[1:].tolist()) for row in ys)
    return outs


def exact_match(model, examples):
    preds = greedy_batch(model, [e[0] for e in examples])
    per_format = {}
    hits = 0
    for e, p in zip(examples, preds):
        ok = p == e[1]
        hits += ok
        f = per_format.setdefault(e[2], [0, 0])
        f[0] += ok
        f[1] += 1
    return hits / len(examples), {k: v[0] / v[1] for k, v in per_format.items()}, preds


def fp16_copy(model):
    m = DateTransformer(model.cfg, len(D.VOCAB))
    m.load_state_dict(model.state_dict())
    round_to_fp16_(m)
    m.eval()
    return m


# ------------------------------------------------------------------------------------------------
# Training
# ------------------------------------------------------------------------------------------------


def train(args, valid, exclude):
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    model = DateTransformer(CONFIG, len(D.VOCAB))
    model.reset_parameters()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)

    def lr_at(step, elapsed=0.0):
        """Linear warmup, then cosine to 5% of the peak. Progress is the larger of
        steps / args.steps and minutes / args.schedule_minutes, so the decay completes in time even
        on a busy machine. That makes the run depend on the machine's speed (the time guard decided
        the committed run); --schedule-minutes 0 turns it off, and then a rerun with the same
        arguments repeats bit for bit on the same machine and library versions."""
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        frac = (step - args.warmup) / max(1, args.steps - args.warmup)
        if args.schedule_minutes > 0:
            frac = max(frac, elapsed / (60.0 * args.schedule_minutes))
        frac = min(1.0, frac)
        return args.lr * cosine_decay(frac, floor=0.05)

    n_formats = len(D.FORMATS)
    progress = Progress()
    budget = args.budget_minutes * 60.0
    history = []
    step = 0
    best = None
    stop_reason = "planned steps done"
    while True:
        if step >= args.steps:
            break
        if lr_at(step, progress.seconds()) <= 0.05 * args.lr * 1.0001 and step > args.warmup:
            stop_reason = f"learning-rate schedule finished ({args.schedule_minutes} min)"
            break
        model.train()
        lr = lr_at(step, progress.seconds())
        for g in opt.param_groups:
            g["lr"] = lr
        batch = [D.sample(rng, rng.randrange(n_formats), exclude) for _ in range(args.batch_size)]
        src, pad, tgt_in, tgt_out = make_batch(batch)
        logits = model(src, pad, tgt_in)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        progress.add_loss(loss.item())
        elapsed = progress.seconds()
        if step % args.eval_every == 0 or step == args.steps or elapsed > budget:
            acc, per_fmt, _ = exact_match(fp16_copy(model), valid)
            elapsed = progress.seconds()
            history.append(
                {
                    "step": step,
                    "seconds": round(elapsed, 1),
                    "loss": round(progress.loss, 5),
                    "valid_exact_match_fp16": acc,
                }
            )
            worst = min(per_fmt.items(), key=lambda kv: kv[1])
            progress.log(
                step,
                [
                    ("lr", f"{lr:.2e}"),
                    ("valid exact (fp16)", f"{acc:.4f}"),
                    ("worst", f"{worst[0]} {worst[1]:.3f}"),
                ],
            )
            if best is None or acc > best[0]:
                best = (acc, step, {k: v.clone() for k, v in model.state_dict().items()})
            if acc >= args.target:
                stop_reason = f"validation exact match {acc:.4f} >= target {args.target}"
                break
            if elapsed > budget:
                stop_reason = f"time budget of {args.budget_minutes} min reached"
                break
    seconds = progress.seconds()
    # Keep the best validated weights (normally the last ones).
    if best is not None and best[1] != step:
        model.load_state_dict(best[2])
        print(f"restoring the weights of step {best[1]} (validation {best[0]:.4f})")
    print(f"training stopped after {step} steps, {seconds:.1f} s: {stop_reason}", flush=True)
    info = {
        "steps": step,
        "best_step": best[1] if best else step,
        "seconds": round(seconds, 1),
        "stop_reason": stop_reason,
        "history": history,
    }
    return model, info


# ------------------------------------------------------------------------------------------------
# The file (safetensors, docs/date-model-format.md)
# ------------------------------------------------------------------------------------------------


def read_safetensors(path):
    """(metadata, {name: float32 array}); checks the format, the xxh64 of the data section and the
    layout (common.f16_arrays)."""
    entries, data, meta = read_safetensors_parts(path)
    assert meta["format"] == "mha-lab-date-model" and meta["format_version"] == "1", meta
    got = data_xxh64(entries, data, meta)
    assert got == meta["xxh64"], (got, meta["xxh64"])
    return meta, f16_arrays(entries, data)


def model_from_file(path):
    meta, tensors = read_safetensors(path)
    cfg = json.loads(meta["config"])
    vocab = json.loads(meta["vocab"])
    assert vocab == D.VOCAB, "vocabulary in the file differs from scripts/training/date_data.py"
    model = DateTransformer(cfg, len(vocab))
    state = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    if cfg["tie_embeddings"]:
        assert "generator.weight" not in state
        state["generator.weight"] = state["embedding.weight"]
    missing = set(model.state_dict().keys()) ^ set(state.keys())
    assert not missing, f"tensor names differ from the model's: {sorted(missing)}"
    model.load_state_dict(state)
    model.eval()
    return model, meta


# ------------------------------------------------------------------------------------------------
# Explicit forward (golden data)
# ------------------------------------------------------------------------------------------------


@torch.no_grad()
def explicit_forward(model, src_ids, tgt_in_ids, hidden_states=False):
    """One sequence, no padding. Returns logits (T, V) and attention weights:
    encoder_self (L_enc, h, S, S), decoder_self (L_dec, h, T, T), cross (L_dec, h, T, S).
    With hidden_states: the encoder output (S, d) and the decoder output (T, d) instead."""
    assert not model.cfg["norm_first"]
    src = torch.tensor([src_ids], dtype=torch.long)
    tgt = torch.tensor([tgt_in_ids], dtype=torch.long)
    x = model.embed(src)
    enc_w = []
    for layer in model.encoder.layers:
        a, w = layer.self_attn(x, x, x, need_weights=True, average_attn_weights=False)
        enc_w.append(w[0])
        x = layer.norm1(x + a)
        x = layer.norm2(x + layer.linear2(F.relu(layer.linear1(x))))
    memory = model.encoder.norm(x)
    y = model.embed(tgt)
    mask = causal_mask(tgt.shape[1])
    dec_w, cross_w = [], []
    for layer in model.decoder.layers:
        a, w = layer.self_attn(
            y, y, y, attn_mask=mask, need_weights=True, average_attn_weights=False
        )
        dec_w.append(w[0])
        y = layer.norm1(y + a)
        a, w = layer.multihead_attn(
            y, memory, memory, need_weights=True, average_attn_weights=False
        )
        cross_w.append(w[0])
        y = layer.norm2(y + a)
        y = layer.norm3(y + layer.linear2(F.relu(layer.linear1(y))))
    y = model.decoder.norm(y)
    if hidden_states:
        return memory[0], y[0]
    logits = model.generator(y)[0]
    return logits, torch.stack(enc_w), torch.stack(dec_w), torch.stack(cross_w)


@torch.no_grad()
def explicit_greedy(model, src_ids):
    """Greedy decoding with the explicit forward; argmax ties to the lowest id (np.argmax)."""
    ids = [D.BOS]
    for _ in range(model.cfg["max_target_len"]):
        logits = explicit_forward(model, src_ids, ids)[0]
        nxt = int(np.argmax(logits[-1].numpy()))
        ids.append(nxt)
        if nxt == D.EOS:
            break
    return ids[1:]


def f32_list(a):
    a = np.asarray(a, dtype=np.float32).ravel()
    assert np.all(np.isfinite(a)), "non-finite float32 value in a fixture"
    out = []
    for x in a:
        s = np.format_float_scientific(x, unique=True)
        d = float(s)
        assert np.float32(d).tobytes() == x.tobytes(), (s, x)
        out.append(d)
    return out


def tensor32(a):
    if isinstance(a, torch.Tensor):
        a = a.detach().cpu().numpy()
    a = np.asarray(a, dtype=np.float32)
    return {"shape": list(a.shape), "data": f32_list(a)}


def fixture_header():
    return {
        "format": "mha-lab-fixture",
        "version": 1,
        "generator": "scripts/training/train_date_model.py",
        "numpy": np.__version__,
        "torch": torch.__version__,
    }


def golden_inputs():
    """(name, input, target or None): every format once, plus odd inputs."""
    rng = random.Random(7)
    cases = []
    dates = [
        datetime.date(2026, 11, 30),
        datetime.date(1900, 1, 1),
        datetime.date(2099, 12, 31),
        datetime.date(1969, 7, 20),
        datetime.date(2000, 2, 29),
        datetime.date(1987, 5, 3),
        datetime.date(2045, 8, 12),
        datetime.date(1912, 4, 15),
        datetime.date(2063, 10, 21),
        datetime.date(1999, 12, 31),
    ]
    cases_fmt = list(range(len(D.FORMATS)))
    rng.shuffle(dates)
    for i in cases_fmt:
        d = dates[i % len(dates)]
        if D.FORMATS[i][4] and not (D.TWO_DIGIT_FIRST_DAY <= d <= D.TWO_DIGIT_LAST_DAY):
            d = datetime.date(2026, 11, 30)
        text, target, fmt, roles = D.render(d, i)
        cases.append({"name": fmt, "input": text, "target": target, "format": fmt, "roles": roles})
    # The example of README and the page ("Nov 30, 2026") is covered when the date lands there;
    # add it explicitly, then the odd ones (no target: the model's answer is what it is).
    extra = [
        ("issue_example", "Nov 30, 2026", "2026-11-30", "mon_d_comma_yyyy", "MMM.DD..YYYY"),
        ("unparseable", "hello", None, None, None),
        ("out_of_range", "31 February 2026", None, "d_month_yyyy", "DD.MMMMMMMM.YYYY"),
    ]
    for name, text, target, fmt, roles in extra:
        assert roles is None or len(roles) == len(text)
        cases.append({"name": name, "input": text, "target": target, "format": fmt, "roles": roles})
    return cases


def make_golden(model, model_xxh64, file_bytes):
    cases = []
    for c in golden_inputs():
        src_ids = D.encode_source(c["input"])
        out_ids = explicit_greedy(model, src_ids)
        output = D.decode_ids(out_ids)
        dec_in = [D.BOS] + [i for i in out_ids if i != D.EOS]  # <bos> + the output's tokens
        logits, enc_w, dec_w, cross_w = explicit_forward(model, src_ids, dec_in)
        # Cross-check against the modules' own forward (nn.TransformerEncoder/Decoder).
        # The encoder output and the decoder's last hidden state (LayerNorm outputs, order 1) agree
        # within 1e-5 absolute; the logits (order 10-30) within 1e-5 relative to their largest
        # value.
        src = torch.tensor([src_ids])
        pad = torch.zeros_like(src, dtype=torch.bool)
        with torch.no_grad():
            memory = model.encode(src, pad)
            hidden = model.decoder(
                model.embed(torch.tensor([dec_in])),
                memory,
                tgt_mask=causal_mask(len(dec_in)),
                memory_key_padding_mask=pad,
            )
            ref = model.generator(hidden)[0]
            mem_x, hid_x = explicit_forward(model, src_ids, dec_in, hidden_states=True)
        diff_mem = (memory[0] - mem_x).abs().max().item()
        diff_hid = (hidden[0] - hid_x).abs().max().item()
        diff = (ref - logits).abs().max().item()
        scale = max(1.0, logits.abs().max().item())
        assert diff_mem <= 1e-5 and diff_hid <= 1e-5 and diff <= 1e-5 * scale, (
            c["input"],
            diff_mem,
            diff_hid,
            diff,
            scale,
        )
        # Batched greedy (the accuracy path) gives the same answer.
        assert greedy_batch(model, [c["input"]])[0] == output, c["input"]
        for w in (enc_w, dec_w, cross_w):
            assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-5)
        t = len(dec_in)
        assert logits.shape == (t, len(D.VOCAB))
        case = dict(c)
        case.update(
            {
                "source_ids": src_ids,
                "output": output,
                "output_ids": out_ids,
                "correct": (output == c["target"]) if c["target"] else None,
                "decoder_input_ids": dec_in,
                "logits": tensor32(logits),
                "attention": {
                    "encoder_self": tensor32(enc_w),
                    "decoder_self": tensor32(dec_w),
                    "cross": tensor32(cross_w),
                },
                "max_abs_diff_vs_module_forward": {
                    "encoder_output": diff_mem,
                    "decoder_output": diff_hid,
                    "logits": diff,
                },
            }
        )
        cases.append(case)
    doc = fixture_header()
    doc.update(
        {
            "description": "Golden forward passes of web/date_model.safetensors "
            "(docs/date-model-format.md) "
            "in float32 from its fp16 weights: source_ids = the input's characters; output = "
            "greedy decoding (argmax, ties to the lowest id, until <eos> or max_target_len); "
            "decoder_input_ids = <bos> + output characters (T = len(output) + 1); logits (T, V) "
            "of that teacher-forced pass (the last row predicts <eos>); attention weights per "
            "layer and head, never averaged: encoder_self (L_enc, h, S, S), decoder_self "
            "(L_dec, h, T, T) with the causal mask, cross (L_dec, h, T, S). Tolerances: "
            "logits 1e-3 absolute, attention 1e-4.",
            "model_file": "web/date_model.safetensors",
            "model_xxh64": model_xxh64,
            "model_xxh64_of": "the data section (equal to the file's __metadata__.xxh64)",
            "model_file_bytes": file_bytes,
            "config": model.cfg,
            "vocab": D.VOCAB,
            "tolerance": {"logits_abs": 1e-3, "attention_abs": 1e-4},
            "cases": cases,
        }
    )
    return doc


def write_json(path, doc):
    text = json.dumps(doc, allow_nan=False, separators=(",", ":"))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.write("\n")
    return len(text) + 1


# ------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--steps", type=int, default=4500, help="planned steps (schedule length)")
    ap.add_argument("--budget-minutes", type=float, default=25.0, help="hard stop for training")
    ap.add_argument(
        "--schedule-minutes",
        type=float,
        default=16.0,
        help="the learning-rate decay completes by then even if steps remain "
        "(0: by the step count only, repeatable)",
    )
    ap.add_argument(
        "--target", type=float, default=0.998, help="stop at this validation exact match"
    )
    ap.add_argument("--batch-size", "--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--label-smoothing", type=float, default=0.0)
    ap.add_argument("--eval-every", type=int, default=500)
    ap.add_argument("--seed", type=int, default=TRAIN_SEED)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--fixtures-only",
        action="store_true",
        help="no training: read web/date_model.safetensors, re-measure the held-out set "
        "and rewrite both fixtures",
    )
    ap.add_argument(
        "--min-heldout",
        type=float,
        default=0.995,
        help="exit non-zero (after writing) if the held-out exact match is below this",
    )
    ap.add_argument(
        "--out-root",
        default=None,
        help="write the three files under this directory (web/, tests/fixtures/) instead "
        "of the repository, e.g. to check that a rerun reproduces the committed file",
    )
    args = ap.parse_args()
    if args.out_root:
        global MODEL_PATH, GOLDEN_PATH, HELDOUT_PATH
        for sub in ("web", os.path.join("tests", "fixtures")):
            os.makedirs(os.path.join(args.out_root, sub), exist_ok=True)
        MODEL_PATH = os.path.join(args.out_root, "web", "date_model.safetensors")
        GOLDEN_PATH = os.path.join(args.out_root, "tests", "fixtures", "date_model_golden.json")
        HELDOUT_PATH = os.path.join(args.out_root, "tests", "fixtures", "date_heldout.json")

    seed_and_threads(args.seed, args.threads)
    wall = time.time()
    if args.fixtures_only:
        write_fixtures_from_file(wall)
        return

    heldout = held_out_set()
    valid = D.balanced_set(random.Random(VALID_SEED), VALID_COUNT)
    # Held-out and validation dates never appear in training, in any format.
    exclude = {datetime.date.fromisoformat(e[1]).toordinal() for e in heldout + valid}
    print(
        f"vocab {len(D.VOCAB)}, formats {len(D.FORMATS)}, held-out {len(heldout)} "
        f"(seed {HELDOUT_SEED}), validation {len(valid)} (seed {VALID_SEED}), "
        f"{len(exclude)} dates excluded from training",
        flush=True,
    )

    model, info = train(args, valid, exclude)
    print(
        f"training time: {info['seconds']:.1f} s ({info['seconds'] / 60:.1f} min), "
        f"{info['steps']} steps of {args.batch_size}",
        flush=True,
    )

    round_to_fp16_(model)
    model.eval()
    acc, per_fmt, _ = exact_match(model, heldout)
    n_params = count_params(model)
    print(
        f"parameters: {n_params}; held-out exact match (fp16 weights, PyTorch): {acc:.4f}",
        flush=True,
    )

    training_meta = {
        "seed": args.seed,
        "steps": info["steps"],
        "best_step": info["best_step"],
        "seconds": info["seconds"],
        "batch_size": args.batch_size,
        "optimizer": "Adam(0.9, 0.98)",
        "lr_peak": args.lr,
        "warmup_steps": args.warmup,
        "schedule": f"linear warmup, cosine to 5% at {args.steps} steps"
        f" or {args.schedule_minutes} min",
        "label_smoothing": args.label_smoothing,
        "stop_reason": info["stop_reason"],
        "heldout_exact_match": acc,
        "heldout_count": len(heldout),
        "heldout_seed": HELDOUT_SEED,
        "heldout_per_format": per_fmt,
        "parameters": n_params,
        "torch": torch.__version__,
        "script": "scripts/training/train_date_model.py",
    }
    metadata = {
        "format": "mha-lab-date-model",
        "format_version": "1",
        "config": json.dumps(model.cfg, separators=(",", ":")),
        "vocab": json.dumps(D.VOCAB, separators=(",", ":"), ensure_ascii=True),
        "training": json.dumps(training_meta, separators=(",", ":")),
    }
    tmp = MODEL_PATH + ".tmp"
    size, digest = write_f16_safetensors(tmp, export_tensors(model), metadata, data_xxh64)
    assert size <= MAX_FILE_BYTES, f"model file is {size} bytes, over {MAX_FILE_BYTES}"
    os.replace(tmp, MODEL_PATH)
    print(f"wrote {os.path.relpath(MODEL_PATH, ROOT)}: {size} bytes, xxh64 {digest}", flush=True)

    # Read it back and measure again from the file; write the fixtures from the file's model.
    acc2 = write_fixtures_from_file(wall, expect=(acc, per_fmt))
    if acc2 < args.min_heldout:
        print(f"held-out exact match {acc2:.4f} is below {args.min_heldout}", file=sys.stderr)
        sys.exit(1)


def held_out_set():
    return D.balanced_set(random.Random(HELDOUT_SEED), HELDOUT_COUNT)


def write_fixtures_from_file(wall, expect=None):
    """Load web/date_model.safetensors (checksum verified), measure the held-out set with it, and
    write tests/fixtures/date_heldout.json and date_model_golden.json. Returns the exact match."""
    loaded, meta = model_from_file(MODEL_PATH)
    digest = meta["xxh64"]
    size = os.path.getsize(MODEL_PATH)
    heldout = held_out_set()
    acc2, per_fmt2, preds = exact_match(loaded, heldout)
    if expect is not None:
        assert (acc2, per_fmt2) == expect, (expect, acc2)
    assert acc2 == json.loads(meta["training"])["heldout_exact_match"], "file metadata disagrees"
    print(
        f"read back {os.path.relpath(MODEL_PATH, ROOT)} ({size} bytes, xxh64 {digest}): held-out "
        f"exact match from the file {acc2:.4f} ({round(acc2 * len(heldout))}/{len(heldout)})",
        flush=True,
    )
    for name in D.FORMAT_NAMES:
        print(f"  {name:22s} {per_fmt2[name]:.4f}")
    wrong = [(e[0], e[1], p) for e, p in zip(heldout, preds) if p != e[1]]
    for w in wrong[:20]:
        print(f"  wrong: {w[0]!r} -> {w[2]!r} (want {w[1]})")

    hd = fixture_header()
    hd.update(
        {
            "description": "Held-out dates for the date model: every format equally often, "
            "dates drawn "
            f"with seed {HELDOUT_SEED} (training never sees these dates, in any format). "
            "roles: one character per input character, Y year, M month, D day, W weekday "
            "name, '.' other. torch_output: PyTorch's greedy answer with the file's fp16 "
            "weights (model_xxh64).",
            "seed": HELDOUT_SEED,
            "count": len(heldout),
            "formats": [{"name": f[0], "example": f[1]} for f in D.FORMATS],
            "model_xxh64": digest,
            "torch_exact_match": acc2,
            "torch_per_format": per_fmt2,
            "examples": [
                {"input": e[0], "target": e[1], "format": e[2], "roles": e[3], "torch_output": p}
                for e, p in zip(heldout, preds)
            ],
        }
    )
    n = write_json(HELDOUT_PATH, hd)
    print(f"wrote {os.path.relpath(HELDOUT_PATH, ROOT)}: {n} bytes", flush=True)

    golden = make_golden(loaded, digest, size)
    n = write_json(GOLDEN_PATH, golden)
    print(
        f"wrote {os.path.relpath(GOLDEN_PATH, ROOT)}: {n} bytes, {len(golden['cases'])} cases",
        flush=True,
    )
    for c in golden["cases"]:
        d = c["max_abs_diff_vs_module_forward"]
        print(
            f"  {c['name']:22s} {c['input']!r:32s} -> {c['output']!r}"
            + ("" if c["correct"] is None else ("  ok" if c["correct"] else "  WRONG"))
            + f"   (explicit vs module: {d['logits']:.1e} logits)"
        )
    print(f"total wall time {time.time() - wall:.1f} s")
    return acc2


if __name__ == "__main__":
    main()
