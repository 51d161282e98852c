// The page's own timing, as User Timing entries that scripts/bench.sh and the tests read:
//   mha:update      from an input change (the first one not yet shown) to all grids painted
//   mha:first-grid  from navigation start to the first painted grid
// "Painted" is taken after the frame that draws the grids: a task queued from that frame's
// requestAnimationFrame runs once the frame has been presented. The last values are also on
// <html> as data-last-update-ms and data-first-grid-ms (milliseconds, for tests).

/** One clock per page: the random-embeddings mode starts and stops it; the tables ask it. */
export class UpdateClock {
  constructor() {
    this.pendingStart = null;
    this.firstGridDone = false;
  }

  /** An input changed what the grids should show: starts the clock unless one is running. */
  inputChanged() {
    if (this.pendingStart === null) this.pendingStart = performance.now();
  }

  /** Whether an input is waiting to be shown. */
  updatePending() {
    return this.pendingStart !== null;
  }

  /**
   * The grids for the latest input were drawn in this task: measures once they are painted.
   * @param {() => void} [after] called after the measurement (tests wait on the attributes)
   */
  gridsDrawn(after = () => {}) {
    const start = this.pendingStart;
    this.pendingStart = null;
    const first = !this.firstGridDone;
    this.firstGridDone = true;
    requestAnimationFrame(() =>
      setTimeout(() => {
        const end = performance.now();
        const root = document.documentElement;
        if (start !== null) {
          performance.measure('mha:update', { start, end });
          root.dataset.lastUpdateMs = (end - start).toFixed(1);
        }
        if (first) {
          performance.measure('mha:first-grid', { start: 0, end });
          root.dataset.firstGridMs = end.toFixed(1);
        }
        root.dataset.updates = String(Number(root.dataset.updates ?? 0) + 1);
        after();
      }, 0),
    );
  }

  /** An input was refused (the alert says why): nothing to paint, the clock stops. */
  inputRefused() {
    this.pendingStart = null;
  }
}
