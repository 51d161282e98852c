r"""The English model's tokens in Python: the page's token rule (web/src/chrome/tokenize.js) and
the form in which the model looks a token up. Needs nothing beyond the standard library, so that
tests/python/test_english_tokens.py checks it against the page's own golden tokens
(tests/fixtures/english_tokenize.json) wherever the Python package's tests run.

Tokens: the page's rule (web/src/chrome/tokenize.js): a word is a run of letters and digits,
optionally joined by an apostrophe (' or U+2019) to another such run ("didn't"); any other
non-space character is a token by itself. The model sees the word lower-cased (ASCII letters
only) with U+2019 written as ' (normalize).
The page's rule is the reference (the C++ tokenizer follows it, tested against tokenize()
itself). TOKEN_RE below is its form in Python's re, where \w is str.isalnum() plus '_': it
splits English text identically and differs only where the page's JS classes do: combining marks
(\p{M}: part of a word in JS, a token of their own here), emoji sequences with modifiers or
zero-width joiners and flag pairs (one token in JS, several here), and invisible format
characters such as U+200B or U+00AD (skipped in JS, tokens here). The test asserts the page's
tokens on every golden text without such characters; on the others, that the tokens hold every
character that is not a space.
"""

import re

# The page's token rule for text (Python's \w covers letters, digits and marks, plus '_').
TOKEN_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*|[^\s\w]|_")


def split_tokens(text):
    """Text -> the page's tokens (as written)."""
    return TOKEN_RE.findall(text)


def normalize(token):
    """A token as the model looks it up: ASCII letters lower-cased, U+2019 written as '."""
    return "".join(
        chr(ord(c) + 32) if "A" <= c <= "Z" else ("'" if c == "\u2019" else c) for c in token
    )
