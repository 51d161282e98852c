// Imported views saved to one file and read back (web/src/explain/view_file.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isViewFile,
  parseViewFile,
  viewFileText,
  VIEW_FORMAT,
} from '../../web/src/explain/view_file.js';

const view = () => {
  const layers = [0, 1].map((l) =>
    Float32Array.from({ length: 2 * 3 * 3 }, (_, i) => ((i * 7 + l * 3) % 10) / 9 / 3.7),
  );
  return {
    layers,
    num_heads: 2,
    n: 3,
    m: 3,
    rows: ['a', 'b', 'c"'],
    cols: ['a', 'b', 'c"'],
    layer: 0,
    heads: [1],
    source: 'x.npy (float32, shape (2, 2, 3, 3))',
  };
};

test('a view file round-trips the tensor float32-exact, the labels and the view', () => {
  const v = view();
  const text = viewFileText(v);
  assert.ok(isViewFile(text));
  const back = parseViewFile(text);
  assert.equal(back.num_layers, 2);
  assert.deepEqual([back.num_heads, back.n, back.m, back.layer], [2, 3, 3, 0]);
  assert.deepEqual(back.heads, [1]);
  assert.deepEqual(back.rows, v.rows);
  assert.equal(back.source, v.source);
  back.layers.forEach((l, k) => assert.deepEqual(Array.from(l), Array.from(v.layers[k])));
  assert.equal(JSON.parse(text).format, VIEW_FORMAT);
});

test('bad view files give a message naming the problem', () => {
  const good = JSON.parse(viewFileText(view()));
  const bad = (patch, re) =>
    assert.throws(() => parseViewFile(JSON.stringify({ ...good, ...patch })), re);
  assert.throws(() => parseViewFile('{"format": "mha-lab-attention-view", '), /does not parse/);
  assert.throws(() => parseViewFile('[1]'), /not an object/);
  bad({ format: 'other' }, /format is "other"/);
  bad({ version: 2 }, /version 2 is not supported/);
  bad({ n: 0 }, /n is 0/);
  bad({ query_tokens: ['a'] }, /query_tokens must be 3 strings/);
  bad({ attn_weights: [good.attn_weights[0]] }, /must hold 2 layers/);
  bad({ attn_weights: [good.attn_weights[0].slice(1), good.attn_weights[1]] }, /layer 0 must hold/);
  bad(
    {
      attn_weights: [good.attn_weights[0].map((w, i) => (i === 4 ? 'x' : w)), good.attn_weights[1]],
    },
    /layer 0, weight 4 is "x"/,
  );
  bad(
    {
      attn_weights: [good.attn_weights[0].map((w, i) => (i === 4 ? 1.5 : w)), good.attn_weights[1]],
    },
    /not a number in \[0, 1\]/,
  );
  bad({ view: { layer: 2 } }, /view\.layer 2/);
  bad({ view: { heads: [5] } }, /view\.heads/);
  assert.equal(isViewFile('{"format": "mha-lab-attention-weights"}'), false);
});
