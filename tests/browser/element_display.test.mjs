// <mha-attention>'s display attributes and the iframe sized to its content, in
// dist/embed-example.html (served and from file://): the dark colour scheme (panel, text and the
// labels drawn on the canvases), theme="light" / theme="dark" overriding it (axe-core clean), layout="grid" (heads
// side by side) against layout="stack", cell-size, and mha-embed.js setting the iframe's height to
// the height its embed=1 page reports, ignoring messages from other windows.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setAttributes, withCheckedPage, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 120_000;
const EXAMPLE = { path: 'embed-example.html', ready: 'mha-attention#m03-four[data-state="ready"]' };
const DARK = { ...EXAMPLE, contextOptions: { colorScheme: 'dark' } };
const env = useBrowserAndTargets();
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious or critical violations on the page (as tests/browser/a11y.test.mjs runs it). */
async function axeViolations(page) {
  await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, { iframes: false, preload: false }));
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id}: ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join(' | ')}`,
    );
}

/** Relative luminance (WCAG) of a computed colour "rgb(r, g, b)". */
function luminance(css) {
  const [r, g, b] = css
    .match(/\d+(\.\d+)?/g)
    .slice(0, 3)
    .map(Number)
    .map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * The element's panel background and text colour, and the mean grey level (0–255) of the inked
 * pixels of its first grid's row labels (drawn on a canvas in the theme's ink).
 */
const colours = (page, id) =>
  page.evaluate((i) => {
    const root = document.getElementById(i).shadowRoot;
    const fig = getComputedStyle(root.querySelector('.mha'));
    const labels = root.querySelector('.hm-labels');
    const d = labels.getContext('2d').getImageData(0, 0, labels.width, labels.height).data;
    let sum = 0;
    let inked = 0;
    for (let k = 0; k < d.length; k += 4) {
      if (d[k + 3] > 200) {
        sum += (d[k] + d[k + 1] + d[k + 2]) / 3;
        inked++;
      }
    }
    return {
      background: fig.backgroundColor,
      ink: fig.color,
      labelGrey: inked ? sum / inked : null,
      inked,
    };
  }, id);

/** The element's height, its heads' distinct left and top positions, and its columns. */
const placement = (page, id) =>
  page.evaluate((i) => {
    const host = document.getElementById(i);
    const heads = [...host.shadowRoot.querySelectorAll('figure.head')].map((f) =>
      f.getBoundingClientRect(),
    );
    return {
      height: host.getBoundingClientRect().height,
      lefts: new Set(heads.map((r) => Math.round(r.left))).size,
      tops: new Set(heads.map((r) => Math.round(r.top))).size,
      columns: host.shadowRoot.querySelector('.heads').dataset.columns,
      cells: [...host.shadowRoot.querySelectorAll('canvas.heatmap')].map((c) => c.dataset.cell),
      overflow: heads.some((r) => r.right > host.getBoundingClientRect().right + 0.5),
    };
  }, id);

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`<mha-attention> display, ${which === 0 ? 'served over http' : 'opened from file://'}`, {
    timeout: TIMEOUT,
  }, () => {
    test('dark colour scheme: dark panels, light text and labels; theme="light" keeps it light', () =>
      withCheckedPage(
        env.browser,
        target(),
        '',
        async ({ page }) => {
          const dark = await colours(page, 'm03-four');
          assert.ok(luminance(dark.background) < 0.02, `dark panel: ${dark.background}`);
          assert.ok(luminance(dark.ink) > 0.7, `light text: ${dark.ink}`);
          assert.ok(
            dark.inked > 50 && dark.labelGrey > 180,
            `labels in light ink: grey ${dark.labelGrey} over ${dark.inked} px`,
          );
          assert.equal(await setAttributes(page, 'm03-four', { theme: 'light' }), 'mha-ready');
          const light = await colours(page, 'm03-four');
          assert.equal(light.background, 'rgb(255, 255, 255)');
          assert.ok(luminance(light.ink) < 0.05, `dark text: ${light.ink}`);
          assert.ok(
            light.inked > 50 && light.labelGrey < 80,
            `labels in dark ink: grey ${light.labelGrey}`,
          );
          // The other elements still follow the scheme.
          assert.ok(luminance((await colours(page, 'm08')).background) < 0.02);
          assert.equal(await setAttributes(page, 'm03-four', { theme: 'sepia' }), 'mha-error');
          assert.equal(
            await page.evaluate(
              () =>
                document.getElementById('m03-four').shadowRoot.querySelector('.message')
                  .textContent,
            ),
            'mha-attention: theme="sepia" is not one of auto, light, dark.',
          );
        },
        DARK,
      ));

    test('light colour scheme: light panels; theme="dark" makes one element dark', () =>
      withCheckedPage(
        env.browser,
        target(),
        '',
        async ({ page }) => {
          assert.equal((await colours(page, 'm08')).background, 'rgb(255, 255, 255)');
          assert.equal(await setAttributes(page, 'm08', { theme: 'dark' }), 'mha-ready');
          const dark = await colours(page, 'm08');
          assert.ok(luminance(dark.background) < 0.02, dark.background);
          assert.ok(dark.labelGrey > 180, `labels in light ink: ${dark.labelGrey}`);
          assert.equal(
            (await colours(page, 'm03-one')).background,
            'rgb(255, 255, 255)',
            'the others stay light',
          );
          assert.deepEqual(
            await axeViolations(page),
            [],
            'AA contrast with one dark element on a light page',
          );
        },
        EXAMPLE,
      ));

    test('layout: four heads two by two in a 900 px column, one per row with layout="stack"; cell-size', () =>
      withCheckedPage(
        env.browser,
        target(),
        '',
        async ({ page }) => {
          await page.evaluate(() => {
            document.getElementById('m03-four').style.width = '900px';
          });
          await page.waitForFunction(
            () =>
              document.getElementById('m03-four').shadowRoot.querySelector('.heads').dataset
                .columns === '2',
          );
          const grid = await placement(page, 'm03-four');
          assert.deepEqual(
            [grid.columns, grid.lefts, grid.tops, grid.overflow],
            ['2', 2, 2, false],
          );
          assert.equal(await setAttributes(page, 'm03-four', { layout: 'stack' }), 'mha-ready');
          const stack = await placement(page, 'm03-four');
          assert.deepEqual([stack.columns, stack.lefts, stack.tops], ['1', 1, 4]);
          assert.ok(
            grid.height < 0.5 * stack.height,
            `grid ${grid.height} px, stack ${stack.height} px`,
          );
          assert.equal(
            await setAttributes(page, 'm03-four', { layout: 'grid', 'cell-size': '14' }),
            'mha-ready',
          );
          const small = await placement(page, 'm03-four');
          assert.deepEqual(small.cells, ['14', '14', '14', '14']);
          // As many 14 px grids as fit the heads' box side by side (each grid plus its frame and gap).
          const fit = await page.evaluate(() => {
            const root = document.getElementById('m03-four').shadowRoot;
            const grid = root.querySelector('.heatmap-grid').getBoundingClientRect().width;
            return Math.min(
              4,
              Math.floor((root.querySelector('.heads').clientWidth + 12) / (grid + 14 + 12)),
            );
          });
          assert.ok(fit >= 3, `${fit} columns of 14 px cells in 900 px`);
          assert.deepEqual(
            [small.columns, small.lefts, small.tops, small.overflow],
            [String(fit), fit, Math.ceil(4 / fit), false],
          );
          assert.equal(await setAttributes(page, 'm03-four', { 'cell-size': '50' }), 'mha-error');
          assert.equal(
            await page.evaluate(
              () =>
                document.getElementById('m03-four').shadowRoot.querySelector('.message')
                  .textContent,
            ),
            'mha-attention: cell-size="50" is not a whole number of CSS pixels from 14 to 44.',
          );
          assert.deepEqual(
            (await placement(page, 'm03-four')).cells,
            ['14', '14', '14', '14'],
            'the last valid view stays',
          );
        },
        EXAMPLE,
      ));

    test('mha-embed.js sizes the iframe to its content: no button clipped; other windows are ignored', () =>
      withCheckedPage(
        env.browser,
        target(),
        '',
        async ({ page }) => {
          await page.locator('#m08-frame').scrollIntoViewIfNeeded();
          const frame = await (await page.$('#m08-frame')).contentFrame();
          await frame.waitForSelector('html[data-ready="true"]');
          // The iframe's height follows the messages its page posts; wait until it has caught up.
          await page.waitForFunction(async () => {
            const f = document.getElementById('m08-frame');
            return f.style.height !== '';
          });
          let inside;
          for (let tries = 0; ; tries++) {
            assert.ok(
              tries < 300,
              `the iframe's height never matched its content: ${JSON.stringify(inside)}`,
            );
            inside = await frame.evaluate(() => ({
              scroll: document.documentElement.scrollHeight,
              client: document.documentElement.clientHeight,
              lowest: Math.max(
                ...[...document.querySelectorAll('button, a')]
                  .filter((b) => b.getClientRects().length)
                  .map((b) => b.getBoundingClientRect().bottom),
              ),
            }));
            const outer = await page.$eval('#m08-frame', (f) => f.clientHeight);
            if (outer === inside.scroll && inside.client === inside.scroll) break;
            await page.waitForTimeout(100); // the next height message (polling, not a timed assertion)
          }
          assert.ok(
            inside.lowest <= inside.client,
            `every button inside the iframe: ${inside.lowest} <= ${inside.client}`,
          );
          // A height message from another window (here the course page itself) changes nothing.
          const before = await page.$eval('#m08-frame', (f) => f.style.height);
          const after = await page.evaluate(
            () =>
              new Promise((resolve) => {
                window.addEventListener(
                  'message',
                  () => resolve(document.getElementById('m08-frame').style.height),
                  { once: true },
                );
                window.postMessage({ type: 'mha-lab:height', height: 7 }, '*');
              }),
          );
          assert.equal(after, before);
        },
        EXAMPLE,
      ));
  });
}
