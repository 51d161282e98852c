// The results the page keeps to answer a request again without computing it: those of the grids'
// requests shown before and those computed ahead (ahead.js), newest first. Typing inside a word
// changes the text but not the token count, and typing a word and deleting it again comes back
// to a count shown before; numpyExperiment depends only on the request. A worker's result kept
// here keeps its weights' buffers until it goes (`gone`: workers.js giveBackWhenDone).
import { MAX_KEPT_WEIGHTS, sameRequest } from './cost.js';

/**
 * Kept results beyond the two computed ahead from the last one shown: KEPT_RESULTS + 2 in all,
 * and their weights at most KEPT_WEIGHTS floats in all (the newest is always kept).
 */
export const KEPT_RESULTS = 3;
/**
 * Floats of weights the kept results may hold together: 50 MB, four results of 12 heads of 512
 * tokens (the one shown, one token more and one less, one more shown before).
 */
export const KEPT_WEIGHTS = 3 * MAX_KEPT_WEIGHTS;

/** Floats of weights a kept entry holds: h·n² (the grids' request is self-attention). */
const weightsOf = ({ request }) => request.num_heads * request.tokens ** 2;

export class ResultCache {
  /** @param {(result: object) => void} [gone] told of each result that is no longer kept */
  constructor(gone = () => {}) {
    /** {request (a copy), outcome, ahead (computed ahead, not shown since)}, newest first. */
    this.kept = [];
    this.gone = gone;
  }

  /** The kept entry of a request equal to `request` (sameRequest), or undefined. */
  find(request) {
    return this.kept.find((k) => sameRequest(k.request, request));
  }

  /** Whether a request equal to `request` is kept. */
  has(request) {
    return this.kept.some((k) => sameRequest(k.request, request));
  }

  /** Whether `result` is the result of a kept entry. */
  holds(result) {
    return this.kept.some((k) => k.outcome.result === result);
  }

  /**
   * Keeps `entry` ({request, outcome, ahead}) first, in place of an equal request's; the oldest
   * beyond KEPT_RESULTS + 2, or beyond KEPT_WEIGHTS floats, go (their results are told to
   * `gone`). Its result is frozen (its typed arrays are not: nothing on the page writes into them).
   */
  remember(entry) {
    Object.freeze(entry.outcome.result);
    const before = this.kept.filter((k) => !sameRequest(k.request, entry.request));
    const kept = [entry];
    let floats = weightsOf(entry);
    for (const k of before) {
      if (kept.length >= KEPT_RESULTS + 2 || floats + weightsOf(k) > KEPT_WEIGHTS) break;
      kept.push(k);
      floats += weightsOf(k);
    }
    const gone = this.kept.filter((k) => !kept.includes(k));
    this.kept = kept;
    for (const k of gone) this.gone(k.outcome.result);
  }
}
