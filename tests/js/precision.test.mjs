// numpyExperiment's precision ("float64" | "float32" | "auto") and its kept draws, through the
// page's core (build/wasm/mha_wasm_core.js): the result says which precision it was computed in,
// "auto" switches at the work the module exports (experimentFloat64MaxWork, by its experimentWork
// formula, which the page uses), bad values are Errors naming the allowed ones, and calls in any
// order give what a fresh module gives.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './module.mjs';

let mod;
let FLOAT64_MAX_WORK;
let experimentWork;
before(async () => {
  mod = await loadModule('mha_wasm_core.js');
  FLOAT64_MAX_WORK = mod.experimentFloat64MaxWork;
  experimentWork = (request) => mod.experimentWork(request);
});

const m08 = { seed: 7, tokens: 5, d_model: 8, num_heads: 2 };
const maxAbsDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const row = (r, head, i) =>
  Array.from(r.attn_weights.subarray((head * r.n + i) * r.n, (head * r.n + i + 1) * r.n), (x) =>
    x.toFixed(3),
  );

test('precision: float64 by default; float32 on request; the result says which', () => {
  const byDefault = mod.numpyExperiment(m08);
  assert.equal(byDefault.precision, 'float64');
  const f64 = mod.numpyExperiment({ ...m08, precision: 'float64' });
  assert.equal(f64.precision, 'float64');
  assert.deepEqual(f64.attn_weights, byDefault.attn_weights);
  assert.deepEqual(f64.output, byDefault.output);
  const f32 = mod.numpyExperiment({ ...m08, precision: 'float32' });
  assert.equal(f32.precision, 'float32');
  // The same draws: X and the weights are the float32 casts of numpy's float64 draws either way.
  assert.deepEqual(f32.x, f64.x);
  assert.deepEqual(f32.in_proj_weight, f64.in_proj_weight);
  assert.deepEqual(f32.out_proj_weight, f64.out_proj_weight);
  // float32 is the fast path: forward() on the experiment's own x and weights, bit for bit.
  const layer = mod.forward({
    d_model: 8,
    num_heads: 2,
    n: 5,
    query: f64.x,
    in_proj_weight: f64.in_proj_weight,
    out_proj_weight: f64.out_proj_weight,
  });
  assert.deepEqual(f32.attn_weights, layer.attn_weights);
  assert.deepEqual(f32.output, layer.output);
  // Module 08's logits are of order 10: float32 agrees with float64 to 1e-5 (weights, absolute;
  // tests/core/numpy_stream_test.cpp derives it), and the printed 3 decimals are the same.
  assert.ok(maxAbsDiff(f32.attn_weights, f64.attn_weights) < 1e-5);
  assert.ok(maxAbsDiff(f32.attn_weights, f64.attn_weights) > 0, 'two arithmetics, not one');
  assert.deepEqual(row(f32, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
  assert.deepEqual(row(f32, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
});

test('precision "auto": float64 up to 4e6 multiply-adds (the page\'s FLOAT64_MAX_WORK), float32 above', () => {
  assert.equal(FLOAT64_MAX_WORK, 4e6);
  const auto = (tokens, d_model, num_heads = 1) =>
    mod.numpyExperiment({
      seed: 1,
      tokens,
      d_model,
      num_heads,
      precision: 'auto',
      keep_intermediates: false,
    }).precision;
  // [tokens, d_model, n·d·(4d + 2n), expected]: the nearest sizes on either side of 4e6.
  const cases = [
    [5, 8, 1680, 'float64'],
    [124, 64, 3999744, 'float64'],
    [125, 64, 4048000, 'float32'],
    [50, 128, 3916800, 'float64'],
    [51, 128, 4008192, 'float32'],
    [64, 512, 71303168, 'float32'],
  ];
  for (const [n, d, work, want] of cases) {
    assert.equal(experimentWork({ tokens: n, d_model: d }), work);
    assert.equal(work <= FLOAT64_MAX_WORK ? 'float64' : 'float32', want);
    assert.equal(auto(n, d), want, `${n} tokens, d_model ${d}`);
  }
  // Module 08 under "auto" is the float64 result, number for number.
  const a = mod.numpyExperiment({ ...m08, precision: 'auto' });
  const f64 = mod.numpyExperiment(m08);
  assert.equal(a.precision, 'float64');
  assert.deepEqual(a.attn_weights, f64.attn_weights);
  assert.deepEqual(a.output, f64.output);
});

test('an invalid precision is an Error naming the allowed values; the module keeps working', () => {
  // The message names the value given: a string in quotes, anything else as String() shows it.
  for (const [bad, shown] of [
    ['float16', '"float16"'],
    ['AUTO', '"AUTO"'],
    ['', '""'],
    [64, '64'],
    [true, 'true'],
    [['auto'], 'auto'],
    [{ precision: 'auto' }, '[object Object]'],
    ['f'.repeat(60), `"${'f'.repeat(36)}...`],
  ]) {
    assert.throws(
      () => mod.numpyExperiment({ ...m08, precision: bad }),
      (e) => {
        assert.ok(e instanceof Error, `${JSON.stringify(bad)}: an Error`);
        assert.equal(e.message, `precision must be "float64", "float32" or "auto", not ${shown}`);
        return true;
      },
    );
  }
  // Absent, undefined or null: the default, as every optional key of the module.
  assert.equal(mod.numpyExperiment({ ...m08, precision: undefined }).precision, 'float64');
  assert.equal(mod.numpyExperiment({ ...m08, precision: null }).precision, 'float64');
  const r = mod.numpyExperiment(m08);
  assert.deepEqual(row(r, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
});

test('kept draws: interleaved seeds and token counts give exactly what a fresh module gives', async () => {
  const requests = [
    { seed: 7, tokens: 5 },
    { seed: 7, tokens: 3 },
    { seed: 8, tokens: 4 },
    { seed: 7, tokens: 5 },
    { seed: 7, tokens: 9, num_heads: 4 },
  ];
  for (const precision of ['float64', 'float32']) {
    const one = await loadModule('mha_wasm_core.js');
    for (const r of requests) {
      const request = { d_model: 8, num_heads: 2, ...r, precision };
      const got = one.numpyExperiment(request);
      const fresh = (await loadModule('mha_wasm_core.js')).numpyExperiment(request);
      for (const key of ['x', 'in_proj_weight', 'out_proj_weight', 'attn_weights', 'output']) {
        assert.deepEqual(got[key], fresh[key], `${precision} ${JSON.stringify(r)}: ${key}`);
      }
    }
  }
});

test('memoryStats().numpy_draws_bytes: 8 bytes a kept draw, n·d + 4·d² of them, replaced for a new seed', async () => {
  const fresh = await loadModule('mha_wasm_core.js');
  assert.equal(fresh.memoryStats().numpy_draws_bytes, 0);
  fresh.numpyExperiment(m08);
  assert.equal(fresh.memoryStats().numpy_draws_bytes, (5 * 8 + 4 * 64) * 8);
  fresh.numpyExperiment({ ...m08, tokens: 3 });
  assert.equal(
    fresh.memoryStats().numpy_draws_bytes,
    (5 * 8 + 4 * 64) * 8,
    'fewer tokens: nothing drawn',
  );
  fresh.numpyExperiment({ ...m08, tokens: 9 });
  assert.equal(fresh.memoryStats().numpy_draws_bytes, (9 * 8 + 4 * 64) * 8);
  fresh.numpyExperiment({ ...m08, seed: 8, tokens: 4 });
  assert.equal(
    fresh.memoryStats().numpy_draws_bytes,
    (4 * 8 + 4 * 64) * 8,
    'a new seed: a new stream',
  );
});

test('float32 honours keep_intermediates: false (no q, k, v, scores); float64 keeps them', () => {
  const lean = mod.numpyExperiment({ ...m08, precision: 'float32', keep_intermediates: false });
  for (const key of ['q', 'k', 'v', 'scores', 'head_outputs'])
    assert.equal(lean[key], undefined, key);
  assert.equal(lean.attn_weights.length, 2 * 5 * 5);
  const full = mod.numpyExperiment({ ...m08, precision: 'float32' });
  assert.equal(full.scores.length, 2 * 5 * 5);
  assert.deepEqual(lean.attn_weights, full.attn_weights);
  const f64 = mod.numpyExperiment({ ...m08, keep_intermediates: false });
  assert.equal(f64.scores.length, 2 * 5 * 5, 'the float64 path always keeps its intermediates');
});

test('return_parameters: false leaves out x, in_proj_weight and out_proj_weight, nothing else', () => {
  for (const precision of ['float64', 'float32']) {
    const full = mod.numpyExperiment({ ...m08, precision });
    assert.equal(full.x.length, 5 * 8);
    assert.equal(full.in_proj_weight.length, 3 * 8 * 8);
    assert.equal(full.out_proj_weight.length, 8 * 8);
    const lean = mod.numpyExperiment({ ...m08, precision, return_parameters: false });
    for (const key of ['x', 'in_proj_weight', 'out_proj_weight'])
      assert.equal(lean[key], undefined, `${precision} ${key}`);
    // The same computation: every other field equal, bit for bit.
    for (const key of Object.keys(full).filter(
      (k) => !['x', 'in_proj_weight', 'out_proj_weight'].includes(k),
    )) {
      assert.deepEqual(lean[key], full[key], `${precision} ${key}`);
    }
    assert.equal(lean.parameter_count, 4 * 8 * 8);
    assert.deepEqual(mod.numpyExperiment({ ...m08, precision, return_parameters: true }).x, full.x);
  }
  // The page's grid request at 64 tokens, d_model 512 (float32, weights only): the same weights.
  const page = {
    seed: 7,
    tokens: 64,
    d_model: 512,
    num_heads: 8,
    precision: 'auto',
    weights_only: true,
    keep_intermediates: false,
  };
  const a = mod.numpyExperiment(page);
  const b = mod.numpyExperiment({ ...page, return_parameters: false });
  assert.equal(b.precision, 'float32');
  assert.equal(b.in_proj_weight, undefined);
  assert.deepEqual(b.attn_weights, a.attn_weights);
  assert.throws(
    () => mod.numpyExperiment({ ...m08, return_parameters: 'no' }),
    /return_parameters must be true or false, not "no"/,
  );
});

test("first_head / head_count: those heads' weights, bit for bit the full forward's", () => {
  const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  for (const [tokens, d_model, num_heads, precision] of [
    [5, 8, 2, 'float32'],
    [33, 96, 6, 'float32'],
    [64, 512, 8, 'auto'],
  ]) {
    for (const extra of [
      {},
      { positional: true, is_causal: true },
      { key_padding_mask: Array.from({ length: tokens }, (_, j) => j === 1) },
    ]) {
      const base = {
        seed: 7,
        tokens,
        d_model,
        num_heads,
        precision,
        weights_only: true,
        keep_intermediates: false,
        ...extra,
      };
      const full = mod.numpyExperiment(base); // the layer's path (it returns the parameters)
      const n2 = tokens * tokens;
      const half = num_heads / 2;
      const lean = { ...base, return_parameters: false };
      const a = mod.numpyExperiment({ ...lean, first_head: 0, head_count: half });
      const b = mod.numpyExperiment({ ...lean, first_head: half });
      const label = `${tokens},${d_model},${num_heads} ${precision} ${JSON.stringify(extra).slice(0, 40)}`;
      assert.equal(b.head_count, num_heads - half, label);
      assert.equal(b.first_head, half, label);
      assert.equal(a.num_heads, num_heads, "num_heads stays the layer's");
      assert.equal(a.precision, 'float32');
      assert.ok(same(a.attn_weights, full.attn_weights.subarray(0, half * n2)), label);
      assert.ok(same(b.attn_weights, full.attn_weights.subarray(half * n2)), label);
      assert.deepEqual(
        [...a.fully_masked_rows, ...b.fully_masked_rows],
        [...full.fully_masked_rows],
        label,
      );
      assert.ok(
        extra.key_padding_mask === undefined || full.fully_masked_rows.every((f) => f === 0),
      );
      for (const key of ['scores', 'q', 'output', 'x']) assert.equal(a[key], undefined, key);
      // Every head at once on the same road: the same weights as the layer's.
      assert.ok(same(mod.numpyExperiment(lean).attn_weights, full.attn_weights), label);
    }
  }
  const grids = {
    ...m08,
    precision: 'float32',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
  };
  assert.throws(
    () => mod.numpyExperiment({ ...grids, first_head: 2 }),
    /first_head=2 is outside \[0, 1\]/,
  );
  assert.throws(
    () => mod.numpyExperiment({ ...grids, first_head: 1, head_count: 2 }),
    /head_count=2 is outside \[1, 1\]/,
  );
  assert.throws(
    () => mod.numpyExperiment({ ...grids, head_count: 0 }),
    /head_count=0 must be a positive integer/,
  );
  // Only on the grids' road: float64 (module 08's auto), intermediates or parameters asked: an Error.
  const why =
    /first_head and head_count give those heads' weights only: ask them with precision float32 \(or auto, above 4M multiply-adds\), weights_only: true, keep_intermediates: false and return_parameters: false/;
  assert.throws(() => mod.numpyExperiment({ ...grids, precision: 'auto', first_head: 0 }), why);
  assert.throws(
    () => mod.numpyExperiment({ ...grids, return_parameters: true, first_head: 0 }),
    why,
  );
  assert.throws(
    () => mod.numpyExperiment({ ...grids, keep_intermediates: true, head_count: 1 }),
    why,
  );
  assert.throws(() => mod.numpyExperiment({ ...m08, first_head: 0 }), why);
  assert.equal(mod.numpyExperiment(grids).attn_weights.length, 2 * 25, 'the module keeps working');
});

test("attn_weights_into: the weights written into the array given, which is the result's attn_weights; a wrong one is an Error", () => {
  const grids = {
    ...m08,
    precision: 'float32',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
  };
  for (const request of [
    grids,
    { ...grids, first_head: 1 },
    m08,
    { ...m08, tokens: 7, is_causal: true },
  ]) {
    const want = mod.numpyExperiment(request).attn_weights;
    // A view into a larger buffer, as the compute worker passes (compute_worker.js spareWeights).
    const buffer = new ArrayBuffer(4 * (want.length + 8));
    new Float32Array(buffer).fill(-1);
    const into = new Float32Array(buffer, 0, want.length);
    const got = mod.numpyExperiment({ ...request, attn_weights_into: into });
    assert.equal(got.attn_weights, into, 'the same array, no new one');
    assert.deepEqual(got.attn_weights, want, JSON.stringify(request).slice(0, 60));
    assert.equal(new Float32Array(buffer)[want.length], -1, 'nothing written past it');
  }
  const wrong = (into) => () => mod.numpyExperiment({ ...grids, attn_weights_into: into });
  assert.throws(
    wrong(new Float32Array(49)),
    /attn_weights_into has 49 values, expected 50 \(num_heads\*tokens\*tokens\)/,
  );
  assert.throws(wrong(new Float32Array(51)), /attn_weights_into has 51 values, expected 50/);
  assert.throws(
    () => mod.numpyExperiment({ ...grids, head_count: 1, attn_weights_into: new Float32Array(50) }),
    /attn_weights_into has 50 values, expected 25 \(head_count\*tokens\*tokens\)/,
  );
  for (const other of [new Float64Array(50), Array(50).fill(0), 'weights', 5, {}]) {
    assert.throws(wrong(other), /attn_weights_into must be a Float32Array/);
  }
  // An array whose buffer was transferred away (detached) has no room: an Error, not a crash.
  const detached = new Float32Array(50);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  assert.throws(wrong(detached), /attn_weights_into has 0 values, expected 50/);
  assert.equal(mod.numpyExperiment(grids).attn_weights.length, 50, 'the module keeps working');
});

test("the grids' road checks ablated_heads as every other road does (it changes no weight)", () => {
  const grids = {
    ...m08,
    precision: 'float32',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
  };
  const message = /ablated_heads has 3 entries, expected one per head, num_heads = 2/;
  assert.throws(() => mod.numpyExperiment({ ...grids, ablated_heads: [1, 0, 0] }), message);
  assert.throws(
    () => mod.numpyExperiment({ ...grids, precision: 'float64', ablated_heads: [1, 0, 0] }),
    message,
  );
  const off = mod.numpyExperiment({ ...grids, ablated_heads: [1, 0] });
  assert.deepEqual(off.attn_weights, mod.numpyExperiment(grids).attn_weights);
});
