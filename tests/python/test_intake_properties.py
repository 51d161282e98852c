"""Property tests of mha_lab's intake (Debian's python3-hypothesis): arrays of random shapes,
dtypes (float16/32/64, bfloat16 through torch, integers, bools), strides (transposed, [::2],
Fortran order, reversed) and values (NaN, infinities, negatives, rows not summing to 1), as numpy
arrays or torch tensors with or without grad, give a result or a ValueError: never a crash or
another exception; so do tokens of random kinds (str, lists of str, None, ints, floats, bytes,
dicts, lists holding None or ints, numpy arrays) given to head_patterns, show and
show_experiment. Derandomized (a fixed sequence of examples) and small, so the run takes
seconds and fails the same way every time."""

import unittest

import numpy as np

import mha_lab
from test_mha_lab import DIST_BUILT

try:
    import torch
except ImportError:  # python3-torch is optional: the torch cases are then left out
    torch = None

try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # scripts/install_deps.sh installs python3-hypothesis
    given = None

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool", "uint8"]
LAYOUTS = ["c", "fortran", "transposed", "every_other", "reversed"]
VALUES = ["softmax", "uniform", "random", "special"]

if given is not None:
    SETTINGS = settings(
        derandomize=True,
        max_examples=80,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )

    @st.composite
    def arrays(draw, min_rank=0, max_rank=5, max_dim=4, shape=None):
        """A numpy array, or a torch tensor of it, of a drawn (or the given) shape, dtype, layout
        and values."""
        if shape is None:
            ranks = st.lists(st.integers(0, max_dim), min_size=min_rank, max_size=max_rank)
            shape = tuple(draw(ranks))
        seed = draw(st.integers(0, 2**32 - 1))
        g = np.random.default_rng(seed)
        kind = draw(st.sampled_from(VALUES))
        z = g.standard_normal(shape) * 3
        if kind == "softmax" and len(shape) > 0:
            e = np.exp(z - z.max(axis=-1, keepdims=True, initial=-np.inf))
            a = e / e.sum(axis=-1, keepdims=True)
        elif kind == "uniform" and len(shape) > 0:
            a = np.full(shape, 1.0 / max(shape[-1], 1))
        elif kind == "special":
            specials = np.array([np.nan, np.inf, -np.inf, -1.0, 0.0, 1.0, 2.0, 1e300, -0.0])
            a = g.choice(specials, size=shape)
        else:
            a = z
        dtype = draw(st.sampled_from(DTYPES + (["bfloat16"] if torch is not None else [])))
        with np.errstate(all="ignore"):
            a = a.astype(np.float32 if dtype == "bfloat16" else dtype)
        layout = draw(st.sampled_from(LAYOUTS))
        if layout == "fortran":
            a = np.asfortranarray(a)
        elif layout == "transposed" and a.ndim >= 2:
            a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
        elif layout == "every_other" and a.ndim >= 1:
            a = np.repeat(a, 2, axis=0)[::2]
        elif layout == "reversed" and a.ndim >= 1:
            a = np.ascontiguousarray(a[::-1])[::-1]
        if torch is not None and (dtype == "bfloat16" or draw(st.booleans())):
            t = torch.from_numpy(np.ascontiguousarray(a))
            if dtype == "bfloat16":
                t = t.to(torch.bfloat16)
            if t.is_floating_point() and draw(st.booleans()):
                t = t.clone().requires_grad_(True)
            if t.ndim >= 2 and draw(st.booleans()):
                t = t.transpose(-1, -2).contiguous().transpose(-1, -2)  # a strided view
            return t
        return a

    # The characters of drawn text: letters, a space, the subword markers, special-token brackets
    # (drawn as lists of characters joined: st.text would write its Unicode table to .hypothesis/).
    CHARS = st.sampled_from(list("ab .#<>[]|\u0120\u2581\u00e9"))

    @st.composite
    def token_values(draw, count):
        """Tokens of a random kind: usually `count` str (valid for `count` keys), else None, an
        int, a float, bytes, a dict, one str, a list holding None or ints, a tuple, or a numpy
        array of str or of ints."""
        words = st.lists(CHARS, max_size=4).map("".join)
        kind = draw(
            st.sampled_from(
                ["list", "tuple", "array", "none", "int", "float", "bytes", "dict", "str",
                 "list_with_none", "ints", "int_array"]  # fmt: skip
            )
        )
        if kind == "list":
            return draw(st.lists(words, min_size=count, max_size=count))
        if kind == "tuple":
            return tuple(draw(st.lists(words, min_size=count, max_size=count)))
        if kind == "array":
            return np.array(draw(st.lists(words, min_size=count, max_size=count)), dtype=str)
        if kind == "none":
            return None
        if kind == "int":
            return draw(st.integers(-5, 10))
        if kind == "float":
            return draw(st.floats(allow_nan=True, allow_infinity=True))
        if kind == "bytes":
            return draw(st.binary(max_size=count))
        if kind == "dict":
            return {w: 1 for w in draw(st.lists(words, min_size=count, max_size=count))}
        if kind == "str":
            return draw(st.lists(CHARS, max_size=12).map("".join))
        if kind == "list_with_none":
            return draw(st.lists(st.one_of(st.none(), words), min_size=count, max_size=count))
        if kind == "ints":
            return draw(st.lists(st.integers(), min_size=count, max_size=count))
        return np.arange(count)


