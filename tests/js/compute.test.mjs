// web/src/compute/: where the page's numpyExperiment runs, latest input wins, and a request
// equal to the last one is answered with the kept result instead of being computed again.
// The core and the workers are stand-ins here: the module counts its calls, each worker records
// what it was sent and answers when the test says so (the worker pair's onMessage, as the real
// worker's messages; tests/js/workers.test.mjs runs the pair with the real worker script).
// The work formula and the float64 threshold the cost model uses are the real core's
// (build/wasm/mha_wasm_core.js). Compute.route is run's first step: the outcome now, or the
// promise of the workers' outcome.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compute } from '../../web/src/compute/compute.js';
import {
  WORKER_FIRST_COST,
  WORKER_MIN_COST,
  sameRequest,
  colouredByWorkers,
  costModel,
} from '../../web/src/compute/cost.js';
import { joinHeads } from '../../web/src/compute/split.js';
import { AHEAD_MARGIN, AHEAD_PRIOR_MS_PER_COST, AHEAD_TRIES } from '../../web/src/compute/ahead.js';
import { KEPT_RESULTS } from '../../web/src/compute/cache.js';
import { loadModule } from './module.mjs';

const core = await loadModule('mha_wasm_core.js');
const { experimentWork, pageCost, splittable, aheadable, aheadHere } = costModel(core);

globalThis.document ??= { documentElement: { dataset: {} } }; // the worker pair writes data-compute-worker (workers.js)

/** A core whose numpyExperiment records each request and returns a fresh result for it. */
function fakeCore() {
  const calls = [];
  return {
    calls,
    experimentWork: (request) => core.experimentWork(request),
    experimentFloat64MaxWork: core.experimentFloat64MaxWork,
    numpyExperiment(request) {
      calls.push(request);
      if (request.num_heads === 3)
        throw new Error('d_model (8) must be divisible by num_heads (3)');
      const n = request.tokens;
      return {
        n,
        m: n,
        num_heads: request.num_heads,
        attn_weights: new Float32Array(request.num_heads * n * n).fill(1 / n),
        parameter_count: 4 * request.d_model ** 2,
      };
    },
  };
}

/**
 * A Compute whose worker is ready and only records the messages it is sent: `sent` the calls,
 * `given` the weights' buffers given back to it (workers.js giveBack: {recycle}, transferred).
 */
function withWorker(mod) {
  // The wait before the workers compute ahead: recorded, run when a test says so (runTimers).
  const timers = [];
  const c = new Compute(mod, {
    delay: (f) => {
      timers.push(f);
      return f;
    },
    cancelDelay: (f) => {
      const i = timers.indexOf(f);
      if (i >= 0) timers.splice(i, 1);
    },
  });
  const sent = [];
  const given = [];
  c.pair.workers[0] = {
    postMessage: (m, transfer) => (m.recycle ? given.push(recycled(m, transfer)) : sent.push(m)),
    terminate() {},
  };
  c.pair.ready[0] = true;
  return {
    c,
    sent,
    given,
    timers,
    answer: (id, result) => c.pair.onMessage(0, { id, result, stats: { wasm_memory_bytes: 1 } }),
  };
}

/** A {recycle} message's buffer, checked to be transferred (not copied). */
function recycled(message, transfer) {
  assert.ok(transfer?.length === 1 && transfer[0] === message.recycle, 'transferred');
  return message.recycle;
}

/** How an outcome came: where it was computed, '+reused' when it is the kept outcome of an equal request. */
const how = (o) => `${o.where}${o.reused ? '+reused' : ''}`;

const small = { seed: 7, tokens: 5, d_model: 8, num_heads: 2, positional: false, is_causal: false };
const large = {
  seed: 7,
  tokens: 128,
  d_model: 512,
  num_heads: 8,
  positional: false,
  is_causal: false,
};

test('the requests used here: module 08 runs at once, 128 tokens at d_model 512 go to the worker', () => {
  assert.ok(pageCost(small) <= WORKER_MIN_COST);
  assert.equal(experimentWork(large), 128 * 512 * (4 * 512 + 2 * 128)); // 150,994,944
  assert.equal(pageCost(large), experimentWork(large) + 300 * 8 * 128 ** 2); // 190,316,544
  assert.ok(pageCost(large) > WORKER_MIN_COST);
});

test("the typing benchmark's 64-token view (d_model 512, 8 heads) is computed at once on the page, workers ready or not", () => {
  const view = {
    ...large,
    tokens: 64,
    precision: 'auto',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
  };
  assert.equal(pageCost(view), 64 * 512 * (4 * 512 + 2 * 64) + 300 * 8 * 64 ** 2); // 81,133,568
  const mod = fakeCore();
  const { c, sent } = withWorker(mod);
  const outcome = c.route(view);
  assert.ok(!(outcome instanceof Promise), 'answered in the same task');
  assert.equal(how(outcome), 'page');
  assert.equal(sent.length, 0, 'nothing sent to the worker');
  // 72 tokens (9.3·10⁷) are still the page's; 80 (1.06·10⁸) and 128 tokens are the workers'.
  assert.equal(how(c.route({ ...view, tokens: 72 })), 'page');
  assert.ok(c.route({ ...view, tokens: 80 }) instanceof Promise);
  assert.ok(c.route({ ...view, tokens: 128 }) instanceof Promise);
  assert.equal(sent.length, 1, 'the 128-token call waits for the 80-token one');
});

test('sameRequest: keys, primitives, and typed arrays element by element', () => {
  const mask = (flip) => {
    const m = new Uint8Array(64 * 64);
    m[64 * 63 + 62] = flip;
    return m;
  };
  assert.ok(
    sameRequest({ ...small, attn_mask: mask(1) }, { ...small, attn_mask: mask(1) }),
    'equal n x n masks, different arrays',
  );
  assert.ok(
    !sameRequest({ ...small, attn_mask: mask(1) }, { ...small, attn_mask: mask(0) }),
    'one element differs',
  );
  assert.ok(
    !sameRequest(
      { ...small, attn_mask: Uint8Array.of(1, 0) },
      { ...small, attn_mask: Float32Array.of(1, 0) },
    ),
    'another element type',
  );
  assert.ok(
    !sameRequest(
      { ...small, attn_mask: Uint8Array.of(1, 0) },
      { ...small, attn_mask: Uint8Array.of(1, 0, 0) },
    ),
    'another length',
  );
  assert.ok(!sameRequest(small, { ...small, keep_intermediates: false }), 'a key more');
  assert.ok(
    !sameRequest(
      { ...small, keep_intermediates: undefined },
      { ...small, positional: undefined, keep_intermediates: undefined, x: 1 },
    ),
  );
  assert.ok(!sameRequest(small, { ...small, tokens: 6 }));
  assert.ok(!sameRequest(small, { ...small, is_causal: true }));
  assert.ok(sameRequest({ ...small, ablated_heads: [0, 1] }, { ...small, ablated_heads: [0, 1] }));
  assert.ok(
    !sameRequest({ ...small, ablated_heads: [0, 1] }, { ...small, ablated_heads: { 0: 0, 1: 1 } }),
    'an array is not an object',
  );
  assert.ok(
    !sameRequest(
      { ...small, attn_mask: Float32Array.of(NaN) },
      { ...small, attn_mask: Float32Array.of(NaN) },
    ),
    'NaN: never reused',
  );
});

