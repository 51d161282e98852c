// The figures of docs/head-experiments.md, exported by the page itself: opens dist/index.html
// (file://) in headless Chromium, answers each experiment's question, reveals it and saves every
// chart with the page's own Save SVG button into docs/figures/.
//
//   node scripts/docs/export_experiment_figures.mjs [--dist dist] [--out docs/figures]
//
// Needs ./scripts/build.sh (dist/ with the English model and the experiments' files of web/).
import { mkdirSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: path.join(ROOT, 'dist') },
    out: { type: 'string', default: path.join(ROOT, 'docs', 'figures') },
  },
});
mkdirSync(values.out, { recursive: true });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const url = pathToFileURL(path.join(path.resolve(values.dist), 'index.html'));
  await page.goto(`${url.href}#mode=english`);
  await page.waitForSelector('#english-panel[data-state="ready"]', { timeout: 60_000 });
  for (const id of ['prune', 'date', 'sweep', 'replay']) {
    const box = `#english-exp-${id}`;
    if (!(await page.$(box))) continue;
    await page.click(`${box} summary`);
    await page.check(`${box} input[type="radio"] >> nth=0`);
    await page.click(`${box} button[data-reveal]`);
    const buttons = await page.$$(`${box} .en-exp-save button:first-child`);
    for (const b of buttons) {
      const [d] = await Promise.all([page.waitForEvent('download'), b.click()]);
      const target = path.join(values.out, d.suggestedFilename());
      copyFileSync(await d.path(), target);
      console.log(`export_experiment_figures: ${path.relative(ROOT, target)}`);
    }
  }
} finally {
  await browser.close();
}
