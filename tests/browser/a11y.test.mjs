// Accessibility and devices: axe-core (npm devDependency, evaluated into the page by the
// test; the pages themselves never load it) on the page in random mode, in date mode, in English mode, with
// embed=1 and in dark mode, and on dist/embed-example.html (three <mha-attention> elements): no
// serious or critical violation, WCAG AA colour contrast checked. The layout at 360 px wide (a phone)
// and at 200 % zoom (1280 px window = 640 CSS px at devicePixelRatio 2): no sideways page scroll.
// Touch: a tap locks a cell, on the page and in an element. Served and from file://.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { withCheckedPage, cellCentre, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 180_000;
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EXAMPLE = { path: 'embed-example.html', ready: 'mha-attention#m03-four[data-state="ready"]' };
const PHONE = {
  width: 360,
  height: 740,
  dpr: 3,
  contextOptions: { hasTouch: true, isMobile: true },
};
const ZOOM_200 = { width: 640, height: 450, dpr: 2 };
const env = useBrowserAndTargets();

/** The views audited: [name, hash, openPage options, selector to wait for after opening]. */
const VIEWS = [
  ['random mode', '#preset=module-08&cell=0.0.2', {}],
  ['date mode', '#mode=date', {}, '#date-panel[data-state="ready"]'],
  // Ready with the model dist/ was built with, or its message that there is none
  // (tests/browser/english.test.mjs audits it with a model in any case).
  [
    'English mode',
    '#mode=english&sel=0.0',
    {},
    '#english-panel[data-state="ready"], #english-panel[data-state="error"]',
  ],
  [
    'embed=1',
    '#text=The+cat+sat+on+the+mat&d_model=8&num_heads=2&seed=7&causal=1&positional=0&embed=1',
    {},
  ],
  ['dark colour scheme', '#preset=causal-positions', { contextOptions: { colorScheme: 'dark' } }],
  ['embed-example.html (elements)', '', EXAMPLE],
  [
    'embed-example.html (elements), dark colour scheme',
    '',
    { ...EXAMPLE, contextOptions: { colorScheme: 'dark' } },
  ],
];

/** axe-core's violations of impact serious or critical, and whether colour contrast was checked. */
async function audit(page) {
  await page.evaluate(AXE);
  const r = await page.evaluate(() =>
    // iframes: the framed page is audited on its own (embed=1 above).
    // preload: false — axe would fetch the stylesheets again by XHR, which file:// refuses.
    window.axe.run(document, {
      iframes: false,
      preload: false,
      resultTypes: ['violations', 'passes'],
    }),
  );
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  return {
    bad: bad.map(
      (v) =>
        `${v.impact} ${v.id} (${v.help}): ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join(' | ')}`,
    ),
    contrastChecked:
      r.passes.some((p) => p.id === 'color-contrast') ||
      r.violations.some((v) => v.id === 'color-contrast'),
  };
}

