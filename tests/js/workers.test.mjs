// web/src/compute/workers.js: the worker pair on its own, with the real worker script
// (compute_worker.js) running the real core (build/wasm/mha_wasm_core.js) in node worker threads
// (compute_worker_thread.mjs gives the script a browser worker's scope). The page the pair talks
// to is this test: it records what the pair tells it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { WorkerPair } from '../../web/src/compute/workers.js';
import { costModel, MAX_KEPT_WEIGHTS, WORKER_MIN_COST } from '../../web/src/compute/cost.js';
import { loadModule } from './module.mjs';

const core = await loadModule('mha_wasm_core.js');
const cost = costModel(core);

globalThis.document ??= { documentElement: { dataset: {} } }; // the pair writes data-compute-worker
// The pair starts its second worker on a machine with two cores or more.
Object.defineProperty(globalThis, 'navigator', {
  value: { hardwareConcurrency: 2 },
  configurable: true,
});
const workerState = () => document.documentElement.dataset.computeWorker;

/** A Worker as the pair uses one, on a node worker thread running compute_worker.js. */
function threadWorker(fail) {
  const thread = new Worker(new URL('./compute_worker_thread.mjs', import.meta.url), {
    workerData: { fail },
  });
  return {
    postMessage: (message, transfer) => thread.postMessage(message, transfer),
    addEventListener(type, listener) {
      if (type === 'message') thread.on('message', (data) => listener({ data }));
      if (type === 'error') thread.on('error', (error) => listener({ error, preventDefault() {} }));
    },
    terminate: () => thread.terminate(),
  };
}

