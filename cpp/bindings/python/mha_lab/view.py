"""show() and show_experiment(): the <mha-attention> element in a notebook, with its script (and
for the seeded experiment the wasm core) inline, so that nothing is requested from anywhere; and
a picture without JavaScript (SVG grids and the head-pattern table) for where scripts do not run.

Shape legend: n query tokens, m key tokens, h heads, L layers.
"""
import base64
import html
import json
import math
import os
import struct
import uuid
import zlib

import numpy as np

from . import _core  # noqa: F401 (the view loads with the compiled core, as the package does)
from ._viridis import VIRIDIS

# The picture without JavaScript: up to this many weights in all, an SVG grid per head (a
# rectangle and a tooltip per cell, about 200 bytes each); above, a PNG image per head, which
# costs at most a byte per pixel before compression.
_STATIC_MAX_CELLS = 20_000
# The PNG images of all heads together hold at most this many pixels: one pixel per weight up to
# it, above it each head is shrunk by the smallest whole factor k that fits (a pixel is the mean
# of a k × k block of weights).
_STATIC_MAX_PIXELS = 1 << 19
# The longer side of a head's PNG as shown, in CSS px (each pixel a square of whole CSS px, at
# least one).
_PNG_SHOWN = 352

_ELEMENT_SCRIPT = "mha-attention.js"
_CORE_SCRIPT = "mha_wasm_core.js"


def _asset_dirs():
    """Folders searched for the element's script and the wasm core, in order: $MHA_LAB_DIST, the
    package's own web/ folder (an installed copy), the repository's dist/ (a build tree)."""
    dirs = []
    if os.environ.get("MHA_LAB_DIST"):
        dirs.append(os.environ["MHA_LAB_DIST"])
    dirs.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "web"))
    try:
        from ._build_info import DIST_DIR

        dirs.append(DIST_DIR)
    except ImportError:
        pass
    return dirs


