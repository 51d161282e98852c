// Save SVG and Save PNG (1×, 2×, 4×) in the Date translator and the English mode, in headless
// Chromium: the SVG is valid (the browser's XML parser), holds every row and column token, every
// head's caption and measured role, the settings and the view's link as <text>; the 4× PNG is
// exactly four times the 1× one (its IHDR). CSV and JSON are not offered there. EXPORT_SHOTS=dir
// keeps the files made.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  ROOT,
  download,
  parseSvg,
  pngSize,
  withCheckedPage,
  useBrowserAndTargets,
} from './helpers.mjs';
import { loadModule } from '../js/module.mjs';

const TIMEOUT = 180_000;
const env = useBrowserAndTargets();

/** How many <text> elements read exactly `t`. */
const count = (texts, t) => texts.filter((x) => x === t).length;

/** The view's link as captions show it: the address when served (target 0), "index.html#…" from disk. */
const shownLink = (page, which) =>
  page
    .evaluate(() => location.href)
    .then((h) => (which === 0 ? h : `index.html${new URL(h).hash}`));

/** The export buttons of a figure mode: Save PNG, its scale and Save SVG shown; CSV and JSON not. */
async function checkButtons(page) {
  for (const id of ['#export-png', '#export-scale', '#export-svg'])
    assert.ok(await page.isVisible(id), `${id} shown`);
  for (const id of ['#export-csv', '#export-json'])
    assert.ok(await page.isHidden(id), `${id} hidden`);
  assert.equal(await page.getAttribute('#export', 'aria-label'), 'Save the weights shown');
  assert.equal(await page.getAttribute('#export-scale', 'aria-label'), 'PNG scale');
}

/** PNG at 1× and 4× (and 2×): names `stem.png`, `stem-Nx.png`; sizes from IHDR; the status line. */
async function pngs(page, stem, svgSize) {
  const sizes = {};
  for (const scale of [1, 2, 4]) {
    await page.selectOption('#export-scale', String(scale));
    const png = await download(page, () => page.click('#export-png'));
    assert.equal(png.name, scale === 1 ? `${stem}.png` : `${stem}-${scale}x.png`);
    sizes[scale] = { ...pngSize(png.bytes), bytes: png.bytes.length };
    assert.equal(
      await page.textContent('#share-status'),
      `Saved ${png.name} (${sizes[scale].width} × ${sizes[scale].height} pixels, ${png.bytes.length} bytes).`,
    );
  }
  assert.deepEqual(
    [sizes[1].width, sizes[1].height],
    [svgSize.width, svgSize.height],
    "1× is the SVG's size",
  );
  assert.deepEqual([sizes[2].width, sizes[2].height], [2 * sizes[1].width, 2 * sizes[1].height]);
  assert.deepEqual([sizes[4].width, sizes[4].height], [4 * sizes[1].width, 4 * sizes[1].height]);
  return sizes;
}

