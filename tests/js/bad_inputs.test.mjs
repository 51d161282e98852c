// Bad input through the wasm module from JS: every case gets its exact answer (the whole error
// message, values named, or the defined result), and the next valid call still gives the same
// numbers. Extends tests/js/wasm.test.mjs (golden data, a first set of errors) without repeating it.
// Run: node --test tests/js/   (needs build/wasm/mha_wasm.js: ./scripts/build.sh)
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './module.mjs';

/** Deterministic values in [-scale, scale) (mulberry32), as a Float32Array. */
function rand(length, scale, seed) {
  let a = seed >>> 0;
  return Float32Array.from({ length }, () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
  });
}

// Cross-attention, n != m so that (n, m) and (m, n) shapes differ: d = 8, h = 2, n = 4, m = 5.
const D = 8;
const H = 2;
const N = 4;
const M = 5;
const BASE = Object.freeze({
  d_model: D,
  num_heads: H,
  n: N,
  m: M,
  query: rand(N * D, 1, 1),
  key: rand(M * D, 1, 2),
  value: rand(M * D, 1, 3),
  in_proj_weight: rand(3 * D * D, 0.5, 4),
  in_proj_bias: rand(3 * D, 0.1, 5),
  out_proj_weight: rand(D * D, 0.5, 6),
  out_proj_bias: rand(D, 0.1, 7),
});
// Separate projections with kdim = 4 and vdim = 6.
const KD = 4;
const VD = 6;
const SEPARATE = Object.freeze({
  d_model: D,
  num_heads: H,
  kdim: KD,
  vdim: VD,
  n: N,
  m: M,
  query: rand(N * D, 1, 11),
  key: rand(M * KD, 1, 12),
  value: rand(M * VD, 1, 13),
  q_proj_weight: rand(D * D, 0.5, 14),
  k_proj_weight: rand(D * KD, 0.5, 15),
  v_proj_weight: rand(D * VD, 0.5, 16),
  in_proj_bias: rand(3 * D, 0.1, 17),
  out_proj_weight: rand(D * D, 0.5, 18),
  out_proj_bias: rand(D, 0.1, 19),
});
/** The weights and configuration of a request: what new mod.MultiheadAttention takes. */
const specOf = ({ n, m, query, key, value, ...spec }) => spec;
/** The configuration keys of a request: what parameterCount takes (it rejects other keys). */
const configOf = ({ d_model, num_heads, kdim, vdim }) =>
  Object.fromEntries(
    Object.entries({ d_model, num_heads, kdim, vdim }).filter(([, v]) => v !== undefined),
  );
const inputsOf = ({ n, m, query, key, value }) => ({ n, m, query, key, value });
const replace = (arr, index, x) => {
  const c = Float32Array.from(arr);
  c[index] = x;
  return c;
};

let mod;
let good;
let goodSeparate;
before(async () => {
  mod = await loadModule();
  good = mod.forward(BASE);
  goodSeparate = mod.forward(SEPARATE);
});

/** The next valid call (one-shot and through a layer) gives exactly the numbers of a fresh run. */
function stillWorks() {
  const r = mod.forward(BASE);
  assert.deepEqual(r.attn_weights, good.attn_weights);
  assert.deepEqual(r.output, good.output);
  const layer = new mod.MultiheadAttention(specOf(SEPARATE));
  try {
    assert.deepEqual(layer.forward(inputsOf(SEPARATE)).output, goodSeparate.output);
  } finally {
    layer.delete();
  }
}

/** `fn` throws a JS Error whose message is exactly `message`; then the module still works. */
function answers(fn, message, label = message) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Error, `${label}: an Error, got ${e}`);
    assert.equal(e.message, message, label);
    return true;
  });
  stillWorks();
}

/** The request's error through the one-shot call and through a layer (constructor or forward). */
function answersEverywhere(req, message, stage) {
  answers(() => mod.forward(req), message, `forward: ${message}`);
  if (stage === 'config') {
    answers(() => new mod.MultiheadAttention(specOf(req)), message, `constructor: ${message}`);
    answers(() => mod.parameterCount(configOf(req)), message, `parameterCount: ${message}`);
  } else if (stage === 'weights') {
    answers(() => new mod.MultiheadAttention(specOf(req)), message, `constructor: ${message}`);
  } else if (stage === 'inputs') {
    const spec = 'q_proj_weight' in req ? specOf(SEPARATE) : specOf(BASE);
    const layer = new mod.MultiheadAttention(spec);
    try {
      answers(
        () => layer.forward({ ...inputsOf(req), ...maskKeys(req) }),
        message,
        `layer.forward: ${message}`,
      );
    } finally {
      layer.delete();
    }
  }
}
const maskKeys = ({ attn_mask, key_padding_mask, is_causal }) => ({
  attn_mask,
  key_padding_mask,
  is_causal,
});

