// The npm package (scripts/pack_npm.mjs) as a course author uses it (docs/embedding.md, "Install
// from npm"): packed from dist/, installed into a scratch app with npm --offline (the package has no
// dependencies), imported by the app's entry and bundled with esbuild, its runtime files copied
// beside the bundle; the app opened in Chromium served and from file:// draws module 08's grids
// with no request outside the app's folder. Its types: the scratch app's TypeScript resolves the
// element, its attributes (the element's own list) and the wasm factories through "exports".
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import ts from 'typescript';
import { DIST, ROOT, useBrowserAndTargets, withCheckedPage } from './helpers.mjs';
import { NPM_NAME, packNpm } from '../../scripts/pack_npm.mjs';
import { ATTRIBUTES } from '../../web/src/element/attributes.js';

const TIMEOUT = 60_000;
/** What docs/embedding.md says to copy beside the bundle. */
const RUNTIME = ['mha_wasm_core.js', 'mha_wasm.js', 'date_model.js', 'english_lm.js'];
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const packed = {};

/** Packs, installs and bundles the scratch app; returns its public folder for the targets. */
async function makeApp() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mha-npm-'));
  packed.tmp = tmp;
  Object.assign(packed, await packNpm({ dist: DIST, out: path.join(tmp, 'pack') }));
  const app = path.join(tmp, 'app');
  await mkdir(path.join(app, 'src'), { recursive: true });
  await writeFile(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'scratch-course', version: '1.0.0', private: true }),
  );
  await promisify(execFile)(
    'npm',
    ['install', packed.tarball, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    { cwd: app, env: { ...process.env, npm_config_cache: path.join(tmp, 'npm-cache') } },
  );
  await writeFile(path.join(app, 'src', 'app.js'), `import '${NPM_NAME}';\n`);
  const pub = path.join(app, 'public');
  await build({
    absWorkingDir: app,
    entryPoints: ['src/app.js'],
    bundle: true,
    format: 'iife',
    outfile: 'public/app.js',
    logLevel: 'warning',
  });
  const installed = path.join(app, 'node_modules', NPM_NAME);
  for (const f of RUNTIME) await copyFile(path.join(installed, f), path.join(pub, f));
  await writeFile(
    path.join(pub, 'index.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>Module 08</title><script src="app.js"></script></head>
<body><main><mha-attention id="m08" preset="module-08" cell="0.0.2"></mha-attention></main></body></html>\n`,
  );
  packed.app = app;
  return { dir: pub };
}

const env = useBrowserAndTargets(makeApp);
after(() => packed.tmp && rm(packed.tmp, { recursive: true, force: true }));

/** Type-checks `source` as a file of the scratch app; returns the compiler's messages. */
function typeCheck(source) {
  const file = path.join(packed.app, 'src', 'check.ts');
  const host = ts.createCompilerHost({});
  const read = host.readFile.bind(host);
  host.readFile = (f) => (f === file ? source : read(f));
  const program = ts.createProgram({
    rootNames: [file],
    options: {
      noEmit: true,
      strict: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      esModuleInterop: true,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
    },
    host,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the npm package', { timeout: TIMEOUT }, () => {
  test('named for the element, at the project version, with the element, the wasm and the types', async () => {
    const root = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(path.basename(packed.tarball), `mha-attention-${root.version}.tgz`);
    for (const f of [
      'package.json',
      'README.md',
      'LICENSE',
      'mha-attention.js',
      'mha-attention.d.ts',
      'mha-embed.js',
      'mha_wasm_core.js',
      'mha_wasm_core.d.ts',
      'mha_wasm.js',
      'mha_wasm_module.d.ts',
      'mha_wasm.d.ts',
      ...RUNTIME,
    ])
      assert.ok(packed.files.includes(f), `${f} is in the tarball (${packed.files.join(', ')})`);
    const pkg = JSON.parse(
      await readFile(path.join(packed.app, 'node_modules', NPM_NAME, 'package.json'), 'utf8'),
    );
    assert.equal(pkg.version, root.version);
    assert.equal(pkg.license, root.license);
    assert.deepEqual(pkg.exports['.'], {
      types: './mha-attention.d.ts',
      default: './mha-attention.js',
    });
    // The shipped contract is the repository's declaration file, byte for byte.
    assert.equal(
      await readFile(path.join(packed.app, 'node_modules', NPM_NAME, 'mha_wasm.d.ts'), 'utf8'),
      await readFile(path.join(ROOT, 'cpp/bindings/wasm/mha_wasm.d.ts'), 'utf8'),
    );
    // The bundle holds the element; the app's folder holds only what the docs list.
    assert.deepEqual((await readdir(path.join(packed.app, 'public'))).sort(), [
      'app.js',
      'date_model.js',
      'english_lm.js',
      'index.html',
      'mha_wasm.js',
      'mha_wasm_core.js',
    ]);
  });

  test('its types resolve through "exports" and name every attribute the element reads', () => {
    const good = `import '${NPM_NAME}';
import type { MhaAttentionAttributes, MhaAttentionElement } from '${NPM_NAME}';
import type { MhaCoreModule } from '${NPM_NAME}/types';
import createMhaCore from '${NPM_NAME}/mha_wasm_core.js';
import createMhaModule from '${NPM_NAME}/mha_wasm.js';
const el: MhaAttentionElement | null = document.querySelector('mha-attention');
el?.addEventListener('mha-error', (e) => e.detail.message.toUpperCase());
el?.addEventListener('mha-cell', (e) => e.detail.cell?.head);
const attrs: Required<MhaAttentionAttributes> = null!;
export const names: (keyof typeof attrs)[] = [];
export const core: Promise<MhaCoreModule> = createMhaCore();
export const full = createMhaModule().then((m) => m.DateModel);
`;
    assert.deepEqual(typeCheck(good), []);
    // The declared attributes are exactly the element's (attributes.js ATTRIBUTES).
    const keys = `import type { MhaAttentionAttribute } from '${NPM_NAME}';
export const all: Record<MhaAttentionAttribute, true> = {${ATTRIBUTES.map((a) => `'${a}': true`).join(', ')}};
`;
    assert.deepEqual(typeCheck(keys), []);
    // ...and a wrong one is an error (the check can fail).
    assert.match(
      typeCheck(`import type { MhaAttentionAttributes } from '${NPM_NAME}';
export const a: MhaAttentionAttributes = { theme: 'sepia' };
`).join('\n'),
      /'"sepia"' is not assignable/,
    );
  });

  for (const which of [0, 1]) {
    test(`the bundled app draws module 08 ${which === 0 ? 'served over http' : 'from file://'}, asking only its own folder`, () =>
      withCheckedPage(
        env.browser,
        env.servers.targets[which],
        '',
        async ({ page, requests }) => {
          const shown = await page.evaluate(() => {
            const root = document.getElementById('m08').shadowRoot;
            const row = (h, q) =>
              [
                ...root.querySelectorAll(`table[data-head="${h}"] tbody tr[data-row="${q}"] td`),
              ].map((td) => td.textContent);
            return {
              grids: root.querySelectorAll('canvas.heatmap').length,
              head0: row(0, 0),
              head1: row(1, 0),
              readout: root.querySelector('.readout').textContent,
            };
          });
          assert.deepEqual(shown, {
            grids: 2,
            head0: ['0.000', '0.000', '0.424', '0.576', '0.000'],
            head1: ['0.000', '0.000', '0.000', '0.000', '1.000'],
            readout: "head 0 · query 'Heads' → key 'at': 0.424 · locked",
          });
          const own = env.servers.targets[which];
          const files = requests
            .filter((u) => !u.startsWith('data:') && !u.startsWith('blob:'))
            .map((u) => {
              assert.ok(own.isOwn(u), `${u} is in the app's folder`);
              return new URL(u).pathname.split('/').pop() || 'index.html';
            });
          assert.deepEqual([...new Set(files)].sort(), [
            'app.js',
            'index.html',
            'mha_wasm_core.js',
          ]);
        },
        { ready: 'mha-attention[data-state="ready"]' },
      ));
  }
});
