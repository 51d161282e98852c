// tables.js: when the hidden weight tables are built. Timers mocked (node:test): deterministic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  scheduleTables,
  PAUSE_MS,
  SYNC_TABLE_CELLS,
  MAX_TABLE_TOKENS,
} from '../../web/src/draw/tables.js';

function fakeRoot() {
  const attrs = new Map();
  return {
    dataset: {},
    attrs,
    setAttribute: (k, v) => attrs.set(k, v),
    removeAttribute: (k) => attrs.delete(k),
  };
}
const holders = (count) =>
  Array.from({ length: count }, () => ({
    content: null,
    dataset: {},
    get firstChild() {
      return this.content;
    },
    replaceChildren(c = null) {
      this.content = c;
    },
  }));

test('a small view gets its tables at once', () => {
  const root = fakeRoot();
  const hs = holders(2);
  assert.ok(2 * 5 * 5 <= SYNC_TABLE_CELLS);
  scheduleTables(root, hs, (h) => `table ${h}`, { n: 5, m: 5 });
  assert.deepEqual(
    hs.map((x) => x.content),
    ['table 0', 'table 1'],
  );
  assert.equal(root.dataset.tables, 'ready');
  assert.equal(root.attrs.has('aria-busy'), false);
});

test('a larger view gets them once updates pause; a newer update restarts the wait and wins', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const root = fakeRoot();
  const hs = holders(8);
  scheduleTables(root, hs, (h) => `old ${h}`, { n: 64, m: 64 });
  assert.equal(root.dataset.tables, 'pending');
  assert.equal(root.attrs.get('aria-busy'), 'true');
  t.mock.timers.tick(PAUSE_MS - 1);
  assert.ok(
    hs.every((x) => x.content === null),
    'nothing built while updates come',
  );
  // The next update, just before the pause ends: the wait starts again.
  scheduleTables(root, hs, (h) => `new ${h}`, { n: 64, m: 64 });
  t.mock.timers.tick(PAUSE_MS - 1);
  assert.ok(
    hs.every((x) => x.content === null),
    'still nothing: the wait restarted',
  );
  t.mock.timers.tick(1);
  // Slices of SLICE_MS (real time) each, chained by setTimeout(0).
  for (let i = 0; i < 100 && root.dataset.tables !== 'ready'; i++) t.mock.timers.tick(0);
  assert.deepEqual(
    hs.map((x) => x.content),
    Array.from({ length: 8 }, (_, h) => `new ${h}`),
  );
  assert.equal(root.dataset.tables, 'ready');
  assert.equal(root.attrs.has('aria-busy'), false);
});

test('a previous table is marked stale until its new one replaces it (style.css skips it)', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const root = fakeRoot();
  const hs = holders(8);
  hs.forEach((x, h) => x.replaceChildren(`old ${h}`)); // last view's tables
  hs[7].replaceChildren(); // one holder without a table: nothing stale there
  scheduleTables(root, hs, (h) => `new ${h}`, { n: 64, m: 64 });
  assert.deepEqual(
    hs.map((x) => x.dataset.stale),
    [...Array(7).fill('true'), undefined],
  );
  assert.equal(hs[0].content, 'old 0', 'kept (not removed) until rebuilt');
  t.mock.timers.tick(PAUSE_MS);
  for (let i = 0; i < 100 && root.dataset.tables !== 'ready'; i++) t.mock.timers.tick(0);
  assert.deepEqual(
    hs.map((x) => x.content),
    Array.from({ length: 8 }, (_, h) => `new ${h}`),
  );
  assert.ok(
    hs.every((x) => x.dataset.stale === undefined),
    'no holder left stale',
  );
  // Stale again on the next update; a small view (tables at once) clears the mark at once.
  scheduleTables(root, hs, (h) => `next ${h}`, { n: 64, m: 64 });
  assert.ok(hs.every((x) => x.dataset.stale === 'true'));
  scheduleTables(root, hs.slice(0, 2), (h) => `small ${h}`, { n: 5, m: 5 });
  assert.deepEqual(
    hs.slice(0, 2).map((x) => [x.content, x.dataset.stale]),
    [
      ['small 0', undefined],
      ['small 1', undefined],
    ],
  );
  // The 'next' view's timer is still pending: run it out (it finds a newer view and does nothing).
  // Left pending, node 20's mock timers break the next test's: its clearTimeout of this timer
  // corrupts that test's mocked queue, whose timers then never fire.
  t.mock.timers.tick(PAUSE_MS);
  assert.equal(hs[2].content, 'new 2', 'the newer (small) view took the holders over');
});

