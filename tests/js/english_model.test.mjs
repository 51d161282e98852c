// The English language model through the wasm module under node: run() on the two tiny models
// against PyTorch's golden data (tests/fixtures/english_lm_golden_tiny.json; ids and tokens
// exactly, attention weights within 1e-4 absolute, nextTokenLogprob within 1e-3 absolute,
// perplexity within 1e-3 relative, probabilities within 1e-4 absolute), the trained model when
// web/english_lm.safetensors and its golden file exist, englishTokenize against the page's own
// tokenize(), and errors as JS Errors after which the module keeps working.
// Run: node --test tests/js/   Needs build/wasm/mha_wasm.js (./scripts/build.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { root, fixture, loadModule, maxAbsDiff, repoBytes as bytesOf } from './module.mjs';
import { checkAttention } from './model_checks.mjs';
import { tokenize } from '../../web/src/chrome/tokenize.js';

const TINY = 'tests/fixtures/english_lm_tiny_relbias_mlp.safetensors';

let mod;
let tiny;
before(async () => {
  mod = await loadModule();
  tiny = new mod.EnglishModel(bytesOf(TINY));
});
after(() => tiny?.delete());

function checkGolden(doc) {
  const models = {};
  for (const [key, entry] of Object.entries(doc.models)) {
    models[key] = new mod.EnglishModel(bytesOf(entry.file));
    assert.equal(models[key].checksum, entry.xxh64);
    assert.deepEqual(models[key].vocab, entry.vocab);
    const config = models[key].config;
    for (const k of [
      'd_model',
      'num_heads',
      'num_layers',
      'dim_feedforward',
      'vocab_size',
      'max_len',
    ]) {
      assert.equal(config[k], entry.config[k], k);
    }
  }
  try {
    for (const c of doc.cases) {
      const r = models[c.model].run(c.text, { top: 5, ablate: c.ablate });
      const what = `${c.model}: ${JSON.stringify(c.text)}`;
      assert.deepEqual(r.ids, c.ids, what);
      assert.deepEqual(r.tokens, c.tokens, what);
      assert.deepEqual(r.words, c.words, what);
      assert.deepEqual(Array.from(r.wordIndex), c.word_index, what);
      assert.ok(r.wordIndex instanceof Int32Array);
      assert.deepEqual(r.unknown, c.unknown, what);
      assert.equal(r.truncatedTokens, c.truncated_tokens, what);
      assert.equal(r.n, c.ids.length);
      assert.equal(r.layers, c.attn_weights.shape[0]);
      assert.equal(r.heads, c.attn_weights.shape[1]);
      assert.ok(r.attnWeights instanceof Float32Array);
      assert.ok(maxAbsDiff(r.attnWeights, c.attn_weights.data) <= 1e-4, what);
      assert.ok(r.nextTokenLogprob instanceof Float64Array);
      assert.ok(maxAbsDiff(r.nextTokenLogprob, c.next_token_logprob) <= 1e-3, what);
      if (c.perplexity === null) assert.equal(r.perplexity, null);
      else assert.ok(Math.abs(r.perplexity - c.perplexity) <= 1e-3 * c.perplexity, what);
      assert.equal(r.nextToken.length, 5);
      assert.equal(r.nextToken[0].token, c.next_token[0].token, what);
      assert.ok(
        maxAbsDiff(
          r.nextToken.map((p) => p.probability),
          c.next_token.map((p) => p.probability),
        ) <= 1e-4,
        what,
      );
    }
  } finally {
    for (const m of Object.values(models)) m.delete();
  }
}

test('tiny models: run() matches PyTorch', () =>
  checkGolden(fixture('english_lm_golden_tiny.json')));

test('trained model: run() matches PyTorch', (t) => {
  const golden = path.join(root, 'tests/fixtures/english_lm_golden.json');
  if (!existsSync(path.join(root, 'web/english_lm.safetensors')) || !existsSync(golden)) {
    t.skip('web/english_lm.safetensors or tests/fixtures/english_lm_golden.json is absent');
    return;
  }
  checkGolden(fixture('english_lm_golden.json'));
});

