"""Train mha-lab's English language model on the Brown Corpus (CPU, fixed seeds).

    /usr/bin/python3 scripts/training/train_english_lm.py [--out web/english_lm.safetensors]
        [--cache build/corpus | --corpus-file SENTENCES.txt]

Writes the model (docs/english-lm-format.md) and logs its progress to stdout: every --eval-every
steps the held-out perplexity, the copying figure and each head's previous-token and induction
scores (quick versions of scripts/training/evaluate_english_lm.py, which makes the full report). The
corpus and its licence: scripts/training/brown_corpus.py (fetched with npm at training time, never
shipped); --corpus-file trains on a text file of one sentence a line instead (no network).
The model: scripts/training/english_lm_model.py. What was tried and measured: docs/english-lm.md.

Recipe (defaults): 2 layers x 4 heads, d_model 64, MLP 256, vocabulary 4000 (86.7 % of training
tokens), sequences of 64 tokens (<bos> + a window of running text), batch 64, AdamW lr 3e-3
with 100 warm-up steps and cosine decay over 4000 steps, gradient clipping 1.0. Positions: a
learned bias per head and query-key distance (no absolute positions); layer 0's heads 0-2
initialised as ALiBi (Press et al. 2022, arXiv:2108.12409) with slopes 1, 1/2, 1/4, head 3 peaked
at distance 1 (a previous-token head from the start). Repetition: 20 % of sequences carry a copy
of an earlier span of 5-20 tokens, 50 % a run of 5-20 random common words followed by the same
run (the in-context copying that induction heads do; Olsson et al. 2022); in the first 600 steps
every sequence starts with such a run of 5-30 words (the curriculum in which the induction head
forms).
Seeds: torch.manual_seed(0), numpy default_rng(0); 2 threads (torch's CPU results depend on it).
Each flag's old short name (--d, --h, --L, --V, --B, --n, --psyn, ...) is an alias of its whole
name.
"""
import argparse
import math
import os
import sys
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brown_corpus  # noqa: E402
import english_lm_model as M  # noqa: E402
from common import Progress, cosine_decay, round_to_fp16_, seed_and_threads  # noqa: E402

# The repository root: this file is in scripts/training/.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Sentences at the end of the training stream that no sequence starts at.
TAIL_SENTENCES = 200


