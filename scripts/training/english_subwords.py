"""The English model's subword tokenizer: a SentencePiece BPE model with byte fallback, trained on
the training text by the sentencepiece library (Debian's python3-sentencepiece; Kudo and Richardson
2018, arXiv:1808.06226), and its description as the model file stores it
(docs/english-lm-format.md, metadata key "tokenizer"), which the C++ core encodes with
(cpp/models/mha/subword_tokenizer.*), identically (tests/fixtures/english_subword_golden.json,
written by scripts/fixtures/make_subword_golden.py).

Before SentencePiece sees the text, ASCII A-Z are lower-cased and U+2019 is written as '
(english_tokens.normalize, the page's lookup form). SentencePiece's own normalization is
"identity" (no NFKC); it strips leading and trailing spaces, collapses runs of spaces, adds a
space in front, writes spaces as U+2581 and splits digits. A character outside the vocabulary is
encoded as its UTF-8 bytes (<0x00> ... <0xFF>), so every text has tokens and <unk> never occurs.
Ids: <unk> 0, <bos> 1, the 256 byte pieces 2-257, then the merged pieces and characters.
"""

import os

import sentencepiece as spm

from english_tokens import TOKEN_RE as TOKEN_FINDER
from english_tokens import normalize

# The settings of SentencePieceTrainer.train (every other one at the library's default).
TRAINER_SETTINGS = dict(
    model_type="bpe",
    byte_fallback=True,
    normalization_rule_name="identity",
    split_digits=True,
    unk_id=0,
    bos_id=1,
    eos_id=-1,
    pad_id=-1,
    unk_piece="<unk>",
    bos_piece="<bos>",
    character_coverage=0.9995,
)


def prepare(text):
    """The text as SentencePiece receives it: ASCII lower-cased, U+2019 written as '."""
    return normalize(text)


def train(sentences, vocab_size, folder, threads=2):
    """Train on sentences (running text, one a line) -> the SentencePieceProcessor; writes
    folder/english_bpe.model and folder/english_bpe_train.txt (the text it read)."""
    os.makedirs(folder, exist_ok=True)
    text = os.path.join(folder, "english_bpe_train.txt")
    with open(text, "w", encoding="utf-8") as f:
        for s in sentences:
            f.write(prepare(s) + "\n")
    prefix = os.path.join(folder, "english_bpe")
    spm.SentencePieceTrainer.train(
        input=text,
        model_prefix=prefix,
        vocab_size=vocab_size,
        num_threads=threads,
        minloglevel=2,
        **TRAINER_SETTINGS,
    )
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def piece_type(sp, i):
    if sp.is_unknown(i):
        return "unknown"
    if sp.is_control(i):
        return "control"
    if sp.is_byte(i):
        return "byte"
    if sp.is_unused(i):
        return "unused"
    return "normal"


def describe(sp):
    """The tokenizer as the model file's "tokenizer" metadata holds it (docs/english-lm-format.md):
    pieces, scores and types by id, and the settings the encoder follows."""
    n = sp.get_piece_size()
    return dict(
        type="sentencepiece-bpe",
        prepare="ascii-lowercase",
        add_dummy_prefix=True,
        remove_extra_whitespaces=True,
        byte_fallback=True,
        pieces=[sp.id_to_piece(i) for i in range(n)],
        scores=[sp.get_score(i) for i in range(n)],
        types=[piece_type(sp, i) for i in range(n)],
    )


def encode(sp, text):
    """Text -> ids (without <bos>), as the core encodes it."""
    return sp.encode(prepare(text))


def encode_with_words(sp, text):
    """(ids, pieces, word_index, words) of text: the Python reference of the core's
    SubwordTokenizer::encode. The page's tokens of text (english_tokens.split_tokens) are the
    candidate words; a piece belongs to the one holding the first character it covers that is not
    a space, and a piece that covers none (a lone U+2581, or the leading bytes of a character
    spelt in bytes, which SentencePiece gives an empty span) to the next one. A piece may cover
    several (the piece '".' covers '"' and '.'): the words are then the groups of page tokens
    that no piece crosses, so that every word has a piece and word_index rises in steps of 0 or
    1; a word's text is the text from its first page token to its last. Offsets are in
    characters: prepare() keeps every character's position."""
    proto = sp.encode(prepare(text), out_type="immutable_proto")
    spans = [(m.start(), m.end()) for m in TOKEN_FINDER.finditer(text)]
    ids, pieces, raw = [], [], []
    for p in proto.pieces:
        first = next((c for c in range(p.begin, p.end) if not text[c].isspace()), None)
        at = p.begin if first is None else first
        raw.append(next((k for k, (b, e) in enumerate(spans) if at < e), len(spans) - 1))
        ids.append(p.id)
        pieces.append(p.piece)
    starts = sorted(set(raw))  # the page tokens that start a word
    group = {w: g for g, w in enumerate(starts)}
    ends = [nxt - 1 for nxt in starts[1:]] + [len(spans) - 1]
    words = [text[spans[b][0] : spans[e][1]] for b, e in zip(starts, ends)]
    return ids, pieces, [group[w] for w in raw], words
