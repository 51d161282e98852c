#!/usr/bin/env node
// The benchmark harness behind scripts/bench.sh (run that: it installs and builds first).
//
//   node scripts/bench/bench.mjs [--quick] [--no-browser] [--no-page] [--no-scaling]
//                                [--out docs/benchmarks.md] [--configs n,d,h]... (repeat --configs for each)
//   node scripts/bench/bench.mjs --report-only   (re-renders the last run's build/bench/results.json)
//   node scripts/bench/bench.mjs --page-only     (redoes only the page timings and download size of
//                                                 that run, says so in the report, re-renders)
//
// One run, one machine: PyTorch (native, the reference), our core natively and as wasm (node and
// headless Chromium), onnxruntime-web 1.17.3 and 1.30.0, tfjs-backend-wasm 4.22 on the same
// inputs (scripts/bench/torch_bench.py writes them), every result compared with PyTorch's output
// and per-head weights; then the page's own timings and download size, and how our time and
// memory grow with n and d. Writes the tables to --out (not with --quick).
// --quick: the (5, 8, 2) case only, 3 repetitions, agreement checks only (nothing written).
// Exit status 1 when any system disagrees with PyTorch beyond the tolerances (TOLERANCE, report.mjs).
//
// This file parses the options, runs the systems and puts the run together; beside it:
// common.mjs (paths, CPU pinning, flop count), page_timings.mjs (the page's timings and download
// size), scaling.mjs (time and memory against n and d), report.mjs (the Markdown and the check).
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ORT_SYSTEMS, median } from './systems.mjs';
import {
  BENCH,
  BENCH_CPU,
  DATA,
  HERE,
  NATIVE_BENCH,
  RESULTS,
  ROOT,
  ROUNDS,
  SIMD_PEAK,
  WASM,
  find,
  log,
  pinned,
  sh,
} from './common.mjs';
import { collectPageTimings, downloadSize, openIsolated } from './page_timings.mjs';
import { scaling } from './scaling.mjs';
import { finish } from './report.mjs';

export { flops } from './common.mjs';
export { PAGE_TARGETS, collectEnglishTimings, collectKeystrokeTimings } from './page_timings.mjs';
export { SCALING_D, SCALING_N, logSlope } from './scaling.mjs';
export { TOLERANCE, pairedRatio, targetCheck } from './report.mjs';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export const CONFIGS = [
  [5, 8, 2],
  [64, 128, 4],
  [128, 512, 8],
  [512, 768, 12],
  [2048, 768, 12],
];
const QUICK_CONFIGS = [[5, 8, 2]];

