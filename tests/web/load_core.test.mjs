import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore } from '../../web/src/load_core.js';

test('data: fetches are refused while the core starts; other fetches pass; fetch is restored', async () => {
  const calls = [];
  const scope = { fetch: async (u) => { calls.push(u); return 'real'; } };
  const original = scope.fetch;
  let dataResult;
  let httpResult;
  const mod = await loadCore(async () => {
    dataResult = await scope.fetch('data:application/octet-stream;base64,AGFzbQ==').catch((e) => e);
    httpResult = await scope.fetch('http://127.0.0.1/x');
    return { version: 'test' };
  }, scope);
  assert.deepEqual(mod, { version: 'test' });
  assert.ok(dataResult instanceof TypeError);
  assert.equal(httpResult, 'real');
  assert.deepEqual(calls, ['http://127.0.0.1/x']);
  assert.equal(scope.fetch, original);
});

test('the real fetch comes back when the core fails to start', async () => {
  const scope = { fetch: () => 'real' };
  const original = scope.fetch;
  await assert.rejects(loadCore(() => Promise.reject(new Error('boom')), scope), /boom/);
  assert.equal(scope.fetch, original);
});

test('the real wasm glue, if built, starts under node through loadCore', async (t) => {
  const { createRequire } = await import('node:module');
  const { existsSync } = await import('node:fs');
  const glue = new URL('../../build/wasm/mha_wasm.js', import.meta.url);
  if (!existsSync(glue)) return t.skip('build/wasm/mha_wasm.js not built');
  const factory = createRequire(import.meta.url)(glue.pathname);
  const mod = await loadCore(factory);
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  const row = (h) => Array.from(r.attn_weights.slice(h * 25, h * 25 + 5), (w) => w.toFixed(3));
  assert.deepEqual(row(0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
  assert.deepEqual(row(1), ['0.000', '0.000', '0.000', '0.000', '1.000']);
});
