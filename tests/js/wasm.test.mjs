// The wasm module under node: the same golden files as the native tests, the error path from JS,
// and outputs that stay valid when wasm memory grows. Run: node --test tests/js/
// Needs build/wasm/mha_wasm.js (./scripts/build.sh).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { fixture, loadModule, maxAbsDiff } from './module.mjs';

let mod;
before(async () => {
  mod = await loadModule();
});

/**
 * Largest |a - b| relative to the scale of the expected matrix, max(1, max |b|). An output entry
 * is a sum of d terms of that scale, so float32 rounding is relative to it, not to the entry
 * itself (which may be near zero after cancellation).
 */
function maxScaledDiff(a, b) {
  let scale = 1;
  for (const x of b) scale = Math.max(scale, Math.abs(x));
  return maxAbsDiff(a, b) / scale;
}

const f32 = (t) => Float32Array.from(t.data, (x) => (x === '-inf' ? -Infinity : x));

/** A torch_mha.json case as a request to mod.forward. */
function torchRequest(c) {
  const req = {
    d_model: c.d_model,
    num_heads: c.num_heads,
    kdim: c.kdim,
    vdim: c.vdim,
    n: c.n,
    query: f32(c.query),
    is_causal: c.is_causal,
  };
  if (!c.self_attention) Object.assign(req, { m: c.m, key: f32(c.key), value: f32(c.value) });
  for (const [name, t] of Object.entries(c.weights)) req[name] = f32(t);
  if (c.attn_mask) {
    req.attn_mask =
      c.attn_mask.kind === 'bool' ? Uint8Array.from(c.attn_mask.data) : f32(c.attn_mask);
  }
  if (c.key_padding_mask) {
    req.key_padding_mask =
      c.key_padding_mask.kind === 'float'
        ? f32(c.key_padding_mask)
        : Uint8Array.from(c.key_padding_mask);
  }
  return req;
}

test('PyTorch nn.MultiheadAttention golden cases', () => {
  const { cases } = fixture('torch_mha.json');
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    const r = mod.forward(torchRequest(c));
    assert.equal(r.num_heads, c.num_heads, c.name);
    assert.equal(r.n, c.n, c.name);
    assert.equal(r.m, c.m, c.name);
    // float32 wasm vs float32 PyTorch: different summation order, a few ulp of the logits.
    // Weights within 1e-5 absolute; outputs within 1e-5 of the output's scale (max |expected|, at least 1).
    assert.ok(
      maxAbsDiff(r.attn_weights, c.expected.attn_weights.data) < 1e-5,
      `${c.name}: weights`,
    );
    assert.ok(maxScaledDiff(r.output, c.expected.output.data) < 1e-5, `${c.name}: output`);
    assert.deepEqual(Array.from(r.fully_masked_rows), c.expected.fully_masked_rows.data, c.name);
    assert.ok(r.output.every(Number.isFinite) && r.attn_weights.every(Number.isFinite), c.name);
  }
});

test('a float key_padding_mask is added to the scores, as nn.MultiheadAttention adds it', () => {
  const c = fixture('torch_mha.json').cases.find((x) => x.name === 'float_key_padding_mask');
  const req = torchRequest(c);
  assert.ok(req.key_padding_mask instanceof Float32Array);
  const r = mod.forward(req);
  assert.ok(maxAbsDiff(r.attn_weights, c.expected.attn_weights.data) < 1e-5);
  // An array of numbers is the same float mask; masked key 1 (-inf) gets weight 0 in every row.
  const again = mod.forward({ ...req, key_padding_mask: Array.from(req.key_padding_mask) });
  assert.deepEqual(Array.from(again.attn_weights), Array.from(r.attn_weights));
  for (let row = 0; row < c.num_heads * c.n; row++) assert.equal(r.attn_weights[row * c.m + 1], 0);
  // Booleans keep their meaning: true = ignore that key.
  const bool = mod.forward({ ...req, key_padding_mask: [false, true, false, false, false] });
  for (let row = 0; row < c.num_heads * c.n; row++)
    assert.equal(bool.attn_weights[row * c.m + 1], 0);
  assert.throws(
    () => mod.forward({ ...req, key_padding_mask: Float32Array.of(0, NaN, 0, 0, 0) }),
    /key_padding_mask holds NaN at 1; a float mask may hold finite values, or -inf to mask/,
  );
  assert.throws(
    () => mod.forward({ ...req, key_padding_mask: [0, Infinity, 0, 0, 0] }),
    /key_padding_mask holds \+inf at 1/,
  );
});

