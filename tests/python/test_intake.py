"""What models give, read by mha_lab's one intake (mha_lab._intake, attention_stack): float16 and
bfloat16 weights checked within their precision, tensors with grad, non-contiguous arrays copied
in every function alike, a batch axis never read as layers, sequence-first input refused with a
hint, and the recipes of docs/python.md for nn.TransformerEncoderLayer and Hugging Face models.

Shape legend: B batch, L layers, h heads, n query tokens, m key tokens, d = d_model."""

import re
import unittest
from html import unescape as html_unescape

import numpy as np

import mha_lab
from mha_lab import view
from test_mha_lab import DIST_BUILT, without_scripts

try:
    import torch
except ImportError:  # python3-torch is optional: only the tensor-input tests need it
    torch = None


def softmax_weights(shape, seed):
    """Rows of softmax(3 z), z standard normal from numpy.random.default_rng(seed), float64."""
    z = np.random.default_rng(seed).standard_normal(shape) * 3
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def scores(p):
    """Every head's scores of a head_patterns report, layer by layer."""
    return [[h["scores"] for h in layer["heads"]] for layer in p["layers"]]


def assert_scores_close(test, a, b, tolerance):
    for la, lb in zip(scores(a), scores(b)):
        for ha, hb in zip(la, lb):
            for key in ha:
                if ha[key] is None or key == "stripe_key":
                    test.assertEqual(ha[key], hb[key], key)
                else:
                    test.assertAlmostEqual(ha[key], hb[key], delta=tolerance, msg=key)


class LowPrecision(unittest.TestCase):
    """float16 and bfloat16 rows are checked within max(0.001, eps * sqrt(m))."""

    def test_float16_rows_within_its_precision(self):
        w = softmax_weights((2, 6, 6), 1)
        w[0, 0] *= 1.0015  # off by more than 0.001, within 2^-10 * sqrt(6) = 0.00239
        p = mha_lab.head_patterns(w.astype(np.float16))
        assert_scores_close(self, p, mha_lab.head_patterns(softmax_weights((2, 6, 6), 1)), 2e-3)
        with self.assertRaisesRegex(ValueError, r"sums to 1\.0015"):
            mha_lab.head_patterns(w.astype(np.float32))  # float32: within 0.001
        w[0, 0] *= 1.003 / 1.0015
        with self.assertRaisesRegex(
            ValueError,
            r"^attn \(float16\): head 0, row 0 sums to 1\.003\d*; every row of float16 weights "
            r"must sum to 1 within 0\.00239 \(max\(0\.001, float16's epsilon 2\^-10 x sqrt\(6 "
            r"keys\)\)\) or be all 0$",
        ):
            mha_lab.head_patterns(w.astype(np.float16))

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_bfloat16_tensors(self):
        w = softmax_weights((2, 6, 6), 2)
        t = torch.from_numpy(w).to(torch.bfloat16)
        # Rounded to bfloat16 (8 significant bits) some rows sum beyond 1 +- 0.001.
        self.assertGreater(float((t.float().sum(-1) - 1).abs().max()), 1e-3)
        assert_scores_close(self, mha_lab.head_patterns(t), mha_lab.head_patterns(w), 2e-2)

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_bfloat16_layers_and_rows_off(self):
        w = softmax_weights((2, 2, 6, 6), 2)
        t = torch.from_numpy(w).to(torch.bfloat16)
        self.assertGreater(float((t.float().sum(-1) - 1).abs().max()), 1e-3)
        p = mha_lab.head_patterns(tuple(t[i][None] for i in range(2)))  # output_attentions
        assert_scores_close(self, p, mha_lab.head_patterns(w), 2e-2)
        off = t.float()
        off[1, 1, 3] *= 1.05
        with self.assertRaisesRegex(
            ValueError,
            r"^attn \(bfloat16\): layer 1, head 1, row 3 sums to 1\.0\d+; every row of bfloat16 "
            r"weights must sum to 1 within 0\.0191 \(max\(0\.001, bfloat16's epsilon 2\^-7 x "
            r"sqrt\(6 keys\)\)\) or be all 0$",
        ):
            mha_lab.head_patterns(tuple(off.to(torch.bfloat16)[i][None] for i in range(2)))

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_tensors_with_grad(self):
        w = torch.from_numpy(softmax_weights((2, 5, 5), 3)).float().requires_grad_(True)
        self.assertEqual(mha_lab.head_patterns(w), mha_lab.head_patterns(w.detach().numpy()))

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_tensors_off_the_cpu(self):
        # A tensor on another device is copied to the CPU (tensor.cpu()); one whose data cannot be
        # copied (PyTorch's "meta" device holds none) is a ValueError naming it.
        with self.assertRaisesRegex(
            ValueError, r"^attn \(float32 tensor\) cannot be read as an array: .*meta"
        ):
            mha_lab.head_patterns(torch.empty((2, 3, 3), device="meta"))


