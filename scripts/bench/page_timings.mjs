// The page's own timings in headless Chromium (against PAGE_TARGETS) and its download size, for
// scripts/bench/bench.mjs (the full run and --page-only); report.mjs renders them. openIsolated
// also opens the benchmark page of bench.mjs's Chromium rounds.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { log } from './common.mjs';

export const PAGE_TARGETS = {
  update_small_ms: 16,
  update_large_ms: 50,
  first_grid_ms: 300,
  download_kb: 150,
  date_keystroke_ms: 50,
  english_keystroke_ms: 30,
};
/** The English mode's keystroke timing: the text's tokens (with <bos>), and the keys typed. */
const ENGLISH_TOKENS = 64,
  ENGLISH_KEYS = 24;
/** The date typed into the Date translator, one key at a time, for its per-keystroke timing. */
const KEYSTROKE_DATE = 'Nov 30, 2026';
const PAGE_CASES = [
  { tokens: 64, d: 512, h: 8, target: PAGE_TARGETS.update_small_ms },
  { tokens: 512, d: 768, h: 12, target: PAGE_TARGETS.update_large_ms },
  // "2048 tokens x 12 heads stay usable": hover time and the computing core's wasm memory too.
  { tokens: 2048, d: 768, h: 12, large: true, loads: 2, updates: 2 },
];

/**
 * Milliseconds a new page's window is left alone before it navigates (page timings only). Each new
 * window of Chromium 156's headless mode loads the browser's own omnibox popup (a WebUI page in a
 * renderer of its own, chrome://omnibox-popup.top-chrome/, about 60 scripts): measured from
 * navigation at once, that start-up competed with ours on this 2-core machine (a trace shows it
 * alongside our page; the first grid took 607 ms instead of 346). A user's browser window is
 * already open when a course page is navigated to.
 */
export const WINDOW_SETTLE_MS = 1500;
/**
 * Milliseconds the harness leaves a loading page alone before it asks anything: Playwright's
 * first evaluation injects its own script into the page (~20–30 ms on the page's thread in a
 * trace, landing between the frame with the first grid and the page's measure of it), and its
 * waits poll the page at every animation frame.
 */
export const LOAD_QUIET_MS = 2000;
/** Changes measured after a pause (a third kind of update), the pause, and the quiet wait after each. */
export const PAUSED_CHANGES = 6,
  PAUSE_BEFORE_CHANGE_MS = 1000,
  AFTER_PAUSED_CHANGE_MS = 1000;
/**
 * The pause before each change of the typing column: the keys of one word (five keys 60 ms apart,
 * a brisk typist) between two changes of the token count.
 */
export const TYPING_PAUSE_MS = 300;

/**
 * A page in a fresh browser context, navigated to `url`; requests to other origins are problems.
 * `intercept`: every request goes through Playwright's route, which aborts another origin's. The
 * page timings do not intercept: a routed request waits for this process (the first grid took
 * 412 ms instead of 361, paired); the page's CSP (default-src 'self') refuses another origin, and
 * its console error and any request that left anyway are reported as problems.
 */
