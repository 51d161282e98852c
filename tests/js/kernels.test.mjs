// The wasm build's SIMD128 kernels (blocked GEMM, vectorised softmax) through the public API, at
// sizes that cross their blocks (2x16 and 6x8 micro-tiles, 96-row score blocks, 256-deep
// panels), against a plain float64 loop reference written here from the formula (Vaswani et al. 2017 §3.2.1–3.2.2,
// PyTorch's nn.MultiheadAttention layout); and layer.forwardViews (docs/js-api.md "Zero-copy
// forward"). The committed goldens (torch_mha.json, numpy_mha.json) run through the same kernels
// in wasm.test.mjs. Run: node --test tests/js/   (needs build/wasm/mha_wasm.js)
//
// Tolerances, as tests/core/fast_vs_reference_test.cpp: weights 1e-5 absolute; output 1e-5 of
// max|expected| + 1e-5 relative (float32 sums of d terms against float64).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './module.mjs';

let mod;
before(async () => {
  mod = await loadModule();
});

/** Seeded uniform(-1, 1) * scale draws, rounded to float32 (xorshift32). */
function rand(count, scale, state) {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    state.x ^= state.x << 13;
    state.x >>>= 0;
    state.x ^= state.x >>> 17;
    state.x ^= state.x << 5;
    state.x >>>= 0;
    out[i] = scale * (2 * (state.x / 4294967296) - 1);
  }
  return out;
}

/** y (rows, out) = x (rows, inDim) Wᵀ + b in float64; W (out, inDim) row-major. */
function linear(x, rows, inDim, W, out, b, bOffset) {
  const y = new Float64Array(rows * out);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < out; o++) {
      let s = b ? b[bOffset + o] : 0;
      for (let k = 0; k < inDim; k++) s += x[r * inDim + k] * W[o * inDim + k];
      y[r * out + o] = s;
    }
  }
  return y;
}

/** The plain reference: per head softmax(Q_i K_iᵀ / sqrt(d_head) + M) V_i, then out_proj. */
function reference(c) {
  const { d, h, n, m, kdim, vdim } = c;
  const dh = d / h;
  const Q = linear(c.query, n, d, c.Wq, d, c.in_proj_bias, 0);
  const K = linear(c.key, m, kdim, c.Wk, d, c.in_proj_bias, d);
  const V = linear(c.value, m, vdim, c.Wv, d, c.in_proj_bias, 2 * d);
  const weights = new Float64Array(h * n * m);
  const Y = new Float64Array(n * d);
  for (let i = 0; i < h; i++) {
    for (let r = 0; r < n; r++) {
      const row = new Float64Array(m);
      let max = -Infinity;
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let t = 0; t < dh; t++) s += Q[r * d + i * dh + t] * K[j * d + i * dh + t];
        row[j] = s / Math.sqrt(dh) + c.mask(i, r, j);
        max = Math.max(max, row[j]);
      }
      if (max === -Infinity) continue; // every key masked: weights and head output 0
      let sum = 0;
      for (let j = 0; j < m; j++) {
        row[j] = Math.exp(row[j] - max);
        sum += row[j];
      }
      for (let j = 0; j < m; j++) {
        const a = row[j] / sum;
        weights[(i * n + r) * m + j] = a;
        if (c.ablated[i]) continue;
        for (let t = 0; t < dh; t++) Y[r * d + i * dh + t] += a * V[j * d + i * dh + t];
      }
    }
  }
  return { weights, output: linear(Y, n, d, c.out_proj_weight, d, c.out_proj_bias, 0) };
}

