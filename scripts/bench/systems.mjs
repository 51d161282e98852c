// The systems scripts/bench.sh times, as one interface shared by node (scripts/bench/run_node.mjs)
// and headless Chromium (scripts/bench/page/bench_page.mjs). No node or DOM API here.
//
// Shape legend: n = tokens, d = d_model, h = num_heads, d_head = d / h.
// A case is {n, d, h, x (n*d), in_proj_weight (3d*d), in_proj_bias (3d), out_proj_weight (d*d),
// out_proj_bias (d), onnx ({exported, minimal}: Uint8Array each, the case's ONNX_GRAPHS files)}:
// all Float32Array, row-major, the parameters of one PyTorch nn.MultiheadAttention
// (scripts/bench/torch_bench.py).
// prepare(case) → {run: () => Promise<{output (n*d), weights (h*n*n)}>, dispose()}: `run` is one
// self-attention forward with per-head weights, results copied into JS arrays (what a page needs
// to draw them) — or views into wasm memory for our zero-copy API; that is what is timed. The last
// result is compared with PyTorch's (maxAbsDiff) before anything else runs, then dispose().

/**
 * Our wasm module through its documented layer API (docs/js-api.md): `new mod.MultiheadAttention`
 * once, then per call `layer.forward({n, query, keep_intermediates: false})`, whose results are
 * JS-owned copies — or, with `views: true`, `layer.forwardViews({n, query})` (zero-copy: views into
 * wasm memory, valid until the next call into the module; throws if this build lacks it).
 */
export function oursWasm(mod, { views = false } = {}) {
  if (views && typeof mod.MultiheadAttention.prototype.forwardViews !== 'function') {
    throw new Error('this build of the module has no layer.forwardViews');
  }
  return {
    // The GEMM's micro-kernel: relaxed SIMD's fused multiply-add where the engine has it
    // (cpp/bindings/wasm/relaxed_simd.js), else SIMD128 multiply then add.
    name: `mha-lab wasm, ${views ? 'forwardViews (zero-copy' : 'forward (copies'}${mod.gemmKernel === 'relaxed_madd' ? ', relaxed-SIMD FMA' : ''})`,
    version: mod.version,
    async prepare(c) {
      const layer = new mod.MultiheadAttention({
        d_model: c.d,
        num_heads: c.h,
        in_proj_weight: c.in_proj_weight,
        in_proj_bias: c.in_proj_bias,
        out_proj_weight: c.out_proj_weight,
        out_proj_bias: c.out_proj_bias,
      });
      const request = views
        ? { n: c.n, query: c.x }
        : { n: c.n, query: c.x, keep_intermediates: false };
      return {
        run: async () => {
          const r = views ? layer.forwardViews(request) : layer.forward(request);
          return { output: r.output, weights: r.attn_weights };
        },
        dispose: () => layer.delete(),
      };
    },
  };
}

/**
 * The two ONNX graphs of a case, as torch_bench.py writes them: `exported`, the module as
 * torch.onnx.export writes it; `minimal`, the same module as the fewest nodes (its
 * minimal_graph). Which one ONNX Runtime runs faster depends on the size and the machine
 * (docs/benchmarks.md): each version is timed on both, and ours is held to the faster.
 */
export const ONNX_GRAPHS = Object.freeze({ exported: 'mha.onnx', minimal: 'mha_minimal.onnx' });

/**
 * The benchmark's ONNX Runtime systems: key → [onnxruntime-web version, graph]. 'ort117' and 'ort130' run the
 * exported graph, the '-minimal' keys the minimal one.
 */
export const ORT_SYSTEMS = Object.freeze({
  ort117: ['1.17.3', 'exported'],
  'ort117-minimal': ['1.17.3', 'minimal'],
  ort130: ['1.30.0', 'exported'],
  'ort130-minimal': ['1.30.0', 'minimal'],
});

/**
 * onnxruntime-web's wasm backend running one of the case's ONNX graphs (`graph`: a key of
 * ONNX_GRAPHS). `ort` is the imported package; threads and the proxy worker are switched off here.
 */
