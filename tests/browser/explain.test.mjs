// The explain views (web/src/explain/) in the built page: numbers read from the page and
// compared with module 08's golden data (tests/fixtures/numpy_mha.json, written by numpy) and
// with the page's own grids. Needs ./scripts/build.sh first.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT, tableRow, cellCentre, useBrowserAndTargets, withCheckedPage } from './helpers.mjs';

const TIMEOUT = 60_000;
const env = useBrowserAndTargets();
const MODULE_08 = JSON.parse(
  readFileSync(path.join(ROOT, 'tests/fixtures/numpy_mha.json'), 'utf8'),
).cases.find((c) => c.seed === 7 && c.n === 5 && c.d_model === 8 && c.num_heads === 2);

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

const withPage = (hash, fn) => withCheckedPage(env.browser, env.servers.targets[0], hash, fn);

/** The step panel's rows as {step: {text, value}} (value: data-value parsed). */
function steps(page) {
  return page.$$eval('#explain-step tr[data-step]', (trs) =>
    Object.fromEntries(
      trs.map((tr) => [
        tr.dataset.step,
        {
          text: tr.querySelector('td').textContent,
          value:
            tr.dataset.value === undefined
              ? null
              : JSON.parse(tr.dataset.value.replace(/^-Infinity$/, '"-Infinity"')),
        },
      ]),
    ),
  );
}

function close(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  actual.forEach((a, i) =>
    assert.ok(
      Math.abs(a - expected[i]) <= tol * Math.max(1, Math.abs(expected[i])),
      `${what}[${i}]: ${a} vs ${expected[i]} (tolerance ${tol}, relative above 1)`,
    ),
  );
}