// ---------------------------------------------------------------------------------------------
test('configuration: d_model % num_heads != 0 names both values and the valid head counts', () => {
  answersEverywhere(
    { ...BASE, d_model: 10, num_heads: 3 },
    'd_model=10 is not divisible by num_heads=3 (each head needs d_model / num_heads columns; ' +
      'valid num_heads for d_model=10: 1 2 5 10)',
    'config',
  );
  answersEverywhere(
    { ...BASE, d_model: 1024, num_heads: 12 },
    'd_model=1024 is not divisible by num_heads=12 (each head needs d_model / num_heads columns; ' +
      'valid num_heads for d_model=1024: 1 2 4 8 16 32 64 128 256)',
    'config',
  );
});

test('configuration: num_heads zero, negative, non-integer, not a number; d_model zero or negative', () => {
  const cases = [
    [{ num_heads: 0 }, 'num_heads=0 must be a positive integer'],
    [{ num_heads: -1 }, 'num_heads=-1 must be a positive integer'],
    [{ num_heads: -3e9 }, 'num_heads=-3e+09 must be a positive integer'],
    [{ num_heads: 1.5 }, 'num_heads=1.5 must be an integer'],
    // The value as given, not rounded to 6 digits (it once read "num_heads=2 must be an integer").
    [{ num_heads: 2.0000001 }, 'num_heads=2.0000001 must be an integer'],
    [{ num_heads: NaN }, 'num_heads=NaN must be an integer'],
    [{ num_heads: Infinity }, 'num_heads=Infinity must be an integer'],
    [{ num_heads: -Infinity }, 'num_heads=-Infinity must be an integer'],
    [{ num_heads: '2' }, 'num_heads must be a number, got a string'],
    [{ num_heads: undefined }, 'num_heads is required'],
    [{ d_model: 0 }, 'd_model=0 must be a positive integer'],
    [{ d_model: -8 }, 'd_model=-8 must be a positive integer'],
    [{ d_model: 8.5 }, 'd_model=8.5 must be an integer'],
    [{ kdim: -1 }, "kdim=-1 must be positive (or 0 for 'same as d_model')"],
  ];
  for (const [change, message] of cases)
    answersEverywhere({ ...BASE, ...change }, message, 'config');
});

test('kdim/vdim that disagree with the weights: fused in_proj_weight, separate weights of the wrong width', () => {
  const fused = (kdim, vdim) =>
    `kdim=${kdim} and vdim=${vdim} differ from d_model=8: give q_proj_weight, k_proj_weight, ` +
    'v_proj_weight instead of in_proj_weight';
  answersEverywhere({ ...BASE, kdim: 4 }, fused(4, 8), 'weights');
  answersEverywhere({ ...BASE, vdim: 6 }, fused(8, 6), 'weights');
  answersEverywhere(
    { ...BASE, kdim: 4, vdim: 6, key: rand(M * 4, 1, 2), value: rand(M * 6, 1, 3) },
    fused(4, 6),
    'weights',
  );
  // Separate weights whose widths are d_model, not kdim / vdim (and a q_proj_weight of width kdim).
  answersEverywhere(
    { ...SEPARATE, k_proj_weight: rand(D * D, 0.5, 15) },
    'k_proj_weight has 64 values, expected d_model*kdim = 8*4 = 32',
    'weights',
  );
  answersEverywhere(
    { ...SEPARATE, v_proj_weight: rand(D * KD, 0.5, 16) },
    'v_proj_weight has 32 values, expected d_model*vdim = 8*6 = 48',
    'weights',
  );
  answersEverywhere(
    { ...SEPARATE, q_proj_weight: rand(D * KD, 0.5, 14) },
    'q_proj_weight has 32 values, expected d_model*d_model = 8*8 = 64',
    'weights',
  );
  // Weights right for kdim = 4 but inputs of width d_model.
  answersEverywhere(
    { ...SEPARATE, key: rand(M * D, 1, 12) },
    'key has 40 values, expected m*kdim = 5*4 = 20',
    'inputs',
  );
  answersEverywhere(
    { ...SEPARATE, value: rand(M * D, 1, 13) },
    'value has 40 values, expected m*vdim = 5*6 = 30',
    'inputs',
  );
  answersEverywhere(
    { ...BASE, q_proj_weight: rand(D * D, 0.5, 1) },
    'both in_proj_weight and q/k/v_proj_weight were given: give one form',
    'weights',
  );
});