class NonContiguous(unittest.TestCase):
    """A transposed view, [::2] and Fortran order are copied, in every function alike."""

    def test_head_patterns(self):
        w = softmax_weights((2, 6, 6), 4).astype(np.float32)
        expected = mha_lab.head_patterns(w)
        views = [
            np.asfortranarray(w),
            np.ascontiguousarray(w.transpose(0, 2, 1)).transpose(0, 2, 1),
            np.repeat(w, 2, axis=0)[::2],
            np.ascontiguousarray(w[:, ::-1])[:, ::-1],  # negative strides
        ]
        for v in views:
            self.assertFalse(v.flags.c_contiguous)
            self.assertEqual(mha_lab.head_patterns(v), expected)

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_forward_with_torch_views(self):
        g = np.random.default_rng(5)
        x = g.standard_normal((5, 8)).astype(np.float32)
        w_in = g.standard_normal((24, 8)).astype(np.float32) / 3
        w_out = g.standard_normal((8, 8)).astype(np.float32) / 3
        expected = mha_lab.forward(x, w_in, w_out, 2)
        xt = torch.from_numpy(np.ascontiguousarray(x.T)).t()  # a transposed torch view
        self.assertFalse(xt.is_contiguous())
        r = mha_lab.forward(xt, torch.from_numpy(w_in), torch.from_numpy(w_out).T.contiguous().T, 2)
        np.testing.assert_array_equal(r["output"], expected["output"])
        mask = np.zeros((5, 10), bool)[:, ::2]  # a strided bool mask
        r = mha_lab.forward(x, w_in, w_out, 2, attn_mask=mask)
        np.testing.assert_array_equal(r["attn_weights"], expected["attn_weights"])


