// mha_lab.show() output (tests/notebook/write_show_file.py: 4 heads × 6 tokens, SVG grids) inside
// host pages that imitate JupyterLab's and VS Code's notebooks, opened from file:// in Chromium
// under a light system scheme: in the dark hosts (JupyterLab's <body data-jp-theme-light="false">
// with its --jp-* colours, VS Code's <body class="vscode-dark"> with its --vscode-* colours) the
// element draws in its dark colours and every text (summary, readout, captions, legend, the
// labels drawn on the canvases, the pattern table) has WCAG AA contrast (4.5:1) against the
// background it sits on, axe-core's color-contrast rule agreeing; with JavaScript off the picture
// without JavaScript (the SVG grids' labels, the table) has that contrast too. A light JupyterLab
// host under a dark system scheme keeps the element light, and a theme switch in the notebook
// redraws it. MHA_THEME_SHOTS=DIR saves a screenshot of each dark host there.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, CHROMIUM, launchBrowser } from './helpers.mjs';

const PYTHONPATH = path.join(ROOT, 'build', 'native', 'python');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TIMEOUT = 120_000;
const AA = 4.5;

/** The hosts: body attributes, and the page's CSS (each notebook's colour variables). */
const HOSTS = {
  'jupyterlab-dark': {
    body: 'class="jp-ThemedContainer" data-jp-theme-light="false" data-jp-theme-name="JupyterLab Dark"',
    css: `:root { --jp-layout-color0: #111111; --jp-layout-color1: #212121;
        --jp-ui-font-color0: rgba(255, 255, 255, 1); --jp-ui-font-color1: rgba(255, 255, 255, 0.87);
        --jp-content-font-color1: rgba(255, 255, 255, 1); }
      body { background: var(--jp-layout-color0); color: var(--jp-ui-font-color1); margin: 0; }
      .jp-OutputArea-output { background: var(--jp-layout-color0);
        color: var(--jp-content-font-color1); padding: 8px; }`,
  },
  'vscode-dark': {
    body: 'class="vscode-body vscode-dark" data-vscode-theme-kind="vscode-dark"',
    css: `html { --vscode-editor-background: #1f1f1f; --vscode-editor-foreground: #cccccc;
        --vscode-foreground: #cccccc; }
      body { background: var(--vscode-editor-background); color: var(--vscode-editor-foreground);
        margin: 0; }
      .jp-OutputArea-output { padding: 8px; }`,
  },
  'jupyterlab-light': {
    body: 'class="jp-ThemedContainer" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light"',
    css: `:root { --jp-layout-color0: #ffffff; --jp-content-font-color1: rgba(0, 0, 0, 0.87); }
      body { background: var(--jp-layout-color0); color: var(--jp-content-font-color1); margin: 0; }
      .jp-OutputArea-output { padding: 8px; }`,
  },
};

let browser;
let dir;
const urls = {};