def parse_args(argv=None):
    """The recipe's settings: whole names as the model's config has them, old short names as
    aliases."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    arg = ap.add_argument
    arg("--d-model", "--d", type=int, default=64)
    arg("--num-heads", "--h", type=int, default=4)
    arg("--num-layers", "--L", type=int, default=2)
    arg("--dim-feedforward", "--ff", type=int, default=256)
    arg(
        "--vocab-size",
        "--V",
        type=int,
        default=4000,
        help="<unk>, <bos> and the most frequent training tokens",
    )
    arg("--seq-len", "--n", type=int, default=64, help="tokens per sequence, <bos> included")
    arg("--batch-size", "--B", type=int, default=64)
    arg("--lr", type=float, default=3e-3)
    arg("--warmup", "--warm", type=int, default=100, help="warm-up steps")
    arg("--steps", type=int, default=4000)
    arg(
        "--relative-bias",
        "--rel",
        type=int,
        default=1,
        help="1: a learned bias per head and distance",
    )
    arg(
        "--shortformer-positions",
        "--sf",
        type=int,
        default=0,
        help="1: sinusoidal positions on queries and keys",
    )
    arg(
        "--repeated-span-fraction",
        "--prep",
        type=float,
        default=0.2,
        help="sequences that carry a copy of an earlier span",
    )
    arg(
        "--repeated-random-fraction",
        "--psyn",
        type=float,
        default=0.5,
        help="sequences that carry a run of random common words, then the same run",
    )
    arg("--repeat-min", "--replo", type=int, default=5, help="shortest repeated run")
    arg("--repeat-max", "--rephi", type=int, default=20, help="longest repeated run")
    arg(
        "--common-words",
        "--synK",
        type=int,
        default=1000,
        help="random runs draw from this many most frequent ids",
    )
    arg(
        "--curriculum-steps",
        "--cur",
        type=int,
        default=600,
        help="first steps: every sequence starts with a repeated random run",
    )
    arg(
        "--curriculum-repeat-max",
        "--cur_rhi",
        type=int,
        default=30,
        help="longest run in the curriculum",
    )
    arg("--weight-decay", "--wd", type=float, default=0.0)
    arg("--eval-every", "--eval", type=int, default=200, help="steps between quick evaluations")
    arg("--seed", type=int, default=0)
    arg("--threads", type=int, default=2)
    arg(
        "--alibi-slopes",
        "--alibi",
        default="1,0.5,0.25,0.125",
        help="initial per-head slopes ('' for none)",
    )
    arg(
        "--alibi-layers",
        "--alibi_layers",
        type=int,
        default=1,
        help="layers whose bias starts as ALiBi",
    )
    arg(
        "--bias-lr-multiplier",
        "--blr",
        type=float,
        default=1.0,
        help="learning rate of the biases / --lr",
    )
    arg(
        "--previous-token-init",
        "--prev",
        default="0.3",
        help="layer.head list whose bias starts peaked at distance 1",
    )
    arg(
        "--previous-token-gap",
        "--prev_gap",
        type=float,
        default=6.0,
        help="that bias: 0 at distance 1, minus this elsewhere",
    )
    arg("--out", default=os.path.join(ROOT, "web", "english_lm.safetensors"))
    arg(
        "--cache",
        default=os.path.join(ROOT, "build", "corpus"),
        help="where the Brown Corpus is fetched to",
    )
    arg(
        "--corpus-file", help="train on this text (one sentence a line) instead of the Brown Corpus"
    )
    return ap.parse_args(argv)


def load_corpus(args):
    """(training sentences, held-out sentences, the corpus's name for the file's record)."""
    if args.corpus_file:
        train, held = brown_corpus.split_text_file(args.corpus_file)
        return train, held, f"text file {os.path.basename(args.corpus_file)}"
    train, held = brown_corpus.split(args.cache)
    return train, held, f"Brown Corpus (npm {brown_corpus.PACKAGE})"


def build_vocabulary(train, size):
    """<unk>, <bos> and the size - 2 most frequent training tokens."""
    counts = Counter(t for s in train for t in s)
    vocab = M.SPECIALS + [w for w, _ in counts.most_common(size - 2)]
    if len(vocab) < size:
        sys.exit(
            f"train_english_lm: --vocab-size {size} is more than the corpus's {len(counts)} "
            f"distinct tokens + 2"
        )
    return vocab


class Batches:
    """Training sequences: <bos> + a window of running text, some with a repeated run (the
    recipe of the module docstring). stream: every training sentence's ids end to end."""

    def __init__(self, args, train, vocab, rng):
        self.args = args
        self.rng = rng
        index = M.Vocabulary(vocab).index
        self.stream = np.array([index.get(t, 0) for s in train for t in s], dtype=np.int64)
        starts = np.cumsum([0] + [len(s) for s in train])[:-1]
        # Sequences start at a sentence start: in a corpus of more than TAIL_SENTENCES sentences
        # never in its last TAIL_SENTENCES, and in any corpus only where seq_len - 1 tokens follow.
        full = int(np.searchsorted(starts, len(self.stream) - (args.seq_len - 1), side="right"))
        self.n_starts = (
            min(len(starts) - TAIL_SENTENCES, full) if len(starts) > TAIL_SENTENCES else full
        )
        if self.n_starts < 1:
            sys.exit(f"train_english_lm: the corpus has no window of {args.seq_len - 1} tokens")
        self.starts = starts
        if args.common_words + 2 > len(vocab):
            sys.exit(
                f"train_english_lm: --common-words {args.common_words} is more than the"
                f" vocabulary's "
                f"{len(vocab) - 2} words"
            )
        # Common words for the random runs: ids 2.. of alphabetic tokens.
        self.common = np.array(
            [i for i in range(2, args.common_words + 2) if vocab[i][0].isalpha()]
        )

    def coverage(self):
        return np.mean(self.stream > 0)

    def batch(self, step):
        """(batch_size, seq_len) ids for this step (the curriculum's in its first steps)."""
        a, rng, n = self.args, self.rng, self.args.seq_len
        X = np.empty((a.batch_size, n), dtype=np.int64)
        for b in range(a.batch_size):
            s = self.starts[rng.integers(self.n_starts)]
            row = self.stream[s : s + n - 1].copy()
            u = rng.random()
            if step < a.curriculum_steps:
                # Curriculum: R random common words, the same R again, then running text.
                R = rng.integers(a.repeat_min, a.curriculum_repeat_max + 1)
                seq = rng.choice(self.common, R)
                row[0:R] = seq
                row[R : 2 * R] = seq
            elif u < a.repeated_random_fraction:
                R = rng.integers(a.repeat_min, a.repeat_max + 1)
                seq = rng.choice(self.common, R)
                t = rng.integers(0, n - 1 - 2 * R + 1)
                row[t : t + R] = seq
                row[t + R : t + 2 * R] = seq
            elif u < a.repeated_random_fraction + a.repeated_span_fraction:
                R = rng.integers(a.repeat_min, a.repeat_max + 1)
                s0 = rng.integers(0, n - 1 - 2 * R + 1)
                t = rng.integers(s0 + R, n - 1 - R + 1)
                row[t : t + R] = row[s0 : s0 + R]
            X[b, 0] = 1
            X[b, 1:] = row
        return torch.from_numpy(X)