test('weights of the wrong size, missing, or not an array', () => {
  const cases = [
    [
      { out_proj_weight: rand(D * D + 1, 0.5, 6) },
      'out_proj_weight has 65 values, expected d_model*d_model = 8*8 = 64',
    ],
    [
      { in_proj_weight: rand(3 * D * D + 8, 0.5, 4) },
      'in_proj_weight has 200 values, expected 3*d_model*d_model = 24*8 = 192',
    ],
    [
      { in_proj_bias: rand(3 * D - 1, 0.1, 5) },
      'in_proj_bias has 23 values, expected 3*d_model = 24',
    ],
    [{ out_proj_bias: rand(D + 2, 0.1, 7) }, 'out_proj_bias has 10 values, expected d_model = 8'],
    [{ out_proj_weight: undefined }, 'out_proj_weight is required'],
    [{ in_proj_weight: undefined }, 'q_proj_weight is required'],
    [
      { in_proj_weight: 'x'.repeat(192) },
      'in_proj_weight must be a Float32Array, Float64Array or Array',
    ],
    [
      { out_proj_bias: { length: 8 } },
      'out_proj_bias must be a Float32Array, Float64Array or Array',
    ],
  ];
  for (const [change, message] of cases)
    answersEverywhere({ ...BASE, ...change }, message, 'weights');
});

test('key and value with different token counts, missing value, m out of range', () => {
  // The JS API takes one m for both: the array that disagrees with it is named.
  answersEverywhere(
    { ...BASE, value: rand(4 * D, 1, 3) },
    'value has 32 values, expected m*vdim = 5*8 = 40',
    'inputs',
  );
  answersEverywhere(
    { ...BASE, key: rand(6 * D, 1, 2) },
    'key has 48 values, expected m*kdim = 5*8 = 40',
    'inputs',
  );
  answersEverywhere(
    { ...SEPARATE, value: rand(4 * VD, 1, 13) },
    'value has 24 values, expected m*vdim = 5*6 = 30',
    'inputs',
  );
  answersEverywhere({ ...BASE, value: undefined }, 'value is required', 'inputs');
  answersEverywhere({ ...BASE, m: undefined }, 'm is required', 'inputs');
  answersEverywhere(
    { ...BASE, m: 0, key: new Float32Array(0), value: new Float32Array(0) },
    'm=0 must be a positive integer',
    'inputs',
  );
});

test('masks of the wrong shape or type', () => {
  // n*m = 20, num_heads*n*m = 40; (m, m), (n, n), 3 heads and off-by-one lengths are all refused.
  for (const length of [19, 21, 25, 16, 60, 0]) {
    for (const Type of [Uint8Array, Float32Array]) {
      answersEverywhere(
        { ...BASE, attn_mask: new Type(length) },
        `attn_mask has ${length} values, expected n*m = 20 or num_heads*n*m = 40`,
        'inputs',
      );
    }
  }
  answersEverywhere(
    { ...BASE, key_padding_mask: new Uint8Array(N) },
    'key_padding_mask has 4 values, expected one per key token, m = 5',
    'inputs',
  );
  answersEverywhere(
    { ...BASE, attn_mask: 'true' },
    'attn_mask must be a Float32Array, Float64Array or Array',
    'inputs',
  );
  answersEverywhere({ ...BASE, is_causal: 1 }, 'is_causal must be true or false, not 1', 'inputs');
  // (1, n, m) = n*m values: one mask for every head, accepted.
  assert.deepEqual(
    mod.forward({ ...BASE, attn_mask: new Uint8Array(N * M) }).attn_weights,
    good.attn_weights,
  );
});

