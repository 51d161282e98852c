"""mha_lab.head_report, induction_probe and pronoun_probe (docs/python.md, docs/patterns.md "Head
report card"): the golden card of tests/fixtures/head_report.json (numpy), a hand-made
previous-token head, the probes run through a toy "model" whose tokens are the words, and bad
input as ValueError."""

import json
import os
import unittest

import numpy as np

import mha_lab

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def golden():
    with open(os.path.join(FIXTURES, "head_report.json")) as f:
        return json.load(f)


def words_with_offsets(text):
    tokens, offsets, start = [], [], 0
    for w in text.split(" "):
        tokens.append(w)
        offsets.append((start, start + len(w)))
        start += len(w) + 1
    return tokens, offsets


class HeadReportTest(unittest.TestCase):
    def test_previous_token_head_scores_one(self):
        n = 6
        a = np.zeros((1, n, n), np.float32)
        a[0, 0, 0] = 1
        a[0, np.arange(1, n), np.arange(0, n - 1)] = 1
        card = mha_lab.head_report(a, ["a", "b", "c", "d", "e", "f"])
        scores = {s["name"]: s for s in card["heads"][0]["scores"]}
        self.assertEqual(scores["previous_token_argmax"]["value"], 1.0)
        self.assertAlmostEqual(
            scores["previous_token_argmax"]["chance"], np.mean(1 / np.arange(2, n + 1)), 15
        )
        self.assertEqual(scores["argmax_offset"]["offset"], -1)
        self.assertEqual(card["heads"][0]["labels"], ["previous-token"])
        self.assertIsNone(scores["coreference"]["value"])

    def test_golden_by_word_with_a_probe(self):
        doc = golden()
        examples = doc["examples"]
        main = examples[1]
        probes = []
        for e in (examples[0], examples[2]):
            ex = {"tokens": e["tokens"], "attn": np.array(e["attn"]), "word_index": e["word_index"]}
            if "probe" in e:
                ex.update(
                    offsets=[(t, t + 1) for t in range(len(e["tokens"]))],
                    pronoun=(8, 9),
                    antecedent=(6, 8),
                    other=(1, 5),
                )
            probes.append(ex)
        card = mha_lab.head_report(
            np.array(main["attn"], np.float32), main["tokens"], main["word_index"], probes
        )
        self.assertTrue(card["by_word"])
        self.assertEqual(card["examples"], 3)
        # pooled in the order 1, 0, 2 (the golden card: 0, 1, 2): sums, equal to rounding
        for head, g in zip(card["heads"], doc["by_word"]):
            for s in head["scores"]:
                want = g[s["name"]]
                self.assertEqual(s["count"], want["count"], s["name"])
                if want["value"] is None:
                    self.assertIsNone(s["value"])
                    continue
                self.assertAlmostEqual(s["value"], want["value"], 12)
                self.assertAlmostEqual(s["chance"], want["chance"], 12)

    def test_probes_run_through_a_toy_model(self):
        # A "model" whose tokens are the words and whose one head looks, from the last word, at
        # the antecedent's name: every probe is right, and the nearer name is right half the time.
        probe = mha_lab.pronoun_probe(seed=2, count=10)
        for ex in probe["examples"]:
            tokens, offsets = words_with_offsets(ex["text"])
            n = len(tokens)
            a = np.tril(np.ones((1, n, n), np.float32))
            a /= a.sum(-1, keepdims=True)
            name = [t for t, (s, e) in enumerate(offsets) if e == ex["antecedent"][1]][0]
            a[0, n - 1] = 0
            a[0, n - 1, name] = 1
            ex.update(tokens=tokens, offsets=offsets, attn=a)
        card = mha_lab.head_report(None, None, probes=probe)
        coref = [s for s in card["heads"][0]["scores"] if s["name"] == "coreference"][0]
        self.assertEqual((coref["value"], coref["chance"], coref["count"]), (1.0, 0.5, 10))
        self.assertEqual(card["nearer_name"], 0.5)

    def test_induction_probe_draws_as_numpy(self):
        probe = mha_lab.induction_probe(seed=3, count=2)
        self.assertEqual(
            [ex["words"] for ex in probe["examples"]], golden()["induction_probe_seed_3"]
        )
        self.assertEqual(len(probe["examples"][0]["text"].split(" ")), 100)

    def test_pronoun_probe_takes_names_and_places(self):
        probe = mha_lab.pronoun_probe(seed=1, count=4, names=["ann", "bob"], places=["rome"])
        for ex in probe["examples"]:
            self.assertIn("rome", ex["text"])
            self.assertIn(ex["text"][slice(*ex["pronoun"])], ("she", "he"))

    def test_bad_input_is_a_value_error(self):
        a = np.full((1, 3, 3), 1 / 3, np.float32)
        with self.assertRaisesRegex(ValueError, "tokens"):
            mha_lab.head_report(a, ["a", "b"])
        bad = a.copy()
        bad[0, 1, 1] = np.nan
        with self.assertRaisesRegex(ValueError, "NaN"):
            mha_lab.head_report(bad, ["a", "b", "c"])
        with self.assertRaisesRegex(ValueError, "word_index"):
            mha_lab.head_report(a, ["a", "b", "c"], word_index=[0, 2, 3])
        probe = {
            "examples": [
                {
                    "tokens": ["a", "b", "c"],
                    "attn": a,
                    "offsets": [(0, 1), (2, 3), (4, 5)],
                    "pronoun": (4, 5),
                    "antecedent": (0, 1),
                    "other": (9, 12),
                }
            ]
        }
        with self.assertRaisesRegex(ValueError, "covers no token"):
            mha_lab.head_report(None, None, probes=probe)
        with self.assertRaisesRegex(ValueError, "count"):
            mha_lab.pronoun_probe(count=0)
        with self.assertRaisesRegex(ValueError, "names"):
            mha_lab.pronoun_probe(names="ann")


if __name__ == "__main__":
    unittest.main()
