// The project's one version number: the file VERSION, which CMake's project(VERSION), the wheel
// (pyproject.toml's dynamic version) and mha_lab.__version__ (compiled into the module _core:
// tests/python/test_install.py) read, and which package.json (so the element's npm package too:
// scripts/pack_npm.mjs takes its version) and CITATION.cff repeat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The text of a repository file. */
const read = (name) => readFileSync(path.join(ROOT, name), 'utf8');
const VERSION = read('VERSION').trim();

test('VERSION holds one semantic version and nothing else', () => {
  assert.match(read('VERSION'), /^\d+\.\d+\.\d+\n$/);
});

test('package.json and CITATION.cff carry the version of VERSION', () => {
  assert.equal(JSON.parse(read('package.json')).version, VERSION);
  const cff = read('CITATION.cff').match(/^version:\s*"?([^"\s]+)"?\s*$/m);
  assert.ok(cff, 'CITATION.cff has no version: line');
  assert.equal(cff[1], VERSION);
});

test('CMake and the wheel read VERSION instead of writing a number of their own', () => {
  const cmake = read('CMakeLists.txt');
  assert.match(cmake, /file\(STRINGS "\$\{CMAKE_CURRENT_SOURCE_DIR\}\/VERSION" MHA_VERSION/);
  assert.match(cmake, /^project\(mha_lab VERSION \$\{MHA_VERSION\} /m);
  const pyproject = read('pyproject.toml');
  assert.match(pyproject, /^dynamic = \["version"\]$/m);
  assert.match(pyproject, /^version = \{ file = "VERSION" \}$/m);
  assert.doesNotMatch(pyproject, /^version = "/m);
});
