// Every file of the repository that a comment or a document names exists: a path such as
// `web/src/chrome/share.js` or `tests/web/state.test.mjs` in a source file, a script, a test or a
// Markdown page (README.md, docs/) must name a file or folder of the tree. Paths of what the build
// writes (build/, dist/, node_modules) are not checked; neither are generated test data folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Folders not read: build output, packages, git, golden data and fuzz corpora (bytes, not prose). */
const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  'build',
  'dist',
  'test-results',
  'fixtures',
  'corpus',
  '__pycache__',
]);
/** Files read: source, scripts, tests and documents. */
const READ =
  /\.(c|cc|cpp|hpp|h|inc|js|mjs|cjs|py|sh|md|txt|html|css|wat|cff|yml|yaml)$|^(CMakeLists\.txt|run)$/;

/**
 * A repository path: one of the top folders, then a file name with an extension. Not preceded by
 * a word character, "/" or "." (so "mkdocs/docs/index.md", an example site's file, is not one).
 */
const PATH =
  /(?<![\w./-])(?:cpp|web|scripts|tests|docs)\/[\w./-]*\w\.(?:js|mjs|cjs|cpp|hpp|inc|py|md|sh|json|html|css|wat|safetensors|npy|txt)(?![\w-])/g;

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) yield* files(path.join(dir, e.name));
    } else if (e.isFile() && READ.test(e.name)) {
      yield path.join(dir, e.name);
    }
  }
}

test('every repository path named in a comment or a document exists', () => {
  const missing = [];
  let checked = 0;
  for (const file of files(ROOT)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const [p] of line.matchAll(PATH)) {
        if (p.split('/').includes('node_modules')) continue; // installed by npm
        checked++;
        if (!existsSync(path.join(ROOT, p)))
          missing.push(`${path.relative(ROOT, file)}:${i + 1} names ${p}`);
      }
    });
  }
  console.log(`${checked} repository paths checked`);
  assert.ok(checked > 500, `the scan found ${checked} paths: it reads the tree`);
  assert.deepEqual(missing, [], 'paths that name no file of the repository');
});

test('the scan catches a path that does not exist, and leaves example sites alone', () => {
  const found = (s) => [...s.matchAll(PATH)].map((m) => m[0]);
  const nope = ['tests', 'web', 'nope.test.mjs'].join('/'); // written apart, so this file names no missing path
  assert.deepEqual(found(`see web/src/chrome/share.js, and ${nope}.`), [
    'web/src/chrome/share.js',
    nope,
  ]);
  assert.deepEqual(
    found('<!-- site file: mkdocs/docs/index.md --> build/native/mha dist/app.js'),
    [],
  );
  assert.equal(existsSync(path.join(ROOT, nope)), false);
});
