// The page's speed, as the page sees it: its own timing (User Timing mha:update and mha:first-grid, mirrored on
// <html data-last-update-ms data-first-grid-ms>), typing coalesced to the latest input, the weight
// tables of large views built after the grids are painted. Values are checked, not speed: the
// speed is measured by scripts/bench* (a benchmark, not a test).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { interpolateViridis } from 'd3-scale-chromatic';
import {
  withCheckedPage,
  tableRow,
  useBrowserAndTargets,
  ROOT,
  cellCentre,
  canvasPixel,
} from './helpers.mjs';
import { parseColor, rampWords } from '../../web/src/draw/color.js';
import { weightPixels } from '../../web/src/draw/pixels.js';

let core;
const env = useBrowserAndTargets(async () => {
  core = await createRequire(import.meta.url)(
    path.join(ROOT, 'build', 'wasm', 'mha_wasm_core.js'),
  )();
});

/** Row `row` of head `head` as the page's tables show it (3 decimals), computed under node (as the page: precision auto). */
function expectedRow(request, head, row) {
  const r = core.numpyExperiment({ ...request, precision: 'auto' });
  const n = request.tokens;
  return Array.from(r.attn_weights.subarray((head * n + row) * n, (head * n + row + 1) * n), (w) =>
    w.toFixed(3),
  );
}
/**
 * Every cell of head `head` (n x n tokens, one pixel a cell), exactly: the canvas's backing pixels
 * are the colour table's words (pixels.js weightPixels, color.js rampWords) for the weights the
 * page's own table shows (data-weight), cell for cell, in order.
 */
async function assertCellsAreTableColours(page, head, n) {
  const shown = await page.evaluate((h) => {
    const c = document.querySelector(`canvas[data-head="${h}"]`);
    const cols = Number(c.dataset.pixelCols),
      rows = Number(c.dataset.pixelRows);
    const probe = document.createElement('canvas');
    probe.width = cols;
    probe.height = rows;
    const ctx = probe.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(c, 0, 0, cols, rows, 0, 0, cols, rows);
    return {
      cols,
      rows,
      pixels: Array.from(ctx.getImageData(0, 0, cols, rows).data),
      weights: Array.from(document.querySelectorAll(`table[data-head="${h}"] tbody td`), (td) =>
        Number(td.dataset.weight),
      ),
    };
  }, head);
  assert.deepEqual(
    [shown.rows, shown.cols, shown.weights.length],
    [n, n, n * n],
    `head ${head}: one pixel a cell`,
  );
  const want = Array.from(weightPixels(Float32Array.from(shown.weights), 0, n * n, rampWords()));
  const wrong = want.reduce((count, v, i) => count + (shown.pixels[i] !== v), 0);
  assert.equal(
    wrong,
    0,
    `head ${head}: ${wrong} of ${want.length} channel values differ from the table's weights' colours`,
  );
}

