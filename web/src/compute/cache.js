// The results the page keeps to answer a request again without computing it: those of the grids'
// requests shown before and those computed ahead (ahead.js), newest first. Typing inside a word
// changes the text but not the token count, and typing a word and deleting it again comes back
// to a count shown before; numpyExperiment depends only on the request.
import { sameRequest } from './cost.js';

/**
 * Kept results beyond the two computed ahead from the last one shown: KEPT_RESULTS + 2 in all.
 * A kept result has a pageCost up to WORKER_MIN_COST: at most h·n² = 3.3·10⁵ weights, 1.3 MB.
 */
export const KEPT_RESULTS = 3;

export class ResultCache {
  constructor() {
    /** {request (a copy), outcome, ahead (computed ahead, not shown since)}, newest first. */
    this.kept = [];
  }

  /** The kept entry of a request equal to `request` (sameRequest), or undefined. */
  find(request) {
    return this.kept.find((k) => sameRequest(k.request, request));
  }

  /** Whether a request equal to `request` is kept. */
  has(request) {
    return this.kept.some((k) => sameRequest(k.request, request));
  }

  /**
   * Keeps `entry` ({request, outcome, ahead}) first, in place of an equal request's; the oldest
   * beyond KEPT_RESULTS + 2 go. Its result is frozen (its typed arrays are not: nothing on the
   * page writes into them).
   */
  remember(entry) {
    Object.freeze(entry.outcome.result);
    this.kept = [entry, ...this.kept.filter((k) => !sameRequest(k.request, entry.request))].slice(0, KEPT_RESULTS + 2);
  }
}
