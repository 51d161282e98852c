#!/usr/bin/env node
// Times one system under node on benchmark cases written by torch_bench.py (scripts/bench.sh
// runs one process per system, so no two wasm runtimes share a heap or a JIT).
//
//   node scripts/bench/run_node.mjs --system SYSTEM --data build/bench/data \
//       --configs 5,8,2 64,128,4 [--wasm build/wasm/mha_wasm.js] [--budget-ms 2000] \
//       [--min-reps 5] [--max-reps 200]
//     SYSTEM: ours, ours-views (our module, forward or forwardViews), ort117, ort130 (ONNX
//     Runtime 1.17.3 or 1.30.0 on the exported graph), ort117-minimal, ort130-minimal (on the
//     minimal graph; systems.mjs ORT_SYSTEMS), tfjs
//   node scripts/bench/run_node.mjs --peak build/bench/simd_peak.js   (the wasm SIMD128 f32
//       multiply+add peak: {peak_gflops, best_ms, rows, passes})
//   node scripts/bench/run_node.mjs --scaling N,D,H [--wasm ...]   (our module, random inputs,
//       prints median_ms and wasm_memory_bytes: one process per point)
//
// Prints one JSON line per case: {system, name, version, n, d, h, median_ms, min_ms, reps,
// max_abs_err_output, max_abs_err_weights}; the errors compare the last run's output (n*d) and
// per-head weights (h*n*n) with PyTorch's (torch_output.f32, torch_weights.f32 of the case).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  ONNX_GRAPHS,
  ORT_SYSTEMS,
  oursWasm,
  onnxRuntime,
  tfjs,
  timeRunner,
  median,
  maxAbsDiff,
  simdPeak,
} from './systems.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** Reads a raw float32 file as a Float32Array of its own (not a view into node's buffer pool). */
export function readF32(file) {
  const b = readFileSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** One case of the data folder: see the legend in systems.mjs. */
export function loadCase(dataDir, [n, d, h], { onnx = true } = {}) {
  const dir = path.join(dataDir, `n${n}_d${d}_h${h}`);
  const f = (name) => readF32(path.join(dir, `${name}.f32`));
  return {
    n,
    d,
    h,
    dir,
    x: f('x'),
    in_proj_weight: f('in_proj_weight'),
    in_proj_bias: f('in_proj_bias'),
    out_proj_weight: f('out_proj_weight'),
    out_proj_bias: f('out_proj_bias'),
    onnx: onnx
      ? Object.fromEntries(
          Object.entries(ONNX_GRAPHS).map(([graph, file]) => [
            graph,
            new Uint8Array(readFileSync(path.join(dir, file))),
          ]),
        )
      : null,
  };
}

export async function makeSystem(key, { wasm } = {}) {
  if (key in ORT_SYSTEMS) {
    const [version, graph] = ORT_SYSTEMS[key];
    // 1.17.3: the CommonJS build for node (dist/ort.node.min.js), ort-wasm-simd.wasm, no threads;
    // 1.30.0: the ESM build for node, ort-wasm-simd-threaded.wasm with numThreads = 1.
    const ort = version === '1.17.3' ? require('ort117') : await import('ort130');
    return onnxRuntime(ort, `onnxruntime-web ${version} wasm SIMD`, graph);
  }
  switch (key) {
    case 'ours':
    case 'ours-views': {
      const createMhaModule = require(path.resolve(wasm));
      return oursWasm(await createMhaModule(), { views: key === 'ours-views' });
    }
    case 'tfjs': {
      const tf = await import('@tensorflow/tfjs-core');
      const wasmBackend = await import('@tensorflow/tfjs-backend-wasm');
      const dist = path.join(HERE, 'node_modules/@tensorflow/tfjs-backend-wasm/dist') + path.sep;
      wasmBackend.setWasmPaths(dist);
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      if (!(await tf.setBackend('wasm')))
        throw new Error('tfjs: the wasm backend did not initialise');
      await tf.ready();
      const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
      return tfjs(tf, `tfjs-backend-wasm ${wasmBackend.version_wasm}${simd ? ' SIMD' : ''}`);
    }
    default:
      throw new Error(
        `unknown --system ${key} (ours, ours-views, ${Object.keys(ORT_SYSTEMS).join(', ')}, tfjs)`,
      );
  }
}

/**
 * Scaling point for our wasm module: seeded random inputs (no files), timed, then the module's
 * memory: wasm_memory_bytes only grows, so in a fresh process it is the heap's high-water mark.
 */
async function scalingPoint(wasm, [n, d, h], opts) {
  const createMhaModule = require(path.resolve(wasm));
  const mod = await createMhaModule();
  let seed = n * 1009 + d * 7 + h;
  const rand = (count, scale) => {
    const a = new Float32Array(count);
    for (let i = 0; i < count; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0; // LCG: uniform in [-scale, scale)
      a[i] = ((seed / 2 ** 32) * 2 - 1) * scale;
    }
    return a;
  };
  const w = 1 / Math.sqrt(d);
  const system = oursWasm(mod);
  const before = mod.memoryStats();
  const runner = await system.prepare({
    n,
    d,
    h,
    x: rand(n * d, 1),
    in_proj_weight: rand(3 * d * d, w),
    in_proj_bias: new Float32Array(3 * d),
    out_proj_weight: rand(d * d, w),
    out_proj_bias: new Float32Array(d),
  });
  const { times } = await timeRunner(runner, opts);
  const after = mod.memoryStats();
  runner.dispose();
  return {
    system: 'ours',
    env: `node ${process.version}`,
    n,
    d,
    h,
    median_ms: median(times),
    min_ms: Math.min(...times),
    reps: times.length,
    wasm_memory_bytes_before: before.wasm_memory_bytes,
    wasm_memory_bytes: after.wasm_memory_bytes,
  };
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      system: { type: 'string' },
      data: { type: 'string', default: 'build/bench/data' },
      configs: { type: 'string', multiple: true },
      wasm: { type: 'string', default: 'build/wasm/mha_wasm.js' },
      'budget-ms': { type: 'string', default: '2000' },
      'min-reps': { type: 'string', default: '5' },
      'max-reps': { type: 'string', default: '200' },
      scaling: { type: 'string' },
      peak: { type: 'string' },
    },
  });
  const configs = [...(values.configs ?? []), ...positionals].map((s) => s.split(',').map(Number));
  const opts = {
    now: () => performance.now(),
    budgetMs: Number(values['budget-ms']),
    minReps: Number(values['min-reps']),
    maxReps: Number(values['max-reps']),
  };
  if (values.peak) {
    const peak = await simdPeak(require(path.resolve(values.peak)), {
      now: () => performance.now(),
    });
    console.log(JSON.stringify({ ...peak, env: `node ${process.version}` }));
    return;
  }
  if (values.scaling) {
    console.log(
      JSON.stringify(await scalingPoint(values.wasm, values.scaling.split(',').map(Number), opts)),
    );
    return;
  }
  const system = await makeSystem(values.system, { wasm: values.wasm });
  for (const cfg of configs) {
    const c = loadCase(values.data, cfg, { onnx: values.system.startsWith('ort') });
    const runner = await system.prepare(c);
    const { times, inner, result } = await timeRunner(runner, opts);
    // Compared before dispose(): zero-copy results are views into the layer's memory.
    const errOutput = maxAbsDiff(result.output, readF32(path.join(c.dir, 'torch_output.f32')));
    const errWeights = maxAbsDiff(result.weights, readF32(path.join(c.dir, 'torch_weights.f32')));
    runner.dispose();
    console.log(
      JSON.stringify({
        system: values.system,
        name: system.name,
        version: system.version,
        env: `node ${process.version}`,
        n: c.n,
        d: c.d,
        h: c.h,
        median_ms: median(times),
        min_ms: Math.min(...times),
        reps: times.length,
        inner,
        // JSON has no Infinity: a failed comparison travels as the string "Infinity".
        max_abs_err_output: Number.isFinite(errOutput) ? errOutput : 'Infinity',
        max_abs_err_weights: Number.isFinite(errWeights) ? errWeights : 'Infinity',
      }),
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`run_node: ${e.stack ?? e}`);
    process.exit(1);
  });
}