def _asset(name):
    """The text of a built script (dist/<name>), ready to sit inside a <script> element."""
    for d in _asset_dirs():
        path = os.path.join(d, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if "</script" in text.lower():
                raise ValueError(f"{path} holds '</script' and cannot be inlined")
            return text
    raise ValueError(
        f"{name} not found in {', '.join(_asset_dirs())}: run ./scripts/build.sh, "
        "or set MHA_LAB_DIST to a folder holding mha-attention.js and "
        "mha_wasm_core.js"
    )


def _colour(w):
    """Weight w's colour as the page draws it: viridis colour floor(w * 256) of 256, clamped."""
    i = min(max(int(math.floor(min(max(float(w), 0.0), 1.0) * 256)), 0), 255)
    return "#%02x%02x%02x" % VIRIDIS[i]


def _cut(token, most=12):
    """A label of at most `most` characters: a longer token is cut and ends in "…"."""
    return token if len(token) <= most else token[: most - 1] + "…"


def _svg_grid(weights, query_tokens, key_tokens, title):
    """One head's (n, m) weights as an SVG grid: query tokens down, key tokens across. Its labels
    are filled with currentColor: the host's text colour, readable on the host's background in a
    light or a dark notebook theme (SVG text is black by default)."""
    n, m = weights.shape
    cell = 22 if max(n, m) <= 16 else max(4, 352 // max(n, m))
    label_w = 8 + 7 * min(12, max((len(t) for t in query_tokens), default=1))
    label_h = 8 + 7 * min(12, max((len(t) for t in key_tokens), default=1))
    width, height = label_w + m * cell + 2, label_h + n * cell + 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html.escape(title)}" fill="currentColor" '
        'style="font:11px sans-serif">',
        f"<title>{html.escape(title)}</title>",
    ]
    if cell >= 10:
        for i, t in enumerate(query_tokens):
            parts.append(
                f'<text x="{label_w - 4}" y="{label_h + i * cell + cell * 0.7:.1f}" '
                f'text-anchor="end">{html.escape(_cut(t))}</text>'
            )
        for j, t in enumerate(key_tokens):
            x, y = label_w + j * cell + cell * 0.7, label_h - 4
            parts.append(
                f'<text x="{x:.1f}" y="{y}" transform="rotate(-90 {x:.1f} {y})">'
                f"{html.escape(_cut(t))}</text>"
            )
    for i in range(n):
        for j in range(m):
            w = weights[i, j]
            parts.append(
                f'<rect x="{label_w + j * cell}" y="{label_h + i * cell}" width="{cell}" '
                f'height="{cell}" fill="{_colour(w)}"><title>{html.escape(query_tokens[i])}'
                f" → {html.escape(key_tokens[j])}: {w:.3f}</title></rect>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _palette():
    """Viridis as 256 RGB entries: entry i is the colour of weight i / 255."""
    return bytes(
        int(c[k : k + 2], 16) for i in range(256) for c in [_colour(i / 255)] for k in (1, 3, 5)
    )


def _png(index):
    """An (rows, cols) uint8 array of palette entries as a PNG file (8-bit, viridis palette)."""
    rows, cols = index.shape

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = np.zeros((rows, cols + 1), np.uint8)  # each row: filter type 0, then its pixels
    raw[:, 1:] = index
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", cols, rows, 8, 3, 0, 0, 0))
        + chunk(b"PLTE", _palette())
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def _shrink_factor(shape):
    """The smallest whole k such that the (L, h, n, m) stack's heads, each shrunk to
    ceil(n / k) × ceil(m / k) pixels, hold at most _STATIC_MAX_PIXELS pixels in all."""
    L, h, n, m = shape
    k = 1
    while L * h * -(-n // k) * -(-m // k) > _STATIC_MAX_PIXELS:
        k += 1
    return k


def _block_mean(weights, k):
    """(n, m) weights → (ceil(n / k), ceil(m / k)): each entry the mean of its k × k block (a
    block cut by the last row or column: the mean of the weights it holds)."""
    if k == 1:
        return np.asarray(weights, np.float64)
    n, m = weights.shape
    rows, cols = -(-n // k), -(-m // k)
    total = np.zeros((rows * k, cols * k))
    count = np.zeros((rows * k, cols * k))
    total[:n, :m] = weights
    count[:n, :m] = 1
    total = total.reshape(rows, k, cols, k).sum(axis=(1, 3))
    count = count.reshape(rows, k, cols, k).sum(axis=(1, 3))
    return total / count


def _png_grid(weights, k, title):
    """One head's (n, m) weights as an <img> of a PNG: queries down, keys across, viridis; a pixel
    per weight (k = 1) or per k × k block of weights (their mean)."""
    n, m = weights.shape
    shrunk = _block_mean(weights, k)
    index = np.rint(np.clip(shrunk, 0.0, 1.0) * 255).astype(np.uint8)
    rows, cols = index.shape
    scale = max(1, _PNG_SHOWN // max(rows, cols))
    data = base64.b64encode(_png(index)).decode("ascii")
    per = "one pixel per weight" if k == 1 else f"one pixel per {k} × {k} weights (their mean)"
    alt = (
        f"{title}: {n} × {m} attention weights, queries down and keys across, viridis from 0 "
        f"(dark purple) to 1 (yellow); {per}"
    )
    return (
        f'<img src="data:image/png;base64,{data}" width="{cols * scale}" '
        f'height="{rows * scale}" alt="{html.escape(alt)}" title="{html.escape(alt)}" '
        'style="image-rendering:pixelated;display:block">'
    )


# The pattern table's score columns in reading order (docs/patterns.md); a score of the report
# not named here gets a column after them, named from its key.
_SCORE_COLUMNS = [
    ("previous_token", "previous token"),
    ("diagonal", "diagonal"),
    ("local_band", "local band"),
    ("vertical_stripe", "vertical stripe"),
    ("stripe_key", "stripe key"),
    ("first_token", "first token"),
    ("duplicate_token", "duplicate token"),
    ("induction", "induction"),
    ("punctuation", "punctuation"),
    ("mean_distance", "mean distance"),
    ("mean_distance_normalized", "mean distance (normalized)"),
    ("entropy_bits", "entropy (bits)"),
    ("entropy_normalized", "entropy (normalized)"),
    ("max_weight", "max weight"),
]


def _pattern_table(patterns, layer_names, key_labels):
    """The head-pattern labels and every score of every head (``head_patterns``'s report), as an
    HTML table; a score without a value (e.g. duplicate token without tokens) shows "–". The
    stripe key is shown as its key's label (`key_labels`, the labels the grids draw across)."""
    columns = list(_SCORE_COLUMNS)
    named = {c[0] for c in columns}
    for layer in patterns["layers"]:
        for h in layer["heads"]:
            for key in h["scores"]:
                if key not in named:
                    named.add(key)
                    columns.append((key, key.replace("_", " ")))

    def cell(key, value):
        if value is None:
            return "–"
        if key == "stripe_key" and isinstance(value, int) and 0 <= value < len(key_labels):
            return html.escape(key_labels[value])
        return str(value) if isinstance(value, int) else f"{value:.3f}"

    head = "".join(f"<th>{html.escape(c[1])}</th>" for c in columns)
    rows = []
    for layer, name in zip(patterns["layers"], layer_names):
        for h in layer["heads"]:
            labels = ", ".join(h["labels"]) or "no clear pattern"
            cells = "".join(f"<td>{cell(c[0], h['scores'].get(c[0]))}</td>" for c in columns)
            rows.append(
                f"<tr><th>{html.escape(name)}head {h['head']}</th>"
                f"<td>{html.escape(labels)}</td>{cells}</tr>"
            )
    return (
        '<table class="mha-lab-patterns"><caption>Head patterns: per head, its labels (each '
        "pattern whose score passes its threshold) and its scores: the mean weight on the "
        "previous token, on the diagonal, within one token of it, on the key the other queries "
        "weigh most (vertical stripe, and that key) and on the first token; with tokens, "
        "duplicate token, induction and punctuation; the mean distance in tokens, the rows' "
        "entropy and their largest weight; \u2013 where a score has no value</caption>"
        f"<thead><tr><th>head</th><th>labels</th>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _json_for_script(value):
    """JSON text safe inside <script type="application/json">: '</' written as '<\\/'."""
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


class AttentionView:
    """What show() and show_experiment() return: displayed by Jupyter through _repr_html_.

    ``html`` is the fragment (inline scripts, element, picture without JavaScript);
    ``save_html(path)`` writes it as a standalone page."""

    def __init__(self, fragment, title):
        self.html = fragment
        self.title = title

    def _repr_html_(self):
        return self.html

    def save_html(self, path):
        """Writes a standalone HTML file that works opened from disk, offline."""
        page = (
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title></head><body>\n{self.html}\n</body></html>\n"
        )
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        return path


def _fragment(elements, scripts, static, title):
    uid = "mha-lab-" + uuid.uuid4().hex[:12]
    # A notebook that loaded require.js (classic Jupyter) would take the wasm glue's
    # define(...) for an anonymous AMD module and fail; the scripts run with define hidden.
    inline = (
        "<script>window.__mhaLabDefine=window.define;window.define=undefined;</script>"
        + "".join(f"<script>{_asset(name)}</script>" for name in scripts)
        + "<script>window.define=window.__mhaLabDefine;delete window.__mhaLabDefine;</script>"
    )
    # Once an element has drawn, the picture without JavaScript is hidden (the table stays).
    hide = (
        "<script>(function(){var r=document.getElementById('%s');if(!r)return;"
        "r.addEventListener('mha-ready',function(){var g=r.querySelector('.mha-lab-grids');"
        "if(g)g.hidden=true;});})();</script>" % uid
    )
    return (
        f'<div class="mha-lab" id="{uid}">'
        '<div class="mha-lab-static">'
        + (f"<p><strong>{html.escape(title)}</strong></p>" if title else "")
        + f"{static}</div>"
        f"{hide}{inline}{''.join(elements)}</div>"
    )


def _static(stack, query_tokens, key_tokens, layer_names, patterns):
    """The picture without JavaScript: a grid per head (SVG up to _STATIC_MAX_CELLS weights in
    all, PNG above) and the head-pattern table."""
    table = _pattern_table(patterns, layer_names, key_tokens)
    grids = []
    if stack.size > _STATIC_MAX_CELLS:
        k = _shrink_factor(stack.shape)
        n, m = stack.shape[2:]
        per = (
            "a pixel per weight"
            if k == 1
            else f"a pixel per {k} × {k} block of weights, their mean"
        )
        note = (
            f"<p>{stack.size:,} weights, {n} × {m} per head: {per} (viridis, 0 dark purple to "
            f"1 yellow); queries down: {html.escape(_ends(query_tokens))}; keys across: "
            f"{html.escape(_ends(key_tokens))}.</p>"
        )
    else:
        k, note = None, ""
    for i, layer in enumerate(stack):
        for h, w in enumerate(layer):
            name = f"{layer_names[i]}head {h}"
            grid = (
                _svg_grid(w, query_tokens, key_tokens, name) if k is None else _png_grid(w, k, name)
            )
            grids.append(
                f'<figure style="display:inline-block;margin:4px">{grid}'
                f"<figcaption>{html.escape(name)}</figcaption></figure>"
            )
    return f'<div class="mha-lab-grids">{note}{"".join(grids)}</div>{table}'


def _ends(tokens):
    """The first and last tokens of a long list: "a b c … y z"."""
    tokens = [_cut(t) for t in tokens]
    return " ".join(tokens) if len(tokens) <= 8 else " ".join(tokens[:4] + ["…"] + tokens[-3:])


def show(attn, tokens=None, *, query_tokens=None, title="Attention weights", batch=None):
    """Draws attention weights with the <mha-attention> element, its script inline.

    ``attn``: (h, n, m), (L, h, n, m) or (L, B, h, n, m) weights, a numpy array or torch tensor
    (float16, bfloat16, float32 or float64; with grad or on a GPU: detached and copied to the
    CPU; any strides: copied), or a Hugging Face ``output_attentions`` tuple (L tensors of
    (B, h, n, m)); ``batch``: the example to draw of a batch B > 1 (required then: a batch axis is
    never read as layers; see ``mha_lab.attention_stack``). ``tokens``: m key tokens (and the
    queries when n == m), a list or tuple of str (or a numpy array of str) or one string split by
    ``mha_lab.tokenize`` (the page's rule), anything else a ValueError;
    ``query_tokens``: n tokens when n != m; ``title``: the heading and the element's label, or
    None (or "") for no heading, the element showing its own title. One element per layer.
    The weights are checked by the core (rows summing to 1 or all 0: ValueError otherwise) and
    scored (``head_patterns``, with the tokens as given); the tokens are drawn as
    ``mha_lab.readable_tokens`` labels them (a subword tokenizer's Ġ, ▁ or ## marker removed, a
    piece that continues a word shown after "·"; the scheme read from tokens and query tokens
    together). The output also holds SVG grids and the head-pattern table (every
    score) for where scripts do not run (an untrusted notebook, a repository's preview).

    Returns an AttentionView (``_repr_html_``, ``save_html(path)``)."""
    from . import attention_stack, head_patterns
    from ._input import _token_list
    from ._subwords import _readable, _subword_scheme

    if title is not None and not isinstance(title, str):
        raise ValueError(f"title must be a str or None, got {type(title).__name__}")
    title = title or ""
    # No tokens (an empty list, or a str with none) draws index labels, as head_patterns reads it.
    tokens = _token_list(tokens) or None
    query_tokens = _token_list(query_tokens, "query_tokens") or None
    a = attention_stack(attn, batch)
    patterns = head_patterns(a, tokens, query_tokens)  # scored with the tokens as given
    stack = a[None] if a.ndim == 3 else a
    L, h, n, m = stack.shape
    scheme = _subword_scheme((tokens or []) + (query_tokens or []))
    keys = _readable(tokens, scheme) if tokens is not None else [str(j) for j in range(m)]
    queries = (
        _readable(query_tokens, scheme)
        if query_tokens is not None
        else keys
        if n == m
        else [str(i) for i in range(n)]
    )
    names = [f"layer {i}, " if L > 1 else "" for i in range(L)]
    elements = []
    for i in range(L):
        label = ", ".join(t for t in (title, f"layer {i}" if L > 1 else "") if t)
        data = {"attn_weights": np.asarray(stack[i], np.float64).round(7).tolist(), "tokens": keys}
        if label:  # else the element's own title
            data["title"] = label
        if query_tokens is not None:
            data["query_tokens"] = queries
        elements.append(
            (f'<mha-attention label="{html.escape(label)}">' if label else "<mha-attention>")
            + f'<script type="application/json">{_json_for_script(data)}</script>'
            "</mha-attention>"
        )
    return AttentionView(
        _fragment(
            elements, [_ELEMENT_SCRIPT], _static(stack, queries, keys, names, patterns), title
        ),
        title or "Attention weights",
    )


def show_experiment(
    seed=7, tokens=5, d_model=8, num_heads=2, *, text=None, is_causal=False, positional=False
):
    """Module 08's seeded experiment drawn by the <mha-attention> element, which computes it with
    the wasm core (both scripts inline: no request), as the page does.

    ``text``: the sentence whose tokens the grids are labelled with (the element's ``tokens``
    attribute: each word is a token, every other non-space character one), its token count
    replacing ``tokens``; else ``tokens`` words "t0", "t1", ... (``tokens`` an integer, as
    ``numpy_experiment`` takes it: anything else is a ValueError). The picture without JavaScript
    is computed here by ``numpy_experiment`` (the same numbers), its tokens split by ``tokenize``
    (the core's rule, the element's).

    Returns an AttentionView (``_repr_html_``, ``save_html(path)``)."""
    from . import head_patterns, numpy_experiment, tokenize
    from ._input import _whole

    if text is not None:
        words = tokenize(text)
        count = len(words)
    else:
        count = _whole(tokens, "tokens", -(2**31), 2**31 - 1)
    # The core checks the count (and seed, d_model, num_heads) before any word is made.
    r = numpy_experiment(
        seed, count, d_model, num_heads, is_causal=is_causal, positional=positional
    )
    if text is None:
        words = [f"t{i}" for i in range(count)]
    patterns = head_patterns(r["attn_weights"], words)
    title = (
        f"numpy experiment: seed {seed}, {len(words)} tokens, d_model {d_model}, "
        f"{num_heads} heads"
        + (", causal" if is_causal else "")
        + (", positions" if positional else "")
    )
    attrs = {
        "tokens": text if text is not None else " ".join(words),
        "seed": str(seed),
        "d-model": str(d_model),
        "num-heads": str(num_heads),
        "label": title,
    }
    if is_causal:
        attrs["causal"] = ""
    if positional:
        attrs["positional"] = ""
    attr_text = " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs.items())
    element = f"<mha-attention {attr_text}></mha-attention>"
    return AttentionView(
        _fragment(
            [element],
            [_CORE_SCRIPT, _ELEMENT_SCRIPT],
            _static(r["attn_weights"][None], words, words, [""], patterns),
            title,
        ),
        title,
    )
