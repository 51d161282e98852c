import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatWeight,
  formatCount,
  truncateLabel,
  readoutText,
  numpyArrayString,
  npRound,
  queryRowText,
} from '../../web/src/draw/format.js';

test('weights print with 3 decimals, never as -0.000', () => {
  assert.equal(formatWeight(0.42412), '0.424');
  assert.equal(formatWeight(0.5765), '0.577');
  assert.equal(formatWeight(1), '1.000');
  assert.equal(formatWeight(0), '0.000');
  assert.equal(formatWeight(-0), '0.000');
  assert.equal(formatWeight(-1e-9), '0.000');
  assert.equal(formatWeight(NaN), 'NaN');
});

test('counts are grouped by thousands', () => {
  assert.equal(formatCount(256), '256');
  assert.equal(formatCount(1048576), '1\u202F048\u202F576');
});

test('labels are cut by code points with an ellipsis', () => {
  assert.equal(truncateLabel('short', 10), 'short');
  assert.equal(truncateLabel('internationalisation', 10), 'internati…');
  // 'ab😀cd' is 5 code points; the emoji (2 UTF-16 units) is never split in half.
  assert.equal(truncateLabel('ab😀cd', 4), 'ab😀…');
  assert.equal(truncateLabel('ab😀cd', 5), 'ab😀cd');
});

test('readout line', () => {
  assert.equal(readoutText(0, 'Heads', 'at', 0.42412), "head 0 · query 'Heads' → key 'at': 0.424");
});

test('numpy array print: padding, trimmed zeros, signs, wrapping at 75', () => {
  assert.equal(numpyArrayString([0, 0, 0.424, 0.576, 0]), '[0.    0.    0.424 0.576 0.   ]');
  assert.equal(numpyArrayString([0, 0, 0, 0, 1]), '[0. 0. 0. 0. 1.]');
  assert.equal(numpyArrayString([1.5, -2, 10.25]), '[ 1.5  -2.   10.25]');
  assert.equal(numpyArrayString([0.1, 0.2]), '[0.1 0.2]');
  assert.equal(numpyArrayString([]), '[]');
  // np.round(np.linspace(0, 1, 20), 3): 20 five-character words wrap after 12 per line.
  const lin = Array.from({ length: 20 }, (_, i) => npRound(i / 19, 3));
  assert.equal(
    numpyArrayString(lin),
    '[0.    0.053 0.105 0.158 0.211 0.263 0.316 0.368 0.421 0.474 0.526 0.579\n' +
      ' 0.632 0.684 0.737 0.789 0.842 0.895 0.947 1.   ]',
  );
  assert.throws(() => numpyArrayString([1e-5, 1]), /scientific notation/);
  assert.throws(() => numpyArrayString([NaN]), /finite/);
});

test('np.round rounds half to even', () => {
  assert.equal(npRound(0.0625, 3), 0.062);
  assert.equal(npRound(0.4246, 3), 0.425);
  assert.equal(npRound(2.5, 0), 2);
});

test("query row line reads as module 08's verified output once whitespace collapses", () => {
  // The two lines of module 08's "verified output" (the course module on multi-head attention),
  // quoted as it prints them.
  const printed = [
    'head 0 weights, token 0: [0. 0. 0.424 0.576 0. ]',
    'head 1 weights, token 0: [0. 0. 0. 0. 1. ]',
  ];
  const collapse = (s) => s.replace(/\s+/g, ' ');
  assert.equal(collapse(queryRowText(0, 0, [1e-9, 2e-7, 0.42412, 0.57588, 3e-6])), printed[0]);
  // The module's head 1 line ends "1. ]", but numpy prints a row that rounds to 0s and a 1 as
  // "[0. 0. 0. 0. 1.]" (no fraction digits, so no right padding); that is what the page shows.
  assert.equal(
    queryRowText(1, 0, [0, 0, 1e-12, 4e-5, 0.99995]),
    'head 1 weights, token 0: [0. 0. 0. 0. 1.]',
  );
});

test("the core's module 08 weights (mha numpy-experiment, seed 7) print as the module's head 0 line", async (t) => {
  const { execFileSync } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const mha = new URL('../../build/native/mha', import.meta.url).pathname;
  if (!existsSync(mha)) return t.skip('build/native/mha not built (./scripts/build.sh)');
  const r = JSON.parse(
    execFileSync(
      mha,
      ['numpy-experiment', '--seed', '7', '--tokens', '5', '--d-model', '8', '--num-heads', '2'],
      { encoding: 'utf8' },
    ),
  );
  assert.equal(
    queryRowText(0, 0, r.attn_weights[0][0]),
    'head 0 weights, token 0: [0.    0.    0.424 0.576 0.   ]',
  );
  assert.equal(
    queryRowText(1, 0, r.attn_weights[1][0]),
    'head 1 weights, token 0: [0. 0. 0. 0. 1.]',
  );
});
