"""mha_lab.SubwordTokenizer (the core's mha::SubwordTokenizer) against the sentencepiece library's
golden data, tests/fixtures/english_subword_golden.json (scripts/fixtures/make_subword_golden.py):
ids and spans of every held-out sentence and edge case, spans as str indices, the description as
a dict or JSON text, and bad input as ValueError.
"""

import json
import os
import unittest

import numpy as np

import mha_lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def load(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def golden_spans(text, spans):
    """The golden "begin length length ..." (UTF-8 bytes) as [[begin, end], ...] str indices."""
    v = [int(x) for x in spans.split()]
    char_at = {}
    b = 0
    for i, ch in enumerate(text):
        char_at[b] = i
        b += len(ch.encode("utf-8"))
    char_at[b] = len(text)
    out, at = [], v[0] if v else 0
    for n in v[1:]:
        out.append([char_at[at], char_at[at + n]])
        at += n
    return out


class SubwordTokenizerGolden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.description = load("english_subword_tokenizer.json")
        cls.golden = load("english_subword_golden.json")
        cls.tok = mha_lab.SubwordTokenizer(cls.description)

    def check(self, text, ids, spans):
        """Whether the core's ids and spans of text are the library's."""
        e = self.tok.encode(text)
        want = [int(x) for x in ids.split()]
        return e["ids"].tolist() == want and e["spans"].tolist() == golden_spans(text, spans)

    def test_every_held_out_sentence(self):
        cases = self.golden["held_out"]
        self.assertEqual(len(cases), 11511)
        differ = [text for text, ids, spans in cases if not self.check(text, ids, spans)]
        self.assertEqual(differ, [])

    def test_every_edge_case(self):
        cases = self.golden["edge_cases"]
        differ = [name for name, text, ids, spans in cases if not self.check(text, ids, spans)]
        self.assertEqual(differ, [])
        e = self.tok.encode(cases[0][1] + "x")
        self.assertEqual(e["pieces"], [self.tok.pieces[i] for i in e["ids"]])

    def test_worked_example(self):
        text = "Hello,  World’s 😀!"
        e = self.tok.encode(text)
        self.assertEqual(self.tok.vocab_size, 4096)
        self.assertEqual(e["ids"].dtype, np.int32)
        self.assertEqual(
            e["pieces"],
            ["▁hell", "o", ",", "▁world", "'", "s", "▁"]
            + ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "!"],
        )
        # str indices: the emoji is one character (16), its first three byte pieces empty.
        self.assertEqual(
            e["spans"].tolist(),
            [[0, 4], [4, 5], [5, 6], [6, 13], [13, 14], [14, 15], [15, 16]]
            + [[16, 16]] * 3
            + [[16, 17], [17, 18]],
        )
        self.assertEqual(e["words"], ["Hello", ",", "World’s", "😀", "!"])
        self.assertEqual(e["word_spans"].tolist(), [[0, 5], [5, 6], [8, 15], [16, 17], [17, 18]])
        self.assertEqual(e["word_index"].tolist(), [0, 0, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4])
        self.assertEqual(e["words"], mha_lab.tokenize(text))

    def test_json_text_gives_the_same_tokenizer(self):
        tok = mha_lab.SubwordTokenizer(json.dumps(self.description))
        self.assertEqual(tok.encode("The cat sat.")["ids"].tolist(), [262, 1772, 1265, 4071])

    def test_bad_input_is_a_value_error(self):
        d = dict(self.description, scores=self.description["scores"][1:])
        with self.assertRaisesRegex(ValueError, r"^scores has 4095 entries, pieces has 4096$"):
            mha_lab.SubwordTokenizer(d)
        d = dict(self.description, types=["odd"] + self.description["types"][1:])
        with self.assertRaisesRegex(ValueError, r"types\[0\] must be one of"):
            mha_lab.SubwordTokenizer(d)
        with self.assertRaisesRegex(ValueError, "malformed JSON"):
            mha_lab.SubwordTokenizer('{"type":')
        with self.assertRaisesRegex(ValueError, "as a dict or JSON text, got list"):
            mha_lab.SubwordTokenizer([])
        with self.assertRaisesRegex(ValueError, "text must be a str, got bytes"):
            self.tok.encode(b"abc")
        with self.assertRaisesRegex(ValueError, "a lone surrogate at index 1"):
            self.tok.encode("a\ud800b")
        with self.assertRaisesRegex(ValueError, "more than the limit of 1048576"):
            self.tok.encode("a" * 1048577)


if __name__ == "__main__":
    unittest.main()