test('NaN and ±Inf in query, key, value and in every kind of weight: the array and position are named', () => {
  const where = (cols, i) => (cols === null ? `[${i}]` : `(${Math.floor(i / cols)}, ${i % cols})`);
  const fields = [
    [BASE, 'query', D, 'inputs'],
    [BASE, 'key', D, 'inputs'],
    [BASE, 'value', D, 'inputs'],
    [BASE, 'in_proj_weight', D, 'weights'],
    [BASE, 'in_proj_bias', null, 'weights'],
    [BASE, 'out_proj_weight', D, 'weights'],
    [BASE, 'out_proj_bias', null, 'weights'],
    [SEPARATE, 'q_proj_weight', D, 'weights'],
    [SEPARATE, 'k_proj_weight', KD, 'weights'],
    [SEPARATE, 'v_proj_weight', VD, 'weights'],
    [SEPARATE, 'key', KD, 'inputs'],
    [SEPARATE, 'value', VD, 'inputs'],
  ];
  const bad = [
    [NaN, 'NaN'],
    [Infinity, '+inf'],
    [-Infinity, '-inf'],
  ];
  for (const [base, name, cols, stage] of fields) {
    const index = base[name].length - 3; // near the end: the whole array is checked, not a prefix
    for (const [x, shown] of bad) {
      answersEverywhere(
        { ...base, [name]: replace(base[name], index, x) },
        `${name} holds ${shown} at ${where(cols, index)}; every value must be finite`,
        stage,
      );
    }
  }
  // A finite float64 beyond float32 becomes +inf when converted: refused the same way, never a NaN grid.
  answers(
    () =>
      mod.forward({
        ...BASE,
        query: Float64Array.from(BASE.query, (x, i) => (i === 9 ? 1e39 : x)),
      }),
    'query holds +inf at (1, 1); every value must be finite',
  );
  answers(
    () => mod.forward({ ...BASE, value: Array.from(BASE.value, (x, i) => (i === 0 ? NaN : x)) }),
    'value holds NaN at (0, 0); every value must be finite',
  );
});

test('float masks: NaN and +Inf are errors naming the position, -Infinity is a mask', () => {
  const at = (length, index, x) => Float32Array.from({ length }, (_, i) => (i === index ? x : 0));
  const tail = '; a float mask may hold finite values, or -inf to mask';
  answersEverywhere(
    { ...BASE, attn_mask: at(N * M, 13, NaN) },
    `attn_mask holds NaN at (2, 3)${tail}`,
    'inputs',
  );
  answersEverywhere(
    { ...BASE, attn_mask: at(N * M, 19, Infinity) },
    `attn_mask holds +inf at (3, 4)${tail}`,
    'inputs',
  );
  // Per-head (h, n, m) masks name the head too.
  answersEverywhere(
    { ...BASE, attn_mask: at(H * N * M, 27, NaN) },
    `attn_mask holds NaN at (1, 1, 2)${tail}`,
    'inputs',
  );
  answersEverywhere(
    { ...BASE, attn_mask: Array.from(at(N * M, 1, Infinity)) },
    `attn_mask holds +inf at (0, 1)${tail}`,
    'inputs',
  );
  // +1e39 in a Float64Array mask is +inf in float32: the same error; -1e39 becomes -inf: a mask.
  answersEverywhere(
    { ...BASE, attn_mask: Float64Array.from(at(N * M, 5, 1e39)) },
    `attn_mask holds +inf at (1, 0)${tail}`,
    'inputs',
  );
  const deep = mod.forward({ ...BASE, attn_mask: Float64Array.from(at(N * M, 5, -1e39)) });
  assert.equal(deep.attn_weights[5], 0);
  assert.equal(deep.attn_weights[N * M + 5], 0);

  // -Infinity is a mask: exactly the boolean mask with true at the same places.
  const float = Float32Array.from({ length: N * M }, (_, i) => (i % 3 === 0 ? -Infinity : 0));
  const bool = Uint8Array.from(float, (x) => (x === -Infinity ? 1 : 0));
  const a = mod.forward({ ...BASE, attn_mask: float });
  const b = mod.forward({ ...BASE, attn_mask: bool });
  assert.deepEqual(a.attn_weights, b.attn_weights);
  assert.deepEqual(a.output, b.output);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < N * M; i++) if (bool[i]) assert.equal(a.attn_weights[h * N * M + i], 0);
  }
  assert.ok(a.output.every(Number.isFinite));
});

// ---------------------------------------------------------------------------------------------
/** Softmax of each length-`m` row of `scores` in float64 (-Infinity = weight 0; all masked = 0s). */
function softmax64(scores, m) {
  const out = new Float64Array(scores.length);
  for (let r = 0; r < scores.length / m; r++) {
    const row = Array.from(scores.subarray(r * m, (r + 1) * m));
    const max = Math.max(...row);
    if (max === -Infinity) continue;
    const e = row.map((x) => Math.exp(x - max));
    const sum = e.reduce((s, x) => s + x, 0);
    e.forEach((x, j) => {
      out[r * m + j] = x / sum;
    });
  }
  return out;
}

