// Where the page's numpyExperiment runs, and which answer is drawn: latest input wins.
//
// Small requests run at once on the page's thread: cheaper than a round trip, and the grids update
// in the same task. Large ones (pageCost above WORKER_MIN_COST, cost.js) go to a Web Worker
// (compute_worker.js) when the page is served over http(s): once it is ready (it starts after the
// first grid), or, for the very largest (WORKER_FIRST_COST: a link to 2048 tokens), at once: such
// a request starts the workers and waits for them. A page opened from file:// cannot start a
// worker in Chrome (a file: script is a different origin), nor one whose script failed, so there
// everything runs on the page's thread, where typing is already coalesced to one update per task
// (modes/random). Every call supersedes the ones before it, and a result that arrives for a
// superseded call is dropped, never drawn over a newer one. The worker computes one call at a
// time; while it is busy only the newest call waits (older waiting ones are dropped without being
// computed).
//
// Two workers when the machine has two cores or more: a request for the grids alone (cost.js
// splittable) is split between them, half the heads each, and the halves are joined here
// (split.js). Every other request goes to the first worker only.
//
// The last request and its result are kept: a new request equal to it is answered at once with
// the kept outcome (`where` the result was computed, plus `reused: true`), without computing
// again; one equal to a request the worker is still computing takes over that computation. The
// grids' requests shown before and those computed ahead (ahead.js: in idle time here, or by the
// workers while they are free) are kept too (cache.js): a request equal to one of them is
// answered at once (`ahead: true` for a result computed ahead, `kept: true` for one shown
// before), and one equal to the request the workers are computing ahead takes that over.

import { sameRequest, costModel, WORKER_FIRST_COST, WORKER_MIN_COST, MAX_KEPT_WEIGHTS, colouredByWorkers } from './cost.js';
import { ResultCache } from './cache.js';
import { AheadScheduler } from './ahead.js';
import { joinHeads, splitRequest } from './split.js';

export const WORKER_SCRIPT = 'compute_worker.js';

export class Compute {
  /**
   * @param {object} mod the page's core (for the main thread; its experimentWork sizes requests)
   * @param {object} [options]
   * @param {Uint32Array} [options.lut] the grids' colour table (color.js rampWords): a worker
   *   given it also returns the cells' pixels (result.pixels, one buffer per head, pooled as the
   *   grid draws them beyond 1024 tokens: pixels.js resultPixels); it is sent with the requests
   *   whose grids the workers colour (colouredByWorkers)
   * @param {Function} [options.idle] requestIdleCallback, [options.cancelIdle], [options.now]
   *   performance.now: computing ahead's clock, [options.delay] setTimeout and
   *   [options.cancelDelay] clearTimeout: its wait before the workers compute ahead (ahead.js;
   *   tests pass their own)
   */
  constructor(mod, {
    lut = null, idle = null, cancelIdle = null, now = () => performance.now(), delay = undefined, cancelDelay = undefined,
  } = {}) {
    this.mod = mod;
    this.lut = lut;
    this.cost = costModel(mod);
    /** The grids' results shown before and computed ahead. */
    this.cache = new ResultCache();
    /** Computing ahead: on unless the page turns it off (an embedded page has no text to type). */
    this.lookahead = new AheadScheduler({
      cost: this.cost,
      cache: this.cache,
      compute: (request) => this.runHere(request),
      computeAway: (request) => this.computeAway(request),
      current: (request) => this.last?.request === request,
      idle,
      cancelIdle,
      now,
      delay,
      cancelDelay,
    });
    this.worker = null;
    this.workerReady = false;
    this.helper = null; // the second worker: half the heads of a splittable request
    this.helperReady = false;
    this.parts = new Map(); // id → the halves received so far, for a call sent split
    this.latest = 0; // id of the newest call
    this.pending = new Map(); // id → resolve, for calls sent to the worker
    this.inFlight = null; // id of the call the worker is computing
    this.queued = null; // id of the newest call waiting for it (older waiting calls are dropped)
    this.stats = null; // the worker core's last memoryStats()
    // The computation ahead the workers are doing (computeAway): {id (negative: never a call's),
    // request, resolve}, or null. While it runs it is inFlight too, so calls wait for it.
    this.aheadCall = null;
    this.aheadIds = 0;
    this.workersStarted = false; // startWorker ran (workers are started once per page)
    // The last call: {id, request (a copy), outcome ({result (frozen), where}; null until it is
    // known)}. Only the newest call is ever sent to the worker or redone here, and it is this one.
    this.last = null;
    // Worker results whose weights' buffers go back to their workers once nothing here reads
    // them (giveBackWhenDone): result → [[worker, ArrayBuffer], ...]. `released`: those the page
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
    if (this.helper && !this.helperReady && this.cost.splittable(this.last.request)) return false;
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
      this.aheadOnceReady();
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
    this.aheadCall?.resolve(null);
    this.aheadCall = null;
    this.inFlight = null;
    this.queued = null;
  }