test('beyond MAX_TABLE_TOKENS a previous table stays stale (hidden) until updates pause, then gets its note', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  // The note is a <p> made with document.createElement: a stand-in document here.
  globalThis.document = { createElement: (tag) => ({ tag, textContent: '' }) };
  t.after(() => delete globalThis.document);
  const root = fakeRoot();
  const hs = holders(8);
  hs.forEach((x, h) => x.replaceChildren(`old ${h}`));
  scheduleTables(root, hs, (h) => `new ${h}`, { n: 64, m: 64 });
  assert.ok(hs.every((x) => x.dataset.stale === 'true'));
  hs[7].replaceChildren(); // one holder without a table: its note goes in at once
  delete hs[7].dataset.stale;
  const n = MAX_TABLE_TOKENS + 1;
  const none = () => assert.fail('no table beyond MAX_TABLE_TOKENS');
  scheduleTables(root, hs, none, { n, m: n });
  assert.equal(root.dataset.tables, 'none');
  assert.deepEqual(
    hs.slice(0, 7).map((x) => [x.content, x.dataset.stale]),
    Array.from({ length: 7 }, (_, h) => [`old ${h}`, 'true']),
    "the tables are not removed in the keystroke's task; hidden until then",
  );
  assert.match(hs[7].content.textContent, /^No table for more than 64 tokens/);
  assert.equal(root.attrs.get('aria-busy'), 'true');
  t.mock.timers.tick(PAUSE_MS - 1);
  assert.equal(hs[0].content, 'old 0');
  // The next keystroke (66 tokens) restarts the wait; its notes replace the same stale tables.
  scheduleTables(root, hs, none, { n: n + 1, m: n + 1 });
  t.mock.timers.tick(PAUSE_MS - 1);
  assert.equal(hs[0].content, 'old 0', 'still waiting');
  t.mock.timers.tick(1);
  assert.ok(
    hs.every(
      (x) =>
        /^No table for more than 64 tokens/.test(x.content.textContent) &&
        x.dataset.stale === undefined,
    ),
    'the notes are shown and read out',
  );
  assert.equal(root.attrs.has('aria-busy'), false);
  // Notes already there: nothing to wait for.
  const first = hs[0].content;
  scheduleTables(root, hs, none, { n: n + 2, m: n + 2 });
  assert.notEqual(hs[0].content, first);
  assert.equal(root.attrs.has('aria-busy'), false);
});

/** A table built in `count` steps of at least `ms` milliseconds each (headTableSteps' shape). */
function* slowSteps(name, count, ms, log) {
  for (let i = 0; i < count; i++) {
    if (i > 0) yield;
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
      /* a step's work */
    }
    log.push(`${name}.${i}`);
  }
  return name;
}

test('a slice stops between the steps of one table, and the next slice goes on where it stopped', {
  timeout: 5000,
}, (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const root = fakeRoot();
  const hs = holders(2);
  const log = [];
  const atSliceStart = []; // steps done when each slice began (busy() is asked once per slice)
  // 4 steps of >= 5 ms per table: a slice (SLICE_MS = 8) ends after at most 2 of them.
  scheduleTables(
    root,
    hs,
    (h) => slowSteps(`t${h}`, 4, 5, log),
    { n: 64, m: 64 },
    {
      busy: () => {
        atSliceStart.push(log.length);
        return false;
      },
    },
  );
  t.mock.timers.tick(PAUSE_MS);
  for (let i = 0; i < 100 && root.dataset.tables !== 'ready'; i++) t.mock.timers.tick(0);
  assert.deepEqual(
    log,
    ['t0.0', 't0.1', 't0.2', 't0.3', 't1.0', 't1.1', 't1.2', 't1.3'],
    'every step once, in order',
  );
  const perSlice = [...atSliceStart.slice(1), log.length].map((done, i) => done - atSliceStart[i]);
  assert.ok(perSlice.length >= 4, `8 steps of 5 ms take at least 4 slices, not ${perSlice.length}`);
  assert.ok(
    perSlice.every((k) => k >= 1 && k <= 2),
    `1 or 2 steps per slice: ${perSlice}`,
  );
  assert.deepEqual(
    hs.map((x) => x.content),
    ['t0', 't1'],
  );
  assert.equal(root.dataset.tables, 'ready');
});

test('no slice runs while an input waits to be shown: the tables wait for the next pause', {
  timeout: 5000,
}, (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const root = fakeRoot();
  const hs = holders(8);
  let waiting = false;
  scheduleTables(root, hs, (h) => `t ${h}`, { n: 64, m: 64 }, { busy: () => waiting });
  waiting = true; // a key pressed just before the pause ended; its grids are not drawn yet
  t.mock.timers.tick(PAUSE_MS);
  for (let i = 0; i < 10; i++) t.mock.timers.tick(0);
  assert.ok(
    hs.every((x) => x.content === null),
    'nothing built while the input waits',
  );
  assert.equal(root.dataset.tables, 'pending');
  waiting = false; // drawn (without a new view, e.g. a refused input): built after another pause
  t.mock.timers.tick(PAUSE_MS - 1);
  assert.ok(
    hs.every((x) => x.content === null),
    'not before the pause',
  );
  t.mock.timers.tick(1);
  for (let i = 0; i < 100 && root.dataset.tables !== 'ready'; i++) t.mock.timers.tick(0);
  assert.deepEqual(
    hs.map((x) => x.content),
    Array.from({ length: 8 }, (_, h) => `t ${h}`),
  );
  // A small view's tables at once take a whole build too, steps or not.
  scheduleTables(root, hs.slice(0, 1), () => slowSteps('small', 3, 0, []), { n: 5, m: 5 });
  assert.equal(hs[0].content, 'small');
});
