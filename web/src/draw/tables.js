// When the weight tables under the grids are built (table.js builds one), for the random-
// embeddings grids (scheduleTables) and the Date translator's (queueAfterFrame). A table is the
// accessible and testable twin of a head's canvas, but 16 heads of 64 x 64 cells are 65,536 DOM
// cells: built with every update they cost more than the compute. So:
//   - small views (num_heads * n * m <= SYNC_TABLE_CELLS) get their tables with the grids, as before;
//   - larger ones up to MAX_TABLE_TOKENS get them once updates pause (PAUSE_MS), in tasks of
//     about SLICE_MS (a table 8 rows at a time), none while an input waits to be shown, and a newer
//     view cancels the rest (#heads[data-tables] = "pending", then "ready");
//   - beyond MAX_TABLE_TOKENS there is no table: the keyboard grid and its live readout give
//     every value (the holder says so to screen readers, once updates pause where it held a
//     table; #heads[data-tables] = "none").
// Until its new table replaces it, a holder's previous table is stale: marked data-stale, which
// style.css skips (content-visibility: hidden). Left in the layout, 8 stale tables of 64 x 64
// (70,000 layout objects) are laid out again in both frames of every keystroke's update; removed
// at once, they make the first keystroke after a pause several times slower. Hidden this way
// they are neither laid out nor read out: no screen reader meets last view's values.
// The scheduling state (which view's tables are being built, their timer) is kept on the root
// element it describes, one per grid area.

import { runToEnd } from './table.js';

export const SYNC_TABLE_CELLS = 4096;
export const MAX_TABLE_TOKENS = 64;
/**
 * Milliseconds of table building per task, so typing is never held up for long. A slice stops
 * between steps of a table (a build may return headTableSteps' generator: 8 rows a step), not only
 * between tables: a 64 x 64 table built in one piece holds a key pressed meanwhile for several
 * frames.
 */
const SLICE_MS = 8;
/** Quiet time (ms) after the last update before larger views get their tables. */
export const PAUSE_MS = 400;

/** The root's scheduling state: {generation, timer, frame, jobs}. */
const STATE = Symbol('tables');
const stateOf = (root) => (root[STATE] ??= { generation: 0, timer: 0, frame: 0, jobs: [] });

/** Marks the notes put in holders beyond MAX_TABLE_TOKENS (a holder showing one has no table to remove). */
const NOTE = Symbol('table note');
const isNote = (node) => Boolean(node?.[NOTE]);
function note() {
  const p = document.createElement('p');
  p.textContent =
    `No table for more than ${MAX_TABLE_TOKENS} tokens: focus the grid and use the ` +
    'arrow keys, the readout says each weight.';
  p[NOTE] = true;
  return p;
}

/** Puts a holder's content for the current view in: no longer stale. */
function fill(holder, content) {
  holder.replaceChildren(content);
  delete holder.dataset.stale;
}

/** A build's result: the table, or a generator of its steps that returns it (headTableSteps). */
const isSteps = (built) =>
  built !== null && typeof built === 'object' && typeof built.next === 'function';

/** A build run to its end (the tables built at once). */
const finish = (built) => (isSteps(built) ? runToEnd(built) : built);

/**
 * @param {HTMLElement} root gets data-tables ("ready", "pending" or "none")
 * @param {HTMLElement[]} holders one (visually hidden) holder per head, in head order
 * @param {(head: number) => (HTMLElement|Generator)} build the table of head `head`, or a
 *   generator of its steps that returns it (headTableSteps)
 * @param {{n: number, m: number}} size query and key tokens
 * @param {{busy?: () => boolean}} [options] `busy`: an input is waiting to be shown (timing.js
 *   updatePending); no slice runs then: its update goes first, and the tables wait for the next
 *   pause (PAUSE_MS). Without it and the 8-row steps, a key pressed ≥ PAUSE_MS after the last
 *   update would meet the slices of the last view's tables and wait for them.
 *   Each finished table's style and layout still happen in one frame, after the slice that puts
 *   it in: the slices bound the script, not that.
 */
