// The page's own timing (issue 6), as User Timing entries that scripts/bench.sh and the tests read:
//   mha:update      from an input change (the first one not yet shown) to all grids painted
//   mha:first-grid  from navigation start to the first painted grid
// "Painted" is taken after the frame that draws the grids: a task queued from that frame's
// requestAnimationFrame runs once the frame has been presented. The last values are also on
// <html> as data-last-update-ms and data-first-grid-ms (milliseconds, for tests).

let pendingStart = null;
let firstGridDone = false;

/** An input changed what the grids should show: starts the clock unless one is running. */
export function inputChanged() {
  if (pendingStart === null) pendingStart = performance.now();
}

/** Whether an input is waiting to be shown. */
export function updatePending() {
  return pendingStart !== null;
}

/**
 * The grids for the latest input were drawn in this task: measures once they are painted.
 * @param {() => void} [after] called after the measurement (tests wait on the attributes)
 */
export function gridsDrawn(after = () => {}) {
  const start = pendingStart;
  pendingStart = null;
  const first = !firstGridDone;
  firstGridDone = true;
  requestAnimationFrame(() => setTimeout(() => {
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
  }, 0));
}

/** An input was refused (the alert says why): nothing to paint, the clock stops. */
export function inputRefused() {
  pendingStart = null;
}
