// Head patterns from JS: head-pattern scores (the golden values of scripts/fixtures/make_pattern_fixtures.py, as
// the native tests), combinations, rollout of the date model, sliding-window masks, explainCell
// against the forward result, ablation, file loading (.npy, safetensors, nn.MultiheadAttention
// weights against PyTorch), and named errors after which the module keeps working.
// Run: node --test tests/js/   (needs build/wasm/mha_wasm.js: ./scripts/build.sh)
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, loadModule } from './module.mjs';

const fixtures = path.join(root, 'tests/fixtures');
const fixture = (name) => JSON.parse(readFileSync(path.join(fixtures, name), 'utf8'));
const bytes = (name) => new Uint8Array(readFileSync(path.join(fixtures, name)));

let mod;
before(async () => {
  mod = await loadModule();
});

const SCORE_KEYS = [
  'previous_token',
  'diagonal',
  'local_band',
  'vertical_stripe',
  'first_token',
  'mean_distance',
  'mean_distance_normalized',
  'entropy_bits',
  'entropy_normalized',
  'max_weight',
];

function expectScores(actual, expected, tol, where) {
  for (const key of SCORE_KEYS) {
    if (expected[key] === null) assert.equal(actual[key], null, `${where} ${key}`);
    else
      assert.ok(
        Math.abs(actual[key] - expected[key]) <= tol,
        `${where} ${key}: ${actual[key]} vs ${expected[key]}`,
      );
  }
  assert.equal(actual.stripe_key, expected.stripe_key, `${where} stripe_key`);
}

test('headPatterns reproduces the numpy golden scores, labels and JS distances', () => {
  for (const c of fixture('patterns.json').cases) {
    let w, h, n, m;
    if (c.preset) {
      const p = c.preset;
      const r = mod.numpyExperiment({
        seed: p.seed,
        tokens: p.tokens,
        d_model: p.d_model,
        num_heads: p.num_heads,
        is_causal: p.is_causal,
      });
      [w, h, n, m] = [r.attn_weights, r.num_heads, r.n, r.m];
    } else {
      [h, n, m] = c.attn_weights.shape;
      w = Float32Array.from(c.attn_weights.data);
    }
    const tol = c.preset ? 1e-6 : 1e-9;
    const out = mod.headPatterns({ attn_weights: w, num_heads: h, n, m });
    assert.equal(out.heads.length, h);
    out.heads.forEach((hs, k) => {
      const g = c.heads[k];
      expectScores(hs.scores, g.scores, tol, `${c.name} head ${k}`);
      expectScores(hs.uniform_baseline, g.uniform_baseline, 1e-9, `${c.name} head ${k} baseline`);
      assert.deepEqual(hs.labels, g.labels, `${c.name} head ${k} labels`);
      assert.equal(hs.causal, g.causal);
    });
    assert.ok(out.js_distance instanceof Float64Array);
    c.js_distance
      .flat()
      .forEach((x, i) => assert.ok(Math.abs(out.js_distance[i] - x) <= tol, `${c.name} js ${i}`));
    assert.equal(mod.jsDistance({ attn_weights: w, num_heads: h, n, m })[1], out.js_distance[1]);
  }
});

const TOKEN_KEYS = ['duplicate_token', 'induction', 'punctuation'];

function expectTokenScores(actual, expected, tol, where) {
  for (const key of TOKEN_KEYS) {
    if (expected[key] === null) assert.equal(actual[key], null, `${where} ${key}`);
    else
      assert.ok(
        Math.abs(actual[key] - expected[key]) <= tol,
        `${where} ${key}: ${actual[key]} vs ${expected[key]}`,
      );
  }
}

