#!/usr/bin/env node
// The benchmark harness behind scripts/bench.sh (run that: it installs and builds first).
//
//   node scripts/bench/bench.mjs [--quick] [--no-browser] [--no-page] [--no-scaling]
//                                [--out docs/benchmarks.md] [--configs n,d,h ...]
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
// Exit status 1 when any system disagrees with PyTorch beyond the tolerances below.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { median } from './systems.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const BENCH = path.join(ROOT, 'build', 'bench');
const DATA = path.join(BENCH, 'data');
// The core's timing tool (cpp/bench/mha_bench.cpp): its case and scaling forms drive the native rows.
const NATIVE_BENCH = path.join(ROOT, 'build', 'native', 'mha_bench');
const SIMD_PEAK = path.join(BENCH, 'simd_peak.js'); // scripts/bench/simd_peak.cpp, built by bench.sh
const RESULTS = path.join(BENCH, 'results.json');
// The attention module the page loads: mha_wasm_core.js (createMhaCore) where the build splits the
// date model off, else the one mha_wasm.js (createMhaModule). Same attention code either way.
const WASM = ['mha_wasm_core.js', 'mha_wasm.js'].map((f) => path.join(ROOT, 'build', 'wasm', f)).find(existsSync)
  ?? path.join(ROOT, 'build', 'wasm', 'mha_wasm.js');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Agreement with PyTorch (float32, one thread): largest absolute difference allowed. Inputs are
 * N(0, 1), weights Xavier-uniform, biases N(0, 0.1), so outputs are O(1) and weights in [0, 1]. */
export const TOLERANCE = Object.freeze({ output: 1e-4, weights: 1e-5 });

export const CONFIGS = [[5, 8, 2], [64, 128, 4], [128, 512, 8], [512, 768, 12], [2048, 768, 12]];
const QUICK_CONFIGS = [[5, 8, 2]];

/** Floating-point operations counted for one self-attention forward (multiply + add = 2):
 * the q/k/v projections 2·n·d·3d, the scores and A·V 2·2·n²·d, out_proj 2·n·d². Softmax, bias
 * and scaling are not counted. */
export function flops(n, d) {
  return 2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d;
}

const log = (...a) => console.error('bench:', ...a);

/**
 * The CPU every single-thread process of the benchmark runs on (native, PyTorch, node; not
 * Chromium, which is several processes), with taskset: the last CPU this process may use
 * (/proc/self/status Cpus_allowed_list), or BENCH_CPU (one of those); null (not pinned) without
 * taskset or with BENCH_CPU=none. Systems compared with each other then share one CPU. On
 * 2 December at 01:15 this 2-vCPU machine ran our wasm forward at (512, 768, 12) in 84–87 ms on
 * CPU 1 and 126–138 on CPU 0 (taskset, 3 processes each), and an unpinned run's rounds of ours
 * alternated between the two while ONNX Runtime's did not; a second measurement at 02:40 found no
 * difference between the CPUs: the effect comes and goes with the host.
 */
const BENCH_CPU = (() => {
  if (process.env.BENCH_CPU === 'none' || spawnSync('taskset', ['--version']).status !== 0) return null;
  const status = existsSync('/proc/self/status') ? readFileSync('/proc/self/status', 'utf8') : '';
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1];
  const allowed = list
    ? list.split(',').flatMap((r) => {
      const [a, b = a] = r.split('-').map(Number);
      return Array.from({ length: b - a + 1 }, (_, k) => a + k);
    })
    : os.cpus().map((_, k) => k);
  if (process.env.BENCH_CPU === undefined) return Math.max(...allowed);
  const cpu = Number(process.env.BENCH_CPU);
  if (!Number.isInteger(cpu) || !allowed.includes(cpu)) {
    throw new Error(`BENCH_CPU=${process.env.BENCH_CPU}: not a CPU this process may use (${list ?? allowed.join(',')}), or 'none'`);
  }
  return cpu;
})();

/** cmd and args, run under `taskset -c BENCH_CPU` when pinning. */
const pinned = (cmd, args) => (BENCH_CPU === null ? [cmd, args] : ['taskset', ['-c', String(BENCH_CPU), cmd, ...args]]);