def build_model(args):
    """The model with its initial position biases: ALiBi slopes on the first --alibi-layers
    layers, then the --previous-token-init heads peaked at distance 1."""
    cfg = dict(
        d_model=args.d_model,
        num_heads=args.num_heads,
        num_layers=args.num_layers,
        dim_feedforward=args.dim_feedforward,
        vocab_size=args.vocab_size,
        max_len=args.seq_len if args.seq_len >= 128 else 128,
        layer_norm_eps=1e-5,
        relative_bias=bool(args.relative_bias),
        shortformer_positions=bool(args.shortformer_positions),
    )
    model = M.EnglishLM(cfg)
    if args.alibi_slopes:
        sl = torch.tensor([float(x) for x in args.alibi_slopes.split(",")])
        with torch.no_grad():
            for layer in range(args.alibi_layers):
                model.layers[layer].relative_bias.copy_(
                    -sl[:, None] * torch.arange(cfg["max_len"]).float()[None]
                )
    if args.previous_token_init:
        with torch.no_grad():
            for lh in args.previous_token_init.split(","):
                layer, head = (int(x) for x in lh.split("."))
                b = torch.full((cfg["max_len"],), -args.previous_token_gap)
                b[1] = 0.0
                model.layers[layer].relative_bias[head].copy_(b)
    return model


def build_optimizer(model, args):
    """AdamW (the biases at --bias-lr-multiplier times --lr) and its schedule: linear warm-up
    times a cosine decay to 0 over --steps."""
    bias = [p for name, p in model.named_parameters() if name.endswith("relative_bias")]
    rest = [p for name, p in model.named_parameters() if not name.endswith("relative_bias")]
    opt = torch.optim.AdamW(
        [{"params": rest}, {"params": bias, "lr": args.lr * args.bias_lr_multiplier}],
        lr=args.lr,
        betas=(0.9, 0.98),
        weight_decay=args.weight_decay,
    )

    def factor(s):
        return min(1, (s + 1) / args.warmup) * cosine_decay(min(1, s / args.steps))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