test('on the page: an equal request returns the kept result at once, without computing', () => {
  const mod = fakeCore();
  const c = new Compute(mod);
  const first = c.route({ ...small, attn_mask: new Uint8Array(25) });
  assert.equal(how(first), 'page');
  assert.equal(mod.calls.length, 1);
  // Typing inside a word: the token text changes, the request does not (a new mask array, equal).
  const again = c.route({ ...small, attn_mask: new Uint8Array(25) });
  assert.equal(how(again), 'page+reused');
  assert.equal(again.result, first.result, 'the same result object');
  assert.equal(mod.calls.length, 1, 'not computed again');
  assert.ok(
    Object.isFrozen(again.result),
    'kept results are frozen: nothing can change them for the next reuse',
  );
  assert.throws(() => {
    again.result.parameter_count = 0;
  }, TypeError);
  assert.equal(again.result.parameter_count, 256);
  // A token more, or one mask cell changed: computed.
  assert.equal(how(c.route({ ...small, tokens: 6, attn_mask: new Uint8Array(36) })), 'page');
  const mask = new Uint8Array(36);
  mask[35] = 1;
  const masked = c.route({ ...small, tokens: 6, attn_mask: mask });
  assert.equal(how(masked), 'page');
  assert.equal(mod.calls.length, 3);
  // Only the last request is kept: going back to the first computes it again.
  assert.equal(how(c.route({ ...small, attn_mask: new Uint8Array(25) })), 'page');
  assert.equal(mod.calls.length, 4);
});

test('the kept request is a copy: the caller changing its mask afterwards is a new request', () => {
  const mod = fakeCore();
  const c = new Compute(mod);
  const request = { ...small, attn_mask: new Uint8Array(25) };
  c.route(request);
  request.attn_mask[3] = 1;
  assert.equal(how(c.route(request)), 'page', 'recomputed with the changed mask');
  assert.equal(mod.calls.length, 2);
  assert.equal(
    how(c.route({ ...request, attn_mask: Uint8Array.from(request.attn_mask) })),
    'page+reused',
  );
});

test('errors are not kept: the same bad request is asked of the core again (and says why again)', () => {
  const mod = fakeCore();
  const c = new Compute(mod);
  const bad = { ...small, num_heads: 3 };
  assert.deepEqual(c.route(bad), {
    error: 'd_model (8) must be divisible by num_heads (3)',
    where: 'page',
  });
  assert.deepEqual(c.route(bad), {
    error: 'd_model (8) must be divisible by num_heads (3)',
    where: 'page',
  });
  assert.equal(mod.calls.length, 2);
});

test('worker: an equal request while it computes takes that computation over; afterwards it is kept', async () => {
  const mod = fakeCore();
  const { c, sent, answer } = withWorker(mod);
  const p1 = c.route(large);
  const p2 = c.route({ ...large });
  assert.ok(p1 instanceof Promise && p2 instanceof Promise);
  assert.equal(sent.length, 1, 'sent to the worker once');
  assert.equal(await p1, null, 'the earlier caller is superseded (it must not draw)');
  const result = mod.numpyExperiment(sent[0].request);
  answer(sent[0].id, result);
  const outcome = await p2;
  assert.equal(how(outcome), 'worker');
  assert.equal(outcome.result, result);
  const p3 = c.route({ ...large });
  assert.ok(!(p3 instanceof Promise), 'answered at once');
  assert.deepEqual(
    p3,
    { result, where: 'worker', workers: 1, recycled: 0, reused: true },
    'where it was computed, and reused',
  );
  assert.equal(sent.length, 1);
});

test('worker: a stale result is never returned, also when the newer request was answered from the cache', async () => {
  const mod = fakeCore();
  const { c, sent, answer } = withWorker(mod);
  // A, then B (waits for A), then A' = A: A's computation is stale (B came after it), so A' is
  // not a takeover but a new call; B, waiting, is dropped without being computed.
  const pa = c.route(large);
  const pb = c.route({ ...large, tokens: 129 });
  const pa2 = c.route({ ...large });
  assert.equal(await pb, null, 'dropped before it started');
  answer(sent[0].id, mod.numpyExperiment(sent[0].request));
  assert.equal(await pa, null, 'stale: a newer call was made after it');
  assert.equal(sent.length, 2, 'the newest call, sent once the worker was free');
  const fresh = mod.numpyExperiment(sent[1].request);
  answer(sent[1].id, fresh);
  assert.equal((await pa2).result, fresh);
  // C to the worker; while it computes, module 08 (small: on the page) and module 08 again (the
  // cache): C's late result is stale and is not returned.
  const pc = c.route({ ...large, seed: 8 });
  assert.equal(sent.length, 3);
  assert.equal(how(c.route(small)), 'page');
  assert.equal(how(c.route({ ...small })), 'page+reused');
  answer(sent[2].id, mod.numpyExperiment(sent[2].request));
  assert.equal(await pc, null);
  assert.equal(
    how(c.route({ ...small })),
    'page+reused',
    'the stale answer did not replace the kept result',
  );
});

test('worker: when it stops, the newest call is computed on the page and kept', async () => {
  const mod = fakeCore();
  const { c, sent } = withWorker(mod);
  const p = c.route(large);
  assert.equal(sent.length, 1);
  c.pair.stop();
  const outcome = await p;
  assert.equal(how(outcome), 'page');
  assert.equal(mod.calls.length, 1);
  assert.equal(c.route({ ...large }).result, outcome.result);
  assert.equal(mod.calls.length, 1);
});

/** The page's grid request (weights only, no intermediates, no parameters). */
const grids = {
  ...large,
  precision: 'auto',
  weights_only: true,
  keep_intermediates: false,
  return_parameters: false,
};

test("splittable: only the grids' float32 request with two heads or more, while its weights can be joined", () => {
  assert.ok(splittable(grids));
  assert.ok(splittable({ ...grids, precision: 'float32' }));
  assert.ok(
    !splittable({ ...grids, precision: 'float64' }),
    'float64: the core computes every head',
  );
  assert.ok(
    !splittable({ ...grids, tokens: 5, d_model: 8, num_heads: 2 }),
    'auto below 4M multiply-adds is float64',
  );
  for (const key of ['weights_only', 'keep_intermediates', 'return_parameters']) {
    const r = { ...grids };
    delete r[key];
    assert.ok(!splittable(r), `without ${key}`);
  }
  assert.ok(!splittable({ ...grids, num_heads: 1 }));
  assert.ok(
    splittable({ ...grids, tokens: 512, d_model: 768, num_heads: 12 }),
    '12 x 512 x 512 = 3.1M weights',
  );
  assert.ok(
    !splittable({ ...grids, tokens: 2048, d_model: 768, num_heads: 12 }),
    '50M weights: not joined (memory)',
  );
});

