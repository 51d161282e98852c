"""The trained models' files as experiments (docs/head-experiments.md): their summaries and greedy
head pruning. Conversions only: the loading, the checks, the counts and the curves are the core's
(cpp/models/mha/model_pruning.hpp), the same as ``mha models`` and ``mha prune``."""

import json as _json
import os as _os

from . import _core
from ._input import _text


def _model_dir():
    try:
        from ._build_info import MODEL_DIR
    except ImportError:
        return None
    return MODEL_DIR if _os.path.isdir(MODEL_DIR) else None


def _read_model(model):
    """(bytes, name) of a path or of the file's bytes."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "model"
    if isinstance(model, (str, _os.PathLike)):
        path = _os.fspath(model)
        try:
            with open(path, "rb") as f:
                return f.read(), _os.path.basename(path)
        except OSError as e:
            raise ValueError(f"cannot read the model {path!r}: {e.strerror}") from None
    raise ValueError(f"model must be a path or the file's bytes, got {type(model).__name__}")


def models(directory=None):
    """Every model file (``*.safetensors``) under ``directory``, verified by the core's loader
    of its kind, as a list of dicts sorted by file: ``name``, ``kind`` ("english" or "date"),
    ``file`` (relative to ``directory``), ``num_layers``, ``num_heads``, ``d_model``, ``heads``,
    ``parameters``, ``attention_parameters``, ``position_bias_parameters``, ``step`` (the training
    step, or None) and ``checksum`` (xxh64), as ``mha models --json`` prints them.

    ``directory`` defaults to the repository's ``web/`` when the package runs from a build tree.
    Raises ValueError when there is no such folder, or a file is not a model mha-lab reads."""
    if directory is None:
        directory = _model_dir()
        if directory is None:
            raise ValueError(
                "pass directory=: this installed copy of mha_lab has no folder of shipped "
                "models (the repository's web/ holds them)"
            )
    directory = _os.fspath(directory)
    if not _os.path.isdir(directory):
        raise ValueError(f"{directory!r} is not a folder")
    files = sorted(
        _os.path.relpath(_os.path.join(root, f), directory)
        for root, _, names in _os.walk(directory)
        for f in names
        if f.endswith(".safetensors")
    )
    out = []
    for rel in files:
        data, _ = _read_model(_os.path.join(directory, rel))
        try:
            summary = _json.loads(_core.describe_model_json(data))
        except ValueError as e:
            raise ValueError(f"{rel}: {e}") from None
        name = _os.path.splitext(_os.path.basename(rel))[0]
        out.append({"name": name, "file": rel.replace(_os.sep, "/"), **summary})
    return out


def _strings(items, name, convert):
    """A list from ``items`` (any iterable but a str), each item ``convert(item, where)``."""
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise ValueError(f"{name} must be a list, got {type(items).__name__}")
    return [convert(x, f"{name}[{i}]") for i, x in enumerate(list(items))]


def _checked_text(x, where):
    try:
        return _text(x)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def _example(e, where):
    if isinstance(e, dict):
        e = (e.get("input"), e.get("target"))
    if not (isinstance(e, (tuple, list)) and len(e) == 2):
        raise ValueError(f"{where} must be (input, target) or a dict with both, as str")
    return (_checked_text(e[0], f"{where} input"), _checked_text(e[1], f"{where} target"))


def prune(model, texts=None, examples=None):
    """The greedy head-pruning curve of ``model`` (a path or the file's bytes), as
    ``mha prune --json`` prints it: a dict with ``model``, ``checksum``, ``kind``, ``metric``,
    ``lower_is_better``, ``heads`` (names), ``selection_items``, ``measurement_items`` (the items
    scored: an English text longer than the model's context is skipped), ``protocol`` and
    ``steps``, a list of ``{"heads_left", "removed", "value", "selection_value"}``, the first
    with nothing removed.

    An English model is measured on ``texts`` (a list of str, one held-out text each; loss per
    character; default, in a build tree, the repository's web/english_lm_heldout.txt), a date
    model on ``examples`` (a list of ``(input, target)`` pairs or of dicts with "input" and
    "target"; exact match). Even items choose the head removed at each step, odd items measure
    the value (docs/head-experiments.md). Raises ValueError for a file that is not a model, both
    lists or the wrong one, a malformed item, or too few items."""
    data, name = _read_model(model)
    if texts is not None and examples is not None:
        raise ValueError("pass texts (an English model) or examples (a date model), not both")
    if texts is not None:
        texts = _strings(texts, "texts", _checked_text)
    if examples is not None:
        examples = _strings(examples, "examples", _example)
    if texts is None and examples is None and _model_dir():
        default = _os.path.join(_model_dir(), "english_lm_heldout.txt")
        if _os.path.isfile(default):
            with open(default, encoding="utf-8") as f:
                texts = [line.rstrip("\r\n") for line in f if line.strip()]
    try:
        return _json.loads(_core.prune_json(data, name, texts, examples))
    except ValueError as e:
        message = str(e)
        raise ValueError(message if message.startswith(name) else f"{name}: {message}") from None
