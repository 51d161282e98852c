// Where the page's numpyExperiment runs (issue 6: typing never blocks on compute).
//
// Small requests run at once on the main thread: cheaper than a round trip, and the grids update
// in the same task. Large ones (pageCost above WORKER_MIN_COST) go to a Web Worker
// (compute_worker.js) when the page is served over http(s): once it is ready (it starts after
// the first grid), or, for the very largest (WORKER_FIRST_COST: a link to 2048 tokens), at once:
// such a request starts the workers and waits for them. A page opened from file:// cannot
// start a worker in Chrome (a file: script is a different origin), nor one whose script failed,
// so there everything runs on the main thread, where typing is already coalesced to one update
// per frame (main.js). Latest input wins: every call supersedes the ones before it, and a result
// that arrives for a superseded call is dropped, never drawn over a newer one. The worker computes
// one call at a time; while it is busy only the newest call waits (older waiting ones are dropped
// without being computed).
//
// Two workers when the machine has two cores or more: a request for the grids alone (weights only,
// no intermediates, no parameters, float32; numpyExperiment's first_head / head_count) is split
// between them, half the heads each, and the halves are joined here (issue 6: 512 tokens at
// d_model 768, 12 heads: 75 ms in one worker, 37 ms a half). Every other request goes to the
// first worker only.
//
// The last request and its result are kept: a new request equal to it (typing inside a word
// changes the text but not the token count, and numpyExperiment depends only on the request) is
// answered at once with the kept outcome (`where` the result was computed, plus `reused: true`),
// without computing again; one equal to a request the worker is still computing takes over that
// computation. The kept result is frozen (its typed arrays are not: nothing on the page writes
// into them).
//
// Computing ahead (issue 6: an update at 64 tokens, d_model 512, within 16 ms). Typing a word adds
// a token, deleting one takes it away: once the grids' request (aheadable: weights only, no
// arrays, computed on this thread) is shown, the page computes the same request for one token more,
// then one token less, in idle time (requestIdleCallback), one computation per idle period and
// only when its deadline leaves room for it (its expected time, from the last one's, with a
// margin). Those results and the ones shown are kept, KEPT_RESULTS + 2 at most, newest first: a
// request equal to one of them is answered at once (`ahead: true` for a result computed ahead,
// `kept: true` for one shown before). Every other request (masks, the step panel's full forward,
// the workers' views) is only compared with the last one, as above. A kept result has a pageCost
// up to WORKER_MIN_COST: at most h·n² = 3.3·10⁵ weights, 1.3 MB.

import { FLOAT64_MAX_WORK } from '../draw/format.js';
import { poolFactor } from '../draw/pixels.js';

export const WORKER_SCRIPT = 'compute_worker.js';
/**
 * pageCost above which a request goes to the workers; up to it the page computes at once, in the
 * task of the input. 64 tokens at d_model 512 and 8 heads (8.1·10⁷) cost the page's thread 3–5 ms
 * of compute on the benchmark's machine, while the two workers' answer came 8–15 ms after the
 * key (median 10.5–15, traced: on two cores the workers, the page's thread handling the key and
 * the compositor take turns), and the whole update from a key to the painted grids took 26–36 ms
 * against 16–20 computed here (issue 6's 16 ms target; medians of 20 changes, alternating runs
 * on one build). 128 tokens at d_model 512 (1.9·10⁸) and anything larger still go to the workers.
 */
export const WORKER_MIN_COST = 1e8;
/**
 * The cost of drawing `request` from this thread, in multiply-adds: experimentWork, plus
 * WEIGHT_COST for each of the h·n² weights (its exponential, its copies, its pixel). Fitted in
 * node on the grids' request: about 0.036 ns a multiply-add and 7 ns a weight in the core, and
 * some 5 ns a weight more to colour it here, so 2048 tokens at d_model 256 and 16 heads (2.7·10⁹
 * multiply-adds, 6.7·10⁷ weights) cost as much as 2048 tokens at d_model 768 and 12 heads.
 */
