#!/usr/bin/env node
// A/B timing of builds of the wasm core (a benchmark, not a test): which kernel variant is faster,
// under node and in headless Chromium, on a shared machine.
//
//   node scripts/bench/ab_core.mjs A.js B.js [C.js ...] [--browser] [--rounds 9] [--budget-ms 300]
//        [--configs 64,128,4 128,512,8 512,768,12]
//
// Each FILE is a build's mha_wasm_core.js (or mha_wasm.js), copied aside after each build, e.g.
//   cmake --build build/wasm -j2 --target mha_wasm_core && cp build/wasm/mha_wasm_core.js /tmp/a.js
// All builds load into one process (node) or one page (Chromium: /usr/bin/chromium, each build a
// classic script whose factory is kept before the next one loads), each builds a layer on the same
// seeded random weights and times layer.forwardViews({n, query}) (docs/js-api.md) in rounds:
// A, B, C, A, B, C, ... so that load from other processes falls on all of them alike. One sample
// repeats the call until 2 ms have passed (Chromium coarsens performance.now() to 0.1 ms); a
// round's time is the median sample over `--budget-ms`. Printed per configuration: each build's
// median round time (ms) and the median over rounds of its time / the first build's time in the
// same round (the paired ratio: < 1 is faster than the first build), and the largest |difference|
// of its output from the first build's (0 when the kernels do the same arithmetic in the same
// order).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);

/** Runs in node or in the page: `factories` are module factories (createMhaCore). */
async function runRounds(factories, configs, rounds, budgetMs) {
  const mods = [];
  for (const f of factories) mods.push(await f());
  const out = [];
  for (const [n, d, h] of configs) {
    let s = (n * 7919 + d) >>> 0; // LCG: the same inputs for every build
    const rand = () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 4294967296 - 0.5;
    };
    const arr = (len, scale) => Float32Array.from({ length: len }, () => rand() * scale);
    const spec = {
      d_model: d,
      num_heads: h,
      in_proj_weight: arr(3 * d * d, 0.1),
      in_proj_bias: arr(3 * d, 0.1),
      out_proj_weight: arr(d * d, 0.1),
      out_proj_bias: arr(d, 0.1),
    };
    const query = arr(n * d, 1);
    const layers = mods.map((m) => new m.MultiheadAttention(spec));
    const outputs = layers.map((layer) => {
      for (let i = 0; i < 3; i++) layer.forwardViews({ n, query }); // warm-up: V8 optimises hot code
      return layer.forwardViews({ n, query }).output.slice();
    });
    const times = layers.map(() => []);
    for (let r = 0; r < rounds; r++) {
      layers.forEach((layer, v) => {
        const samples = [];
        const start = performance.now();
        while (samples.length < 3 || performance.now() - start < budgetMs) {
          const t0 = performance.now();
          let calls = 0;
          let t = t0;
          do {
            layer.forwardViews({ n, query });
            calls++;
            t = performance.now();
          } while (t - t0 < 2);
          samples.push((t - t0) / calls);
        }
        samples.sort((a, b) => a - b);
        times[v].push(samples[samples.length >> 1]);
      });
    }
    const maxDiff = outputs.map((o) =>
      o.reduce((m, x, i) => Math.max(m, Math.abs(x - outputs[0][i])), 0),
    );
    layers.forEach((layer) => layer.delete());
    out.push({ n, d, h, times, maxDiff });
  }
  return out;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    browser: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '9' },
    'budget-ms': { type: 'string', default: '300' },
    configs: { type: 'string', multiple: true },
  },
});
if (positionals.length < 1) throw new Error('ab_core: give at least one build (FILE.js ...)');
const files = positionals.map((f) => path.resolve(f));
const configs = (values.configs ?? ['64,128,4', '128,512,8', '512,768,12'])
  .flatMap((c) => c.split(' '))
  .filter(Boolean)
  .map((c) => c.split(',').map(Number));
const rounds = Number(values.rounds),
  budgetMs = Number(values['budget-ms']);

let results, env;
if (!values.browser) {
  env = `node ${process.version}`;
  results = await runRounds(
    files.map((f) => require(f)),
    configs,
    rounds,
    budgetMs,
  );
} else {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    env = `Chromium ${browser.version()}`;
    const page = await browser.newPage();
    await page.goto('about:blank');
    for (const [i, f] of files.entries()) {
      await page.addScriptTag({
        content:
          `${readFileSync(f, 'utf8')}\nwindow.__build${i} = ` +
          "typeof createMhaCore !== 'undefined' ? createMhaCore : createMhaModule;",
      });
    }
    const factories = files.map((_, i) => `window.__build${i}`).join(', ');
    results = await page.evaluate(
      `(${runRounds})([${factories}], ${JSON.stringify(configs)}, ${rounds}, ${budgetMs})`,
    );
  } finally {
    await browser.close();
  }
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
};
console.log(`${env}, ${rounds} rounds, ${budgetMs} ms each`);
for (const { n, d, h, times, maxDiff } of results) {
  const cells = files.map((f, v) => {
    const paired = median(times[v].map((t, r) => t / times[0][r]));
    return `${path.basename(f)} ${median(times[v]).toFixed(3)} ms (x${paired.toFixed(3)}, diff ${maxDiff[v].toExponential(1)})`;
  });
  console.log(`(${n}, ${d}, ${h}): ${cells.join('  ')}`);
}
