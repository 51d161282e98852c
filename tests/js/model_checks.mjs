// What the trained models' node tests (date_model.test.mjs, english_model.test.mjs) check alike:
// a run result's `attention` list (docs/js-api.md "The trained models").
import assert from 'node:assert/strict';

/**
 * Checks `attention` (a translate() or run() result's list) entry by entry against `expected`
 * ({kind, layer, queries, keys, weights}: weights the Float32Array the entry must view, with the
 * same values): its fields, num_heads = `numHeads`, weights of numHeads*queries*keys floats on the
 * same buffer as expected.weights (a view, not a copy), and every row summing to 1 within 1e-5.
 */
export function checkAttention(attention, expected, numHeads) {
  assert.equal(attention.length, expected.length);
  attention.forEach((a, k) => {
    const e = expected[k];
    const what = `attention[${k}]`;
    assert.deepEqual(
      { kind: a.kind, layer: a.layer, num_heads: a.num_heads, queries: a.queries, keys: a.keys },
      { kind: e.kind, layer: e.layer, num_heads: numHeads, queries: e.queries, keys: e.keys },
      what,
    );
    assert.ok(a.weights instanceof Float32Array, what);
    assert.equal(a.weights.length, numHeads * e.queries * e.keys, what);
    assert.equal(a.weights.buffer, e.weights.buffer, `${what}: a view of the result's array`);
    assert.equal(a.weights.byteOffset, e.weights.byteOffset, what);
    assert.deepEqual(a.weights, e.weights, what);
    for (let row = 0; row < numHeads * e.queries; row++) {
      let sum = 0;
      for (let j = 0; j < e.keys; j++) sum += a.weights[row * e.keys + j];
      assert.ok(Math.abs(sum - 1) <= 1e-5, `${what}: row ${row} sums to ${sum}`);
    }
  });
}