function assertRowsSumToOne(weights, m, except = () => false) {
  for (let r = 0; r < weights.length / m; r++) {
    if (except(r)) continue;
    const s = weights.subarray(r * m, (r + 1) * m).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(s - 1) < 1e-6, `row ${r} sums to ${s}`);
  }
}

test('logits in the thousands: the softmax stays exact (float64 softmax of the returned scores)', () => {
  // Inputs scaled so |scores| reach 1e3..1e4: exp() of them overflows any naive softmax.
  const big = mod.forward({
    ...BASE,
    query: BASE.query.map((x) => x * 60),
    key: BASE.key.map((x) => x * 60),
  });
  const maxScore = Math.max(...big.scores.map(Math.abs));
  assert.ok(maxScore > 1e3 && maxScore < 1e5, `max |score| = ${maxScore}`);
  assert.ok(
    big.scores.some((s) => Math.exp(s) === Infinity),
    'some exp(score) overflows float64',
  );
  assert.ok(big.attn_weights.every(Number.isFinite) && big.output.every(Number.isFinite));
  assertRowsSumToOne(big.attn_weights, M);
  const want = softmax64(big.scores, M);
  big.attn_weights.forEach((w, i) =>
    assert.ok(Math.abs(w - want[i]) < 1e-6, `weight ${i}: ${w} vs ${want[i]}`),
  );

  // Logits 5000 + small offsets (through an additive mask on zero projections, so scores = mask):
  // the weights are softmax(offsets), not one-hot, not NaN.
  const offsets = [0, 0.5, 1, 2, -1];
  const mask = Float32Array.from(
    { length: N * M },
    (_, i) => (i < 2 * M ? 5000 : -7000) + offsets[i % M],
  );
  const flat = mod.forward({
    ...BASE,
    in_proj_weight: new Float32Array(3 * D * D),
    in_proj_bias: undefined,
    attn_mask: mask,
  });
  assert.deepEqual(flat.scores.subarray(0, N * M), mask);
  const e = offsets.map(Math.exp);
  const want2 = e.map((x) => x / e.reduce((a, b) => a + b, 0));
  for (let r = 0; r < H * N; r++) {
    for (let j = 0; j < M; j++)
      assert.ok(Math.abs(flat.attn_weights[r * M + j] - want2[j]) < 1e-6, `row ${r} key ${j}`);
  }
  stillWorks();
});

test('every key of a row masked: weights 0, head output 0, output finite, fully_masked_rows set', () => {
  // Row 2 masked in every head, by a boolean mask and by a -Infinity float mask.
  const bool = Uint8Array.from({ length: N * M }, (_, i) => (Math.floor(i / M) === 2 ? 1 : 0));
  const float = Float32Array.from(bool, (x) => (x ? -Infinity : 0));
  for (const attn_mask of [bool, float]) {
    const r = mod.forward({ ...BASE, attn_mask });
    assert.deepEqual(Array.from(r.fully_masked_rows), [0, 0, 1, 0, 0, 0, 1, 0]);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < N; i++) {
        const row = r.attn_weights.subarray((h * N + i) * M, (h * N + i + 1) * M);
        const goodRow = good.attn_weights.subarray((h * N + i) * M, (h * N + i + 1) * M);
        // The masked row is all 0; the other rows are exactly what they are without the mask.
        assert.deepEqual(row, i === 2 ? new Float32Array(M) : goodRow, `head ${h} row ${i}`);
      }
    }
    assert.deepEqual(r.head_outputs.subarray(2 * D, 3 * D), new Float32Array(D));
    // 0 · W_outᵀ + b_out: the output of a fully masked row is exactly the output bias.
    assert.deepEqual(r.output.subarray(2 * D, 3 * D), BASE.out_proj_bias);
    assert.ok(r.output.every(Number.isFinite) && r.attn_weights.every(Number.isFinite));
  }
  // Every key padded: every row of every head is fully masked.
  const all = mod.forward({ ...BASE, key_padding_mask: new Uint8Array(M).fill(1) });
  assert.deepEqual(Array.from(all.fully_masked_rows), new Array(H * N).fill(1));
  assert.ok(all.attn_weights.every((w) => w === 0));
  assert.ok(all.output.every(Number.isFinite));
  stillWorks();
});

