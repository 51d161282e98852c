"""The training scripts' token rule (scripts/training/english_tokens.py) against the page's own
tokens: tests/fixtures/english_tokenize.json, the golden file of the C++ tokenizer
(tests/core/english_lm_test.cpp) and the JS one (tests/js/english_model.test.mjs).

Python's re has no Unicode property classes, so the rule differs from the page's on combining
marks (category M), format characters (Cf: U+200B, U+200D, U+00AD, ...), emoji modifiers,
U+FE0F and regional-indicator pairs (english_tokens.py's docstring). A golden text without any of
these must split exactly as the page splits it; one with them must keep every character that is
not a space, and at least one such text must be in the file (so the difference stays tested).
"""

import json
import os
import sys
import unicodedata
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "training"))
import english_tokens  # noqa: E402

GOLDEN = os.path.join(ROOT, "tests", "fixtures", "english_tokenize.json")


def rule_differs_on(c):
    """True for a character where Python's classes and the page's differ."""
    cp = ord(c)
    return (
        unicodedata.category(c)[0] == "M"
        or unicodedata.category(c) == "Cf"
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji modifiers (skin tones)
        or 0x1F1E6 <= cp <= 0x1F1FF  # regional indicators
        or cp == 0xFE0F  # emoji presentation selector
    )


class PageTokens(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(GOLDEN, encoding="utf-8") as f:
            cls.cases = json.load(f)["cases"]

    def test_same_tokens_as_the_page(self):
        same = [c for c in self.cases if not any(rule_differs_on(ch) for ch in c["text"])]
        self.assertGreaterEqual(len(same), 10)
        for c in same:
            self.assertEqual(english_tokens.split_tokens(c["text"]), c["tokens"], ascii(c["text"]))

    def test_where_the_classes_differ_no_character_is_lost(self):
        other = [c for c in self.cases if any(rule_differs_on(ch) for ch in c["text"])]
        self.assertGreaterEqual(len(other), 1)
        for c in other:
            kept = "".join(english_tokens.split_tokens(c["text"]))
            self.assertEqual(
                kept, "".join(ch for ch in c["text"] if not ch.isspace()), ascii(c["text"])
            )

    def test_examples(self):
        self.assertEqual(
            english_tokens.split_tokens("Don\u2019t stop, Bob_2!"),
            ["Don\u2019t", "stop", ",", "Bob", "_", "2", "!"],
        )
        self.assertEqual(english_tokens.normalize("Don\u2019T"), "don't")
        self.assertEqual(
            english_tokens.normalize("\u00c9mile"), "\u00c9mile"
        )  # only ASCII lower-cased


if __name__ == "__main__":
    unittest.main()