class BatchAxis(unittest.TestCase):
    """A batch axis is never read as layers."""

    @unittest.skipIf(torch is None, "python3-torch is not installed")
    def test_torch_batch_needs_batch(self):
        w = softmax_weights((2, 3, 5, 5), 6).astype(np.float32)
        t = torch.from_numpy(w)
        with self.assertRaisesRegex(
            ValueError, r"torch tensor of shape \(2, 3, 5, 5\).*batch of 2: pass batch=i"
        ):
            mha_lab.head_patterns(t)
        self.assertEqual(mha_lab.head_patterns(t, batch=1), mha_lab.head_patterns(w[1]))
        self.assertEqual(len(mha_lab.head_patterns(t[:1])["layers"]), 1)  # a batch of 1
        # Hugging Face's tuple of (B, h, n, m) layers and its torch.stack (L, B, h, n, m).
        layers = (t, t.flip(0))
        with self.assertRaisesRegex(ValueError, r"attn\[0\] has shape \(2, 3, 5, 5\).*batch="):
            mha_lab.head_patterns(layers)
        picked = mha_lab.head_patterns(layers, batch=0)
        self.assertEqual(picked, mha_lab.head_patterns(np.stack([w[0], w[1]])))
        with self.assertRaisesRegex(ValueError, r"batch of 2; pass batch=i"):
            mha_lab.head_patterns(torch.stack(layers))
        self.assertEqual(mha_lab.head_patterns(torch.stack(layers), batch=0), picked)
        with self.assertRaisesRegex(ValueError, r"batch=2 is outside \[0, 1\]"):
            mha_lab.head_patterns(t, batch=2)

    def test_numpy_stacks_stay_layers(self):
        w = softmax_weights((2, 3, 5, 5), 7).astype(np.float32)
        self.assertEqual(len(mha_lab.head_patterns(w)["layers"]), 2)  # (L, h, n, m)
        self.assertEqual(len(mha_lab.head_patterns(w[:, None])["layers"]), 2)  # (L, 1, h, n, m)
        self.assertEqual(mha_lab.head_patterns(w, batch=1), mha_lab.head_patterns(w[1]))
        with self.assertRaisesRegex(ValueError, r"batch=0 picks an example.*\(3, 5, 5\)"):
            mha_lab.head_patterns(w[0], batch=0)

    def test_forward_sequence_first_and_batches(self):
        g = np.random.default_rng(8)
        x = g.standard_normal((6, 16)).astype(np.float32)
        w_in = g.standard_normal((48, 16)).astype(np.float32) / 4
        w_out = g.standard_normal((16, 16)).astype(np.float32) / 4
        with self.assertRaisesRegex(
            ValueError,
            r"^query has shape \(6, 1, 16\): sequence-first \(n, batch 1, d\), as "
            r"nn.MultiheadAttention takes it with batch_first=False; .*pass query\[:, 0\]",
        ):
            mha_lab.forward(x[:, None], w_in, w_out, 2)
        # (2, 6, 16) reads two ways: both layouts and both fixes are named.
        with self.assertRaisesRegex(
            ValueError,
            r"^query has shape \(2, 6, 16\), which reads two ways; forward takes one example, "
            r"\(n, d\) or \(1, n, d\): \(batch, n, d\) with batch_first=True, a batch of 2: "
            r"pass query\[i\]; \(n, batch, d\), nn.MultiheadAttention's default "
            r"\(batch_first=False\), a batch of 6: pass query\[:, i\]$",
        ):
            mha_lab.forward(np.stack([x, x]), w_in, w_out, 2)
        # PyTorch's default (n, batch, d) with batch 2: query[:, i] is example i, as the message
        # says, and query[i] (a token of each example) is not.
        seq_first = np.stack([x, x[::-1]], axis=1)  # (6, 2, 16)
        with self.assertRaisesRegex(ValueError, r"\(6, 2, 16\).*pass query\[:, i\]"):
            mha_lab.forward(seq_first, w_in, w_out, 2)
        np.testing.assert_array_equal(
            mha_lab.forward(seq_first[:, 1], w_in, w_out, 2)["output"],
            mha_lab.forward(x[::-1].copy(), w_in, w_out, 2)["output"],
        )
        np.testing.assert_array_equal(
            mha_lab.forward(x[None], w_in, w_out, 2)["output"],
            mha_lab.forward(x, w_in, w_out, 2)["output"],
        )


