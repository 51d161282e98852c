"""The Python package mha_lab against the CLI, the committed PyTorch golden data and the core's
errors. Run by ctest (test "python") as

    PYTHONPATH=build/native/python MHA_CLI=build/native/mha \
        /usr/bin/python3 -m unittest discover -s tests/python
"""
import base64
import json
import math
import os
import re
import struct
import subprocess
import tempfile
import unittest
import zlib

import numpy as np

import mha_lab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
CLI = os.environ.get("MHA_CLI", os.path.join(ROOT, "build", "native", "mha"))

try:
    import torch
except ImportError:  # python3-torch is optional: only the tensor-input tests need it
    torch = None


def cli(*args, stdin=None):
    """Runs build/native/mha and returns its JSON output."""
    out = subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def f32(t):
    """A fixture tensor {"shape", "data"} ("-inf" allowed) as a float32 numpy array."""
    data = [-math.inf if x == "-inf" else x for x in t["data"]]
    return np.array(data, dtype=np.float32).reshape(t["shape"])


def torch_cases():
    with open(os.path.join(FIXTURES, "torch_mha.json"), encoding="utf-8") as f:
        return json.load(f)["cases"]


def forward_args(c):
    """A torch_mha.json case as mha_lab.forward's keyword arguments."""
    kw = {name: f32(t) for name, t in c["weights"].items()}
    kw["num_heads"] = c["num_heads"]
    if not c["self_attention"]:
        kw["key"] = f32(c["key"])
        kw["value"] = f32(c["value"])
    am = c["attn_mask"]
    if am is not None:
        if am["kind"] == "bool":
            kw["attn_mask"] = np.array(am["data"], dtype=bool).reshape(am["shape"])
        else:
            kw["attn_mask"] = f32(am)
    kpm = c["key_padding_mask"]
    if isinstance(kpm, dict):
        kw["key_padding_mask"] = f32(kpm)
    elif kpm is not None:
        kw["key_padding_mask"] = np.array(kpm, dtype=bool)
    kw["is_causal"] = c["is_causal"]
    return kw


def cli_request(c):
    """The same case as an `mha forward` request (the CLI's JSON)."""
    r = {"num_heads": c["num_heads"], "query": f32(c["query"]).tolist()}
    for name, t in c["weights"].items():
        r[name] = f32(t).tolist()
    if not c["self_attention"]:
        r["key"] = f32(c["key"]).tolist()
        r["value"] = f32(c["value"]).tolist()
    am = c["attn_mask"]
    if am is not None and am["kind"] == "bool":
        r["attn_mask"] = np.array(am["data"], dtype=bool).reshape(am["shape"]).tolist()
    elif am is not None:  # -inf written as "-inf", as JSON has no infinity
        r["attn_mask"] = np.where(np.isneginf(f32(am)), "-inf", f32(am).astype(object)).tolist()
    kpm = c["key_padding_mask"]
    if isinstance(kpm, dict):
        r["key_padding_mask"] = kpm["data"]
    elif kpm is not None:
        r["key_padding_mask"] = [bool(x) for x in kpm]
    if c["is_causal"]:
        r["is_causal"] = True
    return r


