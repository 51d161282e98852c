// <mha-attention> in a course page (dist/embed-example.html: three elements and an iframe of the
// page with embed=1), served over http (CSP header + meta) and from file:// (meta): the course
// numbers inside the shadow roots, independent elements, re-rendering on attribute changes,
// messages for invalid attributes, keyboard and announcements, saving, the Date translator preset;
// every request is to the page's own files (others are aborted and fail the test) and the strict
// CSP reports no violation. Which wasm the elements load: the attention core (mha_wasm_core.js)
// for the random-embeddings views, the full module (mha_wasm.js) only for the Date translator,
// each script requested and each module started once for the page.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  DIST,
  ROOT,
  openPage,
  setAttributes,
  withCheckedPage,
  useBrowserAndTargets,
} from './helpers.mjs';

import { loadModule } from '../js/module.mjs';
import { readTypicalRoles, typicalText } from '../../web/src/modes/english/english_view.js';

const TIMEOUT = 120_000;
const EXAMPLE = 'embed-example.html';
const READY = 'mha-attention#m03-four[data-state="ready"]';
const env = useBrowserAndTargets();

function recordViolations() {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__csp.push(
      `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`,
    );
  });
}

/**
 * Counts the starts of each wasm module in a frame: the glue's `var createMhaCore = …` assigns
 * through this setter, which wraps the factory (window.__starts.createMhaCore: instances made).
 */
function countModuleStarts() {
  window.__starts = {};
  for (const name of ['createMhaCore', 'createMhaModule']) {
    let wrapped;
    Object.defineProperty(window, name, {
      configurable: true,
      get: () => wrapped,
      set: (factory) => {
        wrapped = (...args) => {
          window.__starts[name] = (window.__starts[name] ?? 0) + 1;
          return factory(...args);
        };
      },
    });
  }
}

/**
 * Opens the course page; `fn` also gets `pageRequests`: the URLs the course page's own frame
 * requested (the elements' scripts), without the iframe's.
 */
const open = (target, fn, options = {}) => {
  const pageRequests = [];
  return withCheckedPage(env.browser, target, '', (p) => fn({ ...p, pageRequests }), {
    path: EXAMPLE,
    ready: READY,
    setup: async (c) => {
      await c.addInitScript(recordViolations);
      await c.addInitScript(countModuleStarts);
      c.on('request', (r) => {
        if (r.frame().parentFrame() === null) pageRequests.push(r.url());
      });
    },
    ...options,
  });
};

/** How many times the course page's frame requested `file` (a name in dist/). */
const requested = (pageRequests, file) =>
  pageRequests.filter((u) => new URL(u).pathname.split('/').pop() === file).length;

/** Runs `fn(shadowRoot, host)` in the page for element `id`. */
const inElement = (page, id, fn, arg) =>
  page.evaluate(
    ([i, src, a]) => {
      const host = document.getElementById(i);
      // biome-ignore lint/security/noGlobalEval: test-side only (the function is sent as text into the page); the page itself never evaluates strings
      // biome-ignore lint/complexity/noCommaOperator: (0, eval) is eval in the global scope
      return (0, eval)(`(${src})`)(host.shadowRoot, host, a);
    },
    [id, fn.toString(), arg],
  );
const row = (page, id, head, r) =>
  inElement(
    page,
    id,
    (root, _host, [h, q]) =>
      [...root.querySelectorAll(`table[data-head="${h}"] tbody tr[data-row="${q}"] td`)].map(
        (td) => td.textContent,
      ),
    [head, r],
  );
const text = (page, id, selector) =>
  inElement(page, id, (root, _host, s) => root.querySelector(s).textContent, selector);
const count = (page, id, selector) =>
  inElement(page, id, (root, _host, s) => root.querySelectorAll(s).length, selector);

/**
 * Adds an element with `attrs` (and id `id`, when given) to the course page, waits for its first
 * render and returns what it shows: the event, summary, notes, message, whether its readout and
 * Save buttons are displayed, and per head figure its name (the caption's own text), role and
 * small print.
 */