test("joinHeads: the halves' weights and masked rows one after the other, the rest from the first", () => {
  const a = {
    n: 2,
    m: 2,
    num_heads: 3,
    first_head: 0,
    head_count: 2,
    precision: 'float32',
    attn_weights: Float32Array.of(1, 2, 3, 4, 5, 6, 7, 8),
    fully_masked_rows: Uint8Array.of(0, 1, 0, 0),
  };
  const b = {
    n: 2,
    m: 2,
    num_heads: 3,
    first_head: 2,
    head_count: 1,
    precision: 'float32',
    attn_weights: Float32Array.of(9, 10, 11, 12),
    fully_masked_rows: Uint8Array.of(1, 0),
  };
  const r = joinHeads(a, b);
  assert.deepEqual(r, {
    n: 2,
    m: 2,
    num_heads: 3,
    precision: 'float32',
    attn_weights: Float32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
    fully_masked_rows: Uint8Array.of(0, 1, 0, 0, 1, 0),
  });
  // The workers' pixels, one buffer per head, in head order (both halves have them, or none).
  const p = (v) => new Uint8ClampedArray(16).fill(v);
  assert.deepEqual(joinHeads({ ...a, pixels: [p(1), p(2)] }, { ...b, pixels: [p(3)] }).pixels, [
    p(1),
    p(2),
    p(3),
  ]);
  assert.equal(joinHeads({ ...a, pixels: [p(1), p(2)] }, b).pixels, undefined);
  // Each head's weights without the joined copy (the grids colour from them): views into the
  // halves, not enumerable (not part of the result's fields).
  const views = joinHeads(a, b);
  assert.deepEqual(views.headWeights, [
    Float32Array.of(1, 2, 3, 4),
    Float32Array.of(5, 6, 7, 8),
    Float32Array.of(9, 10, 11, 12),
  ]);
  assert.equal(views.headWeights[2].buffer, b.attn_weights.buffer);
  assert.ok(!Object.keys(views).includes('headWeights'));
  // The weights are joined once, when first read, into a new array (the halves stay as they were).
  const lazy = joinHeads(a, b);
  const weights = lazy.attn_weights;
  assert.equal(lazy.attn_weights, weights, 'joined once');
  assert.notEqual(weights.buffer, a.attn_weights.buffer);
  assert.deepEqual(
    Object.freeze(lazy).attn_weights,
    weights,
    'readable from the frozen kept result',
  );
  assert.deepEqual(a.attn_weights, Float32Array.of(1, 2, 3, 4, 5, 6, 7, 8));
});

/** withWorker plus a ready second worker that records what it is sent. */
function withTwoWorkers() {
  const mod = fakeCore();
  const { c, sent, given, timers } = withWorker(mod);
  const helperSent = [];
  const helperGiven = [];
  c.pair.workers[1] = {
    postMessage: (m, transfer) =>
      m.recycle ? helperGiven.push(recycled(m, transfer)) : helperSent.push(m),
    terminate() {},
  };
  c.pair.ready[1] = true;
  return { mod, c, sent, helperSent, given, helperGiven, timers };
}

test('two workers: a splittable call goes half to each, the answer is the joined whole; others go to the first', async () => {
  const { mod, c, sent, helperSent } = withTwoWorkers();
  const p = c.route(grids);
  assert.equal(sent.length, 1);
  assert.equal(helperSent.length, 1);
  assert.deepEqual(
    [sent[0].part, sent[0].request.first_head, sent[0].request.head_count],
    [0, 0, 4],
  );
  assert.deepEqual(
    [helperSent[0].part, helperSent[0].request.first_head, helperSent[0].request.head_count],
    [1, 4, undefined],
  );
  const half = (first, count) => ({
    n: 64,
    m: 64,
    num_heads: 8,
    first_head: first,
    head_count: count,
    attn_weights: new Float32Array(count * 64 * 64).fill(first + 1),
    fully_masked_rows: new Uint8Array(count * 64),
  });
  // The second half first: nothing yet; then the first: the whole, heads in order.
  c.pair.onMessage(1, {
    id: helperSent[0].id,
    part: 1,
    result: half(4, 4),
    stats: { wasm_memory_bytes: 7 },
  });
  c.pair.onMessage(0, {
    id: sent[0].id,
    part: 0,
    result: half(0, 4),
    stats: { wasm_memory_bytes: 5 },
  });
  const outcome = await p;
  assert.equal(outcome.workers, 2);
  assert.equal(outcome.result.attn_weights.length, 8 * 64 * 64);
  assert.equal(outcome.result.attn_weights[0], 1);
  assert.equal(outcome.result.attn_weights[4 * 64 * 64], 5);
  assert.equal(outcome.result.first_head, undefined);
  assert.deepEqual(c.stats, { wasm_memory_bytes: 7 }, 'the larger of the two cores');
  // Not splittable (a locked cell asks for the full forward): the first worker only.
  const full = c.route({ ...large, precision: 'auto' });
  assert.equal(sent.length, 2);
  assert.equal(helperSent.length, 1);
  assert.equal(sent[1].part, undefined);
  c.pair.onMessage(0, { id: sent[1].id, result: mod.numpyExperiment(sent[1].request), stats: {} });
  assert.equal((await full).workers, 1);
  // An error in a half is the call's error.
  const bad = c.route({ ...grids, seed: 9 });
  c.pair.onMessage(0, { id: sent[2].id, part: 0, error: 'boom', stats: {} });
  c.pair.onMessage(1, { id: helperSent[1].id, part: 1, error: 'boom', stats: {} });
  assert.deepEqual(await bad, { error: 'boom', where: 'worker' });
});

test('the colour table goes with the worker calls whose grids the workers colour: pooled, or more than MAX_KEPT_WEIGHTS weights', () => {
  const view = (tokens, num_heads) => ({ ...large, tokens, num_heads, d_model: 64 });
  // Coloured on the page, into each grid's kept buffer: 64 tokens x 8 heads, 512 x 12 (3.1 M).
  assert.equal(colouredByWorkers(view(64, 8)), false);
  assert.equal(colouredByWorkers(view(512, 12)), false);
  assert.equal(colouredByWorkers(view(1024, 4)), false, '4 x 1024 x 1024 = MAX_KEPT_WEIGHTS');
  // By the worker: 1024 x 5 heads (5.2 M weights), 1025 tokens x 1 head (pooled by 2).
  assert.equal(colouredByWorkers(view(1024, 5)), true);
  assert.equal(colouredByWorkers(view(1025, 1)), true);
  const lut = new Uint32Array(257);
  const c = new Compute(fakeCore(), { lut });
  const sent = [];
  c.pair.workers[0] = { postMessage: (m) => sent.push(m), terminate() {} };
  c.pair.ready[0] = true;
  c.route({ ...large, precision: 'auto' });
  assert.equal(sent[0].lut, undefined);
  c.pair.onMessage(0, { id: sent[0].id, result: {}, stats: {} });
  c.route({ ...large, tokens: 2048, d_model: 64 }); // pooled beyond 1024 tokens: coloured in the worker
  assert.equal(sent[1].lut, lut);
});

test('two workers: the second one failing mid-call hands the whole call to the first', async () => {
  const { mod, c, sent } = withTwoWorkers();
  const p = c.route(grids);
  c.pair.onMessage(1, { failed: 'no memory' });
  assert.equal(c.pair.workers[1], null);
  assert.equal(sent.length, 2, 'resent whole to the first worker');
  assert.equal(sent[1].part, undefined);
  c.pair.onMessage(0, { id: sent[0].id, part: 0, result: {}, stats: {} }); // its half: ignored
  const whole = mod.numpyExperiment(sent[1].request);
  c.pair.onMessage(0, { id: sent[1].id, result: whole, stats: {} });
  assert.equal((await p).result, whole);
});