export async function openIsolated(
  browser,
  url,
  origin,
  problems,
  requests = [],
  { settleMs = 0, intercept = true } = {},
) {
  const context = await browser.newContext();
  const ours = (u) => u.startsWith(origin) || u.startsWith('data:') || u.startsWith('blob:');
  if (intercept) {
    await context.route('**/*', (route) => {
      const u = route.request().url();
      if (ours(u)) return route.continue();
      problems.push(`request to another origin: ${u}`);
      return route.abort('blockedbyclient');
    });
  }
  const page = await context.newPage();
  page.on('request', (r) => {
    requests.push(r.url());
    if (!intercept && !ours(r.url())) problems.push(`request to another origin: ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  if (settleMs) await page.waitForTimeout(settleMs);
  await page.goto(url);
  return { page, close: () => context.close() };
}

/** Hover over the last head's cell (query n - 2, key n / 3): the page's pointermove handler time
 * (ms) and the wasm memory of the core that computed the view (bytes), as the page reports it. */
async function hoverAndHeap(page, n, h) {
  const sel = `canvas[data-head="${h - 1}"]`;
  const g = await page.$eval(sel, (c) => ({
    cell: Number(c.dataset.cell),
    x: Number(c.dataset.originX),
    y: Number(c.dataset.originY),
  }));
  const box = await page.locator(sel).boundingBox();
  const hover_ms = await page.evaluate(
    ([s, x, y]) => {
      const c = document.querySelector(s);
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
    [sel, box.x + g.x + (Math.floor(n / 3) + 0.5) * g.cell, box.y + g.y + (n - 2 + 0.5) * g.cell],
  );
  const heap = Number(await page.getAttribute('#core-version', 'data-wasm-memory-bytes'));
  return { hover_ms, heap_bytes: Number.isFinite(heap) && heap > 0 ? heap : null };
}

/** `count` one-letter-per-word tokens ("a b c … a1 b1 …"), each a word of the page's tokenizer. */
function sentence(count, variant = '') {
  const words = [];
  for (let i = 0; i < count; i++)
    words.push(`${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26) || ''}`);
  if (variant) words[0] = variant;
  return words.join(' ');
}

/**
 * Makes each change of `changes` ([kind, text, pauseMs]) to #text and waits for the page's
 * mha:update; pushes its time to row[kind] (kind null: a change to start from, not recorded),
 * after waiting `pauseMs` (without asking the page anything) before it. Counts in
 * row[`${kind}_ahead`] / row[`${kind}_kept`] the changes drawn from a result computed ahead / shown
 * before (#heads data-ahead / data-kept: compute.js). Sets row.note when the page measures none.
 */
async function measureChanges(page, row, changes) {
  for (const [kind, text, pauseMs = 0] of changes) {
    if (pauseMs) await page.waitForTimeout(pauseMs);
    const before = (await measures(page, 'mha:update')).length;
    await page.fill('#text', text);
    try {
      await page.waitForFunction(
        (b) => performance.getEntriesByName('mha:update', 'measure').length > b,
        before,
        { timeout: 60000 },
      );
    } catch {
      row.note = "not instrumented (no performance.measure('mha:update') after an input change)";
      return;
    }
    if (!kind) continue;
    const all = await measures(page, 'mha:update');
    (row[kind] ??= []).push(all[all.length - 1]);
    await countKept(page, row, kind);
  }
}

/** Counts the last change of `kind` in row[`${kind}_ahead`] or row[`${kind}_kept`] (measureChanges). */
async function countKept(page, row, kind) {
  const { ahead, kept } = await page.$eval('#heads', (e) => ({ ...e.dataset }));
  row[`${kind}_ahead`] = (row[`${kind}_ahead`] ?? 0) + Number(ahead === 'true');
  row[`${kind}_kept`] = (row[`${kind}_kept`] ?? 0) + Number(kept === 'true');
}

/** Milliseconds of the measures named `name` on the page, in order (none: []). */
const measures = (page, name) =>
  page.evaluate((nm) => performance.getEntriesByName(nm, 'measure').map((e) => e.duration), name);

/** The page's timings on the built page in `dist` (served by scripts/serve.mjs): a row for the
 * default page, one per PAGE_CASES entry and the Date translator's keystrokes; firstLoad: the files
 * the default page fetched on its first load (for downloadSize). */
export async function collectPageTimings(browser, { dist, updates = 10, loads = 7 }) {
  const { startServer } = await import('../serve.mjs');
  const server = await startServer({ dir: dist, port: 0 });
  const origin = new URL(server.url).origin;
  const rows = [];
  let firstLoad = [];
  try {
    for (const c of [{ tokens: null }, ...PAGE_CASES]) {
      const hash = c.tokens
        ? `#text=${encodeURIComponent(sentence(c.tokens))}&d_model=${c.d}&num_heads=${c.h}`
        : '';
      const label = c.tokens
        ? `${c.tokens} tokens, d_model ${c.d}, ${c.h} heads`
        : 'default page (no address)';
      log(`page timings: ${label}`);
      const row = { label, default_page: !c.tokens, first_grid: [], update: [], note: '' };
      for (let i = 0; i < (c.loads ?? loads); i++) {
        const problems = [];
        const requests = [];
        const { page, close } = await openIsolated(
          browser,
          `${server.url}index.html${hash}`,
          origin,
          problems,
          requests,
          { settleMs: WINDOW_SETTLE_MS, intercept: false },
        );
        try {
          await page.waitForTimeout(LOAD_QUIET_MS);
          await page.waitForSelector('html[data-ready="true"]', { timeout: 60000 });
          // The first grid, or an alert saying why there is none: a view too large for the page's
          // thread is computed by the workers, after data-ready (compute.js WORKER_FIRST_COST).
          await page
            .waitForFunction(
              () =>
                document.documentElement.dataset.firstGridMs !== undefined ||
                document.getElementById('alert')?.textContent.trim(),
              null,
              { timeout: 120000 },
            )
            .catch(() => {});
          // The page is told (d_model, h, tokens); did it draw them, or refuse with a note?
          const shown = await page.evaluate(() => ({
            grids: document.querySelectorAll('canvas[data-head]').length,
            d: document.getElementById('d_model')?.value,
            h: document.getElementById('num_heads')?.value,
            text: document.getElementById('text')?.value,
            notes: [...document.querySelectorAll('[role="status"], .note, .error')]
              .map((e) => e.textContent.trim())
              .filter(Boolean)
              .join(' | '),
          }));
          if (
            c.tokens &&
            (shown.grids < c.h ||
              Number(shown.d) !== c.d ||
              Number(shown.h) !== c.h ||
              shown.text !== sentence(c.tokens))
          ) {
            row.note = `page did not draw this case (${shown.grids} grids, d_model ${shown.d}, ${shown.h} heads): ${shown.notes.slice(0, 200)}`;
            break;
          }
          await page.waitForTimeout(200);
          if (!c.tokens && i === 0) {
            // what the default page fetched: its first load
            firstLoad = [
              ...new Set(
                requests
                  .filter((u) => u.startsWith(origin))
                  .map((u) => new URL(u).pathname.slice(1) || 'index.html'),
              ),
            ];
          }
          const fg = await measures(page, 'mha:first-grid');
          if (fg.length) row.first_grid.push(fg[0]);
          if (c.large) (row.hover ??= []).push(await hoverAndHeap(page, c.tokens, c.h));
          if (c.tokens && i === 0) {
            const count = c.updates ?? updates;
            const half = Math.floor(count / 2);
            // Typing (the target's column): one token more each change, n − count/2 … n + count/2 − 1,
            // each TYPING_PAUSE_MS after the last was drawn (the keys of a word): the page may
            // have computed it ahead in that pause (compute.js), which is counted.
            await measureChanges(page, row, [
              [null, sentence(c.tokens - half - 1, 't')],
              ...Array.from({ length: count }, (_, u) => [
                'update',
                sentence(c.tokens - half + u, `t${u}`),
                TYPING_PAUSE_MS,
              ]),
            ]);
            // Same token count: the first word changes at n tokens (the page reuses its last result).
            if (!row.note) {
              await measureChanges(
                page,
                row,
                Array.from({ length: count }, (_, u) => [
                  'update_same_count',
                  sentence(c.tokens, `v${u}`),
                ]),
              );
            }
            // Nothing computed ahead or kept: the count goes down by 2 each change, back to back,
            // from n + count − 2 (after a jump to n + count): every change computes.
            if (!row.note && !c.large) {
              await measureChanges(page, row, [
                [null, sentence(c.tokens + count, 'k')],
                ...Array.from({ length: count }, (_, u) => [
                  'update_not_kept',
                  sentence(c.tokens + count - 2 * (u + 1), `k${u}`),
                ]),
              ]);
            }
            // A change after a pause, as a user types again after reading: the page has built
            // the last view's hidden tables meanwhile (tables.js, after 400 ms), and the harness
            // asks nothing until the change is drawn.
            for (let u = 0; !c.large && !row.note && u < PAUSED_CHANGES; u++) {
              await page.waitForTimeout(PAUSE_BEFORE_CHANGE_MS);
              const before = (await measures(page, 'mha:update')).length;
              await page.fill('#text', sentence(u % 2 ? c.tokens : c.tokens - 1, `p${u}`));
              await page.waitForTimeout(AFTER_PAUSED_CHANGE_MS);
              const all = await measures(page, 'mha:update');
              if (all.length > before) {
                (row.update_after_pause ??= []).push(all[all.length - 1]);
                await countKept(page, row, 'update_after_pause');
              }
            }
          }
        } finally {
          await close();
        }
        if (problems.length) row.note += ` problems: ${problems.join('; ')}`;
      }
      if (!row.first_grid.length && !row.note.startsWith('page did not')) {
        row.note = `${row.note ? `${row.note}; ` : ''}first grid not instrumented (no performance.measure('mha:first-grid'))`;
      }
      rows.push({ ...row, ...c });
    }
    log('page timings: Date translator keystrokes');
    rows.push(await collectKeystrokeTimings(browser, { serverUrl: server.url }));
    log('page timings: English mode keystrokes');
    rows.push(await collectEnglishTimings(browser, { serverUrl: server.url, dist }));
  } finally {
    await server.close();
  }
  return { rows, firstLoad };
}

