"""Writes an mha_lab.show() file of seeded weights, for tests/browser/show_file.test.mjs and
tests/browser/notebook_themes.test.mjs to open in Chromium.

    PYTHONPATH=build/native/python /usr/bin/python3 tests/notebook/write_show_file.py OUT.html \
        [LAYERS HEADS TOKENS]

The weights: softmax(2 z) over keys, z standard normal from numpy.random.default_rng(8), shape
(LAYERS, HEADS, TOKENS, TOKENS) (default 2, 16, 128); the tokens "w0", "w1", .... Prints one JSON
line: {"html": path, "bytes", "layers", "heads", "tokens": [...], "title", "rows": per layer, head
3's query row 5 (its TOKENS weights)}.
"""
import json
import os
import sys

import numpy as np

import mha_lab

TITLE = "Seeded weights"


def main():
    path = sys.argv[1]
    layers, heads, n = (int(x) for x in sys.argv[2:5]) if len(sys.argv) >= 5 else (2, 16, 128)
    z = np.random.default_rng(8).standard_normal((layers, heads, n, n)) * 2
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    w = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    tokens = [f"w{i}" for i in range(n)]
    mha_lab.show(w if layers > 1 else w[0], tokens, title=TITLE).save_html(path)
    print(
        json.dumps(
            {
                "html": os.path.abspath(path),
                "bytes": os.path.getsize(path),
                "layers": layers,
                "heads": heads,
                "tokens": tokens,
                "title": TITLE,
                "rows": [w[layer, 3, 5].tolist() for layer in range(layers)],
            }
        )
    )


if __name__ == "__main__":
    main()