/** A random case: weights, inputs and masks, as request fields and as the reference's view. */
function makeCase({ n, m, d, h, kdim = d, vdim = d, self, bias, causal, padding, perHeadMask }) {
  const state = { x: (n * 7919 + m * 104729 + d * 31) >>> 0 || 1 };
  const s = 1 / Math.sqrt(d);
  const c = { d, h, n, m: self ? n : m, kdim, vdim };
  c.Wq = rand(d * d, s, state);
  c.Wk = rand(d * kdim, 1 / Math.sqrt(kdim), state);
  c.Wv = rand(d * vdim, 1 / Math.sqrt(vdim), state);
  c.out_proj_weight = rand(d * d, s, state);
  c.in_proj_bias = bias ? rand(3 * d, 0.2, state) : null;
  c.out_proj_bias = bias ? rand(d, 0.2, state) : null;
  c.query = rand(n * d, 1, state);
  c.key = self ? c.query : rand(c.m * kdim, 1, state);
  c.value = self ? c.query : rand(c.m * vdim, 1, state);
  const padded = new Uint8Array(c.m);
  if (padding) for (let j = 0; j < c.m; j += 3) padded[j] = 1;
  const headMask = perHeadMask ? rand(h * n * c.m, 1, state).map((x) => (x < -0.4 ? 1 : 0)) : null;
  c.ablated = Array.from({ length: h }, (_, i) => (h > 1 && i === h - 1 ? 1 : 0));
  c.mask = (i, r, j) =>
    padded[j] || (causal && j > r) || headMask?.[(i * n + r) * c.m + j] ? -Infinity : 0;

  const spec = { d_model: d, num_heads: h, out_proj_weight: c.out_proj_weight };
  if (kdim === d && vdim === d) {
    spec.in_proj_weight = new Float32Array([...c.Wq, ...c.Wk, ...c.Wv]);
  } else {
    Object.assign(spec, {
      kdim,
      vdim,
      q_proj_weight: c.Wq,
      k_proj_weight: c.Wk,
      v_proj_weight: c.Wv,
    });
  }
  if (bias) Object.assign(spec, { in_proj_bias: c.in_proj_bias, out_proj_bias: c.out_proj_bias });
  const inputs = { n, query: c.query, ablated_heads: Uint8Array.from(c.ablated) };
  if (!self) Object.assign(inputs, { m: c.m, key: c.key, value: c.value });
  if (causal) inputs.is_causal = true;
  if (padding) inputs.key_padding_mask = padded;
  if (headMask) inputs.attn_mask = Uint8Array.from(headMask);
  return { c, spec, inputs };
}

function assertClose(label, r, expected) {
  let worstW = 0;
  for (let i = 0; i < expected.weights.length; i++) {
    worstW = Math.max(worstW, Math.abs(r.attn_weights[i] - expected.weights[i]));
  }
  assert.ok(worstW <= 1e-5, `${label}: weights differ by ${worstW} > 1e-5`);
  let scale = 1;
  for (const y of expected.output) scale = Math.max(scale, Math.abs(y));
  for (let i = 0; i < expected.output.length; i++) {
    const e = expected.output[i];
    const diff = Math.abs(r.output[i] - e);
    assert.ok(
      diff <= 1e-5 * scale + 1e-5 * Math.abs(e),
      `${label}: output[${i}] = ${r.output[i]}, expected ${e} (|diff| ${diff})`,
    );
  }
}

const cases = [
  { n: 1, m: 1, d: 8, h: 2, self: true, bias: true },
  { n: 1, m: 300, d: 40, h: 5, self: false, bias: true, padding: true },
  { n: 131, m: 131, d: 264, h: 3, self: true, bias: true, causal: true },
  { n: 100, m: 270, d: 40, h: 5, self: false, padding: true, perHeadMask: true },
  { n: 97, m: 13, d: 30, h: 6, kdim: 11, vdim: 50, self: false, bias: true, perHeadMask: true },
  { n: 200, m: 200, d: 24, h: 4, self: true, causal: true, padding: true },
];

test("wasm forward matches the float64 reference at sizes crossing the SIMD128 kernels' blocks", () => {
  for (const shape of cases) {
    const { c, spec, inputs } = makeCase(shape);
    const label = JSON.stringify(shape);
    const expected = reference(c);
    const layer = new mod.MultiheadAttention(spec);
    try {
      const copied = layer.forward({ ...inputs, keep_intermediates: false });
      assertClose(`${label} forward`, copied, expected);
      const views = layer.forwardViews(inputs);
      assertClose(`${label} forwardViews`, views, expected);
      assert.deepEqual(views.output.slice(), copied.output, `${label}: forwardViews != forward`);
      assert.deepEqual(views.attn_weights.slice(), copied.attn_weights);
      assert.deepEqual(views.fully_masked_rows.slice(), copied.fully_masked_rows);
      // The one-shot mod.forward (weights packed per call) gives the same numbers as the layer.
      const oneShot = mod.forward({ ...spec, ...inputs, keep_intermediates: false });
      assert.deepEqual(oneShot.output, copied.output, `${label}: mod.forward != layer.forward`);
    } finally {
      layer.delete();
    }
  }
});

