// Rows whose keys are all masked (weights all 0, fully_masked_rows = 1) are hatched and labelled.
// module 08's experiment never masks a whole row, so this draws the page's own grid module
// (web/src/draw/heatmap.js, table.js) from a synthetic result in a small harness page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interpolateViridis } from 'd3-scale-chromatic';
import { parseColor } from '../../web/src/draw/color.js';
import { useHarness, screenPixel, canvasPixelAt } from './helpers.mjs';

const HARNESS = `
import { HeadHeatmap, readTheme } from './draw/heatmap.js';
import { headTable } from './draw/table.js';
const tokens = ['a', 'b', 'c'];
// h = 1 head, n = m = 3; row 1 has every key masked.
const weights = Float32Array.from([1, 0, 0, 0, 0, 0, 0.5, 0.5, 0]);
const masked = Uint8Array.from([0, 1, 0]);
const result = { n: 3, m: 3, num_heads: 1, attn_weights: weights, fully_masked_rows: masked };
const hm = new HeadHeatmap({ head: 0, result, tokens, onSelect: () => {} });
const heads = document.getElementById('heads');
const hidden = document.createElement('div');
hidden.className = 'visually-hidden';
hidden.append(headTable(0, weights, masked, tokens, tokens));
heads.append(hm.element, hidden);
hm.resize(400, readTheme(heads));
window.hm = hm;
document.documentElement.dataset.ready = 'true';
`;

const env = useHarness(HARNESS, {
  css: ['common.css', 'style.css'],
  body: '<div id="heads" class="heads"></div>',
});

test('a fully masked row is hatched on the canvas and marked in the table', async () => {
  const page = await env.browser.newPage({ viewport: { width: 800, height: 600 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(env.url);
  await page.waitForSelector('html[data-ready="true"]');

  // What the screen shows at row r, a fraction f along the row, a fraction y down the row (the
  // hatch is a layer over the cells). Cells this large print their weight at the centre, so a
  // cell's own colour is read near its top-left corner (y = 0.12, f 0.12 of a cell in).
  const box = await page.locator('canvas[data-head="0"]').boundingBox();
  const cell = Number(await page.getAttribute('canvas[data-head="0"]', 'data-cell'));
  const px = (r, f, y = 0.5) => screenPixel(page, box.x + f * 3 * cell, box.y + (r + y) * cell);
  const CORNER = 0.12;
  assert.equal(
    await page.getAttribute('canvas[data-head="0"]', 'data-numbers'),
    '6',
    'numbers in the 6 unmasked cells',
  );

  const zero = parseColor(interpolateViridis(0));
  // Row 0 cell (0, 2) has weight 0: the viridis colour of 0.
  const normal = await px(0, (2 + CORNER) / 3, CORNER);
  assert.deepEqual(normal.slice(0, 3), zero);
  // Row 1 (masked): grey hatch, never the colour of weight 0, anywhere along the row.
  for (const f of [0.05, 0.2, 0.8, 0.95]) {
    const [r, g, b] = await px(1, f);
    assert.ok(Math.abs(r - g) < 8 && Math.abs(g - b) < 8, `grey at ${f}: ${[r, g, b]}`);
    assert.ok(
      Math.abs(r - zero[0]) + Math.abs(g - zero[1]) + Math.abs(b - zero[2]) > 60,
      `not viridis(0) at ${f}`,
    );
  }

  // Under the hatch, the pixel buffer has the row grey too (what a compact grid shows); the
  // hatch layer exists because a row is masked, and the PNG snapshot has it.
  const grey = [154, 154, 154, 255];
  assert.deepEqual(
    await canvasPixelAt(page, 'canvas[data-head="0"]', 0.5 * cell, 1.5 * cell),
    grey,
  );
  assert.equal(await page.locator('canvas.hm-masked:not([hidden])').count(), 1);
  const shot = await page.evaluate(
    ([c, k]) => {
      const snap = window.hm.snapshotCanvas();
      const a = window.hm.canvas.getBoundingClientRect(),
        b = window.hm.element.getBoundingClientRect();
      const s = snap.width / b.width;
      const at = (r, f, y = 0.5) =>
        Array.from(
          snap
            .getContext('2d')
            .getImageData(
              Math.floor((a.left - b.left + f * 3 * c) * s),
              Math.floor((a.top - b.top + (r + y) * c) * s),
              1,
              1,
            ).data,
        );
      return { normal: at(0, (2 + k) / 3, k), masked: [0.05, 0.2, 0.8, 0.95].map((f) => at(1, f)) };
    },
    [cell, CORNER],
  );
  assert.deepEqual(shot.normal.slice(0, 3), zero);
  for (const [r, g, b] of shot.masked) {
    assert.ok(Math.abs(r - g) < 8 && Math.abs(g - b) < 8, `snapshot grey: ${[r, g, b]}`);
    assert.ok(
      Math.abs(r - zero[0]) + Math.abs(g - zero[1]) + Math.abs(b - zero[2]) > 60,
      'snapshot: not viridis(0)',
    );
  }
  // New weights without a masked row: the layer is hidden, row 1 shows its colour.
  await page.evaluate(() => {
    const result = {
      n: 3,
      m: 3,
      num_heads: 1,
      attn_weights: Float32Array.from([1, 0, 0, 0, 0, 1, 0.5, 0.5, 0]),
      fully_masked_rows: new Uint8Array(3),
    };
    window.hm.setData({ result, tokens: ['a', 'b', 'c'] });
    window.hm.resize(400, { ink: '#000', accent: '#b3006b' });
  });
  assert.equal(await page.locator('canvas.hm-masked:not([hidden])').count(), 0);
  assert.deepEqual((await px(1, CORNER / 3, CORNER)).slice(0, 3), zero);
  const tr = page.locator('table[data-head="0"] tbody tr[data-row="1"]');
  assert.equal(await tr.getAttribute('data-masked'), 'true');
  assert.match(await tr.locator('th[scope="row"]').textContent(), /^b.*\(every key masked\)$/);
  assert.deepEqual(await tr.locator('td').allTextContents(), ['0.000', '0.000', '0.000']);
  assert.deepEqual(errors, []);
  await page.close();
});