const addElement = (page, id, attrs) =>
  page.evaluate(
    ([i, a]) =>
      new Promise((resolve) => {
        const e = document.createElement('mha-attention');
        if (i) e.id = i;
        for (const [k, v] of Object.entries(a)) e.setAttribute(k, v);
        const report = (event) => {
          const root = e.shadowRoot;
          const shown = (sel) => root.querySelector(sel).getClientRects().length > 0;
          resolve({
            event: event.type,
            summary: root.querySelector('.summary').textContent,
            message: root.querySelector('.message').textContent,
            toolsVisible: shown('.tools'),
            readoutVisible: shown('.readout'),
            notes: [...root.querySelectorAll('.notes li')].map((li) => li.textContent),
            heads: [...root.querySelectorAll('figure.head')].map((f) => {
              const c = f.querySelector('figcaption');
              return {
                head: f.dataset.head,
                name: c.firstChild.textContent,
                role: c.querySelector('.head-role')?.textContent ?? null,
                details: [...c.querySelectorAll('.head-detail')].map((d) => d.textContent),
              };
            }),
          });
        };
        e.addEventListener('mha-ready', report, { once: true });
        e.addEventListener('mha-error', report, { once: true });
        document.querySelector('main').append(e);
      }),
    [id, attrs],
  );

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`<mha-attention> ${which === 0 ? 'served over http (CSP header + meta)' : 'opened from file:// (CSP meta)'}`, {
    timeout: TIMEOUT,
  }, () => {
    test('three elements and an iframe: course numbers, own files only, no CSP violation', () =>
      open(target(), async ({ page, requests, pageRequests }) => {
        // Module 08, in the element's shadow root.
        assert.deepEqual(await row(page, 'm08', 0, 0), [
          '0.000',
          '0.000',
          '0.424',
          '0.576',
          '0.000',
        ]);
        assert.deepEqual(await row(page, 'm08', 1, 0), [
          '0.000',
          '0.000',
          '0.000',
          '0.000',
          '1.000',
        ]);
        assert.equal(
          await text(page, 'm08', '.readout'),
          "head 0 · query 'Heads' → key 'at': 0.424 · locked",
        );
        assert.equal(
          await text(page, 'm08', '.summary'),
          'n = 5 tokens · d_model = 8 · num_heads = 2 · d_head = 4 · seed 7 · 256 parameters (4 · d_model²) · float64 (numpy’s dtype)',
        );
        // Module 03: one head versus four on one sentence; each element has its own grids.
        assert.equal(await count(page, 'm03-one', 'canvas.heatmap'), 1);
        assert.equal(await count(page, 'm03-four', 'canvas.heatmap'), 4);
        assert.match(
          await text(page, 'm03-four', '.summary'),
          /^n = 11 tokens · d_model = 16 · num_heads = 4 · d_head = 4 · seed 3 · 1\u202F024 parameters \(4 · d_model²\) · float64 \(numpy’s dtype\)$/,
        );
        assert.match(
          await text(page, 'm03-one', '.summary'),
          /num_heads = 1 · d_head = 16 · seed 3 · 1\u202F024 parameters/,
        );
        // docs/embedding.md's module 03 table: the row of "it" (query 7), one head and four.
        assert.equal((await row(page, 'm03-one', 0, 7))[4], '0.991');
        assert.deepEqual((await row(page, 'm03-four', 1, 7)).slice(2, 4), ['0.392', '0.591']);
        assert.equal((await row(page, 'm03-four', 2, 7))[0], '1.000');
        for (const id of ['m03-one', 'm03-four']) {
          const sums = await inElement(page, id, (root) =>
            [...root.querySelectorAll('tbody tr')].map((tr) =>
              [...tr.querySelectorAll('td')].reduce((s, td) => s + Number(td.dataset.weight), 0),
            ),
          );
          assert.equal(sums.length, id === 'm03-one' ? 11 : 44);
          for (const s of sums) assert.ok(Math.abs(s - 1) < 1e-5, `${id} row sum ${s}`);
        }
        // Styles came from the constructed stylesheet: the frame is drawn, no inline style exists
        // (but the sizes and places of a grid's parts and the heads' columns, set by CSSOM, which the CSP allows).
        assert.equal(
          await inElement(
            page,
            'm08',
            (root) => getComputedStyle(root.querySelector('.mha')).borderTopStyle,
          ),
          'solid',
        );
        assert.equal(await inElement(page, 'm08', (root) => root.adoptedStyleSheets.length), 1);
        assert.equal(
          await inElement(
            page,
            'm08',
            (root) =>
              root.querySelectorAll(
                'style, [style*=":"]:not(canvas, .heads, .heatmap-grid, .heatmap-grid > *)',
              ).length,
          ),
          0,
        );
        // The iframe (embed=1) shows the page with its locked cell.
        const frame = page.frames().find((f) => /index\.html/.test(f.url()));
        assert.ok(frame, 'the iframe loaded');
        await frame.waitForSelector('html[data-ready="true"]');
        assert.equal(
          await frame.evaluate(() => document.documentElement.classList.contains('embed')),
          true,
        );
        assert.equal(
          await frame.textContent('#readout'),
          "head 1 · query 'Heads' → key 'things': 1.000 · locked",
        );

        assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
        const own = requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:'));
        for (const u of own) assert.ok(target().isOwn(u), `own files only: ${u}`);
        const files = new Set(own.map((u) => new URL(u).pathname.split('/').pop()));
        for (const f of [
          EXAMPLE,
          'style.css',
          'mha-attention.js',
          'mha_wasm_core.js',
          'index.html',
          'app.js',
        ]) {
          assert.ok(files.has(f), `requested ${f}: ${[...files].join(' ')}`);
        }
        // The course page itself (not its iframe): three attention views need only the core,
        // requested and started once for the three elements; neither the full module nor the
        // date model is requested.
        const got = pageRequests.map((u) => new URL(u).pathname.split('/').pop());
        assert.equal(requested(pageRequests, 'mha-attention.js'), 1, got.join(' '));
        assert.equal(
          requested(pageRequests, 'mha_wasm_core.js'),
          1,
          `the core once for three elements: ${got.join(' ')}`,
        );
        assert.equal(
          requested(pageRequests, 'mha_wasm.js'),
          0,
          `no full module for attention views: ${got.join(' ')}`,
        );
        assert.equal(
          requested(pageRequests, 'date_model.js'),
          0,
          'the date model is loaded only when an element asks for it',
        );
        assert.deepEqual(
          await page.evaluate(() => window.__starts),
          { createMhaCore: 1 },
          'one core instance for the page',
        );
      }));

    test('changing an attribute re-renders that element only; invalid values show a message and keep the view', () =>
      open(target(), async ({ page }) => {
        assert.equal(await setAttributes(page, 'm08', { 'num-heads': '4' }), 'mha-ready');
        assert.equal(await count(page, 'm08', 'canvas.heatmap'), 4);
        assert.match(await text(page, 'm08', '.summary'), /num_heads = 4 · d_head = 2/);
        assert.equal(
          await count(page, 'm03-one', 'canvas.heatmap'),
          1,
          'the other elements keep their settings',
        );
        // 64 tokens at d_model 512: 64·512·(4·512 + 2·64) multiply-adds > 4M: float32, and it says so.
        const words64 = Array.from({ length: 64 }, (_, i) => `w${i}`).join(' ');
        assert.equal(
          await setAttributes(page, 'm03-one', { tokens: words64, 'd-model': '512' }),
          'mha-ready',
        );
        assert.match(
          await text(page, 'm03-one', '.summary'),
          /^n = 64 tokens · d_model = 512 · num_heads = 1 .* · float32 \(as PyTorch; over 4M multiply-adds\)$/,
        );

        assert.equal(await setAttributes(page, 'm08', { 'num-heads': '3' }), 'mha-error');
        assert.match(
          await text(page, 'm08', '.message'),
          /^mha-attention: d_model=8 is not divisible by num_heads=3 .*\(attributes d-model, num-heads\)$/,
        );
        assert.equal(
          await inElement(page, 'm08', (root) =>
            root.querySelector('.message').getAttribute('role'),
          ),
          'alert',
        );
        assert.equal(await count(page, 'm08', 'canvas.heatmap'), 4, 'the last valid view stays');

        assert.equal(
          await setAttributes(page, 'm08', {
            'num-heads': '2',
            tokens: 'The cat sat on the mat',
            causal: '',
          }),
          'mha-ready',
        );
        assert.equal(await text(page, 'm08', '.message'), '');
        assert.equal(await count(page, 'm08', 'canvas.heatmap'), 2);
        assert.equal(
          (await row(page, 'm08', 0, 0)).join(' '),
          '1.000 0.000 0.000 0.000 0.000 0.000',
          'causal: query 0 sees key 0 only',
        );

        assert.equal(
          await setAttributes(page, 'm08', { heads: '1', preset: null, causal: null }),
          'mha-ready',
        );
        assert.deepEqual(
          await inElement(page, 'm08', (root) =>
            [...root.querySelectorAll('canvas.heatmap')].map((c) => c.dataset.head),
          ),
          ['1'],
        );
        assert.equal(await setAttributes(page, 'm08', { heads: '5' }), 'mha-error');
        assert.match(
          await text(page, 'm08', '.message'),
          /^mha-attention: heads="5" names head 5; this view has heads 0 to 1\.$/,
        );

        // A new element with bad attributes: a message naming the value, not a broken element.
        for (const [attrs, want] of [
          [
            { preset: 'module-99' },
            /preset="module-99" is not one of module-08, causal-positions, date-translator/,
          ],
          [{ 'd-model': 'eight' }, /d_model=eight is not a whole number\. \(attribute d-model\)/],
          [
            { tokens: '<img src=x onerror=window.__pwned=1>', cell: '9.9.9' },
            /cell="9\.9\.9" is outside this view/,
          ],
          [{ heads: '0,9' }, /heads="0,9" names head 9; this view has heads 0 to 1\./],
        ]) {
          const got = await addElement(page, null, attrs);
          assert.match(got.message, want);
          if (got.event === 'mha-error') {
            // Nothing was drawn: say so, and offer nothing to save and no cell to point at.
            assert.equal(got.summary, 'Nothing to show.', JSON.stringify(got));
            assert.equal(got.toolsVisible, false, JSON.stringify(got));
            assert.equal(got.readoutVisible, false, JSON.stringify(got));
          }
        }
        assert.equal(await page.evaluate(() => window.__pwned), undefined);
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
      }));

    test('keyboard inside an element: arrows announce, Enter locks, Escape clears; elements stay independent', () =>
      open(target(), async ({ page }) => {
        await inElement(page, 'm03-four', (root) =>
          root.querySelector('canvas[data-head="2"]').focus(),
        );
        await page.keyboard.press('ArrowDown');
        await page.keyboard.press('ArrowRight');
        const w = (await row(page, 'm03-four', 2, 1))[1];
        assert.equal(
          await text(page, 'm03-four', '.announce'),
          `head 2, query 'animal', key 'animal': ${w}`,
        );
        assert.equal(
          await inElement(page, 'm03-four', (root) =>
            root.querySelector('.announce').getAttribute('aria-live'),
          ),
          'polite',
        );
        await page.keyboard.press('Enter');
        assert.equal(
          await text(page, 'm03-four', '.announce'),
          `head 2, query 'animal', key 'animal': ${w}, locked`,
        );
        assert.match(await text(page, 'm03-four', '.readout'), / · locked$/);
        // The other elements did not move.
        assert.equal(
          await text(page, 'm08', '.readout'),
          "head 0 · query 'Heads' → key 'at': 0.424 · locked",
        );
        assert.equal(await text(page, 'm03-one', '.announce'), '');
        await page.keyboard.press('Escape');
        assert.equal(await text(page, 'm03-four', '.announce'), 'No cell selected.');
        assert.match(await text(page, 'm03-four', '.readout'), /^Point at a cell/);
        // A tap-like click locks a cell of another element.
        const box = await inElement(page, 'm03-one', (root) => {
          const c = root.querySelector('canvas.heatmap');
          c.scrollIntoView({ block: 'center' });
          const r = c.getBoundingClientRect();
          return {
            x: r.x + Number(c.dataset.originX) + 0.5 * Number(c.dataset.cell),
            y: r.y + Number(c.dataset.originY) + 0.5 * Number(c.dataset.cell),
          };
        });
        await page.mouse.click(box.x, box.y);
        assert.match(
          await text(page, 'm03-one', '.announce'),
          /^head 0, query 'The', key 'The': \d\.\d{3}, locked$/,
        );
      }));

    test('saving from an element: CSV of the heads shown, JSON h × n × m', () =>
      open(target(), async ({ page }) => {
        await setAttributes(page, 'm08', { heads: '1' });
        const [d] = await Promise.all([
          page.waitForEvent('download'),
          inElement(page, 'm08', (root) => root.querySelector('button[data-export="csv"]').click()),
        ]);
        assert.equal(d.suggestedFilename(), 'mha-attention-d8-h2-seed7.csv');
        const lines = (await import('node:fs')).readFileSync(await d.path(), 'utf8').split('\r\n');
        assert.equal(lines.length, 1 + 25 + 1);
        assert.equal(lines[5].split(',').slice(0, 5).join(','), '1,0,Heads,4,things');
        assert.equal(Number(lines[5].split(',')[5]).toFixed(3), '1.000');
        const [j] = await Promise.all([
          page.waitForEvent('download'),
          inElement(page, 'm08', (root) =>
            root.querySelector('button[data-export="json"]').click(),
          ),
        ]);
        const doc = JSON.parse((await import('node:fs')).readFileSync(await j.path(), 'utf8'));
        assert.deepEqual([doc.heads, doc.shape, doc.tokens.length], [[1], [1, 5, 5], 5]);
        assert.deepEqual(
          doc.attn_weights[0][0].map((w) => w.toFixed(3)),
          ['0.000', '0.000', '0.000', '0.000', '1.000'],
        );
        const [p] = await Promise.all([
          page.waitForEvent('download'),
          inElement(page, 'm08', (root) => root.querySelector('button[data-export="png"]').click()),
        ]);
        const png = (await import('node:fs')).readFileSync(await p.path());
        assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
        assert.ok(
          png.readUInt32BE(16) > 200 && png.readUInt32BE(20) > 200,
          'width and height from the IHDR chunk',
        );
      }));

    test('preset="date-translator": the trained model, loaded once for the page', () =>
      open(target(), async ({ page, requests, pageRequests }) => {
        assert.equal(
          requested(pageRequests, 'mha_wasm.js'),
          0,
          'no full module before a Date translator element',
        );
        const result = await page.evaluate(
          () =>
            new Promise((resolve) => {
              const made = ['30.11.26', 'Nov 30, 2026'].map((t, i) => {
                const e = document.createElement('mha-attention');
                e.id = `date${i}`;
                e.setAttribute('preset', 'date-translator');
                e.setAttribute('tokens', t);
                if (i === 1) e.setAttribute('kind', 'encoder_self');
                document.querySelector('main').append(e);
                return new Promise((r) => e.addEventListener('mha-ready', r, { once: true }));
              });
              Promise.all(made).then(() =>
                resolve(
                  ['date0', 'date1'].map((id) => {
                    const root = document.getElementById(id).shadowRoot;
                    return [
                      root.querySelector('.summary').textContent,
                      root.querySelectorAll('canvas.heatmap').length,
                    ];
                  }),
                ),
              );
            }),
        );
        assert.deepEqual(result, [
          ['"30.11.26" → 2026-11-30 · Cross-attention, layer 1 · 4 heads', 4],
          ['"Nov 30, 2026" → 2026-11-30 · Encoder self-attention, layer 1 · 4 heads', 4],
        ]);
        assert.equal(
          requests.filter((u) => u.endsWith('/date_model.js')).length,
          1,
          'one date_model.js for both',
        );
        // The full module (DateModel) now, once for both; the core stays the only other module.
        assert.equal(requested(pageRequests, 'mha_wasm.js'), 1, 'one mha_wasm.js for both');
        assert.equal(requested(pageRequests, 'mha_wasm_core.js'), 1);
        assert.deepEqual(
          await page.evaluate(() => window.__starts),
          { createMhaCore: 1, createMhaModule: 1 },
          'one core and one full module for five elements',
        );
        // An attention view added now still uses the core (its numbers: module 08's).
        assert.equal(
          await page.evaluate(
            () =>
              new Promise((resolve) => {
                const e = document.createElement('mha-attention');
                e.id = 'late';
                e.setAttribute('preset', 'module-08');
                e.addEventListener('mha-ready', () => resolve(window.__starts.createMhaCore), {
                  once: true,
                });
                document.querySelector('main').append(e);
              }),
          ),
          1,
        );
        assert.deepEqual(await row(page, 'late', 0, 0), [
          '0.000',
          '0.000',
          '0.424',
          '0.576',
          '0.000',
        ]);
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
      }));

    test('preset="date-translator": each head captioned with its measured role, the claims under the summary', () =>
      open(target(), async ({ page }) => {
        // Cross-attention, layer 1: four heads, four captions (web/date_model_heads.json's figures).
        const cross = await addElement(page, 'date-cross', {
          preset: 'date-translator',
          tokens: '30.11.26',
        });
        assert.equal(cross.event, 'mha-ready', cross.message);
        assert.deepEqual(
          cross.heads.map((h) => [h.name, h.role]),
          [
            [
              'Head 0',
              'strongest on the month: 89% of the month rows · tracking over the three fields 0.86 · 85.65% exact match without it',
            ],
            [
              'Head 1',
              'strongest on the year: 81% of the year rows · tracking over the three fields 0.84 · 98.3% exact match without it, the layer’s least needed',
            ],
            [
              'Head 2',
              'the content head that copies the year (claim 2) · tracking over the three fields 0.97 · 52.75% exact match without it, the layer’s most needed',
            ],
            [
              'Head 3',
              'strongest on the day: 98% of the day rows · tracking over the three fields 0.91 · 83.35% exact match without it',
            ],
          ],
        );
        assert.deepEqual(
          cross.heads.map((h) => h.details),
          [
            [],
            [
              'Claim 1, a positional head that reads the day: false (day tracking 0.77, the claim needs below 0.5)',
            ],
            [
              'Claim 2, a content head that copies the year: true (year tracking 1.00, the claim needs at least 0.5)',
            ],
            [],
          ],
        );
        assert.deepEqual(cross.notes, [
          'Claim 1, a positional head that reads the day: false (cross layer 1 head 1: day tracking 0.77, the claim needs below 0.5).',
          'Claim 2, a content head that copies the year: true (cross layer 1 head 2: year tracking 1.00, the claim needs at least 0.5).',
          'Claim 3, a mostly redundant head that could be pruned: true (encoder_self layer 0 head 2: switching it off costs 0.1 points, at most 1 allowed).',
        ]);
        // The prunable head (encoder self-attention, layer 0, head 2) is marked as such.
        const enc = await addElement(page, 'date-enc', {
          preset: 'date-translator',
          tokens: '30.11.26',
          kind: 'encoder_self',
          layer: '0',
        });
        assert.equal(
          enc.heads[2].role,
          'the mostly redundant head that could be pruned (claim 3) · looks at the year: 31%',
        );
        assert.deepEqual(enc.heads[2].details, [
          'Claim 3, a mostly redundant head that could be pruned: true (switching it off costs 0.1 points, at most 1 allowed)',
          'prunable: the least useful head; switching it off costs 0.1 points of exact match',
        ]);
        assert.equal(enc.heads[0].role, 'looks at the month: 36%');
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
      }));

    test('preset="english": the English model on the element\'s text, every head of every layer with its held-out role', () =>
      open(target(), async ({ page, pageRequests }) => {
        const sentence = 'The dog sat by the door. The dog sat by the';
        const got = await addElement(page, 'en', {
          preset: 'english',
          text: sentence,
          cell: '3.2.1',
        });
        assert.equal(got.event, 'mha-ready', got.message);
        // The same file run in node: its shape and pieces; the roles the heads file gives.
        const mod = await loadModule();
        const model = new mod.EnglishModel(
          readFileSync(path.join(ROOT, 'dist', 'english_lm.safetensors')),
        );
        const run = model.run(sentence, { top: 1 });
        const { layers: L, heads: H, n } = run;
        assert.equal(
          got.summary,
          `English language model · ${L} layers × ${H} heads · ${n} tokens: <bos> and ${n - 1} pieces of ` +
            `the text (“·”: a piece that continues a word) · perplexity ${got.summary.match(/perplexity (\d+\.\d)$/)?.[1]}`,
        );
        const typical = readTypicalRoles(
          JSON.parse(readFileSync(path.join(ROOT, 'web', 'english_lm_heads.json'), 'utf8')),
        );
        assert.deepEqual(
          got.heads.map((h) => [h.name, h.role]),
          Array.from({ length: L * H }, (_, k) => [
            `Layer ${Math.floor(k / H)}, head ${k % H}`,
            typicalText(typical.get(`${Math.floor(k / H)}.${k % H}`)),
          ]),
        );
        for (const h of got.heads) assert.match(h.role, /^held-out: .*\(chance \d\.\d\d\)/);
        assert.equal(await count(page, 'en', 'canvas.heatmap'), L * H);
        // Causal: row 2 reads <bos> and the first two pieces only, and sums to 1.
        const r = await row(page, 'en', 3, 2);
        assert.equal(r.length, n);
        assert.deepEqual(r.slice(3), Array(n - 3).fill('0.000'));
        assert.ok(
          Math.abs(r.slice(0, 3).reduce((a, x) => a + Number(x), 0) - 1) < 0.002,
          r.join(' '),
        );
        const label = (t) => (t.startsWith('▁') ? t.slice(1) : `·${t}`);
        // The locked cell's readout names the layer and the head.
        assert.equal(
          await text(page, 'en', '.readout'),
          `layer 0, head 3 · query '${label(run.tokens[2])}' → key '${label(run.tokens[1])}': ${r[1]} · locked`,
        );
        // One layer: its four heads, named by layer.
        assert.equal(await setAttributes(page, 'en', { layer: '1', cell: null }), 'mha-ready');
        assert.deepEqual(
          await inElement(page, 'en', (root) =>
            [...root.querySelectorAll('figcaption')].map((c) => c.firstChild.textContent),
          ),
          Array.from({ length: H }, (_, k) => `Layer 1, head ${k}`),
        );
        assert.ok(
          (await text(page, 'en', '.summary')).startsWith(
            `English language model · layer 1 of ${L} · ${H} heads · ${n} tokens`,
          ),
        );
        assert.equal(await setAttributes(page, 'en', { layer: String(L) }), 'mha-error');
        assert.equal(
          await text(page, 'en', '.message'),
          `mha-attention: layer="${L}" is not a layer of the English model (0 to ${L - 1}).`,
        );
        // An empty text: <bos> alone, said in the singular.
        const empty = await addElement(page, 'en-empty', { preset: 'english', text: '' });
        assert.equal(empty.event, 'mha-ready', empty.message);
        assert.match(
          empty.summary,
          /^English language model · \d+ layers × \d+ heads · 1 token: <bos> alone \(the text is empty\)/,
        );
        // The model came from english_lm.js beside mha-attention.js, with the full module: once.
        assert.equal(requested(pageRequests, 'english_lm.js'), 1);
        assert.equal(requested(pageRequests, 'mha_wasm.js'), 1);
        assert.equal(requested(pageRequests, 'english.js'), 0, "not the page's English mode");
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
      }));

    test('experiment="…" (preset="english"): one experiment alone, its question before its measurement; bad values named', () =>
      open(target(), async ({ page }) => {
        const curve = JSON.parse(
          readFileSync(path.join(ROOT, 'web', 'english_lm_prune.json'), 'utf8'),
        );
        const got = await addElement(page, 'exp', { preset: 'english', experiment: 'prune' });
        assert.equal(got.event, 'mha-ready', got.message);
        assert.equal(got.summary, 'English language model · an experiment on its heads');
        assert.equal(
          await inElement(page, 'exp', (root) => root.querySelector('summary').textContent),
          'Pruning: how many heads can go?',
        );
        const state = () =>
          inElement(page, 'exp', (root) => ({
            disabled: root.querySelector('button[data-reveal]').disabled,
            result: !root.querySelector('.en-exp-result').hidden,
            verdict: root.querySelector('.en-exp-verdict')?.textContent ?? null,
            points: root.querySelector('polyline')?.getAttribute('points').split(' ').length ?? 0,
            mine: root.querySelector('#english-exp-mine') !== null,
          }));
        assert.deepEqual(await state(), {
          disabled: true,
          result: false,
          verdict: null,
          points: 0,
          mine: false,
        });
        await inElement(page, 'exp', (root) => {
          root.querySelector('input[value="lot"]').click();
          root.querySelector('button[data-reveal]').click();
        });
        const after = await state();
        assert.equal(after.points, curve.heads.length + 1);
        assert.ok(after.verdict.startsWith('You said “a lot (more than 0.1)”.'), after.verdict);
        assert.ok(after.verdict.includes(curve.steps[12].value.toFixed(4)), after.verdict);
        assert.equal(after.mine, false, 'no heads to switch off in the element');
        assert.equal(await setAttributes(page, 'exp', { experiment: 'heads' }), 'mha-error');
        assert.equal(
          await text(page, 'exp', '.message'),
          'mha-attention: experiment="heads" is not one of prune, date, sweep, replay.',
        );
        assert.equal(await setAttributes(page, 'exp', { experiment: 'date' }), 'mha-ready');
        assert.equal(
          await inElement(page, 'exp', (root) => root.querySelector('summary').textContent),
          'Pruning the date model: when does it lose a point?',
        );
        assert.deepEqual(await page.evaluate(() => window.__csp), []);
      }));
  });
}