function runJsonLines(cmd0, args0, { env = {}, cwd = ROOT } = {}) {
  const [cmd, args] = pinned(cmd0, args0);
  const r = spawnSync(cmd, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}:\n${r.stderr}`);
  }
  return r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

// ---------------------------------------------------------------------------------------------
// Systems
// ---------------------------------------------------------------------------------------------

const SINGLE_THREAD = { OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };

function runPytorch(configs, reps) {
  log('PyTorch: writing inputs, goldens and ONNX models, timing nn.MultiheadAttention');
  const args = [
    path.join(HERE, 'torch_bench.py'),
    '--out',
    DATA,
    '--budget',
    String(reps.budgetMs / 1000),
    '--min-reps',
    String(reps.minReps),
    '--max-reps',
    String(reps.maxReps),
    '--configs',
    ...configs.map((c) => c.join(',')),
  ];
  return runJsonLines('/usr/bin/python3', args, { env: SINGLE_THREAD }).map((r) => ({
    ...r,
    key: 'pytorch',
    label: `PyTorch ${r.torch} nn.MultiheadAttention, 1 thread (native)`,
    max_abs_err_output: 0,
    max_abs_err_weights: 0,
    reference: true,
  }));
}

/**
 * The native build's GEMM for the labels: "Eigen + OpenBLAS sgemm" where CMake found OpenBLAS
 * (MHA_USE_BLAS), else "Eigen". Run with SINGLE_THREAD either way, as PyTorch.
 */
function nativeGemm() {
  const cache = path.join(ROOT, 'build', 'native', 'CMakeCache.txt');
  const text = existsSync(cache) ? readFileSync(cache, 'utf8') : '';
  return /^MHA_USE_BLAS:BOOL=ON$/m.test(text) && /^BLAS_openblas_WORKS:INTERNAL=1$/m.test(text)
    ? 'Eigen + OpenBLAS sgemm'
    : 'Eigen';
}

function runNative(configs, reps) {
  log('ours, native');
  const label = `mha-lab core, native (g++, build/native, ${nativeGemm()}, 1 thread)`;
  return configs.flatMap(([n, d, h]) =>
    runJsonLines(
      NATIVE_BENCH,
      [
        'case',
        path.join(DATA, `n${n}_d${d}_h${h}`),
        n,
        d,
        h,
        reps.budgetMs,
        reps.minReps,
        reps.maxReps,
      ].map(String),
      { env: SINGLE_THREAD },
    ).map((r) => ({
      ...r,
      key: 'ours-native',
      label,
    })),
  );
}

/** The core's own timing tool (build/native/mha_bench, docs/cli.md), where the build has it: the
 * same layer API on random weights of its own, so a cross-check of the driver's timing, without an
 * agreement check. */
function runMhaBench(configs, reps) {
  const exe = path.join(ROOT, 'build', 'native', 'mha_bench');
  if (!existsSync(exe)) return [];
  log('ours, native, build/native/mha_bench');
  return configs.flatMap(([n, d, h]) => {
    const count = reps.maxReps <= 3 ? 3 : n >= 1024 ? 5 : 20;
    return runJsonLines(exe, [n, d, h, count].map(String), { env: SINGLE_THREAD }).map((r) => ({
      ...r,
      key: 'ours-native-mha_bench',
      label: 'mha-lab core, native: build/native/mha_bench (own random weights)',
      n,
      d,
      h,
      unchecked: true,
    }));
  });
}

/**
 * One row per (system, configuration) from the rows of several rounds: the median of the rounds'
 * medians (round_medians keeps them), the smallest call, the calls of all rounds, the largest
 * disagreement with PyTorch of any round.
 */
export function mergeRounds(rows) {
  const groups = new Map();
  for (const r of rows) {
    const k = `${r.key}|${r.n},${r.d},${r.h}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  const worst = (a, b) =>
    a === 'Infinity' || b === 'Infinity' ? 'Infinity' : Math.max(Number(a), Number(b));
  return [...groups.values()].map((g) => ({
    ...g[0],
    median_ms: median(g.map((r) => r.median_ms)),
    min_ms: Math.min(...g.map((r) => r.min_ms)),
    reps: g.reduce((a, r) => a + r.reps, 0),
    round_medians: g.map((r) => r.median_ms),
    max_abs_err_output: g.map((r) => r.max_abs_err_output).reduce(worst),
    max_abs_err_weights: g.map((r) => r.max_abs_err_weights).reduce(worst),
  }));
}

/** The best of several peak measurements (a peak is a best case), or null. */
const bestPeak = (runs) =>
  runs.filter(Boolean).sort((a, b) => b.peak_gflops - a.peak_gflops)[0] ?? null;

/** The wasm SIMD128 f32 multiply+add peak under node (null when bench.sh did not build it). */
function runPeakNode() {
  if (!existsSync(SIMD_PEAK)) return null;
  log('wasm SIMD128 multiply+add peak (node)');
  return runJsonLines(process.execPath, [path.join(HERE, 'run_node.mjs'), '--peak', SIMD_PEAK])[0];
}

const NODE_SYSTEMS = {
  'ours-wasm': { system: 'ours', label: 'mha-lab wasm, forward (copies) (node)' },
  'ours-wasm-views': {
    system: 'ours-views',
    label: 'mha-lab wasm, forwardViews (zero-copy) (node)',
    optional: true,
  },
  // ONNX Runtime on both graphs of each case (systems.mjs ORT_SYSTEMS): the exported one and the
  // minimal one; the faster of the two, size by size, is the peer the targets hold us to.
  ...Object.fromEntries(
    Object.entries(ORT_SYSTEMS).map(([key, [version, graph]]) => [
      key,
      { system: key, label: `onnxruntime-web ${version} wasm SIMD, ${graph} graph (node)` },
    ]),
  ),
  tfjs: { system: 'tfjs', label: 'tfjs-backend-wasm 4.22 SIMD (node)' },
};

