// The explain views that need the core's pattern, combination and file-loading functions
// (docs/js-api.md): numbers read from the page and compared with the same core run under node
// (dist/mha_wasm.js), and hostile files answered with a clear message in the alert region.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT, useBrowserAndTargets, withCheckedPage } from './helpers.mjs';

const TIMEOUT = 90_000;
const env = useBrowserAndTargets();
const require = createRequire(import.meta.url);
let mod;
before(async () => {
  mod = await require(path.join(ROOT, 'dist', 'mha_wasm.js'))();
});

const withPage = (hash, fn) => withCheckedPage(env.browser, env.servers.targets[0], hash, fn);

/** A .npy file (format 1.0) holding `data` with `shape` as `descr` ('<f4', '<f8', '<i1', ...). */
function npy(shape, data, descr = '<f4') {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += `${' '.repeat(pad % 64)}\n`;
  const Typed = { '<f4': Float32Array, '<f8': Float64Array, '<i1': Int8Array }[descr];
  const body = Buffer.from(new Typed(data).buffer);
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), body]);
}

/** A safetensors file of float32 tensors {name: [shape, values]} (8-byte header length, JSON, data). */
function safetensors(tensors) {
  const header = {};
  const chunks = [];
  let offset = 0;
  for (const [name, [shape, values]] of Object.entries(tensors)) {
    const bytes = Buffer.from(new Float32Array(values).buffer);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes.length] };
    chunks.push(bytes);
    offset += bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, ...chunks]);
}

/** Two heads over 3 tokens: head 0 looks at the previous token, head 1 at token 0 (a stripe). */
const PREV = [1, 0, 0, 1, 0, 0, 0, 1, 0];
const STRIPE = [1, 0, 0, 1, 0, 0, 1, 0, 0];
const TWO_HEADS = [...PREV, ...STRIPE];