  /**
   * A worker that just started computes the last request once, for nothing (its share of it
   * when split): the first real call then finds the seed's Gaussian draws kept and the kernels
   * hot instead of drawing a million numbers (70 ms in a Chromium worker at d_model 512).
   */
  prime(worker, part) {
    const request = this.last?.request;
    if (!request || this.cost.pageCost(request) <= WORKER_MIN_COST) return;
    if (!this.cost.splittable(request)) {
      if (part === 0) worker.postMessage({ prime: request });
      return;
    }
    worker.postMessage({ prime: splitRequest(request)[part] });
  }

  onMessage(data) {
    if (data.ready) {
      this.workerReady = true;
      document.documentElement.dataset.computeWorker = 'ready';
      // A call that waited for the workers goes now (or when the second one is ready too);
      // otherwise the worker computes the last request for nothing (prime).
      if (this.queued === null) this.prime(this.worker, 0);
      else this.sendWaiting();
      this.aheadOnceReady();
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
    } else if (data.result && (data.id !== this.latest || this.cost.splittable(this.last.request))) {
      // Whole: the grids' request sent to one worker (the second one not ready), a stale call, or a
      // computation ahead (finishAhead).
      this.returns.set(data.result, [[this.worker, data.result.attn_weights?.buffer]]);
    }
    if (this.aheadCall?.id === data.id) {
      this.finishAhead(data);
      return;
    }
    const resolve = this.pending.get(data.id);
    if (data.id === this.inFlight) this.inFlight = null;
    if (resolve) {
      this.settle(data.id); // forgotten here, resolved just below
      if (data.stats) this.stats = data.stats;
      // Stale: a newer call was made since; its own result will be drawn.
      if (data.id !== this.latest) resolve(null);
      else {
        const outcome = this.keep(data.id, data.error !== undefined
          ? { error: data.error, where: 'worker' }
          : { result: data.result, where: 'worker', workers: data.workers ?? 1, recycled: Number(data.recycled ?? 0) });
        if (outcome.result && this.cost.aheadable(this.last.request)) {
          this.rememberKept({ request: this.last.request, outcome, ahead: false });
          this.lookahead.schedule(this.last.request);
        }
        resolve(outcome);
      }
    }
    // A result nobody was given (stale, or its call forgotten): its buffers go back at once.
    if (data.result && !(resolve && data.id === this.latest)) this.release(data.result);
    this.sendQueued();
  }

  /** The newest waiting call goes next (the worker computes one call at a time). */
  sendQueued() {
    if (this.inFlight === null && this.queued !== null) {
      const next = this.queued;
      this.queued = null;
      if (next === this.latest) this.send(next);
      else this.settle(next, null);
    }
  }

  /**
   * The workers are both ready (or the only one is): the result shown, if the workers would have
   * computed it ahead had they been ready (a linked view's first grid is computed on this thread
   * before they start), gets its neighbours computed ahead now. Nothing while a call is in flight
   * or waiting: its own result schedules them.
   */
  aheadOnceReady() {
    const last = this.last;
    if (!this.workerReady || (this.helper && !this.helperReady) || this.inFlight !== null || this.queued !== null ||
      !last?.outcome?.result || !this.cost.aheadable(last.request) || this.cost.aheadHere(last.request)) return;
    this.lookahead.cancel();
    this.lookahead.schedule(last.request);
  }