before(async () => {
  if (!existsSync(path.join(PYTHONPATH, 'mha_lab', '__init__.py'))) {
    throw new Error(`${PYTHONPATH}/mha_lab is not built: run ./scripts/build.sh`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}`);
  dir = await mkdtemp(path.join(os.tmpdir(), 'mha-themes-'));
  const file = path.join(dir, 'show.html');
  const p = spawnSync(
    '/usr/bin/python3',
    [path.join(ROOT, 'tests', 'notebook', 'write_show_file.py'), file, '1', '4', '6'],
    {
      env: {
        ...process.env,
        PYTHONPATH,
        MHA_LAB_DIST: path.join(ROOT, 'dist'),
        OPENBLAS_NUM_THREADS: '1',
      },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  assert.equal(p.status, 0, `write_show_file.py failed:\n${p.stderr}`);
  // save_html's page: the fragment (what _repr_html_ gives a notebook) is its body.
  const saved = await readFile(file, 'utf8');
  const fragment = saved.slice(saved.indexOf('<body>\n') + 7, saved.lastIndexOf('\n</body>'));
  assert.match(fragment, /^<div class="mha-lab"/);
  for (const [name, host] of Object.entries(HOSTS)) {
    const page =
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>` +
      `<style>${host.css}</style></head><body ${host.body}>` +
      `<div class="jp-OutputArea-output">${fragment}</div></body></html>`;
    await writeFile(path.join(dir, `${name}.html`), page);
    urls[name] = pathToFileURL(path.join(dir, `${name}.html`)).href;
  }
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Opens a host page with the system's scheme `colorScheme`; JavaScript on or off. */
async function open(name, { colorScheme = 'light', javaScriptEnabled = true } = {}) {
  const context = await browser.newContext({
    viewport: { width: 900, height: 1100 },
    colorScheme,
    javaScriptEnabled,
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(urls[name]);
  if (javaScriptEnabled) {
    await page.waitForSelector('mha-attention[data-state="ready"]', { timeout: 60_000 });
  }
  return { page, context, errors };
}

/**
 * Every visible text in the document and in the element's shadow root: its colour (fill for SVG
 * text) and the background it sits on (the nearest opaque background up the tree, through the
 * shadow boundary), and their WCAG contrast ratio; and the canvases' label ink (--label-ink)
 * against the element's panel.
 */
const contrasts = (page) =>
  page.evaluate(() => {
    const rgba = (css) => {
      const v = css.match(/[\d.]+/g).map(Number);
      return { r: v[0], g: v[1], b: v[2], a: v.length > 3 ? v[3] : 1 };
    };
    const over = (fg, bg) => ({
      r: fg.r * fg.a + bg.r * (1 - fg.a),
      g: fg.g * fg.a + bg.g * (1 - fg.a),
      b: fg.b * fg.a + bg.b * (1 - fg.a),
      a: 1,
    });
    const lum = ({ r, g, b }) => {
      const f = (v) => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const ratio = (a, b) => {
      const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
      return (x + 0.05) / (y + 0.05);
    };
    const up = (node) => node.parentElement ?? node.parentNode?.host ?? null;
    const backgroundOf = (node) => {
      for (let n = node; n; n = up(n)) {
        const c = rgba(getComputedStyle(n).backgroundColor);
        if (c.a === 1) return c;
      }
      return { r: 255, g: 255, b: 255, a: 1 };
    };
    const texts = [];
    const walk = (root) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) walk(e.shadowRoot);
        const own = [...e.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
        if (!own || e.closest('title, script, style, .visually-hidden')) continue;
        if (!e.getClientRects().length) continue;
        const s = getComputedStyle(e);
        if (s.visibility !== 'visible') continue;
        const bg = backgroundOf(e);
        const fg = over(rgba(e instanceof SVGElement ? s.fill : s.color), bg);
        texts.push({
          what: `${e.localName}.${e.getAttribute('class') ?? ''}: ${e.textContent.trim().slice(0, 24)}`,
          svg: e instanceof SVGElement,
          shadow: e.getRootNode() !== document,
          ratio: Math.round(ratio(fg, bg) * 100) / 100,
        });
      }
    };
    walk(document);
    const host = document.querySelector('mha-attention');
    let labels = null;
    let panel = null;
    if (host?.shadowRoot?.querySelector('.mha')) {
      const mha = host.shadowRoot.querySelector('.mha');
      const bg = backgroundOf(mha);
      const heads = host.shadowRoot.querySelector('.heads');
      const ink = getComputedStyle(heads).getPropertyValue('--label-ink').trim();
      const probe = document.createElement('span');
      probe.style.color = ink;
      document.body.append(probe);
      labels = Math.round(ratio(rgba(getComputedStyle(probe).color), bg) * 100) / 100;
      probe.remove();
      panel = Math.round(lum(bg) * 1000) / 1000;
    }
    return { texts, labels, panel, scheme: host?.dataset.scheme ?? null };
  });

/** axe-core's color-contrast violations (the rule alone; shadow roots included). */
async function axeContrast(page) {
  await page.evaluate(AXE);
  const r = await page.evaluate(() =>
    window.axe.run(document, { runOnly: ['color-contrast'], preload: false }),
  );
  return r.violations.flatMap((v) => v.nodes.map((n) => n.target.join(' ')));
}

/** The lowest ratio among `texts` (Infinity for none). */
const lowest = (texts) => Math.min(...texts.map((t) => t.ratio));

/** The texts below AA, as "what (ratio)". */
const low = (texts) => texts.filter((t) => t.ratio < AA).map((t) => `${t.what} (${t.ratio})`);

async function shot(page, name) {
  if (!process.env.MHA_THEME_SHOTS) return;
  await page.screenshot({
    path: path.join(process.env.MHA_THEME_SHOTS, `${name}.png`),
    fullPage: true,
  });
}

for (const name of ['jupyterlab-dark', 'vscode-dark']) {
  test(`${name} host: the element is dark and every text has AA contrast`, {
    timeout: TIMEOUT,
  }, async (t) => {
    const { page, context, errors } = await open(name);
    try {
      const c = await contrasts(page);
      t.diagnostic(
        `scheme ${c.scheme}; lowest contrast: element ${lowest(c.texts.filter((x) => x.shadow))}, ` +
          `page ${lowest(c.texts.filter((x) => !x.shadow))}, canvas labels ${c.labels}`,
      );
      assert.equal(c.scheme, 'dark', 'the host page declares a dark scheme');
      assert.ok(c.panel < 0.02, `dark panel: luminance ${c.panel}`);
      const inside = c.texts.filter((t) => t.shadow);
      assert.ok(inside.length >= 5, `texts in the element: ${inside.length}`);
      assert.deepEqual(low(c.texts), [], 'texts below 4.5:1');
      assert.ok(c.labels >= AA, `canvas labels' ink on the panel: ${c.labels}:1`);
      assert.deepEqual(await axeContrast(page), []);
      assert.deepEqual(errors, []);
      await shot(page, name);
    } finally {
      await context.close();
    }
  });

  test(`${name} host, JavaScript off: the SVG labels and the table have AA contrast`, {
    timeout: TIMEOUT,
  }, async (t) => {
    const { page, context } = await open(name, { javaScriptEnabled: false });
    try {
      const c = await contrasts(page);
      t.diagnostic(
        `lowest contrast: SVG labels ${lowest(c.texts.filter((x) => x.svg))}, ` +
          `other text ${lowest(c.texts.filter((x) => !x.svg))}`,
      );
      const svg = c.texts.filter((t) => t.svg);
      assert.equal(svg.length, 4 * 12, 'each of 4 heads labels its 6 queries and 6 keys');
      assert.ok(
        c.texts.some((t) => t.what.startsWith('caption')),
        'the table caption',
      );
      assert.deepEqual(low(c.texts), [], 'texts below 4.5:1');
      await shot(page, `${name}-no-js`);
    } finally {
      await context.close();
    }
  });
}

test('a light JupyterLab host under a dark system stays light; a theme switch redraws', {
  timeout: TIMEOUT,
}, async () => {
  const { page, context } = await open('jupyterlab-light', { colorScheme: 'dark' });
  try {
    const light = await contrasts(page);
    assert.equal(light.scheme, 'light');
    assert.ok(light.panel > 0.9, `light panel: luminance ${light.panel}`);
    assert.deepEqual(low(light.texts), []);
    assert.ok(light.labels >= AA, `labels: ${light.labels}:1`);
    // JupyterLab's theme switch sets the body attribute: the element follows it.
    await page.evaluate(() => document.body.setAttribute('data-jp-theme-light', 'false'));
    await page.waitForSelector('mha-attention[data-scheme="dark"]');
    const dark = await contrasts(page);
    assert.ok(dark.panel < 0.02, `dark panel: luminance ${dark.panel}`);
    assert.ok(dark.labels >= AA, `labels: ${dark.labels}:1`);
  } finally {
    await context.close();
  }
});