class Module08(unittest.TestCase):
    """Module 08: seed 7, 5 tokens, d_model 8, 2 heads."""

    def test_the_course_numbers(self):
        r = mha_lab.numpy_experiment(seed=7, tokens=5, d_model=8, num_heads=2)
        self.assertEqual(r["attn_weights"].shape, (2, 5, 5))
        self.assertEqual(r["attn_weights"].dtype, np.float32)
        w = r["attn_weights"].astype(np.float64)
        np.testing.assert_array_equal(np.round(w[0, 0], 3), [0, 0, 0.424, 0.576, 0])
        np.testing.assert_array_equal(np.round(w[1, 0], 3), [0, 0, 0, 0, 1])
        self.assertEqual(r["parameter_count"], 256)
        # X is numpy's own draws: np.random.seed(7); np.random.randn(5, 8).
        rng = np.random.RandomState(7)
        np.testing.assert_array_equal(r["X"], rng.randn(5, 8))
        np.testing.assert_array_equal(r["Wq"], rng.randn(8, 8))

    def test_equals_the_cli(self):
        for extra, kw in (
            ([], {}),
            (["--causal"], {"is_causal": True}),
            (["--positional"], {"positional": True}),
        ):
            expected = cli(
                "numpy-experiment",
                "--seed",
                "7",
                "--tokens",
                "5",
                "--d-model",
                "8",
                "--num-heads",
                "2",
                *extra,
            )
            r = mha_lab.numpy_experiment(seed=7, tokens=5, d_model=8, num_heads=2, **kw)
            # The CLI prints float32 values in their shortest round-trip form: bit for bit.
            np.testing.assert_array_equal(
                r["attn_weights"], np.array(expected["attn_weights"], np.float32)
            )
            np.testing.assert_array_equal(r["output"], np.array(expected["output"], np.float32))
            for name in ("X", "Wq", "Wk", "Wv", "Wo"):
                np.testing.assert_array_equal(r[name], np.array(expected[name]))
            self.assertEqual(r["parameter_count"], expected["parameter_count"])

    def test_matches_numpy(self):
        # The course's own program in numpy, float64.
        r = mha_lab.numpy_experiment(seed=3, tokens=6, d_model=12, num_heads=3)
        np.random.seed(3)
        X = np.random.randn(6, 12)
        Wq, Wk, Wv, Wo = (np.random.randn(12, 12) for _ in range(4))
        Q, K, V = X @ Wq, X @ Wk, X @ Wv
        heads = []
        for i in range(3):
            s = slice(4 * i, 4 * i + 4)
            S = Q[:, s] @ K[:, s].T / 2.0
            A = np.exp(S - S.max(axis=1, keepdims=True))
            A /= A.sum(axis=1, keepdims=True)
            np.testing.assert_allclose(r["attn_weights"][i], A, atol=1e-6)
            heads.append(A @ V[:, s])
        np.testing.assert_allclose(
            r["output"], np.concatenate(heads, axis=1) @ Wo, rtol=1e-5, atol=1e-4
        )


class PyTorchGolden(unittest.TestCase):
    """Every case of tests/fixtures/torch_mha.json (nn.MultiheadAttention)."""

    def test_every_case_matches_pytorch_and_the_cli(self):
        names = []
        for c in torch_cases():
            names.append(c["name"])
            r = mha_lab.forward(f32(c["query"]), **forward_args(c))
            np.testing.assert_allclose(
                r["attn_weights"], f32(c["expected"]["attn_weights"]), atol=1e-5, err_msg=c["name"]
            )
            np.testing.assert_allclose(
                r["output"], f32(c["expected"]["output"]), atol=1e-4, rtol=1e-4, err_msg=c["name"]
            )
            np.testing.assert_array_equal(
                r["fully_masked_rows"],
                np.array(c["expected"]["fully_masked_rows"]["data"], np.uint8).reshape(
                    c["expected"]["fully_masked_rows"]["shape"]
                ),
                err_msg=c["name"],
            )
            # The CLI runs the same core on the same float32 inputs: the same bits.
            expected = cli("forward", stdin=json.dumps(cli_request(c)))
            np.testing.assert_array_equal(
                r["attn_weights"], np.array(expected["attn_weights"], np.float32), err_msg=c["name"]
            )
            np.testing.assert_array_equal(
                r["output"], np.array(expected["output"], np.float32), err_msg=c["name"]
            )
        self.assertIn("float_key_padding_mask", names)
        self.assertIn("float_key_padding_mask_float_attn_mask", names)

    def test_float_key_padding_mask_is_added(self):
        c = next(c for c in torch_cases() if c["name"] == "float_key_padding_mask")
        kw = forward_args(c)
        kpm = kw.pop("key_padding_mask")
        with_mask = mha_lab.forward(
            f32(c["query"]), key_padding_mask=kpm, keep_intermediates=True, **kw
        )
        plain = mha_lab.forward(f32(c["query"]), keep_intermediates=True, **kw)
        finite = np.isfinite(kpm)
        np.testing.assert_allclose(
            with_mask["scores"][:, :, finite], (plain["scores"] + kpm)[:, :, finite], atol=1e-5
        )
        self.assertTrue(np.all(with_mask["attn_weights"][:, :, ~finite] == 0))
        # float64 masks are taken too (rounded to float32).
        again = mha_lab.forward(f32(c["query"]), key_padding_mask=kpm.astype(np.float64), **kw)
        np.testing.assert_array_equal(again["attn_weights"], with_mask["attn_weights"])

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_torch_tensors_in_numpy_out(self):
        torch.manual_seed(0)
        layer = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        x = torch.randn(1, 5, 8)
        kpm = torch.tensor([[False, False, True, False, False]])
        with torch.no_grad():
            out, w = layer(
                x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False
            )
        r = mha_lab.forward(
            x,
            layer.in_proj_weight,
            layer.out_proj.weight,
            2,
            in_proj_bias=layer.in_proj_bias,
            out_proj_bias=layer.out_proj.bias,
            key_padding_mask=kpm,
        )
        self.assertIsInstance(r["output"], np.ndarray)
        np.testing.assert_allclose(r["attn_weights"], w[0].numpy(), atol=1e-6)
        np.testing.assert_allclose(r["output"], out[0].numpy(), atol=1e-5)


