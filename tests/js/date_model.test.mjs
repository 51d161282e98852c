// The date model through the wasm module under node: loading the shipped file, agreement
// with PyTorch's golden cases (logits 1e-3, attention 1e-4 absolute), exact match on the 2000
// held-out dates (>= 99.5%), ablation, and errors as JS Errors. Run: node --test tests/js/
// Needs build/wasm/mha_wasm.js (./scripts/build.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fixture, loadModule, maxAbsDiff, repoBytes } from './module.mjs';
import { checkAttention } from './model_checks.mjs';

const modelBytes = () => repoBytes('web/date_model.safetensors');

let mod;
let model;
before(async () => {
  mod = await loadModule();
  model = new mod.DateModel(modelBytes());
});
after(() => model?.delete());

/** Per-layer Float32Arrays concatenated, as the golden (L, h, rows, cols) tensor is flat. */
const concat = (arrays) => {
  const out = new Float32Array(arrays.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.length;
  }
  return out;
};

test('the shipped model loads: config, vocab, limit, checksum', () => {
  const golden = fixture('date_model_golden.json');
  assert.deepEqual(model.config, golden.config);
  assert.deepEqual(model.vocab, golden.vocab);
  assert.equal(model.maxSourceLength, golden.config.max_source_len);
  assert.equal(model.checksum, golden.model_xxh64);
  // An ArrayBuffer works too.
  const again = new mod.DateModel(modelBytes().buffer);
  assert.equal(again.translate('Nov 30, 2026').output, model.translate('Nov 30, 2026').output);
  again.delete();
});

test('golden cases: greedy output, logits within 1e-3, every attention weight within 1e-4', () => {
  const { cases } = fixture('date_model_golden.json');
  let worstLogits = 0;
  let worstWeights = 0;
  for (const c of cases) {
    const r = model.translate(c.input, { logits: true });
    assert.equal(r.output, c.output, c.input);
    const S = c.source_ids.length;
    const T = c.decoder_input_ids.length;
    const h = r.num_heads;
    assert.equal(r.source_tokens.length, S);
    assert.equal(r.source_length, S);
    assert.equal(r.steps, T);
    assert.deepEqual(
      r.output_tokens.slice(0, c.output_ids.length),
      c.output_ids.map((i) => model.vocab[i]),
    );
    assert.equal(r.logits.length, T * model.vocab.length);
    worstLogits = Math.max(worstLogits, maxAbsDiff(r.logits, c.logits.data));
    assert.equal(r.encoder_self.length, r.num_encoder_layers);
    assert.equal(r.cross.length, r.num_decoder_layers);
    assert.equal(r.encoder_self[0].length, h * S * S);
    assert.equal(r.decoder_self[0].length, h * T * T);
    assert.equal(r.cross[0].length, h * T * S);
    for (const kind of ['encoder_self', 'decoder_self', 'cross']) {
      worstWeights = Math.max(worstWeights, maxAbsDiff(concat(r[kind]), c.attention[kind].data));
    }
  }
  console.log(
    `# wasm vs PyTorch: max |logit diff| ${worstLogits.toExponential(3)}, ` +
      `max |attention diff| ${worstWeights.toExponential(3)}`,
  );
  assert.ok(worstLogits <= 1e-3, `logits differ by ${worstLogits}`);
  assert.ok(worstWeights <= 1e-4, `attention weights differ by ${worstWeights}`);
});

test('held-out dates: exact match >= 99.5% in the wasm module', () => {
  const { examples, model_xxh64: xxh } = fixture('date_heldout.json');
  assert.equal(xxh, model.checksum, 'held-out file and model come from different runs');
  assert.equal(examples.length, 2000);
  const start = performance.now();
  let correct = 0;
  let samePyTorch = 0;
  const perFormat = {};
  for (const e of examples) {
    const { output } = model.translate(e.input);
    const f = (perFormat[e.format] ??= { n: 0, correct: 0 });
    f.n += 1;
    if (output === e.target) {
      correct += 1;
      f.correct += 1;
    }
    if (output === e.torch_output) samePyTorch += 1;
  }
  const seconds = (performance.now() - start) / 1000;
  const accuracy = correct / examples.length;
  console.log(
    `# wasm exact match ${correct}/${examples.length} = ${accuracy.toFixed(4)} ` +
      `in ${seconds.toFixed(2)} s (${((1000 * seconds) / examples.length).toFixed(2)} ms per date); ` +
      `${samePyTorch} outputs equal PyTorch's`,
  );
  for (const [name, f] of Object.entries(perFormat))
    console.log(`#   ${name}: ${f.correct}/${f.n}`);
  assert.ok(accuracy >= 0.995, `exact match ${accuracy} < 0.995`);
  assert.ok(samePyTorch >= examples.length - 2);
});

