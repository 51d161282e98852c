// The download budget: what the page fetches on its first load (index.html, app.js,
// style.css with common.css built in, favicon.svg and the attention core mha_wasm_core.js, not the
// date model nor the full module) is at most 150 KB gzipped (level 9); so is a course page of
// <mha-attention> elements (mha-attention.js and mha_wasm_core.js). Builds the page from
// build/wasm (./scripts/build.sh) into a temporary folder, so a stale dist/ cannot hide a
// regression.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { gzipSync, gunzipSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWeb } from '../../scripts/build_web.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WASM = path.join(ROOT, 'build', 'wasm');
const BUDGET = 150 * 1000; // bytes, gzip -9
// compute_worker.js starts after the first grid (its importScripts of the core is a cache hit).
const FIRST_LOAD = [
  'index.html',
  'app.js',
  'style.css',
  'favicon.svg',
  'mha_wasm_core.js',
  'compute_worker.js',
];

let tmp;
let out;
before(async () => {
  for (const f of ['mha_wasm.js', 'mha_wasm_core.js']) {
    assert.ok(
      existsSync(path.join(WASM, f)),
      `build/wasm/${f} is missing: run ./scripts/build.sh first`,
    );
  }
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-size-'));
  out = path.join(tmp, 'dist');
  await buildWeb({ wasm: path.join(WASM, 'mha_wasm.js'), out });
});
after(() => rm(tmp, { recursive: true, force: true }));

test(`the first load is at most ${BUDGET / 1000} KB gzipped`, async (t) => {
  const sizes = {};
  for (const f of FIRST_LOAD)
    sizes[f] = gzipSync(await readFile(path.join(out, f)), { level: 9 }).length;
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  t.diagnostic(`gzip -9 bytes: ${JSON.stringify(sizes)}; total ${total}`);
  assert.ok(
    total <= BUDGET,
    `first load ${total} bytes gzipped > budget ${BUDGET}: ${JSON.stringify(sizes)}`,
  );
  // index.html loads exactly these scripts; the full module is not among them.
  const html = await readFile(path.join(out, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(scripts, ['mha_wasm_core.js', 'app.js']);
  // Every file it links (stylesheets, icon, preload) is counted above.
  const links = [...html.matchAll(/<link\s[^>]*?\bhref="([^"]+)"/g)].map((m) => m[1]);
  assert.ok(links.includes('style.css'), 'the stylesheet link is found');
  assert.deepEqual(
    links.filter((f) => !FIRST_LOAD.includes(f)),
    [],
    'a linked file outside FIRST_LOAD',
  );
  const css = await readFile(path.join(out, 'style.css'), 'utf8');
  assert.doesNotMatch(css, /@import|url\(/, 'the stylesheet fetches nothing more');
});

test(`a course page of <mha-attention> elements loads at most ${BUDGET / 1000} KB gzipped: the element and the core`, async (t) => {
  const sizes = {};
  for (const f of ['mha-attention.js', 'mha_wasm_core.js']) {
    sizes[f] = gzipSync(await readFile(path.join(out, f)), { level: 9 }).length;
  }
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  t.diagnostic(`gzip -9 bytes: ${JSON.stringify(sizes)}; total ${total}`);
  assert.ok(
    total <= BUDGET,
    `element first load ${total} bytes gzipped > budget ${BUDGET}: ${JSON.stringify(sizes)}`,
  );
  // The element names both modules (it picks one per view; tests/browser/element.test.mjs checks
  // which one it requests) and starts the core with createMhaCore.
  const js = await readFile(path.join(out, 'mha-attention.js'), 'utf8');
  assert.ok(
    js.includes('"mha_wasm_core.js"') && js.includes('"mha_wasm.js"'),
    'both module names in the element',
  );
  assert.ok(js.includes('createMhaCore'), 'the element starts the core');
});

test('the core module has no date model; the packed copies are gzipped wasm that still run', async () => {
  const glue = await readFile(path.join(out, 'mha_wasm_core.js'), 'utf8');
  const base64 = /data:application\/octet-stream;base64,([A-Za-z0-9+/]+=*)/.exec(glue)[1];
  const bytes = Buffer.from(base64, 'base64');
  assert.deepEqual([...bytes.subarray(0, 2)], [0x1f, 0x8b], 'gzip magic');
  const wasm = gunzipSync(bytes);
  assert.deepEqual([...wasm.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d], 'wasm magic inside');
  assert.ok(!wasm.includes(Buffer.from('safetensors')), 'no safetensors code in the core');
  // The packed scripts load under node as the originals do (pre.js inflates the bytes).
  const require = createRequire(import.meta.url);
  const core = await require(path.join(out, 'mha_wasm_core.js'))();
  assert.equal(core.DateModel, undefined);
  const r = core.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  assert.deepEqual(
    Array.from(r.attn_weights.subarray(0, 5), (w) => w.toFixed(3)),
    ['0.000', '0.000', '0.424', '0.576', '0.000'],
  );
  const full = await require(path.join(out, 'mha_wasm.js'))();
  assert.equal(typeof full.DateModel, 'function');
  assert.equal(typeof full.numpyExperiment, 'function');
});
