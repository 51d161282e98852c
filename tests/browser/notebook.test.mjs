// A notebook using the Python package (docs/python.md), executed headlessly and exported to HTML
// by tests/notebook/run_notebook.py (nbclient, nbconvert), then opened from file:// in Chromium
// with every request other than the file itself refused: the elements draw their grids from
// their inline scripts and module 08's numbers read back; without JavaScript (an untrusted
// notebook, a repository's preview) the output still shows SVG grids and the head-pattern table.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, CHROMIUM, launchBrowser } from './helpers.mjs';

const PYTHONPATH = path.join(ROOT, 'build', 'native', 'python');
const TIMEOUT = 240_000;
const MODULE_08_ROW = ['0.000', '0.000', '0.424', '0.576', '0.000'];

let browser;
let dir;
let run;

before(async () => {
  if (!existsSync(path.join(PYTHONPATH, 'mha_lab', '__init__.py'))) {
    throw new Error(`${PYTHONPATH}/mha_lab is not built: run ./scripts/build.sh`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}`);
  dir = await mkdtemp(path.join(os.tmpdir(), 'mha-notebook-'));
  const p = spawnSync(
    '/usr/bin/python3',
    [path.join(ROOT, 'tests', 'notebook', 'run_notebook.py'), dir],
    {
      env: { ...process.env, PYTHONPATH, OPENBLAS_NUM_THREADS: '1' },
      encoding: 'utf8',
      timeout: 180_000,
    },
  );
  assert.equal(p.status, 0, `run_notebook.py failed:\n${p.stderr}`);
  run = JSON.parse(p.stdout.trim().split('\n').pop());
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Opens the exported notebook from file://, refusing every request but the file itself. */
async function open(contextOptions = {}) {
  const context = await browser.newContext({
    viewport: { width: 1100, height: 900 },
    ...contextOptions,
  });
  const fileUrl = pathToFileURL(run.html).href;
  const refused = [];
  const errors = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u === fileUrl) return route.continue();
    refused.push(u);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(fileUrl);
  return { context, page, refused, errors };
}

/** Row `r` of head `head` of the notebook's element number `index`, from its table. */
const row = (page, index, head, r) =>
  page.evaluate(
    ([i, h, q]) => {
      const host = document.querySelectorAll('mha-attention')[i];
      return [
        ...host.shadowRoot.querySelectorAll(`table[data-head="${h}"] tbody tr[data-row="${q}"] td`),
      ].map((td) => td.textContent);
    },
    [index, head, r],
  );

test('the executed notebook, exported by nbconvert, draws every output from file:// with no request', {
  timeout: TIMEOUT,
}, async () => {
  assert.deepEqual(run.errors, []);
  assert.equal(run.outputs.length, 3, 'three cells show an element');
  const { context, page, refused, errors } = await open();
  try {
    await page.waitForFunction(
      () => {
        const els = [...document.querySelectorAll('mha-attention')];
        return els.length === 3 && els.every((e) => e.dataset.state === 'ready');
      },
      null,
      { timeout: 60_000 },
    );
    // show_experiment (the wasm core in the page) and show (weights from Python): module 08.
    assert.deepEqual(await row(page, 0, 0, 0), MODULE_08_ROW);
    assert.deepEqual(await row(page, 0, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
    assert.deepEqual(await row(page, 1, 0, 0), MODULE_08_ROW);
    assert.deepEqual(await row(page, 1, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
    // The causal experiment: query 0 sees key 0 only.
    assert.deepEqual(await row(page, 2, 0, 0), ['1.000', '0.000', '0.000', '0.000', '0.000']);
    // Grids drawn: two heads' canvases in each element, with coloured pixels.
    const drawn = await page.evaluate(() =>
      [...document.querySelectorAll('mha-attention')].map((host) => {
        const canvases = [...host.shadowRoot.querySelectorAll('.heads canvas')];
        return canvases.filter((c) => {
          const ctx = c.getContext('2d');
          if (!ctx || !c.width || !c.height) return false;
          const d = ctx.getImageData(0, 0, c.width, c.height).data;
          for (let k = 0; k < d.length; k += 4) if (d[k + 3] !== 0) return true;
          return false;
        }).length;
      }),
    );
    assert.deepEqual(
      drawn.map((n) => n >= 2),
      [true, true, true],
      `canvases drawn: ${drawn}`,
    );
    // Once drawn, the pictures without JavaScript are hidden.
    assert.equal(
      await page.evaluate(() =>
        [...document.querySelectorAll('.mha-lab-grids')].every((g) => g.hidden),
      ),
      true,
    );
    // The only requests are nbconvert's template's own (require.js and MathJax: from CDNs, or
    // from /usr/share/javascript with Debian's nbconvert), refused; the elements asked for nothing.
    const ours = refused.filter(
      (u) =>
        !/\/require(\.min)?\.js$|\/MathJax\.js(\?|$)/.test(
          new URL(u).pathname + (new URL(u).search ? '?' : ''),
        ),
    );
    assert.deepEqual(ours, [], `requests other than the template's: ${ours.join(', ')}`);
    assert.deepEqual(
      errors.filter((e) => !/require|MathJax|define/i.test(e)),
      [],
    );
  } finally {
    await context.close();
  }
});

test('without JavaScript the notebook shows SVG grids and the head-pattern table', {
  timeout: TIMEOUT,
}, async () => {
  const { context, page } = await open({ javaScriptEnabled: false });
  try {
    const info = await page.evaluate(() =>
      [...document.querySelectorAll('.mha-lab')].map((v) => ({
        grids: v.querySelectorAll('.mha-lab-grids svg').length,
        rects: v.querySelectorAll('.mha-lab-grids svg rect').length,
        cell: [...v.querySelectorAll('.mha-lab-grids svg')][0].querySelectorAll('rect')[2]
          .textContent,
        rows: v.querySelectorAll('table.mha-lab-patterns tbody tr').length,
      })),
    );
    assert.equal(info.length, 3);
    for (const v of info) {
      assert.equal(v.grids, 2);
      assert.equal(v.rects, 50);
      assert.equal(v.rows, 2);
    }
    // Head 0, query "Heads" → key "at": module 08's 0.424, in the SVG's tooltip.
    assert.equal(info[0].cell, 'Heads → at: 0.424');
    assert.equal(info[1].cell, 'Heads → at: 0.424');
  } finally {
    await context.close();
  }
  console.log(`notebook: ${run.html_bytes} bytes of HTML; outputs ${run.outputs.join(', ')} bytes`);
});