test('a worker that starts computes the last request once, for nothing (its half when split): the first real call finds the draws kept', () => {
  const mod = fakeCore();
  const c = new Compute(mod);
  const sent = [];
  const helperSent = [];
  c.pair.workers[0] = { postMessage: (m) => sent.push(m), terminate() {} };
  c.pair.workers[1] = { postMessage: (m) => helperSent.push(m), terminate() {} };
  c.route(grids); // no worker ready yet: computed here, kept as the last request
  assert.equal(mod.calls.length, 1);
  c.pair.onMessage(0, { ready: true });
  c.pair.onMessage(1, { ready: true });
  assert.deepEqual(sent, [{ prime: { ...grids, first_head: 0, head_count: 4 } }]);
  assert.deepEqual(helperSent, [{ prime: { ...grids, first_head: 4 } }]);
  // Nothing to prime for module 08 (computed on the page anyway).
  const d = new Compute(fakeCore());
  const dSent = [];
  d.pair.workers[0] = { postMessage: (m) => dSent.push(m), terminate() {} };
  d.route(small);
  d.pair.onMessage(0, { ready: true });
  assert.deepEqual(dSent, []);
});

test('pageCost: multiply-adds plus 300 a weight; which first views wait for the workers', () => {
  const view = (tokens, d_model, num_heads) => ({ ...grids, tokens, d_model, num_heads });
  assert.equal(
    pageCost(view(512, 768, 12)),
    512 * 768 * (4 * 768 + 2 * 512) + 300 * 12 * 512 * 512,
  );
  // To the workers: 2048 x 768 x 12 (the link that held the page 1.5-2.2 s), 1024 x 768 x 12, and
  // 2048 x 256 x 16, whose 2.7e9 multiply-adds alone were below the threshold (2.2-2.5 s held).
  for (const v of [
    view(2048, 768, 12),
    view(1024, 768, 12),
    view(2048, 256, 16),
    view(1024, 2048, 4),
  ]) {
    assert.ok(pageCost(v) >= WORKER_FIRST_COST, `${v.tokens} x ${v.d_model} x ${v.num_heads}`);
  }
  // On the page: 512 x 768 x 12, 2048 x 16 x 2, 64 x 512 x 8.
  for (const v of [view(512, 768, 12), view(2048, 16, 2), view(64, 512, 8)]) {
    assert.ok(pageCost(v) < WORKER_FIRST_COST, `${v.tokens} x ${v.d_model} x ${v.num_heads}`);
  }
});

test('a request of WORKER_FIRST_COST or more made before the workers are ready starts them and waits, split between them', async () => {
  // 1024 tokens x 4 heads at d_model 2048: splittable (4 M weights), and above WORKER_FIRST_COST.
  const huge = { ...grids, tokens: 1024, d_model: 2048, num_heads: 4 };
  assert.ok(splittable(huge));
  assert.ok(pageCost(huge) >= WORKER_FIRST_COST);
  const mod = fakeCore();
  const c = new Compute(mod);
  const sent = [];
  const helperSent = [];
  let starts = 0;
  c.startWorker = () => {
    // what startWorker does on a served page, without real workers
    starts++;
    c.pair.workers[0] ??= { postMessage: (m) => sent.push(m), terminate() {} };
    c.pair.workers[1] ??= { postMessage: (m) => helperSent.push(m), terminate() {} };
  };
  const p = c.route(huge);
  assert.ok(p instanceof Promise);
  assert.equal(starts, 1);
  assert.equal(mod.calls.length, 0, 'not computed on the page');
  c.pair.onMessage(0, { ready: true });
  assert.deepEqual(sent, [], 'the first worker waits for the second, to split the call');
  c.pair.onMessage(1, { ready: true });
  assert.deepEqual([sent.length, helperSent.length], [1, 1], 'no priming: the waiting call itself');
  assert.deepEqual(
    [sent[0].request.first_head, sent[0].request.head_count, helperSent[0].request.first_head],
    [0, 2, 2],
  );
  const half = (first, count) => ({
    n: 1024,
    m: 1024,
    num_heads: 4,
    first_head: first,
    head_count: count,
    attn_weights: new Float32Array(count * 4).fill(first),
    fully_masked_rows: new Uint8Array(count),
  });
  c.pair.onMessage(0, { id: sent[0].id, part: 0, result: half(0, 2), stats: {} });
  c.pair.onMessage(1, { id: helperSent[0].id, part: 1, result: half(2, 2), stats: {} });
  const outcome = await p;
  assert.deepEqual([outcome.where, outcome.workers], ['worker', 2]);
  // The second worker ready first: it is not primed (it would compute its half twice), and the
  // call goes out split once the first one is ready.
  const f = new Compute(fakeCore());
  const fSent = [];
  const fHelperSent = [];
  f.startWorker = () => {
    f.pair.workers[0] ??= { postMessage: (m) => fSent.push(m), terminate() {} };
    f.pair.workers[1] ??= { postMessage: (m) => fHelperSent.push(m), terminate() {} };
  };
  f.route(huge);
  f.pair.onMessage(1, { ready: true });
  assert.deepEqual([fSent.length, fHelperSent.length], [0, 0]);
  f.pair.onMessage(0, { ready: true });
  assert.deepEqual([fSent[0].part, fHelperSent[0].part, fHelperSent[0].prime], [0, 1, undefined]);
  assert.deepEqual([fSent.length, fHelperSent.length], [1, 1]);
  // A smaller request while the workers start: computed here at once, as before.
  const d = new Compute(fakeCore());
  d.startWorker = c.startWorker;
  d.pair.workers[0] = {
    postMessage() {
      throw new Error('not for the worker');
    },
    terminate() {},
  };
  assert.equal(d.route(large).where, 'page');
});

test('waiting for the workers: the second one failing sends the call whole to the first; a call too large to split goes to the first at once; no workers (file://): computed here', async () => {
  const huge = { ...grids, tokens: 1024, d_model: 2048, num_heads: 4 };
  const mod = fakeCore();
  const c = new Compute(mod);
  const sent = [];
  c.pair.workers[0] = { postMessage: (m) => sent.push(m), terminate() {} };
  c.pair.workers[1] = {
    postMessage() {
      throw new Error('failed helper');
    },
    terminate() {},
  };
  const p = c.route(huge);
  c.pair.onMessage(0, { ready: true });
  assert.deepEqual(sent, []);
  c.pair.onMessage(1, { failed: 'no memory' });
  assert.equal(sent.length, 1);
  assert.equal(sent[0].part, undefined, 'whole');
  c.pair.onMessage(0, {
    id: sent[0].id,
    result: mod.numpyExperiment({ ...huge, tokens: 3 }),
    stats: {},
  });
  assert.equal((await p).where, 'worker');
  // 2048 tokens x 12 heads (50 M weights) are not split (splittable: MAX_KEPT_WEIGHTS): the first
  // worker takes the call as soon as it is ready.
  const big = { ...grids, tokens: 2048, d_model: 768, num_heads: 12 };
  assert.ok(!splittable(big));
  const e = new Compute(fakeCore());
  const eSent = [];
  e.pair.workers[0] = { postMessage: (m) => eSent.push(m), terminate() {} };
  e.pair.workers[1] = {
    postMessage() {
      throw new Error('not split');
    },
    terminate() {},
  };
  const q = e.route(big);
  e.pair.onMessage(0, { ready: true });
  assert.equal(eSent.length, 1);
  assert.equal(eSent[0].request.tokens, 2048);
  e.pair.onMessage(0, { id: eSent[0].id, result: {}, stats: {} });
  assert.equal((await q).where, 'worker');
  // file://: startWorker starts nothing, the page computes.
  const made = [];
  globalThis.Worker = class {
    constructor(url) {
      made.push(url);
    }
    postMessage() {}
    terminate() {}
    addEventListener() {}
  };
  globalThis.location = { protocol: 'file:' };
  try {
    const here = new Compute(fakeCore());
    assert.equal(here.route({ ...huge, tokens: 16 }).where, 'page', 'small');
    assert.equal(here.route(huge).where, 'page');
    assert.deepEqual(
      [here.pair.workers[0], made.length, document.documentElement.dataset.computeWorker],
      [null, 0, 'off'],
    );
    // Served: the same request starts the two workers and waits ("starting" until they are ready).
    globalThis.location = { protocol: 'http:' };
    globalThis.navigator ??= {};
    const served = new Compute(fakeCore());
    assert.ok(served.route({ ...huge, seed: 2 }) instanceof Promise);
    assert.equal(
      made.length,
      Math.min(2, globalThis.navigator.hardwareConcurrency ?? 1) >= 2 ? 2 : 1,
    );
    assert.equal(document.documentElement.dataset.computeWorker, 'starting');
    // Workers that failed are not started again by the next large request: the page computes.
    served.pair.onMessage(0, { failed: 'no memory' });
    const before = made.length;
    assert.equal(served.route({ ...huge, seed: 3 }).where, 'page');
    assert.equal(made.length, before);
  } finally {
    delete globalThis.Worker;
    delete globalThis.location;
  }
});

