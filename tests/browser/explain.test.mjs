// The explain views (web/src/explain/) in the built page: numbers read from the page and
// compared with module 08's golden data (tests/fixtures/numpy_mha.json, written by numpy) and
// with the page's own grids. Needs ./scripts/build.sh first.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, openPage, tableRow, cellCentre, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 60_000;
const env = useBrowserAndTargets();
const MODULE_08 = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/numpy_mha.json'), 'utf8'))
  .cases.find((c) => c.seed === 7 && c.n === 5 && c.d_model === 8 && c.num_heads === 2);

/** numpy's Q = X @ W for row i, columns c0 … c1 (the fixture's float64 values). */
function projected(W, i, c0, c1) {
  const d = MODULE_08.d_model;
  const X = MODULE_08.X.data;
  const out = [];
  for (let c = c0; c <= c1; c++) {
    let s = 0;
    for (let t = 0; t < d; t++) s += X[i * d + t] * W.data[t * d + c];
    out.push(s);
  }
  return out;
}

async function withPage(hash, fn) {
  const p = await openPage(env.browser, env.servers.targets[0], hash);
  try {
    await fn(p);
    assert.deepEqual(p.problems, [], 'no console errors, failed requests or foreign requests');
  } finally {
    await p.close();
  }
}

/** The step panel's rows as {step: {text, value}} (value: data-value parsed). */
function steps(page) {
  return page.$$eval('#explain-step tr[data-step]', (trs) => Object.fromEntries(trs.map((tr) => [
    tr.dataset.step,
    { text: tr.querySelector('td').textContent, value: tr.dataset.value === undefined ? null : JSON.parse(tr.dataset.value.replace(/^-Infinity$/, '"-Infinity"')) },
  ])));
}

function close(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  actual.forEach((a, i) => assert.ok(Math.abs(a - expected[i]) <= tol * Math.max(1, Math.abs(expected[i])),
    `${what}[${i}]: ${a} vs ${expected[i]} (tolerance ${tol}, relative above 1)`));
}

