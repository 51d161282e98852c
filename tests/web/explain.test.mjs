// The explain views' pure parts: hash keys, masks, one cell's steps, the pipeline's shapes and
// the parameter breakdown (web/src/explain/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EXPLAIN_KEYS,
  MASK_KINDS,
  parseCells,
  parseHeadList,
  normalizeCells,
  readMaskControls,
  maskLimits,
  defaultExplain,
  parseExplainHash,
  explainToHash,
  fitExplain,
} from '../../web/src/explain/explain_state.js';
import { formatPercent, ablatedList } from '../../web/src/explain/ablation.js';
import { parseHash, stateToHash } from '../../web/src/modes/random/random_state.js';
import {
  formatScore,
  labelText,
  distanceExtremes,
  thresholdText,
  allclose,
  hasTokenScores,
  TOKEN_COLUMNS,
} from '../../web/src/explain/patterns_panel.js';
import {
  parseTokenText,
  labelsFor,
  readFileBytes,
  MAX_FILE_BYTES,
} from '../../web/src/explain/file_load.js';
import { formatNumber, formatVector } from '../../web/src/explain/step.js';
import { pipelineStages, drawnHeads } from '../../web/src/explain/pipeline.js';
import { parameterBreakdown, validHeadCounts } from '../../web/src/explain/params_panel.js';

const ctx = (n, numHeads = 2) => ({
  state: { num_heads: numHeads },
  tokens: Array.from({ length: n }, (_, i) => `t${i}`),
});

test('every explain key round-trips through serialize and parse', () => {
  const values = {
    mask: ['none', 'padding', 'window', 'drawn'],
    pad: [0, 1, 3, 5],
    window: [0, 1, 4],
    drawn: [
      [],
      [[0, 1]],
      [
        [0, 1],
        [2, 3],
        [4, 0],
      ],
    ],
    off: [[], [1], [0, 1]],
    combine: ['', 'mean', 'max'],
  };
  for (const [key, list] of Object.entries(values)) {
    const spec = EXPLAIN_KEYS[key];
    for (const v of list) {
      const s = spec.serialize(v);
      if (s === null) {
        assert.deepEqual(v, spec.fallback, `${key}: only the fallback is left out`);
        continue;
      }
      const back = spec.parse(
        new URLSearchParams(`${key}=${encodeURIComponent(s)}`).get(key),
        ctx(5),
      );
      assert.deepEqual(back, { value: v }, `${key}=${s}`);
    }
  }
});

test('explain keys reject bad values with a note naming them', () => {
  const bad = [
    ['mask', 'causal', /mask=causal in the address is not one of none, padding, window, drawn/],
    ['pad', '6', /pad=6 .* from 0 to n=5/],
    ['pad', '-1', /pad=-1/],
    ['window', '5', /window=5 .* from 0 to 4/],
    ['window', 'x', /window=x/],
    ['drawn', '0.1,9.9', /names cell 9\.9, outside the 5 × 5 grid/],
    ['drawn', '0-1', /not a list of query\.key cells/],
    ['off', '2', /names head 2, outside 0\.\.1/],
    ['off', 'a', /not a list of head numbers/],
    ['combine', 'sum', /combine=sum .* not one of mean, max/],
  ];
  for (const [key, raw, re] of bad) {
    const r = EXPLAIN_KEYS[key].parse(raw, ctx(5));
    assert.ok('note' in r && !('value' in r), `${key}=${raw} is rejected`);
    assert.match(r.note, re);
  }
  // Markup stays text: the note quotes it, the page shows notes with textContent.
  assert.match(EXPLAIN_KEYS.mask.parse('<img src=x>', ctx(5)).note, /<img src=x>/);
});

test('cell and head lists', () => {
  assert.deepEqual(parseCells('0.1, 2.3'), [
    [0, 1],
    [2, 3],
  ]);
  assert.deepEqual(parseCells(''), []);
  assert.equal(parseCells('1.2.3'), null);
  assert.deepEqual(
    normalizeCells([
      [2, 3],
      [0, 1],
      [2, 3],
    ]),
    [
      [0, 1],
      [2, 3],
    ],
  );
  assert.deepEqual(parseHeadList('3,1,3'), [1, 3]);
  assert.equal(parseHeadList('1,,2'), null);
  assert.equal(MASK_KINDS.length, 4);
});

test('mask controls: only the field the chosen mask uses can be an error', () => {
  assert.deepEqual(readMaskControls({ mask: 'window', pad: 'x', window: '2' }, 5), {
    ok: true,
    value: { mask: 'window', pad: 1, window: 2 },
  });
  const r = readMaskControls({ mask: 'padding', pad: '7', window: '1' }, 5);
  assert.equal(r.ok, false);
  assert.equal(r.key, 'pad');
  assert.match(r.message, /pad=7 is not a whole number from 0 to 5/);
});

