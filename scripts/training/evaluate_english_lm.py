"""Measure the English model: loss per character against the earlier word model, the head report
card of every head on held-out text and on the probes, the cost of switching each head off, and
the card of each training checkpoint.

    /usr/bin/python3 scripts/training/evaluate_english_lm.py [--model web/english_lm.safetensors]
        [--tokenizer build/english_tokenizer/english_bpe.model] [--baseline FILE]
        [--checkpoints build/english_lm_checkpoints] [--cache build/corpus | --corpus-file F]
        [--heads-out web/english_lm_heads.json]

Prints a Markdown report (docs/english-lm.md holds the committed one) and writes the heads file of
the page (web/english_lm_heads.json). Needs the Python package mha_lab (PYTHONPATH=
build/native/python after ./scripts/build.sh): every head score is the core's head report card
(mha_lab.head_report; definitions, protocols and chance baselines in docs/patterns.md "Head report
card"), computed on the attention weights PyTorch gives for the model file.

Held-out text: the Brown files never trained on (brown_corpus.text_split "held_out"). Measures:
  loss per character   the summed negative log-likelihood (nats) of every token after <bos> of each
                       held-out sentence, over the sentence's characters; the baseline (the earlier
                       word model, format version 2, --baseline) on the same sentences pays for its
                       word tokens, <unk> included, over the same characters
  card, text           --windows windows of <bos> + 127 pieces of running held-out text (each from
                       a sentence start)
  card, induction      Olsson et al. 2022: 10 sequences of <bos> + 25 random pieces (frequency
                       ranks 101-2100 of the training text) repeated 4 times; with the copying score
                       of each head (Elhage et al. 2021: the positive share of the eigenvalues of
                       its OV circuit W_U W_O W_V W_E, layer norms' gains folded in)
  card, coreference    mha_lab.pronoun_probe sentences (the card's probe writer) made of names and
                       places the training stories never used (english_templates.pools
                       "held_out"): the best head is chosen on seed 1 and scored on seed 2
  off costs            loss per character with one head switched off, minus with all on
Fixed seeds: the same model gives the same report.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brown_corpus  # noqa: E402
import english_lm_model as M  # noqa: E402
import english_subwords  # noqa: E402
import english_templates  # noqa: E402
import english_tokens  # noqa: E402

# The repository root: this file is in scripts/training/.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The verbs of the card's pronoun probes (cpp/analysis/mha/probes.cpp's templates) must be verbs
# the training stories never used, so that a probe is no training story.
PROBE_VERBS = {"dined", "phoned", "searched", "sailed", "called"}
assert not set(english_templates.TRAINING_VERBS) & PROBE_VERBS


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    arg = ap.add_argument
    arg("--model", default=os.path.join(ROOT, "web", "english_lm.safetensors"))
    arg(
        "--tokenizer",
        default=os.path.join(ROOT, "build", "english_tokenizer", "english_bpe.model"),
        help="the SentencePiece model the training run wrote (its description must be the file's)",
    )
    arg("--baseline", help="the earlier word model (format version 2) to compare the loss with")
    arg("--checkpoints", help="a folder of checkpoints (step_*.safetensors) to card as well")
    arg("--cache", default=os.path.join(ROOT, "build", "corpus"))
    arg("--corpus-file", help="the text file (one sentence a line) the model was trained on")
    arg("--heads-out", default=os.path.join(ROOT, "web", "english_lm_heads.json"))
    arg("--sentences", type=int, default=1000, help="held-out sentences for the off costs")
    arg(
        "--loss-sentences",
        type=int,
        default=0,
        help="held-out sentences for the loss per character (0: all)",
    )
    arg("--windows", type=int, default=300, help="held-out windows for the card")
    arg("--probes", type=int, default=200, help="pronoun probes scored (and as many to choose on)")
    return ap.parse_args(argv)


def load_text(a):
    if a.corpus_file:
        with open(a.corpus_file, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        return {
            "train": [s for i, s in enumerate(lines) if i % 10 != 9],
            "held_out": [s for i, s in enumerate(lines) if i % 10 == 9],
        }
    return brown_corpus.text_split(a.cache)


class Runner:
    """The model in PyTorch: log-probabilities and attention weights of one sequence of ids."""

    def __init__(self, model):
        self.model = model

    def __call__(self, ids, ablate=None):
        with torch.no_grad():
            logits, ws = self.model(torch.tensor([ids]), need_weights=True, ablate=ablate)
        return F.log_softmax(logits[0].double(), -1), [w[0].numpy() for w in ws]


def sentence_losses(run, sp, sentences, max_len, ablate=None):
    """(summed nats, characters, tokens) over the sentences whose pieces fit in max_len."""
    nats, chars, tokens = 0.0, 0, 0
    for text in sentences:
        ids = [1] + english_subwords.encode(sp, text)
        if len(ids) > max_len:
            continue
        lp, _ = run(ids, ablate)
        t = torch.tensor(ids)
        nats -= lp[:-1].gather(1, t[1:, None]).sum().item()
        chars += len(text)
        tokens += len(ids) - 1
    return nats, chars, tokens


def word_model_losses(path, sentences, sp, max_len):
    """The earlier word model on the same sentences (those whose pieces fit in max_len, as
    sentence_losses keeps them): (summed nats, characters, tokens, unknown tokens)."""
    model, vocab, meta = M.read_file(path)
    assert meta["format_version"] in ("1", "2"), "the baseline is a word model"
    voc = M.Vocabulary(vocab)
    nats, chars, tokens, unknown = 0.0, 0, 0, 0
    for text in sentences:
        if len(english_subwords.encode(sp, text)) + 1 > max_len:
            continue
        ids = voc.encode(english_tokens.split_tokens(text))[: model.cfg["max_len"]]
        with torch.no_grad():
            logits, _ = model(torch.tensor([ids]))
        lp = F.log_softmax(logits[0].double(), -1)
        nats -= lp[:-1].gather(1, torch.tensor(ids)[1:, None]).sum().item()
        chars += len(text)
        tokens += len(ids) - 1
        unknown += sum(1 for i in ids[1:] if i == 0)
    return nats, chars, tokens, unknown


def windows(sp, sentences, count, n):
    """count windows of <bos> + n - 1 pieces of running text, each from a sentence start,
    consecutive windows apart."""
    stream, starts = [], []
    for s in sentences:
        starts.append(len(stream))
        stream.extend(english_subwords.encode(sp, s))
    out, at = [], 0
    for s in starts:
        if s < at or s + n - 1 > len(stream):
            continue
        out.append([1] + stream[s : s + n - 1])
        at = s + n - 1
        if len(out) == count:
            break
    if not out:  # a held-out text shorter than one window: its sentences one by one
        ends = starts[1:] + [len(stream)]
        out = [[1] + stream[b:e][: n - 1] for b, e in zip(starts, ends)][:count]
    return out


def copying_scores(model):
    """(L, h): Elhage et al. 2021's copying score of each head: the eigenvalues of its OV circuit
    from token to logit, W_U W_O^h W_V^h W_E (V x V; LayerNorms' gains folded in: norm1's on the
    value input, the final norm's on the unembedding), computed as the nonzero eigenvalues of
    the d_head x d_head product (W_O^h W_U') (W_E' W_V^h); score = sum of the positive real parts
    over the sum of the absolute values. 1: the head raises the logit of the token it attends to."""
    E = model.embedding.weight.detach().double()  # (V, d)
    g_out = model.norm.weight.detach().double()
    out = []
    for layer in model.layers:
        a = layer.self_attn
        d, h = a.embed_dim, a.num_heads
        dh = d // h
        Wv = a.in_proj_weight.detach().double()[2 * d :]  # (d, d): v = x Wv^T
        Wo = a.out_proj.weight.detach().double()  # (d, d): y = ctx Wo^T
        g1 = layer.norm1.weight.detach().double()
        row = []
        for k in range(h):
            ev = (E * g1) @ Wv[k * dh : (k + 1) * dh].T  # (V, dh) token -> value
            ou = Wo[:, k * dh : (k + 1) * dh].T @ (E * g_out).T  # (dh, V) value -> logit
            lam = torch.linalg.eigvals(ou @ ev)  # (dh) the nonzero eigenvalues of ev @ ou
            row.append(float(lam.real.clamp(min=0).sum() / lam.abs().sum()))
        out.append(row)
    return np.array(out)


def token_offsets(sp, text):
    """[start, end) characters of each piece of text, <bos> first as [0, 0] (SentencePiece's
    spans; prepare() keeps every character's position)."""
    proto = sp.encode(english_subwords.prepare(text), out_type="immutable_proto")
    return [[0, 0]] + [[p.begin, p.end] for p in proto.pieces]


def card(mha_lab, examples):
    """The core's card over examples [{"tokens", "attn", ...}] (mha_lab.head_report)."""
    return mha_lab.head_report(None, None, probes=examples)


def scores_of(report):
    """{(layer, head): {name: score dict}} of a card."""
    return {(h["layer"], h["head"]): {s["name"]: s for s in h["scores"]} for h in report["heads"]}


def best_of(report, name):
    """(value, chance, layer, head) of the head with the largest value of score `name`."""
    best = None
    for key, s in scores_of(report).items():
        v = s[name]["value"]
        if v is not None and (best is None or v > best[0]):
            best = (v, s[name]["chance"], *key)
    return best


def run_examples(run, sp, ids_list, texts=None):
    """[{"tokens", "attn"}] for each id list (with "text" and "offsets" where texts are given)."""
    out = []
    for k, ids in enumerate(ids_list):
        _, ws = run(ids)
        e = {"tokens": [sp.id_to_piece(i) for i in ids], "attn": np.stack(ws)}
        if texts is not None:
            e["text"] = texts[k]
            e["offsets"] = token_offsets(sp, texts[k])
        out.append(e)
    return out


def pronoun_examples(mha_lab, run, sp, seed, count, pool):
    """The card's pronoun probe with held-out names and places, run through the model."""
    doc = mha_lab.pronoun_probe(seed, count, names=pool["names"], places=pool["places"])
    for e in doc["examples"]:
        ids = [1] + english_subwords.encode(sp, e["text"])
        _, ws = run(ids)
        e["tokens"] = [sp.id_to_piece(i) for i in ids]
        e["attn"] = np.stack(ws)
        e["offsets"] = token_offsets(sp, e["text"])
    return doc


ROLE_ORDER = [
    ("previous_token_argmax", "previous token"),
    ("local_band", "neighbourhood"),
    ("punctuation", "punctuation"),
    ("first_token", "first token"),
    ("induction", "induction"),
    ("same_token", "same token (content)"),
]


def role_of(scores, induction_scores, coref):
    """A head's role on the page: the kind whose value is furthest above its chance, when it is
    at least 0.5 (coreference: the head's probe share, at least 0.8)."""
    best, best_gap = "no clear pattern", 0.0
    values = {}
    for name, words in ROLE_ORDER:
        s = induction_scores[name] if name == "induction" else scores[name]
        v, c = s["value"], s["chance"] or 0.0
        if v is None:
            continue
        values[words] = v
        if v >= 0.5 and v - c > best_gap:
            best, best_gap = words, v - c
    if coref is not None and coref >= 0.8 and coref - 0.5 > best_gap:
        best = "coreference"
    return best, values


def main(argv=None):
    a = parse_args(argv)
    torch.set_num_threads(2)
    import mha_lab  # the core's head report card (PYTHONPATH=build/native/python)

    model, vocab, meta = M.read_file(a.model)
    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    assert json.loads(meta["tokenizer"]) == english_subwords.describe(
        sp
    ), f"{a.tokenizer} is not the tokenizer of {a.model}"
    cfg = model.cfg
    L, H, n_max = cfg["num_layers"], cfg["num_heads"], cfg["max_len"]
    run = Runner(model)
    text = load_text(a)
    held = text["held_out"]

    # Loss per character on every held-out sentence that fits, against the word model.
    scored = held[: a.loss_sentences] if a.loss_sentences else held
    nats, chars, tokens = sentence_losses(run, sp, scored, n_max)
    base = word_model_losses(a.baseline, scored, sp, n_max) if a.baseline else None

    # The card on held-out running text, by token and by word.
    wins = windows(sp, held, a.windows, min(128, n_max))
    text_examples = run_examples(run, sp, wins)
    text_card = card(mha_lab, text_examples)

    # Induction (Olsson et al. 2022) on random pieces; copying scores.
    counts = np.bincount(
        [i for s in text["train"] for i in english_subwords.encode(sp, s)], minlength=len(vocab)
    )
    order = [i for i in np.argsort(-counts, kind="stable") if i >= 258 and counts[i] > 0]
    first = min(100, len(order) // 4)  # as the training script's random runs
    pool_ids = np.array(order[first : first + 2000])
    rng = np.random.default_rng(2022)
    ind_ids = [[1] + list(rng.choice(pool_ids, 25, replace=False)) * 4 for _ in range(10)]
    ind_card = card(mha_lab, run_examples(run, sp, [list(map(int, x)) for x in ind_ids]))
    copying = copying_scores(model)

    # Coreference on held-out names and places: choose the head on seed 1, score it on seed 2.
    known = {w.lower() for s in text["train"] for w in s.split()}
    pool = english_templates.pools(known)["held_out"]
    choose = card(mha_lab, pronoun_examples(mha_lab, run, sp, 1, a.probes, pool)["examples"])
    score = card(mha_lab, pronoun_examples(mha_lab, run, sp, 2, a.probes, pool)["examples"])
    chosen = best_of(choose, "coreference")
    coref_of = {k: s["coreference"]["value"] for k, s in scores_of(score).items()}

    # Off costs: loss per character with one head off, on the first --sentences held-out ones.
    few = held[: a.sentences]
    on_nats, on_chars, _ = sentence_losses(run, sp, few, n_max)
    cost = np.zeros((L, H))
    for layer in range(L):
        for h in range(H):
            off, c, _ = sentence_losses(run, sp, few, n_max, ablate={layer: [h]})
            cost[layer, h] = off / c - on_nats / on_chars

    # Checkpoints: the card's best previous-token and induction heads over training.
    steps = []
    if a.checkpoints:
        for f in sorted(os.listdir(a.checkpoints)):
            if not (f.startswith("step_") and f.endswith(".safetensors")):
                continue
            ck, _, _ = M.read_file(os.path.join(a.checkpoints, f))
            ck_run = Runner(ck)
            c_text = card(mha_lab, run_examples(ck_run, sp, wins[:50]))
            c_ind = card(mha_lab, run_examples(ck_run, sp, [list(map(int, x)) for x in ind_ids]))
            ck_nats, ck_chars, _ = sentence_losses(ck_run, sp, few[:300], n_max)
            steps.append(
                {
                    "step": int(f[len("step_") : -len(".safetensors")]),
                    "file": f,
                    "loss_per_char": ck_nats / ck_chars,
                    "previous_token": best_of(c_text, "previous_token_argmax"),
                    "punctuation": best_of(c_text, "punctuation"),
                    "induction": best_of(c_ind, "induction"),
                }
            )

    report = dict(
        a=a,
        meta=meta,
        cfg=cfg,
        loss=(nats, chars, tokens),
        base=base,
        text_card=text_card,
        ind_card=ind_card,
        copying=copying,
        chosen=chosen,
        score_card=score,
        coref_of=coref_of,
        cost=cost,
        steps=steps,
        windows=len(wins),
    )
    write_heads_file(report)
    print_report(report)


def per_head(r):
    """[{layer, head, role, score, ablation_cost, scores, card}] for the heads file."""
    text_scores = scores_of(r["text_card"])
    ind_scores = scores_of(r["ind_card"])
    L, H = r["cfg"]["num_layers"], r["cfg"]["num_heads"]
    heads = []
    for layer in range(L):
        for h in range(H):
            s, si = text_scores[(layer, h)], ind_scores[(layer, h)]
            coref = r["coref_of"][(layer, h)]
            role, values = role_of(s, si, coref)
            # Every score of the card: on held-out text, but induction on Olsson's probe and
            # coreference on the pronoun probe.
            card_rows = [
                dict(row, probe="held-out text")
                for name, row in s.items()
                if name not in ("induction", "coreference")
            ]
            card_rows.append(dict(si["induction"], probe="induction probe"))
            card_rows.append(
                dict(scores_of(r["score_card"])[(layer, h)]["coreference"], probe="pronoun probe")
            )
            heads.append(
                {
                    "layer": layer,
                    "head": h,
                    "role": role,
                    "score": round(float(values.get(role, coref or 0.0)), 3),
                    "ablation_cost": round(float(r["cost"][layer, h]), 4),
                    "copying": round(float(r["copying"][layer, h]), 3),
                    "scores": {k: round(float(v), 3) for k, v in values.items()},
                    "card": [
                        {
                            k: (round(v, 4) if isinstance(v, float) else v)
                            for k, v in row.items()
                            if k in ("name", "value", "chance", "count", "offset", "probe")
                        }
                        for row in card_rows
                    ],
                }
            )
    return heads


def write_heads_file(r):
    a, meta = r["a"], r["meta"]
    protocols = {
        s["name"]: {"protocol": s["protocol"], "figure": s["figure"]}
        for s in r["text_card"]["heads"][0]["scores"]
    }
    nats, chars, _ = r["loss"]
    doc = {
        "model": {
            "xxh64": meta["xxh64"],
            "file": os.path.relpath(os.path.abspath(a.model), ROOT),
            "config": json.loads(meta["config"]),
        },
        "measured": {
            "loss_per_char": round(nats / chars, 4),
            "held_out_windows": r["windows"],
            "pronoun_probes": a.probes,
            "nearer_name": r["score_card"]["nearer_name"],
            "coreference_head": None
            if r["chosen"] is None
            else {"layer": r["chosen"][2], "head": r["chosen"][3]},
        },
        "protocols": protocols,
        "heads": per_head(r),
        "checkpoints": [
            {
                "step": s["step"],
                "loss_per_char": round(s["loss_per_char"], 4),
                "previous_token": round(s["previous_token"][0], 3),
                "induction": round(s["induction"][0], 3),
                "punctuation": round(s["punctuation"][0], 3),
            }
            for s in r["steps"]
        ],
    }
    with open(a.heads_out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def pct(x):
    return "—" if x is None else f"{100 * x:.0f} %"


def print_report(r):
    a = r["a"]
    nats, chars, tokens = r["loss"]
    print(f"## Measured (scripts/training/evaluate_english_lm.py on {os.path.basename(a.model)})\n")
    print("| measure | value |\n|---|---|")
    print(
        f"| loss per character, this model (held-out sentences, {chars:,} characters, "
        f"{tokens:,} pieces) | {nats / chars:.4f} nats ({nats / chars / math.log(2):.3f} bits) |"
    )
    if r["base"]:
        bn, bc, bt, bu = r["base"]
        print(
            f"| loss per character, the earlier word model, same sentences ({bt:,} tokens, "
            f"{bu:,} of them <unk>, {100 * bu / bt:.1f} %) | {bn / bc:.4f} nats "
            f"({bn / bc / math.log(2):.3f} bits) |"
        )
    print("| <unk> or <bos> predicted | never (their logits are −inf) |")
    print()
    text_scores, ind_scores = scores_of(r["text_card"]), scores_of(r["ind_card"])
    print(
        f"Per head: the card on {r['windows']} held-out windows of 128 tokens (token level), "
        "Olsson's induction probe (10 × 25 random pieces × 4), the pronoun probe "
        f"({a.probes} held-out sentences), the copying score and the off cost "
        "(Δ loss per character with the head off). Each cell: value / chance.\n"
    )
    cols = [
        ("previous_token_argmax", "prev (argmax)"),
        ("local_band", "band"),
        ("punctuation", "punct."),
        ("first_token", "first"),
        ("same_token", "same token"),
    ]
    print(
        "| head | "
        + " | ".join(c for _, c in cols)
        + " | induction | copying | coref | off cost | role |"
    )
    print("|---" * (len(cols) + 6) + "|")
    heads = per_head(r)
    for e in heads:
        k = (e["layer"], e["head"])
        s, si = text_scores[k], ind_scores[k]
        cells = [f"{s[n]['value']:.2f} / {s[n]['chance']:.2f}" for n, _ in cols]
        cells.append(f"{si['induction']['value']:.2f} / {si['induction']['chance']:.2f}")
        cells.append(f"{e['copying']:+.2f}")
        cells.append(pct(r["coref_of"][k]))
        cells.append(f"{e['ablation_cost']:+.4f}")
        print(f"| {k[0]}.{k[1]} | " + " | ".join(cells) + f" | {e['role']} |")
    if r["chosen"]:
        v, c, layer, head = r["chosen"]
        print(
            f"\nCoreference: head {layer}.{head}, chosen on seed 1 ({pct(v)} there), picks the "
            f"antecedent in {pct(r['coref_of'][(layer, head)])} of the seed-2 probes (chance 50 %; "
            f"the nearer name is right in {pct(r['score_card']['nearer_name'])})."
        )
    if r["steps"]:
        print("\n| checkpoint | loss/char | best prev (argmax) | best induction | best punct. |")
        print("|---|---|---|---|---|")
        for s in r["steps"]:
            p, i, q = s["previous_token"], s["induction"], s["punctuation"]
            print(
                f"| {s['file']} | {s['loss_per_char']:.4f} | {p[0]:.2f} ({p[2]}.{p[3]}) | "
                f"{i[0]:.2f} ({i[2]}.{i[3]}) | {q[0]:.2f} ({q[2]}.{q[3]}) |"
            )


if __name__ == "__main__":
    main()
