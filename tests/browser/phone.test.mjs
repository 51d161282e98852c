// A 360 × 740 phone (touch, device pixel ratio 3), served and from file://: every mode opens on
// its own panel, the page and the iframe view (embed=1), with the mode's input (or, where the
// iframe view has none, its first content) on the first screen and nothing wider than the phone;
// an <mha-attention> whose attributes cannot be drawn is no wider than the phone either.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { withCheckedPage, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 120_000;
const PHONE = {
  width: 360,
  height: 740,
  dpr: 3,
  contextOptions: { hasTouch: true, isMobile: true },
};
const env = useBrowserAndTargets();

const PANELS = { random: '#random-panel', date: '#date-panel', english: '#english-panel' };

/**
 * Per mode and view: the hash, the element that must start on the first screen, and what waits
 * for the mode to have drawn. Embedded, the random mode shows no text field (docs/embedding.md:
 * grids, legend, readout, tools), nor does the English mode (its tokens come first).
 */
const CASES = [
  {
    mode: 'random',
    embed: false,
    hash: '#preset=module-08',
    first: '#text',
    drawn: '#heads canvas.heatmap',
  },
  {
    mode: 'random',
    embed: true,
    hash: '#preset=module-08&embed=1',
    first: '#heads canvas.heatmap',
    drawn: '#heads canvas.heatmap',
  },
  {
    mode: 'date',
    embed: false,
    hash: '#mode=date',
    first: '#date-text',
    drawn: '#date-panel canvas',
  },
  {
    mode: 'date',
    embed: true,
    hash: '#mode=date&embed=1',
    first: '#date-text',
    drawn: '#date-panel canvas',
  },
  {
    mode: 'english',
    embed: false,
    hash: '#mode=english',
    first: '#english-text',
    drawn: '#english-panel canvas',
  },
  {
    mode: 'english',
    embed: true,
    hash: '#mode=english&embed=1',
    first: '#english-panel .en-tokens',
    // The grids' canvases are built when the model loads, the token list after its first run.
    drawn: '#english-tokens li',
  },
];

/** What the phone shows: page width, each panel's display, the box of `first`. */
const layout = (page, first) =>
  page.evaluate(
    ([panels, sel]) => {
      const box = document.querySelector(sel)?.getBoundingClientRect();
      return {
        scrollWidth: document.documentElement.scrollWidth,
        displays: Object.fromEntries(
          Object.entries(panels).map(([m, s]) => [
            m,
            getComputedStyle(document.querySelector(s)).display,
          ]),
        ),
        first: box
          ? {
              top: box.top,
              bottom: box.bottom,
              left: box.left,
              right: box.right,
              height: box.height,
            }
          : null,
      };
    },
    [PANELS, first],
  );

describe('a 360 × 740 phone', { timeout: TIMEOUT }, () => {
  for (const which of [0, 1]) {
    for (const c of CASES) {
      test(`${c.mode}${c.embed ? ', embedded (embed=1)' : ''}: its own panel only, ${c.first} on the first screen, no sideways scrolling`, () =>
        withCheckedPage(
          env.browser,
          env.servers.targets[which],
          c.hash,
          async ({ page }) => {
            await page.waitForSelector(c.drawn, { timeout: 30_000 });
            const got = await layout(page, c.first);
            for (const [mode, display] of Object.entries(got.displays)) {
              if (mode === c.mode) assert.notEqual(display, 'none', `the ${mode} panel is shown`);
              else
                assert.equal(
                  display,
                  'none',
                  `the ${mode} panel (hidden) is not displayed in the ${c.mode} mode`,
                );
            }
            assert.ok(got.first && got.first.height > 0, `${c.first} is displayed`);
            assert.ok(
              got.first.top >= 0 && got.first.top < 740,
              `${c.first} starts on the first screen (top ${got.first.top} px)`,
            );
            assert.ok(
              got.first.right <= 360,
              `${c.first} is within the width (right ${got.first.right} px)`,
            );
            assert.equal(got.scrollWidth, 360, 'nothing wider than the phone');
            if (c.embed) {
              const shown = await page.$$eval('#text, #english-text', (es) =>
                es.filter((e) => e.getClientRects().length).map((e) => e.id),
              );
              assert.deepEqual(
                shown,
                [],
                'embedded: no text field of the random or the English mode',
              );
            }
          },
          PHONE,
        ));
    }
  }

  test('an <mha-attention> whose attributes cannot be drawn: a message, no legend, no wider than the phone', () =>
    withCheckedPage(
      env.browser,
      env.servers.targets[1],
      '',
      async ({ page }) => {
        const got = await page.evaluate(async () => {
          const e = document.createElement('mha-attention');
          e.setAttribute('preset', 'module-99');
          document.body.prepend(e);
          for (let i = 0; i < 200 && e.dataset.state !== 'error'; i++)
            await new Promise((r) => setTimeout(r, 25));
          const legend = e.shadowRoot.querySelector('.legend');
          return {
            state: e.dataset.state,
            message: e.shadowRoot.querySelector('.message').textContent,
            legendDisplay: getComputedStyle(legend).display,
            right: e.getBoundingClientRect().right,
            scrollWidth: document.documentElement.scrollWidth,
          };
        });
        assert.equal(got.state, 'error');
        assert.match(got.message, /preset="module-99" is not one of/);
        assert.equal(got.legendDisplay, 'none', 'the undrawn legend canvas takes no room');
        assert.ok(got.right <= 360, `the element ends at ${got.right} px`);
        assert.equal(got.scrollWidth, 360, 'nothing wider than the phone');
      },
      { ...PHONE, path: 'embed-example.html', ready: 'mha-attention[data-state]' },
    ));
});