test('headPatterns with tokens: the golden token scores, baselines and labels (1e-12, as natively)', () => {
  const doc = fixture('patterns.json');
  assert.ok(doc.token_cases.length >= 8);
  for (const c of doc.token_cases) {
    const [h, n, m] = c.attn_weights.shape;
    const req = {
      attn_weights: Float32Array.from(c.attn_weights.data),
      num_heads: h,
      n,
      m,
      tokens: c.tokens,
    };
    if (c.query_tokens) req.query_tokens = c.query_tokens;
    const out = mod.headPatterns(req);
    out.heads.forEach((hs, k) => {
      const g = c.heads[k];
      expectScores(hs.scores, g.scores, 1e-12, `${c.name} head ${k}`);
      expectTokenScores(hs.scores, g.scores, 1e-12, `${c.name} head ${k}`);
      expectTokenScores(
        hs.uniform_baseline,
        g.uniform_baseline,
        1e-12,
        `${c.name} head ${k} baseline`,
      );
      assert.deepEqual(hs.labels, g.labels, `${c.name} head ${k} labels`);
      if (c.tl_induction)
        assert.ok(
          Math.abs(hs.scores.induction - c.tl_induction[k]) <= 1e-12,
          `${c.name} TransformerLens ${k}`,
        );
    });
    assert.equal(out.thresholds.induction, 0.5);
  }
  // Without tokens the token scores are null, never NaN.
  const c = doc.token_cases[0];
  const [h, n, m] = c.attn_weights.shape;
  const bare = mod.headPatterns({
    attn_weights: Float32Array.from(c.attn_weights.data),
    num_heads: h,
    n,
    m,
  });
  for (const key of TOKEN_KEYS) assert.equal(bare.heads[0].scores[key], null, key);
});

test("the punctuation class in wasm is the one of Python's unicodedata (every golden sample)", () => {
  // One key per sample under a head that looks only at it: punctuation is 1 or 0.
  for (const { token, punctuation } of fixture('patterns.json').punctuation_samples) {
    const out = mod.headPatterns({ attn_weights: [1], num_heads: 1, n: 1, tokens: [token] });
    assert.equal(out.heads[0].scores.punctuation, punctuation ? 1 : 0, JSON.stringify(token));
  }
});

test('headPatterns token errors name the key and the entry', () => {
  const req = { attn_weights: [1, 0, 0.5, 0.5], num_heads: 1, n: 2 };
  assert.throws(
    () => mod.headPatterns({ ...req, tokens: ['a'] }),
    /tokens has 1 entries, attn_weights has 2 keys/,
  );
  assert.throws(
    () => mod.headPatterns({ ...req, tokens: ['a', 3] }),
    /tokens\[1\] must be a string, got 3/,
  );
  assert.throws(
    () => mod.headPatterns({ ...req, tokens: 'ab' }),
    /tokens must be an array of strings/,
  );
  assert.throws(
    () => mod.headPatterns({ ...req, tokens: ['a', 'b'], query_tokens: ['a'] }),
    /query_tokens has 1 entries, attn_weights has 2 queries/,
  );
  assert.throws(
    () => mod.headPatterns({ ...req, thresholds: { induction: 'x' } }),
    /thresholds.induction must be a finite number/,
  );
  assert.equal(
    mod.headPatterns({ ...req, tokens: ['a', 'a'] }).heads[0].scores.duplicate_token,
    0.5,
  );
});

