// Where the page's numpyExperiment runs (issue 6: typing never blocks on compute).
//
// Small requests run at once on the main thread: cheaper than a round trip, and the grids update
// in the same task. Large ones (more than WORKER_MIN_WORK multiply-adds) go to a Web Worker
// (compute_worker.js) when the page is served over http(s); a page opened from file:// cannot
// start a worker in Chrome (a file: script is a different origin), nor one whose script failed,
// so there everything runs on the main thread, where typing is already coalesced to one update
// per frame (main.js). Latest input wins: every call supersedes the ones before it, and a result
// that arrives for a superseded call is dropped, never drawn over a newer one. The worker computes
// one call at a time; while it is busy only the newest call waits (older waiting ones are dropped
// without being computed).

export const WORKER_SCRIPT = 'compute_worker.js';
/** Multiply-adds above which a request goes to the worker (module 08's examples stay inline). */
export const WORKER_MIN_WORK = 2e6;

/** Multiply-adds of one numpyExperiment: four (n, d) x (d, d) products, then h heads of QKᵀ and AV. */
export function experimentWork({ tokens: n, d_model: d }) {
  return n * d * (4 * d + 2 * n);
}

export class Compute {
  /** @param {object} mod the page's core (for the main thread) */
  constructor(mod) {
    this.mod = mod;
    this.worker = null;
    this.workerReady = false;
    this.latest = 0; // id of the newest call
    this.pending = new Map(); // id -> resolve, for calls sent to the worker
    this.requests = new Map(); // id -> request, until answered (to redo it here if the worker dies)
    this.inFlight = null; // id of the call the worker is computing
    this.queued = null; // id of the newest call waiting for it (older waiting calls are dropped)
    this.stats = null; // the worker core's last memoryStats()
  }

  /**
   * Starts the worker when the page is served over http(s); quietly stays on the main thread
   * otherwise (file://, a worker that cannot load or start). <html data-compute-worker> says
   * which: "ready" once the worker's core has started, "off" when it stopped or never started.
   */
  startWorker(url = WORKER_SCRIPT) {
    if (this.worker) return;
    document.documentElement.dataset.computeWorker = 'off';
    if (typeof Worker !== 'function' || !/^https?:$/.test(location.protocol)) return;
    let worker;
    try {
      worker = new Worker(url);
    } catch {
      return; // refused (e.g. by a policy): the main thread computes
    }
    this.worker = worker;
    worker.addEventListener('message', (e) => this.onMessage(e.data));
    worker.addEventListener('error', (e) => {
      e.preventDefault(); // no console error: the page falls back and keeps working
      this.stopWorker();
    });
  }

  stopWorker() {
    document.documentElement.dataset.computeWorker = 'off';
    this.worker?.terminate();
    this.worker = null;
    this.workerReady = false;
    // Calls in flight are answered on the main thread instead (only the newest still matters).
    for (const [id, resolve] of this.pending) resolve(id === this.latest ? this.runHere(this.requests.get(id)) : null);
    this.pending.clear();
    this.requests.clear();
    this.inFlight = null;
    this.queued = null;
  }

  onMessage(data) {
    if (data.ready) {
      this.workerReady = true;
      document.documentElement.dataset.computeWorker = 'ready';
      return;
    }
    if (data.failed !== undefined) {
      this.stopWorker();
      return;
    }
    const resolve = this.pending.get(data.id);
    if (data.id === this.inFlight) this.inFlight = null;
    if (resolve) {
      this.settle(data.id); // forgotten here, resolved just below
      if (data.stats) this.stats = data.stats;
      // Stale: a newer call was made since; its own result will be drawn.
      if (data.id !== this.latest) resolve(null);
      else resolve(data.error !== undefined ? { error: data.error, where: 'worker' } : { result: data.result, where: 'worker' });
    }
    // The newest waiting call goes next (the worker computes one call at a time).
    if (this.inFlight === null && this.queued !== null) {
      const next = this.queued;
      this.queued = null;
      if (next === this.latest) this.send(next);
      else this.settle(next, null);
    }
  }

  /** Forgets call `id`; resolves its promise with `outcome` when one is given. */
  settle(id, outcome) {
    const resolve = this.pending.get(id);
    this.pending.delete(id);
    this.requests.delete(id);
    if (resolve && outcome !== undefined) resolve(outcome);
  }

  send(id) {
    this.inFlight = id;
    this.worker.postMessage({ id, request: this.requests.get(id) });
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
   * @returns {{result?: object, error?: string, where: string} | Promise<...|null>} the outcome
   *   now (small requests, or no worker), or a promise of it (null when superseded meanwhile)
   */
  run(request) {
    const id = ++this.latest;
    if (this.queued !== null) {
      this.settle(this.queued, null); // never to be computed: superseded before it started
      this.queued = null;
    }
    if (!this.workerReady || experimentWork(request) <= WORKER_MIN_WORK) return this.runHere(request);
    this.requests.set(id, request);
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      if (this.inFlight === null) this.send(id);
      else this.queued = id;
    });
  }
}