describe('explain views', { timeout: TIMEOUT }, () => {
  test('click a cell: the step panel shows module 08\'s numbers for head 0, query 0, key 2', () =>
    withPage('#preset=module-08', async ({ page }) => {
      assert.equal(await page.$eval('#explain-step', (d) => d.open), true, 'the step panel is open');
      const c = await cellCentre(page, 0, 0, 2);
      await page.mouse.click(c.x, c.y);
      await page.waitForSelector('#explain-step [data-cell="0.0.2"]');
      const s = await steps(page);
      // q_0 and k_2 of head 0 are numpy's (X @ Wq)[0, 0:4] and (X @ Wk)[2, 0:4]; float32 copies.
      close(s.q.value, projected(MODULE_08.Wq, 0, 0, 3), 1e-5, 'q_0');
      close(s.k.value, projected(MODULE_08.Wk, 2, 0, 3), 1e-5, 'k_2');
      close(s.v.value, projected(MODULE_08.Wv, 2, 0, 3), 1e-5, 'v_2');
      const dot = s.q.value.reduce((a, x, t) => a + x * s.k.value[t], 0);
      close([s.dot.value], [dot], 1e-5, 'q·k');
      close([s.scaled.value], [dot / 2], 1e-5, 'q·k / √4');
      assert.equal(s.mask.value, 0);
      assert.equal(s.mask.text, '0');
      // The weight: module 08 prints 0.424; the fixture holds numpy's full value.
      assert.equal(s.weight.text, '0.424');
      close([s.weight.value], [MODULE_08.expected.attn_weights.data[2]], 1e-6, 'a_0,2');
      close([s.exp.value / s.sum.value], [s.weight.value], 1e-6, 'exp / row sum');
      close(s.contribution.value, s.v.value.map((x) => x * s.weight.value), 1e-6, 'a · v');
      // The grid's table agrees.
      assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
      // Another click, in head 1: module 08's 1.000 on key 4.
      const c2 = await cellCentre(page, 1, 0, 4);
      await page.mouse.click(c2.x, c2.y);
      await page.waitForSelector('#explain-step [data-cell="1.0.4"]');
      const s2 = await steps(page);
      assert.equal(s2.weight.text, '1.000');
      close(s2.q.value, projected(MODULE_08.Wq, 0, 4, 7), 1e-5, 'head 1 q_0');
    }));

  test('causal: a masked cell shows the −∞ mask term and weight 0', () =>
    withPage('#preset=module-08&causal=1', async ({ page }) => {
      // The causal preset variant is a custom state; the hash keeps the settings.
      const c = await cellCentre(page, 0, 1, 3);
      await page.mouse.click(c.x, c.y);
      await page.waitForSelector('#explain-step [data-cell="0.1.3"]');
      const s = await steps(page);
      assert.equal(s.mask.text, '−∞');
      assert.equal(s.score.text, '−∞');
      assert.equal(s.weight.text, '0.000');
      assert.equal(s.dot.text, 'not used (masked)');
      assert.doesNotMatch(await page.textContent('#explain-step'), /NaN/);
    }));

  test('pipeline and parameters: module 08\'s shapes, 256 for every valid num_heads, the divisibility error', () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-pipeline > summary');
      const shapes = await page.$$eval('#explain-pipeline [data-stage]', (lis) =>
        Object.fromEntries(lis.map((li) => [li.dataset.stage, li.querySelector('.pipeline-shape').textContent])));
      assert.equal(shapes.x, '(5, 8)');
      assert.equal(shapes.qkv, '(5, 8) @ (8, 24) → (5, 24)');
      assert.equal(shapes.split, '2 × (5, 4) each');
      assert.equal(shapes.out, '(5, 8)');
      assert.equal(await page.locator('#explain-pipeline [data-stage="split"] .pipeline-head').count(), 2);

      await page.click('#explain-params > summary');
      const rows = await page.$$eval('#explain-params tr[data-heads]', (trs) => trs.map((tr) => [Number(tr.dataset.heads), Number(tr.dataset.count)]));
      // PyTorch's counts (tests/fixtures/param_counts.json): 256 for d_model 8 and 1, 2, 4, 8 heads.
      const torch = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/param_counts.json'), 'utf8')).counts
        .filter((c) => c.d_model === 8 && !c.bias && c.kdim === 8 && c.vdim === 8);
      assert.deepEqual(rows.map((r) => r[0]), [1, 2, 4, 8]);
      for (const [heads, count] of rows) {
        const t = torch.find((c) => c.num_heads === heads);
        if (t) assert.equal(count, t.count, `num_heads=${heads}`);
        assert.equal(count, 256);
      }
      assert.equal(await page.getAttribute('#explain-params .params-verdict', 'data-same'), 'true');
      assert.match(await page.textContent('#explain-params tr[data-total="bias"]'), /288/);
      await page.fill('#explain-params .params-try input', '3');
      assert.match(await page.textContent('#explain-params .params-try-out'), /d_model=8 is not divisible by num_heads=3/);
      await page.fill('#explain-params .params-try input', '4');
      assert.equal(await page.textContent('#explain-params .params-try-out'), 'num_heads=4: d_head = 2, 256 parameters.');
    }));

  test('one head versus many: the h = 1 grid beside the current heads, rows summing to 1', () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-compare > summary');
      await page.waitForSelector('#explain-compare table[data-compare="single"]');
      assert.equal(await page.locator('#explain-compare canvas[data-compare="multi"]').count(), 2);
      const single = await page.$$eval('#explain-compare table[data-compare="single"] tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.weight))));
      assert.equal(single.length, 5);
      for (const row of single) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
      // The multi-head side is the page's own heads, number for number.
      const multi0 = await page.$$eval('#explain-compare table[data-compare="multi"][data-compare-head="0"] tbody tr[data-row="0"] td', (tds) => tds.map((td) => td.textContent));
      assert.deepEqual(multi0, ['0.000', '0.000', '0.424', '0.576', '0.000']);
      // The page's own grids are still found by [data-head] alone.
      assert.equal(await page.locator('canvas[data-head]').count(), 2);
      assert.equal(await page.locator('table[data-head]').count(), 2);
    }));
});