/** Nothing makes the page itself scroll sideways (wide grids scroll inside their own frame). */
const pageWidth = (page) =>
  page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }));

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`accessibility, ${which === 0 ? 'served over http' : 'opened from file://'}`, {
    timeout: TIMEOUT,
  }, () => {
    for (const [name, hash, options, wait] of VIEWS) {
      test(`axe-core: no serious or critical violation, ${name}`, () =>
        withCheckedPage(
          env.browser,
          target(),
          hash,
          async ({ page }) => {
            if (wait) await page.waitForSelector(wait, { timeout: 30_000 });
            const r = await audit(page);
            assert.deepEqual(r.bad, [], r.bad.join('\n'));
            assert.equal(r.contrastChecked, true, 'WCAG AA colour contrast was evaluated');
          },
          options,
        ));
    }

    for (const [size, opts] of [
      ['360 px wide (phone, touch)', PHONE],
      ['200 % zoom', ZOOM_200],
    ]) {
      test(`layout at ${size}: no sideways scroll, grids and tools reachable`, async () => {
        for (const [name, hash, options, wait] of VIEWS.filter(
          (v) => v[0] !== 'dark colour scheme',
        )) {
          await withCheckedPage(
            env.browser,
            target(),
            hash,
            async ({ page }) => {
              if (wait) await page.waitForSelector(wait, { timeout: 30_000 });
              const w = await pageWidth(page);
              assert.ok(
                w.scroll <= w.inner,
                `${name}: page is ${w.scroll} px wide in a ${w.inner} px window`,
              );
              if (!options.path && name !== 'date mode' && name !== 'English mode') {
                // Every head's frame fits the window; a grid wider than it scrolls inside .grid-scroll.
                const frames = await page.$$eval('#heads .head', (fs) =>
                  fs.map((f) => f.getBoundingClientRect().right),
                );
                assert.ok(
                  frames.length > 0 && frames.every((r) => r <= w.inner + 0.5),
                  `${name}: ${frames}`,
                );
                for (const id of ['#copy-link', '#export-png']) {
                  const box = await page.locator(id).boundingBox();
                  assert.ok(
                    box && box.x >= 0 && box.x + box.width <= w.inner,
                    `${name}: ${id} inside the window`,
                  );
                }
              }
            },
            {
              ...options,
              ...opts,
              contextOptions: { ...options.contextOptions, ...opts.contextOptions },
            },
          );
        }
      });
    }

    test('Date translator grids: arrows read, Enter locks, the pointer does not move a lock, Escape clears', () =>
      withCheckedPage(
        env.browser,
        target(),
        '#mode=date&date=30.11.26&kind=cross',
        async ({ page }) => {
          await page.waitForSelector('#date-panel[data-state="ready"]', { timeout: 30_000 });
          const readout = () => page.textContent('#date-readout');
          assert.equal(await page.getAttribute('#date-readout', 'aria-live'), 'polite');
          await page.focus('#date-heads canvas[data-head="0"]');
          await page.keyboard.press('ArrowRight');
          assert.match(
            await readout(),
            /^cross · layer 1 · head 0 · output '2' → input '0': \d\.\d{3}$/,
          );
          await page.keyboard.press('Enter');
          assert.match(
            await readout(),
            /^cross · layer 1 · head 0 · output '2' → input '0': \d\.\d{3} · locked$/,
          );
          const locked = await readout();
          const box = await page.locator('#date-heads canvas[data-head="1"]').boundingBox();
          await page.mouse.move(box.x + box.width - 10, box.y + box.height - 10);
          assert.equal(await readout(), locked, 'the pointer does not move a locked cell');
          await page.keyboard.press('ArrowDown'); // the arrows do, and the lock goes along
          assert.match(
            await readout(),
            /^cross · layer 1 · head 0 · output '0' → input '0': \d\.\d{3} · locked$/,
          );
          await page.keyboard.press('Escape');
          assert.match(await readout(), /^Point at a cell/);
          assert.equal(await page.getAttribute('#date-readout', 'data-locked'), 'false');
        },
      ));

    test('touch: a tap locks a cell on the page and in an element', async () => {
      await withCheckedPage(
        env.browser,
        target(),
        '#preset=module-08',
        async ({ page }) => {
          await page.locator('canvas[data-head="1"]').scrollIntoViewIfNeeded();
          const c = await cellCentre(page, 1, 0, 4);
          await page.touchscreen.tap(c.x, c.y);
          await page.waitForFunction(() => location.hash === '#preset=module-08&cell=1.0.4');
          assert.equal(
            await page.textContent('#random-panel .announce'),
            "head 1, query 'Heads', key 'things': 1.000, locked",
          );
          assert.match(await page.textContent('#readout'), /· locked$/);
        },
        PHONE,
      );
      await withCheckedPage(
        env.browser,
        target(),
        '',
        async ({ page }) => {
          await page.evaluate(
            () =>
              new Promise((resolve) => {
                document
                  .getElementById('m03-one')
                  .shadowRoot.querySelector('canvas.heatmap')
                  .scrollIntoView({ block: 'center' });
                // Let the elements above finish any re-layout (ResizeObserver) before measuring.
                requestAnimationFrame(() => requestAnimationFrame(resolve));
              }),
          );
          const at = await page.evaluate(() => {
            const c = document.getElementById('m03-one').shadowRoot.querySelector('canvas.heatmap');
            const r = c.getBoundingClientRect();
            const cell = Number(c.dataset.cell);
            return {
              x: r.x + Number(c.dataset.originX) + 1.5 * cell,
              y: r.y + Number(c.dataset.originY) + 0.5 * cell,
            };
          });
          await page.touchscreen.tap(at.x, at.y);
          const said = await page.evaluate(
            () =>
              document.getElementById('m03-one').shadowRoot.querySelector('.announce').textContent,
          );
          assert.match(said, /^head 0, query 'The', key 'animal': \d\.\d{3}, locked$/);
        },
        { ...EXAMPLE, ...PHONE },
      );
    });
  });
}
