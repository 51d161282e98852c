// Where the page's numpyExperiment runs, and which answer is drawn: latest input wins.
//
// Small requests run at once on the page's thread: cheaper than a round trip, and the grids update
// in the same task. Large ones (pageCost above WORKER_MIN_COST, cost.js) go to the workers
// (workers.js) once they are ready (they start after the first grid), or, for the very largest
// (WORKER_FIRST_COST: a link to 2048 tokens), at once: such a request starts the workers and waits
// for them. Where no worker runs (file://, a worker that failed) everything runs here, where typing
// is already coalesced to one update per task (modes/random). Every call supersedes the ones
// before it: a result that arrives for a superseded call is never drawn over a newer one. The
// workers compute one call at a time; while they are busy only the newest call waits.

import { sameRequest, costModel, WORKER_FIRST_COST, WORKER_MIN_COST } from './cost.js';
import { ResultCache } from './cache.js';
import { AheadScheduler } from './ahead.js';
import { WorkerPair, browserWorker } from './workers.js';

export class Compute {
  /**
   * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaCoreModule} mod the page's core (for
   *   the main thread; its experimentWork sizes requests)
   * @param {object} [options] lut: the grids' colour table and createWorker (workers.js
   *   WorkerPair); the others (idle, cancelIdle, now, delay, cancelDelay): computing ahead's clock
   *   (ahead.js); tests pass their own
   */
  constructor(mod, { lut = null, createWorker = browserWorker, ...clock } = {}) {
    this.mod = mod;
    this.cost = costModel(mod);
    /** The grids' results shown before and computed ahead; a worker's that goes may give its buffers back. */
    this.cache = new ResultCache((result) => this.pair.giveBackWhenDone(result));
    this.lookahead = new AheadScheduler({
      cost: this.cost,
      cache: this.cache,
      clock,
      current: (request) => this.last?.request === request,
      compute: (request) => this.runHere(request),
      computeAway: (request) => this.computeAway(request),
    });
    this.pair = new WorkerPair({
      cost: this.cost,
      lut,
      createWorker,
      page: {
        ready: (part) => this.onReady(part),
        answer: (answer) => this.onAnswer(answer),
        secondGone: () => this.sendWaiting(),
        stopped: () => this.onStopped(),
        inUse: (result) => this.last?.outcome?.result === result || this.cache.holds(result),
      },
    });
    this.latest = 0; // id of the newest call
    this.pending = new Map(); // id → resolve, for calls sent to the workers
    this.inFlight = null; // id of the call the workers are computing
    this.queued = null; // id of the newest call waiting for them (older waiting calls are dropped)
    // The computation ahead the workers are doing (computeAway): {id (negative: never a call's),
    // request, resolve, taker?}, or null. While it runs it is inFlight too, so calls wait for it.
    this.aheadCall = null;
    this.aheadIds = 0;
    // The last call: {id, request (a copy), outcome ({result (frozen), where}; null until it is
    // known)}. Only the newest call is ever sent to the workers or redone here, and it is this one.
    this.last = null;
  }

  /** Starts the workers, once per page, where they can run (workers.js start). */
  startWorker() {
    this.pair.start();
  }

  /** Whether the first worker is ready. */
  get workerReady() {
    return this.pair.ready[0];
  }

  /** The workers' core's last memoryStats(). */
  get stats() {
    return this.pair.stats;
  }

  /**
   * Worker `part` is ready: the call that waited for the workers goes, else it computes the last
   * request for nothing (prime). A view the page computed before the workers were ready (a linked
   * view's first grid) gets its neighbours computed ahead now; a call in flight or waiting will
   * schedule its own.
   */
  onReady(part) {
    if (this.queued === null) this.pair.prime(this.last?.request, part);
    else this.sendWaiting();
    const idle = this.inFlight === null && this.queued === null;
    if (this.pair.allReady && idle && this.last?.outcome?.result) {
      this.lookahead.workersReady(this.last.request);
    }
  }

  /** Sends the call that waited for the workers to start (route) once they are ready for it (readyFor). */
  sendWaiting() {
    if (this.queued === null || this.inFlight !== null || !this.pair.readyFor(this.last.request))
      return;
    const id = this.queued;
    this.queued = null;
    this.send(id);
  }

  /** The workers stopped: the newest call in flight is answered on this thread instead. */
  onStopped() {
    for (const [id, resolve] of this.pending)
      resolve(id === this.latest ? this.keep(id, this.runHere(this.last.request)) : null);
    this.pending.clear();
    this.aheadCall?.resolve(null);
    this.aheadCall = null;
    this.inFlight = null;
    this.queued = null;
  }

