"""mha-lab's multi-head attention core in Python (docs/python.md).

The numbers come from the same C++ layers as the ``mha`` command line and the page, through the
compiled module ``mha_lab._core``. Inputs may be numpy arrays or torch tensors; outputs are numpy
arrays. Errors of the core (a bad shape, ``d_model`` not divisible by ``num_heads``, a NaN, a
wrong dtype) are ``ValueError`` carrying the core's message.

Shape legend: n query tokens, m key tokens, d = d_model, h = num_heads, L layers.

    import mha_lab
    mha_lab.show_experiment(seed=7, tokens=5, d_model=8, num_heads=2)
"""

import json as _json

import numpy as _np

from . import _core
from .view import AttentionView, show, show_experiment

__all__ = [
    "numpy_experiment",
    "forward",
    "head_patterns",
    "tokenize",
    "show",
    "show_experiment",
    "AttentionView",
]


def tokenize(text):
    """The tokens of ``text`` as the page, the ``<mha-attention>`` element and the English model
    split it (the core's rule, docs/english-lm-format.md): a word (letters, digits and combining
    marks, with inner apostrophes ' or ’), a flag, or any other non-space character with the marks,
    modifiers and zero-width-joined characters that follow it. Spaces and invisible format
    characters only separate.

    Returns a list of str, empty for blank text. Raises ValueError when ``text`` is not a str or
    holds a lone surrogate."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"text is not valid Unicode: a lone surrogate at index {e.start}"
        ) from None
    return _core.english_tokenize(text)


def _as_numpy(x, name):
    """A numpy array of `x` (a numpy array, a torch tensor, or a nested list of numbers)."""
    if x is None:
        return None
    if hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "numpy"):  # a torch tensor
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        x = x.numpy()
    if isinstance(x, _np.ndarray):
        return x
    try:
        return _np.asarray(x)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name} is not an array of numbers: {e}") from None


def _float_array(x, name):
    """`x` as a numpy array for the core: float16 widened to float32; any other dtype is left for
    the core to refuse with its message (float32 and float64 pass)."""
    a = _as_numpy(x, name)
    if a is not None and a.dtype == _np.float16:
        a = a.astype(_np.float32)
    return a


def _mask_array(x, name):
    """A mask as the core takes it: bool stays bool (True = may not attend / ignore), a float
    dtype is additive; integers are refused, as PyTorch refuses them."""
    a = _as_numpy(x, name)
    if a is None:
        return None
    if a.dtype == _np.bool_:
        return _np.ascontiguousarray(a)
    if a.dtype == _np.float16:
        return a.astype(_np.float32)
    if a.dtype.kind != "f":
        raise ValueError(
            f"{name} has dtype {a.dtype}; expected bool (True = masked) or a float "
            "dtype (added to the scores)"
        )
    return a


def _whole(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}={int(value)} is outside [{low}, {high}]")
    return int(value)


def numpy_experiment(
    seed=7, tokens=5, d_model=8, num_heads=2, *, is_causal=False, positional=False
):
    """Module 08's seeded experiment, the numbers of ``mha numpy-experiment`` and of the page.

    ``np.random.seed(seed)``; ``X = randn(n, d)``; ``Wq, Wk, Wv, Wo = randn(d, d)`` each; per head
    ``A_i = softmax(Q_i K_iᵀ / sqrt(d_head))`` with ``Q = X @ Wq`` (the course's convention), in
    float64 as numpy computes it (Vaswani et al. 2017, §3.2). ``is_causal`` masks keys j > i;
    ``positional`` adds the sinusoidal positional encoding to X (§3.5).

    Returns a dict of numpy arrays: ``attn_weights`` (h, n, n) float32, ``output`` (n, d),
    ``X`` (n, d) float64, ``Wq``, ``Wk``, ``Wv``, ``Wo`` (d, d) float64, ``q``, ``k``, ``v`` (n, d),
    ``scores`` (h, n, n), ``head_outputs`` (n, d), ``fully_masked_rows`` (h, n) uint8,
    ``positional_encoding`` (n, d) with ``positional``, and ``parameter_count`` (4 d², an int).

    Raises ValueError with the core's message, e.g. ``d_model=10 is not divisible by
    num_heads=3``.
    """
    seed = _whole(seed, "seed", 0, 2**32 - 1)
    tokens = _whole(tokens, "tokens", -(2**31), 2**31 - 1)
    d_model = _whole(d_model, "d_model", -(2**31), 2**31 - 1)
    num_heads = _whole(num_heads, "num_heads", -(2**31), 2**31 - 1)
    return _core.numpy_experiment(
        seed, tokens, d_model, num_heads, bool(is_causal), bool(positional)
    )


def forward(
    query,
    in_proj_weight=None,
    out_proj_weight=None,
    num_heads=None,
    *,
    key=None,
    value=None,
    in_proj_bias=None,
    out_proj_bias=None,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    attn_mask=None,
    key_padding_mask=None,
    is_causal=False,
    keep_intermediates=False,
):
    """One forward pass of ``nn.MultiheadAttention`` (batch_first, batch 1, no dropout) with
    PyTorch's names; every head's weights are returned, never averaged.

    Formula (Vaswani et al. 2017, §3.2; PyTorch's ``F.multi_head_attention_forward``):
    ``Q = query W_qᵀ + b_q``, ``K = key W_kᵀ + b_k``, ``V = value W_vᵀ + b_v``; per head
    ``A_i = softmax(Q_i K_iᵀ / sqrt(d_head) + M_i)``, ``Y_i = A_i V_i``;
    ``output = concat(Y_1..Y_h) W_outᵀ + b_out``.

    Shapes: ``query`` (n, d); ``key`` (m, kdim) and ``value`` (m, vdim), or neither for
    self-attention; ``in_proj_weight`` (3d, d) and ``in_proj_bias`` (3d) as
    ``nn.MultiheadAttention`` holds them, or ``q_proj_weight`` (d, d), ``k_proj_weight`` (d, kdim),
    ``v_proj_weight`` (d, vdim) when kdim or vdim differs from d; ``out_proj_weight`` (d, d),
    ``out_proj_bias`` (d) (PyTorch's ``out_proj.weight``, ``out_proj.bias``). Arrays are numpy
    arrays or torch tensors (a batch dimension of 1 is dropped), float32 or float64, C-contiguous.

    Masks as PyTorch takes them: ``attn_mask`` (n, m) or (h, n, m), bool (True = may not attend)
    or float (added to the scores; -inf masks); ``key_padding_mask`` (m,), bool (True = ignore
    that key) or float (added to every query's score of that key, as ``nn.MultiheadAttention``
    adds it); ``is_causal`` (key j > i masked). A row whose every key is masked gets weights 0
    and output 0, never NaN.

    Returns a dict of numpy float32 arrays: ``output`` (n, d), ``attn_weights`` (h, n, m),
    ``fully_masked_rows`` (h, n) uint8, and with ``keep_intermediates`` also ``q``, ``k``, ``v``,
    ``scores`` (h, n, m) and ``head_outputs`` (n, d).

    Raises ValueError with the core's message for a bad shape, dtype, a non-contiguous array, a
    NaN or infinity, or ``d_model`` not divisible by ``num_heads``.
    """
    if out_proj_weight is None:
        raise ValueError("out_proj_weight (d_model, d_model) is required")
    if num_heads is None:
        raise ValueError("num_heads is required")
    num_heads = _whole(num_heads, "num_heads", -(2**31), 2**31 - 1)

    def batch1(x, name, rank):
        a = _float_array(x, name)
        if a is not None and a.ndim == rank + 1 and a.shape[0] == 1:
            a = a[0]
        return a

    return _core.forward(
        batch1(query, "query", 2),
        batch1(key, "key", 2),
        batch1(value, "value", 2),
        num_heads,
        _float_array(in_proj_weight, "in_proj_weight"),
        _float_array(in_proj_bias, "in_proj_bias"),
        _float_array(out_proj_weight, "out_proj_weight"),
        _float_array(out_proj_bias, "out_proj_bias"),
        _float_array(q_proj_weight, "q_proj_weight"),
        _float_array(k_proj_weight, "k_proj_weight"),
        _float_array(v_proj_weight, "v_proj_weight"),
        _mask_array(attn_mask, "attn_mask"),
        _key_padding(key_padding_mask),
        bool(is_causal),
        bool(keep_intermediates),
    )


def _key_padding(x):
    a = _mask_array(x, "key_padding_mask")
    if a is not None and a.ndim == 2 and a.shape[0] == 1:  # PyTorch's (batch, m) for batch 1
        a = a[0]
    return a


def attention_stack(attn):
    """Attention weights as one numpy array the core reads: (h, n, m) or (L, h, n, m).

    Accepts a numpy array or torch tensor of (h, n, m), (L, h, n, m) or (L, 1, h, n, m), or a
    Hugging Face ``output_attentions`` tuple/list of L tensors (batch 1, h, n, m), stacked."""
    if isinstance(attn, (tuple, list)) and attn and not isinstance(attn[0], (int, float)):
        layers = [_float_array(a, f"attn[{i}]") for i, a in enumerate(attn)]
        for i, a in enumerate(layers):
            if a.ndim == 4 and a.shape[0] != 1:
                raise ValueError(
                    f"attn[{i}] has shape {tuple(a.shape)}: a batch of "
                    f"{a.shape[0]}; pass one example (batch 1)"
                )
        layers = [a[0] if a.ndim == 4 else a for a in layers]
        shapes = {a.shape for a in layers}
        if len(shapes) != 1:
            raise ValueError(f"the layers of attn differ in shape: {sorted(shapes)}")
        a = _np.stack(layers)
    else:
        a = _float_array(attn, "attn")
    if a.ndim == 5 and a.shape[1] == 1:
        a = a[:, 0]
    return _np.ascontiguousarray(a)


def head_patterns(attn, tokens=None, query_tokens=None):
    """Head-pattern scores and labels of attention weights, as ``mha patterns`` reports them
    (docs/patterns.md): previous token, diagonal, local band, vertical stripe, first token, mean
    distance, entropy, max weight, and with tokens duplicate token, induction and punctuation;
    each score beside a uniform head's, labels only past the documented thresholds; the heads'
    pairwise Jensen–Shannon distances.

    ``attn``: (h, n, m), (L, h, n, m) or a Hugging Face ``output_attentions`` tuple (see
    ``attention_stack``); rows must sum to 1 (or be all 0). ``tokens``: m strings (key tokens),
    ``query_tokens``: n strings when n != m.

    Returns a dict ``{"shape", "tokens", "thresholds", "layers": [{"layer", "name", "n", "m",
    "heads": [{"head", "labels", "scores", "uniform_baseline", ...}], "js_distance"}]}``; a score
    without a value is None.

    Raises ValueError with the core's message (e.g. rows that do not sum to 1, tokens of the
    wrong count)."""
    a = attention_stack(attn)
    keys = [str(t) for t in tokens] if tokens is not None else []
    queries = [str(t) for t in query_tokens] if query_tokens is not None else []
    return _json.loads(_core.head_patterns_json(a, keys, queries))