test('every key of one head masked through a per-head (h, n, m) mask: that head 0, the other unaffected', () => {
  // Head 0 masks key 1 only; head 1 masks every key.
  const perHead = Uint8Array.from({ length: H * N * M }, (_, i) =>
    i >= N * M ? 1 : i % M === 1 ? 1 : 0,
  );
  const r = mod.forward({ ...BASE, attn_mask: perHead });
  // Head 0 equals a run with only head 0's mask, given as an (n, m) mask for every head.
  const head0Only = mod.forward({ ...BASE, attn_mask: perHead.subarray(0, N * M) });
  assert.deepEqual(r.attn_weights.subarray(0, N * M), head0Only.attn_weights.subarray(0, N * M));
  assert.deepEqual(
    r.head_outputs.filter((_, i) => i % D < D / H),
    head0Only.head_outputs.filter((_, i) => i % D < D / H),
  );
  for (let i = 0; i < N; i++) assert.equal(r.attn_weights[i * M + 1], 0);
  // Head 1: all weights 0, every row reported, its head-output columns 0.
  assert.deepEqual(r.attn_weights.subarray(N * M), new Float32Array(N * M));
  assert.deepEqual(Array.from(r.fully_masked_rows), [0, 0, 0, 0, 1, 1, 1, 1]);
  assert.ok(r.head_outputs.every((x, i) => (i % D >= D / H ? x === 0 : Number.isFinite(x))));
  assert.ok(r.output.every(Number.isFinite));
  // And with head 0 unmasked, head 0 is exactly the unmasked run's head 0.
  const onlyHead1 = Uint8Array.from({ length: H * N * M }, (_, i) => (i >= N * M ? 1 : 0));
  const r1 = mod.forward({ ...BASE, attn_mask: onlyHead1 });
  assert.deepEqual(r1.attn_weights.subarray(0, N * M), good.attn_weights.subarray(0, N * M));
  stillWorks();
});

test('mask polarity: true = may not attend; a boolean causal mask equals is_causal, its inverse masks the rest', () => {
  const n = 5;
  const self = { ...specOf(BASE), n, query: rand(n * D, 1, 21) };
  const causal = mod.forward({ ...self, is_causal: true });
  const above = (i) => Math.floor(i / n) < i % n; // j > i: the future
  const forms = {
    Uint8Array: Uint8Array.from({ length: n * n }, (_, i) => (above(i) ? 1 : 0)),
    Int8Array: Int8Array.from({ length: n * n }, (_, i) => (above(i) ? 1 : 0)),
    'Array of booleans': Array.from({ length: n * n }, (_, i) => above(i)),
    'per-head Uint8Array': Uint8Array.from({ length: H * n * n }, (_, i) =>
      above(i % (n * n)) ? 1 : 0,
    ),
    '-Infinity float mask': Float32Array.from({ length: n * n }, (_, i) =>
      above(i) ? -Infinity : 0,
    ),
  };
  for (const [name, attn_mask] of Object.entries(forms)) {
    const r = mod.forward({ ...self, attn_mask });
    assert.deepEqual(r.attn_weights, causal.attn_weights, name);
    assert.deepEqual(r.output, causal.output, name);
  }
  // The inverse (true on and below the diagonal): 0 where the causal mask allows, and the last
  // query row has no key left.
  const inverse = Uint8Array.from({ length: n * n }, (_, i) => (above(i) ? 0 : 1));
  const inv = mod.forward({ ...self, attn_mask: inverse });
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const w = inv.attn_weights[(h * n + i) * n + j];
        if (j <= i) assert.equal(w, 0, `head ${h} (${i}, ${j})`);
        else assert.ok(w > 0, `head ${h} (${i}, ${j}) = ${w}`);
      }
    }
  }
  assert.deepEqual(Array.from(inv.fully_masked_rows), [0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
  assertRowsSumToOne(inv.attn_weights, n, (r) => r % n === n - 1);
  assert.ok(inv.output.every(Number.isFinite));
  // Inverse and is_causal together leave no key for any row.
  const none = mod.forward({ ...self, attn_mask: inverse, is_causal: true });
  assert.deepEqual(Array.from(none.fully_masked_rows), new Array(H * n).fill(1));
  // A plain Array of 0/1 *numbers* is an additive float mask (adds 0 or 1 to the scores), not a
  // boolean one (docs/js-api.md): the same as a Float32Array of those values, and nothing is 0.
  const numbers = Array.from(forms.Uint8Array);
  const additive = mod.forward({ ...self, attn_mask: numbers });
  assert.deepEqual(
    additive.attn_weights,
    mod.forward({ ...self, attn_mask: Float32Array.from(numbers) }).attn_weights,
  );
  assert.ok(additive.attn_weights.every((w) => w > 0));
  stillWorks();
});

