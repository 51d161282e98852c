// The two compute workers (compute_worker.js) as one pair: starting them, knowing when each is
// ready, stopping them, priming them, splitting a call between them by heads and joining the
// halves (split.js), and giving the weights' buffers of results the page no longer reads back to
// the worker that made them. Which call is sent, and what its answer is for, is compute.js's.
//
// Workers start where the page may start them: served over http(s) (a page opened from file://
// cannot start a worker in Chrome: a file: script is a different origin) and where Worker exists
// and is not refused. A second one starts when the machine has two cores or more: a call for the
// grids alone (cost.js splittable) then goes half the heads to each, and the halves are joined
// here; every other call goes to the first worker only.
import { colouredByWorkers, MAX_KEPT_WEIGHTS, WORKER_MIN_COST } from './cost.js';
import { joinHeads, splitRequest } from './split.js';

export const WORKER_SCRIPT = 'compute_worker.js';

/** A Web Worker running `url`, or null where this page cannot start one (file://, no Worker). */
export function browserWorker(url) {
  if (typeof Worker !== 'function' || !/^https?:$/.test(globalThis.location?.protocol)) return null;
  return new Worker(url);
}

/** `data-compute-worker` on <html>: "starting", "ready" or "off" (tests wait for it). */
const say = (state) => {
  document.documentElement.dataset.computeWorker = state;
};

/** A call's answer as the page takes it: {id, stats, outcome: {error, where} or {result, where, workers, recycled}}. */
const answer = (id, stats, error, computed) => ({
  id,
  stats,
  outcome: error !== undefined ? { error, where: 'worker' } : { ...computed, where: 'worker' },
});

export class WorkerPair {
  /**
   * @param {object} p
   * @param {object} p.cost the cost model (cost.js costModel): splittable, pageCost
   * @param {Uint32Array|null} [p.lut] the grids' colour table (color.js rampWords): a worker
   *   given it also returns the cells' pixels (result.pixels, one buffer per head, pooled as the
   *   grid draws them beyond 1024 tokens: pixels.js resultPixels); sent with the calls whose grids
   *   the workers colour (colouredByWorkers)
   * @param {(url: string) => object|null} [p.createWorker] starts a worker (browserWorker; tests
   *   pass their own): null, or a throw, where none can start
   * @param {object} p.page what the pair tells the page, and asks it:
   *   ready(part): worker `part` (0 the first, 1 the second) has started its core;
   *   answer({id, stats, outcome}): a call's whole answer (outcome: {result, where: 'worker',
   *     workers: how many computed it, recycled: how many of their weight arrays went into memory
   *     used before} or {error, where: 'worker'});
   *   secondGone(): the second worker stopped (a call that waited for it may go to the first);
   *   stopped(): both workers stopped (the calls sent get no answer);
   *   inUse(result): whether the page still holds `result` (shown, or kept to be shown again)
   */
  constructor({ cost, lut = null, createWorker = browserWorker, page }) {
    this.cost = cost;
    this.lut = lut;
    this.createWorker = createWorker;
    this.page = page;
    this.workers = [null, null];
    this.ready = [false, false];
    this.started = false; // start ran (the workers start once per page)
    this.parts = new Map(); // id → {request, halves}: a call sent split, and its halves received so far
    // Results whose weights' buffers go back to their workers once the page is done with them:
    // result → [[worker, ArrayBuffer], ...]. `released`: those the page said it no longer reads.
    this.returns = new WeakMap();
    this.released = new WeakSet();
    this.stats = null; // the workers' core's last memoryStats() (of the larger core, for a split call)
  }

  /**
   * Starts the workers, once: workers that failed stay off (a large request would otherwise start
   * them again, and wait for them to fail, every time). Quietly starts nothing where none can
   * start. <html data-compute-worker> says which: "starting" until the first worker's core has
   * started, then "ready"; "off" when they stopped or never started.
   */
  start(url = WORKER_SCRIPT) {
    if (this.started) return;
    this.started = true;
    say('off');
    if (!this.open(0, url)) return;
    say('starting');
    if ((globalThis.navigator?.hardwareConcurrency ?? 1) >= 2) this.open(1, url);
  }

  /** Starts worker `part`; false where it cannot start (refused, e.g. by a policy). */
  open(part, url) {
    let worker;
    try {
      worker = this.createWorker(url);
    } catch {
      return false;
    }
    if (!worker) return false;
    this.workers[part] = worker;
    // Only while it is this pair's worker: one stopped says nothing more.
    worker.addEventListener(
      'message',
      (e) => this.workers[part] === worker && this.onMessage(part, e.data),
    );
    worker.addEventListener('error', (e) => {
      e.preventDefault(); // no console error: the page falls back and keeps working
      if (this.workers[part] === worker) this.stopWorker(part);
    });
    return true;
  }

  /** Whether both workers are ready, or the only one is. */
  get allReady() {
    return this.ready[0] && (!this.workers[1] || this.ready[1]);
  }

  /** Whether `request` can be sent: the first worker ready, and the second too when `request` would be split. */
  readyFor(request) {
    return this.allReady || (this.ready[0] && !this.cost.splittable(request));
  }

  /** Stops worker `part`: the first one stops both (the page computes everything from now on). */
  stopWorker(part) {
    if (part === 0) this.stop();
    else this.stopSecond();
  }

  /** Stops both workers; the calls sent to them get no answer (page.stopped). */
  stop() {
    say('off');
    for (const worker of this.workers) worker?.terminate();
    this.workers = [null, null];
    this.ready = [false, false];
    this.parts.clear();
    this.page.stopped();
  }