/**
 * The Date translator's time per keystroke (measured here, not asserted by
 * tests/browser/date_translator.test.mjs: benchmarks are not timed tests): KEYSTROKE_DATE typed one key at a time into
 * `#mode=date`, each key's update waited for (one grid column per character), and the page's own
 * timing of it read from #date-summary's data-ms (translation, grids, small multiples; the hidden
 * tables follow after the frame). One row of the page table; `loads` fresh pages.
 */
export async function collectKeystrokeTimings(browser, { serverUrl, loads = 3 }) {
  const origin = new URL(serverUrl).origin;
  const row = {
    label: `Date translator: one keystroke ("${KEYSTROKE_DATE}" typed key by key, the page's data-ms)`,
    first_grid: [],
    update: [],
    note: '',
    target: PAGE_TARGETS.date_keystroke_ms,
    keystroke: true,
  };
  for (let i = 0; i < loads; i++) {
    const problems = [];
    const { page, close } = await openIsolated(
      browser,
      `${serverUrl}index.html#mode=date&date=`,
      origin,
      problems,
    );
    try {
      await page.waitForSelector('#date-panel[data-state="ready"]', { timeout: 60000 });
      await page.evaluate(() => {
        // every data-ms the page writes (one per update), even a repeated value
        window.__ms = [];
        const s = document.getElementById('date-summary');
        new MutationObserver(() => window.__ms.push(Number(s.dataset.ms))).observe(s, {
          attributeFilter: ['data-ms'],
        });
      });
      await page.click('#date-text');
      for (let k = 1; k <= KEYSTROKE_DATE.length; k++) {
        await page.keyboard.type(KEYSTROKE_DATE[k - 1]);
        await page.waitForFunction(
          (n) =>
            window.__ms.length >= n &&
            document.querySelectorAll('#date-heads table[data-head="0"] th[scope="col"]').length ===
              n,
          k,
          { timeout: 15000 },
        );
      }
      row.update.push(...(await page.evaluate(() => window.__ms)));
      const out = await page.textContent('#date-output');
      if (out !== '2026-11-30') row.note = `the page translated "${KEYSTROKE_DATE}" to "${out}"`;
    } catch (e) {
      row.note = `not measured: ${String(e.message ?? e).split('\n')[0]}`;
      break;
    } finally {
      await close();
    }
    if (problems.length) row.note += ` problems: ${problems.join('; ')}`;
  }
  return row;
}