// docs/embedding.md: the element loads its wasm from the folder mha-attention.js came from, so a
// course page may keep it elsewhere (src="../widgets/mha-attention.js"). From file://, under the
// CSP meta tag: the core comes from widgets/, nothing is requested from the page's own folder;
// with the core missing there, the element says which file to put where.
test('mha-attention.js from another folder: the core is loaded from beside it (file://)', {
  timeout: TIMEOUT,
}, async () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'mha-element-'));
  try {
    const widgets = path.join(tmp, 'widgets');
    const course = path.join(tmp, 'course');
    mkdirSync(widgets);
    mkdirSync(course);
    for (const f of ['mha-attention.js', 'mha_wasm_core.js'])
      copyFileSync(path.join(DIST, f), path.join(widgets, f));
    const page = (name, element) =>
      writeFileSync(
        path.join(course, name),
        '<!doctype html><html lang="en"><head>' +
          '<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src \'self\'; ' +
          "script-src 'self' 'wasm-unsafe-eval'; style-src 'self'\"><title>course</title></head>" +
          `<body><main>${element}</main><script src="../widgets/mha-attention.js"></script></body></html>`,
      );
    page('lesson.html', '<mha-attention id="m08" preset="module-08"></mha-attention>');
    const base = `${pathToFileURL(tmp).href}/`;
    const target = { url: `${base}course/lesson.html`, isOwn: (u) => u.startsWith(base) };
    const p = await openPage(env.browser, target, '', {
      ready: 'mha-attention[data-state="ready"]',
      setup: (c) => c.addInitScript(recordViolations),
    });
    try {
      assert.deepEqual(await row(p.page, 'm08', 0, 0), [
        '0.000',
        '0.000',
        '0.424',
        '0.576',
        '0.000',
      ]);
      const files = p.requests
        .filter((u) => u.startsWith('file:'))
        .map((u) => u.slice(base.length))
        .sort();
      assert.deepEqual(files, [
        'course/lesson.html',
        'widgets/mha-attention.js',
        'widgets/mha_wasm_core.js',
      ]);
      assert.deepEqual(await p.page.evaluate(() => window.__csp), []);
      assert.deepEqual(p.problems, []);
    } finally {
      await p.close();
    }

    // The same page with the core removed from widgets/: a message naming the file and the folder.
    rmSync(path.join(widgets, 'mha_wasm_core.js'));
    const q = await openPage(env.browser, target, '', {
      ready: 'mha-attention[data-state="error"]',
    });
    try {
      assert.equal(
        await text(q.page, 'm08', '.message'),
        `mha-attention: mha_wasm_core.js did not load from ${base}widgets/mha_wasm_core.js: keep it next to ` +
          'mha-attention.js (./scripts/build.sh writes it)',
      );
      // The browser's own report of the missing file, and nothing else.
      assert.ok(
        q.problems.length > 0 &&
          q.problems.every(
            (m) =>
              m.includes('mha_wasm_core.js') ||
              m === 'console error: Failed to load resource: net::ERR_FILE_NOT_FOUND',
          ),
        q.problems.join('\n'),
      );
    } finally {
      await q.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
