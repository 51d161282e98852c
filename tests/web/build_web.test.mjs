// scripts/build_web.mjs and the page source: one classic script, a stamped version,
// nothing inline (the page runs under script-src 'self'; style-src 'self'), nothing remote.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile, rm, readdir } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);
let tmp;
let out;

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-build-'));
  const glue = path.join(tmp, 'mha_wasm.js');
  await writeFile(glue, 'var createMhaModule = function () { return Promise.reject(new Error("stub")); };\n');
  out = path.join(tmp, 'dist');
  await run(process.execPath, ['scripts/build_web.mjs', '--wasm', glue, '--out', out], { cwd: ROOT });
});

after(() => rm(tmp, { recursive: true, force: true }));

test('dist holds the page, the stylesheet, one bundled script and the wasm glue', async () => {
  assert.deepEqual((await readdir(out)).sort(), ['app.js', 'favicon.svg', 'index.html', 'mha_wasm.js', 'style.css']);
  assert.match(await readFile(path.join(out, 'mha_wasm.js'), 'utf8'), /createMhaModule/);
});

test('app.js is a classic IIFE script: no import/export left, d3 viridis bundled', async () => {
  const js = await readFile(path.join(out, 'app.js'), 'utf8');
  assert.match(js, /^\/\* mha-lab page v\d+\.\d+\.\d+/);
  assert.match(js, /\(\(\) => \{/);
  assert.doesNotMatch(js, /^\s*(import|export)\s/m);
  assert.match(js, /440154/); // viridis' first colour, from d3-scale-chromatic
  assert.doesNotMatch(js, /https?:\/\/(?!www\.w3\.org)/); // nothing to fetch
});

test('the version from package.json is stamped into the page', async () => {
  const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const html = await readFile(path.join(out, 'index.html'), 'utf8');
  assert.ok(html.includes(`v${version}`));
  assert.doesNotMatch(html, /%MHA_LAB_VERSION%/);
});

test('index.html: classic scripts only, no inline script or style, nothing remote', async () => {
  const html = await readFile(path.join(ROOT, 'web', 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.deepEqual(scripts.map((m) => m[1].trim()), ['src="mha_wasm.js"', 'src="app.js"']);
  for (const m of scripts) assert.equal(m[2].trim(), '', 'no inline script');
  assert.doesNotMatch(html, /<style\b/i);
  assert.doesNotMatch(html, /\sstyle\s*=/i);
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'no inline event handlers');
  assert.doesNotMatch(html, /(src|href)\s*=\s*"(https?:)?\/\//i, 'nothing from another origin');
  assert.match(html, /Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'"/);
});

test('page sources never write HTML strings', async () => {
  const dir = path.join(ROOT, 'web', 'src');
  for (const f of await readdir(dir)) {
    const src = await readFile(path.join(dir, f), 'utf8');
    assert.doesNotMatch(src, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/, f);
    assert.doesNotMatch(src, /setAttribute\(\s*['"]style['"]/, f);
  }
});

test('a missing wasm glue is a clear error', async () => {
  await assert.rejects(
    run(process.execPath, ['scripts/build_web.mjs', '--wasm', path.join(tmp, 'none.js'), '--out', out], { cwd: ROOT }),
    (e) => e.code === 1 && /none\.js not found: run \.\/scripts\/build\.sh/.test(e.stderr),
  );
});