  /** The workers' outcome of call `id` (or of the computation ahead): drawn if it is the newest call's. */
  onAnswer({ id, outcome }) {
    // A full forward (not the grids' request) is read by the panels for as long as it is shown.
    if (outcome.workers === 1 && id === this.latest && !this.cost.splittable(this.last.request)) {
      this.pair.neverGiveBack(outcome.result);
    }
    if (this.aheadCall?.id === id) {
      this.finishAhead(outcome);
      return;
    }
    const resolve = this.pending.get(id);
    if (id === this.inFlight) this.inFlight = null;
    if (resolve) {
      this.settle(id); // forgotten here, resolved just below
      // Stale: a newer call was made since; its own result will be drawn.
      if (id !== this.latest) resolve(null);
      else {
        if (this.keep(id, outcome).result) this.lookahead.shown(this.last.request, outcome);
        resolve(outcome);
      }
    }
    // A result nobody was given (stale, or its call forgotten): its buffers go back at once.
    if (outcome.result && !(resolve && id === this.latest)) this.pair.release(outcome.result);
    this.sendQueued();
  }

  /** The newest waiting call goes next (the workers compute one call at a time). */
  sendQueued() {
    if (this.inFlight !== null || this.queued === null) return;
    const next = this.queued;
    this.queued = null;
    if (next === this.latest) this.send(next);
    else this.settle(next, null);
  }

  /**
   * Has the workers compute `request` ahead (ahead.js scheduleAway) when they are ready and free.
   * @returns {Promise<object|null>} its outcome (finishAhead), or null when the workers could not
   *   take it (busy, not ready, gone) or it failed
   */
  computeAway(request) {
    const free = this.pair.allReady && this.inFlight === null && this.queued === null;
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
  finishAhead(outcome) {
    const { request, resolve, taker } = this.aheadCall;
    this.aheadCall = null;
    this.inFlight = null;
    const last = this.last;
    // The call that took it over, still the newest and still waiting.
    const waiting = last !== null && !last.outcome && this.pending.has(taker);
    const taken = waiting && taker !== undefined && last.id === taker && taker === this.latest;
    if (!outcome.result && taken) this.queued = taker; // it failed: the call that took it over is sent itself
    if (outcome.result && taken) {
      this.settle(last.id, { ...this.keep(last.id, outcome), ahead: true });
      this.lookahead.shown(last.request, outcome);
    } else if (outcome.result) {
      this.cache.remember({ request, outcome, ahead: true });
      this.pair.release(outcome.result); // nothing on the page reads it until it is shown
    }
    resolve(outcome.result ? outcome : null);
    this.sendQueued();
  }

  /** The page no longer reads `result` (replaced on screen): its buffers may go back (workers.js release). */
  release(result) {
    this.pair.release(result);
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
    this.pair.send(id, this.aheadCall?.id === id ? this.aheadCall.request : this.last.request);
  }

  /** Keeps the outcome of call `id` when it is the last call (errors are not kept). */
  keep(id, outcome) {
    if (this.last?.id === id && outcome.result) {
      Object.freeze(outcome.result);
      this.last.outcome = outcome;
    }
    return outcome;
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
   * is not computed again: its kept outcome now (with `reused: true`), or, while the workers are
   * still computing it, the promise of that computation (the earlier call's promise gets null).
   * A request kept from before (cache.js) is answered at once too, with `ahead: true` when it was
   * computed ahead, `kept: true` when it was shown before; one the workers are computing ahead
   * takes that computation over. Small requests (and every request where no worker runs) are
   * computed now, on this thread; the others by the workers.
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
    if (last?.outcome?.result) this.pair.giveBackWhenDone(last.outcome.result);
    // Computed ahead, or shown before: answered at once (cache.js, ahead.js).
    const found = this.cost.aheadable(request) ? this.cache.find(request) : undefined;
    if (found) {
      const flag = found.ahead ? { ahead: true } : { kept: true };
      this.pair.reading(found.outcome.result);
      this.keep(id, found.outcome);
      this.lookahead.shown(this.last.request, found.outcome);
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
    const waits = tooLarge && this.pair.workers[0] !== null;
    if ((!this.workerReady && !waits) || this.cost.pageCost(request) <= WORKER_MIN_COST) {
      const outcome = this.keep(id, this.runHere(request));
      if (outcome.result) this.lookahead.shown(this.last.request, outcome);
      return outcome;
    }
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      if (this.inFlight === null && this.workerReady) this.send(id);
      else this.queued = id; // sent when the workers are free (onAnswer), or ready (sendWaiting)
    });
  }
}
