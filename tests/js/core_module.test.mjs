// The page's core module (build/wasm/mha_wasm_core.js, createMhaCore) against the full module
// (build/wasm/mha_wasm.js, createMhaModule), which tests/js/wasm.test.mjs, bad_inputs.test.mjs and
// memory.test.mjs check against numpy and PyTorch: the same API minus the date model, head
// patterns and file loading (docs/js-api.md), and the
// same bits for every golden case, every error message, randn, positional encodings and
// parameter counts (the same C++ compiled into both). Run: node --test tests/js/
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, loadModule as load } from './module.mjs';

const fixture = (name) => JSON.parse(readFileSync(path.join(root, 'tests/fixtures', name), 'utf8'));

let core;
let full;
before(async () => {
  core = await load('mha_wasm_core.js');
  full = await load('mha_wasm.js');
});

const f32 = (t) => Float32Array.from(t.data, (x) => (x === '-inf' ? -Infinity : x));

/** Every own key of a result, with typed arrays as plain arrays: deepEqual compares bits. */
const plain = (r) =>
  Object.fromEntries(
    Object.entries(r).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v) : v]),
  );

/** The outcome of `call` as comparable data: its result, or its error's message. */
function outcome(call) {
  try {
    const r = call();
    return { ok: ArrayBuffer.isView(r) ? Array.from(r) : typeof r === 'object' ? plain(r) : r };
  } catch (e) {
    assert.ok(e instanceof Error, 'errors are JS Errors');
    return { error: e.message };
  }
}

test('the API: the full module is the core plus the date model, the English model and its tokenizer, head patterns and the head report card, and file loading', () => {
  // Emscripten's own exports (HEAP views, dynCall_* trampolines) are not the API.
  const api = (m) =>
    Object.keys(m)
      .filter(
        (k) =>
          /^[a-z]/i.test(k) &&
          !/^(HEAP|dynCall_)/.test(k) &&
          ['function', 'object', 'string'].includes(typeof m[k]),
      )
      .sort();
  for (const name of [
    'forward',
    'numpyExperiment',
    'parameterCount',
    'randn',
    'sinusoidalPositionalEncoding',
    'memoryStats',
    'MultiheadAttention',
    'limits',
    'version',
  ]) {
    assert.ok(name in core, `core has ${name}`);
  }
  assert.equal(core.DateModel, undefined, 'no date model in the core');
  assert.equal(core.EnglishModel, undefined, 'no English model in the core');
  assert.equal(typeof full.DateModel, 'function');
  const missing = api(full)
    .filter((k) => !(k in core))
    .sort();
  assert.deepEqual(
    missing,
    [
      'DateModel',
      'EnglishModel',
      'SubwordTokenizer',
      'ablationEffect',
      'attentionRollout',
      'byWordWeights',
      'explainCell',
      'headPatterns',
      'headReport',
      'englishTokenize',
      'jsDistance',
      'loadAttention',
      'loadMultiheadAttention',
      'loadNpy',
      'maxOverHeads',
      'meanOverHeads',
      'slidingWindowMask',
    ].sort(),
  );
  assert.deepEqual(core.limits, full.limits);
  assert.equal(core.version, full.version);
});

test('PyTorch golden cases: forward and MultiheadAttention give the same bits in both modules', () => {
  for (const c of fixture('torch_mha.json').cases) {
    const req = {
      d_model: c.d_model,
      num_heads: c.num_heads,
      kdim: c.kdim,
      vdim: c.vdim,
      n: c.n,
      query: f32(c.query),
      is_causal: c.is_causal,
    };
    if (!c.self_attention) Object.assign(req, { m: c.m, key: f32(c.key), value: f32(c.value) });
    for (const [name, t] of Object.entries(c.weights)) req[name] = f32(t);
    if (c.attn_mask)
      req.attn_mask =
        c.attn_mask.kind === 'bool' ? Uint8Array.from(c.attn_mask.data) : f32(c.attn_mask);
    if (c.key_padding_mask) {
      req.key_padding_mask =
        c.key_padding_mask.kind === 'float'
          ? f32(c.key_padding_mask)
          : Uint8Array.from(c.key_padding_mask);
    }
    const a = outcome(() => core.forward(req));
    assert.ok(a.ok, `${c.name}: ${a.error}`);
    assert.deepEqual(
      a,
      outcome(() => full.forward(req)),
      c.name,
    );
    // Float32 against the fixture as well (tolerance as in wasm.test.mjs: 1e-5 absolute).
    const w = core.forward(req).attn_weights;
    for (let i = 0; i < w.length; i++)
      assert.ok(Math.abs(w[i] - c.expected.attn_weights.data[i]) < 1e-5, c.name);
  }
});

