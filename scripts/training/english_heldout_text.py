"""Write the English model's held-out text that ships: web/english_lm_heldout.txt.

    /usr/bin/python3 scripts/training/english_heldout_text.py [--count 400] [--cache build/corpus]

One sentence a line, running text: every k-th sentence of the Brown Corpus's held-out files
(brown_corpus.text_split "held_out", files of index % 10 == 9, never trained on), k chosen so that
--count sentences spread over every held-out file and genre. `mha prune` and the page's pruning
experiment measure the loss per character on it (cpp/models/mha/model_pruning.hpp: even lines
choose the heads, odd lines measure). The corpus's README: "Distributed with the permission of the
copyright holder, redistribution permitted" (scripts/training/brown_corpus.py).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brown_corpus  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--cache", default=os.path.join(ROOT, "build", "corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "web", "english_lm_heldout.txt"))
    a = ap.parse_args()
    held = [s for s in brown_corpus.text_split(a.cache)["held_out"] if s.strip()]
    step = len(held) / a.count
    lines = [held[int(k * step)].replace("\n", " ") for k in range(a.count)]
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    print(f"{a.out}: {len(lines)} of {len(held)} held-out sentences (every {step:.2f}th)")


if __name__ == "__main__":
    main()
