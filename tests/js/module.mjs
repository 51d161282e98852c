// Loads a wasm module of build/wasm (by default the full one, mha_wasm.js) for the node tests here.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
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
  if (expected) assert.equal(mod.gemmKernel, expected, `GEMM kernel of ${file} (${mod.gemmKernelError ?? ''})`);
  return mod;
}