@unittest.skipUnless(DIST_BUILT, "dist/ is not built (./scripts/build.sh writes it)")
class ShowInput(unittest.TestCase):
    def test_title_none(self):
        w = softmax_weights((2, 4, 4), 9)
        page = without_scripts(mha_lab.show(w, title=None)._repr_html_())
        self.assertNotIn("<strong>", page)
        self.assertIn("<mha-attention><script", page)
        self.assertNotIn('"title"', page)
        self.assertIn("<strong>Mine</strong>", mha_lab.show(w, title="Mine").html)
        with self.assertRaisesRegex(ValueError, "title must be a str or None"):
            mha_lab.show(w, title=3)

    def test_tokens_as_one_string(self):
        w = softmax_weights((1, 6, 6), 10)
        page = mha_lab.show(w, "The cat's toy, again.")._repr_html_()
        self.assertIn('"tokens":["The","cat\'s","toy",",","again","."]', page)
        p = mha_lab.head_patterns(w, "The cat's toy, again.")
        self.assertEqual(p["tokens"], ["The", "cat's", "toy", ",", "again", "."])

    def test_table_caption_and_stripe_token(self):
        # Every query puts 0.9 on key 2: the stripe key is key 2, shown as its token.
        w = np.full((1, 5, 5), 0.025)
        w[0, :, 2] = 0.9
        tokens = ["<s>", "\u2581The", "\u2581c", "at", "\u2581sat"]
        self.assertEqual(
            mha_lab.head_patterns(w, tokens)["layers"][0]["heads"][0]["scores"]["stripe_key"], 2
        )
        page = without_scripts(mha_lab.show(w, tokens)._repr_html_())
        table = page.split('<table class="mha-lab-patterns">')[1]
        self.assertNotIn("docs/patterns.md", table)
        self.assertIn("<caption>Head patterns: per head, its labels", html_unescape(table))
        header = re.findall(r"<th>([^<]*)</th>", table.split("</thead>")[0])
        cells = re.findall(
            r"<td>([^<]*)</td>", re.findall(r"<tr><th>head 0</th>(.*?)</tr>", table)[0]
        )
        self.assertEqual(cells[header.index("stripe key") - 1], "c")  # "▁c" drawn as "c"
        # Without tokens the keys are drawn as their indices, and so is the stripe key.
        page = without_scripts(mha_lab.show(w)._repr_html_())
        table = page.split('<table class="mha-lab-patterns">')[1]
        cells = re.findall(
            r"<td>([^<]*)</td>", re.findall(r"<tr><th>head 0</th>(.*?)</tr>", table)[0]
        )
        self.assertEqual(cells[header.index("stripe key") - 1], "2")

    def test_every_score_in_the_table(self):
        w = softmax_weights((2, 6, 6), 11)
        tokens = ["a", "b", ".", "a", "b", "c"]
        page = without_scripts(mha_lab.show(w, tokens)._repr_html_())
        table = page.split('<table class="mha-lab-patterns">')[1]
        header = re.findall(r"<th>([^<]*)</th>", table.split("</thead>")[0])
        p = mha_lab.head_patterns(w, tokens)
        names = dict(view._SCORE_COLUMNS)
        keys = p["layers"][0]["heads"][0]["scores"]
        self.assertEqual(header[2:], [names[k] for k in names if k in keys])
        self.assertEqual(len(header), 2 + len(keys))  # head, labels, then one column a score
        for name in ("duplicate token", "induction", "punctuation", "first token"):
            self.assertIn(name, header)
        # Head 1's row: its induction score, to 3 decimals, under the induction column.
        row = re.findall(r"<tr><th>head 1</th>(.*?)</tr>", table)[0]
        cells = re.findall(r"<td>([^<]*)</td>", row)
        induction = p["layers"][0]["heads"][1]["scores"]["induction"]
        self.assertEqual(cells[header.index("induction") - 1], f"{induction:.3f}")


# Tokens as tokenizers give them (written by hand: transformers is not installed here).
GPT2 = ["<|endoftext|>", "The", "\u0120cat", "\u0120sat", "\u0120un", "believ", "ably"]
SENTENCEPIECE = ["<s>", "\u2581The", "\u2581cat", "\u2581un", "believ", "able", ".", "</s>"]
WORDPIECE = ["[CLS]", "the", "cat", "sat", "un", "##bel", "##iev", "##ably", "[SEP]"]


