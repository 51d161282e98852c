#!/usr/bin/env node
// Packs the <mha-attention> element as an npm package, from the built page (dist/, by
// scripts/build_web.mjs): `npm pack` on a staging folder writes <out>/mha-attention-<version>.tgz.
//
// The package holds the element's classic script and the files it loads at run time from the
// folder its script came from (element.js: document.currentScript), so a course author copies those
// beside the bundle that imports it (docs/embedding.md, "Install from npm"):
//   mha-attention.js      the element (package.json "exports" ".", its types mha-attention.d.ts)
//   mha_wasm_core.js      the attention core (types mha_wasm_core.d.ts; API mha_wasm.d.ts)
//   mha_wasm.js           the full module, for preset="date-translator" and preset="english"
//                         (types mha_wasm_module.d.ts)
//   date_model.js, english_lm.js  the trained models' scripts, when the build has the models
//   mha-attention.css, common.css  the element's styles for browsers without constructed stylesheets
//   mha-embed.js          the iframe helper
//   mha_wasm.d.ts         the wasm modules' typed contract (cpp/bindings/wasm/mha_wasm.d.ts)
//   README.md, LICENSE    web/npm/README.md, the project's LICENSE
// The version is the root package.json's; nothing is downloaded (the package has no dependencies).
//
// Usage: node scripts/pack_npm.mjs [--dist dist] [--out build/npm]
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, writeFile, access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The package's name: the element's tag and script name (the root "mha-lab" is the private repository). */
export const NPM_NAME = 'mha-attention';

/** Files of dist/ the package must have (build_web.mjs writes them every time). */
const FROM_DIST = [
  'mha-attention.js',
  'mha_wasm_core.js',
  'mha_wasm.js',
  'mha-attention.css',
  'common.css',
  'mha-embed.js',
];
/** Files of dist/ present only when the build has the trained models. */
const MODELS = ['date_model.js', 'english_lm.js'];
/** Source files copied in: [from the repository root, name in the package]. */
const FROM_SOURCE = [
  ['web/npm/README.md', 'README.md'],
  ['web/npm/mha-attention.d.ts', 'mha-attention.d.ts'],
  ['web/npm/mha_wasm_core.d.ts', 'mha_wasm_core.d.ts'],
  ['web/npm/mha_wasm_module.d.ts', 'mha_wasm_module.d.ts'],
  ['cpp/bindings/wasm/mha_wasm.d.ts', 'mha_wasm.d.ts'],
  ['LICENSE', 'LICENSE'],
];

const exists = (file) =>
  access(file).then(
    () => true,
    () => false,
  );

/**
 * The package.json of the package: `version` from the root package.json, `exports` for every
 * runtime file (the element, the core, the full module with their types; the rest as files).
 * @param {{version: string, license: string, models: string[]}} root
 */
export function packageJson({ version, license, models }) {
  const file = (f) => [`./${f}`, `./${f}`];
  return {
    name: NPM_NAME,
    version,
    description:
      'The <mha-attention> custom element: every head of a multi-head attention layer drawn as a ' +
      'grid, computed by a C++ core in WebAssembly, offline and under a strict CSP.',
    license,
    keywords: ['attention', 'transformer', 'multi-head attention', 'custom-element', 'webassembly'],
    main: './mha-attention.js',
    types: './mha-attention.d.ts',
    exports: {
      '.': { types: './mha-attention.d.ts', default: './mha-attention.js' },
      './mha-attention.js': { types: './mha-attention.d.ts', default: './mha-attention.js' },
      './mha_wasm_core.js': { types: './mha_wasm_core.d.ts', default: './mha_wasm_core.js' },
      './mha_wasm.js': { types: './mha_wasm_module.d.ts', default: './mha_wasm.js' },
      './types': { types: './mha_wasm.d.ts' },
      ...Object.fromEntries(
        ['mha-embed.js', 'mha-attention.css', 'common.css', ...models, 'package.json'].map(file),
      ),
    },
    files: [...FROM_DIST, ...models, ...FROM_SOURCE.map(([, to]) => to)],
  };
}

/**
 * Stages the package from `dist` in `<out>/package` and packs it with `npm pack` into `out`.
 * @param {{dist?: string, out?: string}} options
 * @returns {Promise<{tarball: string, size: number, files: string[], version: string}>}
 *   the tarball's path, its size in bytes and the files npm put in it
 */
export async function packNpm({
  dist = path.join(ROOT, 'dist'),
  out = path.join(ROOT, 'build', 'npm'),
} = {}) {
  const distDir = path.resolve(dist);
  const outDir = path.resolve(out);
  const missing = [];
  for (const f of FROM_DIST) if (!(await exists(path.join(distDir, f)))) missing.push(f);
  if (missing.length)
    throw new Error(
      `${distDir} lacks ${missing.join(', ')}: build the page first (./scripts/build.sh, or ` +
        'node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist)',
    );
  const models = [];
  for (const f of MODELS) if (await exists(path.join(distDir, f))) models.push(f);

  const root = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
  const version = String(root.version);
  const stage = path.join(outDir, 'package');
  await rm(stage, { recursive: true, force: true });
  await mkdir(stage, { recursive: true });
  for (const f of [...FROM_DIST, ...models])
    await copyFile(path.join(distDir, f), path.join(stage, f));
  for (const [from, to] of FROM_SOURCE) await copyFile(path.join(ROOT, from), path.join(stage, to));
  await writeFile(
    path.join(stage, 'package.json'),
    `${JSON.stringify(packageJson({ version, license: root.license, models }), null, 2)}\n`,
  );
  const { stdout } = await promisify(execFile)(
    'npm',
    ['pack', '--json', '--offline', '--pack-destination', outDir],
    { cwd: stage },
  );
  const [packed] = JSON.parse(stdout);
  await rm(stage, { recursive: true, force: true });
  return {
    tarball: path.join(outDir, packed.filename),
    size: packed.size,
    files: packed.files.map((f) => f.path).sort(),
    version,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { dist: { type: 'string' }, out: { type: 'string' } },
  });
  try {
    const { tarball, size, files } = await packNpm(values);
    const where = path.relative(process.cwd(), tarball);
    console.log(`pack_npm: ${where} (${size} bytes, ${files.length} files)`);
  } catch (e) {
    console.error(`pack_npm: ${e.message}`);
    process.exit(1);
  }
}