export function pageCost(request) {
  return experimentWork(request) + WEIGHT_COST * request.num_heads * request.tokens ** 2;
}
/** Multiply-adds one weight costs (pageCost). */
export const WEIGHT_COST = 300;
/**
 * pageCost from which a request made before the workers are ready (a link to a large view, just
 * opened) starts them and waits for them instead of computing here. 2048 tokens at d_model 768
 * and 12 heads (2.6·10¹⁰) held the page's thread for 1.5–2.2 s before its first grid, every input
 * with it; 1024 tokens at d_model 768 and 12 heads (7.8·10⁹) and 2048 at d_model 256 and 16 heads
 * (2.3·10¹⁰) go to the workers too. Below, the page computes at once: 512 tokens at d_model 768
 * and 12 heads (2.6·10⁹: about 0.1 s of compute in node, less than starting the workers). Just
 * under the threshold the page's thread is held for about 0.2 s of compute, and, with drawing,
 * up to 0.6–0.8 s measured on a loaded 2-core machine (a reviewer's 10 ms timer, load 4.5).
 */
export const WORKER_FIRST_COST = 5e9;
/**
 * The page keeps q, k and the scores (for the step panel) while num_heads · n · m is at most this
 * (12 heads of 2048 tokens would hold 200 MB of scores: issue 6 keeps the wasm heap under 512 MB);
 * a split request's halves are joined while its weights are at most this many floats too; and
 * grids of at most this many weights in all are coloured on the page (colouredByWorkers: ~8 ms
 * of its thread at most).
 */
export const MAX_KEPT_WEIGHTS = 1 << 22;

/** Multiply-adds of one numpyExperiment: four (n, d) x (d, d) products, then h heads of QKᵀ and AV. */
export function experimentWork({ tokens: n, d_model: d }) {
  return n * d * (4 * d + 2 * n);
}

/**
 * Whether two numpyExperiment requests are the same: the same keys, each value equal (Object.is)
 * or an array / typed array (masks, up to n x n) of the same type, equal element by element. A
 * NaN element never equals anything, and a nested object is never equal: such a request is
 * computed again. (A few lines here rather than a dependency: the requests are flat.)
 */
export function sameRequest(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => {
    const x = a[k];
    const y = b[k];
    return k in b && (Object.is(x, y) || ((Array.isArray(x) || ArrayBuffer.isView(x)) &&
      x.constructor === y?.constructor && x.length === y.length && x.every((v, i) => v === y[i])));
  });
}

/**
 * Aheadable results the page keeps: KEPT_RESULTS + 2 (two computed ahead from the last one shown
 * and three more, shown or computed ahead before; computing ahead: Compute.run).
 */
export const KEPT_RESULTS = 3;
/** How many idle periods a computation ahead waits for one whose deadline leaves it room. */
export const AHEAD_TRIES = 10;
/**
 * Margin on the time a computation ahead is expected to take: it starts only when the idle period
 * leaves that much (a key pressed meanwhile waits for it).
 */
export const AHEAD_MARGIN = 1.5;
/**
 * Milliseconds a unit of pageCost is expected to take on this thread before a computation ahead
 * of the same d_model and num_heads is timed (then: the last one's time per unit: expectedMs). 64 tokens at d_model 512 and 8 heads
 * (8.1·10⁷) took 3–5 ms in node's wasm: this says 8. Not the shown view's own time: that one
 * may have drawn a new seed's numbers (1M draws at d_model 512: 25–70 ms), which a token more
 * or less does not (d_model draws more at most: compute ahead is then the grids alone).
 */
export const AHEAD_PRIOR_MS_PER_COST = 1e-7;
/** Without requestIdleCallback: a computation ahead 50 ms after the last update, given 16 ms. */
const FALLBACK_IDLE_DELAY_MS = 50, FALLBACK_IDLE_BUDGET_MS = 16;

