// State you can share, and export, in headless Chromium, served over http and from file://:
// the locked cell in the address and back after a reload, keyboard Enter / Escape and the aria-live
// announcement, Copy link and Copy embed snippet (clipboard, and the field when the clipboard is
// refused), #embed's minimal chrome, invalid view values, and the PNG / CSV / JSON downloads.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { withCheckedPage, tableRow, cellCentre, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 90_000;
const env = useBrowserAndTargets();

/** Opens the page, runs `fn`, then checks that nothing went wrong on the way. */
const withPage = (target, hash, fn, options) =>
  withCheckedPage(env.browser, target, hash, fn, options);

const hashOf = (page) => page.evaluate(() => location.hash);
const announced = (page) => page.textContent('#random-panel .announce');
/** Waits until the address has `want` (the page writes it a moment after a change). */
const hashIs = (page, want) => page.waitForFunction((w) => location.hash === w, want);

/** Saves the file the page offers when `click` runs. @returns {Promise<{name: string, bytes: Buffer}>} */
async function download(page, click) {
  const [d] = await Promise.all([page.waitForEvent('download'), click()]);
  const file = await d.path();
  return { name: d.suggestedFilename(), bytes: await readFile(file) };
}

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`share and export, ${which === 0 ? 'served over http' : 'opened from file://'}`, {
    timeout: TIMEOUT,
  }, () => {
    test('keyboard: arrows announce the cell, Enter locks it into the address, a reload restores it, Escape clears', () =>
      withPage(target(), '#preset=module-08', async ({ page }) => {
        assert.equal(await page.getAttribute('#random-panel .announce', 'aria-live'), 'polite');
        await page.focus('canvas[data-head="0"]');
        await page.keyboard.press('ArrowRight');
        await page.keyboard.press('ArrowRight');
        await page.waitForFunction(() =>
          /key 'at'/.test(document.querySelector('#random-panel .announce').textContent),
        );
        assert.equal(await announced(page), "head 0, query 'Heads', key 'at': 0.424");
        assert.equal(
          await hashOf(page),
          '#preset=module-08',
          'an unlocked cell is not in the address',
        );
        await page.keyboard.press('Enter');
        assert.equal(await announced(page), "head 0, query 'Heads', key 'at': 0.424, locked");
        await hashIs(page, '#preset=module-08&cell=0.0.2');
        assert.equal(await page.getAttribute('#readout', 'data-locked'), 'true');
        // The pointer does not move a locked cell.
        const c = await cellCentre(page, 1, 3, 1);
        await page.mouse.move(c.x, c.y);
        assert.match(
          await page.textContent('#readout'),
          /^head 0 · query 'Heads' → key 'at': 0\.424 · locked/,
        );

        await page.reload();
        await page.waitForSelector('html[data-ready="true"]');
        assert.equal(await hashOf(page), '#preset=module-08&cell=0.0.2');
        assert.match(
          await page.textContent('#readout'),
          /^head 0 · query 'Heads' → key 'at': 0\.424 · locked/,
        );
        assert.equal(
          await page.$eval('canvas[data-head="0"]', (cv) => cv.dataset.highlightRow),
          '0',
        );

        await page.focus('canvas[data-head="0"]');
        await page.keyboard.press('ArrowDown'); // the lock moves with the arrows
        await hashIs(page, '#preset=module-08&cell=0.1.2');
        assert.match(await announced(page), /^head 0, query 'look', key 'at': \d\.\d{3}$/);
        await page.keyboard.press('Escape');
        assert.equal(await announced(page), 'No cell selected.');
        await hashIs(page, '#preset=module-08');
        assert.equal(await page.getAttribute('#readout', 'data-locked'), 'false');
      }));

    test('click locks and unlocks a cell; settings and cell in one link', () =>
      withPage(
        target(),
        '#text=The+cat+sat+on+the+mat&d_model=8&num_heads=2&seed=7&causal=1&positional=0',
        async ({ page }) => {
          await page.hover('canvas[data-head="1"]'); // the readout's text changes: then measure
          const c = await cellCentre(page, 1, 2, 1);
          await page.mouse.click(c.x, c.y);
          await hashIs(
            page,
            '#text=The+cat+sat+on+the+mat&d_model=8&num_heads=2&seed=7&causal=1&positional=0&cell=1.2.1',
          );
          const w = (await tableRow(page, 1, 2))[1];
          assert.equal(await announced(page), `head 1, query 'sat', key 'cat': ${w}, locked`);
          await page.mouse.click(c.x, c.y);
          await hashIs(
            page,
            '#text=The+cat+sat+on+the+mat&d_model=8&num_heads=2&seed=7&causal=1&positional=0',
          );
          assert.equal(await announced(page), `head 1, query 'sat', key 'cat': ${w}, unlocked`);
        },
      ));

    test('invalid view values in the address fall back with a visible note', () =>
      withPage(target(), '#preset=module-08&cell=7.0.0&embed=maybe', async ({ page }) => {
        const notes = await page.textContent('#notes');
        assert.match(
          notes,
          /cell=7\.0\.0 in the address is not head\.query\.key within 2 heads and 5 tokens/,
        );
        assert.match(notes, /embed=maybe in the address is not 1\/0; showing the full page/);
        assert.ok(await page.isVisible('#notes'));
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        assert.equal(
          await page.evaluate(() => document.documentElement.classList.contains('embed')),
          false,
        );
        assert.equal(await page.getAttribute('#readout', 'data-locked'), null);
      }));

    test('Copy link and Copy embed snippet: the clipboard when allowed, a selected field when refused', async () => {
      const origin = new URL(target().url).origin;
      // 1. Clipboard allowed (served: grant the permission; file:// cannot be granted, so stub it).
      await withPage(
        target(),
        '#preset=module-08&cell=1.0.4',
        async ({ page }) => {
          await page.click('#copy-link');
          await page.waitForFunction(() =>
            /copied/.test(document.getElementById('share-status').textContent),
          );
          const link = await page.evaluate(() => window.__clip ?? navigator.clipboard.readText());
          // Served: the whole address; from disk: relative, naming no folder of the disk.
          assert.equal(
            link,
            await page
              .evaluate(() => location.href)
              .then((h) => (which === 0 ? h : `index.html${new URL(h).hash}`)),
          );
          assert.ok(link.endsWith('#preset=module-08&cell=1.0.4'), link);
          if (which === 1)
            assert.match(
              await page.textContent('#share-status'),
              /opened from disk, so the link is relative \(index\.html#…\)/,
            );
          assert.equal(await page.isVisible('#share-text'), false);
          await page.click('#copy-embed');
          await page.waitForFunction(() =>
            /Embed snippet copied/.test(document.getElementById('share-status').textContent),
          );
          const snippet = await page.evaluate(
            () => window.__clip ?? navigator.clipboard.readText(),
          );
          const src =
            /^<iframe src="([^"]+)" title="[^"]+" width="100%" height="\d+" loading="lazy" allow="clipboard-write" data-mha-embed><\/iframe><script src="mha-embed\.js"><\/script>$/.exec(
              snippet,
            );
          assert.ok(src, snippet);
          const url = src[1].replace(/&amp;/g, '&');
          assert.ok(url.endsWith('#preset=module-08&cell=1.0.4&embed=1'), url);
          if (which === 1)
            assert.equal(
              url,
              'index.html#preset=module-08&cell=1.0.4&embed=1',
              'no file: URL in the snippet',
            );
        },
        {
          setup: async (context) => {
            if (which === 0)
              await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
            else {
              await context.addInitScript(() => {
                navigator.clipboard.writeText = async (t) => {
                  window.__clip = t;
                };
              });
            }
          },
        },
      );
      // 2. Clipboard refused: the text is in a visible, selected field.
      await withPage(
        target(),
        '#preset=module-08',
        async ({ page }) => {
          await page.click('#copy-link');
          await page.waitForFunction(() =>
            /refused the clipboard/.test(document.getElementById('share-status').textContent),
          );
          assert.ok(await page.isVisible('#share-text'));
          const field = await page.$eval('#share-text', (t) => ({
            value: t.value,
            focused: document.activeElement === t,
            selected: t.selectionEnd - t.selectionStart,
          }));
          assert.equal(
            field.value,
            await page
              .evaluate(() => location.href)
              .then((h) => (which === 0 ? h : `index.html${new URL(h).hash}`)),
          );
          assert.equal(field.focused, true);
          assert.equal(field.selected, field.value.length);
        },
        {
          setup: (context) =>
            context.addInitScript(() => {
              navigator.clipboard.writeText = () =>
                Promise.reject(new DOMException('denied', 'NotAllowedError'));
            }),
        },
      );
    });

    test('#embed: grids, legend and readout only, with a link to the full page', () =>
      withPage(target(), '#preset=module-08&embed=1', async ({ page }) => {
        assert.equal(
          await page.evaluate(() => document.documentElement.classList.contains('embed')),
          true,
        );
        assert.ok(
          (await page.locator('h1').boundingBox()).width <= 1,
          'the title is for screen readers only',
        );
        for (const hidden of [
          '.mode-tabs',
          '#controls',
          '.lede',
          '.explain',
          '.page-footer',
          '#copy-embed',
        ]) {
          assert.equal(await page.isVisible(hidden), false, hidden);
        }
        for (const shown of [
          'canvas[data-head="0"]',
          'canvas[data-head="1"]',
          '#legend',
          '#readout',
          '#copy-link',
          '#export-png',
          '#full-page-link',
        ]) {
          assert.equal(await page.isVisible(shown), true, shown);
        }
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        await page.focus('#full-page-link');
        const href = await page.getAttribute('#full-page-link', 'href');
        assert.ok(href.endsWith('#preset=module-08'), href);
        // The hash keeps embed while the view changes.
        await page.hover('canvas[data-head="0"]');
        const c = await cellCentre(page, 0, 0, 3);
        await page.mouse.click(c.x, c.y);
        await hashIs(page, '#preset=module-08&cell=0.0.3&embed=1');
      }));

    test('Save CSV and JSON: every head shown, with tokens and settings', () =>
      withPage(target(), '#preset=module-08', async ({ page }) => {
        const csv = await download(page, () => page.click('#export-csv'));
        assert.equal(csv.name, 'mha-attention-d8-h2-seed7.csv');
        const lines = csv.bytes.toString('utf8').split('\r\n');
        assert.equal(lines[0], 'head,query_index,query,key_index,key,weight');
        assert.equal(lines.length, 1 + 2 * 5 * 5 + 1);
        assert.deepEqual(
          lines.slice(1, 6).map((l) => Number(l.split(',')[5]).toFixed(3)),
          ['0.000', '0.000', '0.424', '0.576', '0.000'],
        );
        assert.equal(lines[3].split(',').slice(0, 5).join(','), '0,0,Heads,2,at');
        assert.deepEqual(
          lines.slice(26, 31).map((l) => Number(l.split(',')[5]).toFixed(3)),
          ['0.000', '0.000', '0.000', '0.000', '1.000'],
        );
        // Full precision: equal to the page's float32 weights.
        const cellW = await page.getAttribute(
          'table[data-head="0"] tbody tr[data-row="0"] td:nth-of-type(3)',
          'data-weight',
        );
        assert.equal(Math.fround(Number(lines[3].split(',')[5])), Math.fround(Number(cellW)));

        const json = JSON.parse(
          (await download(page, () => page.click('#export-json'))).bytes.toString('utf8'),
        );
        assert.equal(json.format, 'mha-lab-attention-weights');
        assert.deepEqual(json.tokens, ['Heads', 'look', 'at', 'different', 'things']);
        assert.deepEqual(json.shape, [2, 5, 5]);
        assert.deepEqual(json.heads, [0, 1]);
        assert.deepEqual(
          [
            json.config.d_model,
            json.config.num_heads,
            json.config.d_head,
            json.config.seed,
            json.config.is_causal,
          ],
          [8, 2, 4, 7, false],
        );
        assert.deepEqual(
          json.attn_weights[0][0].map((w) => w.toFixed(3)),
          ['0.000', '0.000', '0.424', '0.576', '0.000'],
        );
        assert.deepEqual(
          json.attn_weights[1][0].map((w) => w.toFixed(3)),
          ['0.000', '0.000', '0.000', '0.000', '1.000'],
        );
        for (const head of json.attn_weights)
          for (const row of head) assert.ok(Math.abs(row.reduce((a, b) => a + b) - 1) < 1e-5);
        assert.match(
          await page.textContent('#share-status'),
          /Saved mha-attention-d8-h2-seed7\.json/,
        );
      }));

    test('Save PNG and Save SVG load the figure export (dist/figure.js) and save at the layout size, at devicePixelRatio 2', () =>
      withPage(
        target(),
        '#preset=module-08',
        async ({ page }) => {
          // The figure's content, scales and colours: tests/browser/export.test.mjs.
          const png = await download(page, () => page.click('#export-png'));
          assert.equal(png.name, 'mha-attention-d8-h2-seed7.png');
          assert.equal(png.bytes.subarray(1, 4).toString('latin1'), 'PNG');
          const size = [png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)];
          assert.match(
            await page.textContent('#share-status'),
            new RegExp(`Saved mha-attention-d8-h2-seed7\\.png \\(${size[0]} × ${size[1]} pixels`),
          );
          const svg = await download(page, () => page.click('#export-svg'));
          assert.equal(svg.name, 'mha-attention-d8-h2-seed7.svg');
          assert.match(
            svg.bytes.toString('utf8'),
            new RegExp(
              `<svg xmlns="http://www.w3.org/2000/svg"[^>]* width="${size[0]}" height="${size[1]}"`,
            ),
          );
        },
        { dpr: 2 },
      ));
  });
}