test('englishTokenize splits as the page does', () => {
  const texts = fixture('english_tokenize.json').cases.map((c) => c.text);
  texts.push('Über 9000 — “quoted” text… and the 🏳️‍🌈 flag', 'a\u0300\u0301 b\u200D c', '🇺🇸🇬🇧x');
  for (const text of texts)
    assert.deepEqual(mod.englishTokenize(text), tokenize(text), JSON.stringify(text));
});

test('config, defaults of run()', () => {
  const c = tiny.config;
  assert.deepEqual(Object.keys(c).sort(), [
    'd_model',
    'dim_feedforward',
    'layer_norm_eps',
    'max_len',
    'num_heads',
    'num_layers',
    'relative_bias',
    'shortformer_positions',
    'vocab_size',
  ]);
  assert.equal(c.relative_bias, true);
  assert.equal(c.shortformer_positions, false);
  assert.match(tiny.checksum, /^[0-9a-f]{16}$/);
  const r = tiny.run('the cat');
  assert.equal(r.nextToken.length, 5);
  assert.equal(r.attnWeights.length, r.layers * r.heads * r.n * r.n);
  assert.equal(tiny.run('', { top: 1 }).nextToken.length, 1);
});

test('attention: one self-attention entry per layer, a view of its part of attnWeights', () => {
  const r = tiny.run('the cat sat on the mat', { ablate: [[1, 2]] });
  const size = r.heads * r.n * r.n;
  const expected = Array.from({ length: r.layers }, (_, layer) => ({
    kind: 'self',
    layer,
    queries: r.n,
    keys: r.n,
    weights: r.attnWeights.subarray(layer * size, (layer + 1) * size),
  }));
  checkAttention(r.attention, expected, r.heads);
  // Causal: the first token sees only itself; nothing above the diagonal.
  for (const a of r.attention) {
    for (let head = 0; head < r.heads; head++) {
      assert.equal(a.weights[head * r.n * r.n], 1);
      assert.equal(a.weights[head * r.n * r.n + 1], 0);
    }
  }
});

test('errors are JS Errors with the message; the module keeps working', () => {
  const before = tiny.run('the cat').ids;
  assert.equal(before[0], 1);
  assert.throws(() => tiny.run('the cat', { ablate: [[9, 9]] }), {
    message: 'cannot ablate layer 9 head 9: the model has 2 layers of 4 heads',
  });
  assert.throws(() => tiny.run('the cat', { ablate: [[0]] }), {
    message: /ablate\[0\] must be a \[layer, head\] pair/,
  });
  assert.throws(() => tiny.run('the cat', { ablate: 'x' }), {
    message: 'ablate must be an array of [layer, head] pairs',
  });
  assert.throws(() => tiny.run('the cat', { ablate: [[0, -1]] }), {
    message: 'ablate[0]: head=-1 is outside [0, 1048576]',
  });
  assert.throws(() => tiny.run('the cat', 5), {
    message: 'run(text, options) must be an object of named fields, got number',
  });
  assert.throws(() => tiny.run('the cat', { top: 0 }), { message: /top=0/ });
  // 300 pieces, <unk> and <bos> never predicted: 298 candidates.
  assert.throws(() => tiny.run('the cat', { top: 299 }), { message: /top_k=299/ });
  assert.equal(tiny.run('the cat', { top: 298 }).nextToken.length, 298);
  assert.throws(() => tiny.run('the cat', { temperature: 2 }), {
    message: /unknown key 'temperature'/,
  });
  assert.throws(() => tiny.run(42), { message: /text must be a string/ });
  assert.throws(() => tiny.run('bad \uD800 surrogate'), {
    message: 'text is not valid Unicode: a lone surrogate at index 4',
  });
  assert.throws(() => mod.englishTokenize('\uDC00'), { message: /lone surrogate at index 0/ });
  assert.throws(() => new mod.EnglishModel('not bytes'), { message: /Uint8Array or ArrayBuffer/ });
  assert.throws(() => new mod.EnglishModel(new Uint8Array(3)), { message: /truncated file/ });
  const broken = bytesOf(TINY);
  broken[broken.length - 2] ^= 0x20;
  assert.throws(() => new mod.EnglishModel(broken), {
    message:
      /^checksum mismatch: the metadata says xxh64 [0-9a-f]{16}, the file's data, tensor entries and metadata hash to [0-9a-f]{16}$/,
  });
  // An edited vocabulary ("<0x41>" and "<0x42>" swapped) is refused the same way.
  const swapped = Buffer.from(bytesOf(TINY));
  const at = swapped.indexOf('\\"<0x41>\\",\\"<0x42>\\",');
  assert.ok(at > 0);
  swapped.write('\\"<0x42>\\",\\"<0x41>\\",', at, 'latin1');
  assert.throws(() => new mod.EnglishModel(new Uint8Array(swapped)), {
    message:
      /^checksum mismatch: the metadata says xxh64 [0-9a-f]{16}, the file's data, tensor entries and metadata hash to [0-9a-f]{16}$/,
  });
  assert.throws(() => new mod.EnglishModel(bytesOf('web/date_model.safetensors')), {
    message: 'wrong format "mha-lab-date-model": expected "mha-lab-english-lm"',
  });
  // Still working.
  assert.deepEqual(tiny.run('the cat').ids, before);
});