export function onnxRuntime(ort, label, graph = 'exported') {
  if (!(graph in ONNX_GRAPHS)) throw new Error(`unknown ONNX graph ${graph}`);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  return {
    name: `${label}, ${graph} graph`,
    version: ort.env.versions?.web ?? 'unknown',
    async prepare(c) {
      const session = await ort.InferenceSession.create(c.onnx[graph], {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
      const feeds = { x: new ort.Tensor('float32', c.x, [1, c.n, c.d]) };
      return {
        run: async () => {
          const r = await session.run(feeds);
          return { output: r.output.data, weights: r.attn_weights.data };
        },
        dispose: () => session.release(),
      };
    },
  };
}

/**
 * nn.MultiheadAttention written with TensorFlow.js ops (matMul, softmax, reshape, transpose) on
 * the backend already set on `tf` (bench: 'wasm', SIMD on, threads off):
 *   [q k v] = x W_inᵀ + b_in; per head A = softmax(q kᵀ / √d_head); y = concat(A v) W_outᵀ + b_out.
 */
export function tfjs(tf, label) {
  return {
    name: label,
    version: tf.version_core,
    async prepare(c) {
      const { n, d, h } = c;
      const dh = d / h;
      const x = tf.tensor2d(c.x, [n, d]);
      const wIn = tf.tensor2d(c.in_proj_weight, [3 * d, d]);
      const bIn = tf.tensor1d(c.in_proj_bias);
      const wOut = tf.tensor2d(c.out_proj_weight, [d, d]);
      const bOut = tf.tensor1d(c.out_proj_bias);
      const scale = tf.scalar(1 / Math.sqrt(dh));
      const heads = (t) => tf.transpose(tf.reshape(t, [n, h, dh]), [1, 0, 2]); // (n, d) → (h, n, dh)
      const forward = () =>
        tf.tidy(() => {
          const qkv = tf.add(tf.matMul(x, wIn, false, true), bIn); // (n, 3d)
          const [q, k, v] = tf.split(qkv, 3, 1);
          const scores = tf.mul(tf.matMul(heads(q), heads(k), false, true), scale); // (h, n, n)
          const weights = tf.softmax(scores); // last axis
          const y = tf.reshape(tf.transpose(tf.matMul(weights, heads(v)), [1, 0, 2]), [n, d]);
          const output = tf.add(tf.matMul(y, wOut, false, true), bOut); // (n, d)
          return [output, weights];
        });
      return {
        run: async () => {
          const [output, weights] = forward();
          const r = { output: output.dataSync(), weights: weights.dataSync() };
          output.dispose();
          weights.dispose();
          return r;
        },
        dispose: () => tf.dispose([x, wIn, bIn, wOut, bOut, scale]),
      };
    },
  };
}

/** Milliseconds of untimed calls before timing starts (timeRunner's warm-up). */
export const WARM_UP_MS = 500;

/**
 * Times `runner.run()`: untimed warm-up calls until warmUpMs have passed (at least one), then at
 * least minReps and at most maxReps samples, going on while fewer than budgetMs have passed. A
 * sample repeats the call until at least 1 ms has passed (one call for anything slower) and
 * counts the elapsed time divided by the calls: Chromium coarsens performance.now() to 0.1 ms on
 * a page that is not cross-origin isolated, so calls of a few microseconds could not be timed one
 * by one there.
 * The warm-up is timed, not counted: V8 (node and Chromium) runs a wasm function first as its
 * baseline compiler's code and replaces it with optimised code only after the function has run
 * for a while, compiling in the background: after a single warm-up call the small cases' samples
 * (200 of about 1 ms) would mix both tiers, for every system alike.
 * Returns the per-call milliseconds of each sample, the calls per sample of the last one, and the
 * last result.
 */
export async function timeRunner(
  runner,
  { now, budgetMs, minReps, maxReps, warmUpMs = WARM_UP_MS },
) {
  let result = await runner.run(); // compilation, first allocations
  for (const warm = now(); now() - warm < warmUpMs; ) result = await runner.run();
  const times = [];
  let inner = 1;
  const start = now();
  while (times.length < maxReps && (times.length < minReps || now() - start < budgetMs)) {
    const t0 = now();
    let t = t0;
    let calls = 0;
    do {
      result = await runner.run();
      calls++;
      t = now();
    } while (t - t0 < 1);
    times.push((t - t0) / calls);
    inner = calls;
  }
  return { times, inner, result };
}

/**
 * Largest |a_i - b_i| over two equally long arrays; Infinity when the lengths differ or any entry
 * is NaN (so a NaN can never pass a tolerance check).
 */
export function maxAbsDiff(a, b) {
  if (!a || a.length !== b.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const e = Math.abs(a[i] - b[i]);
    if (!(e <= worst)) worst = Number.isNaN(e) ? Infinity : e;
  }
  return worst;
}

/** Floating-point operations of one simd_peak_rows pass (scripts/bench/simd_peak.cpp): 1920 x 16. */
export const SIMD_PEAK_FLOP_PER_PASS = 30_720;

/**
 * The wasm SIMD128 float32 multiply+add peak in GFLOP/s: `create` is createSimdPeak (the module
 * build/bench/simd_peak.js). For each loop shape (rows = 4, 5, 6: see simd_peak.cpp), warm-up
 * calls first (V8 compiles wasm in a baseline tier, then optimises), then `reps` calls of
 * `passes` passes each (1.9 GFLOP); the best call of any shape counts.
 */
export async function simdPeak(create, { now, passes = 62_500, reps = 5 }) {
  const mod = await create();
  let best = { peak_gflops: 0 };
  for (const rows of [4, 5, 6]) {
    for (let i = 0; i < 3; i++) mod._simd_peak_rows(rows, passes / 10);
    for (let i = 0; i < reps; i++) {
      const t0 = now();
      mod._simd_peak_rows(rows, passes);
      const ms = now() - t0;
      const gflops = (passes * SIMD_PEAK_FLOP_PER_PASS) / (ms * 1e6);
      if (gflops > best.peak_gflops) best = { peak_gflops: gflops, best_ms: ms, rows, passes };
    }
  }
  return best;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
