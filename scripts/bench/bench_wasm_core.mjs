#!/usr/bin/env node
// Times one self-attention forward of the wasm core under node (a benchmark, not a test).
//
//   node scripts/bench/bench_wasm_core.mjs N D_MODEL NUM_HEADS [REPS] [--wasm FILE] [--api copy|views]
//                                    [--seed S]
//
// Builds one `new mod.MultiheadAttention(spec)` layer (weights copied into wasm memory and
// validated once), then times REPS (default 20) calls after 2 untimed warm-up calls, and prints
// one JSON line:
//   {"impl": "mha-lab wasm", "api", "n", "d_model", "num_heads", "reps", "median_ms", "min_ms",
//    "max_ms", "median_cpu_ms", "flop", "gflop_per_s", "wasm"}
// median_cpu_ms: the process's CPU time (user + system, process.cpuUsage) per call — on a shared
// machine, wall time also counts the time other processes held the CPU; CPU time does not.
// Each timed call includes the JS boundary: the query (a Float32Array) crossing into wasm memory,
// and the output (n*d) and per-head weights (h*n*n) coming back:
//   --api copy   layer.forward({n, query, keep_intermediates: false}): results are JS-owned copies
//                (the safe default of docs/js-api.md);
//   --api views  layer.forwardViews({n, query}): one write of the query into wasm memory, results
//                are views into the layer's buffers (docs/js-api.md "Zero-copy forward"); the
//                default when the module has it.
// flop = 2*n*d*3d + 2*2*n*n*d + 2*n*d*d (QKV projection, Q K^T and A V over all heads,
// out_proj; a multiply-add counts 2; softmax and biases not counted) — as build/native/mha_bench.
// FILE defaults to build/wasm/mha_wasm.js (any build exposing createMhaModule and
// MultiheadAttention works). Random inputs: a seeded xorshift, N(0,1)-like via Box-Muller.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..'); // scripts/bench/ -> root

function fail(message) {
  process.stderr.write(`bench_wasm_core: error: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { wasm: path.join(root, 'build/wasm/mha_wasm.js'), api: null, seed: 1 };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--wasm' || a === '--api' || a === '--seed') {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      opts[a.slice(2)] = argv[++i];
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(
        'usage: node scripts/bench/bench_wasm_core.mjs N D_MODEL NUM_HEADS [REPS] ' +
          '[--wasm FILE] [--api copy|views] [--seed S]\n',
      );
      process.exit(0);
    } else {
      positional.push(a);
    }
  }
  if (positional.length < 3 || positional.length > 4) {
    fail(`expected N D_MODEL NUM_HEADS [REPS], got ${positional.length} arguments`);
  }
  const int = (text, name, min, max) => {
    const v = Number(text);
    if (!Number.isInteger(v) || v < min || v > max) {
      fail(`${name} must be an integer in [${min}, ${max}], got "${text}"`);
    }
    return v;
  };
  opts.n = int(positional[0], 'N', 1, 4096);
  opts.d_model = int(positional[1], 'D_MODEL', 1, 4096);
  opts.num_heads = int(positional[2], 'NUM_HEADS', 1, 256);
  opts.reps = positional.length > 3 ? int(positional[3], 'REPS', 1, 100000) : 20;
  opts.seed = int(String(opts.seed), '--seed', 1, 2 ** 31 - 1);
  if (opts.api !== null && opts.api !== 'copy' && opts.api !== 'views') {
    fail(`--api must be copy or views, got "${opts.api}"`);
  }
  return opts;
}

/** Seeded N(0, scale^2) draws (xorshift32 + Box-Muller): reproducible inputs, not numpy's. */
function randn(count, scale, state) {
  const out = new Float32Array(count);
  const next = () => {
    state.x ^= state.x << 13;
    state.x >>>= 0;
    state.x ^= state.x >>> 17;
    state.x ^= state.x << 5;
    state.x >>>= 0;
    return (state.x + 0.5) / 4294967296;
  };
  for (let i = 0; i < count; i++) {
    out[i] = scale * Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
  }
  return out;
}

const opts = parseArgs(process.argv.slice(2));
const createMhaModule = createRequire(import.meta.url)(path.resolve(opts.wasm));
const mod = await createMhaModule();
const { n, d_model: d, num_heads: h, reps } = opts;
const state = { x: opts.seed };
const layer = new mod.MultiheadAttention({
  d_model: d,
  num_heads: h,
  in_proj_weight: randn(3 * d * d, 1 / Math.sqrt(d), state),
  in_proj_bias: randn(3 * d, 0.1, state),
  out_proj_weight: randn(d * d, 1 / Math.sqrt(d), state),
  out_proj_bias: randn(d, 0.1, state),
});
const query = randn(n * d, 1, state);
const api = opts.api ?? (typeof layer.forwardViews === 'function' ? 'views' : 'copy');
if (api === 'views' && typeof layer.forwardViews !== 'function') {
  fail(`${opts.wasm} has no MultiheadAttention.forwardViews; use --api copy`);
}
const run =
  api === 'views'
    ? () => layer.forwardViews({ n, query })
    : () => layer.forward({ n, query, keep_intermediates: false });

let checksum = 0;
for (let i = 0; i < 2; i++) checksum += run().output[0];
const ms = [],
  cpuMs = [];
for (let r = 0; r < reps; r++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = run();
  const t1 = performance.now();
  const c1 = process.cpuUsage(c0);
  checksum += result.output[0] + result.attn_weights[0];
  ms.push(t1 - t0);
  cpuMs.push((c1.user + c1.system) / 1000);
}
layer.delete();
const medianOf = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
};
ms.sort((a, b) => a - b);
const median = medianOf(ms);
const flop = 2 * n * d * 3 * d + 4 * n * n * d + 2 * n * d * d;
process.stdout.write(
  `${JSON.stringify({
    impl: 'mha-lab wasm',
    api,
    n,
    d_model: d,
    num_heads: h,
    reps,
    median_ms: median,
    min_ms: ms[0],
    max_ms: ms[ms.length - 1],
    median_cpu_ms: medianOf(cpuMs),
    flop,
    gflop_per_s: flop / (median * 1e6),
    wasm: path.relative(process.cwd(), path.resolve(opts.wasm)),
    checksum,
  })}\n`,
);
