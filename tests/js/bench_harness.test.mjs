// The agreement check of scripts/bench.sh (scripts/bench/systems.mjs, bench.mjs), without its
// peers: our wasm module driven exactly as the benchmark drives it, on the (5, 8, 2) PyTorch golden
// case, compared by the harness's own maxAbsDiff within the harness's TOLERANCE. Also pins what
// that comparison must never let through (NaN, a wrong length). Run: node --test tests/js/
// Needs build/wasm/mha_wasm.js (./scripts/build.sh); no Python, no npm peer.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { oursWasm, timeRunner, maxAbsDiff, median } from '../../scripts/bench/systems.mjs';
import {
  TOLERANCE,
  flops,
  mergeRounds,
  pairedRatio,
  targetCheck,
} from '../../scripts/bench/bench.mjs';
import { root, loadModule } from './module.mjs';

let mod;
before(async () => {
  mod = await loadModule();
});

test('bench harness: our wasm module, as benchmarked, agrees with PyTorch on (5, 8, 2)', async () => {
  const golden = JSON.parse(readFileSync(path.join(root, 'tests/fixtures/torch_mha.json'), 'utf8'));
  const c = golden.cases.find((x) => x.name === 'bias');
  assert.deepEqual([c.n, c.d_model, c.num_heads, c.self_attention], [5, 8, 2, true]);
  const f32 = (t) => Float32Array.from(t.data);
  const runner = await oursWasm(mod).prepare({
    n: c.n,
    d: c.d_model,
    h: c.num_heads,
    x: f32(c.query),
    in_proj_weight: f32(c.weights.in_proj_weight),
    in_proj_bias: f32(c.weights.in_proj_bias),
    out_proj_weight: f32(c.weights.out_proj_weight),
    out_proj_bias: f32(c.weights.out_proj_bias),
  });
  let clock = 0; // a fake clock: 0.25 ms per reading, so the run is deterministic
  const { times, result } = await timeRunner(runner, {
    now: () => (clock += 0.25),
    budgetMs: 0,
    minReps: 3,
    maxReps: 3,
  });
  runner.dispose();
  assert.equal(times.length, 3);
  assert.ok(
    times.every((t) => t > 0 && Number.isFinite(t)),
    `${times}`,
  );
  assert.ok(Number.isFinite(median(times)));
  assert.equal(result.output.length, 5 * 8);
  assert.equal(result.weights.length, 2 * 5 * 5);
  const errOutput = maxAbsDiff(result.output, c.expected.output.data);
  const errWeights = maxAbsDiff(result.weights, c.expected.attn_weights.data);
  assert.ok(errOutput <= TOLERANCE.output, `output differs from PyTorch by ${errOutput}`);
  assert.ok(errWeights <= TOLERANCE.weights, `weights differ from PyTorch by ${errWeights}`);
});

test('bench harness: maxAbsDiff fails NaN and a wrong length, and measures the largest gap', () => {
  assert.equal(maxAbsDiff(Float32Array.of(1, 2, 3), [1, 2.5, 2]), 1);
  assert.equal(maxAbsDiff([0, NaN], [0, 0]), Infinity);
  assert.equal(maxAbsDiff([NaN], [NaN]), Infinity);
  assert.equal(maxAbsDiff([1, 2], [1, 2, 3]), Infinity);
  assert.equal(maxAbsDiff(undefined, [1]), Infinity);
  assert.ok(!(maxAbsDiff([0, NaN], [0, 0]) <= TOLERANCE.output));
});

test('bench harness: flops counts 2·n·d·3d + 2·2·n²·d + 2·n·d²', () => {
  assert.equal(flops(5, 8), 2 * 5 * 8 * 24 + 4 * 25 * 8 + 2 * 5 * 64);
  assert.equal(flops(512, 768), 3221225472); // as build/native/mha_bench prints for 512 768 12
});

