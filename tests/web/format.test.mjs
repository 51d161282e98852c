import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatWeight, formatCount, truncateLabel, readoutText } from '../../web/src/draw/format.js';

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