  /**
   * Has the workers compute `request` ahead (ahead.js scheduleAway), split between them like the
   * grids' calls, when both are ready and free (no call in flight or waiting); its result is kept
   * (cache.js) when it arrives (finishAhead).
   * @returns {Promise<object|null>} its outcome, or null when the workers could not take it (busy,
   *   not ready, gone) or it failed
   */
  computeAway(request) {
    const free = this.workerReady && (!this.helper || this.helperReady) && this.inFlight === null && this.queued === null;
    if (!free || !this.cost.aheadable(request)) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.aheadCall = { id: --this.aheadIds, request: structuredClone(request), resolve };
      this.send(this.aheadCall.id);
    });
  }

  /**
   * The workers' answer to the computation ahead: its result kept (cache.js), computed ahead
   * unless the last call asked for the same request meanwhile, which is answered with it now
   * (route). Then the call that waited for it, if any, goes.
   */
  finishAhead(data) {
    const { request, resolve, taker } = this.aheadCall;
    this.aheadCall = null;
    this.inFlight = null;
    if (data.stats) this.stats = data.stats;
    const last = this.last;
    const taken = taker !== undefined && last !== null && !last.outcome && last.id === taker &&
      taker === this.latest && this.pending.has(taker);
    let outcome = null;
    if (!data.result && taken) this.queued = taker; // it failed: the call that took it over is sent itself
    if (data.result) {
      outcome = { result: data.result, where: 'worker', workers: data.workers ?? 1, recycled: Number(data.recycled ?? 0) };
      if (!taken) this.released.add(data.result); // nothing on the page reads it until it is shown
      this.rememberKept({ request, outcome, ahead: !taken });
      if (taken) {
        this.settle(last.id, { ...this.keep(last.id, outcome), ahead: true });
        this.lookahead.schedule(last.request);
      }
    }
    resolve(outcome);
    this.sendQueued();
  }

  /** Keeps `entry` in the cache; the results of the entries that went may go back to their workers. */
  rememberKept(entry) {
    for (const gone of this.cache.remember(entry)) this.giveBackWhenDone(gone.outcome.result);
  }

  /**
   * The page no longer reads `result` (a result it was given and has replaced on screen: main.js).
   * Once it is neither the last call's result nor kept in the cache, its weights' buffers go back to the workers that made
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

  /** Gives `result`'s buffers back once it is released, not the last call's result and not kept in the cache. */
  giveBackWhenDone(result) {
    if (!this.returns.has(result) || !this.released.has(result) || this.last?.outcome?.result === result ||
      this.cache.holds(result)) return;
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

  /** Sends call `id` (the newest call, or the computation ahead) to the workers. */
  send(id) {
    this.inFlight = id;
    // Only the newest call is ever sent, or the computation ahead.
    const request = this.aheadCall?.id === id ? this.aheadCall.request : this.last.request;
    const lut = colouredByWorkers(request) ? this.lut ?? undefined : undefined;
    if (this.helperReady && this.cost.splittable(request)) {
      const [first, second] = splitRequest(request);
      this.parts.set(id, []);
      this.worker.postMessage({ id, part: 0, lut, request: first });
      this.helper.postMessage({ id, part: 1, lut, request: second });
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
    this.lookahead.setOn(on);
  }

  /** The kept results, newest first (cache.js). */
  get kept() {
    return this.cache.kept;
  }

  /** Milliseconds `request` is expected to take on this thread (ahead.js). */
  expectedMs(request) {
    return this.lookahead.expectedMs(request);
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
   * Runs `request`, superseding every earlier call.
   * @returns {Promise<{result?: object, error?: string, where: string, workers?: number,
   *   reused?: true, ahead?: true, kept?: true} | null>} its outcome (`workers`: how many workers
   *   computed it, 2 when split by heads), or null when a newer call superseded it meanwhile
   */
  run(request) {
    return Promise.resolve(this.route(request));
  }

  /**
   * Where `request` is answered (run's first step): a request equal to the last one (sameRequest)
   * is not computed again: its kept outcome now (with `reused: true`), or, while the worker is
   * still computing it, the promise of that computation (the earlier call's promise gets null).
   * A request kept from before (cache.js) is answered at once too, with `ahead: true` when it was
   * computed ahead, `kept: true` when it was shown before. Small requests (and every request
   * where no worker runs) are computed now, on this thread; the others by the workers.
   * @returns the outcome now, or the promise of the workers' outcome (null when superseded)
   */
  route(request) {
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
    // A call that took the computation ahead over is superseded by this one.
    if (this.aheadCall?.taker !== undefined) {
      this.settle(this.aheadCall.taker, null);
      delete this.aheadCall.taker;
    }
    if (this.queued !== null) {
      this.settle(this.queued, null); // never to be computed: superseded before it started
      this.queued = null;
    }
    if (same && last.outcome) return { ...last.outcome, reused: true };
    this.lookahead.cancel(); // computed ahead of the last request: the neighbours of this one come next
    this.last = { id, request: structuredClone(request), outcome: null };
    // The result kept until now may be one the page has already let go of.
    if (last?.outcome?.result) this.giveBackWhenDone(last.outcome.result);
    // Computed ahead, or shown before: answered at once (cache.js, ahead.js).
    const found = this.cost.aheadable(request) ? this.cache.find(request) : undefined;
    if (found) {
      const flag = found.ahead ? { ahead: true } : { kept: true };
      this.released.delete(found.outcome.result); // the page reads it again
      this.rememberKept({ ...found, ahead: false });
      this.keep(id, found.outcome);
      this.lookahead.schedule(this.last.request);
      return { ...found.outcome, ...flag };
    }
    // Being computed ahead by the workers: that computation's result (finishAhead).
    if (this.aheadCall && sameRequest(this.aheadCall.request, request)) {
      this.aheadCall.taker = id;
      return new Promise((resolve) => this.pending.set(id, resolve));
    }
    // Too large for this thread even before the workers are ready: start them (nothing happens
    // where they cannot run, e.g. file://, or where they failed) and wait for them.
    const tooLarge = !this.workerReady && this.cost.pageCost(request) >= WORKER_FIRST_COST;
    if (tooLarge) this.startWorker();
    const waits = tooLarge && this.worker !== null;
    if ((!this.workerReady && !waits) || this.cost.pageCost(request) <= WORKER_MIN_COST) {
      const outcome = this.keep(id, this.runHere(request));
      if (outcome.result && this.cost.aheadable(request)) {
        this.rememberKept({ request: this.last.request, outcome, ahead: false });
        this.lookahead.schedule(this.last.request);
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