def quick_evaluate(model, held_ids, vocab, common, rng, args):
    """Held-out perplexity; per head (num_layers, num_heads) the mean weight on the previous token,
    on <bos> and on punctuation over held-out rows; induction and copying on 100 runs of 25
    random common words repeated twice."""
    L, H = args.num_layers, args.num_heads
    model.eval()
    with torch.no_grad():
        tot, count = 0.0, 0
        prev, first, punct = np.zeros((L, H)), np.zeros((L, H)), np.zeros((L, H))
        rows = 0
        pun = torch.tensor(
            [0 < i and not vocab[i][0].isalnum() and i > 1 for i in range(args.vocab_size)]
        )
        for ids in held_ids:
            ids = torch.tensor([ids])
            logits, ws = model(ids, need_weights=True)
            lp = F.log_softmax(logits[0, :-1], -1).gather(1, ids[0, 1:, None])
            tot -= lp.sum().item()
            count += lp.numel()
            n = ids.shape[1]
            isp = pun[ids[0]].float()
            for layer, w in enumerate(ws):
                w = w[0]
                prev[layer] += w[:, torch.arange(1, n), torch.arange(0, n - 1)].sum(-1).numpy()
                first[layer] += w[:, 1:, 0].sum(-1).numpy()
                punct[layer] += (w[:, 1:, :] * isp).sum((-1, -2)).numpy()
            rows += n - 1
        R = 25
        ind = np.zeros((L, H))
        d1 = d2 = 0.0
        for _ in range(100):
            seq = rng.choice(common, R)
            ids = torch.tensor([[1] + list(seq) + list(seq)])
            logits, ws = model(ids, need_weights=True)
            lp = F.log_softmax(logits[0, :-1], -1).gather(1, ids[0, 1:, None])[:, 0]
            d1 += lp[1:R].mean().item()  # predicting tokens 2..R
            d2 += lp[R : 2 * R].mean().item()  # tokens R+1..2R
            q = torch.arange(R + 1, 2 * R + 1)
            kk = q - R + 1
            for layer, w in enumerate(ws):
                ind[layer] += w[0][:, q[:-1], kk[:-1]].mean(-1).numpy()
    model.train()
    return dict(
        ppl=math.exp(tot / count),
        prev=prev / rows,
        first=first / rows,
        punct=punct / rows,
        ind=ind / 100,
        copy=(d2 - d1) / 100,
    )


def row_text(m):
    return np.array2string(m, precision=2, separator=",", max_line_width=200).replace("\n", "")


def main(argv=None):
    a = parse_args(argv)
    seed_and_threads(a.seed, a.threads)
    rng = np.random.default_rng(a.seed)

    train, held, corpus = load_corpus(a)
    vocab = build_vocabulary(train, a.vocab_size)
    batches = Batches(a, train, vocab, rng)
    print(
        f"train {len(train)} sents {len(batches.stream)} tok; held {len(held)};"
        f" cov {batches.coverage():.3f}",
        flush=True,
    )
    model = build_model(a)
    opt, sched = build_optimizer(model, a)

    erng = np.random.default_rng(123)
    index = M.Vocabulary(vocab).index
    held_ids = [[1] + [index.get(t, 0) for t in s] for s in held if 4 <= len(s) <= a.seq_len - 1][
        :1000
    ]
    progress = Progress()
    for step in range(a.steps + 1):
        if step % a.eval_every == 0 or step == a.steps:
            e = quick_evaluate(model, held_ids, vocab, batches.common, erng, a)
            progress.log(
                step,
                [
                    ("ppl", f"{e['ppl']:.1f}"),
                    ("copy", f"{e['copy']:.2f}"),
                    ("prev", row_text(e["prev"])),
                    ("ind", row_text(e["ind"])),
                    ("first", f"{e['first'].max():.2f}"),
                    ("punct", f"{e['punct'].max():.2f}"),
                ],
            )
        if step == a.steps:
            break
        X = batches.batch(step)
        logits, _ = model(X)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, a.vocab_size), X[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        progress.add_loss(loss.item())
    elapsed = progress.seconds()
    training = dict(
        corpus=corpus,
        steps=a.steps,
        batch=a.batch_size,
        seq_len=a.seq_len,
        lr=a.lr,
        warmup=a.warmup,
        seed=a.seed,
        repeated_span_fraction=a.repeated_span_fraction,
        repeated_random_fraction=a.repeated_random_fraction,
        curriculum_steps=a.curriculum_steps,
        alibi_init=a.alibi_slopes,
        bias_lr_multiplier=a.bias_lr_multiplier,
        previous_token_init=a.previous_token_init,
        previous_token_gap=a.previous_token_gap,
        seconds=round(elapsed),
        threads=a.threads,
    )
    round_to_fp16_(model)
    print(
        "wrote", M.write_file(a.out, model, vocab, training), "in", round(elapsed), "s", flush=True
    )


if __name__ == "__main__":
    main()