describe('figure export of the Date translator and the English mode', { timeout: TIMEOUT }, () => {
  for (const which of [0, 1]) {
    test(`Date translator (${which ? 'file://' : 'served'}): the cross-attention layer's 4 heads, every input and output character, roles, settings, link`, () =>
      withCheckedPage(env.browser, env.servers.targets[which], '#mode=date', async ({ page }) => {
        await page.waitForSelector(
          '#date-panel[data-state="ready"], #date-panel[data-state="error"]',
          { timeout: 60_000 },
        );
        assert.equal(
          await page.getAttribute('#date-panel', 'data-state'),
          'ready',
          await page.textContent('#date-alert'),
        );
        await checkButtons(page);
        const output = await page.textContent('#date-output');
        assert.equal(output, '2026-11-30', 'the model translates the default date');
        const cols = Array.from('Nov 30, 2026', (c) => (c === ' ' ? '␣' : c));
        const rows = [...output, '<eos>'];
        // Keyboard: Tab stops on Save SVG and Enter presses it.
        await page.focus('#export-png');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Tab');
        assert.equal(await page.evaluate(() => document.activeElement.id), 'export-svg');
        const svgFile = await download(page, () => page.keyboard.press('Enter'));
        assert.equal(svgFile.name, 'mha-date-cross-l1.svg');
        const svg = svgFile.bytes.toString('utf8');
        const parsed = await parseSvg(page, svg);
        assert.equal(parsed.error, '');
        assert.equal(parsed.ns, 'http://www.w3.org/2000/svg');
        // Every output character labels a row and every input character a column, in each of the
        // 4 heads; "0" and "1" are also the legend's ticks.
        for (const t of new Set([...rows, ...cols])) {
          const expected =
            4 * (rows.filter((x) => x === t).length + cols.filter((x) => x === t).length) +
            (t === '0' || t === '1' ? 1 : 0);
          assert.equal(count(parsed.texts, t), expected, `label ${t}`);
        }
        for (let h = 0; h < 4; h++)
          assert.equal(count(parsed.texts, `head ${h}`), 1, `head ${h}'s caption`);
        assert.equal(count(parsed.texts, 'head 4'), 0);
        assert.equal(parsed.cells.length, 4 * rows.length * cols.length);
        assert.deepEqual([...new Set(parsed.cells.map((c) => c.head))], [0, 1, 2, 3]);
        // Each head's measured role (as its figure on the page shows it) under its caption.
        const roles = await page.$$eval('#date-heads figure .head-role', (els) =>
          els.map((e) => e.textContent),
        );
        assert.equal(roles.length, 4);
        const all = parsed.texts.join(' ');
        for (const role of roles) assert.ok(all.includes(role), `role "${role}" in the SVG`);
        assert.ok(
          parsed.texts.includes(
            'Date translator: Cross-attention, layer 1, reading “Nov 30, 2026”',
          ),
        );
        assert.ok(
          parsed.texts.includes(
            'Input “Nov 30, 2026” → output “2026-11-30” · Cross-attention, layer 1 (layers 0–1) · 4 heads',
          ),
        );
        assert.ok(parsed.texts.includes('Heads switched off: none'));
        // Served: the whole address; from disk: relative, naming no folder of the disk.
        const link = await shownLink(page, which);
        assert.match(link, /#mode=date&date=Nov%2030,%202026&kind=cross&layer=1$/);
        assert.equal(
          parsed.texts.join('').includes('file:') || parsed.desc.includes('file:'),
          false,
          'no file: URL',
        );
        assert.ok(parsed.texts.join('').includes(link), `the caption shows ${link}`);
        assert.ok(parsed.desc.includes(link));
        const sizes = await pngs(page, 'mha-date-cross-l1', parsed);
        console.log(
          `# date cross l1: SVG ${svgFile.bytes.length} bytes ${parsed.width}×${parsed.height}; PNG ${JSON.stringify(sizes)}`,
        );

        // A head switched off and another kind: the file name, the captions and the link follow.
        await page.check('#date-heads input[data-off-key="cross/1/2"]');
        await page.waitForFunction(
          () =>
            location.hash.includes('off=cross/1/2') ||
            decodeURIComponent(location.hash).includes('off=cross/1/2'),
        );
        await page.selectOption('#date-kind', 'encoder_self');
        await page.waitForFunction(() => location.hash.includes('kind=encoder_self'));
        const enc = await parseSvg(
          page,
          (await download(page, () => page.click('#export-svg'))).bytes.toString('utf8'),
        );
        assert.equal(enc.error, '');
        assert.equal(
          await page.textContent('#share-status').then((s) => s.split(' ')[1]),
          'mha-date-encoder-self-l1.svg',
        );
        for (const t of new Set(cols)) {
          assert.equal(
            count(enc.texts, t),
            8 * cols.filter((x) => x === t).length + (t === '0' ? 1 : 0),
            `encoder label ${t}`,
          );
        }
        assert.ok(enc.texts.includes('Heads switched off: cross layer 1 head 2'));
        assert.equal(count(enc.texts, 'head 2'), 1, 'an encoder head is not marked off');
        assert.ok(enc.texts.join('').includes(await shownLink(page, which)));
        await page.selectOption('#date-kind', 'cross');
        await page.waitForFunction(() => location.hash.includes('kind=cross'));
        const off = await parseSvg(
          page,
          (await download(page, () => page.click('#export-svg'))).bytes.toString('utf8'),
        );
        assert.equal(count(off.texts, 'head 2 (switched off)'), 1);
        assert.equal(count(off.texts, 'head 2'), 0);
      }));
  }

  test('English mode: every layer × head, every piece of the default text, roles, settings, link', () =>
    withCheckedPage(env.browser, env.servers.targets[0], '#mode=english', async ({ page }) => {
      const panel = '#english-panel';
      await page.waitForSelector(`${panel}[data-state="ready"], ${panel}[data-state="error"]`, {
        timeout: 60_000,
      });
      assert.equal(
        await page.getAttribute(panel, 'data-state'),
        'ready',
        await page.textContent('#english-alert'),
      );
      await checkButtons(page);
      // The default text as the model reads it (the same file run in node): <bos>, then pieces.
      const mod = await loadModule();
      const model = new mod.EnglishModel(
        readFileSync(path.join(ROOT, 'dist', 'english_lm.safetensors')),
      );
      const run = model.run('The dog sat by the door. The man sat by the fire.', { top: 1 });
      const { layers: L, heads: H, n } = run;
      const tokens = run.tokens.map((t, i) =>
        i > 0 && run.wordIndex[i] === run.wordIndex[i - 1] ? `·${t}` : t.replace(/^▁/, ''),
      );
      const chips = await page.$$eval('#english-tokens li', (els) => els.map((e) => e.textContent));
      // One chip per word the model read: its pieces side by side, without the word mark.
      const words = run.words.map((_, w) =>
        run.tokens
          .filter((_t, i) => run.wordIndex[i] === w)
          .map((t) => t.replace(/^▁/, ''))
          .join(''),
      );
      assert.deepEqual(chips, words);
      const svgFile = await download(page, () => page.click('#export-svg'));
      assert.equal(svgFile.name, `mha-english-l${L}-h${H}-n${n}.svg`);
      const parsed = await parseSvg(page, svgFile.bytes.toString('utf8'));
      assert.equal(parsed.error, '');
      assert.equal(parsed.ns, 'http://www.w3.org/2000/svg');
      // Every piece labels a row and a column of each head.
      for (const t of new Set(tokens))
        assert.equal(
          count(parsed.texts, t),
          L * H * 2 * tokens.filter((x) => x === t).length,
          `label ${t}`,
        );
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++)
          assert.equal(
            count(parsed.texts, `layer ${l}, head ${h}`),
            1,
            `caption layer ${l}, head ${h}`,
          );
      }
      assert.equal(parsed.cells.length, L * H * n * n);
      // A row of heads per layer: layer 0's grids side by side, layer 1's under them.
      const top = (h) => Math.min(...parsed.cells.filter((c) => c.head === h).map((c) => c.y));
      const left = (h) => Math.min(...parsed.cells.filter((c) => c.head === h).map((c) => c.x));
      for (let h = 1; h < H; h++) assert.equal(top(h), top(0));
      for (let h = H; h < 2 * H; h++) {
        assert.equal(top(h), top(H));
        assert.equal(left(h), left(h - H));
      }
      assert.ok(top(H) > top(0) + n * parsed.cells[0].size);
      // Each head's role measured on this text, as its small multiple's caption shows it.
      const roles = await page.$$eval('#english-layers .en-role', (els) =>
        els.map((e) => e.textContent),
      );
      assert.equal(roles.length, L * H);
      const all = parsed.texts.join(' ');
      for (const role of roles) {
        assert.match(role, /^this text: /);
        assert.ok(all.includes(role), `role "${role}" in the SVG`);
      }
      assert.ok(parsed.texts.includes('Text: “The dog sat by the door. The man sat by the fire.”'));
      assert.ok(
        parsed.texts.includes(
          `${L} layers × ${H} heads · ${n} tokens: <bos> and ${n - 1} pieces of the text`,
        ),
      );
      assert.ok(parsed.texts.includes('Heads switched off: none'));
      const link = await page.evaluate(() => location.href);
      assert.match(link, /#mode=english&text=The%20dog/);
      assert.ok(parsed.texts.join('').includes(link), `the caption shows ${link}`);
      const sizes = await pngs(page, `mha-english-l${L}-h${H}-n${n}`, parsed);
      console.log(
        `# english ${L}×${H} heads: SVG ${svgFile.bytes.length} bytes ${parsed.width}×${parsed.height}; PNG ${JSON.stringify(sizes)}`,
      );

      // A head switched off: its caption and the settings say so, and the link carries it.
      await page.check('#english-layers input[data-off-key="1.2"]');
      await page.waitForFunction(() =>
        document.getElementById('english-perplexity').textContent.includes('1 head off'),
      );
      await page.waitForFunction(() => location.hash.includes('off=1.2'));
      const off = await parseSvg(
        page,
        (await download(page, () => page.click('#export-svg'))).bytes.toString('utf8'),
      );
      assert.equal(count(off.texts, 'layer 1, head 2 (switched off)'), 1);
      assert.ok(off.texts.includes('Heads switched off: layer 1 head 2'));
      assert.ok(off.texts.join('').includes(await page.evaluate(() => location.href)));
      // Back in the random-embeddings mode, CSV and JSON are offered again.
      await page.click('.mode-tab[data-mode="random"]');
      assert.ok(await page.isVisible('#export-csv'));
      assert.ok(await page.isVisible('#export-json'));
      assert.equal(
        await page.textContent('#share-status'),
        '',
        "the English mode's message stays with it",
      );
    }));
});
