// Issue 6 in the page: its own timing (User Timing mha:update and mha:first-grid, mirrored on
// <html data-last-update-ms data-first-grid-ms>), typing coalesced to the latest input, the weight
// tables of large views built after the grids are painted. Values are checked, not speed: the
// speed is measured by scripts/bench* (a benchmark, not a test).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withCheckedPage, tableRow, useBrowserAndTargets } from './helpers.mjs';

const env = useBrowserAndTargets();
const TIMEOUT = 120_000;
const words = (n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const updates = (page) => page.getAttribute('html', 'data-updates').then(Number);

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`page timing and fluidity ${which ? 'opened from file://' : 'served over http'}`, { timeout: TIMEOUT }, () => {
    test('mha:first-grid and mha:update are measured after the grids are painted', () =>
      withCheckedPage(env.browser, target(), '#preset=module-08', async ({ page }) => {
        await page.waitForSelector('html[data-first-grid-ms]');
        const first = await page.evaluate(() => performance.getEntriesByName('mha:first-grid').map((e) => e.duration));
        assert.equal(first.length, 1, 'one first grid');
        assert.ok(first[0] > 0);
        assert.equal(Number(await page.getAttribute('html', 'data-first-grid-ms')), Number(first[0].toFixed(1)));
        const before = await updates(page);
        await page.fill('#seed', '8');
        await page.waitForFunction((b) => Number(document.documentElement.dataset.updates) > b, before);
        const measures = await page.evaluate(() => performance.getEntriesByName('mha:update').map((e) => e.duration));
        assert.ok(measures.length >= 2, 'the first view and the seed change');
        const last = measures[measures.length - 1];
        assert.ok(last > 0);
        assert.equal(Number(await page.getAttribute('html', 'data-last-update-ms')), Number(last.toFixed(1)));
        // The grids painted are those of seed 8 (module 08's numbers are seed 7's).
        assert.notDeepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        assert.match(await page.textContent('#summary'), /seed 8$/);
      }));

    test('typing fast: one update per frame at most, and the grids show the last text', () =>
      withCheckedPage(env.browser, target(), '#preset=module-08', async ({ page }) => {
        await page.waitForSelector('html[data-first-grid-ms]');
        const before = await updates(page);
        // Ten input events in one task: nothing in between can paint, so one update shows them all.
        await page.evaluate(() => {
          const text = document.getElementById('text');
          for (let i = 1; i <= 10; i++) {
            text.value = `Heads look at different things ${'x '.repeat(i)}`;
            text.dispatchEvent(new Event('input', { bubbles: true }));
          }
        });
        await page.waitForFunction((b) => Number(document.documentElement.dataset.updates) > b, before);
        await page.waitForTimeout(200); // no late update of a stale input follows
        assert.equal(await updates(page), before + 1, 'coalesced into one update');
        assert.equal(await page.locator('table[data-head="0"] tbody tr').count(), 15, 'the last text: 15 tokens');
        assert.match(await page.textContent('#summary'), /^n = 15 tokens/);
      }));

    test('64 tokens, 8 heads: tables follow the painted grids, every row sums to 1', () =>
      withCheckedPage(env.browser, target(), `#text=${words(64)}&d_model=64&num_heads=8&seed=1`, async ({ page }) => {
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached', timeout: 60_000 });
        assert.equal(await page.locator('canvas[data-head]').count(), 8);
        assert.equal(await page.locator('table[data-head]').count(), 8);
        const sums = await page.$$eval('table[data-head="7"] tbody tr', (trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].reduce((s, td) => s + Number(td.dataset.weight), 0)));
        assert.equal(sums.length, 64);
        for (const s of sums) assert.ok(Math.abs(s - 1) < 1e-4, `row sum ${s}`);
      }));
  });
}