test('headPatterns unmatched_tokens: two unknown words are no repeat, other repeats still are', () => {
  // <bos> <unk> a <unk> b, causal: row 3 reads key 2, the token after the first "<unk>"; every
  // other row reads itself.
  const n = 5;
  const w = new Float32Array(n * n);
  for (let i = 0; i < n; i++) w[i * n + (i === 3 ? 2 : i)] = 1;
  const tokens = ['<bos>', '<unk>', 'a', '<unk>', 'b'];
  const req = { attn_weights: w, num_heads: 1, n, tokens };
  const plain = mod.headPatterns(req).heads[0];
  assert.equal(plain.scores.induction, 1);
  assert.equal(plain.scores.duplicate_token, 0);
  assert.deepEqual(plain.labels, ['positional', 'induction']);
  const unk = mod.headPatterns({ ...req, unmatched_tokens: ['<unk>'] }).heads[0];
  assert.equal(unk.scores.induction, null);
  assert.equal(unk.scores.duplicate_token, null);
  assert.equal(unk.uniform_baseline.induction, null);
  assert.equal(unk.scores.punctuation, 0);
  assert.deepEqual(unk.labels, ['positional']);
  // "a" repeated: its copy still counts with "<unk>" unmatched.
  const repeat = mod.headPatterns({
    attn_weights: Float32Array.of(1, 0, 0, 0, 1, 0, 1, 0, 0),
    num_heads: 1,
    n: 3,
    tokens: ['a', '<unk>', 'a'],
    unmatched_tokens: ['<unk>'],
  }).heads[0];
  assert.equal(repeat.scores.duplicate_token, 1);
  assert.equal(repeat.scores.induction, 0);
  assert.throws(
    () => mod.headPatterns({ ...req, unmatched_tokens: '<unk>' }),
    /unmatched_tokens must be an array of strings/,
  );
  assert.throws(
    () => mod.headPatterns({ ...req, unmatched_tokens: [0] }),
    /unmatched_tokens\[0\] must be a string, got 0/,
  );
});

test('a pure previous-token head scores 1 and is labelled; thresholds can be changed', () => {
  const n = 6;
  const w = new Float32Array(n * n);
  for (let i = 0; i < n; i++) w[i * n + Math.max(i - 1, 0)] = 1;
  const out = mod.headPatterns({ attn_weights: w, num_heads: 1, n });
  assert.equal(out.heads[0].scores.previous_token, 1);
  assert.deepEqual(out.heads[0].labels, ['previous-token']);
  assert.equal(out.thresholds.previous_token, 0.5);
  const strict = mod.headPatterns({
    attn_weights: w,
    num_heads: 1,
    n,
    thresholds: { previous_token: 1.01 },
  });
  assert.deepEqual(strict.heads[0].labels, ['positional']);
});

test('mean and max over heads', () => {
  const w = Float32Array.of(1, 0, 0, 1, /* head 1 */ 0, 1, 0.5, 0.5);
  assert.deepEqual(
    Array.from(mod.meanOverHeads({ attn_weights: w, num_heads: 2, n: 2 })),
    [0.5, 0.5, 0.25, 0.75],
  );
  assert.deepEqual(
    Array.from(mod.maxOverHeads({ attn_weights: w, num_heads: 2, n: 2 })),
    [1, 1, 0.5, 1],
  );
});

test('attention rollout over the date model encoder: rows sum to 1', () => {
  const model = new mod.DateModel(
    new Uint8Array(readFileSync(path.join(root, 'web/date_model.safetensors'))),
  );
  try {
    const t = model.translate('Nov 30, 2026');
    const S = t.source_length;
    const r = mod.attentionRollout({ layers: t.encoder_self, num_heads: t.num_heads, n: S });
    assert.equal(r.length, S * S);
    for (let i = 0; i < S; i++) {
      let sum = 0;
      for (let j = 0; j < S; j++) sum += r[i * S + j];
      assert.ok(Math.abs(sum - 1) < 1e-9, `row ${i} sums to ${sum}`);
    }
    const dec = mod.attentionRollout({
      layers: t.decoder_self,
      num_heads: t.num_heads,
      n: t.steps,
    });
    assert.equal(dec[1], 0, 'causal: position 0 gets nothing from position 1');
    assert.throws(
      () => mod.attentionRollout({ layers: t.cross, num_heads: t.num_heads, n: t.steps }),
      /layers\[0\]/,
    );
  } finally {
    model.delete();
  }
});

