// The relaxed-SIMD micro-kernel (cpp/bindings/wasm/relaxed_simd.wat, installed by the generated
// relaxed_simd.js): the committed post-js is the .wat's assembly; each module names the kernel it
// runs; and the suites that compare the wasm forward with PyTorch's and numpy's goldens
// (wasm.test.mjs), with a float64 loop reference across the GEMM's blocks (kernels.test.mjs) and
// between the page's two roads (precision.test.mjs, core_module.test.mjs) pass again with the
// fused kernel, in a node that has relaxed SIMD (node 20: --experimental-wasm-relaxed-simd;
// Chromium has it by default: tests/browser/page.test.mjs). Their tolerances are theirs: weights
// 1e-5 absolute, outputs 1e-5 relative and 1e-4 against PyTorch. Run: node --test tests/js/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { assembleKernel, postJs, POST_JS } from '../../scripts/codegen/gen_relaxed_simd.mjs';
import { root, loadModule } from './module.mjs';

const run = promisify(execFile);

const relaxedInNode = async () => WebAssembly.validate(await assembleKernel());

test('relaxed_simd.js is relaxed_simd.wat assembled (node scripts/codegen/gen_relaxed_simd.mjs regenerates it)', async () => {
  const bytes = await assembleKernel();
  assert.equal(await readFile(POST_JS, 'utf8'), postJs(bytes));
  assert.ok(bytes.length < 1024, `${bytes.length} bytes: the kernel alone`);
});

test('each module names its GEMM kernel: the fused one exactly where this engine validates relaxed SIMD', async () => {
  const expected = (await relaxedInNode()) ? 'relaxed_madd' : 'simd128';
  for (const file of ['mha_wasm_core.js', 'mha_wasm.js']) {
    const mod = await loadModule(file);
    assert.equal(mod.gemmKernel, expected, file);
    assert.equal(mod.gemmKernelError, undefined, file);
  }
});

/** Runs node's test runner on `files` in a child node with `flags`; its summary, or its failure. */
async function suites(flags, files, env) {
  try {
    // NODE_TEST_CONTEXT would make the child report to this runner instead of printing TAP.
    const { NODE_TEST_CONTEXT, ...inherited } = process.env;
    const { stdout } = await run(
      process.execPath,
      [...flags, '--test', '--test-reporter=tap', ...files],
      {
        cwd: root,
        env: { ...inherited, ...env },
        maxBuffer: 64 << 20,
        timeout: 300000,
      },
    );
    return stdout;
  } catch (e) {
    assert.fail(
      `node ${flags.join(' ')} --test ${files.join(' ')} failed (${e.code}):\n${String(e.stdout).slice(-4000)}\n${e.stderr}`,
    );
  }
}

const SUITES = ['kernels', 'wasm', 'precision', 'core_module'].map((f) =>
  path.join('tests', 'js', `${f}.test.mjs`),
);

test('with relaxed SIMD, the forward passes the golden, reference and two-road suites on the fused kernel', async () => {
  // node 20 ships relaxed SIMD behind a flag; a node that has it by default needs none.
  const flags = (await relaxedInNode()) ? [] : ['--experimental-wasm-relaxed-simd'];
  const out = await suites(flags, SUITES, { MHA_EXPECT_GEMM_KERNEL: 'relaxed_madd' });
  const count = (name) => Number(out.match(new RegExp(`^# ${name} (\\d+)`, 'm'))?.[1]);
  assert.equal(count('fail'), 0);
  assert.ok(count('pass') >= 20, `${count('pass')} tests passed`);
});

test('{relaxedSimd: false} keeps the multiply-then-add kernel even where relaxed SIMD exists', async () => {
  const script = `require(${JSON.stringify(path.join(root, 'build/wasm/mha_wasm_core.js'))})({relaxedSimd: false})
    .then((m) => console.log(m.gemmKernel))`;
  const flags = (await relaxedInNode()) ? [] : ['--experimental-wasm-relaxed-simd'];
  const { stdout } = await run(process.execPath, [...flags, '-e', script], { cwd: root });
  assert.equal(stdout.trim(), 'simd128');
});
