// scripts/build_web.mjs and the page source: one classic script, a stamped version,
// nothing inline (the page runs under script-src 'self'; style-src 'self'), nothing remote.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, writeFile, rm, readdir } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { interpolateViridis } from 'd3-scale-chromatic';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import os from 'node:os';
import vm from 'node:vm';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { readExperiments } from '../../scripts/build_web.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);
const STUB_WASM = Buffer.concat([
  Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
  Buffer.alloc(4000, 7),
]);
let tmp;
let out;

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-build-'));
  // Stub glue scripts, each with one inlined "wasm" as Emscripten's SINGLE_FILE writes it.
  const glue = path.join(tmp, 'mha_wasm.js');
  for (const [file, factory] of [
    ['mha_wasm.js', 'createMhaModule'],
    ['mha_wasm_core.js', 'createMhaCore'],
  ]) {
    await writeFile(
      path.join(tmp, file),
      `var ${factory} = function () {\n  var wasmBinaryFile = ` +
        `"data:application/octet-stream;base64,${STUB_WASM.toString('base64')}";\n` +
        '  return Promise.reject(new Error("stub " + wasmBinaryFile.length));\n};\n',
    );
  }
  out = path.join(tmp, 'dist');
  // No date model and no English model here (whatever web/ holds): the page's own files only.
  await run(
    process.execPath,
    [
      'scripts/build_web.mjs',
      '--wasm',
      glue,
      '--out',
      out,
      '--date-model',
      path.join(tmp, 'none.safetensors'),
      '--english-model',
      path.join(tmp, 'none.safetensors'),
    ],
    { cwd: ROOT },
  );
});

after(() => rm(tmp, { recursive: true, force: true }));

test('dist holds the page, the stylesheet, one bundled script and both wasm modules, repacked', async () => {
  assert.deepEqual((await readdir(out)).sort(), [
    'app.js',
    'common.css',
    'compute_worker.js',
    'date.js',
    'embed-example.html',
    'english.css',
    'english.js',
    'favicon.svg',
    'figure.js',
    'file_panel.js',
    'index.html',
    'mha-attention.css',
    'mha-attention.js',
    'mha-embed.js',
    'mha_wasm.js',
    'mha_wasm_core.js',
    'style.css',
  ]);
  for (const [file, factory] of [
    ['mha_wasm.js', 'createMhaModule'],
    ['mha_wasm_core.js', 'createMhaCore'],
  ]) {
    const js = await readFile(path.join(out, file), 'utf8');
    assert.match(
      js,
      new RegExp(`var ${factory}\\s*=`),
      `${file}: the global factory keeps its name`,
    );
    assert.doesNotMatch(js, /\n {2}var wasmBinaryFile/, `${file}: minified`);
    // The inlined bytes are now gzip (pre.js inflates them) and inflate to the original wasm.
    const base64 = /data:application\/octet-stream;base64,([A-Za-z0-9+/]+=*)/.exec(js)[1];
    assert.deepEqual(gunzipSync(Buffer.from(base64, 'base64')), STUB_WASM, file);
  }
  // The Files panel's code is its own script, not app.js's (the first load's budget): the core
  // functions only it calls are named in it alone.
  const [app, filePanel] = await Promise.all(
    ['app.js', 'file_panel.js'].map((f) => readFile(path.join(out, f), 'utf8')),
  );
  for (const name of ['loadMultiheadAttention', 'loadAttention', 'mhaFilePanel'])
    assert.ok(filePanel.includes(name), `file_panel.js: ${name}`);
  for (const name of ['loadMultiheadAttention', 'loadAttention'])
    assert.ok(!app.includes(name), `app.js: no ${name}`);
  // The page's one stylesheet: common.css (also shipped alone, for the element) then style.css.
  const [common, style] = await Promise.all(
    ['common.css', 'style.css'].map((f) => readFile(path.join(out, f), 'utf8')),
  );
  assert.ok(common.length > 100 && common.includes('.heatmap{'), 'common.css minified');
  assert.ok(style.startsWith(common.trim()), 'style.css starts with common.css');
  assert.ok(
    style.length > common.length + 1000 && style.includes('.mode-tab'),
    "then the page's own rules",
  );
});

