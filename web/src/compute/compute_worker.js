// The page's compute worker (dist/compute_worker.js, a classic worker script): runs the attention
// core's numpyExperiment off the main thread, so typing never waits for a large view. Loads the
// same core as the page (importScripts, allowed by script-src 'self'). Protocol (workers.js):
//   worker → page: {ready: true} once the core has started, or {failed: message}
//   page → worker: {id, part?, request, lut?}
//                                        (a numpyExperiment request; part 0 or 1: half of a call
//                                         split by heads between two workers, split.js; lut:
//                                         the grids' colour table, sent for the grids the page
//                                         leaves to the workers (cost.js colouredByWorkers): the
//                                         result then also has `pixels`, one RGBA buffer per
//                                         head, pixels.js)
//                or {prime: request}     (computed and dropped, no answer: the seed's draws and
//                                         the kernels are then ready for the first real call)
//                or {recycle: ArrayBuffer} (transferred: the weights' buffer of a result the page
//                                         no longer reads, workers.js giveBack; a later call's
//                                         weights are written into it: spareWeights)
//   worker → page: {id, part?, result, stats, recycled}  (typed arrays transferred, not copied;
//                                         recycled: the weights were written into a spare buffer)
//                or {id, part?, error, stats}   (the core's Error message)
// stats: the worker core's memoryStats(), for the page's diagnostics.
import { warmUp } from './warm_up.js';
import { resultPixels } from '../draw/pixels.js';
import { costModel } from './cost.js';

importScripts('mha_wasm_core.js');

/**
 * Starts this worker: its state (the core, the core's cost model and the spare weight buffers) is
 * this call's, made when the worker script runs and kept by the message listener it sets.
 */
function startWorker() {
  /** @type {import('../../../cpp/bindings/wasm/mha_wasm').MhaCoreModule | null} */
  let mod = null;
  let cost = null;
  const started = createMhaCore().then(
    (m) => {
      mod = m;
      cost = costModel(m);
      postMessage({ ready: true });
      warmUp(m); // `started` resolves after this: the first request finds the kernels hot
    },
    (e) => postMessage({ failed: e instanceof Error ? e.message : String(e) }),
  );

  /**
   * Buffers the page gave back (workers.js giveBack; the newest MAX_SPARE kept). A call's weights
   * are written into one that holds them (numpyExperiment's attn_weights_into), not into new
   * memory: at 512 tokens and 12 heads a worker's half is 6 MB, and copying it into new memory
   * costs many times more than writing it into memory used before (memory touched for the first
   * time is what costs; docs/benchmarks.md).
   */
  const spare = [];
  /** One result given back while the page shows the next, and room for a stale one. */
  const MAX_SPARE = 2;
  /** A new buffer has room for this many tokens a side (rounded up): a token more still fits. */
  const ROUND_TOKENS = 32;

  /**
   * Where the weights of `request` (head_count · n² floats) go: the smallest spare buffer that holds
   * them (spares more than 4 times too large are dropped: a small view after a large one does not
   * keep the large one's memory), else a new one with room for n rounded up to ROUND_TOKENS. Only for
   * the grids' request (cost.js splittable: at most MAX_KEPT_WEIGHTS weights), the only one whose
   * weights the page gives back; undefined otherwise (the core makes an array of their size).
   * @returns {(Float32Array & {given?: boolean}) | undefined} given: true for a spare buffer
   */
  function spareWeights(request) {
    if (!cost.splittable(request)) return undefined; // (a half of it has the same keys, plus its heads)
    const {
      tokens: n,
      num_heads: h,
      first_head: first = 0,
      head_count: heads = h - first,
    } = request;
    const floats = heads * n * n;
    const bytes = 4 * floats;
    if (!(bytes > 0)) return undefined; // the core will say what is wrong
    for (let i = spare.length - 1; i >= 0; i--)
      if (spare[i].byteLength > 4 * bytes) spare.splice(i, 1);
    let best = -1;
    spare.forEach((b, i) => {
      if (b.byteLength >= bytes && (best < 0 || b.byteLength < spare[best].byteLength)) best = i;
    });
    if (best >= 0)
      return Object.assign(new Float32Array(spare.splice(best, 1)[0], 0, floats), { given: true });
    const side = Math.ceil(n / ROUND_TOKENS) * ROUND_TOKENS;
    return new Float32Array(new ArrayBuffer(4 * heads * side * side), 0, floats);
  }

  /** Keeps `buffer` for a later call's weights (the newest MAX_SPARE are kept). */
  function keepSpare(buffer) {
    spare.push(buffer);
    if (spare.length > MAX_SPARE) spare.shift();
  }

  globalThis.onmessage = async (e) => {
    if (e.data.recycle) {
      keepSpare(e.data.recycle);
      return;
    }
    await started;
    if (e.data.prime) {
      const into = mod ? spareWeights(e.data.prime) : undefined;
      try {
        if (mod)
          mod.numpyExperiment(into ? { ...e.data.prime, attn_weights_into: into } : e.data.prime);
      } catch {
        // A request the page could not have sent; the real call will say what is wrong.
      }
      if (into) {
        // The first two calls find memory used before too, as every later one does (the page
        // gives each result's buffers back once it shows the next): this call's buffer, and one
        // more, written once now, while the page is idle.
        keepSpare(into.buffer);
        if (spare.length < MAX_SPARE)
          keepSpare(new Float32Array(into.buffer.byteLength / 4).fill(0).buffer);
      }
      return;
    }
    const { id, part, request } = e.data;
    if (!mod) {
      postMessage({ id, part, error: 'the attention core did not start in the worker' });
      return;
    }
    const into = spareWeights(request);
    try {
      /** @type {import('../../../cpp/bindings/wasm/mha_wasm').ExperimentResult & {pixels?: Uint8ClampedArray[]}} */
      const result = mod.numpyExperiment(into ? { ...request, attn_weights_into: into } : request);
      // The cells coloured here, in parallel with the other worker, not on the page after both.
      if (e.data.lut) result.pixels = resultPixels(result, e.data.lut);
      const buffers = [...Object.values(result), ...(result.pixels ?? [])]
        .filter((v) => ArrayBuffer.isView(v))
        .map((v) => v.buffer);
      // recycled: the weights went into a spare buffer, memory used before (tests read it,
      // data-recycled).
      postMessage(
        { id, part, result, stats: mod.memoryStats(), recycled: into?.given === true },
        buffers,
      );
    } catch (err) {
      if (into) keepSpare(into.buffer); // not transferred: still this worker's
      postMessage({
        id,
        part,
        error: err instanceof Error ? err.message : String(err),
        stats: mod.memoryStats(),
      });
    }
  };
}

startWorker();
