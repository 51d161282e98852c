"""Smoke test of scripts/training/train_english_lm.py and evaluate_english_lm.py: a tokenizer of
300 pieces and three optimisation steps of a tiny model (d_model 16, 4 heads, 2 layers, windows of
16 tokens) on tests/fixtures/english_smoke_corpus.txt (no network), the file read back by the core
(`mha lm --model`), whose attention weights must be PyTorch's for the same text (1e-4 absolute,
as docs/english-lm-format.md's golden data), then the evaluation's report and heads file from it
and its checkpoints. Needs python3-torch, python3-xxhash and python3-sentencepiece, and the
evaluation this build's mha_lab; ctest runs it as training_english with MHA_CLI set to
build/native/mha and PYTHONPATH to build/native/python.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import sentencepiece as spm
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINING = os.path.join(ROOT, "scripts", "training")
CORPUS = os.path.join(ROOT, "tests", "fixtures", "english_smoke_corpus.txt")
CLI = os.environ.get("MHA_CLI", os.path.join(ROOT, "build", "native", "mha"))
sys.path.insert(0, TRAINING)
import english_lm_model as M  # noqa: E402
import english_subwords  # noqa: E402

TINY = [
    "--d-model",
    "16",
    "--num-heads",
    "4",
    "--num-layers",
    "2",
    "--dim-feedforward",
    "32",
    "--vocab-size",
    "300",
    "--seq-len",
    "16",
    "--batch-size",
    "4",
    "--steps",
    "3",
    "--eval-every",
    "3",
    "--common-words",
    "40",
    "--curriculum-steps",
    "1",
    "--repeat-min",
    "2",
    "--repeat-max",
    "5",
    "--curriculum-repeat-max",
    "6",
    "--threads",
    "1",
]
TEXT = "The man saw the girl and he smiled ."


def run(args):
    done = subprocess.run(
        [sys.executable] + args,
        capture_output=True,
        text=True,
        env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class TrainEnglishLM(unittest.TestCase):
    def test_three_steps_then_the_core_reads_the_file_and_the_evaluation_runs(self):
        with tempfile.TemporaryDirectory() as out:
            model_file = os.path.join(out, "tiny.safetensors")
            tokenizer_dir = os.path.join(out, "tokenizer")
            checkpoints = os.path.join(out, "checkpoints")
            log = run(
                [os.path.join(TRAINING, "train_english_lm.py")]
                + TINY
                + ["--corpus-file", CORPUS, "--out", model_file]
                + ["--tokenizer-dir", tokenizer_dir, "--checkpoints", checkpoints]
            )
            self.assertIn("train 44 sentences", log)  # 48 lines, every tenth held out
            self.assertIn("step      3", log)
            # A checkpoint at step 0 and at the end, each a model the core reads.
            self.assertEqual(
                sorted(os.listdir(checkpoints)),
                ["step_00000.safetensors", "step_00003.safetensors"],
            )

            # PyTorch's weights for TEXT from the file, against the core's.
            model, vocab, meta = M.read_file(model_file)
            self.assertEqual(json.loads(meta["config"])["num_heads"], 4)
            self.assertEqual(len(vocab), 300)
            sp = spm.SentencePieceProcessor(
                model_file=os.path.join(tokenizer_dir, "english_bpe.model")
            )
            self.assertEqual(json.loads(meta["tokenizer"]), english_subwords.describe(sp))
            ids = [1] + english_subwords.encode(sp, TEXT)
            with torch.no_grad():
                _, weights = model(torch.tensor([ids]), need_weights=True)
            core = json.loads(
                subprocess.run(
                    [CLI, "lm", "--model", model_file, "--json", TEXT],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            self.assertEqual(core["ids"], ids)
            self.assertEqual(len(core["attn_weights"]), 2)
            for layer, w in enumerate(weights):
                want = w[0].numpy()
                got = torch.tensor(core["attn_weights"][layer]).numpy()
                self.assertEqual(got.shape, want.shape)
                self.assertLess(abs(got - want).max(), 1e-4, f"layer {layer}")

            heads_file = os.path.join(out, "heads.json")
            report = run(
                [
                    os.path.join(TRAINING, "evaluate_english_lm.py"),
                    "--model",
                    model_file,
                    "--corpus-file",
                    CORPUS,
                    "--heads-out",
                    heads_file,
                    "--tokenizer",
                    os.path.join(tokenizer_dir, "english_bpe.model"),
                    "--checkpoints",
                    checkpoints,
                    "--probes",
                    "10",
                ]
            )
            self.assertIn("| loss per character, this model (held-out sentences", report)
            self.assertIn("| step_00003.safetensors |", report)
            with open(heads_file, encoding="utf-8") as f:
                heads = json.load(f)
            self.assertEqual(
                [(h["layer"], h["head"]) for h in heads["heads"]],
                [(layer, head) for layer in range(2) for head in range(4)],
            )
            self.assertEqual(heads["measured"]["pronoun_probes"], 10)
            self.assertEqual([c["step"] for c in heads["checkpoints"]], [0, 3])
            names = [row["name"] for row in heads["heads"][0]["card"]]
            self.assertIn("previous_token_argmax", names)
            self.assertIn("coreference", names)


if __name__ == "__main__":
    unittest.main()
