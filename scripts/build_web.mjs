#!/usr/bin/env node
// Builds the static page into one folder that works from file:// and from any static host:
//   dist/index.html   web/index.html with the version from package.json stamped in
//   dist/style.css    web/style.css
//   dist/favicon.svg  web/favicon.svg
//   dist/app.js       web/src/main.js and its imports (incl. d3-scale-chromatic), bundled by
//                     esbuild into ONE classic IIFE script (Chrome refuses module scripts on file://)
//   dist/mha_wasm.js  the Emscripten glue (SINGLE_FILE: the wasm is inside it)
//
// Usage: node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist
import { build } from 'esbuild';
import { copyFile, mkdir, readFile, writeFile, access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WEB = path.join(ROOT, 'web');
const PLACEHOLDER = /%MHA_LAB_VERSION%/g;

function usage(message) {
  if (message) console.error(`build_web: ${message}`);
  console.error('usage: node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist');
  process.exit(2);
}

export async function buildWeb({ wasm, out }) {
  const wasmPath = path.resolve(wasm);
  const outDir = path.resolve(out);
  try {
    await access(wasmPath);
  } catch {
    throw new Error(`wasm glue ${wasmPath} not found: run ./scripts/build.sh (it builds it first)`);
  }
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const version = String(pkg.version);
  if (!/^[0-9A-Za-z.+-]+$/.test(version)) throw new Error(`unexpected version "${version}"`);

  await mkdir(outDir, { recursive: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(WEB, 'src', 'main.js')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
    outfile: path.join(outDir, 'app.js'),
    banner: { js: `/* mha-lab page v${version}: built by scripts/build_web.mjs from web/src */` },
    legalComments: 'eof',
    logLevel: 'warning',
  });

  const html = await readFile(path.join(WEB, 'index.html'), 'utf8');
  if (!html.includes('%MHA_LAB_VERSION%')) throw new Error('web/index.html has no %MHA_LAB_VERSION% placeholder');
  await writeFile(path.join(outDir, 'index.html'), html.replace(PLACEHOLDER, version));
  await copyFile(path.join(WEB, 'style.css'), path.join(outDir, 'style.css'));
  await copyFile(path.join(WEB, 'favicon.svg'), path.join(outDir, 'favicon.svg'));
  await copyFile(wasmPath, path.join(outDir, 'mha_wasm.js'));
  return { outDir, version };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let values;
  try {
    ({ values } = parseArgs({
      options: { wasm: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean' } },
    }));
  } catch (e) {
    usage(e.message);
  }
  if (values.help) usage();
  if (!values.wasm || !values.out) usage('--wasm and --out are required');
  try {
    const { outDir, version } = await buildWeb(values);
    console.log(`build_web: page v${version} written to ${path.relative(process.cwd(), outDir) || '.'}/`);
  } catch (e) {
    console.error(`build_web: ${e.message}`);
    process.exit(1);
  }
}