class Errors(unittest.TestCase):
    """Bad input: ValueError with the core's message, never a crash or NaN."""

    def setUp(self):
        c = next(c for c in torch_cases() if c["name"] == "bias")
        self.query = f32(c["query"])
        self.kw = forward_args(c)

    def test_d_model_not_divisible(self):
        with self.assertRaisesRegex(ValueError, r"^d_model=10 is not divisible by num_heads=3"):
            mha_lab.numpy_experiment(seed=7, tokens=5, d_model=10, num_heads=3)
        kw = dict(self.kw, num_heads=3)
        with self.assertRaisesRegex(ValueError, r"d_model=8 is not divisible by num_heads=3"):
            mha_lab.forward(self.query, **kw)

    def test_wrong_dtype(self):
        with self.assertRaisesRegex(
            ValueError, r"query has dtype int64; expected float32 or float64"
        ):
            mha_lab.forward(self.query.astype(np.int64), **self.kw)
        kw = dict(self.kw, attn_mask=np.zeros((5, 5), np.int32))
        with self.assertRaisesRegex(ValueError, r"attn_mask has dtype int32; expected bool"):
            mha_lab.forward(self.query, **kw)

    def test_non_contiguous_arrays_are_copied(self):
        # Fortran order, a transposed view and a [::2] view read as their C-contiguous copies.
        expected = mha_lab.forward(self.query, **self.kw)
        for q in (np.asfortranarray(self.query), np.repeat(self.query, 2, axis=0)[::2]):
            self.assertFalse(q.flags.c_contiguous)
            r = mha_lab.forward(q, **self.kw)
            np.testing.assert_array_equal(r["attn_weights"], expected["attn_weights"])
        kw = dict(self.kw, in_proj_weight=np.ascontiguousarray(self.kw["in_proj_weight"].T).T)
        self.assertFalse(kw["in_proj_weight"].flags.c_contiguous)
        r = mha_lab.forward(self.query, **kw)
        np.testing.assert_array_equal(r["output"], expected["output"])

    def test_not_finite(self):
        q = self.query.copy()
        q[1, 2] = np.nan
        with self.assertRaisesRegex(ValueError, r"query holds NaN .* flat index 10"):
            mha_lab.forward(q, **self.kw)
        kw = dict(self.kw, key_padding_mask=np.array([0, np.nan, 0, 0, 0], np.float32))
        with self.assertRaisesRegex(ValueError, r"key_padding_mask holds NaN at 1"):
            mha_lab.forward(self.query, **kw)
        kw = dict(self.kw, key_padding_mask=np.array([0, np.inf, 0, 0, 0], np.float32))
        with self.assertRaisesRegex(ValueError, r"key_padding_mask holds \+inf at 1"):
            mha_lab.forward(self.query, **kw)

    def test_shapes(self):
        with self.assertRaisesRegex(
            ValueError, r"key_padding_mask has 4 values, expected one per " r"key token, m = 5"
        ):
            mha_lab.forward(self.query, **dict(self.kw, key_padding_mask=np.zeros(4, bool)))
        with self.assertRaisesRegex(ValueError, r"in_proj_weight is \(24, 7\)"):
            kw = dict(self.kw, in_proj_weight=np.zeros((24, 7), np.float32))
            mha_lab.forward(self.query, **kw)
        # A wrong out-projection is named, not the (correct) query.
        with self.assertRaisesRegex(ValueError, r"out_proj_weight is \(4, 8\)"):
            kw = dict(self.kw, out_proj_weight=np.ascontiguousarray(self.kw["out_proj_weight"][:4]))
            mha_lab.forward(self.query, **kw)
        with self.assertRaisesRegex(ValueError, r"tokens"):
            mha_lab.numpy_experiment(tokens=0)
        with self.assertRaisesRegex(ValueError, r"seed must be an integer"):
            mha_lab.numpy_experiment(seed=1.5)

    def test_head_patterns_errors(self):
        with self.assertRaisesRegex(ValueError, r"rows? .*sum"):
            mha_lab.head_patterns(np.full((2, 3, 3), 0.5, np.float32))
        w = mha_lab.numpy_experiment()["attn_weights"]
        with self.assertRaisesRegex(ValueError, r"tokens has 4"):
            mha_lab.head_patterns(w, ["a", "b", "c", "d"])