export function scheduleTables(root, holders, build, { n, m }, { busy = () => false } = {}) {
  const state = stateOf(root);
  const mine = ++state.generation;
  root.removeAttribute('aria-busy');
  if (Math.max(n, m) > MAX_TABLE_TOKENS) {
    root.dataset.tables = 'none';
    // A holder with nothing or a note in it gets its note at once. One with the previous view's
    // table keeps it, stale (neither laid out nor read out), until updates pause, as in the
    // slices below: removing 8 tables of 64 x 64 cells in this task would make the keystroke from
    // 64 to 65 tokens (d_model 512, 8 heads) several times slower to its grids.
    const later = [];
    for (const holder of holders) {
      if (holder.firstChild && !isNote(holder.firstChild)) later.push(holder);
      else fill(holder, note());
    }
    if (later.length) fillOncePaused(root, state, later, note, mine, busy, () => {});
    return;
  }
  if (holders.length * n * m <= SYNC_TABLE_CELLS) {
    holders.forEach((holder, h) => fill(holder, finish(build(h))));
    root.dataset.tables = 'ready';
    return;
  }
  // A holder may still hold the previous view's table (grids are reused between views): it is
  // replaced in its slice, so removing thousands of old cells does not delay the paint either.
  root.dataset.tables = 'pending';
  fillOncePaused(root, state, holders, build, mine, busy, () => {
    root.dataset.tables = 'ready';
  });
}

/**
 * Fills holders[i] with build(i) (a table, or a generator of its steps) once updates pause
 * (PAUSE_MS after the last call; a newer view restarts the wait), in slices of about SLICE_MS,
 * none while `busy()`; a newer view (generation) cancels the rest. Built while typing, the tables'
 * style and layout (8 heads of 64 x 64 cells) would delay the next keystroke's grids.
 * Until then each holder's previous content is stale and the heads area is aria-busy (assistive
 * technology waits for the new tables); `done` runs after the last holder.
 */
function fillOncePaused(root, state, holders, build, mine, busy, done) {
  root.setAttribute('aria-busy', 'true');
  for (const holder of holders)
    if (holder.firstChild && !holder.dataset.stale) holder.dataset.stale = 'true';
  let next = 0;
  let steps = null; // the generator of holder `next`'s table, while it is being built
  const slice = () => {
    if (mine !== state.generation) return; // a newer view replaced these holders
    if (busy()) {
      state.timer = setTimeout(slice, PAUSE_MS);
      return;
    }
    const t0 = performance.now();
    do {
      const built = steps ?? build(next);
      steps = null;
      if (isSteps(built)) {
        const step = built.next();
        if (!step.done) {
          steps = built;
          continue;
        }
        fill(holders[next], step.value);
      } else {
        fill(holders[next], built);
      }
      next++;
    } while (next < holders.length && performance.now() - t0 < SLICE_MS);
    if (next < holders.length) state.timer = setTimeout(slice, 0);
    else {
      done();
      root.removeAttribute('aria-busy');
    }
  };
  clearTimeout(state.timer);
  state.timer = setTimeout(slice, PAUSE_MS);
}

/**
 * Queues `job` (it puts one table into its holder) to run just after the next frame, with every
 * job queued before then: a keystroke's time is the update and what is seen, and typing faster
 * than that skips no job but runs them together. root[data-tables] is "pending" until they ran,
 * then "ready"; `done(ms)` gets the time they took.
 * @param {HTMLElement} root
 * @param {() => void} job
 * @param {(ms: number) => void} [done]
 */
export function queueAfterFrame(root, job, done = () => {}) {
  const state = stateOf(root);
  state.jobs.push(job);
  root.dataset.tables = 'pending';
  cancelAnimationFrame(state.frame);
  clearTimeout(state.timer);
  state.frame = requestAnimationFrame(() => {
    state.timer = setTimeout(() => {
      const t0 = performance.now();
      for (const run of state.jobs.splice(0)) run();
      done(performance.now() - t0);
      root.dataset.tables = 'ready';
    }, 0);
  });
}

/** Drops the jobs queueAfterFrame holds for `root` that have not run yet (their view was replaced). */
export function dropQueued(root) {
  stateOf(root).jobs.length = 0;
}