test('slidingWindowMask feeds forward as a boolean mask', () => {
  const mask = mod.slidingWindowMask({ n: 5, window: 1 });
  assert.ok(mask instanceof Uint8Array);
  assert.deepEqual(Array.from(mask.subarray(0, 5)), [0, 0, 1, 1, 1]);
  const causal = mod.slidingWindowMask({ n: 5, window: 1, is_causal: true });
  assert.deepEqual(Array.from(causal.subarray(10, 15)), [1, 0, 0, 1, 1]);
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  const f = mod.forward({
    d_model: 8,
    num_heads: 2,
    n: 5,
    query: r.x,
    in_proj_weight: r.in_proj_weight,
    out_proj_weight: r.out_proj_weight,
    attn_mask: mask,
  });
  assert.equal(f.attn_weights[4], 0);
  assert.throws(() => mod.slidingWindowMask({ n: 5, window: -1 }), /window=-1 is outside/);
});

test('explainCell reproduces the core weight, with and without a causal mask', () => {
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2, is_causal: true });
  const c = mod.explainCell(r, { head: 0, i: 3, j: 2, is_causal: true });
  assert.equal(c.d_head, 4);
  assert.equal(c.weight, r.attn_weights[3 * 5 + 2]);
  assert.ok(Math.abs(c.weight_recomputed - c.weight) < 1e-6);
  assert.ok(Math.abs(c.scaled - c.score) < 1e-4 * (1 + Math.abs(c.score)));
  assert.equal(c.q_i.length, 4);
  assert.equal(c.contribution.length, 4);
  c.contribution.forEach((x, t) => assert.ok(Math.abs(x - c.weight * c.v_j[t]) < 1e-12));
  const masked = mod.explainCell(r, { head: 1, i: 1, j: 4, is_causal: true });
  assert.equal(masked.mask_term, -Infinity);
  assert.equal(masked.weight, 0);
  assert.equal(masked.exp_shifted, 0);
  assert.throws(() => mod.explainCell(r, { head: 2, i: 0, j: 0 }), /head=2 is outside \[0, 2\)/);
  assert.throws(
    () => mod.explainCell({ ...r, q: undefined }, { head: 0, i: 0, j: 0 }),
    /keep_intermediates/,
  );
  assert.throws(
    () => mod.explainCell(r, { head: 0, i: 0, j: 0, colour: 1 }),
    /unknown key 'colour'/,
  );
});

test('ablationEffect: no heads off = 0, all heads off without bias = 1', () => {
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  const req = {
    d_model: 8,
    num_heads: 2,
    n: 5,
    query: r.x,
    in_proj_weight: r.in_proj_weight,
    out_proj_weight: r.out_proj_weight,
  };
  assert.equal(mod.ablationEffect({ ...req, ablated_heads: [0, 0] }).relative_change, 0);
  assert.ok(
    Math.abs(mod.ablationEffect({ ...req, ablated_heads: [1, 1] }).relative_change - 1) < 1e-12,
  );
  const one = mod.ablationEffect({ ...req, ablated_heads: [1, 0] });
  assert.ok(one.relative_change > 0 && one.relative_change < 2);
  assert.throws(() => mod.ablationEffect(req), /needs ablated_heads/);
});

test('loadNpy and loadMultiheadAttention reproduce PyTorch', () => {
  const doc = fixture('torch_mha_layer.json');
  const x = mod.loadNpy(bytes('torch_mha_layer_x.npy'));
  assert.deepEqual(x.shape, [5, 8]);
  assert.equal(x.dtype, '<f4');
  const spec = mod.loadMultiheadAttention(bytes('torch_mha_layer.safetensors'));
  assert.equal(spec.num_heads, 2);
  const layer = new mod.MultiheadAttention(spec);
  try {
    const out = layer.forward({ n: 5, query: x.data });
    let worst = 0;
    doc.output.data.forEach((v, i) => {
      worst = Math.max(worst, Math.abs(out.output[i] - v));
    });
    assert.ok(worst <= 1e-5, `output deviates by ${worst}`);
    doc.attn_weights.data.forEach((v, i) => assert.ok(Math.abs(out.attn_weights[i] - v) <= 1e-6));
  } finally {
    layer.delete();
  }
  assert.equal(
    mod.loadMultiheadAttention(bytes('torch_mha_layer.safetensors'), { num_heads: 4 }).num_heads,
    4,
  );
});

