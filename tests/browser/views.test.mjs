// The views in headless Chromium (served over http): heads side by side as small multiples, one
// enlarged on its caption or Z; the weights printed in large cells; the selected query row as the
// course prints it, copyable; the readout in the flow; the first grid on a phone's first screen.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withCheckedPage, cellCentre, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 90_000;
const env = useBrowserAndTargets();
const withPage = (hash, fn, options) =>
  withCheckedPage(env.browser, env.servers.targets[0], hash, fn, options);

/** Module 03's four-head example (web/embed-example.html, id m03-four): 11 tokens, d_model 16, seed 3. */
const M03 = `#text=${encodeURIComponent("The animal didn't cross the street because it was too tired")}&d_model=16&num_heads=4&seed=3`;
const SIXTEEN = `#text=${encodeURIComponent('one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen')}&d_model=64&num_heads=8`;

/** Each head figure's box in the viewport. */
const figureBoxes = (page) =>
  page.$$eval('#heads > figure.head', (fs) =>
    fs.map((f) => {
      const r = f.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
    }),
  );

describe('views', { timeout: TIMEOUT }, () => {
  test("1280 x 900: module 03's four heads side by side, all within the viewport once the first is", () =>
    withPage(M03, async ({ page }) => {
      assert.match(
        await page.textContent('#summary'),
        /^n = 11 tokens · d_model = 16 · num_heads = 4/,
      );
      await page.$eval('#heads > figure.head', (f) => f.scrollIntoView({ block: 'start' }));
      const boxes = await figureBoxes(page);
      assert.equal(boxes.length, 4);
      for (const [h, b] of boxes.entries()) {
        assert.ok(
          b.top >= -1 && b.bottom <= 900,
          `head ${h}'s grid (${b.top}–${b.bottom}) within the 900 px viewport`,
        );
        assert.ok(b.right <= 1280, `head ${h} within the width`);
      }
      assert.equal(new Set(boxes.map((b) => Math.round(b.top))).size, 1, 'one row of four');
      assert.equal(await page.getAttribute('#heads', 'data-columns'), '4');
      assert.equal(await page.getAttribute('#heads', 'data-labels'), 'true');
    }));

  test('a head enlarged by its caption button and by Z, the others still on screen; cells still lock', () =>
    withPage(M03, async ({ page }) => {
      const before = await figureBoxes(page);
      await page.click('#heads figure[data-head="2"] .head-toggle');
      assert.equal(
        await page.getAttribute('#heads figure[data-head="2"] .head-toggle', 'aria-pressed'),
        'true',
      );
      const after = await figureBoxes(page);
      assert.ok(
        after[2].right - after[2].left > 2 * (before[2].right - before[2].left),
        'head 2 takes the width',
      );
      const cell = (h) => page.$eval(`canvas[data-head="${h}"]`, (c) => Number(c.dataset.cell));
      assert.ok((await cell(2)) > (await cell(0)), 'its cells are larger');
      for (const h of [0, 1, 3])
        assert.ok(after[h].bottom - after[h].top > 50, `head ${h} still drawn`);
      // A cell of the enlarged grid locks as before.
      await page.locator('canvas[data-head="2"]').scrollIntoViewIfNeeded();
      const c = await cellCentre(page, 2, 1, 3);
      await page.mouse.click(c.x, c.y);
      assert.match(
        await page.textContent('#readout'),
        /^head 2 · query 'animal' → key 'cross': \d\.\d{3} · locked/,
      );
      // Z in head 0's grid moves the enlargement there; Z again shrinks it.
      await page.focus('canvas[data-head="0"]');
      await page.keyboard.press('z');
      assert.equal(
        await page.$$eval('#heads figure.is-enlarged', (fs) =>
          fs.map((f) => f.dataset.head).join(),
        ),
        '0',
      );
      assert.equal(
        await page.evaluate(() => document.activeElement.dataset.head),
        '0',
        'focus stays in the grid',
      );
      await page.keyboard.press('z');
      assert.equal(await page.$$eval('#heads figure.is-enlarged', (fs) => fs.length), 0);
    }));

  test("module 08's preset: head 0's row 0 as the course prints it, following the selection; Copy", () =>
    withPage('#preset=module-08', async ({ page }) => {
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, as the reader sees it
      const lines = () => page.$$eval('#query-row > div', (ds) => ds.map((d) => d.innerText));
      assert.deepEqual(await lines(), [
        'head 0 weights, token 0: [0. 0. 0.424 0.576 0. ]',
        'head 1 weights, token 0: [0. 0. 0. 0. 1.]',
      ]);
      // The keyboard moves the row; so does the pointer.
      await page.focus('canvas[data-head="1"]');
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.getAttribute('#query-row', 'data-row'), '1');
      assert.match((await lines())[0], /^head 0 weights, token 1: \[/);
      const c = await cellCentre(page, 0, 0, 0);
      await page.mouse.move(c.x, c.y);
      assert.equal((await lines())[0], 'head 0 weights, token 0: [0. 0. 0.424 0.576 0. ]');
      // Copy: the clipboard gets numpy's own output (its padding kept).
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.click('#query-row-copy');
      await page.waitForFunction(() =>
        /Copied/.test(document.querySelector('.query-row-status').textContent),
      );
      assert.equal(
        await page.evaluate(() => navigator.clipboard.readText()),
        'head 0 weights, token 0: [0.    0.    0.424 0.576 0.   ]\nhead 1 weights, token 0: [0. 0. 0. 0. 1.]',
      );
    }));

  test('numbers in large cells (module 08: every cell of both heads), none in small ones', async () => {
    await withPage('#preset=module-08', async ({ page }) => {
      const counts = await page.$$eval('#heads canvas.heatmap', (cs) =>
        cs.map((c) => c.dataset.numbers),
      );
      assert.deepEqual(counts, ['25', '25']);
      // The number layer has white ink on a dark cell: pixel near cell (0, 0)'s centre (weight 0).
      const ink = await page.$eval('#heads canvas.hm-numbers', (c) => {
        const ctx = c.getContext('2d');
        const { data } = ctx.getImageData(0, 0, c.width, Math.floor(c.height / 5));
        let white = 0;
        for (let i = 0; i < data.length; i += 4)
          if (data[i + 3] > 200 && data[i] > 200 && data[i + 1] > 200) white++;
        return white;
      });
      assert.ok(ink > 20, `white digits drawn on the dark first row (${ink} pixels)`);
    });
    await withPage(SIXTEEN, async ({ page }) => {
      const counts = await page.$$eval('#heads canvas.heatmap', (cs) =>
        cs.map((c) => (Number(c.dataset.cell) < 22 ? c.dataset.numbers : 'large')),
      );
      assert.deepEqual(
        counts,
        Array(8).fill('0'),
        '16-token small multiples: cells too small for numbers',
      );
    });
  });

  test('the readout is in the flow: it covers nothing while scrolling', () =>
    withPage(SIXTEEN, async ({ page }) => {
      assert.equal(await page.$eval('#readout', (r) => getComputedStyle(r).position), 'static');
      await page.evaluate(() =>
        window.scrollTo(0, document.querySelector('#heads').offsetTop + 200),
      );
      const covered = await page.evaluate(() => {
        const r = document.querySelector('#readout').getBoundingClientRect();
        return r.bottom > 0 && r.top < 0 + 1 && r.top >= 0;
      });
      assert.equal(covered, false, 'the readout scrolled away with the page');
    }));

  test('a 360 x 740 phone: the first grid starts on the first screen', () =>
    withPage(
      '#preset=module-08',
      async ({ page }) => {
        const top = await page.$eval(
          '#heads > figure.head canvas.heatmap',
          (c) => c.getBoundingClientRect().top,
        );
        assert.ok(top < 740, `the first grid's cells start at ${top} px`);
        assert.equal(
          await page.evaluate(() => document.documentElement.scrollWidth),
          360,
          'nothing wider than the phone',
        );
      },
      { width: 360, height: 740 },
    ));
});