test("bench harness: rounds merge into one row per system and configuration (median of the rounds' medians)", () => {
  const row = (key, n, m, min, reps, errOut, errW) => ({
    key,
    n,
    d: 8,
    h: 2,
    median_ms: m,
    min_ms: min,
    reps,
    max_abs_err_output: errOut,
    max_abs_err_weights: errW,
  });
  const merged = mergeRounds([
    row('ours', 5, 1.0, 0.9, 10, 1e-7, 1e-8),
    row('ort', 5, 2.0, 1.5, 5, 2e-7, 2e-8),
    row('ours', 5, 4.0, 0.8, 10, 3e-7, 1e-8),
    row('ort', 5, 2.2, 1.9, 5, 'Infinity', 1e-8),
    row('ours', 5, 1.2, 1.1, 10, 1e-7, 5e-8),
  ]);
  assert.equal(merged.length, 2);
  const ours = merged.find((r) => r.key === 'ours');
  assert.equal(ours.median_ms, 1.2, 'the slow round (4.0) is dropped by the median');
  assert.deepEqual(ours.round_medians, [1.0, 4.0, 1.2]);
  assert.equal(ours.min_ms, 0.8);
  assert.equal(ours.reps, 30);
  assert.equal(ours.max_abs_err_output, 3e-7);
  assert.equal(ours.max_abs_err_weights, 5e-8);
  const ort = merged.find((r) => r.key === 'ort');
  assert.equal(ort.median_ms, 2.1);
  assert.equal(
    ort.max_abs_err_output,
    'Infinity',
    'a failed comparison in any round fails the row',
  );
});

test('bench harness: the paired ratio is the median of the per-round ratios, and needs matching rounds', () => {
  // Rounds 3 and 4 are slow for both systems. The per-round ratios are 2, 2, 2, 2, 2.5: median 2.
  // The ratio of the medians (3.0 / 1.2 = 2.5) mixes a slow round of the peer with a fast one of ours.
  const ours = { round_medians: [1.0, 1.0, 4.0, 4.0, 1.2] };
  const peer = { round_medians: [2.0, 2.0, 8.0, 8.0, 3.0] };
  assert.equal(pairedRatio(ours, peer), 2);
  assert.equal(pairedRatio(peer, ours), 0.5);
  assert.equal(
    median(peer.round_medians) / median(ours.round_medians),
    2.5,
    'the measure it replaces differs',
  );
  assert.equal(pairedRatio(ours, { round_medians: [2.0, 6.0] }), null, 'rounds that do not match');
  assert.equal(
    pairedRatio({ round_medians: [1.0] }, { round_medians: [2.0] }),
    null,
    'one round: no pairs to take a median of',
  );
  assert.equal(pairedRatio(ours, undefined), null);
});

test('bench harness: the node target holds ours to the faster ONNX Runtime graph at each size', () => {
  const row = (key, n, ms) => ({ key, label: key, n, d: 8, h: 2, median_ms: ms });
  const results = [
    row('ours-wasm-views', 64, 0.3),
    row('ours-wasm-views', 128, 0.6),
    row('ort130', 64, 0.6), // the exported graph: slower at 64 tokens, faster at 128
    row('ort130', 128, 1.0),
    row('ort130-minimal', 64, 0.4),
    row('ort130-minimal', 128, 1.2),
    row('tfjs', 64, 2.0),
    row('tfjs', 128, 3.0),
  ];
  const [node] = targetCheck({
    results,
    configs: [
      [64, 8, 2],
      [128, 8, 2],
    ],
    keys: [...new Set(results.map((r) => r.key))],
    browserKeys: [],
    peak: null,
  });
  assert.match(node[0], /^node: ours-wasm-views \/ fastest node peer ≤ 0\.7$/);
  assert.equal(node[1], '0.75 vs ORT 1.30.0 (minimal graph): **missed**');
  assert.equal(node[2], '0.60 vs ORT 1.30.0 (exported graph): met');
});

test('bench harness: the peak-share verdict prints a decimal where rounding would show the limit', () => {
  const share = (ms) => [
    {
      key: 'ours-wasm-views',
      label: 'ours',
      n: 512,
      d: 768,
      h: 12,
      median_ms: (100 * flops(512, 768)) / (ms * 50 * 1e6),
    },
  ];
  const row = (pct) =>
    targetCheck({
      results: share(pct),
      configs: [[512, 768, 12]],
      keys: ['ours-wasm-views'],
      browserKeys: [],
      peak: { node: { peak_gflops: 50 } },
    })[0][1];
  assert.equal(row(69.6), '69.6 %: **missed**');
  assert.equal(row(70.2), '70.2 %: met');
  assert.equal(row(73.4), '73 %: met');
  assert.equal(row(64), '64 %: **missed**');
});
