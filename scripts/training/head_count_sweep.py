"""The head-count sweep: the English model trained with 1, 2, 4, 8 and 16 heads at the same d_model
(d_head = d_model / num_heads), the same data, steps and seeds, then measured on held-out text.

    /usr/bin/python3 scripts/training/head_count_sweep.py train [--heads 1,2,4,8,16]
        [--steps 600] [--out build/head_sweep]
    PYTHONPATH=build/native/python /usr/bin/python3 scripts/training/head_count_sweep.py report
        [--out build/head_sweep] [--json web/head_count_sweep.json]

train runs scripts/training/train_english_lm.py once per head count, one after the other (its
fixed seeds and 2 threads; every other setting its default but --steps, --warmup and
--curriculum-steps, which are shortened together so the sweep fits a session: see SWEEP_FLAGS),
writing build/head_sweep/h{N}.safetensors and its log h{N}.log. A model already written is
kept. report measures each model as scripts/training/evaluate_english_lm.py does (its functions):
parameters (the attention's and the total), held-out loss per character, and the best head of
each kind of the core's head report card with its chance, and prints a Markdown table
(docs/head-experiments.md holds the committed one) and writes the numbers as JSON (the page's
sweep experiment reads them). web/english_lm_h1.safetensors is a copy of h1.safetensors.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The settings every model of the sweep shares (the shipped model's recipe, shorter): the warm-up
# and the repetition curriculum shrink with the steps so that most steps see the ordinary mix.
SWEEP_FLAGS = ["--warmup", "100", "--curriculum-steps", "100", "--eval-every", "200"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("command", choices=["train", "report"])
    ap.add_argument("--heads", default="1,2,4,8,16")
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "head_sweep"))
    ap.add_argument("--json", default=os.path.join(ROOT, "web", "head_count_sweep.json"))
    ap.add_argument("--sentences", type=int, default=1000, help="held-out sentences for the loss")
    ap.add_argument("--windows", type=int, default=100, help="held-out windows for the card")
    return ap.parse_args(argv)


def train(a):
    """Train every head count of --heads not yet written."""
    os.makedirs(a.out, exist_ok=True)
    for h in map(int, a.heads.split(",")):
        path = os.path.join(a.out, f"h{h}.safetensors")
        if os.path.exists(path):
            print(f"h={h}: {path} exists, kept", flush=True)
            continue
        cmd = [
            sys.executable,
            os.path.join(HERE, "train_english_lm.py"),
            "--num-heads",
            str(h),
            "--steps",
            str(a.steps),
            *SWEEP_FLAGS,
            "--out",
            path,
            "--checkpoints",
            "",
        ]
        start = time.time()
        with open(os.path.join(a.out, f"h{h}.log"), "w") as log:
            log.write(" ".join(cmd) + "\n")
            log.flush()
            subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True)
        print(f"h={h}: {path} in {time.time() - start:.0f} s", flush=True)


def main(argv=None):
    a = parse_args(argv)
    if a.command == "train":
        train(a)
    else:
        report(a)


def report(a):
    """Measure every model of the sweep and print the table."""
    import sentencepiece as spm
    import torch

    import brown_corpus
    import english_lm_model as M
    import evaluate_english_lm as E
    import mha_lab

    torch.set_num_threads(2)
    summaries = {m["file"]: m for m in mha_lab.models(a.out)}
    held = brown_corpus.text_split(os.path.join(ROOT, "build", "corpus"))["held_out"]
    sp = spm.SentencePieceProcessor(
        model_file=os.path.join(ROOT, "build", "english_tokenizer", "english_bpe.model")
    )
    rows = []
    for h in map(int, a.heads.split(",")):
        file = f"h{h}.safetensors"
        model, _, meta = M.read_file(os.path.join(a.out, file))
        run = E.Runner(model)
        nats, chars, tokens = E.sentence_losses(run, sp, held[: a.sentences], model.cfg["max_len"])
        wins = E.windows(sp, held, a.windows, 128)
        examples = E.run_examples(run, sp, wins)
        scores = E.scores_of(E.card(mha_lab, examples))
        layers = model.cfg["num_layers"]
        roles = [
            [E.role_of(scores[(lay, k)], scores[(lay, k)], None)[0] for k in range(h)]
            for lay in range(layers)
        ]
        best = {}
        for name in ("previous_token_argmax", "local_band", "punctuation", "first_token"):
            v, c, lay, k = E.best_of(
                {
                    "heads": [
                        {"layer": lay, "head": k, "scores": list(s.values())}
                        for (lay, k), s in scores.items()
                    ]
                },
                name,
            )
            best[name] = {"value": v, "chance": c, "head": f"L{lay} H{k}"}
        # Redundancy: each head's Jensen-Shannon distance to the nearest other head of its layer
        # (mha_lab.head_patterns, mean over query rows and windows); none with one head.
        nearest = []
        if h > 1:
            js = np.zeros((layers, h, h))
            for e in examples:
                p = mha_lab.head_patterns(e["attn"])
                for lay, layer in enumerate(p["layers"]):
                    js[lay] += np.array(layer["js_distance"]) / len(examples)
            for lay in range(layers):
                d = js[lay] + np.diag([np.inf] * h)
                nearest.extend(d.min(axis=1).tolist())
        training = json.loads(meta.get("training", "{}"))
        rows.append(
            {
                "num_heads": h,
                "d_head": model.cfg["d_model"] // h,
                "parameters": summaries[file]["parameters"],
                "attention_parameters": summaries[file]["attention_parameters"],
                "position_bias_parameters": summaries[file]["position_bias_parameters"],
                "loss_per_char": nats / chars,
                "sentences": a.sentences,
                "tokens": tokens,
                "best": best,
                "roles": roles,
                "nearest_js": float(np.mean(nearest)) if nearest else None,
                "nearest_js_min": float(np.min(nearest)) if nearest else None,
                "steps": training.get("steps"),
                "seconds": training.get("seconds"),
                "checksum": summaries[file]["checksum"],
            }
        )
    with open(a.json, "w") as f:
        json.dump(
            {"steps": a.steps, "flags": SWEEP_FLAGS, "windows": a.windows, "models": rows},
            f,
            indent=1,
        )
        f.write("\n")
    print_table(rows)


def print_table(rows):
    print(
        "| heads | d_head | parameters (attention, position bias) | loss/char | "
        "previous token (Voita argmax) | neighbourhood (band) | roles by layer | "
        "nearest other head (JS) | training |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = r["best"]
        roles = " / ".join(", ".join(sorted(set(x))) for x in r["roles"])
        js = (
            "—"
            if r["nearest_js"] is None
            else f"{r['nearest_js']:.2f} (min {r['nearest_js_min']:.2f})"
        )
        print(
            f"| {r['num_heads']} | {r['d_head']} | {r['parameters']:,} "
            f"({r['attention_parameters']:,}, {r['position_bias_parameters']:,}) | "
            f"{r['loss_per_char']:.4f} | "
            f"{b['previous_token_argmax']['value']:.2f} (chance "
            f"{b['previous_token_argmax']['chance']:.2f}, {b['previous_token_argmax']['head']}) | "
            f"{b['local_band']['value']:.2f} (chance {b['local_band']['chance']:.2f}) | "
            f"{roles} | {js} | {r['steps']} steps, {r['seconds']} s |"
        )


if __name__ == "__main__":
    np.set_printoptions(precision=2)
    main()
