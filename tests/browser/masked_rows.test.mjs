// Rows whose keys are all masked (weights all 0, fully_masked_rows = 1) are hatched and labelled.
// module 08's experiment never masks a whole row, so this draws the page's own grid module
// (web/src/heatmap.js, table.js) from a synthetic result in a small harness page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interpolateViridis } from 'd3-scale-chromatic';
import { parseColor } from '../../web/src/color.js';
import { useHarness } from './helpers.mjs';

const HARNESS = `
import { HeadHeatmap, readTheme } from './heatmap.js';
import { headTable } from './table.js';
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
heads.append(hm.canvas, hidden);
hm.resize(400, readTheme(heads));
document.documentElement.dataset.ready = 'true';
`;

const env = useHarness(HARNESS, { body: '<div id="heads" class="heads"></div>' });

test('a fully masked row is hatched on the canvas and marked in the table', async () => {
  const page = await env.browser.newPage({ viewport: { width: 800, height: 600 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(env.url);
  await page.waitForSelector('html[data-ready="true"]');

  const px = (row, colFrac) => page.$eval('canvas[data-head="0"]', (c, [r, f]) => {
    const x = Number(c.dataset.originX) + f * 3 * Number(c.dataset.cell);
    const y = Number(c.dataset.originY) + (r + 0.5) * Number(c.dataset.cell);
    const probe = document.createElement('canvas');
    probe.width = probe.height = 1;
    const ctx = probe.getContext('2d', { willReadFrequently: true });
    const s = window.devicePixelRatio;
    ctx.drawImage(c, Math.floor(x * s), Math.floor(y * s), 1, 1, 0, 0, 1, 1);
    return Array.from(ctx.getImageData(0, 0, 1, 1).data);
  }, [row, colFrac]);

  const zero = parseColor(interpolateViridis(0));
  // Row 0 cell (0, 2) has weight 0: the viridis colour of 0.
  const normal = await px(0, 2.5 / 3);
  assert.deepEqual(normal.slice(0, 3), zero);
  // Row 1 (masked): grey hatch, never the colour of weight 0, anywhere along the row.
  for (const f of [0.05, 0.2, 0.8, 0.95]) {
    const [r, g, b] = await px(1, f);
    assert.ok(Math.abs(r - g) < 8 && Math.abs(g - b) < 8, `grey at ${f}: ${[r, g, b]}`);
    assert.ok(Math.abs(r - zero[0]) + Math.abs(g - zero[1]) + Math.abs(b - zero[2]) > 60, `not viridis(0) at ${f}`);
  }

  const tr = page.locator('table[data-head="0"] tbody tr[data-row="1"]');
  assert.equal(await tr.getAttribute('data-masked'), 'true');
  assert.match(await tr.locator('th[scope="row"]').textContent(), /^b.*\(every key masked\)$/);
  assert.deepEqual(await tr.locator('td').allTextContents(), ['0.000', '0.000', '0.000']);
  assert.deepEqual(errors, []);
  await page.close();
});
