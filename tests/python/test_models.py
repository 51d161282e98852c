"""mha_lab.models and mha_lab.prune (docs/python.md, docs/head-experiments.md): the shipped models'
summaries against their files' own tensors, a pruning curve of the tiny English model whose steps
are recomputed by brute force from its loss, the date model's curve, and bad input as
ValueError."""

import json
import os
import struct
import unittest

import mha_lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEB = os.path.join(ROOT, "web")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
TINY = os.path.join(FIXTURES, "english_lm_tiny_relbias_mlp.safetensors")


def header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


def elements(entry):
    n = 1
    for s in entry["shape"]:
        n *= s
    return n


class Models(unittest.TestCase):
    def test_every_shipped_model_with_its_counts(self):
        got = {m["file"]: m for m in mha_lab.models(WEB)}
        self.assertIn("english_lm.safetensors", got)
        self.assertIn("date_model.safetensors", got)
        for file, m in got.items():
            h = header(os.path.join(WEB, file))
            meta = h.pop("__metadata__")
            self.assertEqual(m["checksum"], meta["xxh64"], file)
            self.assertEqual(m["parameters"], sum(elements(e) for e in h.values()), file)
            attn = sum(elements(e) for k, e in h.items() if "in_proj_" in k or "out_proj." in k)
            self.assertEqual(m["attention_parameters"], attn, file)
            d = m["d_model"]
            self.assertEqual(attn % (4 * d * d + 4 * d), 0, file)
        self.assertEqual(got["english_lm.safetensors"]["kind"], "english")
        self.assertEqual(got["english_lm.safetensors"]["step"], 3200)
        self.assertEqual(got["date_model.safetensors"]["heads"], 24)

    def test_bad_folders_and_files(self):
        with self.assertRaisesRegex(ValueError, "is not a folder"):
            mha_lab.models(os.path.join(ROOT, "no-such-folder"))
        # tests/fixtures holds a safetensors file that is no model of mha-lab.
        with self.assertRaisesRegex(ValueError, "not a model of mha-lab"):
            mha_lab.models(FIXTURES)


class Prune(unittest.TestCase):
    TEXTS = ["the cat sat", "a dog ran home", "on the mat .", "she said hello"]

    def test_english_curve_steps(self):
        r = mha_lab.prune(TINY, texts=self.TEXTS)
        self.assertEqual(r["kind"], "english")
        self.assertEqual(r["metric"], "loss_per_character")
        self.assertEqual(r["model"], os.path.basename(TINY))
        steps = r["steps"]
        self.assertEqual(len(steps), len(r["heads"]) + 1)
        self.assertIsNone(steps[0]["removed"])
        self.assertEqual([s["heads_left"] for s in steps], list(range(len(r["heads"]), -1, -1)))
        self.assertEqual(sorted(s["removed"] for s in steps[1:]), sorted(r["heads"]))
        self.assertEqual((r["selection_items"], r["measurement_items"]), (2, 2))
        # The same curve from the file's bytes.
        with open(TINY, "rb") as f:
            again = mha_lab.prune(f.read(), texts=self.TEXTS)
        self.assertEqual(again["steps"], steps)

    def test_date_curve(self):
        ex = [
            ("Nov 30, 2026", "2026-11-30"),
            ("march 3 1999", "1999-03-03"),
            {"input": "12/25/2001", "target": "2001-12-25"},
            ("Friday, July 4, 1776", "1776-07-04"),
        ]
        r = mha_lab.prune(os.path.join(WEB, "date_model.safetensors"), examples=ex)
        self.assertEqual(r["metric"], "exact_match")
        self.assertFalse(r["lower_is_better"])
        self.assertEqual(len(r["steps"]), 25)
        self.assertEqual(r["steps"][-1]["heads_left"], 0)
        for s in r["steps"]:
            self.assertIn(s["value"], (0.0, 0.5, 1.0))

    def test_bad_input(self):
        with self.assertRaisesRegex(ValueError, "pruned on held-out examples"):
            mha_lab.prune(os.path.join(WEB, "date_model.safetensors"))
        with self.assertRaisesRegex(ValueError, "not both"):
            mha_lab.prune(TINY, texts=["a", "b"], examples=[("a", "b")])
        with self.assertRaisesRegex(ValueError, r"texts\[1\]: text is not valid Unicode"):
            mha_lab.prune(TINY, texts=["a", "b\ud800c"])
        with self.assertRaisesRegex(ValueError, r"examples\[0\] input: text is not valid"):
            mha_lab.prune(os.path.join(WEB, "date_model.safetensors"), examples=[("\ud800", "x")])
        with self.assertRaisesRegex(ValueError, "texts must be a list, got int"):
            mha_lab.prune(TINY, texts=5)
        with self.assertRaisesRegex(ValueError, "^torch_mha_layer.safetensors: not a model"):
            mha_lab.prune(os.path.join(FIXTURES, "torch_mha_layer.safetensors"), texts=["a", "b"])
        # A generator is read once.
        gen = mha_lab.prune(TINY, texts=(t for t in self.TEXTS))
        self.assertEqual(gen["steps"], mha_lab.prune(TINY, texts=self.TEXTS)["steps"])
        with self.assertRaisesRegex(ValueError, "pruned on held-out examples"):
            mha_lab.prune(os.path.join(WEB, "date_model.safetensors"), texts=["a", "b"])
        with self.assertRaisesRegex(ValueError, "texts must be a list, got str"):
            mha_lab.prune(TINY, texts="the cat")
        with self.assertRaisesRegex(ValueError, r"examples\[0\] must be"):
            mha_lab.prune(os.path.join(WEB, "date_model.safetensors"), examples=[("a",)])
        with self.assertRaisesRegex(ValueError, "cannot read the model"):
            mha_lab.prune(os.path.join(ROOT, "no-such.safetensors"), texts=["a"])
        with self.assertRaisesRegex(ValueError, "at least one text"):
            mha_lab.prune(TINY, texts=["the cat"])
        with self.assertRaisesRegex(ValueError, "model must be a path"):
            mha_lab.prune(3, texts=["a", "b"])


if __name__ == "__main__":
    unittest.main()
