// How our core's time and peak memory grow with n and d (native and wasm under node, one fresh
// process per point), for scripts/bench/bench.mjs; report.mjs renders and fits them.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { HERE, NATIVE_BENCH, ROOT, WASM, log, pinned } from './common.mjs';

export const SCALING_N = [64, 128, 256, 512, 1024, 2048, 4096];
export const SCALING_D = [64, 128, 256, 512, 1024, 2048];
export const SCALING_FIXED_N = 512;

/** Our core at each scaling point (SCALING_N at d_model 768, 12 heads; SCALING_D at n SCALING_FIXED_N,
 * d_head 64), natively and as wasm, each in a fresh process: one row per point, with the error
 * instead of timings where the core refuses the point. */
export function scaling(reps) {
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
      [
        'native',
        NATIVE_BENCH,
        ['scaling', p.n, p.d, p.h, reps.budgetMs, reps.minReps, reps.maxReps].map(String),
      ],
      [
        'wasm',
        process.execPath,
        [
          path.join(HERE, 'run_node.mjs'),
          '--scaling',
          `${p.n},${p.d},${p.h}`,
          '--wasm',
          WASM,
          '--budget-ms',
          String(reps.budgetMs),
          '--min-reps',
          String(reps.minReps),
          '--max-reps',
          String(reps.maxReps),
        ],
      ],
    ]) {
      const r = spawnSync(...pinned(cmd, args), {
        cwd: ROOT,
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (r.status === 0) {
        row[name] = JSON.parse(r.stdout.split('\n').find((l) => l.startsWith('{')));
      } else {
        const lines = (r.stderr || `exit ${r.status}`).trim().split('\n');
        row[name] = {
          error: (lines.find((l) => /error/i.test(l)) ?? lines[0]).replace(
            /^.*?(Error|error): /,
            '',
          ),
        };
      }
    }
    out.push(row);
  }
  return out;
}

/** Least-squares slope of log(y) against log(x). */
export function logSlope(xs, ys) {
  const lx = xs.map(Math.log),
    ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / lx.length,
    my = ly.reduce((a, b) => a + b, 0) / ly.length;
  let num = 0,
    den = 0;
  for (let i = 0; i < lx.length; i++) {
    num += (lx[i] - mx) * (ly[i] - my);
    den += (lx[i] - mx) ** 2;
  }
  return num / den;
}
