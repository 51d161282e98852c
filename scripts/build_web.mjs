#!/usr/bin/env node
// Builds the static page into one folder that works from file:// and from any static host:
//   dist/index.html   web/index.html with the version from package.json stamped in
//   dist/style.css    web/common.css then web/style.css, minified by esbuild (comments and spaces
//                     were a quarter of its gzipped bytes): one stylesheet for the page (a request
//                     and about 170 bytes gzip less of its first load than the two files)
//   dist/favicon.svg  web/favicon.svg
//   dist/app.js       web/src/main.js and its imports (incl. the viridis table), bundled and
//                     minified by esbuild into ONE classic IIFE script (Chrome refuses module
//                     scripts on file://)
//   dist/mha-attention.js  the <mha-attention> custom element (web/src/element/element.js and its imports,
//                     web/element.css inlined as text): one classic script for course pages
//   dist/mha-attention.css  web/element.css and web/experiments.css (used only where constructed
//                     stylesheets are missing)
//   dist/mha-embed.js  web/mha-embed.js: sizes an iframe of the page (embed=1) to its content
//   dist/common.css   web/common.css: rules shared by the page and the element (bundled in the
//                     element), minified
//   dist/embed-example.html  web/embed-example.html: the element and an iframe, as course pages use them
//   dist/compute_worker.js  the page's compute worker (web/src/compute/compute_worker.js): numpyExperiment
//                     for large views off the main thread, when served over http(s)
//   dist/file_panel.js  the Files panel (web/src/explain/file_panel.js, one classic script), added to the
//                     page when the panel is first opened
//   dist/figure.js    the figure export (web/src/chrome/figure_entry.js: Save SVG, Save PNG at
//                     1×/2×/4×), added to the page on the first such export
//   dist/mha_wasm_core.js  the page's attention core (createMhaCore), loaded by index.html
//   dist/mha_wasm.js  the full module (createMhaModule: the core plus the date model), added to
//                     the page only when the Date translator is opened
//                     Both are Emscripten SINGLE_FILE glue (the wasm inside, as base64), repacked
//                     here: the inlined wasm gzipped (pre.js inflates it) and the glue minified.
//                     The page's first load (index.html, app.js, style.css, mha_wasm_core.js) must
//                     stay within 150 KB gzipped: tests/web/size_budget.test.mjs.
//   dist/date.js      the Date translator (web/src/modes/date/date_entry.js and its imports), one
//                     classic script the page adds when the mode is first shown (app.js holds only
//                     its stand-in, modes/lazy_mode.js)
//   dist/date_model.js  only when web/date_model.safetensors exists: a classic script setting
//                     the global MHA_DATE_MODEL = {bytes, safetensors: <base64>, heads: <the JSON of
//                     web/date_model_heads.json, or null>}. The page adds it (<script src>) only
//                     when the Date translator is opened: first load stays small, and file:// works
//                     (a page opened from disk may not fetch() the .safetensors file itself).
//   dist/english.js   the English mode (web/src/modes/english/english_entry.js and its imports), one
//                     classic script the page adds when the mode is first shown (app.js holds only
//                     its stand-in, modes/lazy_mode.js), and dist/english.css (web/english.css, minified)
//                     with it. Its MHA_ENGLISH_BUILD (esbuild's define) says what this build has:
//                     null without a model, else {file, script, bytes, heads: the JSON of
//                     web/english_lm_heads.json, or null, experiments: readExperiments()}.
//   dist/english_lm.safetensors  web/english_lm.safetensors, fetched by the English mode when served
//   dist/english_lm.js  the same bytes as base64 in a classic script (global MHA_ENGLISH_MODEL =
//                     {bytes, safetensors, heads: the JSON of web/english_lm_heads.json, or null}),
//                     for file://, where the page may not fetch() them, and for the element's
//                     preset="english" (its heads' held-out roles).
//                     Both only when web/english_lm.safetensors exists (stale copies are removed).
//
// Usage: node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist
//        [--core build/wasm/mha_wasm_core.js (default: next to --wasm)]
//        [--date-model web/date_model.safetensors] [--date-heads web/date_model_heads.json]
//        [--english-model web/english_lm.safetensors] [--english-heads web/english_lm_heads.json]
import { build, transform } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { gzipAsync as zopfliGzip } from '@gfx/zopfli';
import { copyFile, mkdir, readFile, writeFile, access, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WEB = path.join(ROOT, 'web');
const PLACEHOLDER = /%MHA_LAB_VERSION%/g;

function usage(message) {
  if (message) console.error(`build_web: ${message}`);
  console.error(
    'usage: node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist ' +
      '[--core build/wasm/mha_wasm_core.js] [--date-model web/date_model.safetensors] [--date-heads web/date_model_heads.json] ' +
      '[--english-model web/english_lm.safetensors] [--english-heads web/english_lm_heads.json]',
  );
  process.exit(2);
}

async function readIfExists(file) {
  try {
    return await readFile(file);
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
}

/** A model's heads file as JSON, or null when it is absent or not JSON (with a warning). */
async function readHeads(heads, warn, without = 'no head roles') {
  const text = await readIfExists(heads);
  if (!text) return null;
  try {
    return JSON.parse(text.toString('utf8'));
  } catch (e) {
    warn(`build_web: ${heads} is not valid JSON (${e.message}); the page will show ${without}`);
    return null;
  }
}

/**
 * dist/date_model.js from the model file and the heads' roles, or no file when there is no model
 * (a stale one is removed). A heads file that is not JSON is left out with a warning: the page
 * then shows no roles. @returns {Promise<{bytes: number, heads: boolean} | null>}
 */
export async function writeDateModel({ model, heads, outDir, warn = console.warn }) {
  const target = path.join(outDir, 'date_model.js');
  const bytes = await readIfExists(model);
  if (!bytes) {
    await rm(target, { force: true });
    return null;
  }
  const headsJson = await readHeads(heads, warn);
  const data = { bytes: bytes.length, safetensors: bytes.toString('base64'), heads: headsJson };
  await writeFile(
    target,
    `/* mha-lab date model: ${path.basename(model)} (${bytes.length} bytes) as base64` +
      `${headsJson ? `, and ${path.basename(heads)}` : ''}. Written by scripts/build_web.mjs; ` +
      'added to the page only when the Date translator is opened. */\n' +
      `var MHA_DATE_MODEL = ${JSON.stringify(data)};\n`,
  );
  return { bytes: bytes.length, heads: headsJson !== null };
}

/**
 * The measurements of the English mode's experiments (modes/english/experiments.js): the pruning
 * curves of `mha prune --json` (web/english_lm_prune.json, web/date_model_prune.json), the
 * head-count sweep (web/head_count_sweep.json, scripts/training/head_count_sweep.py), the
 * training replay's scores (web/english_lm_replay.json, scripts/training/replay_scores.py) and the
 * measurement half of the held-out text the English curve was measured on (the odd lines of
 * web/english_lm_heldout.txt), for the reader's own point. Each part is null when its file is
 * missing or not JSON (with a warning); null when every part is.
 */
export async function readExperiments({ dir = WEB, warn = console.warn } = {}) {
  const json = (name) => readHeads(path.join(dir, name), warn, 'no such experiment');
  const [english, date, sweep, replay] = await Promise.all(
    [
      'english_lm_prune.json',
      'date_model_prune.json',
      'head_count_sweep.json',
      'english_lm_replay.json',
    ].map(json),
  );
  const text = await readIfExists(path.join(dir, 'english_lm_heldout.txt'));
  const lines = text
    ? text
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim())
    : [];
  const heldout = lines.filter((_, i) => i % 2 === 1);
  if (!english && !date && !sweep && !replay) return null;
  return { english: english && heldout.length ? english : null, date, sweep, replay, heldout };
}

/**
 * An English model for the page: dist/<name>.safetensors (fetched when served) and
 * dist/<name>.js (the same bytes as base64 in a classic script setting `global`, for file://), or
 * neither when there is no model (stale ones are removed). A heads file that is not JSON is left
 * out with a warning. The shipped model is english_lm (MHA_ENGLISH_MODEL); the one-head model of
 * the head-count experiment english_lm_h1 (MHA_ENGLISH_MODEL_H1).
 * @returns {Promise<{file: string, script: string, global: string, bytes: number, heads: object|null} | null>}
 */
async function writeEnglishFiles({ model, heads, outDir, warn, name, global, experiments = null }) {
  const file = `${name}.safetensors`,
    script = `${name}.js`;
  const bytes = model ? await readIfExists(model) : null;
  if (!bytes) {
    await Promise.all([file, script].map((f) => rm(path.join(outDir, f), { force: true })));
    return null;
  }
  const headsJson = heads ? await readHeads(heads, warn) : null;
  await writeFile(path.join(outDir, file), bytes);
  await writeFile(
    path.join(outDir, script),
    `/* mha-lab English model: ${path.basename(model)} (${bytes.length} bytes) as base64. Written by ` +
      'scripts/build_web.mjs; added to the page only when the English mode needs it from file://' +
      `${name === 'english_lm' ? ', and by <mha-attention preset="english">' : ''}${headsJson ? `, with ${path.basename(heads)}` : ''}. */\n` +
      `var ${global} = ${JSON.stringify({ bytes: bytes.length, safetensors: bytes.toString('base64'), heads: headsJson, ...(experiments ? { experiments } : {}) })};\n`,
  );
  return { file, script, global, bytes: bytes.length, heads: headsJson };
}

/**
 * The English model for the page (writeEnglishFiles: english_lm.safetensors, english_lm.js), with
 * the experiments' measurements (readExperiments) and the one-head model of web/ (oneHead:
 * web/english_lm_h1.safetensors, or null; no heads file: the comparison draws its grids).
 * @returns {Promise<{file: string, script: string, bytes: number, heads: object|null, experiments: object|null} | null>}
 *   what the English mode's bundle is told (MHA_ENGLISH_BUILD)
 */
export async function writeEnglishModel({ model, heads, outDir, warn = console.warn }) {
  const hasModel = (await readIfExists(model)) !== null;
  const oneHead = await writeEnglishFiles({
    // Without the English model there is no English mode to compare it in: its files are removed.
    model: hasModel ? path.join(WEB, 'english_lm_h1.safetensors') : null,
    heads: null,
    outDir,
    warn,
    name: 'english_lm_h1',
    global: 'MHA_ENGLISH_MODEL_H1',
  });
  const measured = await readExperiments({ warn });
  const experiments = measured ? { ...measured, oneHead } : null;
  // english_lm.js carries them too, for <mha-attention preset="english" experiment="…">.
  const main = await writeEnglishFiles({
    model,
    heads,
    outDir,
    warn,
    name: 'english_lm',
    global: 'MHA_ENGLISH_MODEL',
    experiments,
  });
  if (!main) return null;
  const { global: _, ...rest } = main;
  return { ...rest, experiments };
}

/**
 * The browsers the bundles and the CSS are written for (esbuild targets): the first ones that run
 * the page at all. The attention core needs WebAssembly SIMD128 (-msimd128: Chrome 91, Firefox 89,
 * Safari 16.4) and exceptions (-fwasm-exceptions: Chrome 95, Firefox 100, Safari 15.2), its copies
 * here DecompressionStream (Chrome 80, Firefox 113, Safari 16.4: pre.js), and the page calls
 * structuredClone (Chrome 98, Firefox 94, Safari 15.4). Their
 * syntax (?., ??=, class fields) is kept as written: about 295 bytes gzip less of app.js than for
 * es2020 / Chrome 90 / Safari 15, whose lowering would buy no browser that could run the page
 * (and which helps keep the first load within its 150 KB).
 */
const TARGET = ['es2022', 'chrome98', 'firefox94', 'safari16.4'];

/**
 * One entry of web/src and its imports (CSS files as text) as ONE classic IIFE
 * script: Chrome refuses module scripts on file://.
 */
function bundle(entry, outfile, what, define = {}) {
  return build({
    define,
    absWorkingDir: ROOT,
    entryPoints: [path.join(WEB, 'src', entry)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: TARGET,
    loader: { '.css': 'text' },
    outfile,
    minify: true,
    banner: { js: `/* ${what}: built by scripts/build_web.mjs from web/src/${entry} */` },
    legalComments: 'eof',
    logLevel: 'warning',
  });
}

/**
 * web/<name>, after web/<before> if given, minified by esbuild (same rules, no comments or spaces)
 * into outDir/<name>.
 */
async function minifyCss(name, outDir, before = null) {
  const parts = await Promise.all(
    [before, name].filter(Boolean).map((f) => readFile(path.join(WEB, f), 'utf8')),
  );
  const { code } = await transform(parts.join('\n'), {
    loader: 'css',
    minify: true,
    target: TARGET,
  });
  await writeFile(path.join(outDir, name), code);
}

const DATA_URI = /(["'])data:application\/octet-stream;base64,([A-Za-z0-9+/]+={0,2})\1/g;

/**
 * An Emscripten SINGLE_FILE glue script, repacked for the page: its one inlined wasm (a base64
 * data: URI) gzipped and base64-encoded again under the same data: prefix (pre.js recognises the
 * gzip magic and inflates it), then the glue minified by esbuild (whitespace, local names; the
 * global factory name and every property name are kept). A glue without exactly one inlined wasm
 * is an error: it would need a .wasm fetch, which file:// refuses.
 * The gzip is zlib's level 9, or with `zopfli` Zopfli's (@gfx/zopfli: the same gzip format, about
 * 5 % smaller, a few seconds per module): the page's first load (tests/web/size_budget.test.mjs)
 * is packed so.
 * @param {string} source the glue's text  @param {string} name for messages
 * @param {{zopfli?: boolean}} [options]
 * @returns {Promise<{code: string, wasmBytes: number, gzBytes: number}>}
 */
export async function packWasmScript(source, name, { zopfli = false } = {}) {
  const found = [...source.matchAll(DATA_URI)];
  if (found.length !== 1) {
    throw new Error(
      `${name} has ${found.length} inlined wasm data: URIs, expected 1 ` +
        '(build it with -sSINGLE_FILE=1: ./scripts/build.sh)',
    );
  }
  const [literal, quote, base64] = found[0];
  const wasm = Buffer.from(base64, 'base64');
  const gz = zopfli
    ? Buffer.from(await zopfliGzip(wasm, { numiterations: 15 }))
    : gzipSync(wasm, { level: 9 });
  const packed = `${quote}data:application/octet-stream;base64,${gz.toString('base64')}${quote}`;
  const glue = source.replace(literal, () => packed);
  const { code } = await transform(glue, { minify: true, target: 'es2020', legalComments: 'none' });
  return { code, wasmBytes: wasm.length, gzBytes: gz.length };
}

/**
 * index.html as shipped: without comments and without the indentation at the start of lines (a
 * line break stays, so every gap between words renders as before). The page has no <pre> and no
 * <textarea> with content, where the indentation would be content. About 250 bytes of its first
 * load (tests/web/size_budget.test.mjs).
 */
export function compactHtml(html) {
  if (/<pre\b|<textarea\b[^>]*>[^<]/i.test(html))
    throw new Error('compactHtml: the page has <pre> or textarea content; keep its whitespace');
  return html.replace(/<!--[\s\S]*?-->[ \t]*\n?/g, '').replace(/\n[ \t]+/g, '\n');
}

export async function buildWeb({
  wasm,
  core,
  out,
  dateModel = path.join(WEB, 'date_model.safetensors'),
  dateHeads = path.join(WEB, 'date_model_heads.json'),
  englishModel = path.join(WEB, 'english_lm.safetensors'),
  englishHeads = path.join(WEB, 'english_lm_heads.json'),
}) {
  const wasmPath = path.resolve(wasm);
  const corePath = path.resolve(core ?? path.join(path.dirname(wasmPath), 'mha_wasm_core.js'));
  const outDir = path.resolve(out);
  for (const glue of [wasmPath, corePath]) {
    try {
      await access(glue);
    } catch {
      throw new Error(`wasm glue ${glue} not found: run ./scripts/build.sh (it builds it first)`);
    }
  }
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const version = String(pkg.version);
  if (!/^[0-9A-Za-z.+-]+$/.test(version)) throw new Error(`unexpected version "${version}"`);

  await mkdir(outDir, { recursive: true });
  await bundle('main.js', path.join(outDir, 'app.js'), `mha-lab page v${version}`);
  // The page's compute worker (a classic worker script; it loads mha_wasm_core.js itself).
  await bundle(
    'compute/compute_worker.js',
    path.join(outDir, 'compute_worker.js'),
    `mha-lab compute worker v${version}`,
  );
  // The Files panel, loaded when first opened (not part of the first load).
  await bundle(
    'explain/file_panel.js',
    path.join(outDir, 'file_panel.js'),
    `mha-lab Files panel v${version}`,
  );
  // The Date translator, loaded when its tab is first shown (modes/lazy_mode.js).
  await bundle(
    'modes/date/date_entry.js',
    path.join(outDir, 'date.js'),
    `mha-lab Date translator v${version}`,
  );
  // The figure export (Save SVG, Save PNG at 1×/2×/4×), loaded on the first export.
  await bundle(
    'chrome/figure_entry.js',
    path.join(outDir, 'figure.js'),
    `mha-lab figure export v${version}`,
  );

  // The <mha-attention> element: its own classic script (it adds mha_wasm_core.js itself, and
  // mha_wasm.js only for the Date translator), its shadow-root CSS bundled in as text (a
  // constructed stylesheet) and also beside it as a file.
  await bundle(
    'element/element.js',
    path.join(outDir, 'mha-attention.js'),
    `<mha-attention> v${version}`,
  );
  await writeFile(
    path.join(outDir, 'mha-attention.css'),
    (
      await Promise.all(
        ['element.css', 'experiments.css'].map((f) => readFile(path.join(WEB, f), 'utf8')),
      )
    ).join('\n'),
  );
  await copyFile(path.join(WEB, 'mha-embed.js'), path.join(outDir, 'mha-embed.js'));
  await minifyCss('common.css', outDir);
  const example = await readFile(path.join(WEB, 'embed-example.html'), 'utf8');
  await writeFile(path.join(outDir, 'embed-example.html'), example.replace(PLACEHOLDER, version));

  const html = await readFile(path.join(WEB, 'index.html'), 'utf8');
  if (!html.includes('%MHA_LAB_VERSION%'))
    throw new Error('web/index.html has no %MHA_LAB_VERSION% placeholder');
  await writeFile(path.join(outDir, 'index.html'), compactHtml(html.replace(PLACEHOLDER, version)));
  await minifyCss('style.css', outDir, 'common.css');
  await copyFile(path.join(WEB, 'favicon.svg'), path.join(outDir, 'favicon.svg'));
  // The core is on every first load: Zopfli's smaller gzip. The full module loads on demand.
  for (const [from, to, zopfli] of [
    [corePath, 'mha_wasm_core.js', true],
    [wasmPath, 'mha_wasm.js', false],
  ]) {
    const { code } = await packWasmScript(await readFile(from, 'utf8'), path.basename(from), {
      zopfli,
    });
    await writeFile(path.join(outDir, to), code);
  }
  const date = await writeDateModel({
    model: path.resolve(dateModel),
    heads: path.resolve(dateHeads),
    outDir,
  });
  const english = await buildEnglish({ outDir, version, englishModel, englishHeads });
  return { outDir, version, date, english };
}

/**
 * The English mode's files in `outDir`: its script (told which model files this build has), its
 * stylesheet and the model's two copies (writeEnglishModel). Also used alone by
 * tests/browser/english.test.mjs, on a copy of dist/, with a test model.
 */
export async function buildEnglish({
  outDir,
  version,
  englishModel = path.join(WEB, 'english_lm.safetensors'),
  englishHeads = path.join(WEB, 'english_lm_heads.json'),
}) {
  const english = await writeEnglishModel({
    model: path.resolve(englishModel),
    heads: path.resolve(englishHeads),
    outDir,
  });
  await bundle(
    'modes/english/english_entry.js',
    path.join(outDir, 'english.js'),
    `mha-lab English mode v${version}`,
    { MHA_ENGLISH_BUILD: JSON.stringify(english) },
  );
  await minifyCss('english.css', outDir, 'experiments.css');
  return english;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        wasm: { type: 'string' },
        core: { type: 'string' },
        out: { type: 'string' },
        'date-model': { type: 'string' },
        'date-heads': { type: 'string' },
        'english-model': { type: 'string' },
        'english-heads': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (e) {
    usage(e.message);
  }
  if (values.help) usage();
  if (!values.wasm || !values.out) usage('--wasm and --out are required');
  try {
    const { outDir, version, date, english } = await buildWeb({
      wasm: values.wasm,
      core: values.core,
      out: values.out,
      ...(values['date-model'] ? { dateModel: values['date-model'] } : {}),
      ...(values['date-heads'] ? { dateHeads: values['date-heads'] } : {}),
      ...(values['english-model'] ? { englishModel: values['english-model'] } : {}),
      ...(values['english-heads'] ? { englishHeads: values['english-heads'] } : {}),
    });
    const where = path.relative(process.cwd(), outDir) || '.';
    console.log(`build_web: page v${version} written to ${where}/`);
    console.log(
      date
        ? `build_web: date model (${date.bytes} bytes${date.heads ? ', with head roles' : ', no head roles'}) in ${where}/date_model.js`
        : `build_web: no ${values['date-model'] ?? 'web/date_model.safetensors'}: ` +
            'the Date translator will say the model is missing',
    );
    console.log(
      english
        ? `build_web: English model (${english.bytes} bytes${english.heads ? ', with head roles' : ', no head roles'}) ` +
            `in ${where}/english_lm.safetensors and ${where}/english_lm.js`
        : `build_web: no ${values['english-model'] ?? 'web/english_lm.safetensors'}: ` +
            'the English mode will say the model is missing',
    );
  } catch (e) {
    console.error(`build_web: ${e.message}`);
    process.exit(1);
  }
}