test("mask limits: the largest value readMaskControls accepts, the fields' max", () => {
  assert.deepEqual(maskLimits(5), { pad: 5, window: 4 });
  assert.deepEqual(maskLimits(2048), { pad: 2048, window: 2047 });
  assert.deepEqual(maskLimits(1), { pad: 1, window: 0 });
  for (const n of [1, 5, 2048]) {
    const { pad, window } = maskLimits(n);
    assert.equal(readMaskControls({ mask: 'padding', pad: String(pad), window: '0' }, n).ok, true);
    assert.equal(
      readMaskControls({ mask: 'padding', pad: String(pad + 1), window: '0' }, n).ok,
      false,
    );
    assert.equal(
      readMaskControls({ mask: 'window', pad: '0', window: String(window) }, n).ok,
      true,
    );
    assert.equal(
      readMaskControls({ mask: 'window', pad: '0', window: String(window + 1) }, n).ok,
      false,
    );
  }
});

test('numbers and vectors for the panel', () => {
  assert.equal(formatNumber(-Infinity), '−∞');
  assert.equal(formatNumber(-0.00001), '0.0000');
  assert.equal(formatNumber(-2.5), '−2.5000');
  assert.equal(formatVector([1, -2], 1), '[1.0, −2.0]');
});

test("pipeline: module 08's shapes for n = 5, d = 8, h = 2", () => {
  const s = Object.fromEntries(pipelineStages(5, 8, 2).map((x) => [x.key, x]));
  assert.deepEqual(Object.keys(s), [
    'x',
    'qkv',
    'split3',
    'split',
    'attend',
    'concat',
    'wo',
    'out',
  ]);
  assert.equal(s.x.shape, '(5, 8)');
  assert.equal(s.qkv.shape, '(5, 8) @ (8, 24) → (5, 24)');
  assert.match(s.qkv.note, /d × 3d/);
  assert.equal(s.split.shape, '2 × (5, 4) each');
  assert.equal(s.concat.shape, '2 × (5, 4) → (5, 8)');
  assert.equal(s.wo.shape, '(5, 8) @ (8, 8) → (5, 8)');
  assert.deepEqual(drawnHeads(3), [0, 1, 2]);
  assert.deepEqual(drawnHeads(16), [0, 1, null, 15]);
});

test('parameters: 4 d² (+4 d) by matrix; valid head counts are the divisors', () => {
  for (const d of [8, 12, 512]) {
    const parts = parameterBreakdown(d);
    const sum = (bias) => parts.filter((p) => bias || !p.bias).reduce((a, p) => a + p.count, 0);
    assert.equal(sum(false), 4 * d * d);
    assert.equal(sum(true), 4 * d * d + 4 * d);
  }
  assert.deepEqual(validHeadCounts(12, 256), [1, 2, 3, 4, 6, 12]);
  assert.deepEqual(validHeadCounts(512, 256), [1, 2, 4, 8, 16, 32, 64, 128, 256]);
});

test('a whole hash: explain keys beside a preset round-trip, and state.js does not call them unknown', () => {
  const hash = '#preset=module-08&mask=drawn&drawn=0.3,1.1&off=1&combine=max';
  const parsed = parseHash(hash);
  assert.deepEqual(parsed.notes, []);
  const tokens = parsed.state.text.split(' ');
  const { value, notes } = parseExplainHash(hash, parsed.state, tokens);
  assert.deepEqual(notes, []);
  assert.deepEqual(value, {
    ...defaultExplain(),
    mask: 'drawn',
    drawn: [
      [0, 3],
      [1, 1],
    ],
    off: [1],
    combine: 'max',
  });
  assert.equal(`#${stateToHash(parsed.state)}${explainToHash(value)}`, hash.replace(',', '%2C'));
  assert.equal(explainToHash(defaultExplain()), '');
  // Fewer tokens or heads: what no longer exists is dropped.
  assert.deepEqual(fitExplain({ ...value, pad: 9, window: 9 }, 2, 1), {
    ...value,
    pad: 2,
    window: 1,
    drawn: [[1, 1]],
    off: [],
  });
});

test('relative change as a percentage, switch-off lists', () => {
  assert.equal(formatPercent(0.1234), '12.3 %');
  assert.equal(formatPercent(0.0001), '< 0.1 %');
  assert.equal(formatPercent(0), '0 %');
  assert.deepEqual([...ablatedList(4, [1, 3, 7])], [0, 1, 0, 1]);
});

