// What the node tests here share: a wasm module of build/wasm (by default the full one,
// mha_wasm.js), the repository's files and golden fixtures, and the largest difference of two arrays.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repository's root folder. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A fresh instance of build/wasm/<file>; fails with a hint when it has not been built.
 * @param {string} [file] 'mha_wasm.js' (createMhaModule) or 'mha_wasm_core.js' (createMhaCore)
 */
export async function loadModule(file = 'mha_wasm.js') {
  const modulePath = path.join(root, 'build/wasm', file);
  assert.ok(existsSync(modulePath), `${modulePath} is missing: run ./scripts/build.sh first`);
  const mod = await createRequire(import.meta.url)(modulePath)();
  // tests/js/relaxed_simd.test.mjs reruns suites with the relaxed-SIMD kernel and says which.
  const expected = process.env.MHA_EXPECT_GEMM_KERNEL;
  if (expected)
    assert.equal(mod.gemmKernel, expected, `GEMM kernel of ${file} (${mod.gemmKernelError ?? ''})`);
  return mod;
}

/** tests/fixtures/`name` parsed as JSON. */
export function fixture(name) {
  return JSON.parse(readFileSync(path.join(root, 'tests/fixtures', name), 'utf8'));
}

/** The bytes of the repository's file `rel` (e.g. 'web/date_model.safetensors'). */
export function repoBytes(rel) {
  return new Uint8Array(readFileSync(path.join(root, rel)));
}

/** Largest |actual[i] - expected[i]| over two arrays of equal length. */
export function maxAbsDiff(actual, expected) {
  assert.equal(actual.length, expected.length, 'lengths differ');
  let worst = 0;
  for (let i = 0; i < actual.length; i++)
    worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
  return worst;
}
