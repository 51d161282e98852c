// Shared set-up for the browser tests: Debian's Chromium through playwright-core, the built
// page in dist/ served by scripts/serve.mjs and opened from file://, and a watch on every
// page for console errors, failed requests and requests to any other origin.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, writeFile, copyFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'esbuild';
import { startServer } from '../../scripts/serve.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = path.join(ROOT, 'dist');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Throws a clear error when dist/ or Chromium is missing (instead of a confusing timeout). */
export function assertPrerequisites() {
  const missing = ['index.html', 'app.js', 'mha_wasm_core.js', 'mha_wasm.js', 'style.css'].filter(
    (f) => !existsSync(path.join(DIST, f)),
  );
  if (missing.length) {
    throw new Error(
      `dist/ is not built (missing ${missing.join(', ')}): run ./scripts/build.sh, or ` +
        'node scripts/build_web.mjs --wasm build/wasm/mha_wasm.js --out dist, before the browser tests',
    );
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`,
    );
  }
}

export function launchBrowser() {
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

/**
 * The two ways the page is opened: served over http by scripts/serve.mjs, and from disk; `dir`:
 * the built page (default dist/).
 * @returns {Promise<{targets: {name: string, url: string, isOwn: (u: string) => boolean}[],
 *                    close: () => Promise<void>}>}
 */
export async function startTargets(dir = DIST) {
  const server = await startServer({ dir, port: 0 });
  const origin = new URL(server.url).origin;
  const fileBase = `${pathToFileURL(dir).href}/`;
  return {
    targets: [
      { name: 'served over http', url: server.url, isOwn: (u) => new URL(u).origin === origin },
      {
        name: 'opened from file://',
        url: `${fileBase}index.html`,
        isOwn: (u) => u.startsWith(fileBase),
      },
    ],
    close: () => server.close(),
  };
}

/**
 * Opens `target.url + hash` in a fresh context and records every problem:
 * console errors, uncaught exceptions, dialogs (alert/confirm/prompt), failed or >= 400 requests,
 * and requests to anything but the page's own origin (those are also aborted, so nothing can
 * leave the machine). `setup(context)`, if given, runs before the page is created.
 * `path`: another page of dist/ (e.g. 'embed-example.html'); `ready`: the selector to wait for.
 */
export async function openPage(
  browser,
  target,
  hash = '',
  {
    width = 1280,
    height = 900,
    dpr = 1,
    setup,
    path = null,
    ready = 'html[data-ready="true"]',
    contextOptions = {},
  } = {},
) {
  const context = await browser.newContext({
    viewport: { width, height },
    deviceScaleFactor: dpr,
    ...contextOptions,
  });
  // Optional: prepare the context before the page exists (e.g. context.addInitScript(...)).
  if (setup) await setup(context);
  const problems = [];
  const requests = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (target.isOwn(u)) return route.continue();
    problems.push(`request to another origin: ${u}`);
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning')
      problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  // The page never opens a dialog: one would mean that supplied text ran as script.
  page.on('dialog', (d) => {
    problems.push(`dialog (${d.type()}): ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  page.on('request', (r) => {
    const u = r.url();
    requests.push(u);
    if (!u.startsWith('data:') && !u.startsWith('blob:') && !target.isOwn(u)) {
      problems.push(`request to another origin: ${u}`);
    }
  });
  page.on('requestfailed', (r) =>
    problems.push(`failed request: ${r.url()} (${r.failure()?.errorText})`),
  );
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto((path ? new URL(path, target.url).href : target.url) + hash);
  await page.waitForSelector(ready, { timeout: 20000 });
  return {
    page,
    problems,
    requests,
    close: () => context.close(),
  };
}

/**
 * Opens the page (openPage), runs `fn` with it, then checks that nothing went wrong on the way
 * (no console error, failed or foreign request, dialog); always closes the context.
 */
export async function withCheckedPage(browser, target, hash, fn, options) {
  const p = await openPage(browser, target, hash, options);
  try {
    await fn(p);
    assert.deepEqual(p.problems, [], 'no console errors, failed requests or foreign requests');
  } finally {
    await p.close();
  }
}

/** Cell texts of one row of head `head`'s table. */
export function tableRow(page, head, row) {
  return page.$$eval(`table[data-head="${head}"] tbody tr[data-row="${row}"] td`, (tds) =>
    tds.map((td) => td.textContent),
  );
}

/** Centre of cell (row, col) of head `head`'s canvas, in page coordinates (CSS px). */
export async function cellCentre(page, head, row, col) {
  const canvas = page.locator(`canvas[data-head="${head}"]`);
  const box = await canvas.boundingBox();
  const g = await canvas.evaluate((c) => ({
    x: Number(c.dataset.originX),
    y: Number(c.dataset.originY),
    cell: Number(c.dataset.cell),
  }));
  return { x: box.x + g.x + (col + 0.5) * g.cell, y: box.y + g.y + (row + 0.5) * g.cell };
}

/**
 * The RGBA of the backing pixel under CSS point (x, y) of the canvas matching `selector` (CSS px
 * mapped to backing px by the canvas's own ratio: devicePixelRatio for a label canvas, far less
 * for a grid's cells canvas, whose backing store has one pixel per cell).
 * (Copied 1:1 into a scratch canvas made for reading, so the page's canvas is not read back
 * repeatedly, which Chrome would warn about in the console.)
 */
export function canvasPixelAt(page, selector, x, y) {
  return page.$eval(
    selector,
    (c, [px, py]) => {
      // A cells canvas shows the top-left data-pixel-cols of its backing store (heatmap.js).
      const s = Number(c.dataset.pixelCols || c.width) / c.getBoundingClientRect().width;
      const probe = document.createElement('canvas');
      probe.width = 1;
      probe.height = 1;
      const ctx = probe.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(c, Math.floor(px * s), Math.floor(py * s), 1, 1, 0, 0, 1, 1);
      return Array.from(ctx.getImageData(0, 0, 1, 1).data);
    },
    [x, y],
  );
}

/** The RGBA of the pixel under CSS point (x, y) of head `head`'s canvas. */
export function canvasPixel(page, head, x, y) {
  return canvasPixelAt(page, `canvas[data-head="${head}"]`, x, y);
}

/**
 * The RGBA of the screen pixel at page point (x, y) (CSS px), as composited: what the user sees,
 * canvases scaled by CSS and the boxes over them included. At devicePixelRatio s, the device
 * pixel at (x·s, y·s). (x, y) as boundingBox gives them: relative to the window.
 */
export async function screenPixel(page, x, y) {
  // Scrolled into the window first when it is outside (the point moves up or down with the page).
  y -= await page.evaluate((py) => {
    if (py >= 0 && py < innerHeight) return 0;
    const before = scrollY;
    scrollBy(0, py - innerHeight / 2);
    return scrollY - before;
  }, y);
  const png = await page.screenshot({
    clip: { x: Math.floor(x), y: Math.floor(y), width: 1, height: 1 },
    scale: 'device',
  });
  return page.evaluate(
    async ([b64, fx, fy]) => {
      // (A Blob, not a data: URL: the page's CSP allows no fetch of one.)
      const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
      const c = new OffscreenCanvas(bitmap.width, bitmap.height);
      const ctx = c.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(bitmap, 0, 0);
      const s = bitmap.width;
      return Array.from(
        ctx.getImageData(
          Math.min(s - 1, Math.floor(fx * s)),
          Math.min(s - 1, Math.floor(fy * s)),
          1,
          1,
        ).data,
      );
    },
    [png.toString('base64'), x - Math.floor(x), y - Math.floor(y)],
  );
}

/**
 * Registers the suite's lifecycle: before all tests, check the prerequisites (then run `setup`,
 * if given: it may return {dir}, another built page to open than dist/), launch Chromium and
 * start the targets (served and file://); after all, close both.
 * Returns the live handles: `env.browser`, `env.servers` (set once `before` has run).
 */
export function useBrowserAndTargets(setup) {
  const env = { browser: null, servers: null };
  before(async () => {
    assertPrerequisites();
    const given = setup ? await setup() : null;
    env.browser = await launchBrowser();
    env.servers = await startTargets(given?.dir ?? DIST);
  });
  after(async () => {
    await env.browser?.close();
    await env.servers?.close();
  });
  return env;
}

/**
 * A harness page for testing the page's modules without the wasm core: `source` (an ES module
 * importing from web/src/) is bundled by esbuild into a temporary folder with the `css` files of
 * web/ and an index.html whose <body> holds `body` and then the bundle. Registers the suite's
 * lifecycle like useBrowserAndTargets: `env.browser`, `env.url` (file:// of index.html).
 */
export function useHarness(source, { css = ['style.css'], body = '' } = {}) {
  const env = { browser: null, url: null, dir: null };
  before(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium`);
    env.dir = await mkdtemp(path.join(os.tmpdir(), 'mha-harness-'));
    await build({
      stdin: {
        contents: source,
        resolveDir: path.join(ROOT, 'web', 'src'),
        sourcefile: 'harness.js',
      },
      bundle: true,
      format: 'iife',
      outfile: path.join(env.dir, 'harness.js'),
      logLevel: 'error',
    });
    for (const f of css) await copyFile(path.join(ROOT, 'web', f), path.join(env.dir, f));
    const links = css.map((f) => `<link rel="stylesheet" href="${f}">`).join('');
    await writeFile(
      path.join(env.dir, 'index.html'),
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>harness</title>${links}</head>` +
        `<body>${body}<script src="harness.js"></script></body></html>`,
    );
    env.url = pathToFileURL(path.join(env.dir, 'index.html')).href;
    env.browser = await launchBrowser();
  });
  after(async () => {
    await env.browser?.close();
    if (env.dir) await rm(env.dir, { recursive: true, force: true });
  });
  return env;
}