function runJsonLines(cmd0, args0, { env = {}, cwd = ROOT } = {}) {
  const [cmd, args] = pinned(cmd0, args0);
  const r = spawnSync(cmd, args, {
    cwd, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 << 20,
  });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}:\n${r.stderr}`);
  }
  return r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

const cfgKey = ({ n, d, h }) => `${n},${d},${h}`;

/** The row of `results` for system `key` and configuration cfg, or undefined. */
const find = (results, key, [n, d, h]) => results.find((r) => r.key === key && r.n === n && r.d === d && r.h === h);

// ---------------------------------------------------------------------------------------------
// Systems
// ---------------------------------------------------------------------------------------------

const SINGLE_THREAD = { OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };

function runPytorch(configs, reps) {
  log('PyTorch: writing inputs, goldens and ONNX models, timing nn.MultiheadAttention');
  const args = [path.join(HERE, 'torch_bench.py'), '--out', DATA, '--budget', String(reps.budgetMs / 1000),
    '--min-reps', String(reps.minReps), '--max-reps', String(reps.maxReps), '--configs',
    ...configs.map((c) => c.join(','))];
  return runJsonLines('/usr/bin/python3', args, { env: SINGLE_THREAD }).map((r) => ({
    ...r, key: 'pytorch', label: `PyTorch ${r.torch} nn.MultiheadAttention, 1 thread (native)`,
    max_abs_err_output: 0, max_abs_err_weights: 0, reference: true,
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
    ? 'Eigen + OpenBLAS sgemm' : 'Eigen';
}

function runNative(configs, reps) {
  log('ours, native');
  const label = `mha-lab core, native (g++, build/native, ${nativeGemm()}, 1 thread)`;
  return configs.flatMap(([n, d, h]) =>
    runJsonLines(NATIVE_BENCH, ['case', path.join(DATA, `n${n}_d${d}_h${h}`), n, d, h, reps.budgetMs,
      reps.minReps, reps.maxReps].map(String), { env: SINGLE_THREAD }).map((r) => ({
      ...r, key: 'ours-native', label,
    })));
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
      ...r, key: 'ours-native-mha_bench', label: 'mha-lab core, native: build/native/mha_bench (own random weights)',
      n, d, h, unchecked: true,
    }));
  });
}

/** Rounds of the wasm systems (node and Chromium); 1 with --quick. */
const ROUNDS = (quick) => (quick ? 1 : 5);

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
  const worst = (a, b) => (a === 'Infinity' || b === 'Infinity' ? 'Infinity' : Math.max(Number(a), Number(b)));
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

/**
 * The paired ratio of two merged rows (mergeRounds): the median over rounds of
 * b.round_medians[r] / a.round_medians[r]. In each round the systems run one right after the
 * other, so a round's ratio compares them under the same load; on a machine whose speed drifts
 * between rounds (up to 2x here) it is steadier than the ratio of the two medians. null unless
 * both rows have the same number of rounds, at least 2.
 */
export function pairedRatio(a, b) {
  const x = a?.round_medians, y = b?.round_medians;
  if (!x || !y || x.length !== y.length || x.length < 2) return null;
  return median(x.map((v, r) => y[r] / v));
}

/** The best of several peak measurements (a peak is a best case), or null. */
const bestPeak = (runs) => runs.filter(Boolean).sort((a, b) => b.peak_gflops - a.peak_gflops)[0] ?? null;

/** The wasm SIMD128 f32 multiply+add peak under node (null when bench.sh did not build it). */
function runPeakNode() {
  if (!existsSync(SIMD_PEAK)) return null;
  log('wasm SIMD128 multiply+add peak (node)');
  return runJsonLines(process.execPath, [path.join(HERE, 'run_node.mjs'), '--peak', SIMD_PEAK])[0];
}

const NODE_SYSTEMS = {
  'ours-wasm': { system: 'ours', label: 'mha-lab wasm, forward (copies) (node)' },
  'ours-wasm-views': { system: 'ours-views', label: 'mha-lab wasm, forwardViews (zero-copy) (node)', optional: true },
  ort117: { system: 'ort117', label: 'onnxruntime-web 1.17.3 wasm SIMD (node)' },
  ort130: { system: 'ort130', label: 'onnxruntime-web 1.30.0 wasm SIMD (node)' },
  tfjs: { system: 'tfjs', label: 'tfjs-backend-wasm 4.22 SIMD (node)' },
};

/** One node process for system `key`; an optional system this build lacks is skipped ([]). */
function runNode(key, configs, reps) {
  const { system, label, optional } = NODE_SYSTEMS[key];
  log(label);
  const args = [path.join(HERE, 'run_node.mjs'), '--system', system, '--data', DATA, '--wasm', WASM,
    '--budget-ms', String(reps.budgetMs), '--min-reps', String(reps.minReps),
    '--max-reps', String(reps.maxReps), ...configs.map((c) => c.join(','))];
  try {
    return runJsonLines(process.execPath, args).map((r) => ({ ...r, key, label: `${r.name} (node)` }));
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
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Milliseconds a new page's window is left alone before it navigates (page timings only). Each new
 * window of Chromium 156's headless mode loads the browser's own omnibox popup (a WebUI page in a
 * renderer of its own, chrome://omnibox-popup.top-chrome/, about 60 scripts): measured from
 * navigation at once, that start-up competed with ours on this 2-core machine (a trace shows it
 * alongside our page; the first grid took 607 ms instead of 346). A user's browser window is
 * already open when a course page is navigated to.
 */
const WINDOW_SETTLE_MS = 1500;
/**
 * Milliseconds the harness leaves a loading page alone before it asks anything: Playwright's
 * first evaluation injects its own script into the page (~20–30 ms on the page's thread in a
 * trace, landing between the frame with the first grid and the page's measure of it), and its
 * waits poll the page at every animation frame.
 */
const LOAD_QUIET_MS = 2000;
/** Changes measured after a pause (a third kind of update), the pause, and the quiet wait after each. */
const PAUSED_CHANGES = 6, PAUSE_BEFORE_CHANGE_MS = 1000, AFTER_PAUSED_CHANGE_MS = 1000;
/**
 * The pause before each change of the typing column: the keys of one word (five keys 60 ms apart,
 * a brisk typist) between two changes of the token count.
 */
const TYPING_PAUSE_MS = 300;

/**
 * A page in a fresh browser context, navigated to `url`; requests to other origins are problems.
 * `intercept`: every request goes through Playwright's route, which aborts another origin's. The
 * page timings do not intercept: a routed request waits for this process (the first grid took
 * 412 ms instead of 361, paired); the page's CSP (default-src 'self') refuses another origin, and
 * its console error and any request that left anyway are reported as problems.
 */
async function openIsolated(browser, url, origin, problems, requests = [], { settleMs = 0, intercept = true } = {}) {
  const context = await browser.newContext();
  const ours = (u) => u.startsWith(origin) || u.startsWith('data:') || u.startsWith('blob:');
  if (intercept) {
    await context.route('**/*', (route) => {
      const u = route.request().url();
      if (ours(u)) return route.continue();
      problems.push(`request to another origin: ${u}`);
      return route.abort('blockedbyclient');
    });
  }
  const page = await context.newPage();
  page.on('request', (r) => {
    requests.push(r.url());
    if (!intercept && !ours(r.url())) problems.push(`request to another origin: ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  if (settleMs) await page.waitForTimeout(settleMs);
  await page.goto(url);
  return { page, close: () => context.close() };
}