const TIMEOUT = 120_000;
const words = (n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
const updates = (page) => page.getAttribute('html', 'data-updates').then(Number);

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`page timing and fluidity ${which ? 'opened from file://' : 'served over http'}`, {
    timeout: TIMEOUT,
  }, () => {
    test('mha:first-grid and mha:update are measured after the grids are painted', () =>
      withCheckedPage(env.browser, target(), '#preset=module-08', async ({ page }) => {
        await page.waitForSelector('html[data-first-grid-ms]');
        const first = await page.evaluate(() =>
          performance.getEntriesByName('mha:first-grid').map((e) => e.duration),
        );
        assert.equal(first.length, 1, 'one first grid');
        assert.ok(first[0] > 0);
        assert.equal(
          Number(await page.getAttribute('html', 'data-first-grid-ms')),
          Number(first[0].toFixed(1)),
        );
        const before = await updates(page);
        await page.fill('#seed', '8');
        await page.waitForFunction(
          (b) => Number(document.documentElement.dataset.updates) > b,
          before,
        );
        const measures = await page.evaluate(() =>
          performance.getEntriesByName('mha:update').map((e) => e.duration),
        );
        assert.ok(measures.length >= 2, 'the first view and the seed change');
        const last = measures[measures.length - 1];
        assert.ok(last > 0);
        assert.equal(
          Number(await page.getAttribute('html', 'data-last-update-ms')),
          Number(last.toFixed(1)),
        );
        // The grids painted are those of seed 8 (module 08's numbers are seed 7's).
        assert.notDeepEqual(await tableRow(page, 0, 0), [
          '0.000',
          '0.000',
          '0.424',
          '0.576',
          '0.000',
        ]);
        assert.match(await page.textContent('#summary'), /seed 8$/);
      }));

    test('typing fast: one update for a burst of input events, and the grids show the last text', () =>
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
        await page.waitForFunction(
          (b) => Number(document.documentElement.dataset.updates) > b,
          before,
        );
        await page.waitForTimeout(200); // no late update of a stale input follows
        assert.equal(await updates(page), before + 1, 'coalesced into one update');
        assert.equal(
          await page.locator('table[data-head="0"] tbody tr').count(),
          15,
          'the last text: 15 tokens',
        );
        assert.match(await page.textContent('#summary'), /^n = 15 tokens/);
      }));

    test('typing: every key updates the grids, the address is written once the typing pauses', () =>
      withCheckedPage(env.browser, target(), '#preset=module-08', async ({ page }) => {
        await page.waitForSelector('html[data-first-grid-ms]');
        // Every address written (URL and time) and every key's input event (time), in the page.
        await page.evaluate(() => {
          window.addresses = [];
          window.inputs = [];
          const replace = history.replaceState.bind(history);
          history.replaceState = (s, t, url) => {
            window.addresses.push({ url: String(url), at: performance.now() });
            replace(s, t, url);
          };
          document
            .getElementById('text')
            .addEventListener('input', () => window.inputs.push(performance.now()), true);
        });
        // The page's rule (chrome/address.js ADDRESS_PAUSE_MS, from the typed update, which follows its key):
        // no address sooner than 300 ms after a key. Checked against the page's own clock, so that
        // a loaded machine, where this harness may take longer than the pause between two keys,
        // only adds addresses at real pauses, which the rule allows.
        const PAUSE_MS = 300;
        const writesTooSoon = () =>
          page.evaluate(
            (pause) =>
              window.addresses
                .filter((w) => {
                  const last = Math.max(...window.inputs.filter((t) => t <= w.at));
                  return w.at - last < pause - 1; // 1 ms: the timers' granularity
                })
                .map((w) => w.url),
            PAUSE_MS,
          );
        const before = await updates(page);
        await page.click('#text');
        await page.keyboard.press('End');
        // Six keys 40 ms apart (a fast typist): each one's grids drawn, no address until the pause.
        for (const key of ' abc d') {
          const drawn = await updates(page);
          await page.keyboard.type(key);
          await page.waitForFunction(
            (b) => Number(document.documentElement.dataset.updates) > b,
            drawn,
          );
          await page.waitForTimeout(40);
        }
        assert.equal(await updates(page), before + 6, 'one update a key');
        assert.equal(await page.evaluate(() => window.inputs.length), 6);
        await page.waitForFunction(() => window.addresses.some((w) => w.at > window.inputs.at(-1)));
        await page.waitForTimeout(400);
        assert.deepEqual(await writesTooSoon(), [], 'no address while typing');
        const afterBurst = await page.evaluate(() =>
          window.addresses.filter((w) => w.at > window.inputs.at(-1)).map((w) => w.url),
        );
        assert.equal(
          afterBurst.length,
          1,
          `one address after the burst: ${afterBurst.join(' | ')}`,
        );
        assert.match(
          await page.evaluate(() => location.hash),
          /^#text=Heads\+look\+at\+different\+things\+abc\+d&d_model=8&/,
        );
        assert.match(await page.textContent('#summary'), /^n = 7 tokens/);
        // A key, then the page is left at once (pagehide): the address is written then, once.
        const writtenBefore = await page.evaluate(() => window.addresses.length);
        const drawn = await updates(page);
        await page.keyboard.type('e');
        await page.waitForFunction(
          (b) => Number(document.documentElement.dataset.updates) > b,
          drawn,
        );
        const left = await page.evaluate((pause) => {
          const paused = performance.now() - window.inputs.at(-1) >= pause;
          const written = window.addresses.length;
          window.dispatchEvent(new PageTransitionEvent('pagehide'));
          return { paused, written };
        }, PAUSE_MS);
        // (Where this harness took longer than the pause, the page may have written it already.)
        if (!left.paused)
          assert.equal(left.written, writtenBefore, 'not yet: the typing has not paused');
        assert.match(
          await page.evaluate(() => location.hash),
          /^#text=Heads\+look\+at\+different\+things\+abc\+de&/,
        );
        await page.waitForTimeout(500);
        assert.equal(
          await page.evaluate(() => window.addresses.length),
          writtenBefore + 1,
          'written once: on pagehide (or at the pause, if it came first), not again after the pause',
        );
        if (which) return;
        // Served: a key, then at once a link to a view the worker computes (1024 tokens): the
        // typed view's address, still waiting for the pause, is never written over the link's.
        await page.waitForSelector('html[data-compute-worker="ready"]', { state: 'attached' });
        const typed = await updates(page);
        await page.keyboard.type('f');
        await page.waitForFunction(
          (b) => Number(document.documentElement.dataset.updates) > b,
          typed,
        );
        await page.evaluate(
          (h) => {
            window.seen = [];
            location.hash = h;
            const timer = setInterval(() => window.seen.push(location.hash), 10);
            setTimeout(() => clearInterval(timer), 1500);
          },
          `#text=${words(1024).replaceAll(' ', '+')}&d_model=512&num_heads=8`,
        );
        await page.waitForFunction(
          () => /^n = 1024 tokens/.test(document.getElementById('summary').textContent),
          null,
          { timeout: 60_000 },
        );
        await page.waitForTimeout(1600);
        const seen = await page.evaluate(() => window.seen);
        assert.ok(
          seen.length > 50 && seen.every((h) => h.startsWith('#text=w0+w1+')),
          `only the link's address: ${[...new Set(seen)].map((h) => h.slice(0, 40)).join(' | ')}`,
        );
      }));

    test(`a large view is computed ${which ? 'on the page (no worker from file://)' : 'in the worker'}, with the core's numbers; a stale result is never drawn`, () =>
      withCheckedPage(env.browser, target(), '#preset=module-08', async ({ page }) => {
        await page.waitForSelector('html[data-compute-worker]', { state: 'attached' });
        if (!which)
          await page.waitForSelector('html[data-compute-worker="ready"]', { state: 'attached' });
        assert.equal(
          await page.getAttribute('html', 'data-compute-worker'),
          which ? 'off' : 'ready',
        );
        assert.equal(
          await page.getAttribute('#heads', 'data-computed-in'),
          'page',
          'module 08 is small: computed at once',
        );
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        // 40 tokens, d_model 1024, 4 heads: pageCost 1.7·10⁸ > WORKER_MIN_COST (compute/cost.js): the workers'.
        const before = await updates(page);
        await page.fill('#d_model', '1024');
        await page.fill('#num_heads', '4');
        await page.evaluate(() => {
          // Every summary the page shows from now on: a drawn view starts "n = <tokens> tokens".
          window.shown = [];
          new MutationObserver(() =>
            window.shown.push(document.getElementById('summary').textContent),
          ).observe(document.getElementById('summary'), {
            childList: true,
            characterData: true,
            subtree: true,
          });
        });
        // Two submitted inputs in one task: 48 tokens, then 40. Served, both go to the worker and
        // the 48-token result arrives after the 40-token request: stale, it must not be drawn.
        await page.evaluate(
          (texts) => {
            for (const t of texts) {
              document.getElementById('text').value = t;
              document.getElementById('controls').requestSubmit();
            }
          },
          [words(48), words(40)],
        );
        await page.waitForFunction(
          () => location.hash.includes('w39') && !location.hash.includes('w40'),
        );
        await page.waitForFunction(
          (b) => Number(document.documentElement.dataset.updates) > b,
          before,
        );
        await page.waitForTimeout(300);
        assert.match(
          await page.textContent('#summary'),
          /^n = 40 tokens · d_model = 1024 · num_heads = 4/,
        );
        const shown = await page.evaluate(() => window.shown);
        if (!which) {
          assert.ok(
            !shown.some((t) => t.startsWith('n = 48 tokens')),
            `the stale 48-token view was never drawn: ${shown.join(' | ')}`,
          );
        }
        assert.equal(
          await page.getAttribute('#heads', 'data-computed-in'),
          which ? 'page' : 'worker',
        );
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
        assert.equal(
          await page.locator('table[data-head="0"] tbody tr').count(),
          40,
          'the newest input, not the stale one',
        );
        const request = {
          seed: 7,
          tokens: 40,
          d_model: 1024,
          num_heads: 4,
          positional: false,
          is_causal: false,
        };
        for (const [head, row] of [
          [0, 0],
          [3, 39],
          [2, 17],
        ]) {
          assert.deepEqual(
            await tableRow(page, head, row),
            expectedRow(request, head, row),
            `head ${head} row ${row}`,
          );
        }
        // 64 tokens: above 4M multiply-adds, float32, and the grids' request (weights only): served,
        // two workers (on two cores or more) compute half the heads each; the joined heads are the
        // core's, in order.
        await page.fill('#text', words(64));
        await page.waitForFunction(() =>
          /^n = 64 tokens/.test(document.getElementById('summary').textContent),
        );
        const cores = await page.evaluate(() => navigator.hardwareConcurrency);
        assert.equal(
          await page.getAttribute('#heads', 'data-workers'),
          which ? '0' : cores >= 2 ? '2' : '1',
        );
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
        const at64 = { ...request, tokens: 64 };
        for (const [head, row] of [
          [0, 5],
          [1, 63],
          [2, 0],
          [3, 31],
        ]) {
          assert.deepEqual(
            await tableRow(page, head, row),
            expectedRow(at64, head, row),
            `64 tokens: head ${head} row ${row}`,
          );
        }
        // A slow view superseded by a quick one (module 08, computed here at once): no
        // "Computing…" note appears afterwards over the quick one.
        if (!which) {
          await page.evaluate((t) => {
            document.getElementById('d_model').value = '512';
            document.getElementById('text').value = t;
            document.getElementById('controls').requestSubmit();
            document.getElementById('d_model').value = '128';
            document.getElementById('text').value = 'Heads look at different things';
            document.getElementById('controls').requestSubmit();
          }, words(200));
          await page.waitForTimeout(400);
          assert.match(await page.textContent('#summary'), /^n = 5 tokens · d_model = 128/);
          assert.equal(await page.getAttribute('#heads', 'data-computing'), null);
          // The worker's answer to settings that a newer input made invalid is the last valid view:
          // drawn, but the alert about the newer input stays, and the address is not rewritten.
          const updates = () =>
            page.evaluate(() => Number(document.documentElement.dataset.updates));
          const drawnBefore = await updates();
          await page.evaluate((t) => {
            document.getElementById('d_model').value = '512';
            document.getElementById('text').value = t;
            document.getElementById('controls').requestSubmit();
            document.getElementById('num_heads').value = '7';
            document.getElementById('controls').requestSubmit();
          }, words(200));
          await page.waitForFunction(
            (b) => Number(document.documentElement.dataset.updates) > b,
            drawnBefore,
          );
          assert.match(
            await page.textContent('#summary'),
            /^n = 200 tokens · d_model = 512 · num_heads = 4/,
          );
          assert.match(
            await page.textContent('#alert'),
            /d_model=512 is not divisible by num_heads=7/,
          );
          assert.ok(
            !(await page.evaluate(() => location.hash)).includes('w199'),
            'the address is the last one written',
          );
          await page.evaluate((t) => {
            document.getElementById('d_model').value = '128';
            document.getElementById('num_heads').value = '4';
            document.getElementById('text').value = t;
            document.getElementById('controls').requestSubmit();
          }, words(64));
          await page.waitForFunction(() =>
            /^n = 64 tokens · d_model = 128/.test(document.getElementById('summary').textContent),
          );
          assert.equal(await page.textContent('#alert'), '');
        }
        // The cells' colours (served: each head coloured on the page from its worker's half,
        // heatmap.js cellPixels; heads 0 and 1 in one half, 3 in the other) are the legend's for
        // the core's weight.
        const weights = core.numpyExperiment({ ...at64, precision: 'auto' }).attn_weights;
        for (const [head, row, col] of [
          [0, 5, 5],
          [3, 31, 2],
          [1, 63, 40],
        ]) {
          const c = await cellCentre(page, head, row, col);
          const box = await page.locator(`canvas[data-head="${head}"]`).boundingBox();
          const got = await canvasPixel(page, head, c.x - box.x, c.y - box.y);
          const want = parseColor(interpolateViridis(weights[(head * 64 + row) * 64 + col]));
          for (let k = 0; k < 3; k++)
            assert.ok(
              Math.abs(got[k] - want[k]) <= 2,
              `head ${head} (${row},${col}): ${got} vs ${want}`,
            );
        }
        // Every cell of a head from each half, exactly: the canvas's backing pixels are the colour
        // table's words (pixels.js weightPixels, color.js rampWords) for the weights the page's
        // own tables show (data-weight), cell for cell, in order.
        await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
        for (const head of [0, 3]) await assertCellsAreTableColours(page, head, 64);
      }));

    if (!which) {
      test("served: the workers write each view's weights into memory the page gave back, and the grids and tables show that view's numbers", () =>
        withCheckedPage(
          env.browser,
          target(),
          `#text=${words(64).replaceAll(' ', '+')}&d_model=1024&num_heads=4`,
          async ({ page }) => {
            await page.waitForSelector('html[data-compute-worker="ready"]', { state: 'attached' });
            const workers = (await page.evaluate(() => navigator.hardwareConcurrency)) >= 2 ? 2 : 1;
            const change = async (text) => {
              const before = await updates(page);
              await page.fill('#text', text);
              await page.waitForFunction(
                (b) => Number(document.documentElement.dataset.updates) > b,
                before,
              );
              return page.$eval(
                '#heads',
                (e) => `${e.dataset.computedIn} ${e.dataset.workers} ${e.dataset.recycled}`,
              );
            };
            // Once both workers are ready, two tokens fewer each change (never a count shown or
            // computed ahead before: each change computed anew, split in two). The workers write
            // into the buffers the page gave back: the one each kept from computing the view once on
            // starting (compute.js prime), then those of results that left the page's cache
            // (cache.js: the results shown and those computed ahead, KEPT_RESULTS + 2) after the
            // page let go of them (compute.js release). Without them every change would find none.
            for (
              let tries = 0;
              (await change(words(100 + 2 * tries))) !== `worker ${workers} ${workers}`;
              tries++
            ) {
              assert.ok(tries < 20, 'both workers ready');
            }
            const seen = [];
            for (let n = 62; n >= 40; n -= 2) seen.push(await change(words(n)));
            assert.deepEqual(
              seen.map((s) => s.split(' ').slice(0, 2).join(' ')),
              Array(seen.length).fill(`worker ${workers}`),
            );
            assert.deepEqual(
              seen.slice(-4),
              Array(4).fill(`worker ${workers} ${workers}`),
              seen.join(', '),
            );
            await change(words(64));
            await page.waitForSelector('#heads[data-tables="ready"]', { state: 'attached' });
            const request = {
              seed: 7,
              tokens: 64,
              d_model: 1024,
              num_heads: 4,
              positional: false,
              is_causal: false,
            };
            for (const [head, row] of [
              [0, 5],
              [1, 63],
              [2, 0],
              [3, 31],
            ]) {
              assert.deepEqual(
                await tableRow(page, head, row),
                expectedRow(request, head, row),
                `head ${head} row ${row}`,
              );
            }
            for (const head of [0, 3]) await assertCellsAreTableColours(page, head, 64);
          },
        ));
    }

    test('2048 tokens: compact pooled grids, no tables, hover reads the exact cell', async (t) =>
      withCheckedPage(
        env.browser,
        target(),
        `#text=${words(2048)}&d_model=16&num_heads=2&seed=3`,
        async ({ page }) => {
          await page.waitForFunction(
            () => /^n = 2048 tokens/.test(document.getElementById('summary').textContent),
            null,
            { timeout: 90_000 },
          );
          assert.equal(await page.locator('canvas[data-head]').count(), 2);
          assert.equal(await page.getAttribute('#heads', 'data-tables'), 'none');
          assert.equal(await page.locator('table[data-head]').count(), 0);
          const g = await page.$eval('canvas[data-head="1"]', (c) => ({
            pool: c.dataset.pool,
            cell: Number(c.dataset.cell),
            x: Number(c.dataset.originX),
            y: Number(c.dataset.originY),
            width: c.getBoundingClientRect().width,
            backing: c.width,
          }));
          assert.equal(g.pool, '2', 'max-pooled 2 x 2');
          assert.ok(
            g.width <= 566 && g.backing <= 566 * 2,
            `canvas ${g.width} CSS px, ${g.backing} px backing`,
          );
          // Hover over query 1500, key 700 of head 1: the readout names them and the core's weight.
          const box = await page.locator('canvas[data-head="1"]').boundingBox();
          const hoverMs = await page.evaluate(
            ([x, y]) => {
              const c = document.querySelector('canvas[data-head="1"]');
              const t0 = performance.now();
              c.dispatchEvent(
                new PointerEvent('pointermove', {
                  clientX: x,
                  clientY: y,
                  bubbles: true,
                  pointerType: 'mouse',
                }),
              );
              return performance.now() - t0;
            },
            [box.x + g.x + (700 + 0.5) * g.cell, box.y + g.y + (1500 + 0.5) * g.cell],
          );
          t.diagnostic(
            `hover redraw of 2 heads of 2048 tokens: ${hoverMs.toFixed(1)} ms (target: 16)`,
          );
          // 2048 · 16 · (4 · 16 + 2 · 2048) multiply-adds > 4M: the page computed it in float32.
          assert.match(
            await page.textContent('#precision'),
            /^Computed in float32, as PyTorch: n·d·\(4d \+ 2n\) = 136\u202F314\u202F880 multiply-adds > 4M\.$/,
          );
          const w = core.numpyExperiment({
            seed: 3,
            tokens: 2048,
            d_model: 16,
            num_heads: 2,
            keep_intermediates: false,
            precision: 'auto',
          }).attn_weights[(1 * 2048 + 1500) * 2048 + 700];
          assert.match(
            await page.textContent('#readout'),
            new RegExp(`w1500.*w700.*${w.toFixed(3)}`),
          );
          const heap = Number(await page.getAttribute('#core-version', 'data-wasm-memory-bytes'));
          t.diagnostic(
            `wasm memory of the core that computed it: ${(heap / 2 ** 20).toFixed(0)} MB`,
          );
          assert.ok(heap < 512 * 2 ** 20, `wasm heap ${heap} bytes`);
        },
      ));

    test('a link to a view too large for the page thread: served, its first grid comes from a worker started for it (a tab switch meanwhile keeps it); from file://, from the page', () =>
      // pageCost = 2048 · 512 · (4 · 512 + 2 · 2048) + 300 · 2 · 2048² = 8.9·10⁹ >= WORKER_FIRST_COST (compute/cost.js).
      withCheckedPage(
        env.browser,
        target(),
        `#text=${words(2048)}&d_model=512&num_heads=2&seed=3`,
        async ({ page }) => {
          await page.waitForSelector('html[data-ready="true"]', { state: 'attached' });
          // Served, the workers are computing the linked view now: to the Date translator and back.
          await page.click('#tab-date');
          await page.click('#tab-random');
          await page.waitForFunction(
            () => /^n = 2048 tokens/.test(document.getElementById('summary').textContent),
            null,
            { timeout: 90_000 },
          );
          assert.equal(
            await page.getAttribute('#heads', 'data-computed-in'),
            which ? 'page' : 'worker',
          );
          assert.equal(
            await page.getAttribute('html', 'data-compute-worker'),
            which ? 'off' : 'ready',
          );
          assert.equal(await page.inputValue('#d_model'), '512');
          // The numbers are the core's: a cell of head 1 whose weight is neither 0 nor 1, hovered.
          const weights = core.numpyExperiment({
            seed: 3,
            tokens: 2048,
            d_model: 512,
            num_heads: 2,
            keep_intermediates: false,
            precision: 'auto',
          }).attn_weights;
          let row = -1,
            col = -1;
          for (let k = 2048 * 2048; k < 2 * 2048 * 2048 && row < 0; k++) {
            if (weights[k] > 0.1 && weights[k] < 0.9)
              [row, col] = [Math.floor((k - 2048 * 2048) / 2048), k % 2048];
          }
          assert.ok(row >= 0, 'a weight between 0.1 and 0.9 in head 1');
          const w = weights[(2048 + row) * 2048 + col];
          const g = await page.$eval('#heads canvas[data-head="1"]', (c) => ({
            cell: Number(c.dataset.cell),
            x: Number(c.dataset.originX),
            y: Number(c.dataset.originY),
          }));
          const box = await page.locator('#heads canvas[data-head="1"]').boundingBox();
          await page.evaluate(
            ([x, y]) => {
              document.querySelector('#heads canvas[data-head="1"]').dispatchEvent(
                new PointerEvent('pointermove', {
                  clientX: x,
                  clientY: y,
                  bubbles: true,
                  pointerType: 'mouse',
                }),
              );
            },
            [box.x + g.x + (col + 0.5) * g.cell, box.y + g.y + (row + 0.5) * g.cell],
          );
          assert.match(
            await page.textContent('#readout'),
            new RegExp(`w${row}\\b.*w${col}\\b.*${w.toFixed(3).replace('.', '\\.')}`),
          );
        },
      ));

    test("a word more or less: the result computed ahead in idle time is drawn at once, with the core's numbers; the one shown before too", () =>
      withCheckedPage(env.browser, target(), '#preset=module-08', async ({ page }) => {
        await page.waitForSelector('html[data-first-grid-ms]');
        const aheadSoFar = () =>
          page.evaluate(() => Number(document.documentElement.dataset.computedAhead ?? 0));
        const aheadAtLeast = (count) =>
          page.waitForFunction(
            (c) => Number(document.documentElement.dataset.computedAhead) >= c,
            count,
            { timeout: 30_000, polling: 100 },
          );
        // Module 08 (5 tokens): 6 and 4 computed in idle periods after the first grid (polled every
        // 100 ms: polling at every frame, Playwright's default, leaves the page short idle periods).
        await aheadAtLeast(2);
        // A link to 63 tokens at d_model 512: 64, then 62, computed ahead too (module 08's time per
        // unit of cost, mostly the call itself, is not carried over: compute/ahead.js expectedMs).
        await page.evaluate((w) => {
          location.hash = `#text=${w}&d_model=512&num_heads=8&seed=3&causal=0&positional=1`;
        }, words(63));
        await page.waitForFunction(() =>
          /^n = 63 tokens/.test(document.getElementById('summary').textContent),
        );
        await aheadAtLeast(4);
        assert.equal(await aheadSoFar(), 4);
        const request = {
          seed: 3,
          tokens: 64,
          d_model: 512,
          num_heads: 8,
          positional: true,
          is_causal: false,
        };
        for (const [text, n, flag] of [
          [words(64), 64, 'ahead'],
          [words(63), 63, 'kept'],
        ]) {
          const before = await updates(page);
          await page.fill('#text', text);
          await page.waitForFunction(
            (b) => Number(document.documentElement.dataset.updates) > b,
            before,
          );
          const heads = await page.evaluate(() => ({
            ...document.getElementById('heads').dataset,
          }));
          assert.equal(heads[flag], 'true', `${n} tokens: ${flag} (${JSON.stringify(heads)})`);
          assert.equal(heads.computedIn, 'page');
          assert.match(await page.textContent('#summary'), new RegExp(`^n = ${n} tokens`));
          await page.waitForSelector('#heads[data-tables="ready"]', {
            state: 'attached',
            timeout: 60_000,
          });
          for (const [head, row] of [
            [0, 0],
            [7, n - 1],
          ]) {
            assert.deepEqual(
              await tableRow(page, head, row),
              expectedRow({ ...request, tokens: n }, head, row),
              `head ${head}, row ${row}`,
            );
          }
          await assertCellsAreTableColours(page, 7, n);
          if (n === 64) await aheadAtLeast(5); // 65 tokens next (63 and 64 are kept)
        }
        // Another seed: computed, not ahead.
        const before = await updates(page);
        await page.fill('#seed', '4');
        await page.waitForFunction(
          (b) => Number(document.documentElement.dataset.updates) > b,
          before,
        );
        assert.equal(await page.getAttribute('#heads', 'data-ahead'), 'false');
        assert.equal(await page.getAttribute('#heads', 'data-kept'), 'false');
      }));

    test(`a word more or less in a view the workers compute: ${which ? 'from file://, no workers, nothing computed ahead' : "computed ahead by the workers, drawn at once with the core's numbers"}`, () =>
      // 60 tokens at d_model 1024, 4 heads: pageCost 2.6·10⁸ > WORKER_MIN_COST (compute/cost.js); tables up to 64 tokens.
      withCheckedPage(
        env.browser,
        target(),
        `#text=${words(60)}&d_model=1024&num_heads=4&seed=5&causal=0&positional=1`,
        async ({ page }) => {
          await page.waitForFunction(() =>
            /^n = 60 tokens/.test(document.getElementById('summary').textContent),
          );
          if (!which)
            await page.waitForSelector('html[data-compute-worker="ready"]', { state: 'attached' });
          const before = await updates(page);
          if (which)
            await page.waitForTimeout(1000); // time enough to compute ahead, were it done
          else {
            // The link's own first grid may have come from the page thread (the workers start after it):
            // shown again from the workers, then 61 and 59 computed ahead by them.
            await page.fill('#seed', '6');
            await page.waitForFunction(
              (b) => Number(document.documentElement.dataset.updates) > b,
              before,
            );
            assert.equal(await page.getAttribute('#heads', 'data-computed-in'), 'worker');
            // Two more than when seed 6 was shown: 61 tokens (computed first) and 59, or, when one of
            // seed 5's neighbours was still in a worker then, that one and 61.
            const shown = Number(
              await page.evaluate(() => document.documentElement.dataset.computedAhead ?? 0),
            );
            await page.waitForFunction(
              (c) => Number(document.documentElement.dataset.computedAhead) >= c + 2,
              shown,
              { timeout: 30_000, polling: 100 },
            );
          }
          const seed = which ? 5 : 6;
          const next = await updates(page);
          await page.fill('#text', words(61));
          await page.waitForFunction(
            (b) => Number(document.documentElement.dataset.updates) > b,
            next,
          );
          const heads = await page.evaluate(() => ({
            ...document.getElementById('heads').dataset,
          }));
          assert.equal(heads.ahead, String(!which), JSON.stringify(heads));
          assert.equal(heads.computedIn, which ? 'page' : 'worker');
          if (which)
            assert.equal(
              await page.evaluate(() => document.documentElement.dataset.computedAhead),
              undefined,
            );
          assert.match(await page.textContent('#summary'), /^n = 61 tokens/);
          await page.waitForSelector('#heads[data-tables="ready"]', {
            state: 'attached',
            timeout: 60_000,
          });
          const request = {
            seed,
            tokens: 61,
            d_model: 1024,
            num_heads: 4,
            positional: true,
            is_causal: false,
          };
          for (const [head, row] of [
            [0, 0],
            [3, 60],
          ]) {
            assert.deepEqual(
              await tableRow(page, head, row),
              expectedRow(request, head, row),
              `head ${head}, row ${row}`,
            );
          }
          await assertCellsAreTableColours(page, 3, 61);
        },
      ));

    test('embedded (embed=1, no text field): nothing is computed ahead; the full page computes ahead again', () =>
      withCheckedPage(
        env.browser,
        target(),
        `#text=${words(40)}&d_model=512&num_heads=8&embed=1`,
        async ({ page }) => {
          await page.waitForSelector('html[data-first-grid-ms]');
          await page.waitForTimeout(1500);
          assert.equal(
            await page.evaluate(() => document.documentElement.dataset.computedAhead),
            undefined,
          );
          // The same page without embed=1, at 41 tokens: 42 is computed ahead (40, shown before, is kept).
          await page.evaluate((w) => {
            location.hash = `#text=${w}&d_model=512&num_heads=8`;
          }, words(41));
          await page.waitForFunction(() =>
            /^n = 41 tokens/.test(document.getElementById('summary').textContent),
          );
          await page.waitForFunction(
            () => document.documentElement.dataset.computedAhead === '1',
            null,
            { timeout: 30_000, polling: 100 },
          );
          await page.waitForTimeout(500);
          assert.equal(
            await page.evaluate(() => document.documentElement.dataset.computedAhead),
            '1',
            '40 tokens not computed again',
          );
        },
      ));

    test('64 tokens, 8 heads: tables follow the painted grids, every row sums to 1', () =>
      withCheckedPage(
        env.browser,
        target(),
        `#text=${words(64)}&d_model=64&num_heads=8&seed=1`,
        async ({ page }) => {
          await page.waitForSelector('#heads[data-tables="ready"]', {
            state: 'attached',
            timeout: 60_000,
          });
          assert.equal(await page.locator('canvas[data-head]').count(), 8);
          assert.equal(await page.locator('table[data-head]').count(), 8);
          const sums = await page.$$eval('table[data-head="7"] tbody tr', (trs) =>
            trs.map((tr) =>
              [...tr.querySelectorAll('td')].reduce((s, td) => s + Number(td.dataset.weight), 0),
            ),
          );
          assert.equal(sums.length, 64);
          for (const s of sums) assert.ok(Math.abs(s - 1) < 1e-4, `row sum ${s}`);
        },
      ));
  });
}
