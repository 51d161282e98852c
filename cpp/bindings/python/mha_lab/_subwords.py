"""Readable labels for a subword tokenizer's pieces (mha_lab.readable_tokens): the tokenizer's
marker removed, a piece that continues the previous word shown with a joiner.
"""

import re as _re

from ._input import _token_list

# Subword markers of the tokenizers readable_tokens reads: GPT-2's byte-level BPE marks a piece
# that follows a space with "Ġ", SentencePiece with "▁"; WordPiece marks a piece that continues a
# word with "##".
_GPT2_SPACE = "\u0120"  # Ġ
_SENTENCEPIECE_SPACE = "\u2581"  # ▁
_WORDPIECE_CONTINUES = "##"
# What readable_tokens puts before a piece that continues the previous word.
_JOINER = "\u00b7"  # ·
# A model's special token, left as it is: <s>, </s>, <pad>, <|endoftext|>, <0x0A>, [CLS], [SEP].
_SPECIAL = _re.compile(r"^(<[^<>\s]+>|\[[A-Za-z0-9_]+\])$")


def _subword_scheme(tokens):
    """The subword scheme of `tokens` (a list of str): "gpt2" when a token starts with Ġ, else
    "sentencepiece" when one starts with ▁, else "wordpiece" when one starts with ## followed by
    more; else None."""
    if any(t.startswith(_GPT2_SPACE) for t in tokens):
        return "gpt2"
    if any(t.startswith(_SENTENCEPIECE_SPACE) for t in tokens):
        return "sentencepiece"
    if any(len(t) > 2 and t.startswith(_WORDPIECE_CONTINUES) for t in tokens):
        return "wordpiece"
    return None


def _readable(tokens, scheme):
    """`tokens` (a list of str) as readable_tokens labels them under `scheme`."""
    if scheme is None:
        return list(tokens)
    labels = []
    in_word = False  # whether the previous token was a piece of a word (not a special token)
    for t in tokens:
        if _SPECIAL.match(t):
            labels.append(t)
            in_word = False
            continue
        if scheme == "wordpiece":
            continues = len(t) > 2 and t.startswith(_WORDPIECE_CONTINUES)
            piece = t[2:] if continues else t
        else:
            marker = _GPT2_SPACE if scheme == "gpt2" else _SENTENCEPIECE_SPACE
            starts = t.startswith(marker)
            piece = t[1:] if starts and len(t) > 1 else t
            continues = not starts and in_word
        labels.append(_JOINER + piece if continues and in_word else piece)
        in_word = True
    return labels


def readable_tokens(tokens):
    """Labels for a subword tokenizer's tokens, as ``show`` draws them: the tokenizer's marker
    removed and each word's boundary shown. A piece that starts a word is shown bare; a piece
    that continues the previous word is shown after a "·" (U+00B7). The scheme is read from the
    tokens: any token starting with "Ġ" → GPT-2's byte-level BPE (a piece with Ġ starts a word,
    one without continues the previous word); else any starting with "▁" → SentencePiece (the
    same rule with ▁); else any starting with "##" → WordPiece (a piece with ## continues the
    previous word, one without starts a word); none of these: the tokens are returned as they
    are. Special tokens (``<s>``, ``</s>``, ``<|endoftext|>``, ``<0x0A>``, ``[CLS]``, ``[SEP]``:
    ``<…>`` or ``[…]`` with no spaces) stay as they are, and the piece after one starts a word; so
    does the first token. A token that is the marker alone (a lone "Ġ" or "▁") stays as it is.

        readable_tokens(["<|endoftext|>", "The", "Ġcat", "Ġun", "believ", "ably"])
        # ["<|endoftext|>", "The", "cat", "un", "·believ", "·ably"]
        readable_tokens(["[CLS]", "the", "cat", "sat", "##s", "[SEP]"])
        # ["[CLS]", "the", "cat", "sat", "·s", "[SEP]"]

    ``tokens``: a list or tuple of str, or a numpy array of str. Returns a list of str of the same
    length. Raises ValueError for anything else."""
    if isinstance(tokens, str):
        raise ValueError(
            "tokens must be a list of str (one per token), got one str: split it first "
            "(mha_lab.tokenize) or pass [text]"
        )
    tokens = _token_list(tokens)
    if tokens is None:
        raise ValueError("tokens must be a list of str, got None")
    return _readable(tokens, _subword_scheme(tokens))
