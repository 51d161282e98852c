// The benchmark page (scripts/bench/bench.mjs drives it in headless Chromium): the same systems
// and timing loop as under node (systems.mjs), on data fetched from the local server.
//   await window.benchRun({system: 'ours'|'ours-views'|a key of ORT_SYSTEMS, configs: [[n, d, h], ...],
//                          budgetMs, minReps, maxReps})
//   → [{system, name, version, n, d, h, median_ms, min_ms, reps, max_abs_err_output,
//       max_abs_err_weights}]
//   await window.simdPeak() → {peak_gflops, best_ms, rows, passes, env}
import {
  ONNX_GRAPHS,
  ORT_SYSTEMS,
  oursWasm,
  onnxRuntime,
  timeRunner,
  median,
  maxAbsDiff,
  simdPeak,
} from './systems.mjs';

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`cannot load ${src}`));
    document.head.append(s);
  });
}

async function f32(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Float32Array(await r.arrayBuffer());
}

async function makeSystem(key) {
  if (key === 'ours' || key === 'ours-views') {
    // Classic script (bench.mjs copies the module the page loads here): defines createMhaCore, or
    // createMhaModule where the build has one module only.
    await loadScript('mha_wasm.js');
    const factory = globalThis.createMhaCore ?? globalThis.createMhaModule;
    return oursWasm(await factory(), { views: key === 'ours-views' });
  }
  if (key in ORT_SYSTEMS) {
    const [version, graph] = ORT_SYSTEMS[key];
    let ort;
    if (version === '1.17.3') {
      await loadScript('ort117/ort.wasm.min.js'); // classic script: defines ort
      ort = globalThis.ort;
      ort.env.wasm.wasmPaths = new URL('ort117/', location.href).href;
    } else {
      ort = await import('./ort130/ort.wasm.min.mjs');
      ort.env.wasm.wasmPaths = new URL('ort130/', location.href).href;
    }
    return onnxRuntime(ort, `onnxruntime-web ${version} wasm SIMD`, graph);
  }
  throw new Error(`unknown system ${key}`);
}

async function loadCase([n, d, h], withOnnx) {
  const dir = `data/n${n}_d${d}_h${h}/`;
  const c = { n, d, h };
  for (const k of ['x', 'in_proj_weight', 'in_proj_bias', 'out_proj_weight', 'out_proj_bias']) {
    c[k] = await f32(`${dir}${k}.f32`);
  }
  if (withOnnx) {
    c.onnx = {};
    for (const [graph, file] of Object.entries(ONNX_GRAPHS)) {
      const r = await fetch(`${dir}${file}`);
      if (!r.ok) throw new Error(`${dir}${file}: HTTP ${r.status}`);
      c.onnx[graph] = new Uint8Array(await r.arrayBuffer());
    }
  }
  c.ref = { output: `${dir}torch_output.f32`, weights: `${dir}torch_weights.f32` };
  return c;
}

window.benchRun = async ({ system: key, configs, budgetMs = 2000, minReps = 5, maxReps = 200 }) => {
  const system = await makeSystem(key);
  const out = [];
  for (const cfg of configs) {
    const c = await loadCase(cfg, key.startsWith('ort'));
    const runner = await system.prepare(c);
    const { times, inner, result } = await timeRunner(runner, {
      now: () => performance.now(),
      budgetMs,
      minReps,
      maxReps,
    });
    // Compared before dispose(): zero-copy results are views into the layer's memory.
    const errOutput = maxAbsDiff(result.output, await f32(c.ref.output));
    const errWeights = maxAbsDiff(result.weights, await f32(c.ref.weights));
    runner.dispose();
    out.push({
      system: key,
      name: system.name,
      version: system.version,
      env: navigator.userAgent,
      n: c.n,
      d: c.d,
      h: c.h,
      median_ms: median(times),
      min_ms: Math.min(...times),
      reps: times.length,
      inner,
      max_abs_err_output: Number.isFinite(errOutput) ? errOutput : 'Infinity',
      max_abs_err_weights: Number.isFinite(errWeights) ? errWeights : 'Infinity',
    });
  }
  return out;
};
/** The wasm SIMD128 f32 multiply+add peak in this browser (simd_peak.js, staged by bench.mjs). */
window.simdPeak = async () => {
  await loadScript('simd_peak.js'); // classic script: defines createSimdPeak
  return {
    ...(await simdPeak(globalThis.createSimdPeak, { now: () => performance.now() })),
    env: navigator.userAgent,
  };
};

document.getElementById('status').textContent = 'ready';
document.documentElement.dataset.ready = 'true';