const tableValues = (page, selector) =>
  page.$$eval(`${selector} tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.weight))),
  );
const closeAll = (got, want, tol, what) => {
  assert.equal(got.length, want.length, `${what}: length`);
  got.forEach((x, k) =>
    assert.ok(Math.abs(x - want[k]) <= tol, `${what}[${k}]: ${x} vs ${want[k]}`),
  );
};

describe('head patterns, combined views, files', { timeout: TIMEOUT }, () => {
  test("patterns: the core's scores and labels per head, and the Jensen–Shannon matrix, for 2 and 4 heads", async () => {
    for (const [hash, heads] of [
      ['#preset=module-08', 2],
      ['#text=Heads+look+at+different+things&d_model=8&num_heads=4&seed=7', 4],
    ]) {
      await withPage(hash, async ({ page }) => {
        await page.click('#explain-patterns > summary');
        await page.waitForSelector('#explain-patterns table.js-matrix');
        const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: heads });
        const tokens = ['Heads', 'look', 'at', 'different', 'things'];
        const want = mod.headPatterns({
          attn_weights: r.attn_weights,
          num_heads: heads,
          n: 5,
          m: 5,
          tokens,
        });
        // The sentence has no repeat (duplicate token and induction: no row, "—") and no punctuation.
        assert.equal(want.heads[0].scores.induction, null);
        assert.equal(want.heads[0].scores.punctuation, 0);
        const columns = await page.$$eval(
          '#explain-patterns table.patterns-table thead th',
          (ths) => ths.map((th) => th.textContent),
        );
        for (const name of ['duplicate token', 'induction', 'punctuation']) {
          assert.ok(
            columns.some((c) => c.startsWith(name)),
            `column ${name}: ${columns}`,
          );
        }
        const rows = await page.$$eval('#explain-patterns table.patterns-table tbody tr', (trs) =>
          trs.map((tr) => ({
            scores: JSON.parse(tr.dataset.scores),
            labels: tr.dataset.labels,
            text: tr.textContent,
          })),
        );
        assert.equal(rows.length, heads);
        rows.forEach((row, k) => {
          assert.deepEqual(row.scores, want.heads[k].scores, `head ${k} scores`);
          assert.equal(row.labels, want.heads[k].labels.join(','), `head ${k} labels`);
          // The scores are shown, not only the label.
          assert.ok(
            row.text.includes(want.heads[k].scores.entropy_bits.toFixed(2)),
            `head ${k} entropy shown`,
          );
          assert.ok(
            row.text.includes('0.000 (uniform 0.000)'),
            `head ${k} punctuation and its baseline shown`,
          );
        });
        const dist = await page.$$eval('#explain-patterns table.js-matrix tbody tr', (trs) =>
          trs.map((tr) => JSON.parse(tr.dataset.distances)),
        );
        assert.deepEqual(dist.flat(), Array.from(want.js_distance));
        for (let a = 0; a < heads; a++) {
          assert.equal(dist[a][a], 0);
          for (let b = 0; b < heads; b++) assert.equal(dist[a][b], dist[b][a]);
        }
        // Module 08 exercise 1: the heads' rows differ (head 0 splits 2/3, head 1 all on 4).
        assert.ok(dist[0][1] > 0.1, `heads 0 and 1 differ: ${dist[0][1]}`);
      });
    }
  });

  test("combined views: mean (PyTorch's default) and max over heads are the core's, the choice is in the address", () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-combine > summary');
      await page.waitForSelector('#explain-combine table[data-combined="mean"]');
      const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
      const req = { attn_weights: r.attn_weights, num_heads: 2, n: 5, m: 5 };
      closeAll(
        (await tableValues(page, '#explain-combine table[data-combined="mean"]')).flat(),
        Array.from(mod.meanOverHeads(req)),
        0,
        'mean',
      );
      assert.match(
        await page.textContent('#explain-combine figcaption'),
        /\(1\/h\) Σₖ Aₖ\(i, j\).*average_attn_weights=True.*hides/,
      );
      await page.check('#explain-combine input[value="max"]');
      await page.waitForSelector('#explain-combine table[data-combined="max"]');
      closeAll(
        (await tableValues(page, '#explain-combine table[data-combined="max"]')).flat(),
        Array.from(mod.maxOverHeads(req)),
        0,
        'max',
      );
      await page.waitForFunction(() => location.hash === '#preset=module-08&combine=max');
    }));

  test('combined views open from the address', () =>
    withPage('#preset=module-08&combine=max', async ({ page }) => {
      await page.waitForSelector('#explain-combine table[data-combined="max"]');
      assert.equal(await page.$eval('#explain-combine', (d) => d.open), true);
    }));

  test('a .npy attention tensor with tokens: grids, scores, combined views; mismatched and hostile files get a message', () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-files > summary');
      const body = '#explain-files .explain-body';
      await page.waitForSelector(`${body} input[data-file="attention"]`);
      await page.fill(`${body} textarea[data-file="tokens-text"]`, 'the cat sat');
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'attn.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([2, 3, 3], TWO_HEADS),
      });
      await page.waitForSelector(`${body}[data-state="ready"] table.patterns-table`);
      assert.equal(await page.locator(`${body} canvas[data-file-head]`).count(), 2);
      assert.deepEqual(await tableValues(page, `${body} table[data-file-head="1"]`), [
        [1, 0, 0],
        [1, 0, 0],
        [1, 0, 0],
      ]);
      const want = mod.headPatterns({
        attn_weights: Float32Array.from(TWO_HEADS),
        num_heads: 2,
        n: 3,
        m: 3,
      });
      const labels = await page.$$eval(`${body} table.patterns-table tbody tr`, (trs) =>
        trs.map((tr) => tr.dataset.labels),
      );
      assert.deepEqual(
        labels,
        want.heads.map((x) => x.labels.join(',')),
      );
      assert.equal(await page.textContent('#alert'), '');
      // Exports of the loaded weights, in the page's CSV format (float32-exact).
      // (clicked in the page: the sticky readout bar may cover the button where Playwright scrolls it)
      const press = (kind) =>
        page.$eval(`${body} button[data-file-export="${kind}"]`, (b) => b.click());
      const [download] = await Promise.all([page.waitForEvent('download'), press('csv')]);
      assert.equal(download.suggestedFilename(), 'loaded-attention-layer0-h2.csv');
      const csv = readFileSync(await download.path(), 'utf8').split('\r\n');
      assert.equal(csv[0], 'head,query_index,query,key_index,key,weight');
      assert.equal(csv[1], '0,0,the,0,the,1');
      assert.equal(csv.length, 1 + 2 * 9 + 1);
      const [json] = await Promise.all([page.waitForEvent('download'), press('json')]);
      const doc = JSON.parse(readFileSync(await json.path(), 'utf8'));
      assert.deepEqual(doc.shape, [2, 3, 3]);
      assert.deepEqual(doc.attn_weights.flat(2), TWO_HEADS);
      assert.deepEqual(doc.tokens, ['the', 'cat', 'sat']);
      // The module 08 grids above are untouched.
      assert.equal(await page.locator('canvas[data-head]').count(), 2);

      const problems = [
        // [file, expected message]
        [
          npy([2, 3, 3], TWO_HEADS),
          /4 tokens given, but the attention has 3 query rows and 3 key columns/,
          'the cat sat on',
        ],
        [npy([3, 3], PREV), /shape|rank/i],
        [
          npy(
            [2, 3, 3],
            TWO_HEADS.map((x, k) => (k === 4 ? NaN : x)),
          ),
          /NaN|finite/i,
        ],
        [
          npy(
            [2, 3, 3],
            TWO_HEADS.map((x) => x * 2),
          ),
          /sums to 2/,
        ],
        [npy([2, 3, 3], TWO_HEADS, '<i1'), /dtype|i1|int/i],
        [npy([2, 3, 3], TWO_HEADS).subarray(0, 60), /truncat|bytes|short/i],
        [Buffer.from('this is not a tensor file at all'), /./],
        [Buffer.alloc(0), /empty \(0 bytes\)/],
      ];
      for (const [buffer, re, tokens = 'the cat sat'] of problems) {
        await page.fill(`${body} textarea[data-file="tokens-text"]`, tokens);
        await page.evaluate(() => {
          document.getElementById('alert').textContent = '';
        });
        await page.setInputFiles(`${body} input[data-file="attention"]`, {
          name: 'bad.npy',
          mimeType: 'application/octet-stream',
          buffer,
        });
        await page.waitForFunction(() => document.getElementById('alert').textContent !== '');
        const message = await page.textContent('#alert');
        assert.match(message, re, `message: ${message}`);
        assert.doesNotMatch(message, /undefined|\[object/, message);
        // The alert region can be far above the panel: the panel says it too, and no grid of an
        // earlier file is left to be taken for this one's.
        const inPanel = await page.textContent(`${body} .file-status`);
        assert.match(inPanel, re, `in the panel too: ${inPanel}`);
        assert.ok(
          message.startsWith(inPanel),
          `the alert region (${message}) says what the panel says (${inPanel})`,
        );
        assert.equal(
          await page.locator(`${body} .file-output canvas`).count(),
          0,
          'no earlier grids stay',
        );
      }
      // Still working: a good file after the bad ones.
      await page.fill(`${body} textarea[data-file="tokens-text"]`, '');
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'attn.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([2, 2, 3, 3], [...TWO_HEADS, ...TWO_HEADS]),
      });
      await page.waitForFunction(
        () =>
          document.querySelector('#explain-files .explain-body').dataset.state === 'ready' &&
          document.getElementById('alert').textContent === '',
      );
      assert.equal(
        await page.isVisible(`${body} select[data-file="layer"]`),
        true,
        'two layers: a layer select',
      );
      // Two layers of 3 × 3: the rollout, rows summing to 1, as the core computes it.
      const rollout = (await tableValues(page, `${body} table[data-rollout]`)).flat();
      const wantRollout = mod.attentionRollout({
        layers: [Float32Array.from(TWO_HEADS), Float32Array.from(TWO_HEADS)],
        num_heads: 2,
        n: 3,
      });
      closeAll(rollout, Array.from(wantRollout), 1e-6, 'rollout');
    }));

  test("the Files panel's own script: one that loads without defining the panel is a message; opening the panel again loads it again", () =>
    withPage('#preset=module-08', async ({ page, requests }) => {
      const body = '#explain-files .explain-body';
      const loads = () => requests.filter((u) => u.endsWith('/file_panel.js')).length;
      assert.equal(loads(), 0, 'not part of the first load');
      // An old copy, or a host answering a missing file with a page of its own.
      await page.route('**/file_panel.js', (route) =>
        route.fulfill({ status: 200, contentType: 'text/javascript', body: '/* not the panel */' }),
      );
      await page.click('#explain-files > summary');
      await page.waitForFunction(
        (b) =>
          /^file_panel\.js loaded but defines no file panel/.test(
            document.querySelector(b).textContent,
          ),
        body,
      );
      await page.unroute('**/file_panel.js');
      await page.click('#explain-files > summary'); // closed
      await page.click('#explain-files > summary'); // open again: added again
      await page.waitForSelector(`${body} input[data-file="attention"]`);
      assert.equal(loads(), 2);
    }));

  test('a safetensors attention tensor: one tensor loads as is; with several, the tensor name picks one', () =>
    withPage('#preset=module-08', async ({ page }) => {
      await page.click('#explain-files > summary');
      const body = '#explain-files .explain-body';
      await page.waitForSelector(`${body} input[data-file="attention"]`);
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'one.safetensors',
        mimeType: 'application/octet-stream',
        buffer: safetensors({ attentions: [[2, 3, 3], TWO_HEADS] }),
      });
      await page.waitForSelector(`${body}[data-state="ready"] table[data-file-head="1"]`);
      assert.deepEqual(await tableValues(page, `${body} table[data-file-head="1"]`), [
        [1, 0, 0],
        [1, 0, 0],
        [1, 0, 0],
      ]);
      const two = safetensors({ 'layer.0': [[2, 3, 3], TWO_HEADS], 'layer.1': [[1, 3, 3], PREV] });
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'two.safetensors',
        mimeType: 'application/octet-stream',
        buffer: two,
      });
      await page.waitForFunction(() =>
        /two\.safetensors/.test(document.getElementById('alert').textContent),
      );
      assert.match(await page.textContent('#alert'), /layer\.0/, 'the message lists the tensors');
      await page.fill(`${body} input[data-file="tensor"]`, 'layer.1');
      await page.press(`${body} input[data-file="tensor"]`, 'Enter');
      await page.waitForFunction(
        () => document.querySelectorAll('#explain-files canvas[data-file-head]').length === 1,
      );
      assert.equal(await page.textContent('#alert'), '');
      assert.deepEqual(await tableValues(page, `${body} table[data-file-head="0"]`), [
        [1, 0, 0],
        [1, 0, 0],
        [0, 1, 0],
      ]);
    }));

  test("date model: mean / max of the layer on screen and the rollout across layers are the core's", () =>
    withPage('#mode=date&date=Nov%2030,%202026&kind=encoder_self&layer=1', async ({ page }) => {
      await page.waitForSelector('#date-panel[data-state="ready"]');
      await page.click('#date-combined > summary');
      await page.waitForSelector('#date-combined table[data-rollout="encoder_self"]');
      const model = new mod.DateModel(
        new Uint8Array(readFileSync(path.join(ROOT, 'web', 'date_model.safetensors'))),
      );
      try {
        const r = model.translate('Nov 30, 2026');
        const S = r.source_length;
        const mean = mod.meanOverHeads({
          attn_weights: r.encoder_self[1],
          num_heads: r.num_heads,
          n: S,
          m: S,
        });
        // The page's model ran on Chromium's fused (relaxed-SIMD) GEMM kernel, this one on node's
        // SIMD128 kernel: weights a few float32 ulp apart (docs/js-api.md, mod.gemmKernel).
        closeAll(
          (await tableValues(page, '#date-combined table[data-combined="mean"]')).flat(),
          Array.from(mean),
          1e-6,
          'mean, encoder layer 1',
        );
        const enc = mod.attentionRollout({ layers: r.encoder_self, num_heads: r.num_heads, n: S });
        closeAll(
          (await tableValues(page, '#date-combined table[data-rollout="encoder_self"]')).flat(),
          Array.from(enc),
          1e-6,
          'encoder rollout',
        );
        const dec = mod.attentionRollout({
          layers: r.decoder_self,
          num_heads: r.num_heads,
          n: r.steps,
        });
        closeAll(
          (await tableValues(page, '#date-combined table[data-rollout="decoder_self"]')).flat(),
          Array.from(dec),
          1e-6,
          'decoder rollout',
        );
      } finally {
        model.delete();
      }
    }));
});

describe('nn.MultiheadAttention weights and embeddings from files', { timeout: TIMEOUT }, () => {
  // PyTorch's layer (tests/fixtures/torch_mha_layer.*, written by scripts/fixtures/make_pattern_fixtures.py):
  // its state_dict as safetensors, X as .npy, and PyTorch's per-head weights for that X.
  const FIX = (f) => path.join(ROOT, 'tests', 'fixtures', f);
  test("the page runs them through the core: PyTorch's per-head weights; a wrong X shape is named", () =>
    withPage('#preset=module-08', async ({ page }) => {
      const golden = JSON.parse(readFileSync(FIX('torch_mha_layer.json'), 'utf8'));
      await page.click('#explain-files > summary');
      const body = '#explain-files .explain-body';
      await page.waitForSelector(`${body} input[data-file="weights"]`);
      await page.fill(`${body} textarea[data-file="tokens-text"]`, 'a b c d e');
      await page.setInputFiles(
        `${body} input[data-file="weights"]`,
        FIX('torch_mha_layer.safetensors'),
      );
      await page.setInputFiles(
        `${body} input[data-file="embeddings"]`,
        FIX('torch_mha_layer_x.npy'),
      );
      await page.waitForSelector(`${body}[data-state="ready"] table[data-file-head="1"]`);
      const got = [
        ...(await tableValues(page, `${body} table[data-file-head="0"]`)).flat(),
        ...(await tableValues(page, `${body} table[data-file-head="1"]`)).flat(),
      ];
      // float32 core vs PyTorch float32: within 1e-5.
      closeAll(got, golden.attn_weights.data, 1e-5, 'per-head weights vs PyTorch');
      assert.equal(await page.textContent('#alert'), '');
      // X with the wrong width: the message names both shapes.
      await page.setInputFiles(`${body} input[data-file="embeddings"]`, {
        name: 'x3.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([5, 3], Array(15).fill(0.5)),
      });
      await page.waitForFunction(() => document.getElementById('alert').textContent !== '');
      assert.match(
        await page.textContent('#alert'),
        /x3\.npy has shape \(5, 3\); the weights need \(n, d_model\) = \(n, 8\)/,
      );
      // Weights that are not a state_dict: the core's loader says what is missing.
      await page.setInputFiles(`${body} input[data-file="weights"]`, {
        name: 'w.safetensors',
        mimeType: 'application/octet-stream',
        buffer: npy([2, 3, 3], TWO_HEADS),
      });
      await page.waitForFunction(() =>
        /w\.safetensors/.test(document.getElementById('alert').textContent),
      );
      assert.match(await page.textContent('#alert'), /^w\.safetensors: /);
    }));
});

describe('accessibility of the explain views', { timeout: TIMEOUT }, () => {
  test("axe-core finds no violation on the page with every explain view open, nor in the date model's combined views", async () => {
    const axe = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
    const audit = async (page, context = 'html') => {
      await page.evaluate(axe); // via the debugging protocol: the page's CSP does not apply
      const r = await page.evaluate(
        (c) => window.axe.run(c, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] }),
        context,
      );
      return r.violations.map(
        (v) =>
          `${v.id}: ${v.nodes
            .slice(0, 3)
            .map((n) => n.target.join(' '))
            .join(', ')}`,
      );
    };
    await withPage('#preset=module-08&mask=window&off=1&combine=max', async ({ page }) => {
      for (const key of ['pipeline', 'params', 'compare', 'patterns', 'files']) {
        await page.click(`#explain-${key} > summary`);
      }
      await page.waitForSelector('#explain-patterns table.js-matrix');
      await page.waitForSelector('#explain-compare table[data-compare="single"]');
      await page.waitForSelector('#explain-files input[data-file="attention"]');
      await page.setInputFiles('#explain-files input[data-file="attention"]', {
        name: 'attn.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([2, 3, 3], TWO_HEADS),
      });
      await page.waitForSelector('#explain-files .explain-body[data-state="ready"]');
      assert.deepEqual(await audit(page), []);
    });
    await withPage('#mode=date&date=Nov%2030,%202026', async ({ page }) => {
      await page.waitForSelector('#date-panel[data-state="ready"]');
      await page.click('#date-combined > summary');
      await page.waitForSelector('#date-combined table[data-rollout="decoder_self"]');
      // This suite audits its own views here; the rest of the date page is the page suites' business.
      assert.deepEqual(await audit(page, '#date-combined'), []);
    });
  });
});