class ReadableTokens(unittest.TestCase):
    def test_gpt2(self):
        self.assertEqual(
            mha_lab.readable_tokens(GPT2),
            ["<|endoftext|>", "The", "cat", "sat", "un", "\u00b7believ", "\u00b7ably"],
        )

    def test_sentencepiece(self):
        self.assertEqual(
            mha_lab.readable_tokens(SENTENCEPIECE),
            ["<s>", "The", "cat", "un", "\u00b7believ", "\u00b7able", "\u00b7.", "</s>"],
        )
        # A lone marker (a space piece) stays; the piece after a special token starts a word.
        self.assertEqual(
            mha_lab.readable_tokens(["<s>", "Hello", "\u2581", "\u2581x", "y"]),
            ["<s>", "Hello", "\u2581", "x", "\u00b7y"],
        )

    def test_wordpiece(self):
        self.assertEqual(
            mha_lab.readable_tokens(WORDPIECE),
            ["[CLS]", "the", "cat", "sat", "un", "\u00b7bel", "\u00b7iev", "\u00b7ably", "[SEP]"],
        )
        self.assertEqual(mha_lab.readable_tokens(np.array(["a", "##b"])), ["a", "\u00b7b"])

    def test_no_scheme_leaves_tokens(self):
        tokens = ["The", "cat", "#", "##", "<s>"]
        self.assertEqual(mha_lab.readable_tokens(tokens), tokens)

    def test_refused(self):
        for bad, message in [
            (None, "got None"),
            ("the cat", "got one str"),
            ([None, "a"], r"tokens\[0\] is NoneType"),
            (b"abc", "got bytes"),
            (3, "got int"),
        ]:
            with self.assertRaisesRegex(ValueError, message):
                mha_lab.readable_tokens(bad)

    @unittest.skipUnless(DIST_BUILT, "dist/ is not built (./scripts/build.sh writes it)")
    def test_show_draws_readable_labels(self):
        w = softmax_weights((2, 7, 7), 13)
        page = without_scripts(mha_lab.show(w, GPT2)._repr_html_())
        self.assertIn(
            '"tokens":["<|endoftext|>","The","cat","sat","un","\u00b7believ","\u00b7ably"]',
            page.encode().decode("unicode_escape"),
        )
        self.assertIn(">\u00b7believ</text>", page)
        self.assertNotIn("\u0120", page.encode().decode("unicode_escape"))
        # head_patterns' scores keep the raw tokens.
        self.assertEqual(mha_lab.head_patterns(w, GPT2)["tokens"], GPT2)