test('pattern scores: "—" for a score with no row, labels or the content-based note, the closest and farthest heads', () => {
  assert.equal(formatScore(null), '—');
  assert.equal(formatScore(0.12345), '0.123');
  assert.equal(formatScore(2.5, 2), '2.50');
  assert.equal(labelText(['previous-token']), 'previous-token');
  assert.match(labelText([]), /content-based or mixed/);
  // 3 heads: d(0,1) = 0.2, d(0,2) = 0.9, d(1,2) = 0.5.
  const dist = Float64Array.from([0, 0.2, 0.9, 0.2, 0, 0.5, 0.9, 0.5, 0]);
  assert.deepEqual(distanceExtremes(dist, 3), {
    closest: { a: 0, b: 1, d: 0.2 },
    farthest: { a: 0, b: 2, d: 0.9 },
  });
  assert.equal(distanceExtremes(Float64Array.of(0), 1), null);
  assert.match(
    thresholdText({
      previous_token: 0.5,
      local_band: 0.5,
      vertical_stripe: 0.5,
      long_range: 0.5,
      margin: 0.15,
    }),
    /beats a uniform head of the same shape by 0\.15: previous-token ≥ 0\.5/,
  );
});

test('pattern scores with tokens: the token columns and their label rule only when the core scored tokens', () => {
  const t = {
    previous_token: 0.5,
    local_band: 0.5,
    vertical_stripe: 0.5,
    long_range: 0.5,
    duplicate_token: 0.5,
    induction: 0.6,
    punctuation: 0.7,
    margin: 0.15,
  };
  assert.match(
    thresholdText(t, true),
    /long-range \(mean distance ÷ \(n − 1\)\) ≥ 0\.5, duplicate-token ≥ 0\.5, induction ≥ 0\.6, punctuation ≥ 0\.7\.$/,
  );
  assert.doesNotMatch(thresholdText(t), /induction/);
  assert.deepEqual(
    TOKEN_COLUMNS.map((c) => c[0]),
    ['duplicate_token', 'induction', 'punctuation'],
  );
  // Without repeats duplicate_token and induction are null; punctuation is a number whenever keys have tokens.
  assert.equal(
    hasTokenScores([{ scores: { duplicate_token: null, induction: null, punctuation: 0 } }]),
    true,
  );
  assert.equal(
    hasTokenScores([{ scores: { duplicate_token: null, induction: null, punctuation: null } }]),
    false,
  );
});

test('tokens for loaded attention: JSON, lines or spaces; the count must fit n (and m)', () => {
  assert.deepEqual(parseTokenText('The cat  sat'), { ok: true, tokens: ['The', 'cat', 'sat'] });
  assert.deepEqual(parseTokenText('a b\nc'), { ok: true, tokens: ['a b', 'c'] });
  assert.deepEqual(parseTokenText('["<s>", " cat"]'), { ok: true, tokens: ['<s>', ' cat'] });
  assert.deepEqual(parseTokenText('  '), { ok: true, tokens: [] });
  assert.match(parseTokenText('[1, 2]').message, /array of strings/);
  assert.match(parseTokenText('[oops').message, /do not parse/);
  assert.deepEqual(labelsFor([], 2, 2), {
    ok: true,
    rows: ['0', '1'],
    cols: ['0', '1'],
    note: 'No tokens given: rows and columns are numbered.',
  });
  assert.deepEqual(labelsFor(['a', 'b'], 2, 2).rows, ['a', 'b']);
  assert.deepEqual(labelsFor(['q', 'k1', 'k2'], 1, 2).cols, ['k1', 'k2']);
  assert.equal(
    labelsFor(['a', 'b', 'c'], 2, 2).message,
    '3 tokens given, but the attention has 2 query rows and 2 key columns: give 2 tokens, or none',
  );
  assert.match(labelsFor(['a'], 2, 3).message, /give 2 \+ 3 = 5 \(queries, then keys\) tokens/);
});

test('files: empty and oversized files are refused before reading', async () => {
  await assert.rejects(readFileBytes({ name: 'a.npy', size: 0 }), /a\.npy is empty \(0 bytes\)/);
  await assert.rejects(
    readFileBytes({ name: 'big.npy', size: MAX_FILE_BYTES + 1 }),
    /big\.npy has \d+ bytes; this page reads at most/,
  );
  const bytes = await readFileBytes(new Blob([Uint8Array.of(1, 2, 3)]));
  assert.deepEqual([...bytes], [1, 2, 3]);
});

test("allclose is numpy's np.allclose with its defaults (rtol 1e-5, atol 1e-8)", () => {
  // Module 08's two heads for token 0: not the same pattern.
  assert.equal(
    allclose(Float32Array.of(0, 0, 0.424, 0.576, 0), Float32Array.of(0, 0, 0, 0, 1)),
    false,
  );
  assert.equal(allclose([1, 0], [1 + 9e-6, 0]), true); // |diff| 9e-6 <= 1e-8 + 1e-5 * 1.000009
  assert.equal(allclose([1, 0], [1 + 2e-5, 0]), false);
  assert.equal(allclose([0], [5e-9]), true); // atol
  assert.equal(allclose([0], [2e-8]), false);
  assert.equal(allclose([NaN], [NaN]), false); // numpy: equal_nan=False
  assert.equal(allclose([1, 2], [1]), false);
});