test("weights' buffers go back to the worker that made them once the page has let go of the result and it is neither shown nor kept", async () => {
  const { c, sent, helperSent, given, helperGiven } = withTwoWorkers();
  c.lookahead.setOn(false); // only the results shown are kept here
  const half = (first, count, fill) => ({
    n: 64,
    m: 64,
    num_heads: 8,
    first_head: first,
    head_count: count,
    attn_weights: new Float32Array(count * 64 * 64).fill(fill),
    fully_masked_rows: new Uint8Array(count * 64),
  });
  /** Runs `request`, answers both halves; returns the outcome and the halves' buffers. */
  const answered = async (request, fill) => {
    const p = c.route(request);
    const [a, b] = [half(0, 4, fill), half(4, 4, fill + 1)];
    c.pair.onMessage(0, { id: sent.at(-1).id, part: 0, result: a, stats: {}, recycled: true });
    c.pair.onMessage(1, {
      id: helperSent.at(-1).id,
      part: 1,
      result: b,
      stats: {},
      recycled: false,
    });
    return { outcome: await p, buffers: [a.attn_weights.buffer, b.attn_weights.buffer] };
  };
  const first = await answered(grids, 1);
  assert.equal(first.outcome.recycled, 1, 'how many halves were written into spare memory');
  c.release(first.outcome.result); // still the last call's result: an equal request is answered with it
  assert.deepEqual([given, helperGiven], [[], []]);
  assert.equal(c.route(grids).result, first.outcome.result, 'kept');
  const second = await answered({ ...grids, seed: 8 }, 3);
  // Released, and no longer shown, but kept in the cache (a request shown before): not given back.
  assert.ok(c.cache.kept.some((k) => k.outcome.result === first.outcome.result));
  assert.deepEqual([given, helperGiven], [[], []]);
  // The shown result is not given back until the page lets go of it (a newer result is shown).
  await answered({ ...grids, seed: 9 }, 5);
  c.release(second.outcome.result);
  assert.deepEqual([given, helperGiven], [[], []], 'kept too');
  // KEPT_RESULTS + 2 newer results: the first two go from the cache, and their buffers back,
  // each half's to its own worker, transferred.
  for (let seed = 10; seed < 10 + KEPT_RESULTS + 1; seed++)
    await answered({ ...grids, seed }, seed);
  assert.ok(!c.cache.kept.some((k) => k.outcome.result === first.outcome.result));
  assert.deepEqual(
    [given, helperGiven],
    [
      [first.buffers[0], second.buffers[0]],
      [first.buffers[1], second.buffers[1]],
    ],
  );
  c.release(second.outcome.result); // ...and only once
  assert.equal(given.length, 2);
  // A kept result shown again is read by the page again: not given back when it goes from the cache.
  const shownAgain = c.route({ ...grids, seed: 12 });
  assert.equal(shownAgain.kept, true);
  for (let seed = 20; seed < 20 + KEPT_RESULTS + 2; seed++)
    await answered({ ...grids, seed }, seed);
  assert.ok(!c.cache.kept.some((k) => k.outcome.result === shownAgain.result));
  assert.ok(
    !given.includes(shownAgain.result.headWeights[0].buffer),
    'the page has not let go of it since',
  );
});

test("weights' buffers nobody reads go back at once: a stale result's, the other half of an error; a full forward's never", async () => {
  const { mod, c, sent, helperSent, given, helperGiven } = withTwoWorkers();
  let fill = 0; // each half's weights different: a buffer sent to the wrong worker is seen
  const half = (first, count) => ({
    n: 64,
    m: 64,
    num_heads: 8,
    first_head: first,
    head_count: count,
    attn_weights: new Float32Array(count * 64 * 64).fill(++fill),
    fully_masked_rows: new Uint8Array(count * 64),
  });
  const stale = c.route(grids);
  const [sentBefore, helperBefore] = [sent.at(-1), helperSent.at(-1)];
  const newer = c.route({ ...grids, seed: 8 }); // waits for the workers
  const [a, b] = [half(0, 4), half(4, 4)];
  c.pair.onMessage(0, { id: sentBefore.id, part: 0, result: a, stats: {} });
  c.pair.onMessage(1, { id: helperBefore.id, part: 1, result: b, stats: {} });
  assert.equal(await stale, null);
  assert.deepEqual([given, helperGiven], [[a.attn_weights.buffer], [b.attn_weights.buffer]]);
  // An error in one half: the other half's buffer goes back.
  const ok = half(4, 4);
  c.pair.onMessage(0, { id: sent.at(-1).id, part: 0, error: 'boom', stats: {} });
  c.pair.onMessage(1, { id: helperSent.at(-1).id, part: 1, result: ok, stats: {} });
  assert.deepEqual(await newer, { error: 'boom', where: 'worker' });
  assert.deepEqual(helperGiven, [b.attn_weights.buffer, ok.attn_weights.buffer]);
  // A full forward (a locked cell: not the grids' request) is read by the panels: never given back.
  const full = c.route({ ...large, precision: 'auto' });
  const whole = mod.numpyExperiment(sent.at(-1).request);
  c.pair.onMessage(0, { id: sent.at(-1).id, result: whole, stats: {} });
  c.release((await full).result);
  c.route({ ...grids, seed: 10 });
  assert.deepEqual(given, [a.attn_weights.buffer]);
});