describe('files dropped on the page opened from file://', { timeout: TIMEOUT }, () => {
  test('dropping a .npy attention tensor and a tokens file shows the grids and scores; nothing is fetched', () =>
    withCheckedPage(
      env.browser,
      env.servers.targets[1],
      '#preset=module-08',
      async ({ page, requests }) => {
        await page.click('#explain-files > summary');
        const body = '#explain-files .explain-body';
        await page.waitForSelector(`${body} .file-drop`);
        const before = requests.length;
        await page.evaluate(
          ({ bytes, tokens }) => {
            const dt = new DataTransfer();
            dt.items.add(new File([new Uint8Array(bytes)], 'attn.npy'));
            dt.items.add(new File([tokens], 'tokens.txt', { type: 'text/plain' }));
            const target = document.querySelector('#explain-files .file-drop');
            target.dispatchEvent(
              new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }),
            );
          },
          { bytes: [...npy([2, 3, 3], TWO_HEADS)], tokens: 'the\ncat\nsat' },
        );
        await page.waitForSelector(`${body}[data-state="ready"] table.patterns-table`);
        assert.deepEqual(
          await page.$$eval(`${body} table[data-file-head="0"] th[scope="col"]`, (ths) =>
            ths.map((t) => t.dataset.token),
          ),
          ['the', 'cat', 'sat'],
        );
        assert.deepEqual(await tableValues(page, `${body} table[data-file-head="0"]`), [
          [1, 0, 0],
          [1, 0, 0],
          [0, 1, 0],
        ]);
        // Read locally: no request carries the files (the page may load its own scripts, nothing else).
        assert.deepEqual(
          requests.slice(before).filter((u) => !/\.js$/.test(new URL(u).pathname)),
          [],
        );
      },
    ));
});