describe('explain views', { timeout: TIMEOUT }, () => {
  for (const which of [0, 1])
    test(`click a cell: the step panel shows module 08's numbers for head 0, query 0, key 2 (${which ? 'file://' : 'served'})`, () =>
      withCheckedPage(
        env.browser,
        env.servers.targets[which],
        '#preset=module-08',
        async ({ page }) => {
          assert.equal(
            await page.$eval('#explain-step', (d) => d.open),
            true,
            'the step panel is open',
          );
          const c = await cellCentre(page, 0, 0, 2);
          await page.mouse.click(c.x, c.y);
          await page.waitForSelector('#explain-step [data-cell="0.0.2"]');
          const s = await steps(page);
          // q_0 and k_2 of head 0 are numpy's (X @ Wq)[0, 0:4] and (X @ Wk)[2, 0:4]; float32 copies.
          close(s.q.value, projected(MODULE_08.Wq, 0, 0, 3), 1e-5, 'q_0');
          close(s.k.value, projected(MODULE_08.Wk, 2, 0, 3), 1e-5, 'k_2');
          close(s.v.value, projected(MODULE_08.Wv, 2, 0, 3), 1e-5, 'v_2');
          // Every number is the core's own explanation (explainCell), not a page re-computation.
          assert.match(
            await page.textContent('#explain-step tr[data-step="dot"]'),
            /by the core \(explainCell\)/,
          );
          const dot = s.q.value.reduce((a, x, t) => a + x * s.k.value[t], 0);
          close([s.dot.value], [dot], 1e-5, 'q·k');
          close([s.scaled.value], [dot / 2], 1e-5, 'q·k / √4');
          assert.equal(s.mask.value, 0);
          assert.equal(s.mask.text, '0');
          // The weight: module 08 prints 0.424; the fixture holds numpy's full value.
          assert.equal(s.weight.text, '0.424');
          close([s.weight.value], [MODULE_08.expected.attn_weights.data[2]], 1e-6, 'a_0,2');
          close([s.exp.value / s.sum.value], [s.weight.value], 1e-6, 'exp / row sum');
          close(
            s.contribution.value,
            s.v.value.map((x) => x * s.weight.value),
            1e-6,
            'a · v',
          );
          // The grid's table agrees.
          assert.deepEqual(await tableRow(page, 0, 0), [
            '0.000',
            '0.000',
            '0.424',
            '0.576',
            '0.000',
          ]);
          // Another click, in head 1: module 08's 1.000 on key 4.
          const c2 = await cellCentre(page, 1, 0, 4);
          await page.mouse.click(c2.x, c2.y);
          await page.waitForSelector('#explain-step [data-cell="1.0.4"]');
          const s2 = await steps(page);
          assert.equal(s2.weight.text, '1.000');
          close(s2.q.value, projected(MODULE_08.Wq, 0, 4, 7), 1e-5, 'head 1 q_0');
        },
      ));

  test('a float32 view (64 tokens, d_model 128): the grids come from a weights-only forward; locking a cell computes V and the head outputs for the step panel', () =>
    withPage(
      `#text=${Array.from({ length: 64 }, (_, i) => `w${i}`).join('+')}&d_model=128&num_heads=4&seed=7`,
      async ({ page }) => {
        await page.waitForFunction(() =>
          /^n = 64 tokens · d_model = 128/.test(document.getElementById('summary').textContent),
        );
        assert.match(await page.textContent('#precision'), /float32/);
        assert.equal(
          await page.getAttribute('#heads', 'data-full-forward'),
          'false',
          'no cell locked: weights only',
        );
        // Below the fold and taller than the viewport: its top at the top of the window.
        await page.$eval('canvas[data-head="1"]', (el) => el.scrollIntoView({ block: 'start' }));
        const c = await cellCentre(page, 1, 5, 3);
        await page.mouse.click(c.x, c.y);
        await page.waitForSelector('#heads[data-full-forward="true"]');
        await page.waitForSelector('#explain-step [data-cell="1.5.3"]');
        const s = await steps(page);
        // The core's float32 experiment (as the page: precision auto), computed here under node.
        const core = await createRequire(import.meta.url)(
          path.join(ROOT, 'build', 'wasm', 'mha_wasm_core.js'),
        )();
        const r = core.numpyExperiment({
          seed: 7,
          tokens: 64,
          d_model: 128,
          num_heads: 4,
          precision: 'auto',
        });
        assert.equal(r.precision, 'float32');
        const cols = (m, row) => Array.from(m.subarray(row * 128 + 32, row * 128 + 64)); // head 1: columns 32-63
        // Chromium runs the relaxed-SIMD (fused) GEMM kernel, node the SIMD128 one: float32 sums of
        // 128 products rounded differently, a few ulp apart (docs/js-api.md, mod.gemmKernel).
        close(s.v.value, cols(r.v, 3), 1e-5, 'v_3 of head 1');
        close(s.output.value, cols(r.head_outputs, 5), 1e-5, 'y_5 of head 1');
        close([s.weight.value], [r.attn_weights[(1 * 64 + 5) * 64 + 3]], 1e-6, 'a_5,3');

        // Unlock, type (a weights-only forward again), lock again: the panel says V and the head
        // outputs are being computed until they are there, never an error (withPage fails on one).
        await page.mouse.click(c.x, c.y); // unlock
        await page.fill('#text', Array.from({ length: 63 }, (_, i) => `w${i}`).join(' '));
        await page.waitForSelector('#heads[data-full-forward="false"]');
        await page.$eval('canvas[data-head="1"]', (el) => el.scrollIntoView({ block: 'start' }));
        const c2 = await cellCentre(page, 1, 5, 3);
        await page.mouse.click(c2.x, c2.y);
        await page.waitForSelector('#explain-step [data-cell="1.5.3"]');
        assert.equal(await page.getAttribute('#heads', 'data-full-forward'), 'true');
      },
    ));

  test('beyond 4M weights (no intermediates kept) a locked cell gets a note, not steps', () =>
    withPage(
      `#text=${Array.from({ length: 1100 }, (_, i) => `w${i}`).join('+')}&d_model=64&num_heads=4&seed=7`,
      async ({ page }) => {
        await page.waitForFunction(
          () => /^n = 1100 tokens/.test(document.getElementById('summary').textContent),
          null,
          { timeout: 60_000 },
        );
        await page.$eval('canvas[data-head="0"]', (el) => el.focus());
        await page.keyboard.press('Enter'); // locks cell (0, 0) of head 0
        await page.waitForSelector('#explain-step [data-note="true"]');
        assert.match(
          await page.textContent('#explain-step'),
          /No steps at this size: .* num_heads · n² ≤ 4\u202F194\u202F304 \(here 4\u202F840\u202F000\)/,
        );
      },
    ));

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
      // The core's explainCell still reports q·k for a masked cell (the mask acts after it).
      if (s.dot.value !== null)
        close([s.dot.value], [s.q.value.reduce((a, x, t) => a + x * s.k.value[t], 0)], 1e-5, 'q·k');
      assert.doesNotMatch(await page.textContent('#explain-step'), /NaN/);
    }));

  test("pipeline and parameters: module 08's shapes, 256 for every valid num_heads, the divisibility error", () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-pipeline > summary');
      await page.waitForSelector('#explain-pipeline [data-stage="out"]');
      const shapes = await page.$$eval('#explain-pipeline [data-stage]', (lis) =>
        Object.fromEntries(
          lis.map((li) => [li.dataset.stage, li.querySelector('.pipeline-shape').textContent]),
        ),
      );
      assert.equal(shapes.x, '(5, 8)');
      assert.equal(shapes.qkv, '(5, 8) @ (8, 24) → (5, 24)');
      assert.equal(shapes.split, '2 × (5, 4) each');
      assert.equal(shapes.out, '(5, 8)');
      assert.equal(
        await page.locator('#explain-pipeline [data-stage="split"] .pipeline-head').count(),
        2,
      );

      await page.click('#explain-params > summary');
      await page.waitForSelector('#explain-params tr[data-heads]');
      const rows = await page.$$eval('#explain-params tr[data-heads]', (trs) =>
        trs.map((tr) => [Number(tr.dataset.heads), Number(tr.dataset.count)]),
      );
      // PyTorch's counts (tests/fixtures/param_counts.json): 256 for d_model 8 and 1, 2, 4, 8 heads.
      const torch = JSON.parse(
        readFileSync(path.join(ROOT, 'tests/fixtures/param_counts.json'), 'utf8'),
      ).counts.filter((c) => c.d_model === 8 && !c.bias && c.kdim === 8 && c.vdim === 8);
      assert.deepEqual(
        rows.map((r) => r[0]),
        [1, 2, 4, 8],
      );
      for (const [heads, count] of rows) {
        const t = torch.find((c) => c.num_heads === heads);
        if (t) assert.equal(count, t.count, `num_heads=${heads}`);
        assert.equal(count, 256);
      }
      assert.equal(await page.getAttribute('#explain-params .params-verdict', 'data-same'), 'true');
      assert.match(await page.textContent('#explain-params tr[data-total="bias"]'), /288/);
      await page.fill('#explain-params .params-try input', '3');
      assert.match(
        await page.textContent('#explain-params .params-try-out'),
        /d_model=8 is not divisible by num_heads=3/,
      );
      await page.fill('#explain-params .params-try input', '4');
      assert.equal(
        await page.textContent('#explain-params .params-try-out'),
        'num_heads=4: d_head = 2, 256 parameters.',
      );
    }));

  test('one head versus many: the h = 1 grid beside the current heads, rows summing to 1', () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-compare > summary');
      await page.waitForSelector('#explain-compare table[data-compare="single"]');
      assert.equal(await page.locator('#explain-compare canvas[data-compare="multi"]').count(), 2);
      const single = await page.$$eval(
        '#explain-compare table[data-compare="single"] tbody tr',
        (trs) =>
          trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.weight))),
      );
      assert.equal(single.length, 5);
      for (const row of single) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
      // The multi-head side is the page's own heads, number for number.
      const multi0 = await page.$$eval(
        '#explain-compare table[data-compare="multi"][data-compare-head="0"] tbody tr[data-row="0"] td',
        (tds) => tds.map((td) => td.textContent),
      );
      assert.deepEqual(multi0, ['0.000', '0.000', '0.424', '0.576', '0.000']);
      // The page's own grids are still found by [data-head] alone.
      assert.equal(await page.locator('canvas[data-head]').count(), 2);
      assert.equal(await page.locator('table[data-head]').count(), 2);
    }));
});

