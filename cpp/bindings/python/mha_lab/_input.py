"""What users give, as the core reads it: one intake for arrays and tensors (dtype, grad, device,
strides, a batch of 1), the row-sum check of half-precision weights, masks, token lists and whole
numbers. Every public function of mha_lab reads its inputs through these; each refusal is a
ValueError naming the argument.
"""

import math as _math

import numpy as _np

from . import _core

# Machine epsilon (the gap between 1 and the next larger value) of the dtypes that are widened to
# float32 before the core reads them; the row-sum check of attention weights scales with it.
_EPSILON = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def _is_torch(x):
    return hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "numpy")


def _intake(x, name):
    """`x` (a numpy array, a torch tensor, or a nested list of numbers) as a C-contiguous numpy
    array in native byte order, and the name of the dtype it arrived in ("bfloat16", "float16",
    "float32", ...). Every function of the package reads its arrays through here.

    A torch tensor is detached (requires_grad is dropped) and copied to the CPU when it lives on
    another device (CUDA, MPS): the core reads host memory. bfloat16 (torch) and float16 are
    widened to float32, exactly. A strided, transposed, negatively strided or Fortran-order array
    is copied, as ``numpy.ascontiguousarray`` copies it. Any other dtype is left for the core to
    refuse with its message. Raises ValueError when `x` is not an array of numbers."""
    if x is None:
        return None, None
    if _is_torch(x):
        dtype = str(x.dtype).replace("torch.", "")
        try:
            x = x.detach()
            if x.device.type != "cpu":
                x = x.cpu()
            if dtype in ("bfloat16", "float16"):
                x = x.float()
            x = x.numpy()
        except (RuntimeError, TypeError, NotImplementedError) as e:
            raise ValueError(f"{name} ({dtype} tensor) cannot be read as an array: {e}") from None
    elif not isinstance(x, _np.ndarray):
        try:
            x = _np.asarray(x)
        except (ValueError, TypeError, OverflowError) as e:
            raise ValueError(f"{name} is not an array of numbers: {e}") from None
        dtype = str(x.dtype)
    else:
        dtype = str(x.dtype)
    if x.dtype == _np.float16:
        x = x.astype(_np.float32)
    if x.dtype.kind in "biuf" and not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    if not x.flags.c_contiguous:
        x = x.copy(order="C")
    return x, dtype


def _array(x, name):
    """`x` as `_intake` reads it, for the core: float16 and bfloat16 widened to float32; any other
    dtype is left for the core to refuse with its message (float32 and float64 pass)."""
    return _intake(x, name)[0]


def _rows_within_precision(a, dtype, name):
    """Attention weights `a` ((h, n, m) or (L, h, n, m), already widened to float32) that arrived
    in `dtype`: for float16 and bfloat16 each row is checked against the dtype's precision and
    divided by its sum, so that the core's check (rows summing to 1 within 0.001) reads them as
    distributions. A row must sum to 1 within max(0.001, eps * sqrt(m)), eps the dtype's machine
    epsilon (2^-10 for float16, 2^-7 for bfloat16) and m the row's length (keys): rounding each
    weight to the dtype moves a row sum by at most eps / 2 (PyTorch's half-precision softmax sums
    in float32 and rounds each weight once), and a softmax summed in the dtype itself adds
    rounding errors that grow like sqrt(m). Rows that are all 0 (fully masked) and rows holding
    NaN, an infinity or summing to 0 or less are left for the core's check. Other dtypes are
    returned unchanged: the core checks their rows within 0.001.

    Raises ValueError naming the dtype, the row and its sum, e.g. "attn (bfloat16): head 0, row 0
    sums to 1.03; every row of bfloat16 weights must sum to 1 within 0.0191 ..."."""
    eps = _EPSILON.get(dtype)
    if eps is None or a.ndim not in (3, 4) or a.size == 0 or a.dtype.kind != "f":
        return a
    m = a.shape[-1]
    tolerance = max(1e-3, eps * _math.sqrt(m))
    with _np.errstate(all="ignore"):
        sums = a.sum(axis=-1, dtype=_np.float64, keepdims=True)
    finite = _np.isfinite(sums)
    bad = finite & (sums > 0) & (_np.abs(sums - 1) > tolerance)
    if bad.any():
        at = tuple(int(i) for i in _np.argwhere(bad[..., 0])[0])
        axes = ["layer", "head", "row"][-len(at) :]
        where = ", ".join(f"{n} {i}" for n, i in zip(axes, at))
        raise ValueError(
            f"{name} ({dtype}): {where} sums to {sums[at][0]:.6g}; every row of {dtype} weights "
            f"must sum to 1 within {tolerance:.3g} (max(0.001, {dtype}'s epsilon "
            f"2^{int(_math.log2(eps))} x sqrt({m} keys))) or be all 0"
        )
    scale = finite & (sums > 0)
    with _np.errstate(all="ignore"):
        return _np.where(scale, a / _np.where(scale, sums, 1), a).astype(_np.float32)


def _mask_array(x, name):
    """A mask as the core takes it: bool stays bool (True = may not attend / ignore), a float
    dtype is additive; integers are refused, as PyTorch refuses them."""
    a = _array(x, name)
    if a is None:
        return None
    if a.dtype == _np.bool_:
        return a
    if a.dtype.kind != "f":
        raise ValueError(
            f"{name} has dtype {a.dtype}; expected bool (True = masked) or a float "
            "dtype (added to the scores)"
        )
    return a


def _token_list(tokens, name="tokens"):
    """Tokens as a list of str, or None for None: one string is split by ``tokenize`` (the page's
    rule); a list or tuple of str, or a numpy array of str, gives one token per item. Anything
    else (a number, bytes, a dict, a list holding a non-str) is a ValueError."""
    if tokens is None:
        return None
    if isinstance(tokens, str):
        return tokenize(tokens)
    if isinstance(tokens, _np.ndarray):
        if tokens.ndim != 1 or tokens.dtype.kind != "U":
            raise ValueError(
                f"{name} must be a str or a list of str; got a numpy array of dtype {tokens.dtype} "
                f"and shape {tuple(tokens.shape)} (a 1-D array of str is read)"
            )
        return [str(t) for t in tokens]
    if not isinstance(tokens, (list, tuple)):
        raise ValueError(f"{name} must be a str or a list of str, got {type(tokens).__name__}")
    for i, t in enumerate(tokens):
        if not isinstance(t, str):
            raise ValueError(
                f"{name} must be a str or a list of str; {name}[{i}] is {type(t).__name__} {t!r}"
            )
    return [str(t) for t in tokens]


def _whole(value, name, low, high):
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}={int(value)} is outside [{low}, {high}]")
    return int(value)


def tokenize(text):
    """The tokens of ``text`` as the page, the ``<mha-attention>`` element and the English model
    split it (the core's rule, docs/english-lm-format.md): a word (letters, digits and combining
    marks, with inner apostrophes ' or ’), a flag, or any other non-space character with the marks,
    modifiers and zero-width-joined characters that follow it. Spaces and invisible format
    characters only separate.

    Returns a list of str, empty for blank text. Raises ValueError when ``text`` is not a str or
    holds a lone surrogate."""
    return _core.english_tokenize(_text(text))


def _text(text):
    """``text`` checked for the core: a str without lone surrogates (which UTF-8 cannot hold).
    Raises ValueError otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"text is not valid Unicode: a lone surrogate at index {e.start}"
        ) from None
    return text
