"""The English model's subword tokenizer (mha_lab.SubwordTokenizer): SentencePiece BPE with byte
fallback, run by the core (mha::SubwordTokenizer; docs/english-lm-format.md "Tokenizer"),
identical to the sentencepiece library on tests/fixtures/english_subword_golden.json.
"""

import json as _json

from . import _core
from ._input import _text


class SubwordTokenizer:
    """A subword tokenizer from its description: the dict of
    ``scripts/training/english_subwords.describe(sp)`` (the English model file's ``tokenizer``
    metadata), or its JSON text. Every field is checked; a bad description raises ValueError with
    the core's message (``scores has 4095 entries, pieces has 4096``).

        tok = mha_lab.SubwordTokenizer(description)
        tok.encode("Hello,  World’s 😀!")["pieces"]
        # ['▁hell', 'o', ',', '▁world', "'", 's', '▁', '<0xF0>', '<0x9F>', '<0x98>', '<0x80>', '!']
    """

    def __init__(self, description):
        if isinstance(description, dict):
            description = _json.dumps(description, ensure_ascii=False)
        elif not isinstance(description, str):
            raise ValueError(
                "SubwordTokenizer needs the tokenizer's description as a dict or JSON text, "
                f"got {type(description).__name__}"
            )
        self._core = _core.SubwordTokenizer(description)

    @property
    def vocab_size(self):
        """V, the number of pieces."""
        return self._core.vocab_size

    @property
    def pieces(self):
        """Every piece's text by id (a list of V str)."""
        return self._core.pieces

    def encode(self, text):
        """``text`` as the sentencepiece library encodes ``prepare(text)`` (ASCII lower-cased,
        U+2019 as '), with where each piece lies and the word it belongs to. For p pieces and w
        words, a dict:

        - ``ids``: (p,) int32 vocabulary ids, without ``<bos>``;
        - ``pieces``: p str, each id's piece (``▁`` a space, ``<0xXX>`` a byte);
        - ``spans``: (p, 2) int32, ``text[b:e]`` is what the piece covers (str indices): a ``▁``
          covers its space and the extra spaces dropped after it, the space added in front
          covers nothing, of one character's byte pieces the last covers it;
        - ``word_index``: (p,) int32, the word of each piece: the first word that ends after the
          piece begins (a lone ``▁`` belongs to the next word; -1 when there are no words);
        - ``words``: w str, ``mha_lab.tokenize(text)``; ``word_spans``: (w, 2) int32.

        Raises ValueError for a text that is not a str, holds a lone surrogate, or has more than
        1,048,576 UTF-8 bytes."""
        return self._core.encode(_text(text))
