// The English mode's experiments' arithmetic (web/src/modes/english/experiments.js, the chart's
// ticks of web/src/draw/curve.js) and the build's reading of their files (scripts/build_web.mjs
// readExperiments): hand-made curves with known answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  changeAfter,
  headsBeforeAPoint,
  oneHeadNote,
  stepFormed,
} from '../../web/src/modes/english/experiments_view.js';
import { niceTicks } from '../../web/src/draw/curve.js';
import { readExperiments } from '../../scripts/build_web.mjs';

const curve = (values) => ({ steps: values.map((value) => ({ value })) });

test('changeAfter: value(k) - value(0)', () => {
  assert.equal(changeAfter(curve([1.3, 1.31, 1.5]), 2), 1.5 - 1.3);
  assert.equal(changeAfter(curve([1.3, 1.31, 1.5]), 0), 0);
});

test('headsBeforeAPoint: the last step whose every predecessor is within one point', () => {
  assert.equal(headsBeforeAPoint(curve([0.998, 0.998, 0.995, 0.987, 0.999, 0.5])), 2);
  assert.equal(headsBeforeAPoint(curve([0.998, 0.987])), 0);
  assert.equal(headsBeforeAPoint(curve([0.9, 0.9, 0.89])), 2, 'exactly one point is within');
  assert.equal(headsBeforeAPoint(curve([0.5])), 0);
});

test('stepFormed: the first checkpoint at or above 0.5, else null', () => {
  const r = (v) => ({ steps: v.map((x, i) => ({ step: 400 * i, previous_token: { value: x } })) });
  assert.equal(stepFormed(r([0.05, 0.15, 0.77, 0.9])), 800);
  assert.equal(stepFormed(r([0.05, 0.15])), null);
  assert.equal(stepFormed(r([0.05, 0.5])), 400);
});

test('niceTicks: round values covering the range', () => {
  assert.deepEqual(niceTicks(0, 24, 12), [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
  assert.deepEqual(niceTicks(1.29, 1.71), [1.3, 1.4, 1.5, 1.6, 1.7]);
  assert.deepEqual(niceTicks(2, 2), [2]);
});

test('readExperiments: each file, the odd held-out lines, null without files, a broken file warned', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'mha-exp-'));
  try {
    const warnings = [];
    const warn = (m) => warnings.push(m);
    assert.equal(await readExperiments({ dir, warn }), null);
    await writeFile(path.join(dir, 'english_lm_heldout.txt'), 'a\nb\n\nc\nd\n');
    await writeFile(path.join(dir, 'english_lm_prune.json'), '{"steps": []}');
    await writeFile(path.join(dir, 'date_model_prune.json'), '{broken');
    const e = await readExperiments({ dir, warn });
    assert.deepEqual(e.heldout, ['b', 'd']);
    assert.deepEqual(e.english, { steps: [] });
    assert.equal(e.date, null);
    assert.equal(e.sweep, null);
    assert.equal(e.replay, null);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /date_model_prune\.json is not valid JSON.*no such experiment/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('oneHeadNote: the roles when some head earns one, else that the sweep is too short; spread; JS', () => {
  const model = (h, loss, roles, js) => ({
    num_heads: h,
    loss_per_char: loss,
    roles,
    nearest_js: js,
    best: { previous_token_argmax: { value: 0.1 + h / 100, chance: 0.03 } },
  });
  const none = [['no clear pattern'], ['no clear pattern']];
  const short = {
    steps: 600,
    models: [model(1, 1.52, none, null), model(2, 1.525, none, 0.37), model(16, 1.523, none, 0.34)],
  };
  assert.equal(
    oneHeadNote(short),
    'After 600 steps no head of any of these models has a clear pattern (the best previous-token score 0.11 to 0.26, ' +
      'chance 0.03): this sweep is too short to show what one head cannot hold. Their losses lie within 0.0050 nats ' +
      'per character of each other. The nearest other head of a layer (Jensen–Shannon distance, 0: the same pattern) ' +
      'goes from 0.37 with 2 heads to 0.34 with 16.',
  );
  const formed = {
    steps: 3200,
    models: [
      model(1, 1.4, [['previous token'], ['no clear pattern']], null),
      model(8, 1.3, [['previous token', 'first token'], ['punctuation']], 0.3),
    ],
  };
  assert.match(
    oneHeadNote(formed),
    /^With one head a layer each layer has one pattern \(L0: previous token; L1: no clear pattern\); with 8 heads a layer holds several \(L0: previous token, first token; L1: punctuation\)\. Their losses lie within 0\.1000/,
  );
  assert.equal(oneHeadNote({ steps: 1, models: [model(2, 1, none, 0.3)] }), '');
});
