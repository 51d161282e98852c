// The figure export's layout and SVG (web/src/chrome/figure.js): every label as text, the cells in
// the page's colours, well-formed XML (xmllint, a real XML parser), the caption with the link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  checkPngSize,
  figureCaption,
  figureLayout,
  figureSvg,
  MAX_SVG_RECTS,
  xmlEscape,
} from '../../web/src/chrome/figure.js';
import { weightToRgb } from '../../web/src/draw/color.js';

const XMLLINT = '/usr/bin/xmllint';

function softmaxHeads(H, n, m, seed = 1) {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const w = new Float32Array(H * n * m);
  for (let r = 0; r < H * n; r++) {
    const e = Array.from({ length: m }, () => Math.exp(3 * rnd()));
    const z = e.reduce((a, b) => a + b, 0);
    for (let j = 0; j < m; j++) w[r * m + j] = e[j] / z;
  }
  return w;
}

const TOKENS = ['Heads', '<b>', 'at', '&', 'work', '"q"', 'ünï', '😀'];

function xmlWellFormed(svg) {
  return execFileSync(XMLLINT, ['--noout', '-'], { input: svg, encoding: 'utf8' });
}

test('the SVG holds every token label, head caption and the caption as text, escaped, well-formed', {
  skip: !existsSync(XMLLINT) && 'xmllint is not installed (libxml2-utils)',
}, () => {
  const n = TOKENS.length;
  const weights = softmaxHeads(3, n, n);
  const link = 'file:///page/index.html#text=Heads%20at%20work&seed=7';
  const fig = figureLayout({
    title: 'Multi-head attention: "Heads <b> at & work"',
    captionLines: figureCaption({ d_model: 8, num_heads: 3, seed: 7, is_causal: true }, link),
    weights,
    heads: [0, 2],
    queryTokens: TOKENS,
    keyTokens: TOKENS,
  });
  const svg = figureSvg(fig);
  assert.equal(xmlWellFormed(svg), '');
  assert.match(svg, /<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  for (const t of TOKENS)
    assert.equal(
      svg.split(`>${xmlEscape(t)}</text>`).length - 1,
      4,
      `${t}: 2 heads × (row + column)`,
    );
  assert.ok(
    svg.includes('>head 0</text>') &&
      svg.includes('>head 2</text>') &&
      !svg.includes('>head 1</text>'),
  );
  assert.ok(svg.includes(xmlEscape(link)), 'the link is in the figure');
  assert.ok(svg.includes('d_model 8 · num_heads 3 · seed 7 · causal'));
  for (const tick of ['0', '0.5', '1'])
    assert.ok(svg.includes(`>${tick}</text>`), `legend tick ${tick}`);
  // One rect per cell, in the page's colour for its weight.
  const rects = [
    ...svg.matchAll(
      /<rect x="([\d.]+)" y="([\d.]+)" width="(\d+)" height="\d+" fill="(#[0-9a-f]{6})"\/>/g,
    ),
  ];
  assert.equal(rects.length, 2 * n * n);
  const p = fig.panels[1];
  const [i, j] = [3, 5];
  const hex = `#${weightToRgb(weights[(2 * n + i) * n + j])
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('')}`;
  const cell = rects.find(
    (r) => Number(r[1]) === p.x + j * p.cell && Number(r[2]) === p.y + i * p.cell,
  );
  assert.equal(cell[4], hex);
});

test('a large figure embeds one PNG per head instead of rects', () => {
  const n = 80;
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const fig = figureLayout({
    title: 't',
    weights: softmaxHeads(4, n, n),
    heads: [0, 1, 2, 3],
    queryTokens: tokens,
    keyTokens: tokens,
  });
  assert.ok(fig.cells > MAX_SVG_RECTS);
  assert.throws(() => figureSvg(fig), /too many for one <rect>/);
  const svg = figureSvg(fig, { imageFor: (h) => `data:image/png;base64,HEAD${h}` });
  assert.equal((svg.match(/<image /g) ?? []).length, 4);
  assert.ok(svg.includes('href="data:image/png;base64,HEAD3"'));
  assert.equal((svg.match(/<rect /g) ?? []).length, 2, 'only the background and the legend');
  for (const t of tokens) assert.ok(svg.includes(`>${t}</text>`));
});

test('the layout is whole pixels, panels do not overlap, long captions wrap within the width', () => {
  const n = 16;
  const tokens = Array.from({ length: n }, (_, i) => `tok${i}`);
  const long = `file:///x/index.html#text=${'a%20'.repeat(200)}`;
  const fig = figureLayout({
    title: 'x',
    captionLines: [long],
    weights: softmaxHeads(8, n, n),
    heads: [0, 1, 2, 3, 4, 5, 6, 7],
    queryTokens: tokens,
    keyTokens: tokens,
    maxWidth: 1200,
  });
  assert.ok(Number.isInteger(fig.width) && Number.isInteger(fig.height));
  assert.ok(fig.width <= 1200, `width ${fig.width}`);
  const pieces = fig.texts
    .filter((t) => t.size === 12 && t.anchor === 'start' && !t.rotate)
    .map((t) => t.text);
  assert.ok(pieces.join('').includes(long), 'the wrapped pieces join to the whole link');
  for (let a = 0; a < fig.panels.length; a++) {
    for (let b = a + 1; b < fig.panels.length; b++) {
      const [p, q] = [fig.panels[a], fig.panels[b]];
      const apart =
        p.x + p.m * p.cell <= q.x ||
        q.x + q.m * q.cell <= p.x ||
        p.y + p.n * p.cell <= q.y ||
        q.y + q.n * q.cell <= p.y;
      assert.ok(apart, `panels ${a} and ${b} overlap`);
    }
  }
});

test('head notes wrap at spaces within the grid width, under the caption; columns fix the heads per row', () => {
  const n = 6;
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const note =
    'reads the field being written: of the attention of the rows writing each field, 78% falls on the input year';
  const fig = figureLayout({
    title: 'x',
    captionLines: [],
    weights: softmaxHeads(8, n, n),
    heads: [0, 1, 2, 3, 4, 5, 6, 7],
    queryTokens: tokens,
    keyTokens: tokens,
    headNames: tokens.concat(['a', 'b']).map((_, k) => `layer ${k >> 2}, head ${k % 4}`),
    headNotes: [note, '', 'short', '', '', '', '', ''],
    columns: 4,
  });
  const cell = fig.panels[0].cell;
  const notes = fig.texts.filter((t) => t.size === 11);
  const first = notes.filter((t) => t.x === fig.panels[0].x);
  assert.ok(first.length >= 2, `the long note wraps: ${first.length} lines`);
  assert.equal(
    first.map((t) => t.text).join(' '),
    note,
    'the lines join to the note, broken at spaces',
  );
  for (const t of first)
    assert.ok(
      t.text.length * 11 * 0.6 <= Math.max(120, n * cell) + 1e-9,
      `within the grid: ${t.text}`,
    );
  assert.deepEqual(
    notes.filter((t) => t.x === fig.panels[2].x).map((t) => t.text),
    ['short'],
  );
  const caption = fig.texts.find((t) => t.text === 'layer 0, head 0');
  assert.ok(
    first.every((t) => t.y > caption.y && t.y < fig.panels[0].y),
    'between the caption and the grid',
  );
  // Four heads a row: heads 0–3 on one row, 4–7 on the next, in the same columns.
  assert.deepEqual(
    fig.panels.map((p) => p.y),
    [0, 0, 0, 0, 1, 1, 1, 1].map((r) => fig.panels[4 * r].y),
  );
  assert.ok(fig.panels[4].y > fig.panels[0].y);
  assert.deepEqual(
    fig.panels.slice(4).map((p) => p.x),
    fig.panels.slice(0, 4).map((p) => p.x),
  );
  // Every grid of a row starts its labels below the tallest note.
  const plain = figureLayout({
    title: 'x',
    captionLines: [],
    weights: softmaxHeads(8, n, n),
    heads: [0, 1],
    queryTokens: tokens,
    keyTokens: tokens,
  });
  assert.equal(fig.panels[1].y - plain.panels[1].y, first.length * 14);
});

test('bad shapes are refused with a message', () => {
  const base = { title: 't', queryTokens: ['a', 'b'], keyTokens: ['a', 'b'] };
  assert.throws(
    () => figureLayout({ ...base, weights: new Float32Array(5), heads: [0] }),
    /not a multiple of n\*m/,
  );
  assert.throws(
    () => figureLayout({ ...base, weights: new Float32Array(8), heads: [2] }),
    /head 2 is not one of the 2 heads/,
  );
  assert.throws(
    () => figureLayout({ ...base, weights: new Float32Array(8), heads: [] }),
    /no heads/,
  );
});

test('xmlEscape escapes markup and drops characters XML forbids', () => {
  assert.equal(
    xmlEscape('<a href="x">&\'</a>'),
    '&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;',
  );
  assert.equal(xmlEscape('a\u0000b\u0007c\ud800d'), 'abcd');
  assert.equal(xmlEscape('😀'), '😀');
});

test('a PNG larger than a browser canvas draws is refused with a message before drawing', () => {
  const n = 512;
  const tokens = Array.from({ length: n }, (_, i) => `t${i}`);
  const fig = figureLayout({
    title: 't',
    weights: new Float32Array(12 * n * n).fill(1 / n),
    heads: [...Array(12).keys()],
    queryTokens: tokens,
    keyTokens: tokens,
  });
  assert.doesNotThrow(() => checkPngSize(fig, 1));
  assert.throws(
    () => checkPngSize(fig, 4),
    new RegExp(
      `the figure would be ${4 * fig.width} × ${4 * fig.height} pixels at 4×.*save an SVG`,
    ),
  );
});
