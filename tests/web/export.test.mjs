// The export formats (CSV, JSON), the file names and the PNG snapshot's arrangement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EXPORT_FORMAT,
  MAX_EXPORT_CELLS,
  csvField,
  elideText,
  exportFileName,
  float32String,
  snapshotLayout,
  weightsCsv,
  weightsJson,
} from '../../web/src/chrome/export.js';

// Module 08's head 0 / head 1, query 0 (as float32), padded with made-up rows: h=2, n=2, m=3.
const W = new Float32Array([
  0.424, 0.576, 0, /* head 0, query 0 */ 0.25, 0.5, 0.25 /* head 0, query 1 */, 0, 0, 1,
  /* head 1, query 0 */ 0, 0, 0 /* head 1, query 1: fully masked */,
]);
const MASKED = new Uint8Array([0, 0, 0, 1]);
const Q = ['the', 'cat'];
const K = ['a', 'b,c', 'say "hi"'];

test('float32String is the shortest decimal that restores the float32', () => {
  assert.equal(float32String(Math.fround(0.424)), '0.424');
  assert.equal(float32String(Math.fround(0.1)), '0.1');
  assert.equal(float32String(0), '0');
  assert.equal(float32String(-0), '0');
  assert.equal(float32String(1), '1');
  assert.equal(float32String(Math.fround(1e-7)), '1e-7');
  for (const x of [
    Math.fround(1 / 3),
    Math.fround(0.123456789),
    Math.fround(2 ** -20 * 3),
    Math.fround(0.999999),
  ]) {
    const s = float32String(x);
    assert.equal(Math.fround(Number(s)), x, s);
    const digits = s.replace(/e.*$/, '').replace('.', '').replace(/^0+/, '');
    assert.ok(digits.length <= 9, `${s}: ${digits.length} significant digits`);
  }
  assert.equal(float32String(NaN), 'NaN');
});

test('csv fields are quoted only when needed (RFC 4180)', () => {
  assert.equal(csvField('cat'), 'cat');
  assert.equal(csvField('b,c'), '"b,c"');
  assert.equal(csvField('say "hi"'), '"say ""hi"""');
  assert.equal(csvField('a\nb'), '"a\nb"');
  assert.equal(csvField(3), '3');
});

test('weightsCsv: one row per cell of every head shown, header first, CRLF', () => {
  const csv = weightsCsv({ weights: W, heads: [0, 1], queryTokens: Q, keyTokens: K });
  const lines = csv.split('\r\n');
  assert.equal(lines.at(-1), '');
  assert.equal(lines[0], 'head,query_index,query,key_index,key,weight');
  assert.equal(lines.length, 1 + 2 * 2 * 3 + 1);
  assert.equal(lines[1], '0,0,the,0,a,0.424');
  assert.equal(lines[2], '0,0,the,1,"b,c",0.576');
  assert.equal(lines[3], '0,0,the,2,"say ""hi""",0');
  assert.equal(lines[9], '1,0,the,2,"say ""hi""",1');
  // A subset of heads: only head 1, with its own index.
  const one = weightsCsv({ weights: W, heads: [1], queryTokens: Q, keyTokens: K }).split('\r\n');
  assert.equal(one.length, 1 + 6 + 1);
  assert.ok(one.slice(1, -1).every((l) => l.startsWith('1,')));
});