test('weights beyond MAX_KEPT_WEIGHTS never go back to a worker, stale or released (a worker keeps no spare that large)', async () => {
  const { c, sent, given } = withTwoWorkers();
  const big = { ...grids, tokens: 2048, d_model: 768, num_heads: 12 }; // not split: the first worker's
  const huge = () => ({
    n: 2048,
    m: 2048,
    num_heads: 12,
    attn_weights: new Float32Array(12 * 2048 * 2048),
    fully_masked_rows: new Uint8Array(12 * 2048),
  });
  const stale = c.route(big);
  const newer = c.route({ ...big, seed: 11 }); // waits; the first call's result comes stale
  c.pair.onMessage(0, { id: sent[0].id, result: huge(), stats: {} });
  assert.equal(await stale, null);
  c.pair.onMessage(0, { id: sent[1].id, result: huge(), stats: {} });
  c.release((await newer).result);
  c.route(grids); // no longer kept either
  assert.equal(given.length, 0);
  // The same at 64 tokens: the stale result's buffer goes back at once.
  const d = withTwoWorkers();
  const one = { ...big, tokens: 64, num_heads: 1 }; // one head: not split
  const p = d.c.route(one);
  d.c.route({ ...one, seed: 12 });
  const r = {
    n: 64,
    m: 64,
    num_heads: 1,
    attn_weights: new Float32Array(64 * 64),
    fully_masked_rows: new Uint8Array(64),
  };
  d.c.pair.onMessage(0, { id: d.sent[0].id, result: r, stats: {} });
  assert.equal(await p, null);
  assert.deepEqual(d.given, [r.attn_weights.buffer]);
});

test("the second worker stopping mid-call: the first worker's half, arriving after the call was resent whole, goes back to it", async () => {
  const { mod, c, sent, given, helperGiven } = withTwoWorkers();
  const p = c.route(grids);
  c.pair.onMessage(1, { failed: 'no memory' });
  const half = {
    n: 64,
    m: 64,
    num_heads: 8,
    first_head: 0,
    head_count: 4,
    attn_weights: new Float32Array(4 * 64 * 64),
    fully_masked_rows: new Uint8Array(4 * 64),
  };
  c.pair.onMessage(0, { id: sent[0].id, part: 0, result: half, stats: {} });
  assert.deepEqual([given, helperGiven], [[half.attn_weights.buffer], []]);
  c.pair.onMessage(0, { id: sent[1].id, result: mod.numpyExperiment(sent[1].request), stats: {} });
  assert.equal((await p).workers, 1);
});

/**
 * A Compute on the page (no worker) whose idle periods the test runs by hand: `periods` holds the
 * callbacks waiting for one, `idleFor(ms)` runs the first with a deadline of `ms`; the clock
 * advances by `costMs` for every numpyExperiment.
 */
function withIdle({ costMs = 4 } = {}) {
  const mod = fakeCore();
  let clock = 0;
  const compute = mod.numpyExperiment.bind(mod);
  mod.numpyExperiment = (request) => {
    clock += costMs;
    return compute(request);
  };
  const periods = [];
  const c = new Compute(mod, {
    idle: (f) => {
      periods.push(f);
      return f;
    },
    cancelIdle: (f) => {
      const i = periods.indexOf(f);
      if (i >= 0) periods.splice(i, 1);
    },
    now: () => clock,
  });
  const idleFor = (ms) => periods.shift()({ didTimeout: false, timeRemaining: () => ms });
  return { mod, c, periods, idleFor };
}

const view64 = {
  ...large,
  tokens: 64,
  precision: 'auto',
  weights_only: true,
  keep_intermediates: false,
  return_parameters: false,
};
const flags = (o) =>
  `${o.where}${o.reused ? '+reused' : ''}${o.ahead ? '+ahead' : ''}${o.kept ? '+kept' : ''}`;

test("aheadable: the grids' request computed on the page, without masks or other arrays", () => {
  assert.ok(aheadable(view64));
  assert.ok(!aheadable({ ...view64, weights_only: undefined }), "the step panel's full forward");
  assert.ok(!aheadable({ ...view64, keep_intermediates: undefined }));
  assert.ok(
    !aheadable({ ...view64, return_parameters: undefined }),
    'X and the weights: 4 MiB at d_model 512',
  );
  assert.ok(
    !aheadable({ ...view64, key_padding_mask: new Uint8Array(64) }),
    'a mask changes with the token count',
  );
  assert.ok(!aheadable({ ...view64, ablated_heads: [1] }));
  assert.ok(aheadable({ ...view64, tokens: 72 }));
  assert.ok(aheadHere({ ...view64, tokens: 72 }), 'computed ahead on the page');
  assert.ok(
    aheadable({ ...view64, tokens: 80 }) && !aheadHere({ ...view64, tokens: 80 }),
    'by the workers (pageCost above WORKER_MIN_COST)',
  );
  const page512 = { ...view64, tokens: 512, d_model: 768, num_heads: 12 };
  assert.ok(aheadable(page512), "the benchmark's 512-token view: 3.1M weights to keep");
  assert.ok(
    !aheadable({ ...page512, tokens: 600 }),
    'more weights than MAX_KEPT_WEIGHTS (4.3M): not kept, not computed ahead',
  );
});

test("computing ahead: one token more, then one less, one per idle period; the next keystroke's request is answered at once", () => {
  const { mod, c, periods, idleFor } = withIdle();
  assert.equal(flags(c.route(view64)), 'page');
  assert.equal(mod.calls.length, 1);
  assert.equal(periods.length, 1, 'waits for an idle period');
  idleFor(50);
  assert.deepEqual(
    mod.calls.map((r) => r.tokens),
    [64, 65],
  );
  idleFor(50);
  assert.deepEqual(
    mod.calls.map((r) => r.tokens),
    [64, 65, 63],
  );
  assert.equal(periods.length, 0, 'two neighbours, then nothing');
  assert.deepEqual(mod.calls[1], { ...view64, tokens: 65 }, 'the same request otherwise');
  // A word typed: 65 tokens, computed ahead; its own neighbour 66 comes next (64 is kept).
  const typed = c.route({ ...view64, tokens: 65 });
  assert.equal(flags(typed), 'page+ahead');
  assert.equal(typed.result.n, 65);
  assert.ok(Object.isFrozen(typed.result));
  assert.equal(mod.calls.length, 3, 'not computed again');
  assert.equal(
    flags(c.route({ ...view64, tokens: 65 })),
    'page+reused',
    "the same request again: the last one's",
  );
  idleFor(50);
  assert.deepEqual(
    mod.calls.map((r) => r.tokens),
    [64, 65, 63, 66],
  );
  assert.equal(periods.length, 0);
  // The word deleted: 64 tokens were shown before.
  assert.equal(flags(c.route({ ...view64, tokens: 64 })), 'page+kept');
  assert.equal(mod.calls.length, 4);
  // Another setting: computed, and its own neighbours after it.
  assert.equal(flags(c.route({ ...view64, num_heads: 4 })), 'page');
  assert.equal(mod.calls.length, 5);
  idleFor(50);
  assert.deepEqual(mod.calls[5], { ...view64, num_heads: 4, tokens: 65 });
});

