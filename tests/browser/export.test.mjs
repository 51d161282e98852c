// Figures for papers and slides, in headless Chromium: Save SVG (a valid SVG whose text holds
// every token label, head caption, legend tick and the view's link; cells in the page's colours)
// and Save PNG at 1×, 2×, 4× (exactly 1, 2, 4 times the layout's size at any devicePixelRatio);
// the same for attention loaded in the Files panel, whose view saves to one file and opens again.
// EXPORT_SHOTS=dir keeps the files made (for looking at them).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { interpolateViridis } from 'd3-scale-chromatic';
import { parseColor } from '../../web/src/draw/color.js';
import { download, parseSvg, pngSize, withCheckedPage, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 120_000;
const env = useBrowserAndTargets();
/** The SVG drawn as an image in a blank page (no CSP there): its natural size. */
async function svgImageSize(browser, svg) {
  const ctx = await browser.newContext();
  const p = await ctx.newPage();
  try {
    return await p.evaluate(async (text) => {
      const img = new Image();
      img.src = `data:image/svg+xml;base64,${btoa(unescape(encodeURIComponent(text)))}`;
      await img.decode();
      return { width: img.naturalWidth, height: img.naturalHeight };
    }, svg);
  } finally {
    await ctx.close();
  }
}

/** RGBA of the PNG at image pixel (x, y), decoded in the page. */
function pngPixel(page, bytes, x, y) {
  return page.evaluate(
    async ([b64, px, py]) => {
      const data = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
      const img = await createImageBitmap(new Blob([data], { type: 'image/png' }));
      const c = new OffscreenCanvas(img.width, img.height);
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      return Array.from(ctx.getImageData(px, py, 1, 1).data);
    },
    [bytes.toString('base64'), x, y],
  );
}

const hex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
const near = (a, b, tol, what) => {
  for (let k = 0; k < 3; k++) assert.ok(Math.abs(a[k] - b[k]) <= tol, `${what}: ${a} vs ${b}`);
};

describe('figure export', { timeout: TIMEOUT }, () => {
  const target = () => env.servers.targets[0];

  test('module 08: SVG with every label and the link; PNG 1× / 2× / 4× at devicePixelRatio 2, 4× = 4 × 1×', () =>
    withCheckedPage(
      env.browser,
      target(),
      '#preset=module-08',
      async ({ page }) => {
        const json = JSON.parse(
          (await download(page, () => page.click('#export-json'))).bytes.toString('utf8'),
        );
        const svgFile = await download(page, () => page.click('#export-svg'));
        assert.equal(svgFile.name, 'mha-attention-d8-h2-seed7.svg');
        const svg = svgFile.bytes.toString('utf8');
        const parsed = await parseSvg(page, svg);
        assert.equal(parsed.error, '');
        assert.equal(parsed.ns, 'http://www.w3.org/2000/svg');
        for (const t of json.tokens) {
          assert.equal(
            parsed.texts.filter((x) => x === t).length,
            2 * 2 * json.tokens.filter((u) => u === t).length,
            `label ${t}`,
          );
        }
        for (const t of ['head 0', 'head 1', '0', '0.5', '1', 'attention weight'])
          assert.ok(parsed.texts.includes(t), t);
        const link = await page.evaluate(() => location.href);
        assert.match(link, /#.*preset=module-08|#.*seed=7/);
        assert.ok(parsed.texts.join('').includes(link), `the caption shows ${link}`);
        assert.ok(parsed.desc.includes(link));
        assert.ok(
          parsed.texts.some((t) => t.includes('d_model 8 · num_heads 2 · d_head 4 · seed 7')),
        );
        // Cells: head 0, query 0, key 2 is module 08's 0.424, in the page's colour.
        assert.equal(parsed.cells.length, 2 * 25);
        const h0 = parsed.cells.filter((c) => c.head === 0);
        const x0 = Math.min(...h0.map((c) => c.x));
        const y0 = Math.min(...h0.map((c) => c.y));
        const cell = h0[0].size;
        const c02 = h0.find((c) => c.x === x0 + 2 * cell && c.y === y0);
        assert.equal(c02.fill, hex(parseColor(interpolateViridis(json.attn_weights[0][0][2]))));
        assert.ok(
          Math.abs(json.attn_weights[0][0][2] - 0.424) < 5e-4,
          'module 08 prints 0.424 here',
        );
        const img = await svgImageSize(env.browser, svg);
        assert.deepEqual(
          img,
          { width: parsed.width, height: parsed.height },
          'the SVG renders as an image',
        );

        const sizes = {};
        for (const scale of [1, 2, 4]) {
          await page.selectOption('#export-scale', String(scale));
          const png = await download(page, () => page.click('#export-png'));
          assert.equal(
            png.name,
            scale === 1
              ? 'mha-attention-d8-h2-seed7.png'
              : `mha-attention-d8-h2-seed7-${scale}x.png`,
          );
          sizes[scale] = { ...pngSize(png.bytes), bytes: png.bytes.length };
          // The same cell, at the same place as in the SVG, scaled.
          const px = await pngPixel(
            page,
            png.bytes,
            Math.floor((c02.x + cell / 2) * scale),
            Math.floor((c02.y + cell / 2) * scale),
          );
          near(px, parseColor(interpolateViridis(0.424)), 2, `PNG ${scale}× cell (0, 2)`);
          assert.match(
            await page.textContent('#share-status'),
            new RegExp(
              `Saved .* \\(${sizes[scale].width} × ${sizes[scale].height} pixels, ${png.bytes.length} bytes\\)`,
            ),
          );
        }
        assert.deepEqual(
          [sizes[1].width, sizes[1].height],
          [parsed.width, parsed.height],
          '1× is the layout size at devicePixelRatio 2',
        );
        assert.deepEqual(
          [sizes[4].width, sizes[4].height],
          [4 * sizes[1].width, 4 * sizes[1].height],
        );
        assert.deepEqual(
          [sizes[2].width, sizes[2].height],
          [2 * sizes[1].width, 2 * sizes[1].height],
        );
        console.log(
          `# module 08: SVG ${svgFile.bytes.length} bytes ${parsed.width}×${parsed.height}; PNG ${JSON.stringify(sizes)}`,
        );
      },
      { dpr: 2 },
    ));

  test('16 tokens, d_model 64, 8 heads: the SVG has all 8 heads as rects and every label; 4× PNG = 4 × 1×', () => {
    const words =
      'the quick brown fox jumps over the lazy dog while seven heads watch each token again'.split(
        ' ',
      );
    assert.equal(words.length, 16);
    return withCheckedPage(
      env.browser,
      target(),
      `#text=${words.join('+')}&d_model=64&num_heads=8&seed=3`,
      async ({ page }) => {
        await page.waitForSelector('canvas[data-head="7"]');
        const svgFile = await download(page, () => page.click('#export-svg'));
        const parsed = await parseSvg(page, svgFile.bytes.toString('utf8'));
        assert.equal(parsed.error, '');
        assert.equal(parsed.cells.length, 8 * 16 * 16);
        for (const w of words) assert.ok(parsed.texts.filter((t) => t === w).length >= 2 * 8, w);
        const sizes = {};
        for (const scale of [1, 4]) {
          await page.selectOption('#export-scale', String(scale));
          const png = await download(page, () => page.click('#export-png'));
          sizes[scale] = { ...pngSize(png.bytes), bytes: png.bytes.length };
        }
        assert.deepEqual(
          [sizes[4].width, sizes[4].height],
          [4 * sizes[1].width, 4 * sizes[1].height],
        );
        assert.ok(sizes[1].width <= 1200, `at most 1200 px wide: ${sizes[1].width}`);
        console.log(
          `# 16 tokens 8 heads: SVG ${svgFile.bytes.length} bytes ${parsed.width}×${parsed.height}; PNG ${JSON.stringify(sizes)}`,
        );
      },
    );
  });
});

/** A .npy file (format 1.0) of float32 `data` with `shape`. */
function npy(shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}), }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += `${' '.repeat(pad % 64)}\n`;
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([
    head,
    Buffer.from(header, 'latin1'),
    Buffer.from(new Float32Array(data).buffer),
  ]);
}

