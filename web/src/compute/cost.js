// What a numpyExperiment request costs the page, and which path it takes: computed here or by the
// workers, split between them by heads, coloured by them, computed ahead. The arithmetic of the
// experiment itself (its multiply-adds, the work up to which "auto" stays in float64) is the
// core's (experimentWork, experimentFloat64MaxWork: cpp/numpy/mha/experiment.hpp); the rest is
// this page's policy, fitted to measurements on the benchmark machines (docs/benchmarks.md).
import { poolFactor } from '../draw/pixels.js';

/**
 * pageCost above which a request goes to the workers; up to it the page computes at once, in the
 * task of the input. 64 tokens at d_model 512 and 8 heads (8.1·10⁷) cost the page's thread less
 * than the round trip to the workers and back on two cores; 128 tokens at d_model 512 (1.9·10⁸)
 * and anything larger go to the workers.
 */
export const WORKER_MIN_COST = 1e8;
/** Multiply-adds one weight costs (pageCost): its exponential, its copies, its pixel. */
export const WEIGHT_COST = 300;
/**
 * pageCost from which a request made before the workers are ready (a link to a large view, just
 * opened) starts them and waits for them instead of computing here: 2048 tokens at d_model 768
 * and 12 heads (2.6·10¹⁰) would hold the page's thread, and every input with it, far longer than
 * starting the workers takes. Below, the page computes at once: 512 tokens at d_model 768 and 12
 * heads (2.6·10⁹) take less than starting the workers.
 */
export const WORKER_FIRST_COST = 5e9;
/**
 * The page keeps q, k and the scores (for the step panel) while num_heads · n · m is at most this
 * (12 heads of 2048 tokens would hold 200 MB of scores; the wasm heap stays under 512 MB); a split
 * request's halves are joined while its weights are at most this many floats too; and grids of
 * at most this many weights in all are coloured on the page (colouredByWorkers).
 */
export const MAX_KEPT_WEIGHTS = 1 << 22;

/** Whether the page keeps q, k and the scores of num_heads heads of n tokens (MAX_KEPT_WEIGHTS). */
export function keepsIntermediates(numHeads, n) {
  return numHeads * n * n <= MAX_KEPT_WEIGHTS;
}

/**
 * Whether `x` is an array or a typed array (not a DataView: the requests hold none).
 * @param {unknown} x
 * @returns {x is ArrayLike<unknown> & {every(f: (v: unknown, i: number) => boolean): boolean}}
 */
const isList = (x) => Array.isArray(x) || ArrayBuffer.isView(x);

/**
 * Whether two numpyExperiment requests are the same: the same keys, each value equal (Object.is)
 * or an array / typed array (masks, up to n x n) of the same type, equal element by element. A
 * NaN element never equals anything, and a nested object is never equal: such a request is
 * computed again. (A few lines here rather than a dependency: the requests are flat.)
 */
export function sameRequest(a, b) {
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((k) => {
      const x = a[k];
      const y = b[k];
      return (
        k in b &&
        (Object.is(x, y) ||
          (isList(x) &&
            x.constructor === y?.constructor &&
            x.length === y.length &&
            x.every((v, i) => v === y[i])))
      );
    })
  );
}

/**
 * The cost functions of requests to `core` (the page's core, or a worker's): each takes a
 * numpyExperiment request.
 * @param {{experimentWork: Function, experimentFloat64MaxWork: number}} core
 */
export function costModel(core) {
  /** Multiply-adds of one numpyExperiment (the core's formula). */
  const experimentWork = ({ tokens, d_model }) => core.experimentWork({ tokens, d_model });
  /**
   * The cost of drawing `request` from this thread, in multiply-adds: experimentWork, plus
   * WEIGHT_COST for each of the h·n² weights: a weight (its exponential, its copies, colouring its
   * cell) costs the time of about 300 multiply-adds (fitted on the grids' request:
   * docs/benchmarks.md).
   */
  const pageCost = (request) =>
    experimentWork(request) + WEIGHT_COST * request.num_heads * request.tokens ** 2;
  return {
    experimentWork,
    pageCost,
    /**
     * Whether `request` can be split between two workers by heads: the grids' request (float32
     * weights only, no intermediates, no parameters: the core's numpy_experiment_weights_f32) with
     * at least two heads and weights small enough to join (MAX_KEPT_WEIGHTS).
     */
    splittable(request) {
      const float32 =
        request.precision === 'float32' ||
        (request.precision === 'auto' && experimentWork(request) > core.experimentFloat64MaxWork);
      return (
        float32 &&
        request.weights_only === true &&
        request.keep_intermediates === false &&
        request.return_parameters === false &&
        request.num_heads >= 2 &&
        keepsIntermediates(request.num_heads, request.tokens)
      );
    },
    /**
     * Whether the page computes `request` ahead, and keeps its result for an equal request later:
     * the grids' request (weights only, no intermediates, no parameters) with no array field (a
     * mask, ablated heads: these change with the token count or the panels), either small enough
     * to be computed on this thread (pageCost up to WORKER_MIN_COST: aheadHere) or computed by the
     * workers with weights small enough to keep (keepsIntermediates: 12 heads of 512 tokens are
     * 12.6 MB).
     */
    aheadable(request) {
      return (
        request.weights_only === true &&
        request.keep_intermediates === false &&
        request.return_parameters === false &&
        (pageCost(request) <= WORKER_MIN_COST ||
          keepsIntermediates(request.num_heads, request.tokens)) &&
        Object.values(request).every((v) => typeof v !== 'object' || v === null)
      );
    },
    /** Whether an aheadable request is computed ahead on this thread (else: by the workers). */
    aheadHere: (request) => pageCost(request) <= WORKER_MIN_COST,
    colouredByWorkers,
  };
}

/**
 * Whether a worker colours the cells of `request`'s grids (its result then has `pixels`): pooled
 * grids (beyond MAX_BUFFER_SIDE tokens, pixels.js), and grids of more than MAX_KEPT_WEIGHTS
 * weights in all. Smaller ones are coloured on the page, into each grid's kept pixel buffer
 * (heatmap.js), which is cheaper than writing new pixel memory in the worker and sending it.
 */
export function colouredByWorkers(request) {
  return (
    poolFactor(request.tokens, request.tokens) > 1 ||
    request.num_heads * request.tokens ** 2 > MAX_KEPT_WEIGHTS
  );
}