@unittest.skipIf(given is None, "python3-hypothesis is not installed")
class IntakeProperties(unittest.TestCase):
    def result_or_value_error(self, f, *args, **kwargs):
        """f(*args, **kwargs) returns, or raises ValueError with a message; else the test fails
        (any other exception propagates)."""
        try:
            return f(*args, **kwargs)
        except ValueError as e:
            self.assertTrue(str(e))
            return None

    if given is not None:

        @SETTINGS
        @given(arrays(), st.one_of(st.none(), st.integers(-1, 4)))
        def test_head_patterns(self, attn, batch):
            p = self.result_or_value_error(mha_lab.head_patterns, attn, batch=batch)
            if p is not None:  # a result: every head scored, every layer listed
                self.assertEqual(len(p["layers"]), 1 if len(p["shape"]) == 3 else p["shape"][0])
                for layer in p["layers"]:
                    self.assertEqual(len(layer["heads"]), p["shape"][-3])

        @SETTINGS
        @given(st.lists(st.integers(1, 4), min_size=3, max_size=4), st.data())
        def test_head_patterns_of_attention_shapes(self, shape, data):
            # (h, n, m) or (L, h, n, m): dtype, layout and values decide.
            attn = data.draw(arrays(shape=tuple(shape)))
            p = self.result_or_value_error(mha_lab.head_patterns, attn)
            if p is not None:
                # A rank-4 torch tensor is a model's (B, h, n, m): a batch of 1 is dropped.
                dropped = torch is not None and isinstance(attn, torch.Tensor) and len(shape) == 4
                self.assertEqual(p["shape"], list(shape)[1:] if dropped else list(shape))

        @SETTINGS
        @given(st.integers(1, 4), st.integers(1, 4), st.data())
        def test_tokens_of_random_kinds(self, h, n, data):
            # Softmax rows (h, n, n) and tokens of a random kind: a result whose tokens are the
            # ones given, or a ValueError.
            z = np.random.default_rng(h * 10 + n).standard_normal((h, n, n))
            w = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
            tokens = data.draw(token_values(n))
            p = self.result_or_value_error(mha_lab.head_patterns, w, tokens)
            if p is not None and tokens is not None and not isinstance(tokens, str):
                self.assertEqual(p["tokens"], [str(t) for t in tokens])
            if p is not None:  # n tokens, or none (no tokens, or a str of no tokens)
                self.assertIn(len(p["tokens"]), (0, n))
                self.assertEqual(len(mha_lab.readable_tokens(p["tokens"])), len(p["tokens"]))
            if DIST_BUILT:
                v = self.result_or_value_error(mha_lab.show, w, tokens)
                self.assertEqual(v is None, p is None)

        @SETTINGS
        @given(
            st.one_of(
                st.none(),
                st.integers(-3, 6),
                st.floats(),
                st.lists(CHARS, max_size=3).map("".join),
                st.booleans(),
                st.binary(max_size=3),
                st.lists(st.integers(0, 3), max_size=2),
            ),  # fmt: skip
            st.one_of(st.none(), st.lists(CHARS, max_size=8).map("".join)),
        )
        def test_show_experiment(self, tokens, text):
            if not DIST_BUILT:
                self.skipTest("dist/ is not built (./scripts/build.sh writes it)")
            v = self.result_or_value_error(mha_lab.show_experiment, tokens=tokens, text=text)
            if text is None:  # tokens decides, as numpy_experiment decides
                r = self.result_or_value_error(mha_lab.numpy_experiment, tokens=tokens)
                self.assertEqual(v is None, r is None)

        @SETTINGS
        @given(st.lists(arrays(min_rank=3, max_rank=4), min_size=1, max_size=3))
        def test_hugging_face_tuples(self, layers):
            self.result_or_value_error(mha_lab.head_patterns, tuple(layers))

        @SETTINGS
        @given(
            arrays(min_rank=1, max_rank=3, max_dim=6),
            arrays(min_rank=1, max_rank=3, max_dim=12),
            arrays(min_rank=1, max_rank=3, max_dim=6),
            st.integers(-1, 4),
            st.one_of(st.none(), arrays(min_rank=1, max_rank=3, max_dim=6)),
        )
        def test_forward(self, query, in_proj_weight, out_proj_weight, num_heads, attn_mask):
            r = self.result_or_value_error(
                mha_lab.forward,
                query,
                in_proj_weight,
                out_proj_weight,
                num_heads,
                attn_mask=attn_mask,
            )
            if r is not None:  # a result: weights are distributions (or fully masked rows)
                w = r["attn_weights"].astype(np.float64)
                self.assertTrue(np.isfinite(w).all())
                sums = w.sum(axis=-1)
                self.assertTrue(np.all((np.abs(sums - 1) < 1e-3) | (sums == 0)))

        @SETTINGS
        @given(st.integers(1, 5), st.sampled_from([(2, 1), (4, 2), (6, 3)]), st.data())
        def test_forward_of_matching_shapes(self, n, d_and_h, data):
            # Shapes that fit (query (n, d), in_proj_weight (3d, d), out_proj_weight (d, d)):
            # dtype, layout and values alone decide between a result and a ValueError.
            d, h = d_and_h
            query = data.draw(arrays(shape=(n, d)))
            r = self.result_or_value_error(
                mha_lab.forward,
                query,
                data.draw(arrays(shape=(3 * d, d))),
                data.draw(arrays(shape=(d, d))),
                h,
            )
            if r is not None:
                self.assertEqual(r["attn_weights"].shape, (h, n, n))
                self.assertTrue(np.isfinite(r["output"]).all())


if __name__ == "__main__":
    unittest.main()