test('heldoutLoss: PyTorch log-probabilities over code points; heads off; errors', () => {
  // The golden cases that fit max_len: -sum(next_token_logprob) (PyTorch) over the text's code
  // points, within 1e-3 nats a token (run()'s tolerance above).
  const doc = fixture('english_lm_golden_tiny.json');
  let scored = 0;
  for (const c of doc.cases) {
    if (c.model !== 'relbias_mlp' || c.truncated_tokens > 0 || c.next_token_logprob.length === 0)
      continue;
    const loss = tiny.heldoutLoss([c.text], { ablate: c.ablate });
    const nats = -c.next_token_logprob.reduce((a, b) => a + b, 0);
    assert.equal(loss.texts, 1);
    assert.equal(loss.tokens, c.next_token_logprob.length);
    assert.equal(loss.characters, [...c.text].length, c.text);
    assert.ok(Math.abs(loss.nats - nats) <= 1e-3 * loss.tokens, `${loss.nats} vs ${nats}`);
    assert.equal(loss.perCharacter, loss.nats / loss.characters);
    scored += 1;
  }
  assert.ok(scored >= 2, `${scored} cases scored`);
  // Several texts sum; a text beyond max_len and a text of no token are skipped.
  const both = tiny.heldoutLoss(['the cat', 'a dog', '', 'word '.repeat(200)]);
  const a = tiny.heldoutLoss(['the cat']);
  const b = tiny.heldoutLoss(['a dog']);
  assert.equal(both.nats, a.nats + b.nats);
  assert.equal(both.skipped, 2);
  assert.equal(tiny.heldoutLoss(['']).perCharacter, null);
  const off = tiny.heldoutLoss(['the cat'], { ablate: [[0, 0]] });
  assert.equal(
    off.nats,
    -tiny.run('the cat', { ablate: [[0, 0]] }).nextTokenLogprob.reduce((x, y) => x + y, 0),
  );
  assert.throws(() => tiny.heldoutLoss('the cat'), {
    message: /texts must be an array of strings/,
  });
  assert.throws(() => tiny.heldoutLoss([1]), { message: /texts\[0\]: text must be a string/ });
  assert.throws(() => tiny.heldoutLoss(['a'], { ablate: [[9, 0]] }), { message: /layer 9/ });
  assert.throws(() => tiny.heldoutLoss(['a'], { top: 3 }), { message: /unknown key 'top'/ });
  assert.equal(tiny.heldoutLoss(['the cat']).nats, a.nats);
});
