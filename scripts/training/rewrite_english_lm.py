#!/usr/bin/env python3
"""Rewrites an English model file in the current format version (docs/english-lm-format.md)
without retraining: reads it with english_lm_model.read_file (which also reads older versions)
and writes the same tensors, config, vocabulary and training record with write_file.

Then checks that nothing the model means has changed: the data section is byte-for-byte the old
one, the tensor entries (dtype, shape, data_offsets) and the config, vocab and training strings
are equal, and the written file reads back with its new checksum. Exits 1 naming the first
difference otherwise (the input file is left alone unless --out names it).

    /usr/bin/python3 scripts/training/rewrite_english_lm.py web/english_lm.safetensors
    /usr/bin/python3 scripts/training/rewrite_english_lm.py old.safetensors --out new.safetensors
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import english_lm_model as lm  # noqa: E402


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("model", help="the model file to read")
    ap.add_argument("--out", help="where to write (default: over the input file)")
    a = ap.parse_args()
    out = a.out or a.model

    old_entries, old_data, old_meta = lm.read_parts(a.model)
    model, vocab, meta = lm.read_file(a.model)
    fd, tmp = tempfile.mkstemp(suffix=".safetensors", dir=os.path.dirname(os.path.abspath(out)))
    os.close(fd)
    try:
        size, checksum = lm.write_file(tmp, model, vocab, json.loads(meta["training"]))
        new_entries, new_data, new_meta = lm.read_parts(tmp)  # checks the new checksum
        problems = []
        if new_data != old_data:
            problems.append("the data section differs")
        if new_entries != old_entries:
            problems.append("the tensor entries differ")
        for key in ("format", "config", "vocab", "training"):
            if new_meta.get(key) != old_meta.get(key):
                problems.append(f"metadata {key!r} differs")
        if set(new_meta) != set(old_meta):
            problems.append(f"metadata keys differ: {sorted(set(new_meta) ^ set(old_meta))}")
        if problems:
            sys.exit(f"rewrite_english_lm: not written: {'; '.join(problems)}")
        shutil.copymode(a.model, tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print(
        json.dumps(
            {
                "file": out,
                "bytes": size,
                "format_version": new_meta["format_version"],
                "xxh64": checksum,
                "previous_format_version": old_meta["format_version"],
                "previous_xxh64": old_meta["xxh64"],
                "data_section_bytes": len(new_data),
                "data_section_identical": True,
            }
        )
    )


if __name__ == "__main__":
    main()