test('computing ahead waits for an idle period with room for it (its expected time, with a margin), AHEAD_TRIES at most', () => {
  const { mod, c, periods, idleFor } = withIdle({ costMs: 40 });
  c.route(view64); // 40 ms here: not the expectation (a new seed's draws may be in it)
  const prior = pageCost({ ...view64, tokens: 65 }) * AHEAD_PRIOR_MS_PER_COST * AHEAD_MARGIN;
  assert.ok(
    prior > 12 && prior < 13,
    `64 tokens at d_model 512: 8 ms expected, ${prior} with the margin`,
  );
  idleFor(prior - 0.1);
  assert.equal(mod.calls.length, 1, 'too little time left: not started');
  assert.equal(periods.length, 1, 'another idle period is asked for');
  idleFor(prior);
  assert.equal(mod.calls.length, 2, 'started');
  // It took 40 ms: 63 tokens are now expected to take 40 ms x their cost / 65 tokens' cost.
  const expected =
    40 * (pageCost({ ...view64, tokens: 63 }) / pageCost({ ...view64, tokens: 65 })) * AHEAD_MARGIN;
  idleFor(expected - 0.1);
  assert.equal(mod.calls.length, 2);
  assert.ok(expected > 50, `${expected} ms`);
  for (let i = 1; i < AHEAD_TRIES - 1; i++) idleFor(50);
  assert.equal(periods.length, 1, `${AHEAD_TRIES - 1} periods too short so far`);
  idleFor(50);
  assert.equal(
    periods.length,
    0,
    "given up after AHEAD_TRIES periods too short (58 ms does not fit Chrome's longest, 50 ms)",
  );
  assert.equal(mod.calls.length, 2);
  // A quicker computation ahead lowers the expectation again.
  const quick = withIdle({ costMs: 2 });
  quick.c.route(view64);
  quick.idleFor(50);
  quick.idleFor(3);
  assert.equal(quick.mod.calls.length, 3, '63 tokens expected to take about 2 ms x 1.5');
});

test('computing ahead: giving up on one token more still tries one token less, with its own AHEAD_TRIES', () => {
  const { mod, c, periods, idleFor } = withIdle();
  c.route(view64);
  const need65 = c.lookahead.expectedMs({ ...view64, tokens: 65 }) * AHEAD_MARGIN;
  for (let i = 0; i < AHEAD_TRIES; i++) idleFor(need65 - 0.1);
  assert.deepEqual(
    mod.calls.map((r) => r.tokens),
    [64],
    '65 tokens never had room',
  );
  assert.equal(periods.length, 1, 'one token less is next');
  const need63 = c.lookahead.expectedMs({ ...view64, tokens: 63 }) * AHEAD_MARGIN;
  assert.ok(need63 < need65);
  for (let i = 0; i < AHEAD_TRIES - 1; i++) idleFor(need63 - 0.1);
  assert.equal(periods.length, 1, "its own tries, not what is left of 65's");
  idleFor(need63);
  assert.deepEqual(
    mod.calls.map((r) => r.tokens),
    [64, 63],
  );
  assert.equal(periods.length, 0);
});

test("computing ahead: a rate measured at another d_model or num_heads is not used (module 08's tiny request is mostly the call itself)", () => {
  const { mod, c, idleFor } = withIdle({ costMs: 4 }); // 4 ms a call, whatever its size
  const m08 = {
    ...small,
    precision: 'auto',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
  };
  c.route(m08);
  idleFor(50);
  idleFor(50);
  assert.deepEqual(
    mod.calls.map((r) => r.tokens),
    [5, 6, 4],
  );
  assert.ok(
    c.lookahead.expectedMs({ ...m08, tokens: 7 }) > 3.5,
    'the same shape: its own rate (4 ms a call)',
  );
  c.route(view64);
  const expected = c.lookahead.expectedMs({ ...view64, tokens: 65 });
  assert.equal(
    expected,
    pageCost({ ...view64, tokens: 65 }) * AHEAD_PRIOR_MS_PER_COST,
    'd_model 512: the prior, not 4 ms / 16,680 a unit',
  );
  idleFor(50);
  assert.equal(mod.calls.at(-1).tokens, 65, 'computed in a 50 ms period');
});

test('computing ahead stops for a newer request, and where the page turns it off (embed); other requests are not computed ahead', () => {
  const { mod, c, periods, idleFor } = withIdle();
  c.route(view64);
  const waiting = periods.length;
  c.route({ ...view64, seed: 8 });
  assert.equal(waiting, 1);
  assert.equal(
    periods.length,
    1,
    "the first request's callback cancelled, the new one's asked for",
  );
  idleFor(50);
  assert.deepEqual(mod.calls.at(-1), { ...view64, seed: 8, tokens: 65 });
  c.lookahead.setOn(false);
  assert.equal(periods.length, 0, 'off: the waiting computation is cancelled');
  c.route({ ...view64, seed: 9 });
  assert.equal(periods.length, 0, 'off: nothing computed ahead');
  assert.equal(
    flags(c.route({ ...view64, seed: 8, tokens: 65 })),
    'page+ahead',
    'results kept before still answer',
  );
  c.lookahead.setOn(true);
  for (const request of [
    { ...view64, key_padding_mask: new Uint8Array(64) },
    { ...view64, return_parameters: undefined },
    small,
  ]) {
    c.route(request);
    assert.equal(periods.length, 0, 'not aheadable');
  }
  // An equal request after one that is not aheadable is computed again (only the last is kept for those).
  const calls = mod.calls.length;
  c.route(small);
  c.route({ ...view64, key_padding_mask: new Uint8Array(64) });
  assert.equal(mod.calls.length, calls + 1);
});

test('kept results: KEPT_RESULTS + 2 at most (the shown ones and those computed ahead), newest first', () => {
  const { c, periods, idleFor } = withIdle();
  for (let seed = 1; seed <= 10; seed++) {
    c.route({ ...view64, seed });
    while (periods.length) idleFor(50);
  }
  assert.equal(c.cache.kept.length, KEPT_RESULTS + 2);
  assert.deepEqual(
    c.cache.kept.map((k) => [k.request.seed, k.request.tokens, k.ahead]),
    [
      [10, 63, true],
      [10, 65, true],
      [10, 64, false],
      [9, 63, true],
      [9, 65, true],
    ],
  );
  assert.equal(flags(c.route({ ...view64, seed: 1 })), 'page', 'an old one: computed again');
});

/** The halves of a worker call `m` answered as the fake core computes them (compute_worker.js). */
function answerHalves(c, mod, m, h) {
  const part = (msg) => {
    const r = mod.numpyExperiment(msg.request);
    const count = msg.request.head_count ?? msg.request.num_heads - msg.request.first_head;
    return {
      ...r,
      first_head: msg.request.first_head,
      head_count: count,
      attn_weights: r.attn_weights.slice(0, count * r.n * r.m),
      fully_masked_rows: new Uint8Array(count * r.n),
    };
  };
  c.pair.onMessage(0, { id: m.id, part: 0, result: part(m), stats: {} });
  c.pair.onMessage(1, { id: h.id, part: 1, result: part(h), stats: {} });
}

