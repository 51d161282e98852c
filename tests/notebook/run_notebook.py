"""Writes a notebook whose cells call mha_lab.show_experiment and mha_lab.show, executes it
headlessly (nbclient, Debian's ipykernel on this interpreter) and exports it to HTML (nbconvert's
default template), for tests/browser/notebook.test.mjs to open from file:// in Chromium.

    PYTHONPATH=build/native/python /usr/bin/python3 tests/notebook/run_notebook.py OUT_DIR

Writes OUT_DIR/mha_lab.ipynb (executed) and OUT_DIR/mha_lab.html, and prints one JSON line:
{"html": path, "html_bytes", "outputs": [bytes of each cell's text/html output], "errors": []}.
"""
import json
import os
import sys

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

CELLS = [
    "import mha_lab",
    # Module 08 computed by the element's wasm core in the page.
    "mha_lab.show_experiment(seed=7, tokens=5, d_model=8, num_heads=2,\n"
    '                        text="Heads look at different things")',
    # The same weights computed here and given to the element.
    "r = mha_lab.numpy_experiment(seed=7, tokens=5, d_model=8, num_heads=2)\n"
    'mha_lab.show(r["attn_weights"], ["Heads", "look", "at", "different", "things"])',
    # A second experiment in the same notebook: its own scripts again, no conflict.
    "mha_lab.show_experiment(seed=7, tokens=5, d_model=8, num_heads=2, is_causal=True,\n"
    '                        text="Heads look at different things")',
]


def main():
    out_dir = sys.argv[1]
    # The kernel runs in out_dir: PYTHONPATH's folders (the package) as absolute paths.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p
    )
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.makedirs(out_dir, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": out_dir}}
    ).execute()
    nbformat.write(nb, os.path.join(out_dir, "mha_lab.ipynb"))
    errors = [
        o.get("evalue", "")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    sizes = [
        len(o["data"]["text/html"].encode("utf-8"))
        for c in nb.cells
        for o in c.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]
    body, _ = HTMLExporter().from_notebook_node(nb)
    path = os.path.join(out_dir, "mha_lab.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)
    print(
        json.dumps(
            {
                "html": path,
                "html_bytes": len(body.encode("utf-8")),
                "outputs": sizes,
                "errors": errors,
            }
        )
    )


if __name__ == "__main__":
    main()
