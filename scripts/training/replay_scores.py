"""The English model's training replayed: its scores at every checkpoint, for the page's replay
experiment (web/english_lm_replay.json) and docs/head-experiments.md.

    PYTHONPATH=build/native/python /usr/bin/python3 scripts/training/replay_scores.py
        [--checkpoints build/english_lm_checkpoints] [--out web/english_lm_replay.json]

The checkpoints are train_english_lm.py's (every --eval-every steps, step 0 and the end; not
shipped). For each, on held-out text (brown_corpus.text_split "held_out"):
  loss_per_char     summed -log p of every token after <bos> over the characters, on --sentences
                    held-out sentences (evaluate_english_lm.sentence_losses)
  previous_token    the best head's previous-token score (Voita et al. 2019's argmax protocol, the
                    core's head report card) and its chance, on --windows windows of 128 tokens
  induction         the best head's induction score (Olsson et al. 2022's repeated random pieces,
                    evaluate_english_lm's probe) and its chance
  in_context        Olsson et al. 2022's in-context learning score, scaled to this model's 128
                    tokens: the mean loss (nats) of the token at position 100 minus that at
                    position 10 of the same windows (Olsson: the 500th minus the 50th). Negative:
                    later tokens are predicted better, the context helps.
"""
import argparse
import json
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
import evaluate_english_lm as E  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def in_context(model, wins, early=10, late=100):
    """Mean over windows of loss(token at `late`) - loss(token at `early`), nats."""
    diffs = []
    with torch.no_grad():
        for ids in wins:
            logits, _ = model(torch.tensor([ids]))
            lp = F.log_softmax(logits[0].double(), -1)
            loss = -lp[:-1].gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
            # loss[i] scores token i + 1 (position 0 is <bos>).
            diffs.append(float(loss[late - 1] - loss[early - 1]))
    return float(np.mean(diffs))


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--checkpoints", default=os.path.join(ROOT, "build", "english_lm_checkpoints"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "corpus"))
    ap.add_argument(
        "--tokenizer",
        default=os.path.join(ROOT, "build", "english_tokenizer", "english_bpe.model"),
    )
    ap.add_argument("--out", default=os.path.join(ROOT, "web", "english_lm_replay.json"))
    ap.add_argument("--sentences", type=int, default=300)
    ap.add_argument("--windows", type=int, default=50)
    a = ap.parse_args(argv)
    torch.set_num_threads(2)
    import mha_lab

    sp = spm.SentencePieceProcessor(model_file=a.tokenizer)
    text = brown_corpus.text_split(a.cache)
    held = text["held_out"]
    wins = E.windows(sp, held, a.windows, 128)
    counts = np.bincount(
        [i for s in text["train"] for i in english_subwords.encode(sp, s)],
        minlength=sp.vocab_size(),
    )
    order = [i for i in np.argsort(-counts, kind="stable") if i >= 258 and counts[i] > 0]
    pool = np.array(order[100:2100])
    rng = np.random.default_rng(2022)
    ind_ids = [[1] + list(map(int, rng.choice(pool, 25, replace=False))) * 4 for _ in range(10)]
    steps = []
    files = sorted(
        f for f in os.listdir(a.checkpoints) if f.startswith("step_") and f.endswith(".safetensors")
    )
    for f in files:
        model, _, meta = M.read_file(os.path.join(a.checkpoints, f))
        run = E.Runner(model)
        nats, chars, _ = E.sentence_losses(run, sp, held[: a.sentences], model.cfg["max_len"])
        prev = E.best_of(E.card(mha_lab, E.run_examples(run, sp, wins)), "previous_token_argmax")
        ind = E.best_of(E.card(mha_lab, E.run_examples(run, sp, ind_ids)), "induction")
        training = json.loads(meta["training"])
        # A checkpoint's "step"; the final model's "steps" (its last checkpoint is the model).
        step = training.get("step", training.get("steps"))
        steps.append(
            {
                "step": step,
                "file": f,
                "xxh64": meta["xxh64"],
                "loss_per_char": nats / chars,
                "previous_token": {
                    "value": prev[0],
                    "chance": prev[1],
                    "head": f"L{prev[2]} H{prev[3]}",
                },
                "induction": {"value": ind[0], "chance": ind[1], "head": f"L{ind[2]} H{ind[3]}"},
                "in_context": in_context(model, wins),
            }
        )
        print(
            f"step {step:5d}  loss/char {nats / chars:.4f}  prev {prev[0]:.2f}"
            f" (chance {prev[1]:.2f}, L{prev[2]} H{prev[3]})"
            f"  induction {ind[0]:.2f} (chance {ind[1]:.2f})"
            f"  in-context {steps[-1]['in_context']:+.3f}",
            flush=True,
        )
    doc = {
        "checkpoints": os.path.relpath(a.checkpoints, ROOT),
        "sentences": a.sentences,
        "windows": len(wins),
        "in_context_positions": [10, 100],
        "steps": steps,
    }
    with open(a.out, "w") as out:
        json.dump(doc, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