test('the workers compute ahead: after AHEAD_AWAY_DELAY_MS, one token more then one less, split between them; the next word is answered at once', async () => {
  const { mod, c, sent, helperSent, timers } = withTwoWorkers();
  const p = c.route(grids);
  answerHalves(c, mod, sent[0], helperSent[0]);
  assert.equal(flags(await p), 'worker');
  assert.equal(timers.length, 1, 'waits before computing ahead');
  assert.equal(sent.length, 1, 'nothing sent yet');
  // Typing inside the word (the same request) does not restart the wait.
  assert.equal(flags(c.route(grids)), 'worker+reused');
  assert.equal(timers.length, 1);
  timers.shift()(); // the step waits for the workers' answer
  assert.equal(sent.length, 2);
  assert.deepEqual(
    [sent[1].request.tokens, sent[1].request.first_head, helperSent[1].request.first_head],
    [129, 0, 4],
  );
  assert.ok(sent[1].id < 0 && helperSent[1].id === sent[1].id, 'not a call: its own id');
  answerHalves(c, mod, sent[1], helperSent[1]);
  await new Promise((r) => setImmediate(r)); // computeAway's promise, then the next step's delay
  assert.equal(timers.length, 1, 'one token less next');
  timers.shift()(); // the step waits for the workers' answer
  assert.equal(sent[2].request.tokens, 127);
  answerHalves(c, mod, sent[2], helperSent[2]);
  await new Promise((r) => setImmediate(r));
  assert.equal(timers.length, 0, 'both neighbours kept: nothing more');
  assert.deepEqual(
    c.cache.kept.map((k) => [k.request.tokens, k.ahead]),
    [
      [127, true],
      [129, true],
      [128, false],
    ],
  );
  // A word typed: 129 tokens, answered at once from the workers' computation ahead.
  const typed = c.route({ ...grids, tokens: 129 });
  assert.equal(flags(typed), 'worker+ahead');
  assert.equal(typed.result.attn_weights.length, 8 * 129 * 129);
  assert.equal(sent.length, 3, 'nothing computed for it');
  assert.equal(timers.length, 1, 'its own neighbour (130) is next');
});

test('the workers compute ahead: a call for the same request takes it over; another waits for it, and a newer call cancels the wait', async () => {
  const { mod, c, sent, helperSent, timers } = withTwoWorkers();
  const p = c.route(grids);
  answerHalves(c, mod, sent[0], helperSent[0]);
  await p;
  const ahead = timers.shift()();
  assert.equal(sent.at(-1).request.tokens, 129);
  // The next word comes while 129 tokens are being computed ahead: that computation's result.
  const typed = c.route({ ...grids, tokens: 129 });
  assert.ok(typed instanceof Promise);
  assert.equal(sent.length, 2, 'not sent again');
  answerHalves(c, mod, sent[1], helperSent[1]);
  assert.equal(flags(await typed), 'worker+ahead');
  await ahead;
  assert.deepEqual(
    c.cache.kept.map((k) => [k.request.tokens, k.ahead]),
    [
      [129, false],
      [128, false],
    ],
    'shown: kept, no longer "ahead"',
  );
  assert.equal(timers.length, 1, '130 next, from 129');
  // Another request while 130 is computed ahead: it waits, then goes.
  timers.shift()();
  assert.equal(sent.at(-1).request.tokens, 130);
  const other = c.route({ ...grids, seed: 8 });
  assert.equal(sent.length, 3, 'waits for the computation ahead in flight');
  assert.equal(
    await c.computeAway({ ...grids, tokens: 5 }),
    null,
    'busy: nothing more is computed ahead',
  );
  answerHalves(c, mod, sent[2], helperSent[2]);
  assert.equal(sent.length, 4, 'sent once the workers are free');
  assert.equal(sent[3].request.seed, 8);
  answerHalves(c, mod, sent[3], helperSent[3]);
  assert.equal(flags(await other), 'worker');
  assert.ok(
    c.cache.kept.some((k) => k.request.tokens === 130 && k.ahead),
    'the computation ahead is kept all the same',
  );
});

test('the workers compute ahead only what the cache may keep, and not where the page turns it off; their failing stops it', async () => {
  const { mod, c, sent, helperSent, timers } = withTwoWorkers();
  const large512 = { ...grids, tokens: 600, d_model: 768, num_heads: 12 }; // 4.3M weights
  const p = c.route(large512);
  assert.equal(
    helperSent.length,
    0,
    'too many weights to join: the first worker computes it whole',
  );
  c.pair.onMessage(0, { id: sent[0].id, result: mod.numpyExperiment(sent[0].request), stats: {} });
  await p;
  assert.equal(timers.length, 0, 'more weights than MAX_KEPT_WEIGHTS: not computed ahead');
  c.lookahead.setOn(false);
  const q = c.route(grids);
  answerHalves(c, mod, sent[1], helperSent[0]);
  await q;
  assert.equal(timers.length, 0, 'off (an embedded page)');
  c.lookahead.setOn(true);
  const r = c.route({ ...grids, seed: 8 });
  answerHalves(c, mod, sent[2], helperSent[1]);
  await r;
  const ahead = timers.shift()();
  c.pair.stop(); // the workers stop while computing ahead: the page goes on without them
  assert.equal(await ahead, undefined);
  assert.equal(timers.length, 0);
  assert.equal(flags(c.route({ ...grids, seed: 8, tokens: 129 })), 'page', 'computed here now');
});

test("the workers compute ahead once they are ready: a linked view's first grid, computed on the page before they started", async () => {
  const { mod, c, sent, helperSent, timers } = withTwoWorkers();
  c.pair.ready[0] = false;
  c.pair.ready[1] = false;
  assert.equal(flags(c.route(grids)), 'page', 'computed here: the workers are not ready');
  assert.equal(timers.length, 1);
  assert.equal(await timers.shift()(), undefined);
  assert.equal(sent.length, 0, 'not ready: nothing computed ahead');
  c.pair.onMessage(0, { ready: true });
  assert.equal(timers.length, 0, 'the second worker is not ready yet');
  c.pair.onMessage(1, { ready: true });
  assert.deepEqual(
    [sent.length, helperSent.length],
    [1, 1],
    'each computes its half of the shown view for nothing (prime)',
  );
  assert.equal(timers.length, 1, 'both ready: computing ahead is scheduled');
  timers.shift()();
  assert.equal(sent.at(-1).request.tokens, 129);
  answerHalves(c, mod, sent.at(-1), helperSent.at(-1));
  await new Promise((r) => setImmediate(r));
  assert.equal(flags(c.route({ ...grids, tokens: 129 })), 'worker+ahead');
});

test('the workers compute ahead: a call that took the computation over is sent itself if it fails, and gets null once superseded', async () => {
  const { mod, c, sent, helperSent, timers } = withTwoWorkers();
  const p = c.route(grids);
  answerHalves(c, mod, sent[0], helperSent[0]);
  await p;
  timers.shift()();
  const typed = c.route({ ...grids, tokens: 129 }); // takes over the computation ahead of 129
  c.pair.onMessage(0, { id: sent[1].id, part: 0, error: 'out of memory', stats: {} });
  c.pair.onMessage(1, { id: helperSent[1].id, part: 1, error: 'out of memory', stats: {} });
  assert.equal(sent.length, 3, 'the failed computation ahead: the call is sent as a call');
  assert.equal(sent[2].request.tokens, 129);
  assert.ok(sent[2].id > 0);
  answerHalves(c, mod, sent[2], helperSent[2]);
  assert.equal(flags(await typed), 'worker');
  // Taken over, then superseded by a newer call before the workers answer: null, not forgotten.
  const q = c.route({ ...grids, tokens: 300 });
  answerHalves(c, mod, sent[3], helperSent[3]);
  await q;
  timers.shift()();
  const taker = c.route({ ...grids, tokens: 301 });
  const newer = c.route({ ...grids, seed: 8 });
  assert.equal(await taker, null, 'superseded');
  answerHalves(c, mod, sent[4], helperSent[4]);
  assert.equal(sent.at(-1).request.seed, 8, 'the newer call goes once the workers are free');
  answerHalves(c, mod, sent.at(-1), helperSent.at(-1));
  assert.equal(flags(await newer), 'worker');
  assert.equal(c.pending.size, 0, 'no call left waiting');
});