test('sizes beyond the limits: a clear error before the big allocation (no memory growth), and the module keeps working', () => {
  assert.deepEqual(
    { ...mod.limits },
    { max_tokens: 4096, max_d_model: 4096, max_num_heads: 256, max_weight_entries: 2 ** 26 },
  );
  const tooMany = 4097;
  const zeros = (d, heads) => ({
    d_model: d,
    num_heads: heads,
    in_proj_weight: new Float32Array(3 * d * d),
    out_proj_weight: new Float32Array(d * d),
  });
  const cases = [
    [{ ...BASE, n: tooMany, query: new Float32Array(tooMany * D) }, 'n=4097 is outside [1, 4096]'],
    [
      {
        ...BASE,
        m: tooMany,
        key: new Float32Array(tooMany * D),
        value: new Float32Array(tooMany * D),
      },
      'm=4097 is outside [1, 4096]',
    ],
    [{ ...BASE, d_model: 4100, num_heads: 4 }, 'd_model=4100 exceeds the limit of 4096'],
    [{ ...BASE, d_model: 2 ** 31, num_heads: 1 }, 'd_model=2147483648 exceeds the limit of 4096'],
    [{ ...BASE, kdim: 5000 }, 'kdim=5000 exceeds the limit of 4096'],
    [{ ...BASE, vdim: 1e12 }, 'vdim=1e+12 exceeds the limit of 4096'],
    [{ ...BASE, d_model: 512, num_heads: 512 }, 'num_heads=512 exceeds the limit of 256'],
    [{ ...BASE, num_heads: 257 }, 'num_heads=257 exceeds the limit of 256'],
    // h * n * m beyond 2^26: 8 heads of 4096 x 4096 would be 512 MiB of weights alone.
    [
      { ...zeros(8, 8), n: 4096, query: new Float32Array(4096 * 8) },
      'num_heads * n * m = 8 * 4096 * 4096 attention weights exceed the limit of 67108864',
    ],
    // 256 * 4096 * 4096 = 2^32: once wrapped to 0 in 32-bit arithmetic, matching an empty mask.
    [
      {
        ...zeros(256, 256),
        n: 4096,
        query: new Float32Array(4096 * 256),
        attn_mask: new Float32Array(0),
      },
      'attn_mask has 0 values, expected n*m = 16777216 or num_heads*n*m = 4294967296',
    ],
    [
      { ...zeros(256, 256), n: 4096, query: new Float32Array(4096 * 256) },
      'num_heads * n * m = 256 * 4096 * 4096 attention weights exceed the limit of 67108864',
    ],
  ];
  for (const [req, message] of cases) {
    const before = mod.memoryStats();
    assert.throws(
      () => mod.forward(req),
      (e) => e.message === message,
      message,
    );
    const after = mod.memoryStats();
    // Refused before the big allocation: linear memory grows by at most the inputs' copy (4 MiB here).
    // (This, not a wall-clock time, is what shows the refusal came first: tests assert no timings.)
    assert.ok(
      after.wasm_memory_bytes - before.wasm_memory_bytes <= 8 << 20,
      `${message}: wasm memory grew ${before.wasm_memory_bytes} → ${after.wasm_memory_bytes}`,
    );
    assert.equal(
      after.malloc_in_use_bytes,
      before.malloc_in_use_bytes,
      `${message}: nothing leaked`,
    );
    stillWorks();
  }
  for (const [fn, message] of [
    [
      () => mod.numpyExperiment({ seed: 1, tokens: 4097, d_model: 8, num_heads: 1 }),
      'tokens=4097 is outside [1, 4096]',
    ],
    [() => mod.sinusoidalPositionalEncoding(4097, 8), 'n=4097 is outside [1, 4096]'],
    [() => mod.sinusoidalPositionalEncoding(8, 4097), 'd_model=4097 is outside [1, 4096]'],
    [() => mod.randn(1, 2 ** 26 + 1), 'count=67108865 is outside [0, 67108864]'],
  ]) {
    answers(fn, message);
  }
});

