// Leaks through the JS API: 10,000 create/forward/destroy cycles (with one-shot calls and errors
// mixed in) leave the wasm allocator where it started, and linear memory does not keep growing.
// mod.memoryStats() reads mallinfo() inside the module (docs/js-api.md). Results kept across wasm
// memory growth: tests/js/wasm.test.mjs ('outputs are copies ...').
// Run: node --test tests/js/   (needs build/wasm/mha_wasm.js: ./scripts/build.sh)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadModule } from './module.mjs';

const CYCLES = 10_000;
const MB = 1 << 20;

const d = 8;
const h = 2;
const n = 5;
const values = (length, seed) =>
  Float32Array.from({ length }, (_, i) => Math.sin(i * 0.7 + seed) * 0.5);
const SPEC = {
  d_model: d,
  num_heads: h,
  in_proj_weight: values(3 * d * d, 1),
  in_proj_bias: values(3 * d, 2),
  out_proj_weight: values(d * d, 3),
  out_proj_bias: values(d, 4),
};
const INPUT = {
  n,
  query: values(n * d, 5),
  attn_mask: Uint8Array.from({ length: n * n }, (_, i) => (i % 7 === 3 ? 1 : 0)),
};

/** One cycle: a layer created, used twice, deleted; a one-shot forward; every 10th cycle an error
 *  from each entry point (constructor, layer.forward, forward, numpyExperiment). */
function cycle(mod, i, expected) {
  const layer = new mod.MultiheadAttention(SPEC);
  try {
    const r = layer.forward(INPUT);
    if (i % 1000 === 0) assert.deepEqual(r.attn_weights, expected.attn_weights, `cycle ${i}`);
    layer.forward({ ...INPUT, keep_intermediates: false, is_causal: true });
    if (i % 10 === 0)
      assert.throws(() => layer.forward({ n, query: values(n * d - 1, 5) }), /query has 39 values/);
  } finally {
    layer.delete();
  }
  const once = mod.forward({ ...SPEC, ...INPUT, keep_intermediates: i % 2 === 0 });
  if (i % 1000 === 0) assert.deepEqual(once.output, expected.output, `cycle ${i}`);
  if (i % 10 === 0) {
    assert.throws(() => new mod.MultiheadAttention({ ...SPEC, num_heads: 3 }), /not divisible/);
    assert.throws(
      () => mod.forward({ ...SPEC, ...INPUT, attn_mask: new Float32Array(n * n).fill(NaN) }),
      /attn_mask holds NaN/,
    );
    assert.throws(
      () => new mod.MultiheadAttention({ ...SPEC, out_proj_weight: values(d * d + 1, 3) }),
      /out_proj_weight has 65/,
    );
    assert.throws(
      () => mod.numpyExperiment({ seed: 1, tokens: 4097, d_model: 8, num_heads: 2 }),
      /tokens=4097/,
    );
  }
  if (i % 100 === 0)
    mod.numpyExperiment({ seed: i, tokens: 6, d_model: 8, num_heads: 4, positional: true });
}

test(`${CYCLES} create/forward/destroy cycles leave the wasm heap within 1 MB of where it started`, {
  timeout: 120_000,
}, async () => {
  const mod = await loadModule();
  const layer = new mod.MultiheadAttention(SPEC);
  const expected = layer.forward(INPUT);
  layer.delete();
  // Warm-up: first calls allocate Embind's and the allocator's own bookkeeping once.
  for (let i = 0; i < 200; i++) cycle(mod, i, expected);
  const start = mod.memoryStats();
  const t0 = performance.now();
  for (let i = 0; i < CYCLES; i++) cycle(mod, i, expected);
  const ms = performance.now() - t0;
  const end = mod.memoryStats();
  console.log(
    `# ${CYCLES} cycles in ${(ms / 1000).toFixed(1)} s: malloc in use ${start.malloc_in_use_bytes} → ` +
      `${end.malloc_in_use_bytes} bytes; wasm memory ${start.wasm_memory_bytes} → ${end.wasm_memory_bytes} bytes`,
  );
  assert.ok(
    Math.abs(end.malloc_in_use_bytes - start.malloc_in_use_bytes) <= MB,
    `malloc in use ${start.malloc_in_use_bytes} → ${end.malloc_in_use_bytes}`,
  );
  assert.equal(end.wasm_memory_bytes, start.wasm_memory_bytes, 'linear memory did not grow');
});

test('the leak check sees a leak: layers that are never deleted show up in memoryStats', async () => {
  // The control for the test above: without .delete(), each layer keeps its weights
  // (4 * 8 * 8 + 4 * 8 floats plus bookkeeping, about 1.2 kB) in wasm memory.
  const mod = await loadModule();
  const start = mod.memoryStats().malloc_in_use_bytes;
  const kept = Array.from({ length: 1000 }, () => new mod.MultiheadAttention(SPEC));
  const held = mod.memoryStats().malloc_in_use_bytes - start;
  assert.ok(held >= 1000 * (4 * d * d + 4 * d) * 4, `1000 live layers hold ${held} bytes`);
  for (const layer of kept) layer.delete();
  assert.ok(mod.memoryStats().malloc_in_use_bytes - start <= 1024, 'all returned after delete()');
});
