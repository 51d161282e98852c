// The step panel's rows (web/src/explain/step.js) from the core's explanation of a cell
// (explainCell of build/wasm/mha_wasm.js): the cell's slices, the score the softmax saw,
// exp / row sum = the core's weight, and a fully masked row shown as −∞ and zeros, never NaN.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './module.mjs';
import { fromCoreExplanation, stepRows } from '../../web/src/explain/step.js';
import { formatWeight } from '../../web/src/draw/format.js';

let mod;
before(async () => {
  mod = await loadModule('mha_wasm.js');
});

const KEYS = [
  'q',
  'k',
  'dot',
  'scaled',
  'mask',
  'score',
  'exp',
  'sum',
  'weight',
  'v',
  'contribution',
  'output',
];

test("one cell: head h's slices, the core's score, exp / row sum = the core's weight", () => {
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  const e = fromCoreExplanation(mod.explainCell(r, { head: 1, i: 0, j: 3 }));
  assert.deepEqual(e.columns, [4, 7]);
  assert.deepEqual(e.q, Array.from(r.q.subarray(4, 8), Number));
  assert.deepEqual(e.k, Array.from(r.k.subarray(3 * 8 + 4, 3 * 8 + 8), Number));
  assert.equal(e.weight, r.attn_weights[(1 * 5 + 0) * 5 + 3]);
  assert.ok(Math.abs(e.score - r.scores[(1 * 5 + 0) * 5 + 3]) < 1e-4);
  assert.ok(Math.abs(e.exp / e.rowSum - e.weight) < 1e-6);
  assert.equal(e.maskTerm, 0);
  const rows = stepRows(e, 'a', 'b');
  assert.deepEqual(
    rows.map((row) => row.key),
    KEYS,
  );
  assert.equal(rows.find((row) => row.key === 'weight').value, formatWeight(e.weight));
  assert.match(rows.find((row) => row.key === 'dot').detail, /by the core \(explainCell\)/);
});

test('a fully masked row: −∞, weights 0, nothing NaN', () => {
  const r = mod.numpyExperiment({
    seed: 7,
    tokens: 5,
    d_model: 8,
    num_heads: 2,
    key_padding_mask: Uint8Array.from([1, 1, 1, 1, 1]),
  });
  const e = fromCoreExplanation(
    mod.explainCell(r, { head: 0, i: 2, j: 1, key_padding_mask: Uint8Array.from([1, 1, 1, 1, 1]) }),
  );
  assert.equal(e.fullyMasked, true);
  assert.equal(e.maskTerm, -Infinity);
  assert.equal(e.weight, 0);
  assert.equal(e.exp, 0);
  assert.ok(
    e.contribution.every((x) => x === 0),
    'a · v_j = 0',
  );
  const rows = stepRows(e, 'a', 'b');
  for (const row of rows) assert.doesNotMatch(row.value, /NaN/, row.key);
  assert.equal(rows.find((row) => row.key === 'mask').value, '−∞');
});