/** EXPORT_SHOTS=dir keeps the files the export tests save (for looking at them). */
const SHOTS = process.env.EXPORT_SHOTS;

/** The file `click()` makes the page download: {name: its suggested name, bytes}. */
export async function download(page, click) {
  const [d] = await Promise.all([page.waitForEvent('download'), click()]);
  const bytes = await readFile(await d.path());
  const name = d.suggestedFilename();
  if (SHOTS) {
    await mkdir(SHOTS, { recursive: true });
    await writeFile(path.join(SHOTS, name), bytes);
  }
  return { name, bytes };
}

/** Width and height from a PNG's IHDR chunk. */
export function pngSize(bytes) {
  assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG');
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/**
 * The SVG parsed by the browser's XML parser (DOMParser, image/svg+xml): parse errors, the
 * texts, the size, the description and the cells (rects with data-head's group).
 */
export function parseSvg(page, svg) {
  return page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const root = doc.documentElement;
    return {
      error: doc.getElementsByTagName('parsererror').length
        ? doc.getElementsByTagName('parsererror')[0].textContent
        : '',
      ns: root.namespaceURI,
      width: Number(root.getAttribute('width')),
      height: Number(root.getAttribute('height')),
      desc: root.querySelector('desc')?.textContent ?? '',
      texts: [...root.querySelectorAll('text')].map((t) => t.textContent),
      cells: [...root.querySelectorAll('g[data-head] rect')].map((r) => ({
        head: Number(r.parentNode.getAttribute('data-head')),
        x: Number(r.getAttribute('x')),
        y: Number(r.getAttribute('y')),
        size: Number(r.getAttribute('width')),
        fill: r.getAttribute('fill'),
      })),
      images: root.querySelectorAll('image').length,
    };
  }, svg);
}

/** Sets attributes of the element with id `id` (null removes one) and waits for its next mha-ready or mha-error; resolves to the event type. */
export function setAttributes(page, id, attrs) {
  return page.evaluate(
    ([i, a]) =>
      new Promise((resolve) => {
        const host = document.getElementById(i);
        const done = (e) => {
          host.removeEventListener('mha-ready', done);
          host.removeEventListener('mha-error', done);
          resolve(e.type);
        };
        host.addEventListener('mha-ready', done);
        host.addEventListener('mha-error', done);
        for (const [k, v] of Object.entries(a)) {
          if (v === null) host.removeAttribute(k);
          else host.setAttribute(k, v);
        }
      }),
    [id, attrs],
  );
}