/** Copies the benchmark page, our module and the ONNX Runtime builds next to build/bench/data. */
function stageBrowserFiles() {
  for (const f of ['index.html', 'bench_page.mjs']) copyFileSync(path.join(HERE, 'page', f), path.join(BENCH, f));
  copyFileSync(path.join(HERE, 'systems.mjs'), path.join(BENCH, 'systems.mjs'));
  copyFileSync(WASM, path.join(BENCH, 'mha_wasm.js'));
  if (!existsSync(SIMD_PEAK)) throw new Error(`${SIMD_PEAK} is missing: run scripts/bench.sh (it builds it)`);
  const nm = path.join(HERE, 'node_modules');
  const stage = (pkg, dir, files) => {
    mkdirSync(path.join(BENCH, dir), { recursive: true });
    for (const f of files) copyFileSync(path.join(nm, pkg, 'dist', f), path.join(BENCH, dir, f));
  };
  stage('ort117', 'ort117', ['ort.wasm.min.js', 'ort-wasm-simd.wasm', 'ort-wasm.wasm']);
  stage('ort130', 'ort130', ['ort.wasm.min.mjs', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm']);
}

async function runChromium(browser, keys, configs, reps) {
  const { startServer } = await import('../serve.mjs');
  stageBrowserFiles();
  const server = await startServer({ dir: BENCH, port: 0 });
  const out = [];
  let peak = null;
  try {
    { // the SIMD128 peak in this browser, on a page of its own
      log('wasm SIMD128 multiply+add peak in headless Chromium');
      const problems = [];
      const { page, close } = await openIsolated(browser, `${server.url}index.html`, new URL(server.url).origin, problems);
      try {
        await page.waitForSelector('html[data-ready="true"]', { timeout: 30000 });
        peak = { ...(await page.evaluate(() => window.simdPeak())), env: `Chromium ${await browser.version()}` };
      } finally {
        await close();
      }
      if (problems.length) throw new Error(`benchmark page (peak): ${problems.join('; ')}`);
    }
    for (const key of keys) {
      log(`${key} in headless Chromium`);
      const problems = [];
      const { page, close } = await openIsolated(browser, `${server.url}index.html`, new URL(server.url).origin, problems);
      try {
        await page.waitForSelector('html[data-ready="true"]', { timeout: 30000 });
        const rows = await page.evaluate((o) => window.benchRun(o),
          { system: { 'ours-wasm': 'ours', 'ours-wasm-views': 'ours-views' }[key] ?? key, configs, ...reps });
        const version = await browser.version();
        for (const r of rows) {
          out.push({ ...r, key: `${key}@chromium`, env: `Chromium ${version}`, label: `${r.name} (Chromium ${version.split('.')[0]})` });
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

// ---------------------------------------------------------------------------------------------
// The page's own timings (against PAGE_TARGETS) and download size
// ---------------------------------------------------------------------------------------------

export const PAGE_TARGETS = {
  update_small_ms: 16, update_large_ms: 100, first_grid_ms: 300, download_kb: 150, date_keystroke_ms: 50,
};
/** The date typed into the Date translator, one key at a time, for its per-keystroke timing. */
const KEYSTROKE_DATE = 'Nov 30, 2026';
const PAGE_CASES = [
  { tokens: 64, d: 512, h: 8, target: PAGE_TARGETS.update_small_ms },
  { tokens: 512, d: 768, h: 12, target: PAGE_TARGETS.update_large_ms },
  // "2048 tokens x 12 heads stay usable": hover time and the computing core's wasm memory too.
  { tokens: 2048, d: 768, h: 12, large: true, loads: 2, updates: 2 },
];

/** Hover over the last head's cell (query n - 2, key n / 3): the page's pointermove handler time
 * (ms) and the wasm memory of the core that computed the view (bytes), as the page reports it. */
async function hoverAndHeap(page, n, h) {
  const sel = `canvas[data-head="${h - 1}"]`;
  const g = await page.$eval(sel, (c) => ({ cell: Number(c.dataset.cell), x: Number(c.dataset.originX), y: Number(c.dataset.originY) }));
  const box = await page.locator(sel).boundingBox();
  const hover_ms = await page.evaluate(([s, x, y]) => {
    const c = document.querySelector(s);
    const t0 = performance.now();
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: x, clientY: y, bubbles: true, pointerType: 'mouse' }));
    return performance.now() - t0;
  }, [sel, box.x + g.x + (Math.floor(n / 3) + 0.5) * g.cell, box.y + g.y + (n - 2 + 0.5) * g.cell]);
  const heap = Number(await page.getAttribute('#core-version', 'data-wasm-memory-bytes'));
  return { hover_ms, heap_bytes: Number.isFinite(heap) && heap > 0 ? heap : null };
}

/** `count` one-letter-per-word tokens ("a b c … a1 b1 …"), each a word of the page's tokenizer. */
function sentence(count, variant = '') {
  const words = [];
  for (let i = 0; i < count; i++) words.push(`${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26) || ''}`);
  if (variant) words[0] = variant;
  return words.join(' ');
}

/**
 * Makes each change of `changes` ([kind, text, pauseMs]) to #text and waits for the page's
 * mha:update; pushes its time to row[kind] (kind null: a change to start from, not recorded),
 * after waiting `pauseMs` (without asking the page anything) before it. Counts in
 * row[`${kind}_ahead`] / row[`${kind}_kept`] the changes drawn from a result computed ahead / shown
 * before (#heads data-ahead / data-kept: compute.js). Sets row.note when the page measures none.
 */
async function measureChanges(page, row, changes) {
  for (const [kind, text, pauseMs = 0] of changes) {
    if (pauseMs) await page.waitForTimeout(pauseMs);
    const before = (await measures(page, 'mha:update')).length;
    await page.fill('#text', text);
    try {
      await page.waitForFunction((b) => performance.getEntriesByName('mha:update', 'measure').length > b,
        before, { timeout: 60000 });
    } catch {
      row.note = "not instrumented (no performance.measure('mha:update') after an input change)";
      return;
    }
    if (!kind) continue;
    const all = await measures(page, 'mha:update');
    (row[kind] ??= []).push(all[all.length - 1]);
    await countKept(page, row, kind);
  }
}

/** Counts the last change of `kind` in row[`${kind}_ahead`] or row[`${kind}_kept`] (measureChanges). */
async function countKept(page, row, kind) {
  const { ahead, kept } = await page.$eval('#heads', (e) => ({ ...e.dataset }));
  row[`${kind}_ahead`] = (row[`${kind}_ahead`] ?? 0) + Number(ahead === 'true');
  row[`${kind}_kept`] = (row[`${kind}_kept`] ?? 0) + Number(kept === 'true');
}

/** Milliseconds of the measures named `name` on the page, in order (none: []). */
const measures = (page, name) =>
  page.evaluate((nm) => performance.getEntriesByName(nm, 'measure').map((e) => e.duration), name);

async function collectPageTimings(browser, { dist, updates = 10, loads = 7 }) {
  const { startServer } = await import('../serve.mjs');
  const server = await startServer({ dir: dist, port: 0 });
  const origin = new URL(server.url).origin;
  const rows = [];
  let firstLoad = [];
  try {
    for (const c of [{ tokens: null }, ...PAGE_CASES]) {
      const hash = c.tokens ? `#text=${encodeURIComponent(sentence(c.tokens))}&d_model=${c.d}&num_heads=${c.h}` : '';
      const label = c.tokens ? `${c.tokens} tokens, d_model ${c.d}, ${c.h} heads` : 'default page (no address)';
      log(`page timings: ${label}`);
      const row = { label, default_page: !c.tokens, first_grid: [], update: [], note: '' };
      for (let i = 0; i < (c.loads ?? loads); i++) {
        const problems = [];
        const requests = [];
        const { page, close } = await openIsolated(browser, server.url + 'index.html' + hash, origin, problems, requests,
          { settleMs: WINDOW_SETTLE_MS, intercept: false });
        try {
          await page.waitForTimeout(LOAD_QUIET_MS);
          await page.waitForSelector('html[data-ready="true"]', { timeout: 60000 });
          // The first grid, or an alert saying why there is none: a view too large for the page's
          // thread is computed by the workers, after data-ready (compute.js WORKER_FIRST_COST).
          await page.waitForFunction(() => document.documentElement.dataset.firstGridMs !== undefined ||
            document.getElementById('alert')?.textContent.trim(), null, { timeout: 120000 }).catch(() => {});
          // The page is told (d_model, h, tokens); did it draw them, or refuse with a note?
          const shown = await page.evaluate(() => ({
            grids: document.querySelectorAll('canvas[data-head]').length,
            d: document.getElementById('d_model')?.value,
            h: document.getElementById('num_heads')?.value,
            text: document.getElementById('text')?.value,
            notes: [...document.querySelectorAll('[role="status"], .note, .error')].map((e) => e.textContent.trim()).filter(Boolean).join(' | '),
          }));
          if (c.tokens && (shown.grids < c.h || Number(shown.d) !== c.d || Number(shown.h) !== c.h ||
                           shown.text !== sentence(c.tokens))) {
            row.note = `page did not draw this case (${shown.grids} grids, d_model ${shown.d}, ${shown.h} heads): ${shown.notes.slice(0, 200)}`;
            break;
          }
          await page.waitForTimeout(200);
          if (!c.tokens && i === 0) { // what the default page fetched: its first load
            firstLoad = [...new Set(requests.filter((u) => u.startsWith(origin)).map((u) => new URL(u).pathname.slice(1) || 'index.html'))];
          }
          const fg = await measures(page, 'mha:first-grid');
          if (fg.length) row.first_grid.push(fg[0]);
          if (c.large) (row.hover ??= []).push(await hoverAndHeap(page, c.tokens, c.h));
          if (c.tokens && i === 0) {
            const count = c.updates ?? updates;
            const half = Math.floor(count / 2);
            // Typing (the target's column): one token more each change, n − count/2 … n + count/2 − 1,
            // each TYPING_PAUSE_MS after the last was drawn (the keys of a word): the page may
            // have computed it ahead in that pause (compute.js), which is counted.
            await measureChanges(page, row, [[null, sentence(c.tokens - half - 1, 't')],
              ...Array.from({ length: count }, (_, u) => ['update', sentence(c.tokens - half + u, `t${u}`), TYPING_PAUSE_MS])]);
            // Same token count: the first word changes at n tokens (the page reuses its last result).
            if (!row.note) {
              await measureChanges(page, row, Array.from({ length: count }, (_, u) => ['update_same_count', sentence(c.tokens, `v${u}`)]));
            }
            // Nothing computed ahead or kept: the count goes down by 2 each change, back to back,
            // from n + count − 2 (after a jump to n + count): every change computes.
            if (!row.note && !c.large) {
              await measureChanges(page, row, [[null, sentence(c.tokens + count, 'k')],
                ...Array.from({ length: count }, (_, u) => ['update_not_kept', sentence(c.tokens + count - 2 * (u + 1), `k${u}`)])]);
            }
            // A change after a pause, as a user types again after reading: the page has built
            // the last view's hidden tables meanwhile (tables.js, after 400 ms), and the harness
            // asks nothing until the change is drawn.
            for (let u = 0; !c.large && !row.note && u < PAUSED_CHANGES; u++) {
              await page.waitForTimeout(PAUSE_BEFORE_CHANGE_MS);
              const before = (await measures(page, 'mha:update')).length;
              await page.fill('#text', sentence(u % 2 ? c.tokens : c.tokens - 1, `p${u}`));
              await page.waitForTimeout(AFTER_PAUSED_CHANGE_MS);
              const all = await measures(page, 'mha:update');
              if (all.length > before) {
                (row.update_after_pause ??= []).push(all[all.length - 1]);
                await countKept(page, row, 'update_after_pause');
              }
            }
          }
        } finally {
          await close();
        }
        if (problems.length) row.note += ` problems: ${problems.join('; ')}`;
      }
      if (!row.first_grid.length && !row.note.startsWith('page did not')) {
        row.note = `${row.note ? `${row.note}; ` : ''}first grid not instrumented (no performance.measure('mha:first-grid'))`;
      }
      rows.push({ ...row, ...c });
    }
    log('page timings: Date translator keystrokes');
    rows.push(await collectKeystrokeTimings(browser, { serverUrl: server.url }));
  } finally {
    await server.close();
  }
  return { rows, firstLoad };
}

/**
 * The Date translator's time per keystroke (measured here, not asserted by
 * tests/browser/date_translator.test.mjs: benchmarks are not timed tests): KEYSTROKE_DATE typed one key at a time into
 * `#mode=date`, each key's update waited for (one grid column per character), and the page's own
 * timing of it read from #date-summary's data-ms (translation, grids, small multiples; the hidden
 * tables follow after the frame). One row of the page table; `loads` fresh pages.
 */
export async function collectKeystrokeTimings(browser, { serverUrl, loads = 3 }) {
  const origin = new URL(serverUrl).origin;
  const row = {
    label: `Date translator: one keystroke ("${KEYSTROKE_DATE}" typed key by key, the page's data-ms)`,
    first_grid: [], update: [], note: '', target: PAGE_TARGETS.date_keystroke_ms, keystroke: true,
  };
  for (let i = 0; i < loads; i++) {
    const problems = [];
    const { page, close } = await openIsolated(browser, `${serverUrl}index.html#mode=date&date=`, origin, problems);
    try {
      await page.waitForSelector('#date-panel[data-state="ready"]', { timeout: 60000 });
      await page.evaluate(() => { // every data-ms the page writes (one per update), even a repeated value
        window.__ms = [];
        const s = document.getElementById('date-summary');
        new MutationObserver(() => window.__ms.push(Number(s.dataset.ms))).observe(s, { attributeFilter: ['data-ms'] });
      });
      await page.click('#date-text');
      for (let k = 1; k <= KEYSTROKE_DATE.length; k++) {
        await page.keyboard.type(KEYSTROKE_DATE[k - 1]);
        await page.waitForFunction((n) => window.__ms.length >= n &&
          document.querySelectorAll('#date-heads table[data-head="0"] th[scope="col"]').length === n, k, { timeout: 15000 });
      }
      row.update.push(...(await page.evaluate(() => window.__ms)));
      const out = await page.textContent('#date-output');
      if (out !== '2026-11-30') row.note = `the page translated "${KEYSTROKE_DATE}" to "${out}"`;
    } catch (e) {
      row.note = `not measured: ${String(e.message ?? e).split('\n')[0]}`;
      break;
    } finally {
      await close();
    }
    if (problems.length) row.note += ` problems: ${problems.join('; ')}`;
  }
  return row;
}

/** gzip -9 sizes of the page's first load (zlib level 9: gzip -9's deflate): the files Chromium
 * fetched for the default page when the page timings ran (the date model is fetched only by the
 * Date translator), else index.html, app.js, style.css and the wasm module the page loads. */
function downloadSize(distDir, firstLoad) {
  const dist = (f) => path.join(distDir, f);
  const wasm = existsSync(dist('mha_wasm_core.js')) ? 'mha_wasm_core.js' : 'mha_wasm.js';
  const files = firstLoad?.length ? firstLoad : ['index.html', 'app.js', 'style.css', wasm];
  return files.map((f) => {
    const p = dist(f);
    if (!existsSync(p)) return { file: f, bytes: null, gzip: null };
    const b = readFileSync(p);
    return { file: f, bytes: b.length, gzip: gzipSync(b, { level: 9 }).length };
  });
}

// ---------------------------------------------------------------------------------------------
// Scaling of our core: time and peak memory against n and d
// ---------------------------------------------------------------------------------------------

export const SCALING_N = [64, 128, 256, 512, 1024, 2048, 4096];
export const SCALING_D = [64, 128, 256, 512, 1024, 2048];
const SCALING_FIXED_N = 512;

function scaling(reps) {
  const points = [
    ...SCALING_N.map((n) => ({ axis: 'n', n, d: 768, h: 12 })),
    // 12 × 4096² weights exceed mha::limits::max_weight_entries (2^26): the core refuses that
    // point (the table shows its error); 4 heads × 4096² = 2^26 is the largest n = 4096 case allowed.
    { axis: 'n', n: 4096, d: 768, h: 4 },
    ...SCALING_D.map((d) => ({ axis: 'd', n: SCALING_FIXED_N, d, h: Math.max(1, d / 64) })),
  ];
  const out = [];
  for (const p of points) {
    log(`scaling n=${p.n} d=${p.d} h=${p.h}`);
    const row = { ...p };
    for (const [name, cmd, args] of [
      ['native', NATIVE_BENCH, ['scaling', p.n, p.d, p.h, reps.budgetMs, reps.minReps, reps.maxReps].map(String)],
      ['wasm', process.execPath, [path.join(HERE, 'run_node.mjs'), '--scaling', `${p.n},${p.d},${p.h}`,
        '--wasm', WASM, '--budget-ms', String(reps.budgetMs), '--min-reps', String(reps.minReps),
        '--max-reps', String(reps.maxReps)]],
    ]) {
      const r = spawnSync(...pinned(cmd, args), { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
      if (r.status === 0) {
        row[name] = JSON.parse(r.stdout.split('\n').find((l) => l.startsWith('{')));
      } else {
        const lines = (r.stderr || `exit ${r.status}`).trim().split('\n');
        row[name] = { error: (lines.find((l) => /error/i.test(l)) ?? lines[0]).replace(/^.*?(Error|error): /, '') };
      }
    }
    out.push(row);
  }
  return out;
}

/** Least-squares slope of log(y) against log(x). */
export function logSlope(xs, ys) {
  const lx = xs.map(Math.log), ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / lx.length, my = ly.reduce((a, b) => a + b, 0) / ly.length;
  let num = 0, den = 0;
  for (let i = 0; i < lx.length; i++) { num += (lx[i] - mx) * (ly[i] - my); den += (lx[i] - mx) ** 2; }
  return num / den;
}

// ---------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------

function sh(cmd) {
  const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
  return (r.stdout || '').trim();
}

function machineInfo() {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memory_gib: (os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()}`,
    os: sh(". /etc/os-release && echo $PRETTY_NAME"),
    flags: ['avx2', 'fma', 'avx512f'].filter((f) => sh(`grep -m1 -ow ${f} /proc/cpuinfo`)).join(', '),
    node: process.version,
    gxx: sh('g++ --version | head -1'),
    emcc: sh('NODE_PATH=/usr/share/nodejs em++ --version 2>/dev/null | head -1'),
    chromium: sh(`${CHROMIUM} --version 2>/dev/null`),
    torch: sh("/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null"),
    openblas: sh("dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null"),
    blas: sh('readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3'),
    commit: sh(`git -C ${ROOT} rev-parse --short HEAD`),
    pinned_cpu: BENCH_CPU,
  };
}

const fmtMs = (v) => (v == null ? '—' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toFixed(3));
const fmtX = (v) => (v == null || !Number.isFinite(v) ? '—' : v >= 10 ? v.toFixed(0) : v.toFixed(2));
const fmtE = (v) => (typeof v === 'number' ? v.toExponential(1) : String(v));

function agrees(r) {
  const eo = Number(r.max_abs_err_output), ew = Number(r.max_abs_err_weights);
  return eo <= TOLERANCE.output && ew <= TOLERANCE.weights;
}

function systemOrder(results) {
  const order = ['ours-native', 'ours-native-mha_bench', 'pytorch', 'ours-wasm', 'ours-wasm-views', 'ours-wasm@chromium',
    'ours-wasm-views@chromium', 'ort117', 'ort117@chromium',
    'ort130', 'ort130@chromium', 'tfjs'];
  const keys = [...new Set(results.map((r) => r.key))];
  return keys.sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

function table(header, rows) {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function report({ results, configs, browserKeys, page, sizes, scale, peak, info, started, load, args, reps, pageRun }) {
  const keys = systemOrder(results);
  const labelOf = (k) => results.find((r) => r.key === k).label;
  const head = ['system', ...configs.map(([n, d, h]) => `(${n}, ${d}, ${h})`)];
  const lines = [];
  const p = (s = '') => lines.push(s);
  p('# Benchmarks');
  p();
  p('Written by `scripts/bench.sh` (do not edit by hand: re-run it). One run, one machine: absolute');
  p('times drift between machines and with load, so compare rows of the same run only.');
  p();
  p(`- Date: ${started.toISOString().replace(/\.\d+Z$/, ' UTC').replace('T', ' ')}; commit \`${info.commit}\``);
  p(`- Machine: ${info.cpu}, ${info.cores} cores (${info.flags || 'no AVX2/FMA flag'}), ${info.memory_gib} GiB, ${info.os}, ${info.kernel}`);
  p(`- Load average (1, 5, 15 min) before: ${load.before}; after: ${load.after} (the run itself raises it). Every system was run one after the other in the same window.`);
  p(`- Toolchains: ${info.gxx}; ${info.emcc}; node ${info.node}; ${info.chromium}`);
  p(`- Peers: PyTorch ${info.torch} (Debian python3-torch) with OpenBLAS ${info.openblas} (\`${info.blas}\`); onnxruntime-web 1.17.3 and 1.30.0, @tensorflow/tfjs-core + tfjs-backend-wasm 4.22.0 (npm, \`scripts/bench/package-lock.json\`)`);
  p(`- Repetitions: one warm-up call, then at least ${reps.minReps} and at most ${reps.maxReps} timed calls, going on until ${reps.budgetMs / 1000} s have passed; the table shows the **median** in milliseconds. The wasm systems (node and Chromium) ran in ${ROUNDS(false)} rounds, one system after the other in each (tfjs in the first only), each round in a fresh process or page: the table shows the median of the rounds' medians (each round's is in \`build/bench/results.json\` as \`round_medians\`), and the SIMD peak is the best of its rounds. In JS (node and Chromium) one sample repeats the call until 1 ms has passed (per-call time = elapsed / calls; a slower call is one sample by itself), because Chromium coarsens \`performance.now()\` to 0.1 ms on a page that is not cross-origin isolated.`);
  p();
  p('## What is measured');
  p();
  p('One self-attention forward, batch 1, float32, **per-head weights returned** (not averaged),');
  p('single thread everywhere, results returned to JS: as copies into JS arrays, or (our `forwardViews` rows, marked zero-copy) as views into wasm memory valid until the next call.');
  p(info.pinned_cpu == null
    ? 'The processes were not pinned to a CPU (no `taskset`, or `BENCH_CPU=none`).'
    : `Every native, PyTorch and node process ran on CPU ${info.pinned_cpu} (\`taskset -c ${info.pinned_cpu}\`; \`BENCH_CPU\` chooses another): this machine's CPUs run the same code at different speeds, so systems compared with each other run on the same one. Chromium is not pinned.`);
  p();
  p('The systems:');
  p();
  p('- **PyTorch**: `nn.MultiheadAttention(d, h, batch_first=True)` in `eval()` under `torch.no_grad()`, `need_weights=True, average_attn_weights=False`, `torch.set_num_threads(1)`, `OPENBLAS_NUM_THREADS=1`. It writes the inputs every other system reads (`build/bench/data`, seeded) and is the reference of the agreement check.');
  p('- **mha-lab native**: `mha::MultiheadAttention::forward` (no intermediates) as built in `build/native` (Release, with the build\'s own flags), driven by `build/native/mha_bench case` (`cpp/bench/mha_bench.cpp`) on the inputs PyTorch was given.');
  p(`- **mha-lab wasm**: \`build/wasm/${path.basename(WASM)}\` (the module the page loads) through its documented API: \`new mod.MultiheadAttention(spec)\`, then per call \`layer.forward({n, query, keep_intermediates: false})\` (results copied into JS-owned arrays) and, where the build has it, \`layer.forwardViews({n, query})\` (zero-copy: views into wasm memory, valid until the next call; docs/js-api.md). The GEMM's micro-kernels are SIMD128 multiply-then-add (2×16 tiles over pairs of 8-column panels, 6×8 for the rest), or 6×8 tiles with relaxed SIMD's fused \`f32x4.relaxed_madd\` (labelled *relaxed-SIMD FMA*) where the engine validates it: Chromium does, node 20 only behind a flag (not given here).`);
  p(`- **onnxruntime-web**: the same module exported by \`torch.onnx.export\` (opset 17, one model per configuration) on the \`wasm\` execution provider, \`ort.env.wasm.numThreads = 1\`, no proxy worker; 1.17.3 loads \`ort-wasm-simd.wasm\`, 1.30.0 \`ort-wasm-simd-threaded.wasm\` (its only CPU build) with one thread.`);
  p('- **tfjs-backend-wasm**: multi-head attention written with tfjs ops (`matMul`, `softmax`, `reshape`, `transpose`; `scripts/bench/systems.mjs`), SIMD build, threads off.');
  p(`- In **headless Chromium** (${info.chromium}): our module and ${browserKeys.filter((k) => !k.startsWith('ours')).join(', ') || 'no peer'} (the fastest wasm peer of the node run), served from \`build/bench\` by \`scripts/serve.mjs\` on 127.0.0.1, no other network.`);
  p();
  p('GFLOP/s counts 2·n·d·3d (q, k, v projections) + 2·2·n²·d (scores and A·V over all heads) + 2·n·d² (out_proj) floating-point operations per forward; softmax, biases and scaling are not counted.');
  p();
  p('## Median time per forward (ms)');
  p();
  p('Configurations are (n tokens, d_model, heads).');
  p();
  p(table(head, keys.map((k) => [labelOf(k), ...configs.map((c) => fmtMs(find(results, k, c)?.median_ms))])));
  p();
  p('## GFLOP/s');
  p();
  p(table(head, keys.map((k) => [labelOf(k), ...configs.map(([n, d, h]) => {
    const r = find(results, k, [n, d, h]);
    return r ? (flops(n, d) / (r.median_ms * 1e6)).toFixed(2) : '—';
  })])));
  p();
  if (peak?.node) {
    p('## Share of the wasm SIMD128 peak');
    p();
    p('The peak: `scripts/bench/simd_peak.cpp`, a GEMM micro-kernel step with B in registers: R = 4, 5 or 6 rows each broadcast one float loaded from memory and multiply it with two four-float vectors into 2R independent accumulators, one `f32x4.mul` and one `f32x4.add` per accumulator (SIMD128 has no fused multiply-add; every product distinct, so none is folded away), best of 5 calls of 1.9 GFLOP per shape after warm-up, best shape. Our share = our GFLOP/s (above) / that peak, in the same runtime.');
    p();
    const share = (key, pk) => configs.map(([n, d, h]) => {
      const r = find(results, key, [n, d, h]);
      return r && pk ? `${(100 * flops(n, d) / (r.median_ms * 1e6) / pk.peak_gflops).toFixed(0)} %` : '—';
    });
    const rows = [['wasm SIMD128 peak, node', `${peak.node.peak_gflops.toFixed(1)} GFLOP/s`, ...configs.map(() => '')]];
    const oursNode = keys.includes('ours-wasm-views') ? 'ours-wasm-views' : 'ours-wasm';
    rows.push([`${labelOf(oursNode)}: share of the node peak`, '', ...share(oursNode, peak.node)]);
    if (peak.chromium) {
      rows.push([`wasm SIMD128 peak, ${peak.chromium.env}`, `${peak.chromium.peak_gflops.toFixed(1)} GFLOP/s`, ...configs.map(() => '')]);
      const oursChromium = `${browserKeys.find((k) => k.startsWith('ours'))}@chromium`;
      if (keys.includes(oursChromium)) rows.push([`${labelOf(oursChromium)}: share of the Chromium peak`, '', ...share(oursChromium, peak.chromium)]);
    }
    p(table(['', 'peak', ...head.slice(1)], rows));
    p();
  }
  p('## Our speed relative to each peer');
  p();
  p('Peer\'s median divided by ours (above 1: ours is faster), same configuration, same run. Our wasm module is set against the wasm peers in the same runtime, our native build against PyTorch. In brackets, for systems timed in the same rounds: the **paired** ratio, the median over rounds of the peer\'s round median divided by ours in that round (the two ran one right after the other, so each round compares them under the same load; this machine\'s speed drifts between rounds).');
  p();
  const ratioRows = [];
  const oursBrowser = browserKeys.find((k) => k.startsWith('ours'));
  const pairs = [['ours-native', 'pytorch'],
    ...['ours-wasm-views', 'ours-wasm'].flatMap((o) => ['ort117', 'ort130', 'tfjs'].map((k) => [o, k])),
    ...browserKeys.filter((k) => k !== oursBrowser).map((k) => [`${oursBrowser}@chromium`, `${k}@chromium`])];
  for (const [o, peer] of pairs) {
    if (!keys.includes(o) || !keys.includes(peer)) continue;
    ratioRows.push([`${labelOf(o)} vs ${labelOf(peer)}`, ...configs.map((c) => {
      const a = find(results, o, c), b = find(results, peer, c);
      if (!a || !b) return '—';
      const paired = pairedRatio(a, b);
      return `${fmtX(b.median_ms / a.median_ms)}×${paired == null ? '' : ` (${fmtX(paired)}×)`}`;
    })]);
  }
  p(table(['ours vs peer', ...head.slice(1)], ratioRows));
  p();
  p('## Agreement with PyTorch');
  p();
  p(`Every system's output (n × d) and per-head weights (h × n × n) from its last timed call, against PyTorch's float32 results for the same inputs: largest absolute difference, output / weights. Tolerances: output ${TOLERANCE.output}, weights ${TOLERANCE.weights} (absolute; outputs are O(1), weights in [0, 1]); NaN anywhere fails.`);
  p();
  p(table(head, keys.filter((k) => k !== 'pytorch').map((k) => [labelOf(k), ...configs.map((c) => {
    const r = find(results, k, c);
    if (!r) return '—';
    if (r.unchecked) return 'not compared (own random inputs)';
    return `${fmtE(Number(r.max_abs_err_output))} / ${fmtE(Number(r.max_abs_err_weights))}${agrees(r) ? '' : ' **FAIL**'}`;
  })])));
  p();
  if (page) {
    p('## The page (against its targets)');
    p();
    if (pageRun) {
      p(`This section and the download size come from a separate pass (\`bench.mjs --page-only\`) at ${pageRun.started.replace(/\.\d+Z$/, ' UTC').replace('T', ' ')} on commit \`${pageRun.commit}\` (load average before ${pageRun.load_before}, after ${pageRun.load_after}), after the main run above: the page changed since.`);
      p();
    }
    p(`Headless Chromium on \`dist/\` served by \`scripts/serve.mjs\` (CSP on). \`mha:first-grid\` is the page's \`performance.measure\` from navigation to the first painted grid, held to the target for the page as served (no address: the course's default view); an address naming a larger view also computes that view before its first grid, reported for information (median of fresh loads: each in a new browser window left alone for ${WINDOW_SETTLE_MS / 1000} s before it navigates, while Chromium loads its own omnibox popup for that window, its requests not intercepted (another origin's would be refused by the CSP and reported), and not asked anything by the harness for its first ${LOAD_QUIET_MS / 1000} s); \`mha:update\` from an input change to all grids painted, median of: **typing** (one token more each change: 2k changes from n − k to n + k − 1 tokens, each ${TYPING_PAUSE_MS} ms after the last change was drawn, as the keys of a word: the page computes the grids' request for one token more and one less in idle time, \`web/src/compute/ahead.js\`, so a change may be drawn from a result computed ahead, counted in the column; this is the column held to the target), **same token count** (the first word changes; the page reuses its last result), **nothing kept** (the count goes down by 2 each change, back to back: 2k changes from n + 2k − 2 to n − 2k tokens, after a jump to n + 2k; not at 2048 tokens: no change finds a result computed ahead or shown before, each computes: the cost of an update without computing ahead), and **after a pause** (the count alternates between n − 1 and n, ${PAUSE_BEFORE_CHANGE_MS / 1000} s after the last change, read ${AFTER_PAUSED_CHANGE_MS / 1000} s later without polling: the page has built its hidden tables in the pause). Back to back: the next change as soon as the last is measured (the harness polls the page at every frame meanwhile). The Date translator row: the page's own time per keystroke (\`#date-summary\` \`data-ms\`: translation, grids, small multiples), median over every key of the date typed key by key in fresh pages.`);
    p();
    const med = (a) => (a?.length ? median(a) : null); // of an even count: the mean of the middle two
    // "12.3 (10 changes, 9 computed ahead)": the median, how many, and how many came from kept results.
    const cell = (r, kind) => {
      const m = med(r[kind]);
      if (m == null) return '—';
      const from = [[r[`${kind}_ahead`], 'computed ahead'], [r[`${kind}_kept`], 'shown before']]
        .filter(([k]) => k).map(([k, what]) => `${k} ${what}`);
      return `${m.toFixed(1)} (${r[kind].length} changes${from.length ? `; ${from.join(', ')}` : ''})`;
    };
    p(table(['case', `mha:update, typing (one token more each change, ${TYPING_PAUSE_MS} ms apart): median (ms)`, 'target', 'mha:update, same token count: median (ms)', 'mha:update, nothing kept (count down by 2, back to back): median (ms)', `mha:update, after a ${PAUSE_BEFORE_CHANGE_MS / 1000} s pause: median (ms)`, 'mha:first-grid median (ms)', 'target', 'note'], page.map((r) => {
      const u = med(r.update), f = med(r.first_grid);
      return [r.label, r.keystroke ? (u == null ? '—' : `${u.toFixed(1)} (${r.update.length} keys)`) : cell(r, 'update'),
        r.target ? `≤ ${r.target} ${u == null ? '' : u <= r.target ? 'met' : '**missed**'}` : '—',
        cell(r, 'update_same_count'), cell(r, 'update_not_kept'), cell(r, 'update_after_pause'),
        f == null ? '—' : `${f.toFixed(0)} (${r.first_grid.length} loads)`,
        // The first-grid target holds for the page as served (as the download budget does);
        // an address naming a larger view adds that view's own computation (its seed's draws and
        // forward: about 700 ms for 2048 tokens alone), reported without a target.
        r.keystroke ? '—' : !(r.default_page ?? r.label.startsWith('default page')) ? 'none (a linked view: its own computation included)'
          : `< ${PAGE_TARGETS.first_grid_ms} ${f == null ? '' : f < PAGE_TARGETS.first_grid_ms ? 'met' : '**missed**'}`,
        r.note || ''];
    })));
    p();
    for (const r of page.filter((x) => x.hover?.length)) {
      const worst = (k) => Math.max(...r.hover.map((x) => x[k] ?? NaN));
      p(`${r.label}: the page's pointermove handler (readout and crosshair on every grid) took at most **${worst('hover_ms').toFixed(1)} ms** over ${r.hover.length} fresh loads (target: hover under 16 ms); the wasm memory of the core that computed the view (\`#core-version\` \`data-wasm-memory-bytes\`) was at most **${(worst('heap_bytes') / 2 ** 20).toFixed(0)} MiB** (target: under 512 MB).`);
      p();
    }
  }
  if (sizes) {
    const total = sizes.reduce((a, s) => a + (s.gzip ?? 0), 0);
    const firstLoadNote = page ? 'every file headless Chromium fetched for the default page; the date model is fetched only by the Date translator' : 'index.html, app.js, style.css and the wasm module; the page timings did not run to list what it fetches';
    p('## Download size');
    p();
    p(`The page's first load (${firstLoadNote}), each file compressed with zlib level 9 (as \`gzip -9\`): **${total} bytes = ${(total / 1000).toFixed(1)} KB** (target ≤ ${PAGE_TARGETS.download_kb} KB = ${PAGE_TARGETS.download_kb * 1000} bytes, as \`tests/web/size_budget.test.mjs\`: ${total <= PAGE_TARGETS.download_kb * 1000 ? 'met' : '**missed**'}).`);
    p();
    p(table(['file', 'bytes', 'gzip -9 bytes'], sizes.map((s) => [`dist/${s.file}`, s.bytes ?? 'missing', s.gzip ?? '—'])));
    p();
    const peerWasm = [['onnxruntime-web 1.17.3', 'ort117/dist/ort-wasm-simd.wasm'], ['onnxruntime-web 1.30.0', 'ort130/dist/ort-wasm-simd-threaded.wasm'],
      ['tfjs-backend-wasm 4.22', '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm']]
      .map(([name, f]) => {
        const fp = path.join(HERE, 'node_modules', f);
        return existsSync(fp) ? `${name} \`${path.basename(f)}\` ${(statSync(fp).size / 2 ** 20).toFixed(2)} MiB` : null;
      }).filter(Boolean);
    p(`For comparison, the peers' wasm binaries alone (uncompressed): ${peerWasm.join('; ')}.`);
    p();
  }
  if (scale) {
    const wasmInitial = scale.find((r) => r.wasm?.wasm_memory_bytes_before)?.wasm?.wasm_memory_bytes_before ?? 0;
    p('## Scaling of our core: time and peak memory against n and d');
    p();
    p(`Expected: time O(h·n²·d_head + n·d²) = O(n²·d + n·d²) (the flop count above), memory O(h·n² + n·d + d²): the returned (h, n, n) weights dominate for large n. Native peak memory: the growth of \`getrusage\` \`ru_maxrss\` from before the first forward to after the last (the inputs and weights are already allocated); wasm: \`mod.memoryStats().wasm_memory_bytes\` after the run, the whole linear memory (it only grows, so this is its high-water mark; it starts at ${(wasmInitial / 2 ** 20).toFixed(0)} MiB, which already holds the small cases), each point in a fresh process. Expected bytes: 4·(h·n² + 5·n·d) — the weights once, plus q, k, v, head outputs and output.`);
    p();
    for (const axis of ['n', 'd']) {
      const rows = scale.filter((r) => r.axis === axis);
      p(axis === 'n' ? '### Against n (d_model 768, 12 heads)' : `### Against d (n ${SCALING_FIXED_N}, d_head 64, h = d/64)`);
      p();
      p(table(['n', 'd', 'h', 'GFLOP', 'native ms', 'native GFLOP/s', 'native peak Δ MiB', 'wasm ms', 'wasm GFLOP/s', 'wasm memory MiB', 'expected Δ MiB'],
        rows.map((r) => {
          const gf = flops(r.n, r.d) / 1e9;
          const nat = r.native, wa = r.wasm;
          const natMem = nat?.peak_rss_kib != null ? ((nat.peak_rss_kib - nat.peak_rss_kib_before) / 1024).toFixed(1) : '—';
          const waMem = wa?.wasm_memory_bytes != null ? (wa.wasm_memory_bytes / 2 ** 20).toFixed(1) : '—';
          return [r.n, r.d, r.h, gf.toFixed(3),
            nat?.error ? `error: ${nat.error}` : fmtMs(nat?.median_ms), nat?.median_ms ? (gf / (nat.median_ms / 1e3)).toFixed(2) : '—', natMem,
            wa?.error ? `error: ${wa.error}` : fmtMs(wa?.median_ms), wa?.median_ms ? (gf / (wa.median_ms / 1e3)).toFixed(2) : '—', waMem,
            ((4 * (r.h * r.n * r.n + 5 * r.n * r.d)) / 2 ** 20).toFixed(1)];
        })));
      p();
      const ok = (which) => rows.filter((r) => r[which]?.median_ms);
      const fits = ['native', 'wasm'].map((which) => {
        const rs = ok(which);
        if (rs.length < 2) return null;
        const xs = rs.map((r) => r[axis]);
        const big = rs.filter((r) => r[axis] >= (axis === 'n' ? 512 : 256));
        const bx = big.map((r) => r[axis]);
        return `${which}: time ∝ ${axis}^${logSlope(xs, rs.map((r) => r[which].median_ms)).toFixed(2)} over ${xs[0]}…${xs[xs.length - 1]} ` +
          `(the flop count predicts ${axis}^${logSlope(xs, rs.map((r) => flops(r.n, r.d))).toFixed(2)}); ` +
          (big.length >= 2 ? `over ${bx[0]}…${bx[bx.length - 1]}: ${axis}^${logSlope(bx, big.map((r) => r[which].median_ms)).toFixed(2)} (flops: ${axis}^${logSlope(bx, big.map((r) => flops(r.n, r.d))).toFixed(2)})` : '');
      }).filter(Boolean);
      p(`Fitted exponents (least squares on log–log): ${fits.join('; ')}.`);
      p();
    }
    // Points whose GFLOP/s departs by more than 30 % from the axis' median: listed for the notes.
    const dep = [];
    for (const which of ['native', 'wasm']) {
      for (const axis of ['n', 'd']) {
        const rows = scale.filter((r) => r.axis === axis && r[which]?.median_ms);
        const rate = (r) => flops(r.n, r.d) / r[which].median_ms;
        const mid = median(rows.map(rate));
        for (const r of rows) {
          const rel = rate(r) / mid;
          if (rel < 0.7 || rel > 1.3) dep.push(`${which} (n ${r.n}, d ${r.d}, h ${r.h}): ${(rel * 100).toFixed(0)} % of the median rate`);
        }
      }
    }
    p(`Points whose GFLOP/s departs by more than 30 % from the median of their axis: ${dep.length ? dep.join('; ') : 'none'}.`);
    p();
  }
  const notes = path.join(HERE, 'notes.md');
  if (existsSync(notes)) {
    p(readFileSync(notes, 'utf8').trim());
    p();
  }
  p('## How to reproduce');
  p();
  p('```sh');
  p(`./scripts/bench.sh${args.length ? ` ${args.join(' ')}` : ''}        # installs what is missing, builds, runs everything above, rewrites this file`);
  p('./scripts/bench.sh --quick   # (5, 8, 2) only, 3 repetitions, agreement checks only');
  p('```');
  p();
  p('Single steps (what bench.sh runs):');
  p();
  p('```sh');
  p(`OPENBLAS_NUM_THREADS=1 /usr/bin/python3 scripts/bench/torch_bench.py --out build/bench/data --configs ${configs.map((c) => c.join(',')).join(' ')}`);
  p('build/native/mha_bench case build/bench/data/n512_d768_h12 512 768 12');
  p('node scripts/bench/run_node.mjs --system ours|ort117|ort130|tfjs --data build/bench/data 512,768,12');
  p('build/native/mha_bench scaling 2048 768 12; node scripts/bench/run_node.mjs --scaling 2048,768,12');
  p('```');
  p();
  return lines.join('\n');
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
  if (values['report-only']) { // re-render the last run's build/bench/results.json
    const run = JSON.parse(readFileSync(RESULTS, 'utf8'));
    finish({ ...run, started: new Date(run.started) }, values.out);
    return;
  }
  if (values['page-only']) { // redo the page timings and download size of the last run's results
    const run = JSON.parse(readFileSync(RESULTS, 'utf8'));
    const pageRun = { started: new Date().toISOString(), commit: sh(`git -C ${ROOT} rev-parse --short HEAD`),
      load_before: os.loadavg().map((v) => v.toFixed(2)).join(', ') };
    const browser = await launchChromium();
    let firstLoad;
    try {
      ({ rows: run.page, firstLoad } = await collectPageTimings(browser, { dist: values.dist }));
    } finally {
      await browser.close();
    }
    run.sizes = downloadSize(values.dist, firstLoad);
    pageRun.load_after = os.loadavg().map((v) => v.toFixed(2)).join(', ');
    run.pageRun = pageRun;
    writeFileSync(RESULTS, JSON.stringify(run, null, 1));
    finish({ ...run, started: new Date(run.started) }, values.out);
    return;
  }
  const started = new Date();
  const load = { before: os.loadavg().map((v) => v.toFixed(2)).join(', ') };
  const quick = values.quick;
  const configs = values.configs ? values.configs.map((c) => c.split(',').map(Number))
    : quick ? QUICK_CONFIGS : CONFIGS;
  const reps = quick ? { budgetMs: 0, minReps: 3, maxReps: 3 } : { budgetMs: 2000, minReps: 5, maxReps: 200 };
  mkdirSync(DATA, { recursive: true });

  const results = [...runPytorch(configs, reps), ...runNative(configs, reps), ...runMhaBench(configs, reps)];
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

  // The fastest wasm peer under node (sum of medians over the configurations) also runs in Chromium.
  const peers = ['ort117', 'ort130']; // the benchmark page loads ONNX Runtime; tfjs is the slowest peer
  const total = (k) => configs.reduce((a, c) => a + (find(results, k, c)?.median_ms ?? Infinity), 0);
  const fastest = [...peers].sort((a, b) => total(a) - total(b))[0];
  // Ours in Chromium through the zero-copy API when this build has it (the page's fast path).
  const oursKey = results.some((r) => r.key === 'ours-wasm-views') ? 'ours-wasm-views' : 'ours-wasm';
  const browserKeys = [oursKey, fastest];
  let page = null, sizes = null, scale = null, firstLoad = null;
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
  load.after = os.loadavg().map((v) => v.toFixed(2)).join(', ');

  const args = []; // this run's options, for the doc's reproduce line (--out FILE left out)
  for (let i = 2; i < process.argv.length; i++) {
    if (process.argv[i] === '--out') i++;
    else if (!process.argv[i].startsWith('--out=')) args.push(process.argv[i]);
  }
  const run = { results, configs, browserKeys, page, sizes, scale, peak, info: machineInfo(), started, load, args, reps };
  writeFileSync(RESULTS, JSON.stringify(run, null, 1));
  finish(run, quick ? null : values.out);
}

/** Prints every result, writes the report to `out` (unless null), exits 1 on a disagreement. */
function finish(run, out) {
  const { results } = run;
  const failures = results.filter((r) => !r.reference && !r.unchecked && !agrees(r));
  for (const r of results) {
    const err = r.unchecked ? 'not compared'
      : `err output ${fmtE(Number(r.max_abs_err_output))} weights ${fmtE(Number(r.max_abs_err_weights))}` +
        `${r.reference ? ' (reference)' : agrees(r) ? ' ok' : ' DISAGREES'}`;
    log(`${r.label.padEnd(58)} (${r.n}, ${r.d}, ${r.h}) median ${fmtMs(r.median_ms).padStart(7)} ms ${err}`);
  }
  if (out) {
    writeFileSync(out, report(run));
    log(`wrote ${path.relative(ROOT, out)} (raw numbers: ${path.relative(ROOT, RESULTS)})`);
  }
  if (failures.length) {
    log(`${failures.length} result(s) disagree with PyTorch beyond output ${TOLERANCE.output} / weights ${TOLERANCE.weights}`);
    process.exit(1);
  }
  log(`every system agrees with PyTorch (output ≤ ${TOLERANCE.output}, weights ≤ ${TOLERANCE.weights})`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(`bench: ${e.stack ?? e}`);
    process.exit(2);
  });
}
