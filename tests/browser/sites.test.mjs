// The course-site examples of docs/embedding.md ("Course sites: MkDocs and Sphinx with MyST"),
// read from the document itself (each fenced block after a `<!-- site file: PATH -->` line),
// built with Debian's mkdocs and sphinx-build, and opened from file:// in Chromium under their
// strict Content-Security-Policy with every request outside the built site refused: the element
// draws module 08 and its locked cell; the only policy violations are the themes' own inline
// code, never the element's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, DIST, assertPrerequisites, launchBrowser } from './helpers.mjs';

const TIMEOUT = 240_000;

let browser;
let dir;

before(async () => {
  assertPrerequisites();
  dir = await mkdtemp(path.join(os.tmpdir(), 'mha-sites-'));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The example files of docs/embedding.md: {path: text}. */
async function exampleFiles() {
  const doc = await readFile(path.join(ROOT, 'docs', 'embedding.md'), 'utf8');
  const files = {};
  for (const m of doc.matchAll(/<!-- site file: (\S+) -->\n```[a-z]*\n([\s\S]*?)\n```/g))
    files[m[1]] = `${m[2]}\n`;
  return files;
}

/** Writes the site `name` (mkdocs | sphinx) from the document, with the element's two files in `assets`. */
async function writeSite(name, assets) {
  const files = await exampleFiles();
  const root = path.join(dir, name);
  const own = Object.entries(files).filter(([p]) => p.startsWith(`${name}/`));
  assert.ok(own.length >= 2, `docs/embedding.md holds the ${name} example`);
  for (const [p, text] of own) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), text);
  }
  await mkdir(path.join(root, assets), { recursive: true });
  for (const f of ['mha-attention.js', 'mha_wasm_core.js'])
    await copyFile(path.join(DIST, f), path.join(root, assets, f));
  return root;
}

function run(cmd, args, cwd) {
  const p = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  assert.equal(p.status, 0, `${cmd} ${args.join(' ')} failed:\n${p.stdout}\n${p.stderr}`);
}

/** Opens `index` from file://, refusing everything outside `siteDir`; checks the element. */
async function checkSite(siteDir, index) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const base = `${pathToFileURL(siteDir).href}/`;
  const refused = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(base)) return route.continue();
    refused.push(u);
    return route.abort('blockedbyclient');
  });
  await context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__violations.push({
        directive: e.violatedDirective,
        blocked: e.blockedURI,
        source: e.sourceFile,
        sample: e.sample,
      });
    });
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  try {
    await page.goto(pathToFileURL(path.join(siteDir, index)).href);
    await page.waitForFunction(
      () => document.getElementById('m08')?.dataset.state === 'ready',
      null,
      { timeout: 60_000 },
    );
    const row = await page.evaluate(() =>
      [
        ...document
          .getElementById('m08')
          .shadowRoot.querySelectorAll('table[data-head="0"] tbody tr[data-row="0"] td'),
      ].map((td) => td.textContent),
    );
    assert.deepEqual(row, ['0.000', '0.000', '0.424', '0.576', '0.000']);
    const readout = await page.evaluate(
      () => document.getElementById('m08').shadowRoot.querySelector('.readout').textContent,
    );
    assert.equal(readout, "head 0 · query 'Heads' → key 'at': 0.424 · locked");
    assert.ok(
      await page.evaluate(
        () => !!document.querySelector('meta[http-equiv="Content-Security-Policy"]'),
      ),
      'the policy is in the page',
    );
    assert.deepEqual(refused, [], 'no request outside the site');
    const violations = await page.evaluate(() => window.__violations);
    // Only the themes' inline code is refused; nothing of the element (its files, its styles).
    for (const v of violations) assert.equal(v.blocked, 'inline', JSON.stringify(v));
    assert.deepEqual(
      errors.filter((e) => /mha|attention|wasm/i.test(e)),
      [],
    );
    return violations;
  } finally {
    await context.close();
  }
}

test('the MkDocs example of docs/embedding.md builds and draws under its CSP', {
  timeout: TIMEOUT,
}, async () => {
  const root = await writeSite('mkdocs', 'docs/mha');
  run('mkdocs', ['build', '--quiet', '--site-dir', path.join(root, 'site')], root);
  const violations = await checkSite(path.join(root, 'site'), 'index.html');
  console.log(
    `mkdocs: theme's inline code refused: ${violations.map((v) => v.directive).join(', ') || 'none'}`,
  );
});

test('the Sphinx + MyST example of docs/embedding.md builds and draws under its CSP', {
  timeout: TIMEOUT,
}, async () => {
  const root = await writeSite('sphinx', '_static/mha');
  run('sphinx-build', ['-q', '-W', '-b', 'html', '.', '_build/html'], root);
  const violations = await checkSite(path.join(root, '_build', 'html'), 'index.html');
  console.log(
    `sphinx: theme's inline code refused: ${violations.map((v) => v.directive).join(', ') || 'none'}`,
  );
});
