"""Smoke test of scripts/training/train_date_model.py: three optimisation steps (batch 8, a
schedule by steps alone), the model file and both fixtures written to a temporary folder, then the
file read back by the core (`mha translate --model`), whose answer and attention weights must be
PyTorch's for the fixture's example (tolerances of docs/date-model-format.md's golden data:
attention 1e-4 absolute). Needs python3-torch and python3-xxhash; ctest runs it as training_date
with MHA_CLI set to build/native/mha.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "training", "train_date_model.py")
CLI = os.environ.get("MHA_CLI", os.path.join(ROOT, "build", "native", "mha"))


def max_abs_diff(a, b):
    """Largest |a - b| over two nested lists of the same shape."""
    if isinstance(a, list):
        assert len(a) == len(b), (len(a), len(b))
        return max((max_abs_diff(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b)


def nested(t):
    """A fixture tensor {"shape", "data"} as nested lists."""
    data, shape = t["data"], t["shape"]
    for n in reversed(shape[1:]):
        data = [data[i : i + n] for i in range(0, len(data), n)]
    return data


class TrainDateModel(unittest.TestCase):
    def test_three_steps_then_the_core_reads_the_file(self):
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run(
                [
                    sys.executable,
                    SCRIPT,
                    "--steps",
                    "3",
                    "--batch-size",
                    "8",
                    "--schedule-minutes",
                    "0",
                    "--eval-every",
                    "3",
                    "--threads",
                    "1",
                    "--min-heldout",
                    "0",
                    "--out-root",
                    out,
                ],
                capture_output=True,
                text=True,
                env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
            )
            self.assertEqual(run.returncode, 0, run.stderr[-2000:])
            self.assertIn("training stopped after 3 steps", run.stdout)
            model = os.path.join(out, "web", "date_model.safetensors")
            with open(
                os.path.join(out, "tests", "fixtures", "date_model_golden.json"), encoding="utf-8"
            ) as f:
                golden = json.load(f)
            self.assertEqual(golden["model_file_bytes"], os.path.getsize(model))
            case = next(c for c in golden["cases"] if c["name"] == "issue_example")
            got = subprocess.run(
                [CLI, "translate", "--model", model, "--json", case["input"]],
                capture_output=True,
                text=True,
                check=True,
            )
            core = json.loads(got.stdout)
            self.assertEqual(core["output"], case["output"])
            self.assertEqual(core["num_heads"], golden["config"]["num_heads"])
            for key, name in (("encoder_self", "encoder_self"), ("cross", "cross")):
                want = nested(case["attention"][name])
                self.assertEqual(len(core[key]), len(want))
                self.assertLess(max_abs_diff(core[key], want), 1e-4, key)


if __name__ == "__main__":
    unittest.main()
