"""mha-lab's multi-head attention core in Python (docs/python.md).

The numbers come from the same C++ layers as the ``mha`` command line and the page, through the
compiled module ``mha_lab._core``. Inputs may be numpy arrays or torch tensors (float16,
bfloat16, float32 or float64; with grad, on a GPU or strided: read through one intake, ``_input``,
as detached, CPU, C-contiguous copies); outputs are numpy arrays. Errors of the core (a bad
shape, ``d_model`` not divisible by ``num_heads``, a NaN, a wrong dtype) are ``ValueError``
carrying the core's message.

Shape legend: n query tokens, m key tokens, d = d_model, h = num_heads, L layers.

    import mha_lab
    mha_lab.show_experiment(seed=7, tokens=5, d_model=8, num_heads=2)
"""

import json as _json

import numpy as _np

from . import _core
from ._input import (
    _EPSILON,
    _array,
    _intake,
    _is_torch,
    _mask_array,
    _rows_within_precision,
    _token_list,
    _whole,
    tokenize,
)
from ._models import models, prune
from ._subword_tokenizer import SubwordTokenizer
from ._report import head_report, induction_probe, pronoun_probe
from ._subwords import readable_tokens
from .view import AttentionView, show, show_experiment

#: The project's version (the repository's VERSION file, compiled into ``_core``).
__version__ = _core.__version__