/** Waits until `done()` is true (the workers answer on their own threads). */
async function until(done, what) {
  const end = Date.now() + 20_000;
  while (!done()) {
    assert.ok(Date.now() < end, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * A pair whose page records what it is told (`told`: 'ready 0', 'second gone', 'stopped', ...;
 * `answers`), its workers started by `createWorker` (threadWorker: fails = [first's, second's]).
 * `held`: results the page still holds (inUse).
 */
function pairFor({ fails = [], lut = null } = {}) {
  const told = [];
  const answers = [];
  const held = new Set();
  let made = 0;
  const pair = new WorkerPair({
    cost,
    lut,
    createWorker: () => threadWorker(fails[made++]),
    page: {
      ready: (part) => told.push(`ready ${part}`),
      answer: (answer) => answers.push(answer),
      secondGone: () => told.push('second gone'),
      stopped: () => told.push('stopped'),
      inUse: (result) => held.has(result),
    },
  });
  return { pair, told, answers, held };
}

/** A started pair, both workers ready. */
async function readyPair(options) {
  const p = pairFor(options);
  p.pair.start();
  await until(() => p.pair.ready[0] && p.pair.ready[1], 'both workers ready');
  return p;
}

/** The answer to call `id`, once it has come. */
async function answerTo({ answers }, id) {
  await until(() => answers.some((a) => a.id === id), `the answer to call ${id}`);
  return answers.find((a) => a.id === id);
}

/** The message of the error the page's core throws for `request`. */
function message(request) {
  try {
    core.numpyExperiment(request);
  } catch (e) {
    return e.message;
  }
  return assert.fail('the core computed it');
}

/** The 32-bit patterns of float32 weights: equal arrays of these are equal bit for bit. */
const bits = (weights) =>
  Array.from(new Uint32Array(weights.buffer, weights.byteOffset, weights.length));

/** The grids' request (splittable): num_heads (8) heads of n tokens (96), d_model 256, query 5's row fully masked. */
function gridsRequest(seed = 7, n = 96, d_model = 256, num_heads = 8) {
  const attn_mask = new Uint8Array(n * n).fill(1, 5 * n, 6 * n);
  return {
    seed,
    tokens: n,
    d_model,
    num_heads,
    positional: true,
    is_causal: false,
    precision: 'float32',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
    attn_mask,
  };
}

test("two workers start and say so; a split call's joined answer equals the page's core's single call bit for bit", async (t) => {
  const p = pairFor();
  t.after(() => p.pair.stop());
  p.pair.start();
  assert.equal(workerState(), 'starting');
  await until(() => p.pair.ready[0] && p.pair.ready[1], 'both workers ready');
  assert.deepEqual(p.told.toSorted(), ['ready 0', 'ready 1']);
  assert.equal(workerState(), 'ready');
  p.pair.start(); // once: no more workers
  const request = gridsRequest();
  assert.ok(cost.splittable(request));
  p.pair.send(1, request);
  assert.deepEqual([...p.pair.parts.keys()], [1], 'sent in two halves');
  const { outcome, stats } = await answerTo(p, 1);
  assert.deepEqual([outcome.where, outcome.workers, outcome.recycled], ['worker', 2, 0]);
  assert.ok(stats.wasm_memory_bytes > 0, "the larger core's memoryStats()");
  assert.equal(p.pair.parts.size, 0);
  const single = core.numpyExperiment(request);
  assert.equal(outcome.result.attn_weights.length, 8 * 96 * 96);
  assert.deepEqual(
    bits(outcome.result.attn_weights),
    bits(single.attn_weights),
    "every head's weights, bit for bit",
  );
  assert.deepEqual(outcome.result.fully_masked_rows, single.fully_masked_rows);
  assert.equal(
    single.fully_masked_rows.reduce((s, v) => s + v, 0),
    8,
    'query 5 in each head',
  );
  for (const key of ['n', 'm', 'd_model', 'num_heads', 'd_head', 'precision', 'parameter_count']) {
    assert.equal(outcome.result[key], single[key], key);
  }
  assert.equal(outcome.result.first_head, undefined);
  // Each head's weights as the grids read them: views into its worker's half.
  assert.deepEqual(
    outcome.result.headWeights.map(bits),
    Array.from({ length: 8 }, (_, h) =>
      bits(single.attn_weights.subarray(h * 96 * 96, (h + 1) * 96 * 96)),
    ),
  );
  // A request that is not the grids' (the full forward): the first worker computes it whole.
  const full = { ...request, weights_only: false, keep_intermediates: true };
  p.pair.send(2, full);
  assert.equal(p.pair.parts.size, 0);
  const whole = (await answerTo(p, 2)).outcome;
  assert.equal(whole.workers, 1);
  assert.deepEqual(bits(whole.result.attn_weights), bits(core.numpyExperiment(full).attn_weights));
});

test("buffers: a result the page lets go of goes back to the workers that made them, and the next call's weights are written into that memory", async (t) => {
  const p = await readyPair();
  t.after(() => p.pair.stop());
  // 5 heads: 3 for the first worker, 2 for the second (a buffer given to the wrong one does not fit).
  const grids = (seed) => gridsRequest(seed, 96, 320, 5);
  p.pair.send(1, grids(7));
  const first = (await answerTo(p, 1)).outcome.result;
  assert.equal((await answerTo(p, 1)).outcome.recycled, 0, 'nothing given back yet: new memory');
  // Still held by the page (shown, or kept): released, but not given back.
  p.held.add(first);
  p.pair.release(first);
  assert.ok(first.headWeights.every((w) => w.length === 96 * 96));
  // No longer held: each half's buffer goes back to its worker, transferred (detached here).
  p.held.delete(first);
  p.pair.giveBackWhenDone(first);
  assert.ok(
    first.headWeights.every((w) => w.length === 0 && w.buffer.byteLength === 0),
    'detached: reads as empty',
  );
  p.pair.send(2, grids(8));
  const { outcome } = await answerTo(p, 2);
  assert.equal(
    outcome.recycled,
    2,
    'both halves written into memory used before, each by the worker that made it',
  );
  assert.deepEqual(
    bits(outcome.result.attn_weights),
    bits(core.numpyExperiment(grids(8)).attn_weights),
  );
  // Released again and shown again (reading): it waits for another release.
  const second = outcome.result;
  p.pair.release(second);
  assert.ok(
    second.headWeights.every((w) => w.length === 0),
    'not held: given back at once',
  );
  p.pair.send(3, grids(9));
  const third = (await answerTo(p, 3)).outcome.result;
  p.pair.reading(third);
  p.held.add(third);
  p.pair.giveBackWhenDone(third);
  p.held.delete(third);
  p.pair.giveBackWhenDone(third);
  assert.ok(
    third.headWeights.every((w) => w.length === 96 * 96),
    'never released: kept',
  );
  // A full forward's result never goes back, released or not.
  const full = { ...grids(7), weights_only: false, keep_intermediates: true };
  p.pair.send(4, full);
  const forward = (await answerTo(p, 4)).outcome.result;
  p.pair.neverGiveBack(forward);
  p.pair.release(forward);
  assert.equal(forward.attn_weights.length, 5 * 96 * 96);
  // Nor does a buffer larger than MAX_KEPT_WEIGHTS floats (a worker keeps no spare that large).
  const large = new ArrayBuffer(4 * MAX_KEPT_WEIGHTS + 4);
  p.pair.giveBack(p.pair.workers[0], large);
  assert.equal(large.byteLength, 4 * MAX_KEPT_WEIGHTS + 4, 'not transferred');
});

test('prime: a worker that starts computes the last request once (its half), so the first call finds memory used before', async (t) => {
  const p = await readyPair();
  t.after(() => p.pair.stop());
  const request = gridsRequest(7, 128, 512); // more than the page computes itself (WORKER_MIN_COST)
  assert.ok(cost.pageCost(request) > WORKER_MIN_COST);
  p.pair.prime(request, 0);
  p.pair.prime(request, 1);
  p.pair.send(1, request);
  const { outcome } = await answerTo(p, 1);
  assert.equal(outcome.recycled, 2);
  assert.deepEqual(
    bits(outcome.result.attn_weights),
    bits(core.numpyExperiment(request).attn_weights),
  );
  assert.equal(p.answers.length, 1, 'a prime has no answer');
  // Nothing to prime for a request the page computes itself (module 08).
  const small = {
    seed: 7,
    tokens: 5,
    d_model: 8,
    num_heads: 2,
    precision: 'float32',
    weights_only: true,
    keep_intermediates: false,
    return_parameters: false,
  };
  const posted = [];
  const q = pairFor();
  q.pair.workers = [{ postMessage: (m) => posted.push(m) }, { postMessage: (m) => posted.push(m) }];
  q.pair.prime(small, 0);
  q.pair.prime(small, 1);
  assert.deepEqual(posted, []);
});

test('stop: both workers end, the page is told, and they do not start again; a new pair starts afresh', async () => {
  const p = await readyPair();
  const [first] = p.pair.workers;
  p.pair.send(1, gridsRequest());
  p.pair.stop();
  assert.deepEqual(
    [p.told.at(-1), workerState(), p.pair.workers, p.pair.ready, p.pair.parts.size],
    ['stopped', 'off', [null, null], [false, false], 0],
  );
  const buffer = new ArrayBuffer(16);
  p.pair.giveBack(first, buffer);
  assert.equal(buffer.byteLength, 16, 'to a stopped worker: not transferred');
  p.pair.start();
  assert.deepEqual(
    [p.pair.workers, workerState()],
    [[null, null], 'off'],
    'workers that stopped stay off',
  );
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(p.answers.length, 0, "a stopped worker's answer never comes");
  const again = await readyPair();
  again.pair.send(1, gridsRequest());
  assert.equal((await answerTo(again, 1)).outcome.workers, 2);
  again.pair.stop();
});

test("errors: the core's error in a worker is the call's error, whole or split", async (t) => {
  const p = await readyPair();
  t.after(() => p.pair.stop());
  const whole = { seed: 7, tokens: 5, d_model: 8, num_heads: 3 };
  p.pair.send(1, whole);
  assert.deepEqual((await answerTo(p, 1)).outcome, { error: message(whole), where: 'worker' });
  assert.match(message(whole), /num_heads/);
  // Split: both halves fail (d_model 6 is not divisible by 4 heads); one error, no result.
  const split = { ...gridsRequest(), d_model: 6, num_heads: 4 };
  assert.ok(cost.splittable(split));
  p.pair.send(2, split);
  assert.deepEqual((await answerTo(p, 2)).outcome, { error: message(split), where: 'worker' });
  // The workers go on.
  p.pair.send(3, gridsRequest());
  assert.equal((await answerTo(p, 3)).outcome.workers, 2);
});

test('a failing worker: a core that does not start stops the pair; a second worker that fails hands every call to the first', async () => {
  const p = pairFor({ fails: ['core'] });
  p.pair.start();
  await until(() => p.told.includes('stopped'), 'the pair to stop');
  assert.deepEqual(
    [workerState(), p.pair.workers, p.pair.ready],
    ['off', [null, null], [false, false]],
  );
  // The second worker's script fails to load (an error event): the first one computes alone.
  const q = pairFor({ fails: [undefined, 'script'] });
  q.pair.start();
  await until(() => q.told.includes('second gone') && q.pair.ready[0], 'the second worker to stop');
  assert.deepEqual([q.pair.workers[1], q.pair.allReady, workerState()], [null, true, 'ready']);
  const request = gridsRequest();
  assert.ok(q.pair.readyFor(request));
  q.pair.send(1, request);
  const { outcome } = await answerTo(q, 1);
  assert.equal(outcome.workers, 1);
  assert.deepEqual(
    bits(outcome.result.attn_weights),
    bits(core.numpyExperiment(request).attn_weights),
  );
  q.pair.stop();
  // The second worker stopping while a split call is in flight: the call is sent whole to the first.
  const r = await readyPair();
  r.pair.send(1, request);
  r.pair.stopSecond();
  assert.equal(r.told.at(-1), 'second gone');
  const resent = await answerTo(r, 1);
  assert.equal(resent.outcome.workers, 1);
  assert.deepEqual(
    bits(resent.outcome.result.attn_weights),
    bits(core.numpyExperiment(request).attn_weights),
  );
  await new Promise((done) => setTimeout(done, 50));
  assert.equal(r.answers.length, 1, "the first worker's half, arriving after, is not an answer");
  r.pair.stop();
});