test('a glue script without exactly one inlined wasm is refused', async () => {
  const bad = path.join(tmp, 'no-wasm');
  await mkdir(bad);
  await writeFile(path.join(bad, 'mha_wasm.js'), 'var createMhaModule = 1;\n');
  await writeFile(path.join(bad, 'mha_wasm_core.js'), 'var createMhaCore = 1;\n');
  await assert.rejects(
    run(
      process.execPath,
      [
        'scripts/build_web.mjs',
        '--wasm',
        path.join(bad, 'mha_wasm.js'),
        '--out',
        path.join(bad, 'dist'),
      ],
      { cwd: ROOT },
    ),
    (e) =>
      e.code === 1 && /mha_wasm_core\.js has 0 inlined wasm data: URIs, expected 1/.test(e.stderr),
  );
});

test('app.js is a classic IIFE script: no import/export left, d3 viridis bundled', async () => {
  const js = await readFile(path.join(out, 'app.js'), 'utf8');
  assert.match(js, /^\/\* mha-lab page v\d+\.\d+\.\d+/);
  assert.match(js, /\(\(\)=>\{/); // minified
  assert.doesNotMatch(js, /^\s*(import|export)\s/m);
  assert.match(js, /440154/); // viridis' first colour, from d3-scale-chromatic
  assert.doesNotMatch(js, /https?:\/\/(?!www\.w3\.org)/); // nothing to fetch
});

test('mha-attention.js: the element as one classic script, its CSS inside, nothing remote', async () => {
  const js = await readFile(path.join(out, 'mha-attention.js'), 'utf8');
  assert.match(js, /^\/\* <mha-attention> v\d+\.\d+\.\d+/);
  assert.doesNotMatch(js, /^\s*(import|export)\s/m);
  assert.match(js, /customElements\.define\("mha-attention"/);
  assert.match(js, /"mha_wasm\.js"/, 'it adds the core from its own folder');
  assert.ok(
    js.includes('.readout[data-locked=\\"true\\"]') || js.includes('.readout[data-locked="true"]'),
    'web/element.css bundled as text',
  );
  assert.ok(js.includes('.heatmap:focus-visible'), 'web/common.css bundled as text');
  assert.doesNotMatch(js, /https?:\/\/(?!www\.w3\.org)/);
  assert.equal(
    await readFile(path.join(out, 'mha-attention.css'), 'utf8'),
    `${await readFile(path.join(ROOT, 'web', 'element.css'), 'utf8')}\n${await readFile(path.join(ROOT, 'web', 'experiments.css'), 'utf8')}`,
  );
  assert.ok(js.includes('.en-exp-verdict'), 'web/experiments.css bundled as text');
  const example = await readFile(path.join(out, 'embed-example.html'), 'utf8');
  const scripts = [...example.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.deepEqual(
    scripts.map((m) => [m[1].trim(), m[2].trim()]),
    [
      ['src="mha-attention.js"', ''],
      ['src="mha-embed.js"', ''],
    ],
  );
  const embed = await readFile(path.join(out, 'mha-embed.js'), 'utf8');
  assert.equal(embed, await readFile(path.join(ROOT, 'web', 'mha-embed.js'), 'utf8'));
  assert.match(embed, /event\.source/, 'mha-embed.js ties each height message to its iframe');
  assert.doesNotMatch(example, /<style\b|\sstyle\s*=|\son[a-z]+\s*=|%MHA_LAB_VERSION%/i);
  assert.match(
    example,
    /Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'"/,
  );
});

test("the bundles carry only viridis' 256 colours (web/src/draw/viridis_table.js), not d3-scale-chromatic", async () => {
  const js = await readFile(path.join(out, 'app.js'), 'utf8');
  assert.doesNotMatch(js, /a6cee3/, "no other d3 scheme (Paired's first colour)");
  assert.ok(js.includes(interpolateViridis(0.5).slice(1)), "viridis' middle colour");
});

test('the version from package.json is stamped into the page', async () => {
  const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const html = await readFile(path.join(out, 'index.html'), 'utf8');
  assert.ok(html.includes(`v${version}`));
  assert.doesNotMatch(html, /%MHA_LAB_VERSION%/);
});

test('the shipped index.html is the source without comments and indentation, nothing else', async () => {
  const { compactHtml } = await import('../../scripts/build_web.mjs');
  const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const source = (await readFile(path.join(ROOT, 'web', 'index.html'), 'utf8')).replaceAll(
    '%MHA_LAB_VERSION%',
    version,
  );
  const shipped = await readFile(path.join(out, 'index.html'), 'utf8');
  assert.equal(shipped, compactHtml(source));
  assert.doesNotMatch(shipped, /<!--|\n[ \t]/);
  // The same text once whitespace runs are collapsed (as the browser renders them) and comments dropped.
  const words = (h) =>
    h
      .replace(/<!--[\s\S]*?-->/g, '')
      .split(/\s+/)
      .filter(Boolean);
  assert.deepEqual(words(shipped), words(source));
  assert.equal(compactHtml('<p>\n    a\n  <!-- x -->\n  b</p>'), '<p>\na\nb</p>');
  assert.throws(() => compactHtml('<pre>\n  x</pre>'), /keep its whitespace/);
});

test('index.html: classic scripts only, no inline script or style, nothing remote', async () => {
  const html = await readFile(path.join(ROOT, 'web', 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  // data-start: the core's script starts the core itself (cpp/bindings/wasm/start_early.js).
  assert.deepEqual(
    scripts.map((m) => m[1].trim()),
    ['src="mha_wasm_core.js" data-start', 'src="app.js"'],
  );
  for (const m of scripts) assert.equal(m[2].trim(), '', 'no inline script');
  assert.doesNotMatch(html, /<style\b/i);
  assert.doesNotMatch(html, /\sstyle\s*=/i);
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'no inline event handlers');
  assert.doesNotMatch(html, /(src|href)\s*=\s*"(https?:)?\/\//i, 'nothing from another origin');
  assert.match(
    html,
    /Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'"/,
  );
});

test('page sources never write HTML strings', async () => {
  const dir = path.join(ROOT, 'web', 'src');
  // Subfolders too (web/src/explain/).
  const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.js'));
  assert.ok(files.includes(path.join('explain', 'step_panel.js')), 'subfolders are read');
  for (const f of files) {
    const src = await readFile(path.join(dir, f), 'utf8');
    assert.doesNotMatch(
      src,
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      f,
    );
    assert.doesNotMatch(src, /setAttribute\(\s*['"]style['"]/, f);
  }
});

test('a missing wasm glue is a clear error', async () => {
  await assert.rejects(
    run(
      process.execPath,
      ['scripts/build_web.mjs', '--wasm', path.join(tmp, 'none.js'), '--out', out],
      { cwd: ROOT },
    ),
    (e) => e.code === 1 && /none\.js not found: run \.\/scripts\/build\.sh/.test(e.stderr),
  );
});

/** Runs dist/date_model.js as a classic script would, and returns the global it sets. */
async function loadDateModelScript(dir) {
  const src = await readFile(path.join(dir, 'date_model.js'), 'utf8');
  const sandbox = {};
  vm.runInNewContext(src, sandbox);
  return { src, model: sandbox.MHA_DATE_MODEL };
}

/** dist's english.js: its text, and what it was told at bundling (MHA_ENGLISH_BUILD), run in a sandbox. */
async function englishBuildOf(dir) {
  const src = await readFile(path.join(dir, 'english.js'), 'utf8');
  const sandbox = {};
  vm.runInNewContext(src, sandbox);
  return { src, build: JSON.parse(JSON.stringify(sandbox.mhaEnglishMode.build)) }; // (plain objects of this realm)
}

test('english.js, english.css and the English model: the mode apart from app.js, the model fetched or as a script', async () => {
  const model = path.join(tmp, 'en.safetensors');
  const heads = path.join(tmp, 'en_heads.json');
  const bytes = Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 11) % 256));
  await writeFile(model, bytes);
  await writeFile(
    heads,
    JSON.stringify({
      heads: [{ layer: 0, head: 1, role: 'previous token', score: 0.83, ablation_cost: 0.12 }],
    }),
  );
  const dir = path.join(tmp, 'with-english');
  const { stdout } = await run(
    process.execPath,
    [
      'scripts/build_web.mjs',
      '--wasm',
      path.join(tmp, 'mha_wasm.js'),
      '--out',
      dir,
      '--date-model',
      path.join(tmp, 'none.safetensors'),
      '--english-model',
      model,
      '--english-heads',
      heads,
    ],
    { cwd: ROOT },
  );
  assert.match(stdout, /English model \(2000 bytes, with head roles\)/);
  const files = await readdir(dir);
  for (const f of ['english.js', 'english.css', 'english_lm.safetensors', 'english_lm.js'])
    assert.ok(files.includes(f), f);
  assert.deepEqual(await readFile(path.join(dir, 'english_lm.safetensors')), bytes);
  const sandbox = {};
  vm.runInNewContext(await readFile(path.join(dir, 'english_lm.js'), 'utf8'), sandbox);
  assert.deepEqual(Buffer.from(sandbox.MHA_ENGLISH_MODEL.safetensors, 'base64'), bytes);
  // The heads' roles too, for <mha-attention preset="english">.
  assert.deepEqual(JSON.parse(JSON.stringify(sandbox.MHA_ENGLISH_MODEL.heads)), {
    heads: [{ layer: 0, head: 1, role: 'previous token', score: 0.83, ablation_cost: 0.12 }],
  });
  const { src, build } = await englishBuildOf(dir);
  // The experiments' measurements: the repository's (readExperiments), whatever the model.
  const { experiments, ...rest } = build;
  const { oneHead, ...measured } = experiments ?? { oneHead: null };
  if (experiments) assert.deepEqual(measured, JSON.parse(JSON.stringify(await readExperiments())));
  else assert.equal(await readExperiments(), null);
  assert.equal(
    oneHead?.file ?? null,
    existsSync(path.join(ROOT, 'web', 'english_lm_h1.safetensors'))
      ? 'english_lm_h1.safetensors'
      : null,
  );
  assert.deepEqual(rest, {
    file: 'english_lm.safetensors',
    script: 'english_lm.js',
    bytes: 2000,
    heads: {
      heads: [{ layer: 0, head: 1, role: 'previous token', score: 0.83, ablation_cost: 0.12 }],
    },
  });
  assert.doesNotMatch(src, /^\s*(import|export)\s/m, 'a classic script');
  // The mode's code is in english.js only: app.js names its script and nothing of its code.
  const app = await readFile(path.join(dir, 'app.js'), 'utf8');
  assert.match(app, /"english\.js"/);
  for (const name of ['EnglishModel', 'Repeat this text', 'english_lm']) {
    assert.ok(src.includes(name), `english.js: ${name}`);
    assert.ok(!app.includes(name), `app.js: no ${name}`);
  }
  assert.doesNotMatch(
    await readFile(path.join(dir, 'index.html'), 'utf8'),
    /english\.(js|css)|english_lm/,
  );
  assert.match(await readFile(path.join(dir, 'english.css'), 'utf8'), /\.en-piece\+\.en-piece\{/);

  // No model any more: stale copies are removed, and the mode is told there is none.
  const gone = await run(
    process.execPath,
    [
      'scripts/build_web.mjs',
      '--wasm',
      path.join(tmp, 'mha_wasm.js'),
      '--out',
      dir,
      '--english-model',
      path.join(tmp, 'none.safetensors'),
    ],
    { cwd: ROOT },
  );
  assert.match(
    gone.stdout,
    /no .*none\.safetensors: the English mode will say the model is missing/,
  );
  const left = await readdir(dir);
  assert.ok(!left.includes('english_lm.safetensors') && !left.includes('english_lm.js'));
  assert.equal((await englishBuildOf(dir)).build, null);
});

test("date_model.js: the model as base64 and the heads' roles, in a classic script", async () => {
  const model = path.join(tmp, 'm.safetensors');
  const heads = path.join(tmp, 'm_heads.json');
  const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
  await writeFile(model, bytes);
  await writeFile(
    heads,
    JSON.stringify({ heads: [{ kind: 'cross', layer: 0, head: 1, role: 'reads the year: 91%' }] }),
  );
  const dir = path.join(tmp, 'with-model');
  const { stdout } = await run(
    process.execPath,
    [
      'scripts/build_web.mjs',
      '--wasm',
      path.join(tmp, 'mha_wasm.js'),
      '--out',
      dir,
      '--date-model',
      model,
      '--date-heads',
      heads,
      '--english-model',
      path.join(tmp, 'none.safetensors'),
    ],
    { cwd: ROOT },
  );
  assert.match(stdout, /date model \(3000 bytes, with head roles\)/);
  assert.deepEqual((await readdir(dir)).sort(), [
    'app.js',
    'common.css',
    'compute_worker.js',
    'date.js',
    'date_model.js',
    'embed-example.html',
    'english.css',
    'english.js',
    'favicon.svg',
    'figure.js',
    'file_panel.js',
    'index.html',
    'mha-attention.css',
    'mha-attention.js',
    'mha-embed.js',
    'mha_wasm.js',
    'mha_wasm_core.js',
    'style.css',
  ]);
  const { src, model: m } = await loadDateModelScript(dir);
  assert.match(src, /^\/\* mha-lab date model: m\.safetensors \(3000 bytes\)/);
  assert.doesNotMatch(src, /^\s*(import|export)\s/m, 'a classic script');
  assert.equal(m.bytes, 3000);
  assert.deepEqual(Buffer.from(m.safetensors, 'base64'), bytes);
  assert.equal(m.heads.heads[0].role, 'reads the year: 91%');
  // The page's first load does not include it: index.html and app.js never name it; the Date
  // translator's own script (date.js, added when the mode is first shown) adds it on demand.
  assert.doesNotMatch(await readFile(path.join(dir, 'index.html'), 'utf8'), /date_model/);
  assert.doesNotMatch(await readFile(path.join(dir, 'app.js'), 'utf8'), /date_model/);
  assert.match(await readFile(path.join(dir, 'app.js'), 'utf8'), /"date\.js"/);
  assert.match(await readFile(path.join(dir, 'date.js'), 'utf8'), /"date_model\.js"/);

  // A heads file that is not JSON: a warning, and no roles (the model is still there).
  await writeFile(heads, '{not json');
  const bad = await run(
    process.execPath,
    [
      'scripts/build_web.mjs',
      '--wasm',
      path.join(tmp, 'mha_wasm.js'),
      '--out',
      dir,
      '--date-model',
      model,
      '--date-heads',
      heads,
    ],
    { cwd: ROOT },
  );
  assert.match(bad.stderr, /m_heads\.json is not valid JSON/);
  assert.equal((await loadDateModelScript(dir)).model.heads, null);

  // No model any more: a stale date_model.js is removed, so dist/ never ships an old model.
  const gone = await run(
    process.execPath,
    [
      'scripts/build_web.mjs',
      '--wasm',
      path.join(tmp, 'mha_wasm.js'),
      '--out',
      dir,
      '--date-model',
      path.join(tmp, 'none.safetensors'),
    ],
    { cwd: ROOT },
  );
  assert.match(
    gone.stdout,
    /no .*none\.safetensors: the Date translator will say the model is missing/,
  );
  assert.ok(!(await readdir(dir)).includes('date_model.js'));
});
