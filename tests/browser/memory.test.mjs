// The page re-rendering 1,000 times, driven through its own controls and the address hash, leaves
// the wasm heap where it started (within 1 MB) and still shows module 08's numbers afterwards.
// The heap is read from the page's diagnostics hook: #core-version[data-malloc-in-use-bytes]
// and [data-wasm-memory-bytes], written after every update (web/src/main.js showMemoryStats, web/README.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, tableRow, useBrowserAndTargets } from './helpers.mjs';

const RENDERS = 1000;
const MB = 1 << 20;

const env = useBrowserAndTargets();

async function heap(page) {
  const read = (name) => page.getAttribute('#core-version', name).then(Number);
  return {
    malloc: await read('data-malloc-in-use-bytes'),
    wasm: await read('data-wasm-memory-bytes'),
  };
}

/**
 * Runs `count` updates in the page the way a user and links do: a new address hash, a seed typed
 * and the form submitted (Enter), the causal box clicked, a sentence and head count changed; every
 * 25th step is an invalid head count (the error path). Stops after `count` redraws of the grids;
 * returns the redraws and how many invalid settings were refused.
 */
function drive(page, count, offset) {
  return page.evaluate(
    async ([count, offset]) => {
      const $ = (id) => document.getElementById(id);
      let renders = 0;
      // One render rewrites the summary line once (the grids themselves are reused when the head
      // count stays, so #heads' children are not a count of renders).
      const observer = new MutationObserver((records) => {
        for (const r of records) if (r.target.id === 'summary' && r.addedNodes.length) renders++;
      });
      observer.observe($('summary'), { childList: true });
      const sentences = [
        'Heads look at different things',
        'a b c',
        'the cat sat on the mat .',
        'x',
      ];
      const heads = ['1', '2', '4', '8'];
      let refused = 0;
      // Until `count` redraws (a step that leaves the view as it is does not count), at most 2x steps.
      for (let k = 0; renders < count && k < 2 * count; k++) {
        const i = k + offset;
        if (i % 25 === 24) {
          $('num_heads').value = '3';
          $('controls').requestSubmit();
          if ($('alert').textContent.includes('num_heads=3')) refused++;
          $('num_heads').value = '2'; // typed back: the next step starts from valid settings
          continue;
        }
        switch (i % 4) {
          case 0: {
            const changed = new Promise((resolve) =>
              window.addEventListener('hashchange', resolve, { once: true }),
            );
            location.hash =
              `#text=${encodeURIComponent(sentences[i % 4 === 0 ? (i >> 2) % 4 : 0])}` +
              `&d_model=8&num_heads=${heads[(i >> 2) % 4]}&seed=${i}&causal=${i % 8 === 0 ? 1 : 0}&positional=${i % 3 === 0 ? 1 : 0}`;
            await changed;
            break;
          }
          case 1:
            $('seed').value = String(1000 + i);
            $('controls').requestSubmit();
            break;
          case 2:
            $('causal').click();
            break;
          default:
            $('text').value = sentences[(i >> 2) % 4];
            $('num_heads').value = heads[(i >> 3) % 4];
            $('controls').requestSubmit();
        }
      }
      observer.disconnect();
      return { renders, refused };
    },
    [count, offset],
  );
}

test(`${RENDERS} re-renders through the page's inputs and hash keep the wasm heap within 1 MB`, {
  timeout: 180_000,
}, async () => {
  const p = await openPage(env.browser, env.servers.targets[0], '#preset=module-08', {
    width: 800,
    height: 600,
  });
  const { page } = p;
  try {
    await drive(page, 50, 0); // warm-up
    const start = await heap(page);
    assert.ok(start.malloc > 0 && start.wasm >= 16 * MB, `hook present: ${JSON.stringify(start)}`);
    const t0 = Date.now();
    const { renders, refused } = await drive(page, RENDERS, 50);
    const seconds = (Date.now() - t0) / 1000;
    const end = await heap(page);
    console.log(
      `# ${renders} renders (${refused} invalid settings refused) in ${seconds.toFixed(1)} s: ` +
        `malloc in use ${start.malloc} → ${end.malloc} bytes, wasm memory ${start.wasm} → ${end.wasm} bytes`,
    );
    assert.ok(renders >= RENDERS, `${renders} renders`);
    assert.ok(refused >= 40, `${refused} invalid head counts refused`);
    assert.ok(
      Math.abs(end.malloc - start.malloc) <= MB,
      `malloc in use ${start.malloc} → ${end.malloc}`,
    );
    assert.equal(end.wasm, start.wasm, 'wasm memory did not grow');

    // After an invalid head count the last good view stays; then the preset gives the course numbers.
    const shown = await page.locator('canvas[data-head]').count();
    const row = await tableRow(page, 0, 0);
    await page.fill('#num_heads', '3');
    await page.waitForFunction(() =>
      document.getElementById('alert').textContent.includes('num_heads=3'),
    );
    assert.equal(await page.locator('canvas[data-head]').count(), shown);
    assert.deepEqual(await tableRow(page, 0, 0), row);
    await page.selectOption('#preset', 'module-08');
    await page.waitForFunction(
      () =>
        document.querySelectorAll('canvas[data-head]').length === 2 &&
        document.getElementById('alert').textContent === '',
    );
    assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
    assert.deepEqual(await tableRow(page, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
    assert.match(
      await page.textContent('#summary'),
      /n = 5 tokens · d_model = 8 · num_heads = 2 · d_head = 4/,
    );
    assert.equal(await page.evaluate(() => location.hash), '#preset=module-08');
    assert.deepEqual(p.problems, [], 'no console errors, failed or foreign requests');
  } finally {
    await p.close();
  }
});

for (const which of [0, 1])
  test(`a large first view is not kept alive by the grids once smaller views replace it (${which ? 'file://' : 'served'})`, {
    timeout: 120_000,
  }, async () => {
    // 1024 tokens × 12 heads: 48 MiB of weights. The heatmaps outlive the view they were made for;
    // a closure made while drawing it would keep its result (web/src/modes/random/grids.js gives
    // them the mode's callbacks). From file:// the page
    // colours the grids itself, into each grid's kept buffer (heatmap.js cellPixels), which must not
    // keep the 1024-token view's 4 MiB a head either (52.4 MiB were measured when it did).
    const words = (n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
    const p = await openPage(
      env.browser,
      env.servers.targets[which],
      `#text=${encodeURIComponent(words(1024))}&d_model=768&num_heads=12`,
      { width: 800, height: 600 },
    );
    const { page } = p;
    try {
      for (const n of [1023, 300, 301]) {
        await page.fill('#text', words(n));
        await page.waitForFunction(
          (k) => document.getElementById('summary').textContent.startsWith(`n = ${k} tokens`),
          n,
          { timeout: 60_000 },
        );
      }
      await page.waitForTimeout(1000); // the tables are built once updates pause (tables.js)
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('HeapProfiler.collectGarbage');
      const { backingStorageSize } = await cdp.send('Runtime.getHeapUsage');
      await cdp.detach();
      // What 301 tokens × 12 heads hold: weights 4.3 MiB, their pixels 4.3 MiB, a few copies at most.
      console.log(
        `# array buffers after 1024 → 301 tokens (${which ? 'file://' : 'served'}): ${(backingStorageSize / MB).toFixed(1)} MiB`,
      );
      assert.ok(
        backingStorageSize < 40 * MB,
        `${(backingStorageSize / MB).toFixed(1)} MiB of array buffers`,
      );
    } finally {
      await p.close();
    }
  });
