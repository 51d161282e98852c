"""Train mha-lab's English language model on the Brown Corpus (CPU, fixed seeds).

    /usr/bin/python3 scripts/training/train_english_lm.py [--out web/english_lm.safetensors]
        [--cache build/corpus | --corpus-file SENTENCES.txt]
        [--checkpoints build/english_lm_checkpoints]

Writes the model (docs/english-lm-format.md, version 3) and a checkpoint of it every --eval-every
steps (step 0 included), and logs its progress to stdout: every --eval-every steps the held-out
loss per character, and the best head's score of each kind (quick versions of
scripts/training/evaluate_english_lm.py, which makes the full report). The corpus and its licence:
scripts/training/brown_corpus.py (fetched with npm at training time, never shipped); --corpus-file
trains on a text file of one sentence a line instead (no network). The model:
scripts/training/english_lm_model.py; its tokens: scripts/training/english_subwords.py (a
SentencePiece BPE model with byte fallback, trained here first, on the training text without the
tokenizer's held-out files). What was tried and measured: docs/english-lm.md.

Recipe (defaults): 3 layers x 8 heads, d_model 128, MLP 512, 4096 subword pieces, windows of 128
tokens, batch 32, AdamW lr 2e-3 with 200 warm-up steps and cosine decay, gradient clipping 1.0.
Positions: a learned bias per head and query-key distance, initialised at zero (no head starts
with a preferred offset: --alibi-slopes and --previous-token-init can set one, for experiments).
Windows: half start at a sentence start after <bos>; half start at any token of the running text,
without <bos> (so that the no-op attention of a head has no <bos> to rest on there; Gu et al.
2024, arXiv:2410.10781). Repetition (the in-context copying induction heads do; Olsson et al.
2022): 25 % of windows carry a run of 5-25 random pieces repeated 2-4 times, 10 % a copy of an
earlier span; in the first --curriculum-steps steps every window starts with such a run.
Coreference: 15 % of windows start with a templated pronoun story (english_templates.py).
Seeds: torch.manual_seed(0), numpy default_rng(0); 2 threads (torch's CPU results depend on it).
Each flag's old short name (--d, --h, --L, --V, --B, --n, --psyn, ...) is an alias of its whole
name.
"""
import argparse
import copy
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brown_corpus  # noqa: E402
import english_lm_model as M  # noqa: E402
import english_subwords  # noqa: E402
import english_templates  # noqa: E402
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
    arg("--d-model", "--d", type=int, default=128)
    arg("--num-heads", "--h", type=int, default=8)
    arg("--num-layers", "--L", type=int, default=3)
    arg("--dim-feedforward", "--ff", type=int, default=512)
    arg(
        "--vocab-size",
        "--V",
        type=int,
        default=4096,
        help="subword pieces of the tokenizer (<unk>, <bos> and 256 bytes included)",
    )
    arg("--seq-len", "--n", type=int, default=128, help="tokens per window")
    arg("--batch-size", "--B", type=int, default=32)
    arg("--lr", type=float, default=2e-3)
    arg("--warmup", "--warm", type=int, default=200, help="warm-up steps")
    arg("--steps", type=int, default=3200)
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
        default=0.1,
        help="windows that carry a copy of an earlier span",
    )
    arg(
        "--repeated-random-fraction",
        "--psyn",
        type=float,
        default=0.25,
        help="windows that carry a run of random pieces, repeated 2-4 times",
    )
    arg("--repeat-min", "--replo", type=int, default=5, help="shortest repeated run")
    arg("--repeat-max", "--rephi", type=int, default=25, help="longest repeated run")
    arg(
        "--common-words",
        "--synK",
        type=int,
        default=2000,
        help="random runs draw from the pieces of frequency rank 100 to 100 + this",
    )
    arg(
        "--curriculum-steps",
        "--cur",
        type=int,
        default=300,
        help="first steps: every window starts with a repeated random run",
    )
    arg(
        "--curriculum-repeat-max",
        "--cur_rhi",
        type=int,
        default=30,
        help="longest run in the curriculum",
    )
    arg("--weight-decay", "--wd", type=float, default=0.0)
    arg(
        "--eval-every",
        "--eval",
        type=int,
        default=400,
        help="steps between quick evaluations and checkpoints",
    )
    arg("--seed", type=int, default=0)
    arg(
        "--init-from",
        help="start from this model file's weights (a second stage; its config and tokenizer "
        "must be the ones these flags make)",
    )
    arg("--threads", type=int, default=2)
    arg(
        "--alibi-slopes",
        "--alibi",
        default="",
        help="initial per-head slopes, e.g. 1,0.5,0.25 (default none: every bias starts at 0)",
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
        default="",
        help="layer.head list whose bias starts peaked at distance 1 (default none)",
    )
    arg(
        "--previous-token-gap",
        "--prev_gap",
        type=float,
        default=6.0,
        help="that bias: 0 at distance 1, minus this elsewhere",
    )
    arg(
        "--no-bos-fraction",
        type=float,
        default=0.5,
        help="windows that start at any token, without <bos>",
    )
    arg(
        "--story-fraction",
        type=float,
        default=0.15,
        help="windows that start with a templated pronoun story",
    )
    arg(
        "--stories-per-window",
        type=int,
        default=1,
        help="stories at the start of such a window, back to back",
    )
    arg("--out", default=os.path.join(ROOT, "web", "english_lm.safetensors"))
    arg(
        "--checkpoints",
        default=os.path.join(ROOT, "build", "english_lm_checkpoints"),
        help="folder of the checkpoints ('' for none)",
    )
    arg(
        "--tokenizer-dir",
        default=os.path.join(ROOT, "build", "english_tokenizer"),
        help="where the SentencePiece model is trained",
    )
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
    """{"train", "held_out", "tokenizer_train": [running-text sentences]} and the corpus's name
    for the file's record."""
    if args.corpus_file:
        with open(args.corpus_file, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        train = [s for i, s in enumerate(lines) if i % 10 != 9]
        held = [s for i, s in enumerate(lines) if i % 10 == 9]
        text = {"train": train, "held_out": held, "tokenizer_train": train}
        return text, f"text file {os.path.basename(args.corpus_file)}"
    return brown_corpus.text_split(args.cache), f"Brown Corpus (npm {brown_corpus.PACKAGE})"


class Batches:
    """Training windows (the recipe of the module docstring). stream: every training sentence's
    ids end to end; starts: where each sentence begins in it."""

    def __init__(self, args, text, sp, rng):
        self.args = args
        self.rng = rng
        self.sp = sp
        ids = [english_subwords.encode(sp, s) for s in text["train"]]
        self.stream = np.array([i for s in ids for i in s], dtype=np.int64)
        starts = np.cumsum([0] + [len(s) for s in ids])[:-1]
        n = args.seq_len
        # Windows start where seq_len tokens follow (and, in a corpus of more than
        # TAIL_SENTENCES sentences, never in its last TAIL_SENTENCES sentences).
        full = int(np.searchsorted(starts, len(self.stream) - n, side="right"))
        self.n_starts = (
            min(len(starts) - TAIL_SENTENCES, full) if len(starts) > TAIL_SENTENCES else full
        )
        if self.n_starts < 1:
            sys.exit(f"train_english_lm: the corpus has no window of {n} tokens")
        self.starts = starts
        self.last_start = int(starts[self.n_starts - 1])
        # Random runs draw pieces of frequency rank 100 .. 100 + common_words (Olsson et al.
        # 2022 leave out the most and the least frequent tokens; in a small corpus the first
        # quarter of the ranks is left out instead), normal pieces only.
        counts = np.bincount(self.stream, minlength=args.vocab_size)
        order = [i for i in np.argsort(-counts, kind="stable") if i >= 258 and counts[i] > 0]
        first = min(100, len(order) // 4)
        self.common = np.array(order[first : first + args.common_words])
        if len(self.common) < 10:
            sys.exit("train_english_lm: too few distinct pieces for the random runs")
        known = {w.lower() for s in text["train"] for w in s.split()}
        self.pools = english_templates.pools(known)

    def repeated_run(self, longest, room):
        """A run of random pieces repeated 2-4 times, at most room tokens long."""
        a, rng = self.args, self.rng
        R = int(rng.integers(a.repeat_min, longest + 1))
        times = int(rng.integers(2, 5))
        times = max(1, min(times, room // R))
        return list(np.tile(rng.choice(self.common, R), times))

    def story(self):
        pool = self.pools["train"]
        return english_subwords.encode(
            self.sp, english_templates.story(self.rng, pool["names"], pool["places"])["text"]
        )

    def batch(self, step):
        """(batch_size, seq_len) ids for this step (the curriculum's in its first steps)."""
        a, rng, n = self.args, self.rng, self.args.seq_len
        X = np.empty((a.batch_size, n), dtype=np.int64)
        for b in range(a.batch_size):
            bos = rng.random() >= a.no_bos_fraction
            if bos:
                s = int(self.starts[rng.integers(self.n_starts)])
            else:
                s = int(rng.integers(0, self.last_start + 1))
            row = list(self.stream[s : s + n])
            head = [1] if bos else []
            u = rng.random()
            if step < a.curriculum_steps:
                head += self.repeated_run(a.curriculum_repeat_max, n // 2)
            elif u < a.story_fraction:
                for _ in range(a.stories_per_window):
                    head += self.story()
            elif u < a.story_fraction + a.repeated_random_fraction:
                run = self.repeated_run(a.repeat_max, n // 2)
                t = int(rng.integers(0, n - len(run) + 1))
                row[t : t + len(run)] = run
            elif u < a.story_fraction + a.repeated_random_fraction + a.repeated_span_fraction:
                R = int(rng.integers(a.repeat_min, a.repeat_max + 1))
                s0 = int(rng.integers(0, n - 2 * R + 1))
                t = int(rng.integers(s0 + R, n - R + 1))
                row[t : t + R] = row[s0 : s0 + R]
            X[b] = (head + row)[:n]
        return torch.from_numpy(X)


def build_model(args, blocked):
    """The model with its initial position biases: zero, or ALiBi slopes on the first
    --alibi-layers layers and the --previous-token-init heads peaked at distance 1 where those
    flags ask for it. blocked: the ids it never predicts."""
    cfg = dict(
        d_model=args.d_model,
        num_heads=args.num_heads,
        num_layers=args.num_layers,
        dim_feedforward=args.dim_feedforward,
        vocab_size=args.vocab_size,
        max_len=max(args.seq_len, 128),
        layer_norm_eps=1e-5,
        relative_bias=bool(args.relative_bias),
        shortformer_positions=bool(args.shortformer_positions),
    )
    model = M.EnglishLM(cfg, blocked)
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


def argmax_previous(w):
    """Per head: share of rows i >= 1 whose largest weight is on key i - 1 (Voita et al. 2019).
    w: (h, n, n)."""
    n = w.shape[-1]
    am = w[:, 1:, :].argmax(-1)
    return (am == torch.arange(0, n - 1)[None]).float().sum(-1).numpy(), n - 1


def quick_evaluate(model, held, sp, batches, rng, args):
    """Held-out loss per character; per head (num_layers, num_heads): the previous-token argmax
    rate, the mean weight on <bos> and on punctuation over held-out rows; Olsson's induction
    score on 10 runs of 25 random pieces repeated 4 times; the coreference choice on 100 stories
    of held-out names (weight from the pronoun's row on the antecedent's title and name against
    the other's)."""
    L, H = args.num_layers, args.num_heads
    model.eval()
    pieces = sp.id_to_piece
    pun = torch.tensor(
        [
            i >= 258
            and not any(c.isalnum() for c in pieces(i).replace("\u2581", ""))
            and pieces(i).replace("\u2581", "") != ""
            for i in range(args.vocab_size)
        ]
    )
    with torch.no_grad():
        nll, chars = 0.0, 0
        prev, first, punct = np.zeros((L, H)), np.zeros((L, H)), np.zeros((L, H))
        rows = 0
        for text in held:
            ids = torch.tensor([[1] + english_subwords.encode(sp, text)][:1])[:, : args.seq_len]
            logits, ws = model(ids, need_weights=True)
            lp = F.log_softmax(logits[0, :-1], -1).gather(1, ids[0, 1:, None])
            nll -= lp.sum().item()
            chars += len(text)
            isp = pun[ids[0]].float()
            for layer, w in enumerate(ws):
                w = w[0]
                prev[layer] += argmax_previous(w)[0]
                first[layer] += w[:, 1:, 0].sum(-1).numpy()
                punct[layer] += (w[:, 1:, :] * isp).sum((-1, -2)).numpy()
            rows += ids.shape[1] - 1
        R = 25
        ind = np.zeros((L, H))
        for _ in range(10):
            seq = list(rng.choice(batches.common, R))
            ids = torch.tensor([[1] + seq * 4])
            _, ws = model(ids, need_weights=True)
            q = torch.arange(R + 1, 4 * R + 1)  # rows of the 2nd-4th copies
            for layer, w in enumerate(ws):
                w = w[0]
                tot = torch.zeros(H)
                for i in q.tolist():
                    # keys right after earlier occurrences of token i
                    k = [j + 1 for j in range(1, i) if ids[0, j] == ids[0, i] and j + 1 < i + 1]
                    tot += w[:, i, k].sum(-1)
                ind[layer] += (tot / len(q)).numpy()
        coref = np.zeros((L, H))
        pool = batches.pools["held_out"]
        stories = 0
        for _ in range(100):
            st = english_templates.story(rng, pool["names"], pool["places"])
            prefix = st["text"][: st["pronoun"]] + st["text"][st["pronoun"] :].split(" ")[0]
            ids = [1] + english_subwords.encode(sp, prefix)
            # each piece's first character in prefix (the leading space of the first is added)
            pos, offs = -1, []
            for i in ids[1:]:
                offs.append(pos)
                pos += len(pieces(i)) if pieces(i).startswith("\u2581") else len(pieces(i))
            offs = np.array(offs) + np.array(
                [1 if pieces(i).startswith("\u2581") else 0 for i in ids[1:]]
            )

            def tok(span):
                return [1 + t for t in range(len(offs)) if span[0] <= offs[t] < span[1]]

            spans = st["mentions"]
            ante = st["antecedent"]
            _, ws = model(torch.tensor([ids]), need_weights=True)
            for layer, w in enumerate(ws):
                row = w[0][:, -1, :]
                a = row[:, tok(spans[ante])].sum(-1)
                o = row[:, tok(spans[1 - ante])].sum(-1)
                coref[layer] += (a > o).float().numpy()
            stories += 1
    model.train()
    return dict(
        loss_per_char=nll / chars,
        prev=prev / rows,
        first=first / rows,
        punct=punct / rows,
        ind=ind / 10,
        coref=coref / stories,
    )


def row_text(m):
    return np.array2string(m, precision=2, separator=",", max_line_width=400).replace("\n", "")


def best(m):
    """'value (layer.head)' of the largest entry."""
    layer, head = np.unravel_index(np.argmax(m), m.shape)
    return f"{m[layer, head]:.2f} ({layer}.{head})"


def main(argv=None):
    a = parse_args(argv)
    seed_and_threads(a.seed, a.threads)
    rng = np.random.default_rng(a.seed)

    text, corpus = load_corpus(a)
    sp = english_subwords.train(text["tokenizer_train"], a.vocab_size, a.tokenizer_dir, a.threads)
    tokenizer = english_subwords.describe(sp)
    batches = Batches(a, text, sp, rng)
    print(
        f"train {len(text['train'])} sentences {len(batches.stream)} pieces;"
        f" held out {len(text['held_out'])}",
        flush=True,
    )
    model = build_model(a, M.blocked_ids(tokenizer))
    if a.init_from:
        first, _, first_meta = M.read_file(a.init_from)
        if first.cfg != model.cfg or json.loads(first_meta["tokenizer"]) != tokenizer:
            sys.exit(f"train_english_lm: {a.init_from} has another config or tokenizer")
        model.load_state_dict(first.state_dict())
        model.train()
    opt, sched = build_optimizer(model, a)
    if a.checkpoints:
        os.makedirs(a.checkpoints, exist_ok=True)

    erng = np.random.default_rng(123)
    held = text["held_out"][:300]
    progress = Progress()
    for step in range(a.steps + 1):
        if step % a.eval_every == 0 or step == a.steps:
            e = quick_evaluate(model, held, sp, batches, erng, a)
            progress.log(
                step,
                [
                    ("loss/char", f"{e['loss_per_char']:.4f}"),
                    ("prev", best(e["prev"])),
                    ("ind", best(e["ind"])),
                    ("coref", best(e["coref"])),
                    ("punct", best(e["punct"])),
                    ("first", best(e["first"])),
                ],
            )
            print("   prev", row_text(e["prev"]), flush=True)
            print("   punct", row_text(e["punct"]), flush=True)
            print("   coref", row_text(e["coref"]), flush=True)
            if a.checkpoints and step < a.steps:
                ck = copy.deepcopy(model)
                round_to_fp16_(ck)
                record = dict(checkpoint_of=os.path.basename(a.out), step=step, seed=a.seed)
                M.write_file(
                    os.path.join(a.checkpoints, f"step_{step:05d}.safetensors"),
                    ck,
                    tokenizer,
                    record,
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
        story_fraction=a.story_fraction,
        stories_per_window=a.stories_per_window,
        no_bos_fraction=a.no_bos_fraction,
        curriculum_steps=a.curriculum_steps,
        alibi_init=a.alibi_slopes,
        bias_lr_multiplier=a.bias_lr_multiplier,
        previous_token_init=a.previous_token_init,
        seconds=round(elapsed),
        threads=a.threads,
        init_from=None
        if not a.init_from
        else {"file": os.path.basename(a.init_from), "xxh64": first_meta["xxh64"]},
        torch=torch.__version__,
    )
    round_to_fp16_(model)
    print(
        "wrote",
        M.write_file(a.out, model, tokenizer, training),
        "in",
        round(elapsed),
        "s",
        flush=True,
    )
    if a.checkpoints:
        M.write_file(
            os.path.join(a.checkpoints, f"step_{a.steps:05d}.safetensors"),
            model,
            tokenizer,
            training,
        )


if __name__ == "__main__":
    main()
