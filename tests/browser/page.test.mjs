// The built page (dist/) in headless Chromium, both served over http and opened from file://.
// Needs ./scripts/build.sh first (the tests say so if dist/ is missing).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { interpolateViridis } from 'd3-scale-chromatic';
import { parseColor } from '../../web/src/draw/color.js';
import {
  ROOT,
  openPage,
  withCheckedPage,
  tableRow,
  cellCentre,
  canvasPixel,
  canvasPixelAt,
  screenPixel,
  useBrowserAndTargets,
} from './helpers.mjs';

const MODULE_08 = '#preset=module-08';
const VERSION = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const TIMEOUT = 60_000;
/** The whole suite (its tests one after the other): ~40 s alone on a 2-core machine; room for a loaded one. */
const SUITE_TIMEOUT = 240_000;

const env = useBrowserAndTargets();

/** Opens the page, runs `fn`, then checks that nothing went wrong on the way. */
const withPage = (target, hash, fn, options) =>
  withCheckedPage(env.browser, target, hash, fn, options);

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`page ${which === 0 ? 'served over http' : 'opened from file://'}`, {
    timeout: SUITE_TIMEOUT,
  }, () => {
    test('module 08 preset: the course numbers, read from the tables', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        assert.deepEqual(await tableRow(page, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
        assert.equal(await page.locator('canvas[data-head]').count(), 2);
        assert.equal(
          await page
            .locator('table[data-head="0"] caption')
            .evaluate((c) => c.firstChild.textContent),
          'Head 0 attention weights',
        );
        assert.deepEqual(
          await page.$$eval('table[data-head="1"] th[scope="col"]', (ths) =>
            ths.map((t) => t.dataset.token),
          ),
          ['Heads', 'look', 'at', 'different', 'things'],
        );
        assert.equal(await page.locator('table[data-head="1"] th[scope="row"]').count(), 5);
        // Every row of every head sums to 1 (full-precision values are on the cells).
        const sums = await page.$$eval('table[data-head] tbody tr', (trs) =>
          trs.map((tr) =>
            [...tr.querySelectorAll('td')].reduce((s, td) => s + Number(td.dataset.weight), 0),
          ),
        );
        assert.equal(sums.length, 10);
        for (const s of sums) assert.ok(Math.abs(s - 1) < 1e-5, `row sum ${s}`);
        assert.equal(await page.inputValue('#preset'), 'module-08');
        assert.equal(await page.getAttribute('#params', 'data-count'), '256');
        assert.match(await page.textContent('#params'), /4 · d_model² = 256/);
        assert.match(
          await page.textContent('#summary'),
          /n = 5 tokens · d_model = 8 · num_heads = 2 · d_head = 4/,
        );
        assert.equal(await page.textContent('#page-version'), `v${VERSION}`);
        assert.match(await page.textContent('#core-version'), /^\d+\.\d+\.\d+/);
        // Chromium has relaxed SIMD: the GEMM's micro-kernel is the fused one (relaxed_simd.js).
        assert.equal(await page.getAttribute('#core-version', 'data-gemm-kernel'), 'relaxed_madd');
      }));

    test("the weight tables are in the browser's accessibility tree (the grids' twin for screen readers)", () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        // Chrome's own tree (not the DOM): content-visibility, for one, would drop the tables.
        const cdp = await page.context().newCDPSession(page);
        const { nodes } = await cdp.send('Accessibility.getFullAXTree');
        const count = (role) => nodes.filter((nd) => !nd.ignored && nd.role?.value === role).length;
        assert.equal(count('table'), 2, 'one table per head');
        assert.equal(
          count('cell'),
          2 * (5 * 5 + 1),
          'per head: every weight a cell, and the empty corner',
        );
        await cdp.detach();
      }));

    // A core that cannot start is an error on the page, not an endless "Loading". Without
    // DecompressionStream, pre.js's instantiateWasm throws at once: Emscripten's glue only logs
    // what the hook throws, so the hook itself rejects the factory's promise (abort).
    for (const [missing, why] of [
      ['WebAssembly', 'a browser setting or policy'],
      ['DecompressionStream', 'the core cannot be unpacked'],
    ]) {
      test(`without ${missing} (${why}) the page says the core is not available`, async () => {
        const p = await openPage(env.browser, target(), '', {
          setup: (context) => context.addInitScript(`delete globalThis.${missing};`),
          ready: '#alert:not(:empty)',
        });
        try {
          assert.equal(
            await p.page.textContent('#summary'),
            'The attention core is not available.',
          );
          assert.match(
            await p.page.textContent('#alert'),
            new RegExp(`^The attention core failed to start: .*${missing}`),
          );
          assert.doesNotMatch(
            await p.page.textContent('#alert'),
            /ASSERTIONS/,
            'no advice to rebuild the core',
          );
          assert.deepEqual(
            p.problems.filter((x) => x.startsWith('uncaught')),
            [],
            'no uncaught error',
          );
        } finally {
          await p.close();
        }
      });
    }

    // The core's script starts the core itself (data-start, cpp/bindings/wasm/start_early.js), so
    // that its wasm compiles while app.js is fetched and run; the page then takes that module
    // (startCore) instead of starting a second one. The factory is wrapped as the script defines it.
    test('the core starts from its own script (data-start), once; the page computes with that module', async () => {
      const p = await openPage(env.browser, target(), MODULE_08, {
        setup: (context) =>
          context.addInitScript(() => {
            let factory;
            window.coreStarts = [];
            Object.defineProperty(window, 'createMhaCore', {
              configurable: true,
              get: () => factory,
              set: (f) => {
                factory = function (...args) {
                  window.coreStarts.push(
                    document.currentScript
                      ? document.currentScript.src.split('/').pop()
                      : 'no script',
                  );
                  return f.apply(this, args);
                };
              },
            });
          }),
      });
      try {
        assert.deepEqual(
          await p.page.evaluate(() => window.coreStarts),
          ['mha_wasm_core.js'],
          'one factory call, made while the core\'s script ran (app.js would show as "app.js")',
        );
        assert.equal(
          await p.page.evaluate(() => createMhaCore.started),
          null,
          'the page took the started module',
        );
        assert.deepEqual(
          await tableRow(p.page, 0, 0),
          ['0.000', '0.000', '0.424', '0.576', '0.000'],
          'module 08: head 0, query 0',
        );
        assert.deepEqual(p.problems, []);
      } finally {
        await p.close();
      }
    });

    test("while typing, last view's weight tables leave the accessibility tree; after the pause the new ones are in", () => {
      const words = (n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
      return withPage(
        target(),
        `#text=${words(64).replaceAll(' ', '+')}&d_model=512&num_heads=8`,
        async ({ page }) => {
          const cdp = await page.context().newCDPSession(page);
          const tablesInTree = async () => {
            const { nodes } = await cdp.send('Accessibility.getFullAXTree');
            return nodes.filter((nd) => !nd.ignored && nd.role?.value === 'table').length;
          };
          await page.waitForSelector('#heads[data-tables="ready"]', {
            state: 'attached',
            timeout: TIMEOUT,
          });
          assert.equal(await tablesInTree(), 8);
          // A keystroke that changes the view: its tables wait for typing to pause (tables.js,
          // 400 ms), and meanwhile the previous view's are stale. Typed again when the pause ended
          // before the page's clock was stopped.
          let count = 64;
          let seen = null;
          for (let i = 0; i < 4 && !seen; i++) {
            count = count === 64 ? 63 : 64;
            await page.fill('#text', words(count));
            await page.waitForFunction(
              (n) =>
                document.getElementById('summary').textContent.startsWith(`n = ${n} tokens`) &&
                document.getElementById('heads').dataset.tables === 'pending',
              count,
              { timeout: TIMEOUT },
            );
            // The page's clock stops while the state is read (virtual time paused: no timer fires, so
            // the pause cannot end and start the new tables meanwhile, however slow this harness is
            // on a loaded machine); then it runs on, fast-forwarded.
            await cdp.send('Emulation.setVirtualTimePolicy', { policy: 'pause' });
            const stale = await page.$$eval('.table-holder[data-stale]', (hs) => hs.length);
            const busy = await page.getAttribute('#heads', 'aria-busy');
            const inTree = await tablesInTree();
            // Still pending, and every old table still stale after the tree was read: the pause may
            // have ended before the clock stopped (seen stays null, and the check below fails, if it
            // always did).
            const staleAfter = await page.$$eval('.table-holder[data-stale]', (hs) => hs.length);
            const pending = (await page.getAttribute('#heads', 'data-tables')) === 'pending';
            await cdp.send('Emulation.setVirtualTimePolicy', { policy: 'advance' });
            if (pending && stale === 8 && staleAfter === 8) seen = { stale, busy, inTree };
          }
          assert.deepEqual(
            seen,
            { stale: 8, busy: 'true', inTree: 0 },
            'stale tables are skipped and not read out',
          );
          await page.waitForSelector('#heads[data-tables="ready"]', {
            state: 'attached',
            timeout: TIMEOUT,
          });
          assert.equal(await page.$$eval('.table-holder[data-stale]', (hs) => hs.length), 0);
          assert.equal(await tablesInTree(), 8);
          assert.equal(
            await page.$$eval('table[data-head="5"] tbody tr', (rows) => rows.length),
            count,
            "the new view's tables",
          );
          await cdp.detach();
        },
      );
    });

    test(
      'embed=1 with a locked cell: the step panel is hidden, so neither the full module nor the full forward is asked for',
      { skip: which === 1 && 'Resource Timing lists nothing for a page opened from file://' },
      () =>
        withPage(target(), `${MODULE_08}&cell=0.0.2&embed=1`, async ({ page }) => {
          await page.waitForTimeout(1500); // time for a lazy load, had one been started
          // Every file the page fetched since navigation (scripts load as resources, from file:// too).
          const fetched = await page.evaluate(() =>
            performance
              .getEntriesByType('resource')
              .map((e) => new URL(e.name).pathname.split('/').pop()),
          );
          assert.ok(
            fetched.includes('mha_wasm_core.js') || fetched.includes('app.js'),
            `fetched ${fetched.join(', ')}`,
          );
          assert.ok(!fetched.includes('mha_wasm.js'), `fetched ${fetched.join(', ')}`);
          assert.equal(
            await page.getAttribute('#readout', 'data-locked'),
            'true',
            'the cell is locked',
          );
          assert.equal(await page.$eval('#explain-step', (d) => d.dataset.cell), undefined);
        }),
    );

    test('the page says which precision the grids were computed in; equal requests are not recomputed', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        // Module 08: float64, as numpy (5·8·(4·8 + 2·5) = 1 680 multiply-adds).
        assert.equal(
          await page.textContent('#precision'),
          'Computed in float64, as numpy: n·d·(4d + 2n) = 1\u202F680 multiply-adds ≤ 4M.',
        );
        // 64 tokens, d_model 512, 8 heads (the typing benchmark's view): float32, as PyTorch.
        const words = Array.from({ length: 64 }, (_, i) => `w${i}`);
        await page.evaluate(
          (h) => {
            location.hash = h;
          },
          `#text=${words.join('+')}&d_model=512&num_heads=8&seed=7`,
        );
        await page.waitForFunction(() =>
          /^n = 64 tokens · d_model = 512/.test(document.getElementById('summary').textContent),
        );
        assert.equal(
          await page.textContent('#precision'),
          'Computed in float32, as PyTorch: n·d·(4d + 2n) = 71\u202F303\u202F168 multiply-adds > 4M.',
        );
        const where = await page.getAttribute('#heads', 'data-computed-in');
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
        const before = await tableRow(page, 3, 10);
        // Typing inside a word: the same 64 tokens, so the same request: the kept result is drawn.
        words[10] = 'w10x';
        await page.fill('#text', words.join(' '));
        await page.waitForFunction(
          () => document.getElementById('heads').dataset.reused === 'true',
        );
        assert.equal(
          await page.getAttribute('#heads', 'data-computed-in'),
          where,
          'where the numbers were computed',
        );
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
        assert.deepEqual(await tableRow(page, 3, 10), before, 'the same weights');
        assert.match(await page.textContent('#precision'), /^Computed in float32/);
        assert.match(await page.evaluate(() => decodeURIComponent(location.hash)), /w10x/);
        // One token more: another request, computed.
        await page.fill('#text', `${words.join(' ')} w64`);
        await page.waitForFunction(() =>
          /^n = 65 tokens/.test(document.getElementById('summary').textContent),
        );
        // Back to module 08: float64 again, the course numbers.
        await page.selectOption('#preset', 'module-08');
        await page.waitForFunction(() =>
          document.getElementById('precision').textContent.startsWith('Computed in float64'),
        );
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
      }));

    test('d_model 512: every row is one-hot, and the page says why; module 08 (d_model 8) needs no such note', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        assert.equal(
          await page.isVisible('#saturation'),
          false,
          'module 08: most rows are not one-hot',
        );
        await page.evaluate((h) => {
          location.hash = h;
        }, '#text=The+cat+sat+on+the+mat&d_model=512&num_heads=8&seed=7');
        await page.waitForFunction(() =>
          /^n = 6 tokens · d_model = 512/.test(document.getElementById('summary').textContent),
        );
        assert.ok(await page.isVisible('#saturation'));
        const note = await page.textContent('#saturation');
        assert.match(
          note,
          /^Every row of these grids puts at least 99 % of its weight on one key\. That is module 08's random weights/,
        );
        assert.match(note, /standard deviation of about d_model \(512 here\)/);
        // The note says what the grids show: each head's first row has a weight >= 0.99 in its table.
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
        for (const h of [0, 7]) {
          const row = (await tableRow(page, h, 0)).map(Number);
          assert.ok(Math.max(...row) >= 0.99, `head ${h}, row 0: ${row}`);
        }
      }));

    test('module 08 preset from the select, from other settings', () =>
      withPage(target(), '#text=one+two&d_model=4&num_heads=1&seed=3', async ({ page }) => {
        assert.equal(await page.locator('canvas[data-head]').count(), 1);
        assert.equal(await page.inputValue('#preset'), '');
        await page.selectOption('#preset', 'module-08');
        await page.waitForFunction(
          () => document.querySelectorAll('canvas[data-head]').length === 2,
        );
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        assert.equal(await page.evaluate(() => location.hash), MODULE_08);
        assert.equal(await page.inputValue('#text'), 'Heads look at different things');
      }));

    test("canvas cells have the legend's colour for their weight (also at devicePixelRatio 2)", async () => {
      for (const dpr of [1, 2]) {
        await withPage(
          target(),
          MODULE_08,
          async ({ page }) => {
            // Where the legend's 0 → 1 strip lies in its canvas (CSS px), as drawn by the page.
            const strip = await page.$eval('#legend', (c) => ({
              x: Number(c.dataset.stripX),
              width: Number(c.dataset.stripWidth),
              height: Number(c.dataset.stripHeight),
            }));
            assert.ok(strip.width > 0 && strip.height > 0, 'legend strip geometry');
            const cells = [
              [0, 0, 2],
              [0, 0, 3],
              [1, 0, 4],
              [0, 4, 0],
              [1, 2, 2],
              [1, 3, 1],
            ];
            for (const [head, row, col] of cells) {
              const w = Number(
                await page.getAttribute(
                  `table[data-head="${head}"] tbody tr[data-row="${row}"] td:nth-of-type(${col + 1})`,
                  'data-weight',
                ),
              );
              const c = await cellCentre(page, head, row, col);
              const box = await page.locator(`canvas[data-head="${head}"]`).boundingBox();
              const got = await canvasPixel(page, head, c.x - box.x, c.y - box.y);
              const want = parseColor(interpolateViridis(w));
              for (let k = 0; k < 3; k++) {
                assert.ok(
                  Math.abs(got[k] - want[k]) <= 2,
                  `dpr ${dpr} head ${head} (${row},${col}) w=${w}: got ${got.slice(0, 3)} want ${want}`,
                );
              }
              assert.equal(got[3], 255);
              // And on the screen, where CSS scales the canvas up (image-rendering: pixelated): near
              // the cell's top-left corner, beside the number printed at its centre.
              const cell = Number(
                await page.getAttribute(`canvas[data-head="${head}"]`, 'data-cell'),
              );
              const seen = await screenPixel(page, c.x - 0.35 * cell, c.y - 0.35 * cell);
              for (let k = 0; k < 3; k++) {
                assert.ok(
                  Math.abs(seen[k] - want[k]) <= 2,
                  `dpr ${dpr} head ${head} (${row},${col}) on screen: ${seen.slice(0, 3)} want ${want}`,
                );
              }
              // The legend, read where it shows w, has the cell's colour. ±4 per channel: the strip
              // is 256 samples stretched over its width, so a pixel may show the neighbouring sample.
              const lx = Math.min(strip.x + w * strip.width, strip.x + strip.width - 0.5);
              const legend = await canvasPixelAt(page, '#legend', lx, strip.height / 2);
              for (let k = 0; k < 3; k++) {
                assert.ok(
                  Math.abs(got[k] - legend[k]) <= 4,
                  `dpr ${dpr} head ${head} (${row},${col}) w=${w}: cell ${got.slice(0, 3)} legend ${legend.slice(0, 3)}`,
                );
              }
            }
            // Crisp: the cells canvas holds one backing pixel per cell (5 x 5 tokens), scaled up
            // without smoothing; the label canvases are at devicePixelRatio.
            // (Chromium shows the top-left 5 x 5 of a grow-only 64 x 64 store: object-view-box.)
            const g = await page.$eval('canvas[data-head="0"]', (cv) => {
              const labels = [...cv.parentElement.querySelectorAll('canvas.hm-labels')];
              return {
                shown: [cv.dataset.pixelCols, cv.dataset.pixelRows],
                backing: [cv.width, cv.height],
                viewBox: getComputedStyle(cv).objectViewBox,
                rendering: getComputedStyle(cv).imageRendering,
                // Backing pixels shown (the store less object-view-box's right inset) per CSS px.
                ratios: labels.map((l) => {
                  const inset = /^inset\(0px ([\d.]+)px/.exec(getComputedStyle(l).objectViewBox);
                  return (
                    (l.width - (inset ? Number(inset[1]) : 0)) / l.getBoundingClientRect().width
                  );
                }),
              };
            });
            assert.deepEqual(g.shown, ['5', '5']);
            assert.deepEqual(g.backing, [64, 64]);
            assert.equal(g.viewBox, 'inset(0px 59px 59px 0px)');
            assert.equal(g.rendering, 'pixelated');
            assert.equal(g.ratios.length, 2);
            for (const r of g.ratios)
              assert.ok(Math.abs(r - dpr) < 0.05, `label backing store ratio ${r}`);
          },
          { dpr },
        );
      }
    });

    test('an invalid head count shows the module error and keeps the last good grids', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        await page.fill('#num_heads', '3');
        await page.waitForFunction(() => document.getElementById('alert').textContent !== '');
        const alert = page.locator('[role="alert"]#alert');
        assert.match(await alert.textContent(), /d_model=8 is not divisible by num_heads=3/);
        assert.ok(await alert.isVisible());
        assert.equal(await page.getAttribute('#num_heads', 'aria-invalid'), 'true');
        assert.equal(await page.locator('canvas[data-head]').count(), 2);
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);

        for (const [bad, pattern] of [
          ['0', /num_heads=0/],
          ['-2', /num_heads=-2/],
          ['2.5', /num_heads=2\.5/],
        ]) {
          await page.fill('#num_heads', bad);
          await page.waitForFunction(
            (p) => new RegExp(p).test(document.getElementById('alert').textContent),
            pattern.source,
          );
          assert.equal(await page.locator('canvas[data-head]').count(), 2, bad);
        }

        await page.fill('#num_heads', '4');
        await page.waitForFunction(
          () => document.querySelectorAll('canvas[data-head]').length === 4,
        );
        assert.equal(await alert.textContent(), '');
        assert.equal(await page.getAttribute('#num_heads', 'aria-invalid'), null);
        assert.match(
          await page.textContent('#params'),
          /= 256 /,
          'the same 4·d² for every valid num_heads',
        );
      }));

    test('too many tokens: a clear message, grids kept', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        await page.fill('#text', 'w '.repeat(2049));
        await page.waitForFunction(() => document.getElementById('alert').textContent !== '');
        assert.match(await page.textContent('#alert'), /2049 tokens; this page shows at most 2048/);
        assert.equal(await page.locator('canvas[data-head]').count(), 2);
        await page.fill('#text', 'w '.repeat(64));
        await page.waitForFunction(
          () => document.querySelectorAll('table[data-head="0"] tbody tr').length === 64,
        );
        assert.equal(await page.textContent('#alert'), '');
      }));

    test('markup in tokens is shown as text: nothing injected, nothing run', () =>
      withPage(
        target(),
        `#text=${encodeURIComponent('<img src=x onerror=window.__pwned=1>')}`,
        async ({ page }) => {
          const keys = await page.$$eval('table[data-head="0"] th[scope="col"]', (ths) =>
            ths.map((t) => t.dataset.token),
          );
          assert.deepEqual(keys.slice(0, 6), ['<', 'img', 'src', '=', 'x', 'onerror']);
          assert.equal(await page.inputValue('#text'), '<img src=x onerror=window.__pwned=1>');
          assert.match(await page.textContent('#tokens-line'), /<img/);

          await page.fill(
            '#text',
            '<script>window.__pwned=2</script><b>bold</b><svg onload=window.__pwned=3>',
          );
          await page.waitForFunction(() =>
            [...document.querySelectorAll('table[data-head="0"] th[scope="col"]')].some(
              (t) => t.dataset.token === 'svg',
            ),
          );
          // A hash with markup in a key and a value: shown in the notes as text.
          await page.evaluate(() => {
            location.hash = '#%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D4%3E=1&seed=%3Cb%3E';
          });
          await page.waitForFunction(() =>
            document.getElementById('notes').textContent.includes('<img'),
          );

          assert.equal(await page.evaluate(() => window.__pwned), undefined);
          assert.equal(await page.locator('img, script:not([src]), b, svg, iframe').count(), 0);
          assert.equal(await page.locator('body script').count(), 2);
        },
      ));

    test('only the page’s own files are requested', () =>
      withPage(target(), MODULE_08, async ({ page, requests }) => {
        await page.fill('#seed', '11');
        await page.check('#causal');
        await page.waitForFunction(() => location.hash.includes('causal=1'));
        const files = new Set(requests.map((u) => new URL(u).pathname.split('/').pop()));
        for (const f of ['app.js', 'mha_wasm_core.js', 'style.css'])
          assert.ok(files.has(f), `${f} loaded`);
        // The full module (with the date model) is not part of the first load.
        assert.ok(!files.has('mha_wasm.js') && !files.has('date_model.js'), 'no date model loaded');
        for (const u of requests) assert.ok(target().isOwn(u), `own origin: ${u}`);
      }));

    test('hovering a cell reads it out to 3 decimals and highlights that row in every head', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        const above = async (head) => {
          // The screen pixel just above the middle of row 0: inside the outline around a highlighted row.
          const box = await page.locator(`canvas[data-head="${head}"]`).boundingBox();
          const cell = Number(await page.getAttribute(`canvas[data-head="${head}"]`, 'data-cell'));
          return screenPixel(page, box.x + 2.5 * cell, box.y - 1.5);
        };
        // The row outline: a box 3 px outside row `row` of the cells, shown or hidden.
        const outlines = () =>
          page.$$eval('canvas[data-head]', (cs) =>
            cs.map((c) => {
              const o = c.parentElement.querySelector('.hm-outline');
              const a = c.getBoundingClientRect(),
                b = o.getBoundingClientRect();
              const cell = Number(c.dataset.cell);
              return o.hidden
                ? null
                : [b.left - a.left, (b.top - a.top) / cell, b.width - a.width, b.height - cell].map(
                    (v) => Math.round(v * 10) / 10,
                  );
            }),
          );
        const light = await above(1);
        assert.ok(
          light[0] + light[1] + light[2] > 600,
          `nothing drawn above row 0 before hovering: ${light}`,
        );
        assert.deepEqual(await outlines(), [null, null]);

        let c = await cellCentre(page, 0, 0, 2);
        await page.mouse.move(c.x, c.y);
        await page.waitForFunction(() => document.getElementById('readout').dataset.head === '0');
        assert.equal(
          await page.textContent('#readout'),
          "head 0 · query 'Heads' → key 'at': 0.424",
        );
        assert.deepEqual(
          await page.$$eval('canvas[data-head]', (cs) => cs.map((x) => x.dataset.highlightRow)),
          ['0', '0'],
        );
        for (const head of [0, 1]) {
          const px = await above(head);
          assert.ok(px[0] < 40 && px[1] < 40 && px[2] < 40, `dark outline in head ${head}: ${px}`);
        }
        // [left, top in cells, width, height beyond the row]: 3 px round row 0 in both heads.
        const cell = Number(await page.getAttribute('canvas[data-head="0"]', 'data-cell'));
        assert.deepEqual(
          await outlines(),
          [
            [-3, -3 / cell, 6, 6],
            [-3, -3 / cell, 6, 6],
          ].map((o) => o.map((v) => Math.round(v * 10) / 10)),
        );

        c = await cellCentre(page, 1, 3, 2);
        await page.mouse.move(c.x, c.y);
        await page.waitForFunction(() => document.getElementById('readout').dataset.head === '1');
        const w = await page.getAttribute(
          'table[data-head="1"] tbody tr[data-row="3"] td:nth-of-type(3)',
          'data-weight',
        );
        assert.equal(
          await page.textContent('#readout'),
          `head 1 · query 'different' → key 'at': ${Number(w).toFixed(3)}`,
        );
        assert.match(await page.textContent('#readout'), /: \d\.\d{3}$/);
        assert.deepEqual(
          await page.$$eval('canvas[data-head]', (cs) => cs.map((x) => x.dataset.highlightRow)),
          ['3', '3'],
        );
        assert.deepEqual(
          (await outlines()).map((o) => o && Math.round(o[1] + 3 / cell)),
          [3, 3],
          'the outline moved to row 3',
        );
        // The selected cell's ring, in head 1 only, inside cell (3, 2).
        const rings = await page.$$eval('canvas[data-head]', (cs) =>
          cs.map((c) => {
            const r = c.parentElement.querySelector('[class^="hm-ring"]');
            if (!r || r.hidden) return null;
            const a = c.getBoundingClientRect(),
              b = r.getBoundingClientRect();
            return [
              (b.left - a.left) / Number(c.dataset.cell),
              (b.top - a.top) / Number(c.dataset.cell),
            ].map(Math.floor);
          }),
        );
        assert.deepEqual(rings, [null, [2, 3]]);

        await page.mouse.move(1, 1);
        await page.waitForFunction(
          () => document.getElementById('readout').dataset.head === undefined,
        );
        assert.deepEqual(
          await page.$$eval('canvas[data-head]', (cs) => cs.map((x) => x.dataset.highlightRow)),
          ['', ''],
        );
        assert.deepEqual(await outlines(), [null, null]);
      }));

    test('labels drawn once for every head; the selection (bold labels, outline, ring) follows the keys', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        // Per head: [row labels, column labels] as PNG data, and the outline's row (or null).
        const grids = () =>
          page.$$eval('canvas[data-head]', (cs) =>
            cs.map((c) => {
              const [rows, cols] = [...c.parentElement.querySelectorAll('canvas.hm-labels')].map(
                (l) => l.toDataURL(),
              );
              const o = c.parentElement.querySelector('.hm-outline');
              const r = c.parentElement.querySelector('[class^="hm-ring"]');
              const cell = Number(c.dataset.cell),
                a = c.getBoundingClientRect();
              const at = (el) => {
                const b = el.getBoundingClientRect();
                return el.hidden
                  ? null
                  : [
                      Math.floor((b.left - a.left + 4) / cell),
                      Math.floor((b.top - a.top + 4) / cell),
                    ];
              };
              return { rows, cols, outline: at(o), ring: r ? at(r) : null };
            }),
          );
        const plain = await grids();
        assert.equal(plain[0].rows, plain[1].rows, 'the same row labels in both heads');
        assert.equal(plain[0].cols, plain[1].cols, 'the same column labels in both heads');
        assert.deepEqual(
          plain.map((g) => [g.outline, g.ring]),
          [
            [null, null],
            [null, null],
          ],
        );
        await page.focus('canvas[data-head="0"]');
        await page.keyboard.press('ArrowRight');
        await page.keyboard.press('ArrowDown');
        let g = await grids();
        // Row 1 is highlighted in both heads (its label bold in both); cell (1, 1) in head 0 only.
        assert.deepEqual(
          g.map((x) => [x.outline, x.ring]),
          [
            [
              [0, 1],
              [1, 1],
            ],
            [[0, 1], null],
          ],
        );
        assert.equal(g[0].rows, g[1].rows);
        assert.notEqual(g[0].rows, plain[0].rows, 'row label 1 bold');
        assert.notEqual(g[0].cols, g[1].cols, 'column label 1 bold in head 0 only');
        assert.equal(g[1].cols, plain[1].cols);
        await page.keyboard.press('End');
        g = await grids();
        assert.deepEqual(
          g.map((x) => [x.outline, x.ring]),
          [
            [
              [0, 1],
              [4, 1],
            ],
            [[0, 1], null],
          ],
        );
        await page.keyboard.press('Escape');
        await page.waitForFunction(
          () => document.getElementById('readout').dataset.head === undefined,
        );
        g = await grids();
        assert.deepEqual(g, plain, 'labels restored exactly, nothing highlighted');
      }));

    /**
     * Head 0's cell size and [row labels, column labels] as PNG data, once the grids show `n`
     * tokens: the part of each label canvas on show (its backing store may be larger: heatmap.js
     * labelStore).
     */
    const headLabels = async (page, n) => {
      await page.waitForFunction(
        (k) => document.querySelector('canvas[data-head="0"]')?.dataset.rows === String(k),
        n,
      );
      return page.$eval('canvas[data-head="0"]', (c) => ({
        cell: c.dataset.cell,
        labels: [...c.parentElement.querySelectorAll('canvas.hm-labels')].map((l) => {
          // The shown part of the store, in device pixels (CSS size × devicePixelRatio).
          const shown = document.createElement('canvas');
          shown.width = Math.ceil(parseFloat(l.style.width) * devicePixelRatio);
          shown.height = Math.ceil(parseFloat(l.style.height) * devicePixelRatio);
          shown.getContext('2d').drawImage(l, 0, 0);
          return shown.toDataURL();
        }),
      }));
    };
    /**
     * Opens `start`, types each of `steps` into the text field, and checks that every step's labels
     * are those of a page opened with that text. @returns {{first, typed}} the labels shown
     */
    const typedLabelsMatchFresh = async (start, steps, options) => {
      const hashOf = (text) => `#text=${text.replaceAll(' ', '+')}&d_model=8&num_heads=2&seed=3`;
      const count = (text) => text.split(' ').length;
      const typed = [];
      let first;
      await withPage(
        target(),
        hashOf(start),
        async ({ page }) => {
          first = await headLabels(page, count(start));
          for (const text of steps) {
            await page.fill('#text', text);
            typed.push(await headLabels(page, count(text)));
          }
        },
        options,
      );
      for (const [i, text] of steps.entries()) {
        await withPage(
          target(),
          hashOf(text),
          async ({ page }) => {
            assert.deepEqual(
              typed[i],
              await headLabels(page, count(text)),
              `labels of step ${i}: "${text.slice(0, 40)}"`,
            );
          },
          options,
        );
      }
      return { first, typed };
    };

    test('typing draws only the labels that changed: the same pixels as a page opened with that text', async () => {
      // The widest label ("bird") and the cell size stay, so each sprite is redrawn from what it
      // holds: a word replaced ("sat" → "ran", its slot cleared first), one added, three removed.
      const { first, typed } = await typedLabelsMatchFresh('a bird sat on the mat', [
        'a bird ran on the mat',
        'a bird ran on the mat to',
        'a bird ran',
      ]);
      assert.notDeepEqual(typed[0].labels, first.labels, 'the replaced word is drawn');
    });

    test('a token added at the same cell size draws its two labels only (the sprites have room)', () =>
      withPage(
        target(),
        '#text=a+bird+sat+on+the+mat&d_model=8&num_heads=2&seed=3',
        async ({ page }) => {
          const cell = () => page.$eval('canvas[data-head="0"]', (c) => c.dataset.cell);
          const before = await cell();
          // Every label drawn in the page, from here on (the page's sprites, labels.js LabelCache.sprite).
          await page.evaluate(() => {
            const fillText = CanvasRenderingContext2D.prototype.fillText;
            window.drawnLabels = [];
            CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
              // (The weights printed in the cells are not labels.)
              if (!this.canvas.classList.contains('hm-numbers')) window.drawnLabels.push(text);
              return fillText.call(this, text, ...rest);
            };
          });
          const updates = await page.getAttribute('html', 'data-updates');
          await page.fill('#text', 'a bird sat on the mat to');
          await page.waitForFunction(
            (u) => document.documentElement.dataset.updates !== u,
            updates,
            { polling: 100 },
          );
          assert.equal(await cell(), before, 'the cell size stays');
          // A sprite grown to the exact length was cleared and drew all 7 + 7 labels again.
          assert.deepEqual(
            await page.evaluate(() => window.drawnLabels),
            ['to', 'to'],
            'the new row and column labels',
          );
        },
      ));

    test('typing across a cell-size step and back draws only what changed, from the sprite of that size', async () => {
      // 27 and 28 tokens get different cell sizes (two heads side by side), so the count going back and forth alternates
      // two label geometries; each keeps its sprite (labels.js LabelCache.sprite), which holds an older word
      // in the slot that changed.
      const words = (count, swap = -1) =>
        Array.from({ length: count }, (_, i) =>
          i === swap ? 'zz' : `${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26) || ''}`,
        ).join(' ');
      const { typed } = await typedLabelsMatchFresh(words(27), [
        words(28),
        words(27, 0),
        words(28, 1),
        words(27, 2),
      ]);
      assert.notEqual(
        typed[0].cell,
        typed[1].cell,
        'the cell size differs between 27 and 28 tokens',
      );
    });

    test("at devicePixelRatio 1.25 (slots off whole pixels), typing and a cell-size step draw a fresh page's labels", async () => {
      const words = (count, swap = -1) =>
        Array.from({ length: count }, (_, i) =>
          i === swap ? 'Åg' : `${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26) || ''}`,
        ).join(' ');
      await typedLabelsMatchFresh(words(29), [words(30), words(31, 0), words(30, 1), words(29)], {
        dpr: 1.25,
      });
    });

    test('typing accented capitals and back (14 px cells): no pixels of an old label stay in the next slot', async () => {
      // At 12 px "Å", "É" and "Ç" reach 1-2 px beyond a 14 px slot: each label is drawn clipped
      // to its slot (labels.js labelInSlot), so a slot redrawn alone leaves nothing behind.
      const words = (changes) =>
        Array.from({ length: 60 }, (_, i) => changes[i] ?? `w${i}`).join(' ');
      const { typed } = await typedLabelsMatchFresh(
        words({}),
        [
          words({ 10: 'Åg' }),
          words({ 10: 'Åg', 11: 'ÉÇ' }),
          words({ 11: 'ÉÇ' }),
          words({ 12: 'ÿþ', 13: 'gÅ' }),
          words({}),
        ],
        { width: 700 },
      );
      assert.equal(typed[0].cell, '14', 'the smallest cells');
    });

    test('keyboard: Tab to a grid, arrows move the readout', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        await page.focus('canvas[data-head="0"]');
        await page.waitForFunction(() => document.getElementById('readout').dataset.head === '0');
        assert.equal(
          await page.textContent('#readout'),
          "head 0 · query 'Heads' → key 'Heads': 0.000",
        );
        await page.keyboard.press('ArrowRight');
        await page.keyboard.press('ArrowRight');
        assert.equal(
          await page.textContent('#readout'),
          "head 0 · query 'Heads' → key 'at': 0.424",
        );
        await page.keyboard.press('ArrowDown');
        assert.deepEqual(
          await page.$$eval('canvas[data-head]', (cs) => cs.map((x) => x.dataset.highlightRow)),
          ['1', '1'],
        );
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement.dataset.head), '1');
        assert.match(
          await page.textContent('#readout'),
          /^head 1 · query 'look' → key 'at': \d\.\d{3}$/,
        );
      }));

    test('the skip link moves the focus to the grids and keeps the view in the address', () =>
      withPage(target(), '#preset=causal-positions', async ({ page }) => {
        await page.focus('.skip-link');
        assert.equal(await page.getAttribute('.skip-link', 'href'), '#heads-section');
        await page.keyboard.press('Enter');
        await page.waitForFunction(() => document.activeElement?.id === 'heads-section');
        assert.equal(await page.evaluate(() => location.hash), '#preset=causal-positions');
        assert.equal(await page.locator('canvas[data-head]').count(), 4);
      }));

    test('keyboard: every Tab stop from the top of the page to the grids is visible (no 1-px stops)', () =>
      withPage(target(), MODULE_08, async ({ page }) => {
        await page.evaluate(() => document.activeElement?.blur());
        const seen = [];
        for (let i = 0; i < 40; i++) {
          await page.keyboard.press('Tab');
          const stop = await page.evaluate(() => {
            const el = document.activeElement;
            const r = el.getBoundingClientRect();
            return {
              what: `${el.tagName.toLowerCase()}#${el.id}.${el.className}`,
              w: r.width,
              h: r.height,
              head: el.dataset.head,
            };
          });
          seen.push(stop.what);
          // The skip link is shown when focused; everything else is visible anyway.
          assert.ok(
            stop.w >= 8 && stop.h >= 8,
            `an invisible Tab stop: ${stop.what} (${stop.w} x ${stop.h}) after ${seen.join(' ')}`,
          );
          if (stop.head === '0') return;
        }
        assert.fail(`the first grid was not reached in 40 Tab stops: ${seen.join(' ')}`);
      }));

    test('invalid values in the address fall back to defaults with a visible note', () =>
      withPage(
        target(),
        '#d_model=abc&num_heads=2&causal=maybe&kind=cross&sel=1.2&bogus=1',
        async ({ page }) => {
          const notes = await page.textContent('#notes');
          assert.match(notes, /d_model=abc/);
          assert.match(notes, /causal=maybe/);
          // Another mode's keys (main.js hands every mode's) are not unknown; others are.
          assert.match(notes, /Ignored unknown setting "bogus"/);
          assert.doesNotMatch(notes, /unknown setting "(kind|sel)"/);
          assert.ok(await page.locator('#notes').isVisible());
          assert.equal(await page.inputValue('#d_model'), '8');
          assert.deepEqual(await tableRow(page, 0, 0), [
            '0.000',
            '0.000',
            '0.424',
            '0.576',
            '0.000',
          ]);
          assert.equal(await page.textContent('#alert'), '');
        },
      ));

    test('causal and positional settings from the address are applied', () =>
      withPage(
        target(),
        '#text=a+b+c+d&d_model=8&num_heads=4&seed=1&causal=1&positional=1',
        async ({ page }) => {
          assert.equal(await page.locator('canvas[data-head]').count(), 4);
          assert.ok(await page.isChecked('#causal'));
          assert.ok(await page.isChecked('#positional'));
          for (let h = 0; h < 4; h++) {
            const r0 = await tableRow(page, h, 0);
            assert.deepEqual(
              r0,
              ['1.000', '0.000', '0.000', '0.000'],
              `head ${h}: query 0 sees only key 0`,
            );
            const r2 = await tableRow(page, h, 2);
            assert.equal(r2[3], '0.000');
          }
        },
      ));

    test('360 px wide: no sideways scrolling of the page, even with 64 tokens', () =>
      withPage(
        target(),
        MODULE_08,
        async ({ page }) => {
          const overflow = () =>
            page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          assert.ok((await overflow()) <= 0, `page overflows by ${await overflow()} px`);
          const box = await page.locator('canvas[data-head="0"]').boundingBox();
          assert.ok(
            box.x >= 0 && box.x + box.width <= 360,
            `grid inside the screen: ${JSON.stringify(box)}`,
          );
          await page.fill('#text', Array.from({ length: 64 }, (_, i) => `tok${i}`).join(' '));
          await page.waitForFunction(
            () => document.querySelectorAll('table[data-head="0"] tbody tr').length === 64,
          );
          assert.ok(
            (await overflow()) <= 0,
            `page overflows by ${await overflow()} px with 64 tokens`,
          );
          const cell = Number(await page.getAttribute('canvas[data-head="0"]', 'data-cell'));
          assert.ok(cell >= 14, `cells stay at least 14 px for readable labels (got ${cell})`);
        },
        { width: 360, height: 740 },
      ));
  });
}