class TokensRefused(unittest.TestCase):
    """Tokens that are not a str or a list of str are a ValueError, never stringified."""

    BAD = [
        (5, "got int"),
        ([None] * 5, r"tokens\[0\] is NoneType None"),
        (b"abcde", "got bytes"),
        ({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, "got dict"),
        (["a", "b", None, "d", "e"], r"tokens\[2\] is NoneType"),
        ([1, 2, 3, 4, 5], r"tokens\[0\] is int 1"),
        (np.arange(5), "numpy array of dtype int64"),
    ]

    def test_head_patterns(self):
        w = softmax_weights((2, 5, 5), 14)
        for bad, message in self.BAD:
            with self.assertRaisesRegex(
                ValueError, "^tokens must be a str or a list of str.*" + message
            ):
                mha_lab.head_patterns(w, bad)
        with self.assertRaisesRegex(ValueError, r"query_tokens\[0\] is NoneType"):
            mha_lab.head_patterns(w, ["a"] * 5, [None] * 5)
        with self.assertRaisesRegex(ValueError, r"^attn\[0\] is None"):
            mha_lab.head_patterns((None, None))
        with self.assertRaisesRegex(ValueError, "^attn is required"):
            mha_lab.head_patterns(None)

    @unittest.skipUnless(DIST_BUILT, "dist/ is not built (./scripts/build.sh writes it)")
    def test_show(self):
        w = softmax_weights((2, 5, 5), 14)
        for bad, message in self.BAD:
            with self.assertRaisesRegex(
                ValueError, "^tokens must be a str or a list of str.*" + message
            ):
                mha_lab.show(w, bad)
        with self.assertRaisesRegex(ValueError, r"^attn\[0\] is None"):
            mha_lab.show((None, None))

    @unittest.skipUnless(DIST_BUILT, "dist/ is not built (./scripts/build.sh writes it)")
    def test_show_experiment_tokens(self):
        for bad in (None, float("inf"), "x", 2.5, True):
            with self.assertRaisesRegex(ValueError, r"^tokens must be an integer, got "):
                mha_lab.show_experiment(tokens=bad)
            with self.assertRaisesRegex(ValueError, r"^tokens must be an integer, got "):
                mha_lab.numpy_experiment(tokens=bad)
        with self.assertRaisesRegex(ValueError, "tokens=100000 exceeds the limit of 4096"):
            mha_lab.show_experiment(tokens=100000)
        self.assertIn("3 tokens", mha_lab.show_experiment(tokens=np.int64(3)).title)


@unittest.skipIf(torch is None, "python3-torch is not installed")
class Recipes(unittest.TestCase):
    """docs/python.md's recipes: per-head weights of nn.TransformerEncoderLayer (whose forward
    calls its attention with need_weights=False) and of a Hugging Face model's
    output_attentions (transformers is not installed: the same tensor shapes)."""

    def test_transformer_encoder_layer(self):
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True).eval()
        x = torch.randn(1, 6, 16)  # (B, n, d)
        # The recipe: call the layer's self-attention as the layer does, asking for the weights.
        with torch.no_grad():
            src = layer.norm1(x) if layer.norm_first else x
            _, weights = layer.self_attn(
                src, src, src, need_weights=True, average_attn_weights=False
            )
        self.assertEqual(tuple(weights.shape), (1, 4, 6, 6))  # (B, h, n, n)
        p = mha_lab.head_patterns(weights)  # a batch of 1 is dropped: one layer (h, n, n)
        self.assertEqual(p["shape"], [4, 6, 6])
        self.assertEqual(p, mha_lab.head_patterns(weights[0]))
        # The same weights as mha_lab.forward computes from the layer's parameters.
        a = layer.self_attn
        r = mha_lab.forward(
            x[0], a.in_proj_weight, a.out_proj.weight, a.num_heads,
            in_proj_bias=a.in_proj_bias, out_proj_bias=a.out_proj.bias,
        )  # fmt: skip
        np.testing.assert_allclose(r["attn_weights"], weights[0].numpy(), atol=1e-5)
        # A batch of 3: batch= picks the example.
        xs = torch.randn(3, 6, 16)
        with torch.no_grad():
            _, ws = layer.self_attn(xs, xs, xs, need_weights=True, average_attn_weights=False)
        with self.assertRaisesRegex(ValueError, "batch="):
            mha_lab.head_patterns(ws)
        self.assertEqual(mha_lab.head_patterns(ws, batch=2), mha_lab.head_patterns(ws[2]))

    def test_transformer_encoder_layer_norm_first_sequence_first(self):
        # norm_first=True, batch_first=False: forward reads src = layer.norm1(x), example 0 as
        # src[:, 0]; x[:, 0] (the layer's input before norm1) gives other weights.
        torch.manual_seed(1)
        layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=4, norm_first=True).eval()
        x = torch.randn(6, 2, 16)  # (n, B, d)
        with torch.no_grad():
            src = layer.norm1(x) if layer.norm_first else x
            _, weights = layer.self_attn(
                src, src, src, need_weights=True, average_attn_weights=False
            )
        self.assertEqual(tuple(weights.shape), (2, 4, 6, 6))  # (B, h, n, n)
        a = layer.self_attn
        params = (a.in_proj_weight, a.out_proj.weight, a.num_heads)
        biases = {"in_proj_bias": a.in_proj_bias, "out_proj_bias": a.out_proj.bias}
        with torch.no_grad():
            r = mha_lab.forward(src[:, 0], *params, **biases)
            unnormed = mha_lab.forward(x[:, 0], *params, **biases)
        np.testing.assert_allclose(r["attn_weights"], weights[0].numpy(), atol=1e-5)
        self.assertGreater(np.abs(unnormed["attn_weights"] - weights[0].numpy()).max(), 1e-3)
        with self.assertRaisesRegex(ValueError, r"pass query\[:, i\]"):
            mha_lab.forward(src, *params, **biases)

    def test_hugging_face_shapes(self):
        # model(**inputs, output_attentions=True).attentions of a bfloat16 model, 2 sentences:
        # L = 3 tensors of (B = 2, h = 4, n = 7, n = 7), rows softmaxed in float32 and rounded.
        w = softmax_weights((3, 2, 4, 7, 7), 12)
        attentions = tuple(torch.from_numpy(w[i]).to(torch.bfloat16) for i in range(3))
        tokens = ["<s>", "Ġthe", "Ġcat", "Ġsat", "Ġon", "Ġit", "."]
        p = mha_lab.head_patterns(attentions, tokens, batch=1)
        self.assertEqual(p["shape"], [3, 4, 7, 7])
        assert_scores_close(self, p, mha_lab.head_patterns(w[:, 1], tokens), 2e-2)
        with self.assertRaisesRegex(ValueError, "batch="):
            mha_lab.head_patterns(attentions, tokens)


if __name__ == "__main__":
    unittest.main()