test("numpyExperiment: module 08's numbers and every numpy golden case, bit for bit in both", () => {
  const r = core.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  assert.deepEqual(
    Array.from(r.attn_weights.subarray(0, 5), (x) => x.toFixed(3)),
    ['0.000', '0.000', '0.424', '0.576', '0.000'],
  );
  assert.deepEqual(
    Array.from(r.attn_weights.subarray(25, 30), (x) => x.toFixed(3)),
    ['0.000', '0.000', '0.000', '0.000', '1.000'],
  );
  for (const c of fixture('numpy_mha.json').cases) {
    const req = { seed: c.seed, tokens: c.n, d_model: c.d_model, num_heads: c.num_heads };
    for (const extra of [
      {},
      { positional: true, is_causal: true },
      { keep_intermediates: false },
    ]) {
      assert.deepEqual(
        outcome(() => core.numpyExperiment({ ...req, ...extra })),
        outcome(() => full.numpyExperiment({ ...req, ...extra })),
        `${c.name} ${JSON.stringify(extra)}`,
      );
    }
  }
});

test('randn, positional encodings, parameter counts and error messages agree', () => {
  for (const s of fixture('numpy_random.json').streams) {
    assert.deepEqual(
      outcome(() => core.randn(s.seed, s.randn.length)),
      outcome(() => full.randn(s.seed, s.randn.length)),
    );
  }
  assert.deepEqual(
    outcome(() => core.sinusoidalPositionalEncoding(7, 12)),
    outcome(() => full.sinusoidalPositionalEncoding(7, 12)),
  );
  for (const c of fixture('param_counts.json').counts) {
    const req = {
      d_model: c.d_model,
      num_heads: c.num_heads,
      kdim: c.kdim,
      vdim: c.vdim,
      bias: c.bias,
    };
    assert.equal(core.parameterCount(req), c.count);
  }
  const good = { seed: 7, tokens: 5, d_model: 8, num_heads: 2 };
  const bad = [
    { ...good, d_model: 10, num_heads: 3 },
    { ...good, num_heads: 0 },
    { ...good, num_heads: 2.5 },
    { ...good, num_heads: NaN },
    { ...good, num_heads: Infinity },
    { ...good, tokens: 5000 },
    { ...good, d_model: 8192, num_heads: 8 },
    { ...good, seed: 'x' },
    { ...good, casual: true },
    null,
  ];
  for (const req of bad) {
    const a = outcome(() => core.numpyExperiment(req));
    assert.ok(a.error, JSON.stringify(req));
    assert.deepEqual(
      a,
      outcome(() => full.numpyExperiment(req)),
    );
    assert.equal(core.numpyExperiment(good).attn_weights[2].toFixed(3), '0.424', 'keeps working');
  }
  assert.deepEqual(
    outcome(() => core.numpyExperiment({ ...good, num_heads: 2.5 })),
    { error: 'num_heads=2.5 must be an integer' },
  );
  assert.match(
    outcome(() => core.numpyExperiment({ ...good, d_model: 10, num_heads: 3 })).error,
    /^d_model=10 is not divisible by num_heads=3 \(each head needs d_model \/ num_heads columns; valid num_heads for d_model=10: 1 2 5 10\)$/,
  );
});

/** The section ids of the wasm inlined in build/wasm/<file> (SINGLE_FILE: a base64 data URI). */
function wasmSections(file) {
  const glue = readFileSync(path.join(root, 'build/wasm', file), 'utf8');
  const uri = /data:application\/octet-stream;base64,([A-Za-z0-9+/=]+)/.exec(glue);
  assert.ok(uri, `${file} inlines its wasm as a base64 data URI`);
  const bytes = Buffer.from(uri[1], 'base64');
  assert.deepEqual([...bytes.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d], 'wasm magic');
  const ids = [];
  let p = 8;
  const leb = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[p++];
      value += (byte & 0x7f) * 2 ** shift;
      if (!(byte & 0x80)) return value;
    }
  };
  while (p < bytes.length) {
    ids.push(bytes[p++]);
    const size = leb(); // read before p is added to: leb() moves p past the size
    p += size;
  }
  assert.equal(p, bytes.length, 'the sections end with the module');
  return ids;
}

test('both modules use WebAssembly exception handling (-fwasm-exceptions), not the JS emulation', () => {
  // A tag section (id 13) declares the C++ exception's tag; Emscripten's JS emulation
  // (-fexceptions) has none and routes calls that may throw through JS trampolines (invoke_*),
  // which cost the core's script 62 KB and a wasm → JS → wasm round trip each (CMakeLists.txt).
  for (const file of ['mha_wasm_core.js', 'mha_wasm.js']) {
    assert.ok(wasmSections(file).includes(13), `${file} has a tag section`);
    assert.doesNotMatch(
      readFileSync(path.join(root, 'build/wasm', file), 'utf8'),
      /invoke_/,
      `${file}: no trampolines`,
    );
  }
  // And a C++ exception still reaches JS as an Error naming the values, the module working after.
  assert.throws(
    () => core.parameterCount({ d_model: 10, num_heads: 3 }),
    /d_model=10 is not divisible by num_heads=3/,
  );
  assert.equal(core.parameterCount({ d_model: 8, num_heads: 2 }), 4 * 8 * 8); // Wq, Wk, Wv, Wo
});
