// What the benchmark's modules share (bench.mjs, page_timings.mjs, scaling.mjs, report.mjs): the
// paths of the build and of a run's files, the logger, the CPU the single-thread processes are
// pinned to, the flop count, the lookup of a result row and the number of rounds.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..', '..');
export const BENCH = path.join(ROOT, 'build', 'bench');
export const DATA = path.join(BENCH, 'data');
// The core's timing tool (cpp/bench/mha_bench.cpp): its case and scaling forms drive the native rows.
export const NATIVE_BENCH = path.join(ROOT, 'build', 'native', 'mha_bench');
export const SIMD_PEAK = path.join(BENCH, 'simd_peak.js'); // scripts/bench/simd_peak.cpp, built by bench.sh
export const RESULTS = path.join(BENCH, 'results.json');
// The attention module the page loads: mha_wasm_core.js (createMhaCore) where the build splits the
// date model off, else the one mha_wasm.js (createMhaModule). Same attention code either way.
export const WASM =
  ['mha_wasm_core.js', 'mha_wasm.js']
    .map((f) => path.join(ROOT, 'build', 'wasm', f))
    .find(existsSync) ?? path.join(ROOT, 'build', 'wasm', 'mha_wasm.js');

/** Floating-point operations counted for one self-attention forward (multiply + add = 2):
 * the q/k/v projections 2·n·d·3d, the scores and A·V 2·2·n²·d, out_proj 2·n·d². Softmax, bias
 * and scaling are not counted. */
export function flops(n, d) {
  return 2 * n * d * 3 * d + 2 * 2 * n * n * d + 2 * n * d * d;
}

export const log = (...a) => console.error('bench:', ...a);

/** The trimmed stdout of a bash command line ('' when it prints nothing or fails). */
export function sh(cmd) {
  const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
  return (r.stdout || '').trim();
}

/**
 * The CPU every single-thread process of the benchmark runs on (native, PyTorch, node; not
 * Chromium, which is several processes), with taskset: the last CPU this process may use
 * (/proc/self/status Cpus_allowed_list), or BENCH_CPU (one of those); null (not pinned) without
 * taskset or with BENCH_CPU=none. Systems compared with each other then share one CPU: on a
 * virtual machine the vCPUs can differ in speed, the difference coming and going with the host
 * (scripts/bench/notes.md), and an unpinned system's rounds would mix them.
 */
export const BENCH_CPU = (() => {
  if (process.env.BENCH_CPU === 'none' || spawnSync('taskset', ['--version']).status !== 0)
    return null;
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
    throw new Error(
      `BENCH_CPU=${process.env.BENCH_CPU}: not a CPU this process may use (${list ?? allowed.join(',')}), or 'none'`,
    );
  }
  return cpu;
})();

/** cmd and args, run under `taskset -c BENCH_CPU` when pinning. */
export const pinned = (cmd, args) =>
  BENCH_CPU === null ? [cmd, args] : ['taskset', ['-c', String(BENCH_CPU), cmd, ...args]];

/** The row of `results` for system `key` and configuration cfg, or undefined. */
export const find = (results, key, [n, d, h]) =>
  results.find((r) => r.key === key && r.n === n && r.d === d && r.h === h);

/** Rounds of the wasm systems (node and Chromium); 1 with --quick. */
export const ROUNDS = (quick) => (quick ? 1 : 5);
