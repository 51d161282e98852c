"""Measure the English model: language quality, in-context copying, and what every head does.

    /usr/bin/python3 scripts/training/evaluate_english_lm.py [--model web/english_lm.safetensors]
        [--cache build/corpus | --corpus-file SENTENCES.txt] [--heads-out web/english_lm_heads.json]
        [--sentences 1000]

Prints a Markdown report (docs/english-lm.md holds the committed one) and writes the heads' roles
for the page (web/english_lm_heads.json). Everything is measured on held-out Brown sentences
(scripts/training/brown_corpus.py: sample files never trained on; with --corpus-file, the held-out
lines of that file, as scripts/training/train_english_lm.py splits it) and on sequences of random
common words repeated twice. Fixed seeds: the same model gives the same report.

Per head (averaged over all query rows of all held-out sentences, rows of the <bos> excluded where
the score needs an earlier key; definitions as docs/patterns.md):
  previous token   weight on key i-1
  band             mass on keys |i-j| <= 1
  first token      weight on key 0 (<bos>), rows i >= 1
  punctuation      mass on punctuation keys (every character Unicode P*, Sm, Sc or Sk)
  duplicate        mass on earlier copies of the query's token, rows that have one
  induction        on <bos> + R random common words + the same R words: mean weight from a
                   second-copy token to the token after its first occurrence (TransformerLens)
  off costs        held-out perplexity with the head switched off minus with all heads on
Coreference (COREFERENCE below): in short sentences where a pronoun follows two nouns and refers
to one of them, the weight from the pronoun's row to its antecedent and to the other noun, per
head, averaged over the sentences. A head resolves the pronoun when the first is >= 0.5 and larger
than the second. (A causal model's pronoun row sees only the words before it, so every sentence
is decidable from those: gender, or which noun can do what the earlier words say.)
"""
import argparse
import json
import math
import os
import sys
import unicodedata
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brown_corpus  # noqa: E402
import english_lm_model as M  # noqa: E402

# The repository root: this file is in scripts/training/.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def is_punctuation(tok):
    return bool(tok) and all(
        unicodedata.category(c)[0] == "P" or unicodedata.category(c) in ("Sm", "Sc", "Sk")
        for c in tok
    )


# (sentence, pronoun, antecedent, other noun); every word in the trained vocabulary.
COREFERENCE = [
    ("The man saw the girl and he smiled .", "he", "man", "girl"),
    ("The woman met the boy and she laughed .", "she", "woman", "boy"),
    ("The boy gave the woman a book because he liked her .", "he", "boy", "woman"),
    ("The girl followed the man because she was afraid .", "she", "girl", "man"),
    ("The dog followed the car until it was tired .", "it", "dog", "car"),
    ("The animal didn't cross the street because it was too tired .", "it", "animal", "street"),
]


def coreference(run, index, L, H):
    """Per head: mean weight from the pronoun to its antecedent and to the other noun."""
    ante, other = np.zeros((L, H)), np.zeros((L, H))
    for text, pron, a, b in COREFERENCE:
        toks = M.split_tokens(text)
        words = [M.normalize(t) for t in toks]
        assert all(w in index for w in words), [w for w in words if w not in index]
        ids = [1] + [index[w] for w in words]
        _, ws = run(ids)
        q, ka, kb = (1 + words.index(w) for w in (pron, a, b))
        for layer, w in enumerate(ws):
            ante[layer] += w[:, q, ka].numpy()
            other[layer] += w[:, q, kb].numpy()
    return ante / len(COREFERENCE), other / len(COREFERENCE)


def bigram_model(train, vocab):
    """Counts of an interpolated bigram on the model's ids: (unigram probabilities with add-one,
    bigram counts, context counts)."""
    index = {w: i for i, w in enumerate(vocab)}
    uni = np.ones(len(vocab))
    big, ctx = Counter(), Counter()
    for s in train:
        ids = [1] + [index.get(t, 0) for t in s]
        for v, w in zip(ids[:-1], ids[1:]):
            big[(v, w)] += 1
            ctx[v] += 1
            uni[w] += 1
    return uni / uni.sum(), big, ctx