test('ablation: a head switched off keeps its weights, changes what follows', () => {
  const base = model.translate('Nov 30, 2026');
  const off = model.translate('Nov 30, 2026', {
    ablated: [{ kind: 'encoder_self', layer: 0, head: 0 }],
  });
  assert.deepEqual(off.encoder_self[0], base.encoder_self[0]);
  assert.ok(maxAbsDiff(off.encoder_self[1], base.encoder_self[1]) > 1e-6);
  const all = [];
  for (const kind of ['encoder_self', 'decoder_self', 'cross']) {
    for (let layer = 0; layer < 2; layer++) {
      for (let head = 0; head < base.num_heads; head++) all.push({ kind, layer, head });
    }
  }
  const none = model.translate('Nov 30, 2026', { ablated: all }); // runs, whatever it says
  assert.equal(typeof none.output, 'string');
});

test('attention: one entry per stack (encoder, decoder, cross), the very arrays of the result', () => {
  const r = model.translate('Nov 30, 2026', { logits: true });
  const S = r.source_length;
  const T = r.steps;
  assert.equal(S, 'Nov 30, 2026'.length);
  assert.equal(T, r.output_tokens.length);
  const entries = (kind, arrays, queries, keys) =>
    arrays.map((weights, layer) => ({ kind, layer, queries, keys, weights }));
  const expected = [
    ...entries('encoder_self', r.encoder_self, S, S),
    ...entries('decoder_self', r.decoder_self, T, T),
    ...entries('cross', r.cross, T, S),
  ];
  assert.equal(expected.length, r.num_encoder_layers + 2 * r.num_decoder_layers);
  checkAttention(r.attention, expected, r.num_heads);
  r.attention.forEach((a, k) => assert.equal(a.weights, expected[k].weights)); // the same objects
  // The decoder's first step sees only itself: weight 1 in every head.
  const dec = r.attention.find((a) => a.kind === 'decoder_self');
  for (let head = 0; head < r.num_heads; head++) assert.equal(dec.weights[head * T * T], 1);
});

test('errors are JS Errors with the message; the model keeps working', () => {
  const limit = model.maxSourceLength;
  assert.throws(() => model.translate('1'.repeat(limit + 20)), {
    message: `input has ${limit + 20} characters, the model reads at most ${limit}`,
  });
  assert.throws(() => model.translate(''), { message: /input is empty/ });
  assert.throws(() => model.translate(42), {
    message: 'translate(text): text must be a string, got a number',
  });
  assert.throws(() => model.translate('bad \uD800'), {
    message: 'text is not valid Unicode: a lone surrogate at index 4',
  });
  assert.throws(() => model.translate('x', 'logits'), {
    message: 'translate(text, options) must be an object of named fields, got string',
  });
  assert.throws(() => model.translate('x', { logit: true }), {
    message: /^unknown key 'logit' in translate\(text, options\) \(known keys: ablated, logits\)$/,
  });
  assert.throws(() => model.translate('x', { ablated: [{ kind: 'cross', layer: '0', head: 0 }] }), {
    message: 'ablated[0]: layer must be a number, got a string',
  });
  assert.throws(() => model.translate('x', { ablated: [{ kind: 'cros', layer: 0, head: 0 }] }), {
    message: /ablated\[0\]: attention kind "cros" is not one of/,
  });
  assert.throws(() => model.translate('x', { ablated: [{ kind: 'cross', layer: 7, head: 0 }] }), {
    message: /layer 7 of cross is outside \[0, 2\)/,
  });
  assert.throws(() => model.translate('x', { ablated: 'cross' }), {
    message: /ablated must be an array/,
  });
  assert.throws(() => new mod.DateModel('not bytes'), { message: /Uint8Array or ArrayBuffer/ });
  assert.throws(() => new mod.DateModel(new Uint8Array(3)), { message: /truncated file/ });
  const broken = modelBytes();
  broken[broken.length - 1] ^= 1;
  assert.throws(() => new mod.DateModel(broken), {
    message:
      /^checksum mismatch: the metadata says xxh64 [0-9a-f]{16}, the data section hashes to [0-9a-f]{16}$/,
  });
  // Odd input still runs: a model, not a parser.
  const odd = model.translate('hello wörld');
  assert.equal(odd.source_tokens.length, 11);
  assert.equal(odd.source_tokens[7], 'ö');
  assert.equal(model.translate('Nov 30, 2026').input, 'Nov 30, 2026');
});

test('memory: 300 translations with weights and logits do not grow malloc', () => {
  model.translate('Nov 30, 2026', { logits: true });
  const before = mod.memoryStats().malloc_in_use_bytes;
  for (let i = 0; i < 300; i++)
    model.translate(`${(i % 28) + 1} March 19${i % 100}`, { logits: true });
  const grown = mod.memoryStats().malloc_in_use_bytes - before;
  assert.ok(grown < 64 * 1024, `malloc in use grew by ${grown} bytes`);
});