/**
 * The English mode's time per keystroke at ENGLISH_TOKENS tokens (measured here, not asserted by
 * tests/browser/english.test.mjs): a text of ENGLISH_TOKENS - 1 words opened at `#mode=english`,
 * then ENGLISH_KEYS keys typed at its end, each waited for; the page's own mha:update of each
 * (chrome/timing.js: from the input event to every grid painted, the model's run, the head-pattern
 * scores, the small multiples and the enlarged head included). A key that adds a letter to the
 * last word keeps the count; the row says how many tokens the model read. Not measured when dist/
 * was built without web/english_lm.safetensors.
 */
export async function collectEnglishTimings(browser, { serverUrl, dist, loads = 3 }) {
  const origin = new URL(serverUrl).origin;
  const row = {
    label: `English mode: one keystroke at ${ENGLISH_TOKENS} tokens (mha:update: run, scores, every head painted)`,
    first_grid: [],
    update: [],
    note: '',
    target: PAGE_TARGETS.english_keystroke_ms,
    keystroke: true,
  };
  if (!existsSync(path.join(dist, 'english_lm.safetensors'))) {
    row.note =
      'not measured: dist/ has no English model (web/english_lm.safetensors when the page was built)';
    return row;
  }
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'it', 'was', 'happy'];
  const text = Array.from({ length: ENGLISH_TOKENS - 1 }, (_, i) => words[i % words.length]).join(
    ' ',
  );
  const hash = `#mode=english&sel=0.0&text=${encodeURIComponent(text)}`;
  for (let i = 0; i < loads; i++) {
    const problems = [];
    const { page, close } = await openIsolated(
      browser,
      `${serverUrl}index.html${hash}`,
      origin,
      problems,
    );
    try {
      await page.waitForSelector('#english-panel[data-state="ready"]', { timeout: 60000 });
      await page.focus('#english-text');
      await page.keyboard.press('End');
      for (let k = 0; k < ENGLISH_KEYS; k++) {
        const before = (await measures(page, 'mha:update')).length;
        // Letters onto the last word, then back: the count stays at ENGLISH_TOKENS.
        await page.keyboard.press(k < ENGLISH_KEYS / 2 ? 's' : 'Backspace');
        await page.waitForFunction(
          (b) => performance.getEntriesByName('mha:update', 'measure').length > b,
          before,
          { timeout: 15000 },
        );
        const all = await measures(page, 'mha:update');
        row.update.push(all[all.length - 1]);
      }
      const n = await page.$$eval('#english-tokens li:not(.en-cut)', (l) => l.length);
      if (n !== ENGLISH_TOKENS) row.note = `the model read ${n} tokens (its context)`;
    } catch (e) {
      row.note = `not measured: ${String(e.message ?? e).split('\n')[0]}`;
      break;
    } finally {
      await close();
    }
    if (problems.length) row.note += ` problems: ${problems.join('; ')}`;
  }
  return row;
}

/** gzip -9 sizes of the page's first load (zlib level 9: gzip -9's deflate): the files Chromium
 * fetched for the default page when the page timings ran (the date model is fetched only by the
 * Date translator), else index.html, app.js, style.css and the wasm module the page loads. */
export function downloadSize(distDir, firstLoad) {
  const dist = (f) => path.join(distDir, f);
  const wasm = existsSync(dist('mha_wasm_core.js')) ? 'mha_wasm_core.js' : 'mha_wasm.js';
  const files = firstLoad?.length ? firstLoad : ['index.html', 'app.js', 'style.css', wasm];
  return files.map((f) => {
    const p = dist(f);
    if (!existsSync(p)) return { file: f, bytes: null, gzip: null };
    const b = readFileSync(p);
    return { file: f, bytes: b.length, gzip: gzipSync(b, { level: 9 }).length };
  });
}
