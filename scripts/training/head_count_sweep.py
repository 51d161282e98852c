"""The head-count sweep: the English model trained with 1, 2, 4, 8 and 16 heads at the same d_model
(d_head = d_model / num_heads), the same data, steps and seeds, then measured on held-out text.

    /usr/bin/python3 scripts/training/head_count_sweep.py train [--heads 1,2,4,8,16]
        [--steps 600] [--out build/head_sweep]
    PYTHONPATH=build/native/python /usr/bin/python3 scripts/training/head_count_sweep.py report
        [--out build/head_sweep] [--json docs/head_count_sweep.json]

train runs scripts/training/train_english_lm.py once per head count, one after the other (its
fixed seeds and 2 threads; every other setting its default but --steps, --warmup and
--curriculum-steps, which are shortened together so the sweep fits a session: see SWEEP_FLAGS),
writing build/head_sweep/h{N}.safetensors and its log h{N}.log. A model already written is
kept. report measures each model as scripts/training/evaluate_english_lm.py does (its functions):
parameters (the attention's and the total), held-out loss per character, and the best head of
each kind of the core's head report card with its chance, and prints a Markdown table
(docs/head-count-sweep.md holds the committed one) and writes the numbers as JSON.
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
    ap.add_argument("--json", default=os.path.join(ROOT, "docs", "head_count_sweep.json"))
    ap.add_argument("--sentences", type=int, default=1000, help="held-out sentences for the loss")
    ap.add_argument("--windows", type=int, default=100, help="held-out windows for the card")
    return ap.parse_args(argv)


def train(a):
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
    raise SystemExit("report: not written yet")


if __name__ == "__main__":
    np.set_printoptions(precision=2)
    main()