__all__ = [
    "numpy_experiment",
    "forward",
    "head_patterns",
    "head_report",
    "induction_probe",
    "pronoun_probe",
    "models",
    "prune",
    "tokenize",
    "readable_tokens",
    "SubwordTokenizer",
    "show",
    "show_experiment",
    "AttentionView",
]


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
    arrays or torch tensors (with grad or on a GPU: detached and copied to the CPU), float16,
    bfloat16, float32 or float64, any strides (copied); a batch dimension of 1 is dropped
    (batch-first (1, n, d)); sequence-first (n, 1, d) as ``nn.MultiheadAttention`` takes it
    with ``batch_first=False`` is refused with a hint, and any other (a, b, d), which reads as
    (batch, n, d) or (n, batch, d), is refused naming both (``query[i]``, ``query[:, i]``).

    Masks as PyTorch takes them: ``attn_mask`` (n, m) or (h, n, m), bool (True = may not attend)
    or float (added to the scores; -inf masks); ``key_padding_mask`` (m,), bool (True = ignore
    that key) or float (added to every query's score of that key, as ``nn.MultiheadAttention``
    adds it); ``is_causal`` (key j > i masked). A row whose every key is masked gets weights 0
    and output 0, never NaN.

    Returns a dict of numpy float32 arrays: ``output`` (n, d), ``attn_weights`` (h, n, m),
    ``fully_masked_rows`` (h, n) uint8, and with ``keep_intermediates`` also ``q``, ``k``, ``v``,
    ``scores`` (h, n, m) and ``head_outputs`` (n, d).

    Raises ValueError with the core's message for a bad shape or dtype, a NaN or infinity, or
    ``d_model`` not divisible by ``num_heads``.
    """
    if out_proj_weight is None:
        raise ValueError("out_proj_weight (d_model, d_model) is required")
    if num_heads is None:
        raise ValueError("num_heads is required")
    num_heads = _whole(num_heads, "num_heads", -(2**31), 2**31 - 1)

    def batch1(x, name, rank):
        a = _array(x, name)
        if a is not None and a.ndim == rank + 1:
            if a.shape[0] == 1:
                return a[0]
            shape = tuple(a.shape)
            if a.shape[1] == 1:
                # (n, 1, d): batch-first (n, ...) would be a batch of n sequences of one token.
                raise ValueError(
                    f"{name} has shape {shape}: sequence-first (n, batch 1, d), as "
                    "nn.MultiheadAttention takes it with batch_first=False; forward takes (n, d) "
                    f"or batch-first (1, n, d): pass {name}[:, 0] or {name}.transpose(0, 1)"
                )
            raise ValueError(
                f"{name} has shape {shape}, which reads two ways; forward takes one example, "
                f"(n, d) or (1, n, d): (batch, n, d) with batch_first=True, a batch of "
                f"{shape[0]}: pass {name}[i]; (n, batch, d), nn.MultiheadAttention's default "
                f"(batch_first=False), a batch of {shape[1]}: pass {name}[:, i]"
            )
        return a

    return _core.forward(
        batch1(query, "query", 2),
        batch1(key, "key", 2),
        batch1(value, "value", 2),
        num_heads,
        _array(in_proj_weight, "in_proj_weight"),
        _array(in_proj_bias, "in_proj_bias"),
        _array(out_proj_weight, "out_proj_weight"),
        _array(out_proj_bias, "out_proj_bias"),
        _array(q_proj_weight, "q_proj_weight"),
        _array(k_proj_weight, "k_proj_weight"),
        _array(v_proj_weight, "v_proj_weight"),
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


def _batch_index(batch, size, name):
    return _whole(batch, "batch", 0, size - 1) if size > 0 else _whole(batch, "batch", 0, -1)


def attention_stack(attn, batch=None):
    """Attention weights as one numpy array the core reads: (h, n, m) or (L, h, n, m).

    Accepts a numpy array or torch tensor of (h, n, m), (L, h, n, m) or (L, B, h, n, m), or a
    Hugging Face ``output_attentions`` tuple/list of L tensors (B, h, n, m); with a batch B > 1,
    ``batch`` picks one example (else a ValueError naming ``batch=``), and a batch of 1 is
    dropped. A batch axis is never read as layers: a torch tensor of rank 4 is what a model
    returns for one layer, (B, h, n, m), so with B > 1 it needs ``batch=`` (a torch stack of
    layers goes as a tuple, ``torch.stack`` of (1, h, n, m) tensors, or ``.numpy()``); a numpy
    array of rank 4 is (L, h, n, m) unless ``batch`` is given, which makes it (B, h, n, m).
    Every array is read by ``_intake`` (detached, on the CPU, contiguous, float16 and bfloat16
    widened with their rows checked within the dtype's precision: ``_rows_within_precision``)."""
    hint = "pass batch=i to pick one example (i from 0)"
    if attn is None:
        raise ValueError("attn is required: attention weights (h, n, m), (L, h, n, m) or a tuple")
    if isinstance(attn, (tuple, list)) and attn and not isinstance(attn[0], (int, float)):
        layers, dtypes = [], []
        for i, x in enumerate(attn):
            a, dtype = _intake(x, f"attn[{i}]")
            if a is None:
                raise ValueError(f"attn[{i}] is None; every layer must be an array of weights")
            if a.ndim == 4:
                if batch is not None:
                    a = a[_batch_index(batch, a.shape[0], f"attn[{i}]")]
                elif a.shape[0] == 1:
                    a = a[0]
                else:
                    raise ValueError(
                        f"attn[{i}] has shape {tuple(a.shape)}: a batch of {a.shape[0]}; {hint}"
                    )
            elif batch is not None:
                raise ValueError(
                    f"batch={batch!r} picks an example of (B, h, n, m) layers, but attn[{i}] "
                    f"has shape {tuple(a.shape)}"
                )
            layers.append(a)
            dtypes.append(dtype)
        shapes = {a.shape for a in layers}
        if len(shapes) != 1:
            raise ValueError(f"the layers of attn differ in shape: {sorted(shapes)}")
        try:
            a = _np.stack(layers)
        except TypeError as e:
            raise ValueError(f"the layers of attn cannot be stacked: {e}") from None
        dtype = max(dtypes, key=lambda d: _EPSILON.get(d, 0.0))
    else:
        a, dtype = _intake(attn, "attn")
        if a.ndim == 5:
            if batch is not None:
                a = a[:, _batch_index(batch, a.shape[1], "attn")]
            elif a.shape[1] == 1:
                a = a[:, 0]
            else:
                raise ValueError(
                    f"attn has shape {tuple(a.shape)}: (layers, batch, heads, n, m) with a batch "
                    f"of {a.shape[1]}; {hint}"
                )
        elif a.ndim == 4 and batch is not None:
            a = a[_batch_index(batch, a.shape[0], "attn")]
        elif a.ndim == 4 and _is_torch(attn) and a.shape[0] == 1:
            a = a[0]  # a model's (batch 1, heads, n, m): the batch of 1 is dropped
        elif a.ndim == 4 and _is_torch(attn) and a.shape[0] > 1:
            raise ValueError(
                f"attn is a torch tensor of shape {tuple(a.shape)}, a model's (batch, heads, n, "
                f"m) with a batch of {a.shape[0]}: {hint}; layers go as a tuple of (1, h, n, m) "
                "tensors (output_attentions), torch.stack of them (L, 1, h, n, m), or a numpy "
                "(L, h, n, m) array"
            )
        elif batch is not None:
            raise ValueError(
                f"batch={batch!r} picks an example of (B, h, n, m) or (L, B, h, n, m) weights, "
                f"but attn has shape {tuple(a.shape)}"
            )
    return _np.ascontiguousarray(_rows_within_precision(a, dtype, "attn"))


def head_patterns(attn, tokens=None, query_tokens=None, *, batch=None):
    """Head-pattern scores and labels of attention weights, as ``mha patterns`` reports them
    (docs/patterns.md): previous token, diagonal, local band, vertical stripe, first token, mean
    distance, entropy, max weight, and with tokens duplicate token, induction and punctuation;
    each score beside a uniform head's, labels only past the documented thresholds; the heads'
    pairwise Jensen–Shannon distances.

    ``attn``: (h, n, m), (L, h, n, m), (L, B, h, n, m) or a Hugging Face ``output_attentions``
    tuple, numpy or torch (detached, copied to the CPU), float16, bfloat16, float32 or float64,
    any strides (see ``attention_stack``); rows must sum to 1 (or be all 0), within 0.001, or
    within float16's or bfloat16's precision for weights of that dtype. ``batch``: the example
    to read of a batch B > 1 (required then). ``tokens``: m key tokens, a list or tuple of str (or a
    numpy array of str) or one string (split by ``tokenize``), scored as given (no subword marker
    removed); ``query_tokens``: n tokens when n != m. Tokens of another kind (None items, numbers,
    bytes, a dict) are a ValueError.

    Returns a dict ``{"shape", "tokens", "thresholds", "layers": [{"layer", "name", "n", "m",
    "heads": [{"head", "labels", "scores", "uniform_baseline", ...}], "js_distance"}]}``; a score
    without a value is None.

    Raises ValueError with the core's message (e.g. rows that do not sum to 1, tokens of the
    wrong count)."""
    a = attention_stack(attn, batch)
    keys = _token_list(tokens) or []
    queries = _token_list(query_tokens, "query_tokens") or []
    return _json.loads(_core.head_patterns_json(a, keys, queries))
