// Computing ahead. Typing a word adds a token, deleting one takes it away: once the grids' request
// (aheadable, cost.js: weights only, no arrays) is shown, the page computes the same request for
// one token more, then one token less, and keeps the results in the ResultCache (cache.js), where
// the next keystroke's request finds them. Where they are computed depends on their size:
// - on this thread (aheadHere): in idle time (requestIdleCallback), one computation per idle
//   period and only when its deadline leaves room for it (its expected time, from the last one's,
//   with a margin);
// - by the workers (larger ones, which the page sends to them anyway): once the page has been left
//   alone for AHEAD_AWAY_DELAY_MS, one computation after the other, and only while the workers
//   are free (compute.js computeAway). A call that comes meanwhile waits for the one in flight
//   (half the heads on each core), or takes it over when it asks for the same request.

/** How many idle periods a computation ahead waits for one whose deadline leaves it room. */
export const AHEAD_TRIES = 10;
/**
 * Margin on the time a computation ahead is expected to take: it starts only when the idle period
 * leaves that much (a key pressed meanwhile waits for it).
 */
export const AHEAD_MARGIN = 1.5;
/**
 * Milliseconds a unit of pageCost is expected to take on this thread before a computation ahead
 * of the same d_model and num_heads is timed (then: the last one's time per unit: expectedMs):
 * 8 ms for 64 tokens at d_model 512 and 8 heads (8.1·10⁷), on the slow side of what such a
 * computation takes (docs/benchmarks.md). Not the shown view's own time: that one may have drawn
 * a new seed's numbers (a million draws at d_model 512), which a token more or less does not.
 */
export const AHEAD_PRIOR_MS_PER_COST = 1e-7;
/**
 * Milliseconds without a new request before the workers compute ahead: typing within a word
 * reuses the shown result, a new word comes a few keys later, while back-to-back changes (a held
 * key, a slider dragged) keep restarting this wait and never queue behind a computation ahead.
 */
export const AHEAD_AWAY_DELAY_MS = 100;
/** Without requestIdleCallback: a computation ahead 50 ms after the last update, given 16 ms. */
const FALLBACK_IDLE_DELAY_MS = 50,
  FALLBACK_IDLE_BUDGET_MS = 16;

/** The d_model and num_heads of a request, as one key (expectedMs). */
const shapeOf = (request) => `${request.d_model}/${request.num_heads}`;

export class AheadScheduler {
  /**
   * @param {object} p
   * @param {object} p.cost the cost model (cost.js costModel): pageCost, aheadable
   * @param {object} p.cache where the results go (cache.js ResultCache)
   * @param {(request: object) => object} p.compute computes a request on this thread: its outcome
   * @param {(request: object) => Promise<object|null>} [p.computeAway] has the workers compute a
   *   request and keeps its result (compute.js computeAway): its outcome, or null when they could
   *   not (busy, gone); without it, larger requests are not computed ahead
   * @param {(request: object) => boolean} p.current whether `request` is still the last one asked
   * @param {object} [p.clock] its clock (tests pass their own): idle (requestIdleCallback),
   *   cancelIdle (cancelIdleCallback), now (performance.now), delay (setTimeout), cancelDelay
   *   (clearTimeout)
   */
  constructor({ cost, cache, compute, computeAway = null, current, clock = {} }) {
    this.cost = cost;
    this.cache = cache;
    this.compute = compute;
    this.computeAway = computeAway;
    this.current = current;
    const now = clock.now ?? (() => performance.now());
    this.clock = {
      now,
      idle:
        clock.idle ??
        (typeof requestIdleCallback === 'function'
          ? (f) => requestIdleCallback(f)
          : (f) => {
              const due = now() + FALLBACK_IDLE_DELAY_MS;
              return setTimeout(
                () =>
                  f({
                    didTimeout: false,
                    timeRemaining: () => Math.max(0, due + FALLBACK_IDLE_BUDGET_MS - now()),
                  }),
                FALLBACK_IDLE_DELAY_MS,
              );
            }),
      cancelIdle:
        clock.cancelIdle ??
        (typeof cancelIdleCallback === 'function'
          ? (h) => cancelIdleCallback(h)
          : (h) => clearTimeout(h)),
      delay: clock.delay ?? ((f, ms) => setTimeout(f, ms)),
      cancelDelay: clock.cancelDelay ?? ((h) => clearTimeout(h)),
    };
    this.timer = null; // the wait before the workers compute ahead
    // On unless the page turns it off (an embedded page has no text to type).
    this.on = true;
    this.handle = null; // the idle callback of the next computation ahead
    // The last computation ahead's time per pageCost unit, and the d_model and num_heads it was
    // measured at: {shape, msPerCost} or null.
    this.rate = null;
    this.computed = 0;
  }