test('weightsJson: tokens, config and the weights as h × n × m, masked rows', () => {
  const config = { d_model: 8, num_heads: 2, d_head: 4, seed: 7, is_causal: false };
  const doc = weightsJson({
    weights: W,
    heads: [0, 1],
    queryTokens: Q,
    keyTokens: K,
    maskedRows: MASKED,
    config,
  });
  assert.equal(doc.format, EXPORT_FORMAT);
  assert.equal(doc.version, 1);
  assert.deepEqual(doc.config, config);
  assert.notEqual(doc.config, config, 'a copy');
  assert.deepEqual(doc.tokens, Q);
  assert.deepEqual(doc.key_tokens, K);
  assert.deepEqual(doc.heads, [0, 1]);
  assert.deepEqual(doc.shape, [2, 2, 3]);
  assert.deepEqual(doc.attn_weights, [
    [
      [0.424, 0.576, 0],
      [0.25, 0.5, 0.25],
    ],
    [
      [0, 0, 1],
      [0, 0, 0],
    ],
  ]);
  assert.deepEqual(doc.fully_masked_rows, [
    [0, 0],
    [0, 1],
  ]);
  // Through JSON and back, every weight is the module's float32.
  const back = JSON.parse(JSON.stringify(doc));
  const flat = back.attn_weights.flat(2);
  flat.forEach((v, i) => assert.equal(Math.fround(v), W[i]));
  const sub = weightsJson({ weights: W, heads: [1], queryTokens: Q, keyTokens: K, config });
  assert.deepEqual(sub.shape, [1, 2, 3]);
  assert.deepEqual(sub.attn_weights, [
    [
      [0, 0, 1],
      [0, 0, 0],
    ],
  ]);
  assert.deepEqual(sub.fully_masked_rows, [[0, 0]], 'no maskedRows given: none masked');
});

test('exports refuse shapes that disagree, naming them', () => {
  assert.throws(
    () => weightsCsv({ weights: W, heads: [2], queryTokens: Q, keyTokens: K }),
    /head 2 is not one of the 2 heads/,
  );
  assert.throws(
    () =>
      weightsCsv({ weights: W, heads: [0], queryTokens: Q, keyTokens: ['a', 'b', 'c', 'd', 'e'] }),
    /attn_weights has 12 values, not a multiple of n\*m = 2\*5/,
  );
  assert.throws(
    () => weightsJson({ weights: W, heads: [0], queryTokens: [], keyTokens: K, config: {} }),
    /nothing to export: 0 query tokens, 3 key tokens/,
  );
});

test('file names', () => {
  assert.equal(
    exportFileName({ d_model: 8, num_heads: 2, seed: 7 }, 'png'),
    'mha-attention-d8-h2-seed7.png',
  );
  assert.equal(
    exportFileName({ d_model: 16, num_heads: 4, seed: 0, is_causal: true }, 'csv'),
    'mha-attention-d16-h4-seed0-causal.csv',
  );
  assert.equal(
    exportFileName({ d_model: 64, num_heads: 4 }, 'json', 'Date Model/cross'),
    'date-model-cross-d64-h4.json',
  );
});

test('snapshotLayout: title, panels in rows that fit, legend below', () => {
  const base = {
    titleHeight: 18,
    captionHeight: 20,
    legend: { width: 224, height: 36 },
    legendCaptionHeight: 18,
    pad: 16,
    gap: 16,
  };
  const two = snapshotLayout({
    ...base,
    panels: [
      { width: 300, height: 200 },
      { width: 300, height: 200 },
    ],
    maxWidth: 1000,
  });
  assert.deepEqual(two.panels, [
    { x: 16, y: 70, captionY: 50 },
    { x: 332, y: 70, captionY: 50 },
  ]);
  assert.equal(two.width, 16 + 300 + 16 + 300 + 16);
  assert.deepEqual(two.legend, { x: 16, y: 50 + 220 + 16 });
  assert.equal(two.height, 286 + 36 + 18 + 16);
  // Narrow: one panel per row.
  const narrow = snapshotLayout({
    ...base,
    panels: [
      { width: 300, height: 200 },
      { width: 300, height: 100 },
    ],
    maxWidth: 400,
  });
  assert.deepEqual(
    narrow.panels.map((p) => [p.x, p.captionY]),
    [
      [16, 50],
      [16, 286],
    ],
  );
  assert.equal(narrow.width, 332);
  // A panel wider than maxWidth still gets a row of its own.
  const wide = snapshotLayout({ ...base, panels: [{ width: 900, height: 10 }], maxWidth: 400 });
  assert.equal(wide.width, 932);
  // A title wider than the panels widens the image up to maxWidth (beyond, it is elided).
  const one = [{ width: 300, height: 200 }];
  assert.equal(
    snapshotLayout({ ...base, panels: one, maxWidth: 1000, titleWidth: 500 }).width,
    532,
  );
  assert.equal(
    snapshotLayout({ ...base, panels: one, maxWidth: 1000, titleWidth: 5000 }).width,
    1000,
  );
  assert.equal(
    snapshotLayout({ ...base, panels: one, maxWidth: 1000, titleWidth: 100 }).width,
    332,
  );
});

