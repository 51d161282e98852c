"""The head report card and its probes (docs/patterns.md "Head report card"): conversions only;
the scores, the probes and the mapping of character spans to tokens are the core's
(cpp/analysis/mha/head_report.hpp, probes.hpp)."""

import json as _json

from . import _core
from ._input import _token_list, _whole


def _word_index(word_index, name):
    if word_index is None:
        return None
    try:
        out = [int(w) for w in word_index]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of whole numbers, got {word_index!r}") from None
    if any(w < 0 for w in out):
        raise ValueError(f"{name} must hold whole numbers from 0, got {out}")
    return out


def _span(value, name):
    try:
        s, e = value
        return (_whole(s, f"{name}[0]", 0, 2**31 - 1), _whole(e, f"{name}[1]", 0, 2**31 - 1))
    except (TypeError, ValueError) as err:
        if isinstance(err, ValueError) and str(err).startswith(name):
            raise
        raise ValueError(f"{name} must be [start, end], two whole numbers; got {value!r}") from None


def _probe_examples(probes, stack):
    if isinstance(probes, dict):
        examples = probes.get("examples")
    else:
        examples = probes
    if not isinstance(examples, (list, tuple)) or not examples:
        raise ValueError(
            "probes must be mha_lab.pronoun_probe()'s or induction_probe()'s dict (or its "
            '"examples" list), each example with "tokens" and "attn" (or "attn_weights") '
            "added"
        )
    out = []
    for i, ex in enumerate(examples):
        name = f"probes examples[{i}]"
        if not isinstance(ex, dict):
            raise ValueError(f"{name} must be a dict")
        attn = ex.get("attn", ex.get("attn_weights"))
        if attn is None or ex.get("tokens") is None:
            raise ValueError(f'{name} needs "tokens" and "attn": run it through your model')
        d = {
            "attn": stack(attn),
            "tokens": _token_list(ex["tokens"], f"{name} tokens"),
            "word_index": _word_index(ex.get("word_index"), f"{name} word_index"),
        }
        if "pronoun" in ex:
            if ex.get("offsets") is None:
                raise ValueError(
                    f'{name} is a pronoun probe and needs "offsets": (start, end) per token, in '
                    "characters of its text"
                )
            d["offsets"] = [_span(o, f"{name} offsets[{t}]") for t, o in enumerate(ex["offsets"])]
            for key in ("pronoun", "antecedent", "other"):
                d[key] = _span(ex[key], f"{name} {key}")
        out.append(d)
    return out


def head_report(attn, tokens, word_index=None, probes=None, *, batch=None):
    """The head report card of attention weights (docs/patterns.md "Head report card"): per head,
    every score of module 03's kinds measured by its paper's protocol — previous token (Voita et
    al. 2019's argmax share, Clark et al. 2019's mean weight), neighbourhood band and argmax
    offset, punctuation, first token, induction (Olsson et al. 2022), same token, and with pronoun
    probes coreference — each with its protocol, its chance baseline on the same rows, the rows
    it averages and the paper's figure; the labels; the best head of each kind.

    ``attn``: self-attention weights (h, n, n), (L, h, n, n) or a Hugging Face
    ``output_attentions`` tuple (read as ``attention_stack``), or None when only ``probes`` are
    scored. ``tokens``: the n tokens (list of str). ``word_index``: the word of each token
    (whole numbers from 0, non-decreasing in steps of 0 or 1); with it every score is by word.
    ``probes``: ``pronoun_probe()``'s or ``induction_probe()``'s dict (or its examples) where
    each example also holds ``tokens``, ``attn`` and, for pronoun sentences, ``offsets`` (the
    characters [start, end) of each token in the example's text, e.g. a Hugging Face tokenizer's
    ``offset_mapping``), optionally ``word_index``. Every example is scored together with ``attn``.

    Returns a dict ``{"by_word", "examples", "layers", "num_heads", "probes", "nearer_name",
    "kinds", "heads": [{"layer", "head", "labels", "scores": [{"name", "protocol", "figure",
    "value", "chance", "count", "offset"?}]}], "best": [...]}``.

    Raises ValueError with the core's message: shapes that differ, weights that are NaN or rows
    that do not sum to 1, tokens of the wrong count, spans that cover no token."""
    from . import attention_stack

    examples = []
    if attn is not None:
        toks = _token_list(tokens)
        if not toks:
            raise ValueError("tokens are required: the n tokens of attn")
        examples.append(
            {
                "attn": attention_stack(attn, batch),
                "tokens": toks,
                "word_index": _word_index(word_index, "word_index"),
            }
        )
    elif tokens is not None or word_index is not None:
        raise ValueError("tokens and word_index describe attn, which is None")
    if probes is not None:
        examples.extend(_probe_examples(probes, attention_stack))
    if not examples:
        raise ValueError("give attn (with tokens) or probes")
    return _json.loads(_core.head_report_json(examples))


def induction_probe(seed=0, count=10):
    """Olsson et al. 2022's induction probe as words: ``count`` examples of 25 distinct words
    (Brown Corpus frequency ranks 101-1100) repeated 4 times, drawn with
    ``numpy.random.RandomState(seed)`` (docs/patterns.md). Returns ``{"probe", "protocol",
    "seed", "length", "repeats", "examples": [{"text", "words"}]}``; run each text through your
    model (with its ``<bos>`` first, if it has one) and score with ``head_report``."""
    return _json.loads(
        _core.induction_probe_json(
            _whole(seed, "seed", 0, 2**32 - 1), _whole(count, "count", 1, 10000)
        )
    )


def pronoun_probe(seed=0, count=40, names=None, places=None):
    """Pronoun sentences for the coreference score: two people introduced with gendered titles
    ("mrs." / "mr." + a name), a place, and the pronoun of one of them at the end ("she" / "he"),
    the antecedent mentioned first in half of them. ``names`` and ``places``: lists of single
    words (default: invented words that are no word of the Brown Corpus). Returns ``{"probe",
    "protocol", "seed", "examples": [{"text", "pronoun", "antecedent", "other",
    "antecedent_first", "template"}]}`` with [start, end) spans in characters of ``text``."""
    for value, name in ((names, "names"), (places, "places")):
        if value is not None and (
            not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value)
        ):
            raise ValueError(f"{name} must be a list of str, got {value!r}")
    return _json.loads(
        _core.pronoun_probe_json(
            _whole(seed, "seed", 0, 2**32 - 1),
            _whole(count, "count", 1, 10000),
            None if names is None else list(names),
            None if places is None else list(places),
        )
    )