test('forwardViews returns views into wasm memory, copies survive the next call', () => {
  const { spec, inputs } = makeCase({ n: 20, m: 20, d: 16, h: 4, self: true, bias: true });
  const layer = new mod.MultiheadAttention(spec);
  try {
    const first = layer.forwardViews({ n: 20, query: inputs.query });
    assert.ok(first.output instanceof Float32Array);
    assert.ok(first.attn_weights instanceof Float32Array);
    assert.ok(first.fully_masked_rows instanceof Uint8Array);
    assert.equal(first.output.length, 20 * 16);
    assert.equal(first.attn_weights.length, 4 * 20 * 20);
    assert.ok(
      first.output.byteLength < first.output.buffer.byteLength,
      'output is a view into the module memory, not a buffer of its own',
    );
    const kept = first.attn_weights.slice();
    const other = new Float32Array(inputs.query).map((x) => -x);
    const second = layer.forwardViews({ n: 20, query: other });
    const again = layer.forward({ n: 20, query: other, keep_intermediates: false });
    assert.deepEqual(second.attn_weights.slice(), again.attn_weights);
    const fresh = layer.forward({ n: 20, query: inputs.query, keep_intermediates: false });
    assert.deepEqual(kept, fresh.attn_weights, 'the copy taken with slice() kept the first result');
  } finally {
    layer.delete();
  }
});

test('forwardViews rejects bad requests with a clear Error and keeps working', () => {
  const { spec, inputs } = makeCase({ n: 4, m: 4, d: 8, h: 2, self: true, bias: false });
  const layer = new mod.MultiheadAttention(spec);
  try {
    assert.throws(
      () => layer.forwardViews({ n: 4, query: inputs.query, keep_intermediates: true }),
      /unknown key 'keep_intermediates' in the layer's forwardViews request/,
    );
    assert.throws(
      () => layer.forwardViews({ n: 5, query: inputs.query }),
      /query has 32 values, expected n\*d_model = 5\*8 = 40/,
    );
    assert.throws(
      () => layer.forwardViews({ n: 4, query: inputs.query, m: 2, key: new Float32Array(16) }),
      /value is required/,
    );
    const r = layer.forwardViews({ n: 4, query: inputs.query });
    assert.equal(r.output.length, 32);
    assert.ok(r.output.every(Number.isFinite));
  } finally {
    layer.delete();
  }
});

test('weights_only: the same weights bit for bit, q and k kept, no output, v or head outputs', () => {
  for (const shape of [
    { n: 20, m: 20, d: 16, h: 4, self: true, bias: true, causal: true },
    { n: 131, m: 131, d: 264, h: 3, self: true, bias: true },
    { n: 9, m: 300, d: 40, h: 5, self: false, bias: true, padding: true },
  ]) {
    const label = JSON.stringify(shape);
    const { c, spec, inputs } = makeCase(shape);
    const expected = reference(c);
    const layer = new mod.MultiheadAttention(spec);
    try {
      const full = layer.forward(inputs);
      const w = layer.forward({ ...inputs, weights_only: true });
      assert.equal(w.output, undefined, `${label}: no output`);
      assert.equal(w.v, undefined, `${label}: no v`);
      assert.equal(w.head_outputs, undefined, `${label}: no head outputs`);
      // The blocked kernels compute the Q | K columns of the fused product exactly as before.
      assert.deepEqual(w.attn_weights, full.attn_weights, `${label}: weights`);
      assert.deepEqual(w.q, full.q, `${label}: q`);
      assert.deepEqual(w.k, full.k, `${label}: k`);
      assert.deepEqual(w.scores, full.scores, `${label}: scores`);
      assert.deepEqual(w.fully_masked_rows, full.fully_masked_rows);
      // ... which agree with the float64 reference (weights 1e-5 absolute).
      for (let i = 0; i < expected.weights.length; i++) {
        assert.ok(
          Math.abs(w.attn_weights[i] - expected.weights[i]) <= 1e-5,
          `${label}: weight ${i}`,
        );
      }
      const views = layer.forwardViews({ ...inputs, weights_only: true });
      assert.equal(views.output, undefined);
      assert.deepEqual(views.attn_weights.slice(), full.attn_weights);
    } finally {
      layer.delete();
    }
  }
  // numpyExperiment: weights_only on the float32 path; the float64 path computes everything.
  const req = { seed: 7, tokens: 40, d_model: 64, num_heads: 4, precision: 'float32' };
  const full = mod.numpyExperiment(req);
  const w = mod.numpyExperiment({ ...req, weights_only: true });
  assert.equal(w.output, undefined);
  assert.deepEqual(w.attn_weights, full.attn_weights);
  const f64 = mod.numpyExperiment({ ...req, precision: 'float64', weights_only: true });
  assert.equal(f64.output.length, 40 * 64);
  assert.throws(
    () =>
      mod.forward({
        ...makeCase({ n: 2, m: 2, d: 8, h: 2, self: true }).spec,
        n: 2,
        query: new Float32Array(16),
        weights_only: 1,
      }),
    /weights_only must be true or false/,
  );
});