class HeadPatterns(unittest.TestCase):
    def test_equals_the_cli(self):
        w = mha_lab.numpy_experiment()["attn_weights"]
        tokens = ["Heads", "look", "at", "different", "things"]
        p = mha_lab.head_patterns(w, tokens)
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "w.npy"), w)
            with open(os.path.join(d, "t.txt"), "w", encoding="utf-8") as f:
                f.write("\n".join(tokens) + "\n")
            expected = cli(
                "patterns", os.path.join(d, "w.npy"), "--tokens", os.path.join(d, "t.txt")
            )
        self.assertEqual(p["layers"], expected["layers"])
        self.assertEqual(p["thresholds"], expected["thresholds"])
        # max_weight is the mean of each row's largest weight (docs/patterns.md).
        for h in range(2):
            self.assertAlmostEqual(
                p["layers"][0]["heads"][h]["scores"]["max_weight"],
                float(np.mean(w[h].max(axis=1))),
                places=6,
            )

    def test_layers_and_hugging_face_tuples(self):
        a = mha_lab.numpy_experiment(seed=1)["attn_weights"]
        b = mha_lab.numpy_experiment(seed=2)["attn_weights"]
        stacked = mha_lab.head_patterns(np.stack([a, b]))
        hf = mha_lab.head_patterns((a[None], b[None]))  # output_attentions: (batch 1, h, n, n)
        self.assertEqual(len(stacked["layers"]), 2)
        self.assertEqual(stacked["layers"], hf["layers"])
        self.assertEqual(
            stacked["layers"][1],
            mha_lab.head_patterns(b)["layers"][0] | {"layer": 1, "name": "layer 1"},
        )


def png_pixels(data):
    """The (rows, cols) palette entries and the palette of an 8-bit palette PNG (filter 0)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(data):
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        chunks[kind] = chunks.get(kind, b"") + data[at + 8 : at + 8 + size]
        at += 12 + size
    cols, rows, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 3)
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(rows, cols + 1)
    assert not raw[:, 0].any()  # filter type 0 on every row
    p = chunks[b"PLTE"]
    return raw[:, 1:].astype(np.int64), [tuple(p[i : i + 3]) for i in range(0, len(p), 3)]


def without_scripts(page):
    """The HTML without the inline scripts' code (<script>...</script>)."""
    return re.sub(r"<script>.*?</script>", "", page, flags=re.S)


DIST_BUILT = os.path.isfile(os.path.join(ROOT, "dist", "mha-attention.js")) and os.path.isfile(
    os.path.join(ROOT, "dist", "mha_wasm_core.js")
)


