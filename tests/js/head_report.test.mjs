// mod.headReport (docs/js-api.md, docs/patterns.md "Head report card"): a previous-token head
// scores 1 against the mean of 1 / visible keys, the golden card of tests/fixtures/head_report.json
// (numpy) for one example by word, and bad input as an Error naming it.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, loadModule } from './module.mjs';

const golden = JSON.parse(readFileSync(path.join(root, 'tests/fixtures/head_report.json'), 'utf8'));

let mod;
before(async () => {
  mod = await loadModule();
});

const byName = (head) => Object.fromEntries(head.scores.map((s) => [s.name, s]));

test('a previous-token head scores 1 against the mean of 1 / visible keys', () => {
  const n = 5;
  const w = new Float32Array(n * n);
  w[0] = 1;
  for (let i = 1; i < n; i++) w[i * n + i - 1] = 1;
  const card = mod.headReport({ layers: [w], num_heads: 1, n, tokens: ['a', 'b', 'c', 'd', 'e'] });
  const s = byName(card.heads[0]);
  assert.equal(s.previous_token_argmax.value, 1);
  assert.ok(Math.abs(s.previous_token_argmax.chance - (1 / 2 + 1 / 3 + 1 / 4 + 1 / 5) / 4) < 1e-15);
  assert.equal(s.argmax_offset.offset, -1);
  assert.deepEqual(card.heads[0].labels, ['previous-token']);
  assert.match(s.previous_token_argmax.figure, /Voita et al\. 2019/);
});

test('one example by word gives the numpy card', () => {
  const ex = golden.examples[2];
  const n = ex.tokens.length;
  const layers = ex.attn.map((layer) => Float32Array.from(layer.flat(2)));
  const card = mod.headReport({
    layers,
    num_heads: 3,
    n,
    tokens: ex.tokens,
    word_index: ex.word_index,
  });
  assert.equal(card.by_word, true);
  assert.equal(card.heads.length, 6);
  card.heads.forEach((head, k) => {
    for (const s of head.scores) {
      const g = golden.example_2_by_word[k][s.name];
      assert.equal(s.count, g.count, s.name);
      if (g.value === null) {
        assert.equal(s.value, null, s.name);
        continue;
      }
      assert.ok(Math.abs(s.value - g.value) < 1e-12, `${s.name} ${s.value} vs ${g.value}`);
      assert.ok(Math.abs(s.chance - g.chance) < 1e-12, `${s.name} chance`);
    }
  });
});

test('bad input is an Error naming it', () => {
  const w = new Float32Array([1, 0, 0.5, 0.5]);
  assert.throws(
    () => mod.headReport({ layers: [w], num_heads: 1, n: 2, tokens: ['a'] }),
    /tokens has 1/,
  );
  assert.throws(
    () =>
      mod.headReport({ layers: [w], num_heads: 1, n: 2, tokens: ['a', 'b'], word_index: [0, 2] }),
    /word_index/,
  );
  assert.throws(
    () =>
      mod.headReport({
        layers: [new Float32Array([1, 0, NaN, 1])],
        num_heads: 1,
        n: 2,
        tokens: ['a', 'b'],
      }),
    /NaN/,
  );
});

// mod.byWordWeights: the by-word view of stacked (n, n) matrices (mha::by_word_stack).
test('byWordWeights: sum over key pieces, mean over query pieces, against hand-computed values', () => {
  // Two heads of 4 tokens; words [0, 1, 1, 2] (<bos>, a word of two pieces, a word of one).
  const a = [
    [1, 0, 0, 0],
    [0.5, 0.5, 0, 0],
    [0.2, 0.3, 0.5, 0],
    [0.1, 0.2, 0.3, 0.4],
  ];
  const b = [
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [0.25, 0.25, 0.25, 0.25],
  ];
  const w = new Float32Array([...a.flat(), ...b.flat()]);
  const out = mod.byWordWeights(w, 4, new Int32Array([0, 1, 1, 2]));
  assert.ok(out instanceof Float32Array);
  // Head a: word 1's rows are tokens 1 and 2: key word 0 = mean(0.5, 0.2), key word 1 =
  // mean(0.5, 0.3 + 0.5); word 2's row is token 3: 0.1 | 0.2 + 0.3 | 0.4.
  // Head b: word 1: mean(0, 0) | mean(1, 1) | 0; word 2: 0.25 | 0.5 | 0.25.
  const expected = [1, 0, 0, 0.35, 0.65, 0, 0.1, 0.5, 0.4, 1, 0, 0, 0, 1, 0, 0.25, 0.5, 0.25];
  assert.equal(out.length, expected.length);
  for (let i = 0; i < expected.length; i++)
    assert.ok(Math.abs(out[i] - expected[i]) < 1e-6, `entry ${i}: ${out[i]} vs ${expected[i]}`);
  // An array works as well as an Int32Array; one word per token is the identity.
  assert.deepEqual([...mod.byWordWeights(w, 4, [0, 1, 2, 3])], [...w]);
});

test('byWordWeights: bad input is an Error naming it', () => {
  const w = new Float32Array(9).fill(1 / 3);
  assert.throws(
    () => mod.byWordWeights(w, 2, [0, 1]),
    /weights has 9 values, expected a whole number of n\*n = 4/,
  );
  assert.throws(() => mod.byWordWeights(w, 3, [0, 2, 2]), /word_index\[1\] = 2 after 0/);
  assert.throws(() => mod.byWordWeights(w, 3, [0, 1]), /by word/);
  assert.throws(() => mod.byWordWeights(w, 3, [0, 0.5, 1]), /wordIndex\[1\] must be an integer/);
  assert.throws(() => mod.byWordWeights(w, 0, [0]), /n must be an integer from 1/);
  assert.throws(() => mod.byWordWeights(w, 3, 'abc'), /wordIndex must be an Int32Array/);
});