/** Two layers × two heads over 3 tokens, every row summing to 1. */
const LAYERS = [
  1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5, 1, 0, 0, 0.25, 0.75, 0, 0.1, 0.1,
  0.8, 1, 0, 0, 1, 0, 0, 1, 0, 0,
];

describe('figure export of an imported file, and its view saved and reopened', {
  timeout: TIMEOUT,
}, () => {
  test('Files panel: SVG and PNG of the loaded heads, Save view → reopen gives the same view; a bad view file gets a message', () =>
    withCheckedPage(env.browser, env.servers.targets[1], '#preset=module-08', async ({ page }) => {
      await page.click('#explain-files > summary');
      const body = '#explain-files .explain-body';
      await page.waitForSelector(`${body} input[data-file="attention"]`);
      await page.fill(`${body} textarea[data-file="tokens-text"]`, 'the cat <sat>');
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'attn.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([2, 2, 3, 3], LAYERS),
      });
      await page.waitForSelector(`${body}[data-state="ready"] canvas[data-file-head]`);
      await page.selectOption(`${body} select[data-file="layer"]`, '0');
      await page.waitForSelector(`${body}[data-state="ready"] canvas[data-file-head]`);
      const press = (kind) =>
        page.$eval(`${body} button[data-file-export="${kind}"]`, (b) => b.click());
      const svgFile = await download(page, () => press('svg'));
      assert.equal(svgFile.name, 'loaded-attention-layer0-h2.svg');
      const parsed = await parseSvg(page, svgFile.bytes.toString('utf8'));
      assert.equal(parsed.error, '');
      for (const t of ['the', 'cat', '<sat>'])
        assert.equal(parsed.texts.filter((x) => x === t).length, 4, t);
      assert.ok(parsed.texts.includes('layer 0, head 1'));
      assert.ok(
        parsed.desc.includes('attn.npy (<f4, shape (2, 2, 3, 3)), layer 0 of 2, 2 heads × 3 × 3'),
        parsed.desc,
      );
      // Layer 0, head 1, query 2, key 2 = 0.5.
      const h1 = parsed.cells.filter((c) => c.head === 1);
      const [x0, y0, cell] = [
        Math.min(...h1.map((c) => c.x)),
        Math.min(...h1.map((c) => c.y)),
        h1[0].size,
      ];
      assert.equal(
        h1.find((c) => c.x === x0 + 2 * cell && c.y === y0 + 2 * cell).fill,
        hex(parseColor(interpolateViridis(0.5))),
      );
      const sizes = {};
      for (const scale of [1, 4]) {
        await page.selectOption(`${body} select[data-file-export="scale"]`, String(scale));
        sizes[scale] = pngSize((await download(page, () => press('png'))).bytes);
      }
      assert.deepEqual([sizes[1].width, sizes[1].height], [parsed.width, parsed.height]);
      assert.deepEqual([sizes[4].width, sizes[4].height], [4 * parsed.width, 4 * parsed.height]);

      const view = await download(page, () => press('view'));
      const doc = JSON.parse(view.bytes.toString('utf8'));
      assert.equal(doc.format, 'mha-lab-attention-view');
      assert.deepEqual(doc.view.layer, 0);
      // Another file replaces the view; then the saved view brings it back.
      await page.fill(`${body} textarea[data-file="tokens-text"]`, '');
      await page.setInputFiles(`${body} input[data-file="attention"]`, {
        name: 'other.npy',
        mimeType: 'application/octet-stream',
        buffer: npy([1, 3, 3], LAYERS.slice(0, 9)),
      });
      await page.waitForFunction(
        (b) =>
          document.querySelector(b).dataset.state === 'ready' &&
          /other\.npy/.test(document.querySelector(`${b} .file-status`).textContent),
        body,
      );
      await page.setInputFiles(`${body} input[data-file="tokens"]`, {
        name: view.name,
        mimeType: 'application/json',
        buffer: view.bytes,
      });
      await page.waitForFunction(
        (b) => /Showing attn\.npy/.test(document.querySelector(`${b} .file-status`).textContent),
        body,
      );
      assert.equal(await page.inputValue(`${body} select[data-file="layer"]`), '0');
      assert.equal(await page.locator(`${body} canvas[data-file-head]`).count(), 2);
      const again = await parseSvg(
        page,
        (await download(page, () => press('svg'))).bytes.toString('utf8'),
      );
      assert.deepEqual(again.cells, parsed.cells, 'the reopened view draws the same cells');
      assert.deepEqual(again.texts, parsed.texts);
      // A damaged view file: a message in the panel, no crash.
      const broken = Buffer.from(
        view.bytes.toString('utf8').replace('"version": 1', '"version": 9'),
      );
      await page.setInputFiles(`${body} input[data-file="tokens"]`, {
        name: 'broken.json',
        mimeType: 'application/json',
        buffer: broken,
      });
      await page.waitForSelector(`${body}[data-state="error"]`);
      assert.match(
        await page.textContent(`${body} .file-status`),
        /broken\.json: view file version 9 is not supported/,
      );
    }));
});