class Tokenize(unittest.TestCase):
    """tokenize(): the core's token rule, the page's and the element's."""

    def test_tokenize_is_the_core_rule(self):
        # The page's tokenize() wrote these cases (tests/fixtures/english_tokenize.json).
        with open(os.path.join(FIXTURES, "english_tokenize.json"), encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        self.assertGreater(len(cases), 5)
        for case in cases:
            self.assertEqual(mha_lab.tokenize(case["text"]), case["tokens"], case["text"])
        self.assertEqual(mha_lab.tokenize("naïve 👍🏽!"), ["naïve", "👍🏽", "!"])
        self.assertEqual(mha_lab.tokenize("  "), [])
        with self.assertRaisesRegex(ValueError, "text must be a str"):
            mha_lab.tokenize(42)
        with self.assertRaisesRegex(
            ValueError, "^text is not valid Unicode: a lone surrogate at index 4$"
        ):
            mha_lab.tokenize("bad \ud800 surrogate")


@unittest.skipUnless(DIST_BUILT, "dist/ is not built (./scripts/build.sh writes it)")
class Show(unittest.TestCase):
    """show() and show_experiment(): the element with its scripts inline, a picture without
    JavaScript; the browser side is tests/browser/notebook.test.mjs."""

    TOKENS = ["Heads", "look", "at", "different", "things"]

    def test_show_inlines_the_element_and_the_weights(self):
        w = mha_lab.numpy_experiment()["attn_weights"]
        view = mha_lab.show(w, self.TOKENS)
        page = view._repr_html_()
        self.assertEqual(without_scripts(page).count("<mha-attention"), 1)
        with open(os.path.join(ROOT, "dist", "mha-attention.js"), encoding="utf-8") as f:
            self.assertIn(f.read(), page)
        with open(os.path.join(ROOT, "dist", "mha_wasm_core.js"), encoding="utf-8") as f:
            self.assertNotIn(f.read()[:2000], page)  # weights given: no wasm core
        data = page.split('<script type="application/json">')[1].split("</script>")[0]
        given = json.loads(data.replace("<\\/", "</"))
        self.assertEqual(given["tokens"], self.TOKENS)
        np.testing.assert_allclose(given["attn_weights"], w, atol=1e-7)
        # Nothing is requested: no src= or href= anywhere in the output.
        self.assertNotIn(" src=", page)
        self.assertNotIn(" href=", page)
        # The picture without JavaScript: 2 heads x 25 cells, module 08's 0.424 in a tooltip.
        self.assertEqual(page.count("<rect "), 50)
        self.assertIn("Heads → at: 0.424", page)
        self.assertIn("Head patterns", page)

    def test_show_experiment_inlines_the_core(self):
        view = mha_lab.show_experiment(
            seed=7, tokens=5, d_model=8, num_heads=2, text=" ".join(self.TOKENS)
        )
        page = view._repr_html_()
        self.assertIn('seed="7"', page)
        self.assertIn('tokens="Heads look at different things"', page)
        with open(os.path.join(ROOT, "dist", "mha_wasm_core.js"), encoding="utf-8") as f:
            self.assertIn(f.read(), page)
        self.assertIn("Heads → at: 0.424", page)
        with tempfile.TemporaryDirectory() as d:
            path = view.save_html(os.path.join(d, "m08.html"))
            with open(path, encoding="utf-8") as f:
                text = f.read()
        self.assertTrue(text.startswith("<!doctype html>"))
        self.assertIn(page, text)

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_hugging_face_output_attentions_of_torch_tensors(self):
        # output_attentions: one (batch 1, h, n, n) tensor per layer.
        a = torch.from_numpy(mha_lab.numpy_experiment(seed=1)["attn_weights"])
        b = torch.from_numpy(mha_lab.numpy_experiment(seed=2)["attn_weights"])
        page = mha_lab.show((a[None], b[None]), self.TOKENS)._repr_html_()
        self.assertEqual(without_scripts(page).count("<mha-attention"), 2)
        p = mha_lab.head_patterns((a[None], b[None]), self.TOKENS)
        self.assertEqual(p["shape"], [2, 2, 5, 5])
        with self.assertRaisesRegex(ValueError, "a batch of 2"):
            mha_lab.show((torch.stack([a, a]),), self.TOKENS)

    def test_text_is_split_as_the_element_splits_it(self):
        page = mha_lab.show_experiment(text="Heads look at the cat's toy.")._repr_html_()
        # Heads, look, at, the, cat's, toy and "." (the element's rule: docs/embedding.md).
        self.assertIn("seed 7, 7 tokens", page)
        self.assertIn('tokens="Heads look at the cat&#x27;s toy."', page)
        self.assertIn("cat&#x27;s → toy", page)
        self.assertIn("toy → .", page)

    def test_text_beyond_ascii_is_split_by_the_core(self):
        # "e" + U+0301 (a combining mark) stays in its word, as the element splits it; Python's
        # \w would end the word there.
        page = mha_lab.show_experiment(text="cafe\u0301 au lait")._repr_html_()
        self.assertIn("seed 7, 3 tokens", page)

    def test_large_weights_get_a_png_per_head(self):
        # 2 layers x 16 heads x 128 tokens: 524,288 weights, one pixel each.
        z = np.random.default_rng(8).standard_normal((2, 16, 128, 128)) * 2
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        w = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
        page = mha_lab.show(w, [f"w{i}" for i in range(128)])._repr_html_()
        static = without_scripts(page).split("<mha-attention")[0]
        self.assertNotIn("<rect ", static)
        self.assertIn("524,288 weights, 128 × 128 per head: a pixel per weight", static)
        self.assertIn("queries down: w0 w1 w2 w3 … w125 w126 w127", static)
        images = re.findall(
            r'<img src="data:image/png;base64,([^"]+)" width="(\d+)" height="(\d+)"', static
        )
        self.assertEqual(len(images), 32)
        self.assertEqual(images[0][1:], ("256", "256"))  # 128 pixels, 2 CSS px each
        self.assertIn("layer 1, head 15", static)
        # Layer 1, head 3 (image 19): each pixel is its weight's viridis entry, round(255 w).
        pixels, palette = png_pixels(base64.b64decode(images[19][0]))
        np.testing.assert_array_equal(pixels, np.rint(w[1, 3].astype(np.float64) * 255))
        self.assertEqual(palette[0], (68, 1, 84))
        self.assertEqual(palette[255], (253, 231, 37))
        # The pictures cost a small part of the output: under 400 KB for the 32 heads.
        self.assertLess(sum(len(i[0]) for i in images), 400_000)
        self.assertIn("Head patterns", page)

    def test_larger_weights_get_shrunk_pngs(self):
        # 4 heads of 400 x 401: 641,600 weights, over 2^19, so a pixel per 2 x 2 block (the last
        # row of blocks holds one row of weights).
        w = np.random.default_rng(9).random((4, 400, 401))
        w = (w / w.sum(axis=-1, keepdims=True)).astype(np.float32)
        static = without_scripts(mha_lab.show(w)._repr_html_()).split("<mha-attention")[0]
        self.assertIn(
            "641,600 weights, 400 × 401 per head: a pixel per 2 × 2 block of weights, "
            "their mean",
            static,
        )
        images = re.findall(r'<img src="data:image/png;base64,([^"]+)"', static)
        self.assertEqual(len(images), 4)
        pixels, _ = png_pixels(base64.b64decode(images[2]))
        self.assertEqual(pixels.shape, (200, 201))
        h = w[2].astype(np.float64)
        self.assertEqual(pixels[0, 0], round(h[0:2, 0:2].mean() * 255))
        self.assertEqual(pixels[10, 200], round(h[20:22, 400].mean() * 255))  # a column of 2

    def test_a_few_weights_stay_svg(self):
        page = mha_lab.show(np.full((2, 100, 100), 1 / 100, np.float32))._repr_html_()
        self.assertEqual(without_scripts(page).count("<rect "), 20_000)
        self.assertNotIn("data:image/png", page)

    def test_long_tokens_are_cut_with_an_ellipsis_in_the_picture(self):
        w = np.full((1, 2, 2), 0.5, np.float32)
        static = without_scripts(mha_lab.show(w, ["internationalisation", "cat"])._repr_html_())
        self.assertIn(">internation…</text>", static)  # 11 characters and "…": 12
        self.assertNotIn(">internationa</text>", static)
        self.assertIn(">cat</text>", static)

    def test_layers_and_bad_weights(self):
        a = mha_lab.numpy_experiment(seed=1)["attn_weights"]
        b = mha_lab.numpy_experiment(seed=2)["attn_weights"]
        page = mha_lab.show((a[None], b[None]), self.TOKENS)._repr_html_()
        self.assertEqual(without_scripts(page).count("<mha-attention"), 2)
        self.assertIn("layer 1, head 1", page)
        with self.assertRaisesRegex(ValueError, "sums to"):
            mha_lab.show(np.full((1, 2, 2), 0.4, np.float32), ["a", "b"])


if __name__ == "__main__":
    unittest.main()