test('loadAttention reads .npy and safetensors attention tensors', () => {
  // A (2, 1, 2, 2) float32 .npy built by hand, as numpy.save writes it.
  const header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 2, 2), }";
  const padded = `${header.padEnd(64 - 10 - 1, ' ')}\n`;
  const data = new Float32Array([0.5, 0.5, 0.5, 0.5, 1, 0, 1, 0]);
  const file = new Uint8Array(10 + padded.length + data.byteLength);
  file.set([0x93, 78, 85, 77, 80, 89, 1, 0, padded.length, 0]);
  file.set(new TextEncoder().encode(padded), 10);
  file.set(new Uint8Array(data.buffer), 10 + padded.length);
  const a = mod.loadAttention(file);
  assert.equal(a.num_layers, 2);
  assert.equal(a.num_heads, 1);
  assert.deepEqual(Array.from(a.layers[1]), [1, 0, 1, 0]);
  // Wrong inputs: named errors, and the module keeps working.
  assert.throws(() => mod.loadAttention(file.subarray(0, file.length - 4)), /truncated file/);
  assert.throws(() => mod.loadAttention(new Uint8Array([1, 2, 3])), /truncated file|header length/);
  assert.throws(() => mod.loadAttention('nope'), /Uint8Array or ArrayBuffer/);
  assert.throws(() => mod.loadAttention(file, { tensor: 'x' }), /this is a .npy file/);
  assert.throws(() => mod.loadAttention(bytes('torch_mha_layer.safetensors')), /holds 4 tensors/);
  assert.throws(
    () => mod.loadAttention(bytes('torch_mha_layer.safetensors'), { tensor: 'in_proj_bias' }),
    /has shape \(24\)/,
  );
  assert.throws(
    () => mod.headPatterns({ attn_weights: [0.5, 0.4], num_heads: 1, n: 1, m: 2 }),
    /row 0 sums to 0.9/,
  );
  assert.throws(
    () => mod.headPatterns({ attn_weights: [1], num_heads: 256, n: 4096, m: 4096 }),
    /exceeds the limit of 67108864/,
  );
  assert.equal(mod.loadAttention(file).num_layers, 2);
});

test('2000 calls of every head-pattern and explanation function, errors included, leave the wasm heap where it was', {
  timeout: 120_000,
}, () => {
  const r = mod.numpyExperiment({ seed: 7, tokens: 5, d_model: 8, num_heads: 2 });
  const stack = { attn_weights: r.attn_weights, num_heads: 2, n: 5 };
  const npy = bytes('torch_mha_layer_x.npy');
  const st = bytes('torch_mha_layer.safetensors');
  const round = (i) => {
    mod.headPatterns(stack);
    mod.meanOverHeads(stack);
    mod.attentionRollout({ layers: [r.attn_weights, r.attn_weights], num_heads: 2, n: 5 });
    mod.explainCell(r, { head: i % 2, i: i % 5, j: (i + 1) % 5 });
    mod.slidingWindowMask({ n: 5, window: 1 });
    mod.loadNpy(npy);
    mod.loadMultiheadAttention(st);
    if (i % 10 === 0) {
      assert.throws(() => mod.headPatterns({ ...stack, n: 4 }), /attn_weights has 50 values/);
      assert.throws(() => mod.explainCell(r, { head: 5, i: 0, j: 0 }), /head=5/);
      assert.throws(() => mod.loadNpy(npy.subarray(0, 100)), /truncated/);
      assert.throws(
        () => mod.loadMultiheadAttention(st.subarray(0, 50)),
        /header length|truncated/,
      );
    }
  };
  for (let i = 0; i < 50; i++) round(i); // warm-up: allocator pools
  const before = mod.memoryStats().malloc_in_use_bytes;
  for (let i = 0; i < 2000; i++) round(i);
  const grown = mod.memoryStats().malloc_in_use_bytes - before;
  assert.ok(grown < 64 * 1024, `malloc_in_use_bytes grew by ${grown} bytes`);
});