describe('explain views on a narrow screen', { timeout: TIMEOUT }, () => {
  test('at 360 px with every view open, the page does not scroll sideways (wide tables scroll inside)', () =>
    withCheckedPage(
      env.browser,
      env.servers.targets[0],
      '#text=The+animal+didn%27t+cross+the+street+because+it+was+too+tired&d_model=16&num_heads=8&seed=0&combine=max&off=1',
      async ({ page }) => {
        // (combine= and off= in the address open those two views already)
        for (const key of ['pipeline', 'params', 'compare', 'patterns', 'files'])
          await page.click(`#explain-${key} > summary`);
        await page.waitForSelector('#explain-patterns table.js-matrix');
        await page.waitForSelector('#explain-compare table[data-compare="single"]');
        await page.waitForSelector('#explain-ablation tr[data-head]');
        const c = await page.$eval('#explain-step', (d) => d.getBoundingClientRect().width);
        assert.ok(c <= 360, `step panel width ${c}`);
        assert.deepEqual(
          await page.evaluate(() => [
            document.documentElement.scrollWidth,
            document.documentElement.clientWidth,
          ]),
          [360, 360],
        );
      },
      { width: 360, height: 800 },
    ));
});

describe('a large attention file', { timeout: TIMEOUT }, () => {
  test('(4 heads, 200, 200): grids and scores, no hidden tables beyond 64 tokens, the page stays responsive', () =>
    withPage('#preset=module-08', async ({ page }) => {
      const n = 200;
      const uniform = Array(4 * n * n).fill(1 / n);
      await page.click('#explain-files > summary');
      const body = '#explain-files .explain-body';
      await page.waitForSelector(`${body} input[data-file="attention"]`);
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'big.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([4, n, n], uniform),
      });
      await page.waitForSelector(`${body}[data-state="ready"] table.patterns-table`);
      assert.equal(await page.locator(`${body} canvas[data-file-head]`).count(), 4);
      assert.equal(await page.locator(`${body} table[data-file-head]`).count(), 0);
      assert.match(
        await page.textContent(`${body} .file-head .table-holder`),
        /No table for more than 64 tokens/,
      );
      // Uniform rows: entropy log2(200) bits, no label.
      const labels = await page.$$eval(`${body} table.patterns-table tbody tr`, (trs) =>
        trs.map((tr) => tr.dataset.labels),
      );
      assert.deepEqual(labels, ['', '', '', '']);
    }));
});
