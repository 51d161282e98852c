// The explain views' DOM builders (web/src/explain/) are host-agnostic: drawn inside a shadow
// root they build everything there (labels find their controls, nothing leaks into the
// document), as the <mha-attention> element would need. A small harness page, bundled here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useHarness } from './helpers.mjs';

const HARNESS = `
import { renderPipeline } from './explain/pipeline.js';
import { renderParams } from './explain/params_panel.js';
import { renderStepPanel } from './explain/step_panel.js';
import { fromCoreExplanation } from './explain/step.js';
import { renderPatterns } from './explain/patterns_panel.js';
import { renderCombined } from './explain/combine.js';
const root = document.getElementById('host').attachShadow({ mode: 'open' });
for (const href of ['common.css', 'style.css']) {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  root.append(link);
}
const box = (panel) => { const d = document.createElement('div'); d.dataset.panel = panel; root.append(d); return d; };
renderPipeline(box('pipeline'), { n: 5, d_model: 8, num_heads: 2 });
// parameterCount as the core answers for d_model 8 (its messages are the core's; here a stand-in).
const count = (req) => {
  if (8 % req.num_heads !== 0) throw new Error('d_model=8 is not divisible by num_heads=' + req.num_heads);
  return 256 + (req.bias ? 32 : 0);
};
renderParams(box('params'), { d_model: 8, num_heads: 2, count, maxHeads: 256 });
// The core's explainCell for h = 1, n = m = 2, d = 2, cell (0, 0) of scores [ln 3, 0] (as the
// full module answers it; here a stand-in).
const s = Math.log(3);
const explained = {
  head: 0, i: 0, j: 0, d_head: 2, q_i: [s * Math.SQRT2, 0], k_j: [1, 0], v_j: [10, 20],
  dot: s * Math.SQRT2, scale: Math.SQRT1_2, scaled: s, mask_term: 0, score: s, row_max: s,
  exp_shifted: 1, row_sum_shifted: 4 / 3, weight_recomputed: 0.75, weight: 0.75, row_fully_masked: false,
  contribution: [7.5, 15], head_output_i: [7.5, 15],
};
renderStepPanel(box('step'), fromCoreExplanation(explained), { queryToken: 'a', keyToken: 'a', maskLine: 'no mask' });
const baseline = { previous_token: 0.5, diagonal: 0.5, local_band: 1, vertical_stripe: 0.5, stripe_key: 0, first_token: 0.5,
  mean_distance: 0.5, mean_distance_normalized: 0.5, entropy_bits: 1, entropy_normalized: 1, max_weight: 0.5 };
renderPatterns(box('patterns'), {
  tokens: ['a', 'b'],
  patterns: {
    heads: [{ head: 0, rows_scored: 2, causal: false, scores: { ...baseline, previous_token: null }, uniform_baseline: baseline, labels: [] }],
    js_distance: Float64Array.from([0]),
    thresholds: { previous_token: 0.5, local_band: 0.5, vertical_stripe: 0.5, long_range: 0.5, margin: 0.15 },
  },
});
const combined = box('combined');
const draw = (kind) => renderCombined(combined, { kind, matrix: Float32Array.from([0.75, 0.25, 0.5, 0.5]), n: 2, m: 2, tokens: ['a', 'b'], numHeads: 1, onKind: draw });
draw('mean');
document.documentElement.dataset.ready = 'true';
`;

// The shadow root links the stylesheets itself; the light DOM has only the host.
const env = useHarness(HARNESS, {
  css: ['style.css', 'common.css'],
  body: '<div id="host"></div>',
});

test('the explain builders work inside a shadow root: content, labels and controls stay in it', async () => {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  try {
    await page.goto(env.url);
    await page.waitForSelector('html[data-ready="true"]');
    // Nothing was added to the light DOM.
    assert.deepEqual(
      await page.evaluate(() => [...document.body.children].map((e) => e.id || e.tagName)),
      ['host', 'SCRIPT'],
    );
    // Playwright's CSS selectors pierce open shadow roots.
    assert.equal(await page.locator('[data-panel="pipeline"] [data-stage]').count(), 8);
    assert.equal(
      await page.textContent('[data-panel="pipeline"] [data-stage="qkv"] .pipeline-shape'),
      '(5, 8) @ (8, 24) → (5, 24)',
    );
    assert.deepEqual(
      await page.$$eval('[data-panel="params"] tr[data-heads]', (trs) =>
        trs.map((tr) => tr.dataset.heads),
      ),
      ['1', '2', '4', '8'],
    );
    await page.fill('[data-panel="params"] .params-try input', '3');
    assert.equal(
      await page.textContent('[data-panel="params"] .params-try-out'),
      'd_model=8 is not divisible by num_heads=3',
    );
    assert.equal(
      await page.getAttribute('[data-panel="step"] tr[data-step="weight"]', 'data-value'),
      '0.75',
    );
    assert.equal(
      await page.textContent('[data-panel="patterns"] table.patterns-table tbody td'),
      '— (uniform 0.500)',
    );
    await page.check('[data-panel="combined"] input[value="max"]');
    await page.waitForSelector('[data-panel="combined"] table[data-combined="max"]');
    // Every label's control is found in the shadow root (label for= works there).
    const orphans = await page.evaluate(() => {
      const root = document.getElementById('host').shadowRoot;
      return [...root.querySelectorAll('label[for]')]
        .filter((l) => !root.getElementById(l.htmlFor))
        .map((l) => l.htmlFor);
    });
    assert.deepEqual(orphans, []);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