def bigram_logprobs(counts, held_ids, lam):
    """log P(w|v) for every held-out pair, P(w|v) = lam * c(v,w)/c(v) + (1-lam) * (c(w)+1)/(N+V)."""
    uni, big, ctx = counts
    return np.array(
        [
            math.log((1 - lam) * uni[w] + (lam * big[(v, w)] / ctx[v] if ctx[v] else 0.0))
            for ids in held_ids
            for v, w in zip(ids[:-1], ids[1:])
        ]
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(ROOT, "web", "english_lm.safetensors"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "corpus"))
    ap.add_argument(
        "--corpus-file", help="the text file (one sentence a line) the model was trained on"
    )
    ap.add_argument("--heads-out", default=os.path.join(ROOT, "web", "english_lm_heads.json"))
    ap.add_argument("--sentences", type=int, default=1000)
    a = ap.parse_args()
    torch.set_num_threads(2)
    model, vocab, meta = M.read_file(a.model)
    cfg = model.cfg
    L, H, n_max = cfg["num_layers"], cfg["num_heads"], cfg["max_len"]
    if a.corpus_file:
        train, held = brown_corpus.split_text_file(a.corpus_file)
    else:
        train, held = brown_corpus.split(a.cache)
    index = {w: i for i, w in enumerate(vocab)}
    held = [s for s in held if 4 <= len(s) <= n_max - 1][: a.sentences]
    held_ids = [[1] + [index.get(t, 0) for t in s] for s in held]
    punct_id = torch.tensor([is_punctuation(w) and i > 1 for i, w in enumerate(vocab)])

    def run(ids, ablate=None):
        with torch.no_grad():
            logits, ws = model(torch.tensor([ids]), need_weights=True, ablate=ablate)
        return F.log_softmax(logits[0], -1), [w[0] for w in ws]

    # Language quality and per-head scores on held-out sentences.
    lps, top1, top5 = [], 0, 0
    prev, band, first, punct, dup = (np.zeros((L, H)) for _ in range(5))
    rows = 0
    dup_rows = 0
    for ids in held_ids:
        lp, ws = run(ids)
        t = torch.tensor(ids)
        n = len(ids)
        lps.extend(lp[:-1].gather(1, t[1:, None])[:, 0].tolist())
        best = lp[:-1].topk(5, -1).indices
        top1 += (best[:, 0] == t[1:]).sum().item()
        top5 += (best == t[1:, None]).any(-1).sum().item()
        i = torch.arange(1, n)
        near = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs() <= 1
        same = (t[:, None] == t[None, :]) & (torch.arange(n)[None, :] < torch.arange(n)[:, None])
        has = same.any(-1)
        isp = punct_id[t].float()
        for layer, w in enumerate(ws):
            prev[layer] += w[:, i, i - 1].sum(-1).numpy()
            band[layer] += (w * near)[:, 1:].sum((-1, -2)).numpy()
            first[layer] += w[:, 1:, 0].sum(-1).numpy()
            punct[layer] += (w[:, 1:] * isp).sum((-1, -2)).numpy()
            dup[layer] += (w * same)[:, has].sum((-1, -2)).numpy()
        rows += n - 1
        dup_rows += int(has.sum())
    lps = np.array(lps)
    ppl = math.exp(-lps.mean())
    counts = bigram_model(train, vocab)
    # The baseline's interpolation weight is the best of these on the held-out text itself (in
    # the bigram's favour).
    lam_best, big = max(
        ((lam, bigram_logprobs(counts, held_ids, lam)) for lam in (0.5, 0.6, 0.7, 0.8, 0.9)),
        key=lambda x: x[1].mean(),
    )
    ppl_big = math.exp(-big.mean())

    # Copying and induction on random common words repeated twice.
    rng = np.random.default_rng(2024)
    common = np.array([i for i in range(2, min(1002, len(vocab))) if vocab[i][0].isalpha()])
    R, trials = 25, 200
    ind = np.zeros((L, H))
    first_copy = second_copy = 0.0
    for _ in range(trials):
        seq = list(rng.choice(common, R))
        ids = [1] + seq + seq
        lp, ws = run(ids)
        t = torch.tensor(ids)
        got = lp[:-1].gather(1, t[1:, None])[:, 0]
        first_copy += got[1:R].mean().item()  # tokens 2..R (the first is unpredictable)
        second_copy += got[R : 2 * R - 1].mean().item()  # tokens R+2..2R, the same words again
        q = torch.arange(R + 1, 2 * R + 1)
        for layer, w in enumerate(ws):
            ind[layer] += w[:, q, q - R + 1].mean(-1).numpy()
    first_copy /= trials
    second_copy /= trials
    ind /= trials

    # Cost of switching each head off.
    cost = np.zeros((L, H))
    for layer in range(L):
        for h in range(H):
            tot = []
            for ids in held_ids:
                lp, _ = run(ids, ablate={layer: [h]})
                tot.extend(lp[:-1].gather(1, torch.tensor(ids)[1:, None])[:, 0].tolist())
            cost[layer, h] = math.exp(-np.mean(tot)) - ppl

    co_ante, co_other = coreference(run, index, L, H)

    scores = {
        "previous token": prev / rows,
        "nearby tokens": band / rows,
        "first token": first / rows,
        "punctuation": punct / rows,
        "duplicate token": dup / max(dup_rows, 1),
        "induction": ind,
    }
    heads = []
    for layer in range(L):
        for h in range(H):
            # The role: the highest score among the kinds.
            kinds = {k: float(v[layer, h]) for k, v in scores.items()}
            # The band includes key i-1: a head whose band is mostly its previous token is a
            # previous-token head.
            ranked = {
                k: x
                for k, x in kinds.items()
                if not (k == "nearby tokens" and kinds["previous token"] >= x - 0.1)
            }
            role = max(ranked, key=ranked.get)
            heads.append(
                {
                    "layer": layer,
                    "head": h,
                    "role": role if kinds[role] >= 0.5 else "no clear pattern",
                    "score": round(kinds[role], 3),
                    "ablation_cost": round(float(cost[layer, h]), 3),
                    "scores": {k: round(v, 3) for k, v in kinds.items()},
                }
            )
    l_best, h_best = np.unravel_index(np.argmax(co_ante - co_other), co_ante.shape)
    coref = {
        "sentences": [c[0] for c in COREFERENCE],
        "best": {
            "layer": int(l_best),
            "head": int(h_best),
            "antecedent": round(float(co_ante[l_best, h_best]), 3),
            "other": round(float(co_other[l_best, h_best]), 3),
        },
        "resolved": bool(
            co_ante[l_best, h_best] >= 0.5 and co_ante[l_best, h_best] > co_other[l_best, h_best]
        ),
    }
    with open(a.heads_out, "w") as f:
        model_entry = {
            "xxh64": meta["xxh64"],
            "file": os.path.relpath(a.model, ROOT),
            "config": json.loads(meta["config"]),
        }
        json.dump({"model": model_entry, "heads": heads, "coreference": coref}, f, indent=1)
        f.write("\n")

    script = "scripts/training/evaluate_english_lm.py"
    print(f"## Measured ({script}, {len(held)} held-out sentences, {len(lps)} tokens)\n")
    print("| measure | value |\n|---|---|")
    print(f"| perplexity, this model | {ppl:.1f} |")
    print(
        f"| perplexity, interpolated bigram (λ = {lam_best}) on the same tokens | {ppl_big:.1f} |"
    )
    print(f"| top-1 / top-5 next-token accuracy | {top1 / len(lps):.3f} / {top5 / len(lps):.3f} |")
    print(
        f"| copying: mean log-probability, second copy − first ({trials} × {R} random common"
        f" words) | {second_copy - first_copy:+.2f} nats ({first_copy:.2f} → {second_copy:.2f}) |"
    )
    columns = ["previous token", "band", "first token", "punctuation", "duplicate", "induction"]
    print("\n| layer.head | " + " | ".join(columns) + " | off costs (ppl) | role |")
    print("|---|---|---|---|---|---|---|---|---|")
    kinds = ["previous token", "nearby tokens", "first token", "punctuation", "duplicate token"]
    for e in heads:
        s = e["scores"]
        values = " | ".join(f"{s[k]:.2f}" for k in kinds + ["induction"])
        print(f"| {e['layer']}.{e['head']} | {values} | {e['ablation_cost']:+.2f} | {e['role']} |")
    print(
        f"\nCoreference ({len(COREFERENCE)} sentences, weight from the pronoun's row;"
        " antecedent / other noun):\n"
    )
    pairs = [(layer, h) for layer in range(L) for h in range(H)]
    print("| layer.head | " + " | ".join(f"{layer}.{h}" for layer, h in pairs) + " |")
    print("|---|" + "---|" * (L * H))
    weights = [f"{co_ante[layer, h]:.2f} / {co_other[layer, h]:.2f}" for layer, h in pairs]
    print("| antecedent / other | " + " | ".join(weights) + " |")
    resolved = "yes" if coref["resolved"] else "no"
    print(
        f"\nBest: head {l_best}.{h_best}; resolved: {resolved}"
        " (antecedent >= 0.5 and above the other noun)."
    )


if __name__ == "__main__":
    main()