/** One node process for system `key`; an optional system this build lacks is skipped ([]). */
function runNode(key, configs, reps) {
  const { system, label, optional } = NODE_SYSTEMS[key];
  log(label);
  const args = [
    path.join(HERE, 'run_node.mjs'),
    '--system',
    system,
    '--data',
    DATA,
    '--wasm',
    WASM,
    '--budget-ms',
    String(reps.budgetMs),
    '--min-reps',
    String(reps.minReps),
    '--max-reps',
    String(reps.maxReps),
    ...configs.map((c) => c.join(',')),
  ];
  try {
    return runJsonLines(process.execPath, args).map((r) => ({
      ...r,
      key,
      label: `${r.name} (node)`,
    }));
  } catch (e) {
    if (!optional) throw e;
    log(`skipped ${label}: ${e.message.split('\n').find((l) => l.includes('Error')) ?? e.message}`);
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Headless Chromium
// ---------------------------------------------------------------------------------------------

async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Copies the benchmark page, our module and the ONNX Runtime builds next to build/bench/data. */
function stageBrowserFiles() {
  for (const f of ['index.html', 'bench_page.mjs'])
    copyFileSync(path.join(HERE, 'page', f), path.join(BENCH, f));
  copyFileSync(path.join(HERE, 'systems.mjs'), path.join(BENCH, 'systems.mjs'));
  copyFileSync(WASM, path.join(BENCH, 'mha_wasm.js'));
  if (!existsSync(SIMD_PEAK))
    throw new Error(`${SIMD_PEAK} is missing: run scripts/bench.sh (it builds it)`);
  const nm = path.join(HERE, 'node_modules');
  const stage = (pkg, dir, files) => {
    mkdirSync(path.join(BENCH, dir), { recursive: true });
    for (const f of files) copyFileSync(path.join(nm, pkg, 'dist', f), path.join(BENCH, dir, f));
  };
  stage('ort117', 'ort117', ['ort.wasm.min.js', 'ort-wasm-simd.wasm', 'ort-wasm.wasm']);
  stage('ort130', 'ort130', [
    'ort.wasm.min.mjs',
    'ort-wasm-simd-threaded.mjs',
    'ort-wasm-simd-threaded.wasm',
  ]);
}

async function runChromium(browser, keys, configs, reps) {
  const { startServer } = await import('../serve.mjs');
  stageBrowserFiles();
  const server = await startServer({ dir: BENCH, port: 0 });
  const out = [];
  let peak = null;
  try {
    {
      // the SIMD128 peak in this browser, on a page of its own
      log('wasm SIMD128 multiply+add peak in headless Chromium');
      const problems = [];
      const { page, close } = await openIsolated(
        browser,
        `${server.url}index.html`,
        new URL(server.url).origin,
        problems,
      );
      try {
        await page.waitForSelector('html[data-ready="true"]', { timeout: 30000 });
        peak = {
          ...(await page.evaluate(() => window.simdPeak())),
          env: `Chromium ${await browser.version()}`,
        };
      } finally {
        await close();
      }
      if (problems.length) throw new Error(`benchmark page (peak): ${problems.join('; ')}`);
    }
    for (const key of keys) {
      log(`${key} in headless Chromium`);
      const problems = [];
      const { page, close } = await openIsolated(
        browser,
        `${server.url}index.html`,
        new URL(server.url).origin,
        problems,
      );
      try {
        await page.waitForSelector('html[data-ready="true"]', { timeout: 30000 });
        const rows = await page.evaluate((o) => window.benchRun(o), {
          system: { 'ours-wasm': 'ours', 'ours-wasm-views': 'ours-views' }[key] ?? key,
          configs,
          ...reps,
        });
        const version = await browser.version();
        for (const r of rows) {
          out.push({
            ...r,
            key: `${key}@chromium`,
            env: `Chromium ${version}`,
            label: `${r.name} (Chromium ${version.split('.')[0]})`,
          });
        }
      } finally {
        await close();
      }
      if (problems.length) throw new Error(`benchmark page (${key}): ${problems.join('; ')}`);
    }
  } finally {
    await server.close();
  }
  return { rows: out, peak };
}

/** CPU 0's caches as sysfs lists them, e.g. "L1d 48K, L1i 64K, L2 2048K, L3 491520K (shared by CPUs 0-1)". */
function cacheSizes() {
  const dir = '/sys/devices/system/cpu/cpu0/cache';
  if (!existsSync(dir)) return '';
  const read = (f) => (existsSync(f) ? readFileSync(f, 'utf8').trim() : '');
  return readdirSync(dir)
    .filter((e) => /^index\d+$/.test(e))
    .sort()
    .map((e) => {
      const at = (f) => read(path.join(dir, e, f));
      const kind = { Data: 'd', Instruction: 'i' }[at('type')] ?? '';
      const shared = at('shared_cpu_list');
      return `L${at('level')}${kind} ${at('size')}${shared && shared !== '0' ? ` (shared by CPUs ${shared})` : ''}`;
    })
    .join(', ');
}

export function machineInfo() {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    // Family, model and stepping tell apart CPUs a virtual machine names alike ("Intel Xeon Processor").
    cpu_id: ['cpu family', 'model', 'stepping']
      .map((k) => sh(`grep -m1 -E '^${k}\\s*:' /proc/cpuinfo | cut -d: -f2`).trim())
      .join('/'),
    caches: cacheSizes(),
    cores: os.cpus().length,
    memory_gib: (os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()}`,
    os: sh('. /etc/os-release && echo $PRETTY_NAME'),
    flags: ['avx2', 'fma', 'avx512f']
      .filter((f) => sh(`grep -m1 -ow ${f} /proc/cpuinfo`))
      .join(', '),
    node: process.version,
    gxx: sh('g++ --version | head -1'),
    emcc: sh('NODE_PATH=/usr/share/nodejs em++ --version 2>/dev/null | head -1'),
    chromium: sh(`${CHROMIUM} --version 2>/dev/null`),
    torch: sh("/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null"),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${Version} is dpkg-query's format field
    openblas: sh("dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null"),
    blas: sh('readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3'),
    commit: sh(`git -C ${ROOT} rev-parse --short HEAD`),
    pinned_cpu: BENCH_CPU,
  };
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      'no-browser': { type: 'boolean', default: false },
      'no-page': { type: 'boolean', default: false },
      'no-scaling': { type: 'boolean', default: false },
      out: { type: 'string', default: path.join(ROOT, 'docs', 'benchmarks.md') },
      configs: { type: 'string', multiple: true },
      'report-only': { type: 'boolean', default: false },
      'page-only': { type: 'boolean', default: false },
      dist: { type: 'string', default: path.join(ROOT, 'dist') }, // the built page to time
    },
  });
  if (values['report-only']) {
    // re-render the last run's build/bench/results.json
    const run = JSON.parse(readFileSync(RESULTS, 'utf8'));
    finish({ ...run, started: new Date(run.started) }, values.out);
    return;
  }
  if (values['page-only']) {
    // redo the page timings and download size of the last run's results
    const run = JSON.parse(readFileSync(RESULTS, 'utf8'));
    const pageRun = {
      started: new Date().toISOString(),
      commit: sh(`git -C ${ROOT} rev-parse --short HEAD`),
      load_before: os
        .loadavg()
        .map((v) => v.toFixed(2))
        .join(', '),
    };
    const browser = await launchChromium();
    let firstLoad;
    try {
      ({ rows: run.page, firstLoad } = await collectPageTimings(browser, { dist: values.dist }));
    } finally {
      await browser.close();
    }
    run.sizes = downloadSize(values.dist, firstLoad);
    pageRun.load_after = os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(', ');
    run.pageRun = pageRun;
    writeFileSync(RESULTS, JSON.stringify(run, null, 1));
    finish({ ...run, started: new Date(run.started) }, values.out);
    return;
  }
  const started = new Date();
  const load = {
    before: os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(', '),
  };
  const quick = values.quick;
  const configs = values.configs
    ? values.configs.map((c) => c.split(',').map(Number))
    : quick
      ? QUICK_CONFIGS
      : CONFIGS;
  const reps = quick
    ? { budgetMs: 1, minReps: 3, maxReps: 3 } // mha_bench takes a budget of 1 ms or more
    : { budgetMs: 2000, minReps: 5, maxReps: 200 };
  mkdirSync(DATA, { recursive: true });

  const results = [
    ...runPytorch(configs, reps),
    ...runNative(configs, reps),
    ...runMhaBench(configs, reps),
  ];
  // The wasm systems run in ROUNDS rounds, one system after the other in each (tfjs, the slowest
  // by far, in the first only): a transient slowdown of this shared 2-core machine then hits one
  // round of one system, and the median over the rounds drops it. Five short rounds rather than
  // three long ones: one process's speed at (64, 128, 4) differed by up to 2x from the next
  // process's, for our module and ONNX Runtime alike, so more processes beat longer ones.
  const rounds = [];
  for (let round = 0; round < ROUNDS(quick); round++) {
    for (const key of Object.keys(NODE_SYSTEMS)) {
      if (round === 0 || key !== 'tfjs') rounds.push(...runNode(key, configs, reps));
    }
  }
  results.push(...mergeRounds(rounds));
  const peakRuns = Array.from({ length: ROUNDS(quick) }, runPeakNode).filter(Boolean);
  const peak = { node: bestPeak(peakRuns), chromium: null };

  // The fastest ONNX Runtime version under node (the sum over the configurations of its faster
  // graph's median) also runs in Chromium, on both graphs. The benchmark page loads ONNX Runtime
  // only: tfjs is the slowest peer.
  const total = (keys) =>
    configs.reduce(
      (a, c) => a + Math.min(...keys.map((k) => find(results, k, c)?.median_ms ?? Infinity)),
      0,
    );
  const byVersion = new Map();
  for (const [key, [version]] of Object.entries(ORT_SYSTEMS))
    byVersion.set(version, [...(byVersion.get(version) ?? []), key]);
  const fastest = [...byVersion.values()].sort((a, b) => total(a) - total(b))[0];
  // Ours in Chromium through the zero-copy API when this build has it (the page's fast path).
  const oursKey = results.some((r) => r.key === 'ours-wasm-views')
    ? 'ours-wasm-views'
    : 'ours-wasm';
  const browserKeys = [oursKey, ...fastest];
  let page = null,
    sizes = null,
    scale = null,
    firstLoad = null;
  if (!quick && !values['no-browser']) {
    const browser = await launchChromium();
    try {
      const chromiumRows = [];
      const chromiumPeaks = [];
      for (let round = 0; round < ROUNDS(quick); round++) {
        const chromium = await runChromium(browser, browserKeys, configs, reps);
        chromiumRows.push(...chromium.rows);
        chromiumPeaks.push(chromium.peak);
      }
      results.push(...mergeRounds(chromiumRows));
      peak.chromium = bestPeak(chromiumPeaks);
    } finally {
      await browser.close();
    }
    // The page timings in a browser of their own, as --page-only does: not the one that has just
    // run minutes of wasm at up to 2048 tokens (its processes' memory and state stay behind).
    if (!values['no-page']) {
      const pageBrowser = await launchChromium();
      try {
        ({ rows: page, firstLoad } = await collectPageTimings(pageBrowser, { dist: values.dist }));
      } finally {
        await pageBrowser.close();
      }
    }
  }
  if (!quick) sizes = downloadSize(values.dist, firstLoad);
  if (!quick && !values['no-scaling']) scale = scaling({ budgetMs: 1000, minReps: 3, maxReps: 20 });
  load.after = os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(', ');

  const args = []; // this run's options, for the doc's reproduce line (--out FILE left out)
  for (let i = 2; i < process.argv.length; i++) {
    if (process.argv[i] === '--out') i++;
    else if (!process.argv[i].startsWith('--out=')) args.push(process.argv[i]);
  }
  const run = {
    results,
    configs,
    browserKeys,
    page,
    sizes,
    scale,
    peak,
    info: machineInfo(),
    started,
    load,
    args,
    reps,
  };
  writeFileSync(RESULTS, JSON.stringify(run, null, 1));
  finish(run, quick ? null : values.out);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`bench: ${e.stack ?? e}`);
    process.exit(2);
  });
}