test('the largest documented sizes work: max_tokens tokens, max_d_model, max_num_heads', {
  timeout: 60_000,
}, async () => {
  // A fresh module, so its memory figures are this test's alone.
  const big = await loadModule();
  const { max_tokens: T, max_d_model: DM, max_num_heads: HM } = big.limits;
  // 4096 tokens, d_model 8, one head: a 4096 x 4096 weight matrix (64 MiB) without intermediates.
  const d = 8;
  const r = big.forward({
    d_model: d,
    num_heads: 1,
    n: T,
    query: rand(T * d, 1, 31),
    in_proj_weight: rand(3 * d * d, 0.5, 32),
    out_proj_weight: rand(d * d, 0.5, 33),
    keep_intermediates: false,
  });
  assert.equal(r.attn_weights.length, T * T);
  assert.equal(r.scores, undefined);
  assert.ok(r.output.every(Number.isFinite));
  for (const row of [0, 1, T / 2, T - 1]) {
    const s = r.attn_weights.subarray(row * T, (row + 1) * T).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(s - 1) < 1e-4, `row ${row} sums to ${s}`);
  }
  assert.ok(big.memoryStats().wasm_memory_bytes < 2 ** 31, 'under 2 GiB');

  // d_model = 4096 with 2 tokens and 16 heads (in_proj_weight alone is 3 * 4096 * 4096 floats).
  const w = new Float32Array(3 * DM * DM);
  for (let i = 0; i < w.length; i += 97) w[i] = 0.01;
  const o = new Float32Array(DM * DM);
  for (let i = 0; i < o.length; i += 89) o[i] = 0.01;
  const r2 = big.forward({
    d_model: DM,
    num_heads: 16,
    n: 2,
    query: rand(2 * DM, 1, 34),
    in_proj_weight: w,
    out_proj_weight: o,
    keep_intermediates: false,
  });
  assert.equal(r2.output.length, 2 * DM);
  assert.ok(r2.output.every(Number.isFinite));
  assertRowsSumToOne(r2.attn_weights, 2);

  // 256 heads (d_model 256, d_head 1).
  const r3 = big.numpyExperiment({ seed: 3, tokens: 2, d_model: 256, num_heads: HM });
  assert.equal(r3.attn_weights.length, HM * 2 * 2);
  assertRowsSumToOne(r3.attn_weights, 2);

  const stats = big.memoryStats();
  assert.ok(
    stats.wasm_memory_bytes < 2 ** 31,
    `wasm memory ${stats.wasm_memory_bytes} under 2 GiB`,
  );
  // numpyExperiment keeps its seed's draws (X then Wq, Wk, Wv, Wo: 2 * 256 + 4 * 256 * 256 doubles).
  assert.equal(stats.numpy_draws_bytes, 8 * (2 * 256 + 4 * 256 * 256));
  const held = stats.malloc_in_use_bytes - stats.numpy_draws_bytes;
  assert.ok(held < 1 << 20, `nothing else held after the calls: ${held} bytes`);
  console.log(
    `# largest sizes: wasm memory ${(stats.wasm_memory_bytes / 2 ** 20).toFixed(0)} MiB, ` +
      `malloc in use ${stats.malloc_in_use_bytes} bytes`,
  );
});

test('errors give back the stack they took: the stack pointer after 20,000 errors is where it was', () => {
  // A JS Error thrown from inside the wasm skips the frames' epilogues; each error kept 16-32
  // bytes of the 5 MB stack, and after ~327,000 errors the module aborted for good
  // (cpp/bindings/wasm/stack_on_throw.js puts the pointer back). Every kind of entry point:
  // a function, a constructor, a method, and a JS getter that throws while the core reads.
  const layer = new mod.MultiheadAttention(specOf(BASE));
  try {
    const before = mod._stackPointer();
    const throwing = {
      ...inputsOf(BASE),
      get query() {
        throw new RangeError('getter');
      },
    };
    const kinds = [
      [() => mod.parameterCount({ d_model: 10, num_heads: 3 }), Error],
      [() => mod.forward({ ...BASE, n: N + 1 }), Error],
      [() => new mod.MultiheadAttention({ ...specOf(BASE), num_heads: 3 }), Error],
      [() => layer.forward({ ...inputsOf(BASE), m: M + 1 }), Error],
      [() => layer.forward(throwing), RangeError],
    ];
    for (let i = 0; i < 20000; i++) {
      const [call, type] = kinds[i % kinds.length];
      assert.throws(call, type);
    }
    assert.equal(mod._stackPointer(), before);
    assert.deepEqual(layer.forward(inputsOf(BASE)).output, good.output);
  } finally {
    layer.delete();
  }
  stillWorks();
});
