// Files written by mha_lab.show(...).save_html (tests/notebook/write_show_file.py: seeded
// weights, tokens "w0", "w1", ...) opened in Chromium: from file://, and served by a server that
// sends the file in small pieces with pauses, so that the parser is still inside an element's
// <script type="application/json"> when the element's script has defined it. Every open must
// draw the file's own weights (its title, its number of heads, its tokens, a row of its numbers,
// read from the element's Save JSON),
// never module 08, never a JSON error, and request nothing but the file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, CHROMIUM, launchBrowser } from './helpers.mjs';

const PYTHONPATH = path.join(ROOT, 'build', 'native', 'python');
const TIMEOUT = 300_000;
/** The served file: this many bytes a piece, a pause of PAUSE_MS between pieces. */
const PIECE = 16 * 1024;
const PAUSE_MS = 4;

let browser;
let dir;
let large; // 2 layers × 16 heads × 128 tokens: over 5 MB
let small; // 1 layer × 4 heads × 24 tokens
let server;
let origin;

/** Runs write_show_file.py; its JSON line. */
function writeShowFile(name, shape = []) {
  const p = spawnSync(
    '/usr/bin/python3',
    [
      path.join(ROOT, 'tests', 'notebook', 'write_show_file.py'),
      path.join(dir, name),
      ...shape.map(String),
    ],
    {
      env: { ...process.env, PYTHONPATH, OPENBLAS_NUM_THREADS: '1' },
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  assert.equal(p.status, 0, `write_show_file.py failed:\n${p.stderr}`);
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

before(async () => {
  if (!existsSync(path.join(PYTHONPATH, 'mha_lab', '__init__.py'))) {
    throw new Error(`${PYTHONPATH}/mha_lab is not built: run ./scripts/build.sh`);
  }
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}`);
  dir = await mkdtemp(path.join(os.tmpdir(), 'mha-show-file-'));
  large = writeShowFile('large.html');
  small = writeShowFile('small.html', [1, 4, 24]);
  const files = {
    '/large.html': await readFile(large.html),
    '/small.html': await readFile(small.html),
  };
  server = http.createServer(async (req, res) => {
    const body = files[req.url];
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': body.length,
    });
    for (let at = 0; at < body.length && !res.destroyed; at += PIECE) {
      res.write(body.subarray(at, at + PIECE));
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * Opens `url` in a fresh context, refusing every request but `url` itself, and waits until every
 * element has drawn or failed. @returns what each element shows, and the requests refused and
 * the page's errors.
 */
async function openAndRead(url) {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const refused = [];
  const errors = [];
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    refused.push(u);
    return route.abort('blockedbyclient');
  });
  try {
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url, { timeout: 120_000 });
    await page.waitForFunction(
      () => {
        const els = [...document.querySelectorAll('mha-attention')];
        return (
          els.length > 0 &&
          els.every((e) => e.dataset.state === 'ready' || e.dataset.state === 'error')
        );
      },
      null,
      { timeout: 60_000 },
    );
    const views = await page.evaluate(() =>
      [...document.querySelectorAll('mha-attention')].map((host) => {
        const root = host.shadowRoot;
        return {
          state: host.dataset.state,
          summary: root.querySelector('.summary').textContent,
          message: root.querySelector('.message').textContent,
          heads: root.querySelectorAll('.heads figure.head').length,
          tables: root.querySelector('.heads').dataset.tables,
        };
      }),
    );
    // The weights drawn, as the element saves them (Save JSON): the tokens and head 3's row 5.
    for (const [l, view] of views.entries()) {
      if (view.state !== 'ready') continue;
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('mha-attention').nth(l).locator('button[data-export="json"]').click(),
      ]);
      const saved = JSON.parse(await readFile(await download.path(), 'utf8'));
      Object.assign(view, {
        keys: saved.key_tokens,
        row5: saved.attn_weights[3][5],
        row5Token: saved.tokens[5],
      });
    }
    return { views, refused, errors };
  } finally {
    await context.close();
  }
}

/** The views of one open are the file's own weights, layer by layer. */
function assertDrawsTheFile(file, got, open) {
  const { views, refused, errors } = got;
  const where = `open ${open}: ${JSON.stringify(views.map(({ state, summary, message }) => ({ state, summary, message })))}`;
  assert.equal(views.length, file.layers, where);
  const n = file.tokens.length;
  views.forEach((v, l) => {
    assert.equal(v.state, 'ready', where);
    assert.equal(v.message, '', where);
    const title = file.layers > 1 ? `${file.title}, layer ${l}` : file.title;
    assert.equal(v.summary, `${title} · ${file.heads} heads · ${n} × ${n}`, where);
    assert.equal(v.heads, file.heads, where);
    // Hidden tables, as on the page: at most 64 tokens (draw/tables.js MAX_TABLE_TOKENS).
    assert.equal(v.tables, n > 64 ? 'none' : 'ready', where);
    assert.deepEqual(v.keys, file.tokens, where);
    assert.equal(v.row5Token, 'w5', where);
    assert.equal(v.row5.length, n, where);
    v.row5.forEach((x, j) =>
      assert.ok(
        Math.abs(x - file.rows[l][j]) <= 0.0005 + 1e-9,
        `${where}: layer ${l}, head 3, row 5, key ${j}: ${x}, expected ${file.rows[l][j]}`,
      ),
    );
  });
  assert.deepEqual(refused, [], `open ${open}: requests refused`);
  assert.deepEqual(errors, [], `open ${open}: page errors`);
}

test('a show() file over 5 MB opened from file:// draws its own weights in 10 opens of 10', {
  timeout: TIMEOUT,
}, async () => {
  assert.ok(large.bytes >= 5_000_000, `the file is ${large.bytes} bytes`);
  const url = pathToFileURL(large.html).href;
  for (let open = 1; open <= 10; open++) assertDrawsTheFile(large, await openAndRead(url), open);
});

test('a show() file over 5 MB served in small pieces draws its own weights in 3 opens of 3', {
  timeout: TIMEOUT,
}, async () => {
  for (let open = 1; open <= 3; open++)
    assertDrawsTheFile(large, await openAndRead(`${origin}/large.html`), open);
});

test('a small show() file served in small pieces draws its own weights and loads no wasm core', {
  timeout: TIMEOUT,
}, async () => {
  for (let open = 1; open <= 3; open++)
    assertDrawsTheFile(small, await openAndRead(`${origin}/small.html`), open);
});