const require = createRequire(import.meta.url);
/** The same wasm module the page runs (dist/mha_wasm.js), under node: the oracle for page numbers. */
async function coreModule() {
  const create = require(path.join(ROOT, 'dist', 'mha_wasm.js'));
  return create();
}
const weightsOf = (page, head) =>
  page.$$eval(`table[data-head="${head}"] tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.weight))),
  );

describe('masks and switched-off heads', { timeout: TIMEOUT }, () => {
  test("sliding window, key padding and a drawn mask: the page's weights are the core's, links round-trip", async () => {
    const mod = await coreModule();
    const base = { seed: 7, tokens: 5, d_model: 8, num_heads: 2 };
    const band = Uint8Array.from({ length: 25 }, (_, k) =>
      Math.abs(Math.floor(k / 5) - (k % 5)) > 1 ? 1 : 0,
    );
    await withPage('#preset=module-08&mask=window&window=1', async ({ page }) => {
      assert.equal(await page.inputValue('#mask'), 'window');
      assert.equal(await page.isVisible('#mask-window'), true);
      assert.equal(await page.isVisible('#mask-pad'), false);
      // The fields' spinners stop at the 5 tokens' limits (index.html says 64 and 63).
      assert.equal(await page.getAttribute('#mask-pad', 'max'), '5');
      assert.equal(await page.getAttribute('#mask-window', 'max'), '4');
      const want = mod.numpyExperiment({ ...base, attn_mask: band }).attn_weights;
      for (const head of [0, 1]) {
        const got = (await weightsOf(page, head)).flat();
        got.forEach((w, k) =>
          assert.ok(Math.abs(w - want[head * 25 + k]) < 1e-7, `head ${head} cell ${k}`),
        );
        got.forEach((w, k) => {
          if (band[k]) assert.equal(w, 0, `outside the window: ${k}`);
        });
      }
      // Every key padded: every row fully masked, drawn hatched, weights 0, never NaN.
      await page.selectOption('#mask', 'padding');
      await page.fill('#mask-pad', '5');
      await page.waitForFunction(() => location.hash.includes('pad=5'));
      assert.equal(
        await page.evaluate(() => location.hash),
        '#preset=module-08&mask=padding&pad=5',
      );
      assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.000', '0.000', '0.000']);
      assert.doesNotMatch(await page.textContent('#heads'), /NaN/);
      assert.equal(await page.textContent('#alert'), '');
      // An impossible padding count: the alert names it and the grids stay.
      await page.fill('#mask-pad', '9');
      await page.waitForFunction(() => document.getElementById('alert').textContent !== '');
      assert.match(await page.textContent('#alert'), /pad=9 is not a whole number from 0 to 5/);
      assert.equal(await page.getAttribute('#mask-pad', 'aria-invalid'), 'true');
      // One token: the window field, unused by the padding mask, follows its limit (0), so that
      // choosing the window mask then is valid at once.
      await page.fill('#mask-pad', '1');
      await page.fill('#text', 'hello');
      await page.waitForFunction(() =>
        /^n = 1 token /.test(document.getElementById('summary').textContent),
      );
      assert.deepEqual(
        [await page.inputValue('#mask-window'), await page.getAttribute('#mask-window', 'max')],
        ['0', '0'],
      );
      await page.selectOption('#mask', 'window');
      await page.waitForFunction(() => location.hash.includes('mask=window'));
      assert.equal(await page.textContent('#alert'), '');
    });
    await withPage('#preset=module-08&mask=drawn', async ({ page }) => {
      assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
      // Drawing: a click on head 0, query 0, key 3 masks that cell (for every head).
      const c = await cellCentre(page, 0, 0, 3);
      await page.mouse.click(c.x, c.y);
      await page.waitForFunction(() => location.hash.includes('drawn=0.3'));
      const drawn = new Uint8Array(25);
      drawn[3] = 1;
      const want = mod.numpyExperiment({ ...base, attn_mask: drawn }).attn_weights;
      const got = (await weightsOf(page, 0)).flat();
      got.forEach((w, k) => assert.ok(Math.abs(w - want[k]) < 1e-7, `cell ${k}`));
      assert.equal(got[3], 0);
      // The step panel draws with the full module, loaded on this first click (wasm_modules.js).
      await page.waitForSelector('#explain-step [data-cell="0.0.3"]');
      assert.equal((await steps(page)).mask.text, '−∞');
      assert.match(await page.textContent('#mask-drawn-count'), /^1 cell masked/);
      // A second click lets it attend again.
      await page.mouse.click(c.x, c.y);
      await page.waitForFunction(() => !location.hash.includes('drawn='));
      assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
    });
    await withPage('#preset=module-08&mask=lots&window=x&drawn=9.9&off=5', async ({ page }) => {
      const notes = await page.textContent('#notes');
      for (const re of [/mask=lots/, /window=x/, /drawn=9\.9/, /off=5/]) assert.match(notes, re);
      assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
    });
  });

  test("switching a head off: the relative change of the layer output is the core's", async () => {
    const mod = await coreModule();
    const base = { seed: 7, tokens: 5, d_model: 8, num_heads: 2 };
    const r = mod.numpyExperiment(base);
    // The page asks the core's ablationEffect on the float32 layer with the experiment's X and weights.
    const change = (ablated) =>
      mod.ablationEffect({
        d_model: 8,
        num_heads: 2,
        n: 5,
        query: r.x,
        in_proj_weight: r.in_proj_weight,
        out_proj_weight: r.out_proj_weight,
        ablated_heads: Uint8Array.from(ablated),
      }).relative_change;
    // ... which agrees with module 08's float64 program run with the head off (1e-4 relative).
    const y = r.output;
    for (const ablated of [
      [1, 0],
      [0, 1],
    ]) {
      const yo = mod.numpyExperiment({ ...base, ablated_heads: Uint8Array.from(ablated) }).output;
      let num = 0;
      let den = 0;
      y.forEach((v, t) => {
        num += (yo[t] - v) ** 2;
        den += v * v;
      });
      const c64 = Math.sqrt(num / den);
      assert.ok(
        Math.abs(change(ablated) - c64) <= 1e-4 * c64,
        `float32 ${change(ablated)} vs float64 ${c64}`,
      );
    }
    await withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-ablation > summary');
      await page.waitForSelector('#explain-ablation tr[data-head]');
      const single = await page.$$eval('#explain-ablation tr[data-head]', (trs) =>
        trs.map((tr) => Number(tr.dataset.change)),
      );
      close(single, [change([1, 0]), change([0, 1])], 1e-9, 'each head off alone');
      await page.check('#explain-ablation input[data-ablate-head="1"]');
      await page.waitForFunction(() => location.hash.includes('off=1'));
      assert.equal(await page.evaluate(() => location.hash), '#preset=module-08&off=1');
      const line = page.locator('#explain-ablation .ablation-result');
      close([Number(await line.getAttribute('data-change'))], [change([0, 1])], 1e-9, 'head 1 off');
      assert.match(
        await line.textContent(),
        /With head 1 off, the layer’s output changes by \d+\.\d %/,
      );
      assert.equal(await page.getAttribute('figure.head[data-head="1"]', 'class'), 'head is-off');
      // The weights are unchanged: switching off acts after the softmax.
      assert.deepEqual(await tableRow(page, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
    });
    // Too large to compute unasked on the page ((h + 1) forwards of 128 tokens, d_model 512, 8
    // heads: 1.36e9 multiply-adds > 1e9): a note and a button; the click computes it, and ticking
    // a head afterwards does not ask again.
    await withPage(
      `#text=${Array.from({ length: 128 }, (_, i) => `w${i}`).join('+')}&d_model=512&num_heads=8&seed=7`,
      async ({ page }) => {
        await page.waitForFunction(() =>
          /^n = 128 tokens/.test(document.getElementById('summary').textContent),
        );
        await page.click('#explain-ablation > summary');
        const body = page.locator('#explain-ablation .explain-body');
        await page.waitForSelector('#explain-ablation .explain-body[data-state="large"]');
        assert.match(
          await body.textContent(),
          /runs the layer 9 times here: 1\u202F358\u202F954\u202F496 multiply-adds, more than 1\u202F000\u202F000\u202F000\. The page would not answer until it is done\./,
        );
        assert.equal(
          await page.locator('#explain-ablation tr[data-head]').count(),
          0,
          'nothing computed unasked',
        );
        await page.click('#explain-ablation button:has-text("Compute it anyway")');
        await page.waitForSelector('#explain-ablation tr[data-head]', { timeout: 60_000 });
        assert.equal(await page.locator('#explain-ablation tr[data-head]').count(), 8);
        await page.check('#explain-ablation input[data-ablate-head="2"]');
        await page.waitForSelector('#explain-ablation .ablation-result', { timeout: 60_000 });
        assert.match(
          await page.textContent('#explain-ablation .ablation-result'),
          /With head 2 off/,
        );
      },
    );
    // Every key padded: the output is all zero and no relative change exists; the core says so.
    await withPage('#preset=module-08&mask=padding&pad=5&off=1', async ({ page }) => {
      await page.waitForSelector('#explain-ablation .ablation-result');
      assert.equal(
        await page.textContent('#explain-ablation .ablation-result'),
        'relative_change: the unablated output is all zero, so a relative change is undefined',
      );
    });
  });
});