  /**
   * Stops the second worker: every call goes to the first from now on, and a call in flight split
   * in two is sent to it whole (its own half's answer, if it comes, goes back to it: joined).
   */
  stopSecond() {
    this.workers[1]?.terminate();
    this.workers[1] = null;
    this.ready[1] = false;
    for (const [id, { request }] of this.parts) {
      this.parts.delete(id);
      this.send(id, request);
    }
    this.page.secondGone();
  }

  /**
   * Sends call `id`: half the heads to each worker when the second is ready and `request` is
   * splittable, else whole to the first. Its answer comes whole (page.answer).
   */
  send(id, request) {
    const lut = colouredByWorkers(request) ? (this.lut ?? undefined) : undefined;
    if (this.ready[1] && this.cost.splittable(request)) {
      this.parts.set(id, { request, halves: [] });
      splitRequest(request).forEach((half, part) =>
        this.workers[part].postMessage({ id, part, lut, request: half }),
      );
      return;
    }
    this.workers[0].postMessage({ id, lut, request });
  }

  /**
   * Worker `part`, just started, computes `request` (the last one asked) once, for nothing (its
   * share of it when split): the first real call then finds the seed's Gaussian draws kept and
   * the kernels hot instead of drawing a million numbers. Nothing for a request the page computes
   * itself (pageCost up to WORKER_MIN_COST).
   */
  prime(request, part) {
    if (!request || this.cost.pageCost(request) <= WORKER_MIN_COST) return;
    if (!this.cost.splittable(request)) {
      if (part === 0) this.workers[0].postMessage({ prime: request });
      return;
    }
    this.workers[part].postMessage({ prime: splitRequest(request)[part] });
  }

  /** A message of worker `part` (compute_worker.js's protocol). */
  onMessage(part, data) {
    if (data.ready) {
      this.ready[part] = true;
      if (part === 0) say('ready');
      this.page.ready(part);
      return;
    }
    if (data.failed !== undefined) {
      this.stopWorker(part);
      return;
    }
    const whole = data.part === undefined ? this.whole(data) : this.joined(data);
    if (!whole) return;
    if (whole.stats) this.stats = whole.stats;
    this.page.answer(whole);
  }

  /** A call's answer from the first worker alone. */
  whole({ id, result, error, stats, recycled }) {
    if (result) this.returns.set(result, [[this.workers[0], result.attn_weights?.buffer]]);
    return answer(id, stats, error, { result, workers: 1, recycled: Number(recycled ?? 0) });
  }

  /**
   * Half of a split call: null until both halves are in, then the call's answer: the halves
   * joined (joinHeads), or the error of either (the other half's buffer goes back at once).
   */
  joined(data) {
    const call = this.parts.get(data.id);
    if (!call) {
      // the call was resent whole, or forgotten
      this.giveBack(this.workers[data.part], data.result?.attn_weights?.buffer);
      return null;
    }
    call.halves[data.part] = data;
    const [a, b] = call.halves;
    if (!a || !b) return null;
    this.parts.delete(data.id);
    const { stats } =
      (a.stats?.wasm_memory_bytes ?? 0) >= (b.stats?.wasm_memory_bytes ?? 0) ? a : b;
    const buffers = [a, b].map((half, part) => [
      this.workers[part],
      half.result?.attn_weights?.buffer,
    ]);
    const error = a.error ?? b.error;
    if (error !== undefined) {
      for (const [worker, buffer] of buffers) this.giveBack(worker, buffer);
      return answer(data.id, stats, error);
    }
    const result = joinHeads(a.result, b.result);
    this.returns.set(result, buffers);
    return answer(data.id, stats, undefined, {
      result,
      workers: 2,
      recycled: Number(a.recycled === true) + Number(b.recycled === true),
    });
  }

  /**
   * The page no longer reads `result` (it was replaced on screen, or nobody was given it). Once
   * the page does not hold it either (page.inUse), its weights' buffers go back to the workers
   * that made them (compute_worker.js spareWeights). Transferred, those buffers are detached
   * here: every array on them reads as empty, never as another view's numbers.
   */
  release(result) {
    if (!this.returns.has(result)) return;
    this.released.add(result);
    this.giveBackWhenDone(result);
  }

  /** The page reads `result` again (shown again from the kept results): it waits for another release. */
  reading(result) {
    this.released.delete(result);
  }

  /** `result`'s buffers never go back: the page reads it for as long as it shows it (a full forward's). */
  neverGiveBack(result) {
    this.returns.delete(result);
  }

  /** Gives `result`'s buffers back once it is released and no longer in use (page.inUse). */
  giveBackWhenDone(result) {
    if (!this.returns.has(result) || !this.released.has(result) || this.page.inUse(result)) return;
    for (const [worker, buffer] of this.returns.get(result)) this.giveBack(worker, buffer);
    this.returns.delete(result);
    this.released.delete(result);
  }

  /**
   * Transfers `buffer` to `worker` when that worker still runs and the buffer is at most
   * MAX_KEPT_WEIGHTS floats (a worker keeps two: compute_worker.js MAX_SPARE).
   */
  giveBack(worker, buffer) {
    if (!worker || !this.workers.includes(worker)) return;
    if (
      !(buffer instanceof ArrayBuffer) ||
      buffer.byteLength === 0 ||
      buffer.byteLength > 4 * MAX_KEPT_WEIGHTS
    )
      return;
    worker.postMessage({ recycle: buffer }, [buffer]);
  }
}