test('elideText: the longest prefix that fits, with an ellipsis, cut between code points', () => {
  const measure = (s) => Array.from(s).length * 10; // 10 px per code point
  assert.equal(elideText('the cat sat', 110, measure), 'the cat sat'); // fits: unchanged
  assert.equal(elideText('the cat sat', 100, measure), 'the cat s…'); // 9 + 1 points: exactly 100
  assert.equal(elideText('the cat sat', 95, measure), 'the cat…'); // 'the cat ' + '…'; the trailing space dropped
  assert.equal(elideText('abcdef', 40, measure), 'abc…');
  assert.equal(elideText('abcdef', 5, measure), '…'); // not even one point fits
  // A surrogate pair (one code point) is kept whole or dropped whole.
  const cut = elideText('ab\u{1F600}cd', 40, measure);
  assert.equal(cut, 'ab\u{1F600}…');
  assert.ok(!/[\uD800-\uDBFF]…$/.test(elideText('ab\u{1F600}cd', 30, measure)));
  // Grapheme clusters stay whole: a decomposed accent, a flag, a joined emoji.
  const graphemes = (t) =>
    Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(t)).length * 10;
  assert.equal(elideText('cafe\u0301 noir', 50, graphemes), 'cafe\u0301…');
  assert.equal(elideText('go \u{1F1EB}\u{1F1F7} now', 50, graphemes), 'go \u{1F1EB}\u{1F1F7}…');
  const family = '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}';
  assert.equal(elideText(`a${family}bcd`, 30, graphemes), `a${family}…`);
  assert.equal(elideText(`a${family}bcd`, 20, graphemes), 'a…');
  // A 2048-token title against a real width: at most the width, ends in the ellipsis.
  const long = Array.from({ length: 2048 }, (_, i) => `w${i}`).join(' ');
  const got = elideText(long, 1168, measure);
  assert.ok(measure(got) <= 1168 && got.endsWith('…') && long.startsWith(got.slice(0, -1)));
  assert.equal(measure(got), 1160);
});

test('CSV and JSON refuse views of more than MAX_EXPORT_CELLS weights, before building anything', () => {
  // 2048 tokens x 2 heads: 8.4 M cells (12 heads froze the page for 30 s, then crashed the tab).
  const n = 2048;
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const p = {
    weights: new Float32Array(2 * n * n),
    heads: [0, 1],
    queryTokens: tokens,
    keyTokens: tokens,
  };
  const message =
    /2 heads × 2048 × 2048 = 8388608 weights are too many for one file \(at most 4194304\): save a PNG/;
  assert.equal(MAX_EXPORT_CELLS, 4194304);
  assert.throws(() => weightsCsv(p), message);
  assert.throws(() => weightsJson(p), message);
  // One head of 1024 x 1024 (1 M cells) is allowed.
  const small = tokens.slice(0, 1024);
  const csv = weightsCsv({
    weights: new Float32Array(1024 * 1024),
    heads: [0],
    queryTokens: small,
    keyTokens: small,
  });
  assert.equal(csv.split('\r\n').length, 1024 * 1024 + 2);
});