  /** Turns computing ahead on or off (off: nothing more is computed ahead; kept results stay). */
  setOn(on) {
    this.on = on;
    if (!on) this.cancel();
  }

  /** The next computation ahead, if one is waiting for an idle period, will not run. */
  cancel() {
    if (this.handle !== null) this.clock.cancelIdle(this.handle);
    this.handle = null;
    if (this.timer !== null) this.clock.cancelDelay(this.timer);
    this.timer = null;
  }

  /**
   * `request`'s outcome, just shown (a grids' request, aheadable): kept as shown (cache.js), and
   * its neighbours computed ahead next (schedule). Nothing for other requests.
   */
  shown(request, outcome) {
    if (!this.cost.aheadable(request)) return;
    this.cache.remember({ request, outcome, ahead: false });
    this.schedule(request);
  }

  /**
   * The workers are ready and free: `request` (the one shown, computed on this thread before they
   * were ready) gets its neighbours computed ahead by them now, when they are the ones that would
   * compute them (not aheadHere).
   */
  workersReady(request) {
    if (!this.cost.aheadable(request) || this.cost.aheadHere(request)) return;
    this.cancel();
    this.schedule(request);
  }

  /**
   * Computes `from` (the last request, just shown) for one token more, then one token less, and
   * keeps the results: the next keystroke's request is likely one of them. Requests already kept
   * are not computed again. Those larger than aheadHere go to the workers (scheduleAway); the
   * others run here, in idle periods, one computation each: a computation starts only when the
   * period's deadline (IdleDeadline.timeRemaining()) leaves it AHEAD_MARGIN times its expected time
   * (expectedMs); otherwise it waits for another period, AHEAD_TRIES at most.
   */
  schedule(from) {
    if (!this.on) return;
    const next = [from.tokens + 1, from.tokens - 1]
      .filter((n) => n >= 1)
      .map((tokens) => ({ ...from, tokens }))
      .filter((r) => this.cost.aheadable(r) && !this.cache.has(r));
    if (!next.length) return;
    if (!this.cost.aheadHere(from)) {
      this.scheduleAway(from, next);
      return;
    }
    let tries = 0;
    const step = (deadline) => {
      this.handle = null;
      if (!this.current(from) || !this.on) return; // superseded meanwhile
      const request = next[0];
      if (deadline.timeRemaining() < this.expectedMs(request) * AHEAD_MARGIN) {
        if (++tries >= AHEAD_TRIES) {
          // Given up on this one; the next (one token less, cheaper) still gets its tries. The
          // rate is forgotten: one slow sample (a loaded machine) must not stop it for good.
          this.rate = null;
          next.shift();
          tries = 0;
        }
        if (next.length) this.handle = this.clock.idle(step);
        return;
      }
      tries = 0;
      next.shift();
      const start = this.clock.now();
      const outcome = this.compute(request);
      this.rate = {
        shape: shapeOf(request),
        msPerCost: (this.clock.now() - start) / this.cost.pageCost(request),
      };
      if (outcome.result) this.cache.remember({ request, outcome, ahead: true });
      // How many results were computed ahead so far (<html data-computed-ahead>: tests wait for it).
      document.documentElement.dataset.computedAhead = String(++this.computed);
      if (next.length) this.handle = this.clock.idle(step);
    };
    if (next.length) this.handle = this.clock.idle(step);
  }

  /**
   * The workers compute `next` (the neighbours of `from`, the last request shown) one after the
   * other, after AHEAD_AWAY_DELAY_MS without a newer request (cancel), each only while `from` is
   * still the last request. computeAway keeps the results.
   */
  scheduleAway(from, next) {
    if (!this.computeAway) return;
    const step = async () => {
      this.timer = null;
      if (!this.current(from) || !this.on || !next.length) return;
      const outcome = await this.computeAway(next.shift());
      if (!outcome) return; // the workers were busy or are gone: not now
      document.documentElement.dataset.computedAhead = String(++this.computed);
      if (next.length && this.current(from) && this.on) this.timer = this.clock.delay(step, 0);
    };
    this.timer = this.clock.delay(step, AHEAD_AWAY_DELAY_MS);
  }

  /**
   * Milliseconds `request` is expected to take here: its pageCost at the last computation ahead's
   * rate when that one had the same d_model and num_heads, else at AHEAD_PRIOR_MS_PER_COST. (A rate
   * is not carried to another shape: module 08's 5 tokens at d_model 8 cost mostly the call
   * itself, which per unit of cost would make 64 tokens at d_model 512 look many times longer
   * than they take.)
   */
  expectedMs(request) {
    const rate =
      this.rate?.shape === shapeOf(request) ? this.rate.msPerCost : AHEAD_PRIOR_MS_PER_COST;
    return this.cost.pageCost(request) * rate;
  }
}