/** The d_model and num_heads of a request, as one key (Compute.expectedMs). */
const shapeOf = (request) => `${request.d_model}/${request.num_heads}`;

/**
 * Whether the page computes `request` ahead, and keeps its result for an equal request later:
 * the grids' request (weights only, no intermediates, no parameters) with no array field (a mask,
 * ablated heads: these change with the token count or the panels) and small enough to be computed
 * on this thread (pageCost up to WORKER_MIN_COST).
 */
export function aheadable(request) {
  return request.weights_only === true && request.keep_intermediates === false &&
    request.return_parameters === false && pageCost(request) <= WORKER_MIN_COST &&
    Object.values(request).every((v) => typeof v !== 'object' || v === null);
}

/** Whether the page keeps q, k and the scores of num_heads heads of n tokens (MAX_KEPT_WEIGHTS). */
export function keepsIntermediates(numHeads, n) {
  return numHeads * n * n <= MAX_KEPT_WEIGHTS;
}

/**
 * Whether `request` can be split between two workers by heads: the grids' request (float32 weights
 * only, no intermediates, no parameters: the core's numpy_experiment_weights_f32) with at least two
 * heads and weights small enough to join (MAX_KEPT_WEIGHTS).
 */
export function splittable(request) {
  const float32 = request.precision === 'float32' ||
    (request.precision === 'auto' && experimentWork(request) > FLOAT64_MAX_WORK);
  return float32 && request.weights_only === true && request.keep_intermediates === false &&
    request.return_parameters === false && request.num_heads >= 2 &&
    keepsIntermediates(request.num_heads, request.tokens);
}

/**
 * Whether a worker colours the cells of `request`'s grids (its result then has `pixels`): pooled
 * grids (beyond MAX_BUFFER_SIDE tokens, pixels.js), and grids of more than MAX_KEPT_WEIGHTS
 * weights in all. Smaller ones are coloured on the page, into each grid's kept pixel buffer
 * (heatmap.js): 12 heads of 512 x 512 took each worker ~22 ms, mostly writing 6 MB of pixels
 * into new memory (memory touched for the first time cost 3.5 ms a MB on the benchmark's
 * machine), and take the page ~6 ms.
 */
export function colouredByWorkers(request) {
  return poolFactor(request.tokens, request.tokens) > 1 || request.num_heads * request.tokens ** 2 > MAX_KEPT_WEIGHTS;
}

/**
 * The result for every head from the two workers' halves (heads [0, a) and [a, h)): their weights
 * and fully masked rows one after the other; the rest as the first half says, without its
 * first_head and head_count. The weights are joined when first read: the grids colour each
 * head from its half (`headWeights`, not enumerable), and copying 12 heads of 512 x 512 weights
 * took the page ~10 ms an update (issue 6), which a hover, a table or a panel pays later, once.
 */
