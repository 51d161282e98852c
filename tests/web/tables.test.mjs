// tables.js: when the hidden weight tables are built. Timers mocked (node:test): deterministic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scheduleTables, PAUSE_MS, SYNC_TABLE_CELLS } from '../../web/src/tables.js';

function fakeRoot() {
  const attrs = new Map();
  return {
    dataset: {},
    attrs,
    setAttribute: (k, v) => attrs.set(k, v),
    removeAttribute: (k) => attrs.delete(k),
  };
}
const holders = (count) => Array.from({ length: count }, () => ({ content: null, replaceChildren(c) { this.content = c; } }));

test('a small view gets its tables at once', () => {
  const root = fakeRoot();
  const hs = holders(2);
  assert.ok(2 * 5 * 5 <= SYNC_TABLE_CELLS);
  scheduleTables(root, hs, (h) => `table ${h}`, { n: 5, m: 5 });
  assert.deepEqual(hs.map((x) => x.content), ['table 0', 'table 1']);
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
  assert.ok(hs.every((x) => x.content === null), 'nothing built while updates come');
  // The next update, just before the pause ends: the wait starts again.
  scheduleTables(root, hs, (h) => `new ${h}`, { n: 64, m: 64 });
  t.mock.timers.tick(PAUSE_MS - 1);
  assert.ok(hs.every((x) => x.content === null), 'still nothing: the wait restarted');
  t.mock.timers.tick(1);
  // Slices of SLICE_MS (real time) each, chained by setTimeout(0).
  for (let i = 0; i < 100 && root.dataset.tables !== 'ready'; i++) t.mock.timers.tick(0);
  assert.deepEqual(hs.map((x) => x.content), Array.from({ length: 8 }, (_, h) => `new ${h}`));
  assert.equal(root.dataset.tables, 'ready');
  assert.equal(root.attrs.has('aria-busy'), false);
});
