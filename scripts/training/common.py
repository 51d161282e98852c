"""What the training scripts of both trained models share (scripts/training/train_date_model.py,
scripts/training/train_english_lm.py and english_lm_model.py): seeds and threads, the sinusoidal
positions, fp16 rounding, model files (safetensors, every tensor F16, metadata with a checksum),
the cosine learning-rate decay and the progress log.

Each model keeps its own format name, version and checksum rule (docs/date-model-format.md,
docs/english-lm-format.md); the layout of the file is the same for both:
u64 little-endian header length, the header as JSON ({"__metadata__": {str: str}, name:
{"dtype": "F16", "shape", "data_offsets"}}, padded with spaces to a multiple of 8 bytes), then the
data section, tensors in the order written.
"""

import json
import math
import struct
import time

import numpy as np
import torch
import xxhash


def seed_and_threads(seed, threads):
    """torch's thread count and its global seed (CPU results depend on both)."""
    torch.set_num_threads(threads)
    torch.manual_seed(seed)


def sinusoidal_pe(n, d):
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...), computed in double and
    rounded to float32 as mha::sinusoidal_positional_encoding does (Vaswani et al. 2017, §3.5).
    Returns a float32 tensor (n, d)."""
    pos = np.arange(n, dtype=np.float64)[:, None]
    i2 = np.arange(0, d, 2, dtype=np.float64)[None, :]
    ang = pos / np.power(10000.0, i2 / d)
    pe = np.zeros((n, d), dtype=np.float64)
    pe[:, 0::2] = np.sin(ang)
    pe[:, 1::2] = np.cos(ang)[:, : d // 2]
    return torch.tensor(pe.astype(np.float32))


def round_to_fp16_(model):
    """Round every parameter to IEEE half and back, in place (what the file holds)."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())


def cosine_decay(frac, floor=0.0):
    """The learning-rate factor at progress frac in [0, 1]: 1 at 0, falling along half a cosine
    to floor at 1."""
    return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * frac))


def data_xxh64(entries, data, meta):
    """XXH64 (seed 0) of the data section alone, as hex (the date model's checksum)."""
    return xxhash.xxh64(data, seed=0).hexdigest()


def write_f16_safetensors(path, tensors, metadata, checksum):
    """Write tensors [(name, float32 array)] as F16 in this order, with metadata {str: str} and
    metadata["xxh64"] = checksum(entries, data, metadata) (its place among the keys is where
    metadata has it, else last). Returns (bytes written, the checksum)."""
    entries, chunks, offset = {}, [], 0
    for name, a in tensors:
        b = np.ascontiguousarray(a.astype("<f2")).tobytes()
        entries[name] = {
            "dtype": "F16",
            "shape": list(a.shape),
            "data_offsets": [offset, offset + len(b)],
        }
        chunks.append(b)
        offset += len(b)
    data = b"".join(chunks)
    meta = dict(metadata)
    meta["xxh64"] = checksum(entries, data, meta)
    assert all(isinstance(v, str) for v in meta.values()), meta
    doc = {"__metadata__": meta}
    doc.update(entries)
    hjson = json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    hjson += b" " * ((-len(hjson)) % 8)  # the data starts 8-byte aligned
    blob = struct.pack("<Q", len(hjson)) + hjson + data
    with open(path, "wb") as f:
        f.write(blob)
    return len(blob), meta["xxh64"]


def read_safetensors_parts(path):
    """(tensor entries {name: {"dtype", "shape", "data_offsets"}}, data section bytes, metadata
    {key: str}) of a safetensors file, unchecked: the caller checks its format and checksum."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    doc = json.loads(blob[8 : 8 + n].decode("utf-8"))
    data = blob[8 + n :]
    meta = doc.pop("__metadata__")
    return doc, data, meta


def f16_arrays(entries, data):
    """{name: float32 array} of F16 tensor entries; checks that every tensor is F16, lies in the
    data section with the size its shape says, and that no byte of the data section is unused."""
    tensors = {}
    end = 0
    for name, t in entries.items():
        assert t["dtype"] == "F16", (name, t)
        b, e = t["data_offsets"]
        count = int(np.prod(t["shape"])) if t["shape"] else 1
        assert e - b == 2 * count and 0 <= b <= e <= len(data), (name, t)
        tensors[name] = np.frombuffer(data[b:e], dtype="<f2").reshape(t["shape"]).astype(np.float32)
        end = max(end, e)
    assert end == len(data), "data section has bytes no tensor uses"
    return tensors


class Progress:
    """The training log: seconds since the start and the loss smoothed over steps (each step
    keeps 0.98 of the average and adds 0.02 of its loss; the first step's loss starts it)."""

    def __init__(self):
        self.start = time.time()
        self.loss = None

    def seconds(self):
        return time.time() - self.start

    def add_loss(self, loss):
        self.loss = loss if self.loss is None else 0.98 * self.loss + 0.02 * loss

    def log(self, step, fields):
        """Print one line: step, seconds, smoothed loss, then each (name, text) of fields."""
        loss = "-" if self.loss is None else f"{self.loss:.4f}"
        rest = "".join(f"  {k} {v}" for k, v in fields)
        print(f"step {step:6d}  {self.seconds():7.1f}s  loss {loss}{rest}", flush=True)