export function joinHeads(first, second) {
  const join = (Type, a, b) => {
    const out = new Type(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  };
  const { first_head: _f, head_count: _c, attn_weights: _a, ...rest } = first;
  let weights = null;
  const joined = {
    ...rest,
    fully_masked_rows: join(Uint8Array, first.fully_masked_rows, second.fully_masked_rows),
  };
  Object.defineProperty(joined, 'attn_weights', {
    enumerable: true,
    get: () => (weights ??= join(Float32Array, first.attn_weights, second.attn_weights)),
  });
  // Each head's (n, m) weights: a view into its half's (the joined array is not made for them).
  const size = first.n * first.m;
  Object.defineProperty(joined, 'headWeights', {
    value: [first, second].flatMap(({ attn_weights: w }) =>
      Array.from({ length: w.length / size }, (_, i) => w.subarray(i * size, i * size + size))),
  });
  if (first.pixels && second.pixels) joined.pixels = [...first.pixels, ...second.pixels];
  else delete joined.pixels;
  return joined;
}

export class Compute {
  /**
   * @param {object} mod the page's core (for the main thread)
   * @param {{lut?: Uint32Array}} [colors] the grids' colour table (color.js rampWords): a worker
   *   given it also returns the cells' pixels (result.pixels, one buffer per head, pooled as the
   *   grid draws them beyond 1024 tokens: pixels.js resultPixels); it is sent with the requests
   *   whose grids the workers colour (colouredByWorkers)
   */
  constructor(mod, { lut = null, idle = null, cancelIdle = null, now = () => performance.now() } = {}) {
    this.mod = mod;
    this.lut = lut;
    // Computing ahead (run): on unless the page turns it off (an embedded page has no text to type).
    this.ahead = true;
    this.idle = idle ?? (typeof requestIdleCallback === 'function'
      ? (f) => requestIdleCallback(f)
      : (f) => {
        const due = now() + FALLBACK_IDLE_DELAY_MS;
        return setTimeout(() => f({ didTimeout: false, timeRemaining: () => Math.max(0, due + FALLBACK_IDLE_BUDGET_MS - now()) }),
          FALLBACK_IDLE_DELAY_MS);
      });
    this.cancelIdle = cancelIdle ?? (typeof cancelIdleCallback === 'function' ? (h) => cancelIdleCallback(h) : (h) => clearTimeout(h));
    this.now = now;
    // Aheadable results, newest first, KEPT_RESULTS + 2 at most: {request (a copy), outcome, ahead
    // (computed ahead, not shown since)}.
    this.kept = [];
    this.aheadHandle = null; // the idle callback of the next computation ahead
    // The last computation ahead's time per pageCost unit, and the d_model and num_heads it was
    // measured at: {shape, msPerCost} or null.
    this.aheadRate = null;
    this.computedAhead = 0;
    this.worker = null;
    this.workerReady = false;
    this.helper = null; // the second worker: half the heads of a splittable request
    this.helperReady = false;
    this.parts = new Map(); // id -> the halves received so far, for a call sent split
    this.latest = 0; // id of the newest call
    this.pending = new Map(); // id -> resolve, for calls sent to the worker
    this.inFlight = null; // id of the call the worker is computing
    this.queued = null; // id of the newest call waiting for it (older waiting calls are dropped)
    this.stats = null; // the worker core's last memoryStats()
    this.workersStarted = false; // startWorker ran (workers are started once per page)
    // The last call: {id, request (a copy), outcome ({result (frozen), where}; null until it is
    // known)}. Only the newest call is ever sent to the worker or redone here, and it is this one.
    this.last = null;
    // Worker results whose weights' buffers go back to their workers once nothing here reads
    // them (giveBackWhenDone): result -> [[worker, ArrayBuffer], ...]. `released`: those the page
    // said it no longer reads (release).
    this.returns = new WeakMap();
    this.released = new WeakSet();
  }

  /**
   * Starts the worker when the page is served over http(s); quietly stays on the main thread
   * otherwise (file://, a worker that cannot load or start). <html data-compute-worker> says
   * which: "starting" until the worker's core has started, then "ready"; "off" when it stopped or
   * never started.
   */
  startWorker(url = WORKER_SCRIPT) {
    // Once per page: workers that failed stay off (a large request would otherwise start them
    // again, and wait for them to fail, every time).
    if (this.workersStarted) return;
    this.workersStarted = true;
    document.documentElement.dataset.computeWorker = 'off';
    if (typeof Worker !== 'function' || !/^https?:$/.test(location.protocol)) return;
    let worker;
    try {
      worker = new Worker(url);
    } catch {
      return; // refused (e.g. by a policy): the main thread computes
    }
    this.worker = worker;
    document.documentElement.dataset.computeWorker = 'starting';
    worker.addEventListener('message', (e) => this.onMessage(e.data));
    worker.addEventListener('error', (e) => {
      e.preventDefault(); // no console error: the page falls back and keeps working
      this.stopWorker();
    });
    // A second core on a machine with two cores or more (navigator.hardwareConcurrency).
    if ((globalThis.navigator?.hardwareConcurrency ?? 1) < 2) return;
    let helper;
    try {
      helper = new Worker(url);
    } catch {
      return; // one worker then
    }
    this.helper = helper;
    helper.addEventListener('message', (e) => this.onHelperMessage(e.data));
    helper.addEventListener('error', (e) => {
      e.preventDefault();
      this.stopHelper();
    });
  }

  /**
   * Sends the call that waited for the workers to start (run, WORKER_FIRST_COST) once the first
   * one is ready, and, for a call that can be split between them (splittable), once the second
   * one is ready too or gone.
   * @returns {boolean} whether a call was waiting and is now sent
   */
  sendWaiting() {
    if (this.queued === null || this.inFlight !== null || !this.workerReady) return false;
    if (this.helper && !this.helperReady && splittable(this.last.request)) return false;
    const id = this.queued;
    this.queued = null;
    this.send(id);
    return true;
  }

  /** The second worker stopped or never started: everything goes to the first one. */
  stopHelper() {
    this.helper?.terminate();
    this.helper = null;
    this.helperReady = false;
    if (this.sendWaiting()) return;
    // A call in flight split in two: the first worker computes it whole (its own half's answer,
    // if it comes, is then ignored).
    if (this.inFlight !== null && this.parts.has(this.inFlight)) {
      this.parts.delete(this.inFlight);
      this.send(this.inFlight);
    }
  }

  onHelperMessage(data) {
    if (data.ready) {
      this.helperReady = true;
      // Not primed while a call waits for the first worker: it would compute its half twice.
      if (!this.sendWaiting() && this.queued === null) this.prime(this.helper, 1);
      return;
    }
    if (data.failed !== undefined) {
      this.stopHelper();
      return;
    }
    this.onMessage(data);
  }

  stopWorker() {
    document.documentElement.dataset.computeWorker = 'off';
    this.worker?.terminate();
    this.worker = null;
    this.workerReady = false;
    this.helper?.terminate();
    this.helper = null;
    this.helperReady = false;
    this.parts.clear();
    // Calls in flight are answered on the main thread instead (only the newest still matters).
    for (const [id, resolve] of this.pending) resolve(id === this.latest ? this.keep(id, this.runHere(this.last.request)) : null);
    this.pending.clear();
    this.inFlight = null;
    this.queued = null;
  }

  /**
   * A worker that just started computes the last request once, for nothing (its share of it
   * when split): the first real call then finds the seed's Gaussian draws kept and the kernels
   * hot instead of drawing a million numbers (issue 6: 70 ms in a Chromium worker at d_model 512).
   */
  prime(worker, part) {
    const request = this.last?.request;
    if (!request || pageCost(request) <= WORKER_MIN_COST) return;
    if (!splittable(request)) {
      if (part === 0) worker.postMessage({ prime: request });
      return;
    }
    const half = Math.ceil(request.num_heads / 2);
    worker.postMessage({ prime: part === 0 ? { ...request, first_head: 0, head_count: half } : { ...request, first_head: half } });
  }

  onMessage(data) {
    if (data.ready) {
      this.workerReady = true;
      document.documentElement.dataset.computeWorker = 'ready';
      // A call that waited for the workers goes now (or when the second one is ready too);
      // otherwise the worker computes the last request for nothing (prime).
      if (this.queued === null) this.prime(this.worker, 0);
      else this.sendWaiting();
      return;
    }
    if (data.failed !== undefined) {
      this.stopWorker();
      return;
    }
    if (data.part !== undefined) {
      // Half of a split call: wait for the other half, then go on with the whole.
      const got = this.parts.get(data.id);
      if (!got) { // the call was resent whole, or forgotten
        this.giveBack(data.part === 0 ? this.worker : this.helper, data.result?.attn_weights?.buffer);
        return;
      }
      got[data.part] = data;
      if (!got[0] || !got[1]) return;
      this.parts.delete(data.id);
      const [a, b] = got;
      const larger = (a.stats?.wasm_memory_bytes ?? 0) >= (b.stats?.wasm_memory_bytes ?? 0) ? a : b;
      const error = a.error ?? b.error;
      const halves = [[this.worker, a.result], [this.helper, b.result]];
      if (error !== undefined) {
        for (const [worker, result] of halves) this.giveBack(worker, result?.attn_weights?.buffer);
        data = { id: data.id, error, stats: larger.stats };
      } else {
        data = {
          id: data.id, result: joinHeads(a.result, b.result), stats: larger.stats, workers: 2,
          recycled: Number(a.recycled === true) + Number(b.recycled === true),
        };
        this.returns.set(data.result, halves.map(([worker, half]) => [worker, half.attn_weights?.buffer]));
      }
    } else if (data.result && (data.id !== this.latest || splittable(this.last.request))) {
      // Whole: the grids' request sent to one worker (the second one not ready), or a stale call.
      this.returns.set(data.result, [[this.worker, data.result.attn_weights?.buffer]]);
    }
    const resolve = this.pending.get(data.id);
    if (data.id === this.inFlight) this.inFlight = null;
    if (resolve) {
      this.settle(data.id); // forgotten here, resolved just below
      if (data.stats) this.stats = data.stats;
      // Stale: a newer call was made since; its own result will be drawn.
      if (data.id !== this.latest) resolve(null);
      else {
        resolve(this.keep(data.id, data.error !== undefined
          ? { error: data.error, where: 'worker' }
          : { result: data.result, where: 'worker', workers: data.workers ?? 1, recycled: Number(data.recycled ?? 0) }));
      }
    }
    // A result nobody was given (stale, or its call forgotten): its buffers go back at once.
    if (data.result && !(resolve && data.id === this.latest)) this.release(data.result);
    // The newest waiting call goes next (the worker computes one call at a time).
    if (this.inFlight === null && this.queued !== null) {
      const next = this.queued;
      this.queued = null;
      if (next === this.latest) this.send(next);
      else this.settle(next, null);
    }
  }

  /**
   * The page no longer reads `result` (a result it was given and has replaced on screen: main.js).
   * Once it is not the kept result either, its weights' buffers go back to the workers that made
   * them (compute_worker.js spareWeights): only the grids' results (splittable requests) computed
   * by the workers, whose weights are read by the grids, their tables and the export, all of which
   * take the new view's result when it is shown; and results nobody was given (stale: onMessage
   * releases them itself). Transferred, those buffers are detached here: every array on them
   * reads as empty, never as another view's numbers.
   */
  release(result) {
    if (!this.returns.has(result)) return;
    this.released.add(result);
    this.giveBackWhenDone(result);
  }

  /** Gives `result`'s buffers back once it is released and no longer the kept result. */
  giveBackWhenDone(result) {
    if (!this.released.has(result) || this.last?.outcome?.result === result) return;
    for (const [worker, buffer] of this.returns.get(result)) this.giveBack(worker, buffer);
    this.returns.delete(result);
    this.released.delete(result);
  }

  /**
   * Transfers `buffer` (the weights of a worker's result nobody here reads) to `worker`, when that
   * worker still runs and the buffer is at most MAX_KEPT_WEIGHTS floats (a worker keeps two:
   * compute_worker.js MAX_SPARE).
   */
  giveBack(worker, buffer) {
    if (!worker || (worker !== this.worker && worker !== this.helper)) return;
    if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0 || buffer.byteLength > 4 * MAX_KEPT_WEIGHTS) return;
    worker.postMessage({ recycle: buffer }, [buffer]);
  }

  /** Forgets call `id`; resolves its promise with `outcome` when one is given. */
  settle(id, outcome) {
    const resolve = this.pending.get(id);
    this.pending.delete(id);
    if (resolve && outcome !== undefined) resolve(outcome);
  }

  send(id) {
    this.inFlight = id;
    const request = this.last.request; // only the newest call is sent
    const lut = colouredByWorkers(request) ? this.lut ?? undefined : undefined;
    if (this.helperReady && splittable(request)) {
      const half = Math.ceil(request.num_heads / 2);
      this.parts.set(id, []);
      this.worker.postMessage({ id, part: 0, lut, request: { ...request, first_head: 0, head_count: half } });
      this.helper.postMessage({ id, part: 1, lut, request: { ...request, first_head: half } });
      return;
    }
    this.worker.postMessage({ id, lut, request });
  }

  /** Keeps the outcome of call `id` when it is the last call (errors are not kept). */
  keep(id, outcome) {
    if (this.last?.id === id && outcome.result) {
      Object.freeze(outcome.result);
      this.last.outcome = outcome;
    }
    return outcome;
  }

  /** Turns computing ahead on or off (off: nothing more is computed ahead; kept results stay). */
  setAhead(on) {
    this.ahead = on;
    if (!on) this.cancelAhead();
  }

  /**
   * Keeps `entry` ({request, outcome, ahead}) first among the kept results, in place of an equal
   * request's; the oldest beyond KEPT_RESULTS + 2 (the two neighbours computed ahead) go.
   */
  remember(entry) {
    Object.freeze(entry.outcome.result);
    this.kept = [entry, ...this.kept.filter((k) => !sameRequest(k.request, entry.request))].slice(0, KEPT_RESULTS + 2);
  }

  /** The next computation ahead, if one is waiting for an idle period, will not run. */
  cancelAhead() {
    if (this.aheadHandle !== null) this.cancelIdle(this.aheadHandle);
    this.aheadHandle = null;
  }

  /**
   * Computes `from` (the last request, just shown) for one token more, then one token less, in idle
   * periods, one computation each, and keeps the results: the next keystroke's request is likely one
   * of them. A computation starts only when the period's deadline (IdleDeadline.timeRemaining())
   * leaves it AHEAD_MARGIN times its expected time (expectedMs); otherwise it waits for another
   * period, AHEAD_TRIES at most. Requests already kept are not computed again.
   */
  scheduleAhead(from) {
    if (!this.ahead) return;
    const next = [from.tokens + 1, from.tokens - 1].filter((n) => n >= 1).map((tokens) => ({ ...from, tokens }))
      .filter((r) => aheadable(r) && !this.kept.some((k) => sameRequest(k.request, r)));
    let tries = 0;
    const step = (deadline) => {
      this.aheadHandle = null;
      if (this.last?.request !== from || !this.ahead) return; // superseded meanwhile
      const request = next[0];
      if (deadline.timeRemaining() < this.expectedMs(request) * AHEAD_MARGIN) {
        if (++tries >= AHEAD_TRIES) {
          // Given up on this one; the next (one token less, cheaper) still gets its tries. The
          // rate is forgotten: one slow sample (a loaded machine) must not stop it for good.
          this.aheadRate = null;
          next.shift();
          tries = 0;
        }
        if (next.length) this.aheadHandle = this.idle(step);
        return;
      }
      tries = 0;
      next.shift();
      const start = this.now();
      const outcome = this.runHere(request);
      this.aheadRate = { shape: shapeOf(request), msPerCost: (this.now() - start) / pageCost(request) };
      if (outcome.result) this.remember({ request, outcome, ahead: true });
      // How many results were computed ahead so far (<html data-computed-ahead>: tests wait for it).
      document.documentElement.dataset.computedAhead = String(++this.computedAhead);
      if (next.length) this.aheadHandle = this.idle(step);
    };
    if (next.length) this.aheadHandle = this.idle(step);
  }

  /**
   * Milliseconds `request` is expected to take here: its pageCost at the last computation ahead's
   * rate when that one had the same d_model and num_heads, else at AHEAD_PRIOR_MS_PER_COST. (A rate
   * is not carried to another shape: module 08's 5 tokens at d_model 8 take 0.05 ms, mostly the
   * call itself, which per unit of cost would make 64 tokens at d_model 512 a 240 ms computation.)
   */
  expectedMs(request) {
    const rate = this.aheadRate?.shape === shapeOf(request) ? this.aheadRate.msPerCost : AHEAD_PRIOR_MS_PER_COST;
    return pageCost(request) * rate;
  }

  /** numpyExperiment on this thread: {result} or {error}. */
  runHere(request) {
    try {
      return { result: this.mod.numpyExperiment(request), where: 'page' };
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e), where: 'page' };
    }
  }

  /**
   * Runs `request`, superseding every earlier call. A request equal to the last one (sameRequest)
   * is not computed again: its kept outcome now (with `reused: true`), or, while the worker is still
   * computing it, the promise of that computation (the earlier call's promise gets null).
   * A request kept from before (computing ahead: the file's header) is answered at once too, with
   * `ahead: true` when it was computed ahead, `kept: true` when it was shown before.
   * @returns {{result?: object, error?: string, where: string, workers?: number, reused?: true,
   *   ahead?: true, kept?: true} | Promise<...|null>}
   *   the outcome (workers: how many workers computed it, 2 when split by heads)
   *   now (small or repeated requests, or no worker), or a promise of it (null when superseded
   *   meanwhile)
   */
  run(request) {
    const last = this.last;
    const same = last !== null && sameRequest(last.request, request);
    const earlier = same && !last.outcome && last.id === this.latest && this.pending.get(last.id);
    if (earlier) {
      return new Promise((resolve) => {
        this.pending.set(last.id, resolve);
        earlier(null); // that caller was superseded by this one, which gets the same result
      });
    }
    const id = ++this.latest;
    if (this.queued !== null) {
      this.settle(this.queued, null); // never to be computed: superseded before it started
      this.queued = null;
    }
    if (same && last.outcome) return { ...last.outcome, reused: true };
    this.cancelAhead(); // computed ahead of the last request: the neighbours of this one come next
    this.last = { id, request: structuredClone(request), outcome: null };
    // The result kept until now may be one the page has already let go of.
    if (last?.outcome?.result) this.giveBackWhenDone(last.outcome.result);
    // Computed ahead, or shown before: answered at once (computing ahead: the file's header).
    const found = aheadable(request) ? this.kept.find((k) => sameRequest(k.request, request)) : undefined;
    if (found) {
      const flag = found.ahead ? { ahead: true } : { kept: true };
      this.remember({ ...found, ahead: false });
      this.keep(id, found.outcome);
      this.scheduleAhead(this.last.request);
      return { ...found.outcome, ...flag };
    }
    // Too large for this thread even before the workers are ready: start them (nothing happens
    // where they cannot run, e.g. file://, or where they failed) and wait for them.
    const tooLarge = !this.workerReady && pageCost(request) >= WORKER_FIRST_COST;
    if (tooLarge) this.startWorker();
    const waits = tooLarge && this.worker !== null;
    if ((!this.workerReady && !waits) || pageCost(request) <= WORKER_MIN_COST) {
      const outcome = this.keep(id, this.runHere(request));
      if (outcome.result && aheadable(request)) {
        this.remember({ request: this.last.request, outcome, ahead: false });
        this.scheduleAhead(this.last.request);
      }
      return outcome;
    }
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      if (this.inFlight === null && this.workerReady) this.send(id);
      else this.queued = id; // sent when the worker is free (onMessage), or ready (sendWaiting)
    });
  }
}