test('numpy course code (module 08) golden cases through numpyExperiment', () => {
  const { cases } = fixture('numpy_mha.json');
  for (const c of cases) {
    const r = mod.numpyExperiment({
      seed: c.seed,
      tokens: c.n,
      d_model: c.d_model,
      num_heads: c.num_heads,
    });
    // The seeded draws are numpy's bit for bit; X is handed back as float32 of them.
    assert.deepEqual(Array.from(r.x), Array.from(Float32Array.from(c.X.data)), `${c.name}: X`);
    // numpyExperiment computes in float64 like numpy and rounds its results to float32: weights
    // within 1e-7 (half a float32 ulp below 1 is 6e-8), outputs within 1e-6 of their scale.
    assert.ok(
      maxAbsDiff(r.attn_weights, c.expected.attn_weights.data) < 1e-7,
      `${c.name}: weights`,
    );
    assert.ok(maxScaledDiff(r.output, c.expected.output.data) < 1e-6, `${c.name}: output`);
  }
});

test("module 08's verified output, to 3 decimals", () => {
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  const row = (head, i) =>
    Array.from(r.attn_weights.subarray((head * 5 + i) * 5, (head * 5 + i + 1) * 5), (x) =>
      x.toFixed(3),
    );
  assert.deepEqual(row(0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
  assert.deepEqual(row(1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
  assert.equal(r.parameter_count, 256);
});

test("numpyExperiment takes attn_mask and key_padding_mask as forward does (the page's masks)", () => {
  const base = { seed: 7, tokens: 5, d_model: 8, num_heads: 2 };
  // A sliding window |i - j| <= 1 (boolean, true = may not attend) and the last key padded.
  const window = Uint8Array.from({ length: 25 }, (_, k) =>
    Math.abs(Math.floor(k / 5) - (k % 5)) > 1 ? 1 : 0,
  );
  const padding = Uint8Array.of(0, 0, 0, 0, 1);
  const r = mod.numpyExperiment({ ...base, attn_mask: window, key_padding_mask: padding });
  // The same masks through forward (float32 fast path) on the experiment's own x and weights:
  // module 08's unscaled randn weights give logits of order 10, so float32 agrees to ~1e-5.
  const plain = mod.numpyExperiment(base);
  const f = mod.forward({
    d_model: 8,
    num_heads: 2,
    n: 5,
    query: plain.x,
    in_proj_weight: plain.in_proj_weight,
    out_proj_weight: plain.out_proj_weight,
    attn_mask: window,
    key_padding_mask: padding,
  });
  assert.ok(maxAbsDiff(r.attn_weights, f.attn_weights) < 1e-4, 'weights agree with forward');
  for (let h = 0; h < 2; h++) {
    for (let i = 0; i < 5; i++) {
      for (let j = 0; j < 5; j++) {
        const w = r.attn_weights[(h * 5 + i) * 5 + j];
        if (window[i * 5 + j] || padding[j]) {
          assert.equal(w, 0, `masked (${h}, ${i}, ${j})`);
          assert.equal(r.scores[(h * 5 + i) * 5 + j], -Infinity);
        }
      }
    }
  }
  // Every key padded: every row fully masked, weights and output 0, never NaN.
  const all = mod.numpyExperiment({ ...base, key_padding_mask: Uint8Array.of(1, 1, 1, 1, 1) });
  assert.deepEqual(Array.from(all.fully_masked_rows), Array(10).fill(1));
  assert.ok(all.attn_weights.every((x) => x === 0) && all.output.every((x) => x === 0));
  assert.throws(
    () => mod.numpyExperiment({ ...base, attn_mask: Uint8Array.of(1, 0) }),
    /attn_mask has 2 values, expected n\*m = 25 or num_heads\*n\*m = 50/,
  );
  assert.throws(
    () => mod.numpyExperiment({ ...base, key_padding_mask: Uint8Array.of(1) }),
    /key_padding_mask has 1 values, expected one per key token, m = 5/,
  );
});

test('numpy random stream (np.random.seed + randn) is reproduced exactly', () => {
  const { streams } = fixture('numpy_random.json');
  for (const s of streams) {
    const draws = mod.randn(s.seed, s.randn.length);
    // Same IEEE double operations as numpy's C code. Over millions of draws the wasm libc's
    // (musl's) log() rounds a few arguments 1-2 ulp away from glibc's (docs/js-api.md mod.randn:
    // 119 of 3,000,001 for seed 7, the first at draw 508); the fixture's 64 draws of each seed
    // are all equal, and so must they stay.
    for (let i = 0; i < draws.length; i++)
      assert.equal(draws[i], s.randn[i], `seed ${s.seed} draw ${i}`);
  }
});

test('parameter counts match PyTorch for every head count', () => {
  const { counts } = fixture('param_counts.json');
  for (const c of counts) {
    assert.equal(
      mod.parameterCount({
        d_model: c.d_model,
        num_heads: c.num_heads,
        kdim: c.kdim,
        vdim: c.vdim,
        bias: c.bias,
      }),
      c.count,
      JSON.stringify(c),
    );
  }
});

test('MultiheadAttention class: weights kept in wasm, forward repeatedly, intermediates consistent', () => {
  const c = fixture('torch_mha.json').cases.find((x) => x.name === 'bias');
  const req = torchRequest(c);
  const { n, query, is_causal, ...spec } = req; // the constructor takes configuration and weights only
  const layer = new mod.MultiheadAttention(spec);
  try {
    assert.equal(layer.d_model, 8);
    assert.equal(layer.num_heads, 2);
    assert.equal(layer.parameterCount(), 4 * 8 * 8 + 4 * 8);
    const a = layer.forward({ n: c.n, query: req.query });
    const b = layer.forward({ n: c.n, query: req.query, keep_intermediates: false });
    assert.deepEqual(Array.from(a.attn_weights), Array.from(b.attn_weights));
    assert.equal(b.scores, undefined);
    // softmax(scores) row by row equals the weights (intermediates are what the core used).
    const m = c.m;
    for (let row = 0; row < 2 * c.n; row++) {
      const s = a.scores.subarray(row * m, (row + 1) * m);
      const max = Math.max(...s);
      const e = Array.from(s, (x) => Math.exp(x - max));
      const sum = e.reduce((x, y) => x + y, 0);
      e.forEach((x, j) => assert.ok(Math.abs(x / sum - a.attn_weights[row * m + j]) < 1e-6));
    }
  } finally {
    layer.delete();
  }
});

test('errors arrive as JS Errors naming the values, and the module keeps working', () => {
  const good = { seed: 7, tokens: 5, d_model: 8, num_heads: 2 };
  const cases = [
    [{ ...good, d_model: 10, num_heads: 3 }, /d_model=10 is not divisible by num_heads=3/],
    [{ ...good, d_model: 512, num_heads: 7 }, /d_model=512 is not divisible by num_heads=7/],
    [{ ...good, num_heads: 0 }, /num_heads=0 must be a positive integer/],
    [{ ...good, num_heads: -2 }, /num_heads=-2 must be a positive integer/],
    [{ ...good, num_heads: 2.5 }, /num_heads=2.5 must be an integer/],
    [{ ...good, d_model: 0 }, /d_model=0 must be a positive integer/],
    [{ ...good, tokens: 0 }, /tokens=0 must be a positive integer/],
    [{ ...good, tokens: 5000 }, /tokens=5000 is outside \[1, 4096\]/],
    [{ ...good, d_model: 8192, num_heads: 8 }, /d_model=8192 exceeds the limit of 4096/],
    [{ ...good, seed: -1 }, /seed=-1 is outside \[0, 4294967295\]/],
    [{ ...good, seed: 'x' }, /seed must be a number, got a string/],
    [{ tokens: 5, d_model: 8, num_heads: 2 }, /seed is required/],
  ];
  for (const [req, pattern] of cases) {
    assert.throws(
      () => mod.numpyExperiment(req),
      (e) => e instanceof Error && pattern.test(e.message),
      JSON.stringify(req),
    );
    // After each error the next valid call works and gives module 08's numbers.
    const r = mod.numpyExperiment(good);
    assert.equal(r.attn_weights[2].toFixed(3), '0.424');
  }

  const c = fixture('torch_mha.json').cases.find((x) => x.name === 'bias');
  const base = torchRequest(c);
  const bad = [
    [
      { ...base, query: base.query.slice(0, 39) },
      /query has 39 values, expected n\*d_model = 5\*8 = 40/,
    ],
    [
      { ...base, query: Float32Array.from(base.query, (x, i) => (i === 9 ? NaN : x)) },
      /query holds NaN at \(1, 1\)/,
    ],
    [
      { ...base, query: Float32Array.from(base.query, (x, i) => (i === 3 ? Infinity : x)) },
      /query holds \+inf at \(0, 3\)/,
    ],
    [
      {
        ...base,
        in_proj_weight: Float32Array.from(base.in_proj_weight, (x, i) => (i === 0 ? -Infinity : x)),
      },
      /in_proj_weight holds -inf at \(0, 0\)/,
    ],
    [
      { ...base, in_proj_weight: base.in_proj_weight.slice(1) },
      /in_proj_weight has 191 values, expected 3\*d_model\*d_model = 24\*8 = 192/,
    ],
    [{ ...base, attn_mask: new Float32Array(25).fill(NaN) }, /attn_mask holds NaN at \(0, 0\)/],
    [
      { ...base, attn_mask: new Float32Array(25).fill(Infinity) },
      /attn_mask holds \+inf at \(0, 0\)/,
    ],
    [
      { ...base, attn_mask: new Uint8Array(24) },
      /attn_mask has 24 values, expected n\*m = 25 or num_heads\*n\*m = 50/,
    ],
    [
      { ...base, key_padding_mask: new Uint8Array(4) },
      /key_padding_mask has 4 values, expected one per key token, m = 5/,
    ],
    [
      { ...base, m: 5, key: base.query, value: base.query.slice(0, 32) },
      /value has 32 values, expected m\*vdim = 5\*8 = 40/,
    ],
    [{ ...base, n: 0, query: new Float32Array(0) }, /n=0 must be a positive integer/],
  ];
  for (const [req, pattern] of bad) {
    assert.throws(
      () => mod.forward(req),
      (e) => e instanceof Error && pattern.test(e.message),
      pattern.source,
    );
    const r = mod.forward(base);
    assert.ok(maxAbsDiff(r.attn_weights, c.expected.attn_weights.data) < 1e-5);
  }
  // A misspelt or unknown key is an error, never silently ignored; so is a request that is not an
  // object.
  const keyErrors = [
    [
      () => mod.forward({ ...base, attn_mak: new Uint8Array(25) }),
      /^unknown key 'attn_mak' in the forward request \(known keys: d_model, .*attn_mask/,
    ],
    [
      () => mod.forward(undefined),
      /^the forward request must be an object of named fields, got undefined$/,
    ],
    [() => mod.forward(null), /^the forward request must be an object of named fields, got null$/],
    [
      () => mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2, casual: true }),
      /^unknown key 'casual' in the numpyExperiment request/,
    ],
    [
      () => mod.parameterCount({ d_model: 8, num_heads: 2, biases: true }),
      /^unknown key 'biases' in the parameterCount request/,
    ],
  ];
  for (const [call, pattern] of keyErrors) {
    assert.throws(call, (e) => e instanceof Error && pattern.test(e.message), pattern.source);
    assert.ok(maxAbsDiff(mod.forward(base).attn_weights, c.expected.attn_weights.data) < 1e-5);
  }
  // -inf in a float mask is a mask, not an error (PyTorch semantics).
  const masked = mod.forward({
    ...base,
    attn_mask: new Float32Array(25).fill(0).fill(-Infinity, 0, 5),
  });
  assert.deepEqual(Array.from(masked.fully_masked_rows.subarray(0, 5)), [1, 0, 0, 0, 0]);
  assert.ok(masked.output.every(Number.isFinite));
});

test('outputs are copies: they stay correct when wasm memory grows in a later call', () => {
  const small = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  // Also a result of forward and of a layer, and randn / positional encodings: every array kept.
  const c = fixture('torch_mha.json').cases.find((x) => x.name === 'bias');
  const { n, query, is_causal, ...spec } = torchRequest(c);
  const layer = new mod.MultiheadAttention(spec);
  const kept = {
    small,
    forward: mod.forward(torchRequest(c)),
    layer: layer.forward({ n: c.n, query: f32(c.query) }),
    randn: { draws: mod.randn(7, 16) },
    pe: { pe: mod.sinusoidalPositionalEncoding(5, 8) },
  };
  layer.delete();
  const copy = (r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]),
    );
  const before = Object.fromEntries(Object.entries(kept).map(([k, r]) => [k, copy(r)]));
  const memoryBefore = mod.memoryStats().wasm_memory_bytes;
  // 12 heads x 1024 x 1024 floats = 48 MiB of weights plus scores: far beyond the 16 MiB start.
  const big = mod.numpyExperiment({
    seed: 1,
    tokens: 1024,
    d_model: 96,
    num_heads: 12,
    keep_intermediates: true,
  });
  assert.equal(big.attn_weights.length, 12 * 1024 * 1024);
  // The call did grow linear memory (views into the old buffer would now be detached, length 0).
  assert.ok(mod.memoryStats().wasm_memory_bytes > memoryBefore, 'wasm memory grew');
  for (const [name, r] of Object.entries(kept)) assert.deepEqual(copy(r), before[name], name);
  assert.equal(small.attn_weights[2].toFixed(3), '0.424');
});

test("the page's sliding-window band (web/src/explain/masks.js, the core module's windowMask) is the core's slidingWindowMask", async () => {
  const { maskFields } = await import('../../web/src/explain/masks.js');
  const windowMask = (n, window) => mod.windowMask({ n, window });
  for (const n of [1, 2, 5, 9]) {
    for (let w = 0; w < n; w++) {
      const page = maskFields({ mask: 'window', window: w }, n, windowMask).attn_mask;
      assert.deepEqual(
        Array.from(page),
        Array.from(mod.slidingWindowMask({ n, window: w })),
        `n=${n} window=${w}`,
      );
    }
  }
});
