// Nothing a user types or a link carries runs as code or becomes markup, and the page computes under
// a strict Content-Security-Policy with no violation and no request beyond its own files; served over
// http (policy in the header and the meta tag) and from file:// (meta tag only).
// Extends page.test.mjs ('markup in tokens is shown as text'): every payload as a token and as every
// hash value (and key), dialogs, links, CSP violation events, the response header.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { tokenize } from '../../web/src/chrome/tokenize.js';
import { quoteValue } from '../../web/src/chrome/values.js';
import { openPage, tableRow, useBrowserAndTargets } from './helpers.mjs';

const POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const TIMEOUT = 90_000;

const PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '"><script>window.__pwned=1</script>',
  'javascript:alert(1)',
  '</title><script>window.__pwned=2</script>',
  "<svg onload=alert(1)><iframe src='javascript:alert(1)'></iframe>",
  '<a href="javascript:alert(1)">click</a>',
  "'><img src=x onerror=window.__pwned=3>",
  '{{constructor.constructor("alert(1)")()}}',
  // Unicode controls: bidi override, zero-width, BOM, line/paragraph separators, C0/C1 controls.
  'abc\u202Edef\u202C \u200B\u200D\uFEFF x\u2028y\u2029 \u0007\u0085',
];
const LONG = '<img src=x onerror=alert(1)>'.repeat(4000); // 112,000 characters
const HASH_KEYS = [
  'text',
  'd_model',
  'num_heads',
  'seed',
  'causal',
  'positional',
  'preset',
  'cell',
  'embed',
];

// Installed before any page script: records CSP violations, and flags any injected script that runs.
function recordViolations() {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__csp.push(
      `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`,
    );
  });
}

/** What could carry script or leave the page: counted before and after every payload. */
function surface(page) {
  return page.evaluate(() => ({
    img: document.querySelectorAll('img').length,
    script: document.querySelectorAll('script').length,
    inlineScript: document.querySelectorAll('script:not([src])').length,
    iframe: document.querySelectorAll('iframe, object, embed, frame').length,
    svg: document.querySelectorAll('svg').length,
    jsLinks: document.querySelectorAll(
      'a[href^="javascript" i], [src^="javascript" i], [action^="javascript" i]',
    ).length,
    hrefs: [...document.querySelectorAll('[href]')].map((a) => a.getAttribute('href')),
    onAttributes: [...document.querySelectorAll('*')].flatMap((el) =>
      [...el.attributes]
        .filter((a) => a.name.startsWith('on'))
        .map((a) => `${el.tagName}[${a.name}]`),
    ),
    title: document.title,
    pwned: window.__pwned,
  }));
}

/** Sets the address hash and waits until the page has handled it. */
function setHash(page, hash) {
  return page.evaluate(
    (h) =>
      new Promise((resolve) => {
        window.addEventListener('hashchange', () => resolve(), { once: true });
        const before = location.href;
        location.hash = h;
        if (location.href === before) resolve(); // the same address: no hashchange comes
      }),
    hash,
  );
}

const env = useBrowserAndTargets();

test('the server sends the strict Content-Security-Policy with every file', async () => {
  assert.equal(CSP, POLICY);
  for (const file of [
    '',
    'index.html',
    'app.js',
    'mha_wasm_core.js',
    'mha_wasm.js',
    'style.css',
    'favicon.svg',
    'common.css',
    'embed-example.html',
    'mha-attention.js',
    'mha-attention.css',
    'mha-embed.js',
  ]) {
    const res = await fetch(env.servers.targets[0].url + file);
    assert.equal(res.status, 200, file);
    assert.equal(res.headers.get('content-security-policy'), POLICY, `${file || '/'}: CSP header`);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', file);
    await res.arrayBuffer();
  }
});

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`page ${which === 0 ? 'served over http (CSP header + meta)' : 'opened from file:// (CSP meta)'}`, {
    timeout: TIMEOUT,
  }, () => {
    test('markup, script and javascript: in tokens and in every hash value stay text; nothing runs', async () => {
      const p = await openPage(env.browser, target(), '#preset=module-08', {
        setup: (c) => c.addInitScript(recordViolations),
      });
      const { page, problems } = p;
      try {
        // Module 08's numbers under the policy, with no violation.
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);
        assert.deepEqual(await tableRow(page, 1, 0), ['0.000', '0.000', '0.000', '0.000', '1.000']);
        const baseline = await surface(page);
        assert.equal(baseline.inlineScript, 0);
        assert.deepEqual(baseline.onAttributes, []);
        // The page's own links only: anchors, its stylesheet and icon, its two preloaded scripts.
        assert.ok(
          baseline.hrefs.every((h) => h.startsWith('#') || /^[\w.-]+\.(css|svg|js)$/.test(h)),
          baseline.hrefs.join(' '),
        );
        const unchanged = async (label) => assert.deepEqual(await surface(page), baseline, label);

        // 1. As the sentence, typed into the text field.
        for (const payload of PAYLOADS) {
          await page.fill('#text', payload);
          await page.press('#text', 'Enter');
          const want = tokenize(payload);
          assert.deepEqual(
            await page.$$eval('table[data-head="0"] th[scope="col"]', (ths) =>
              ths.map((t) => t.dataset.token),
            ),
            want,
            `tokens of ${JSON.stringify(payload)}`,
          );
          assert.deepEqual(
            await page.$$eval('#tokens-line .token', (s) => s.map((x) => x.textContent)),
            want,
          );
          assert.equal(await page.inputValue('#text'), payload);
          await unchanged(`typed ${JSON.stringify(payload)}`);
        }

        // 2. As the value of every setting in the address, and as a setting's name.
        for (const payload of [...PAYLOADS, LONG]) {
          const enc = encodeURIComponent(payload);
          for (const key of HASH_KEYS) {
            await setHash(page, `#${key}=${enc}`);
            const notes = await page.textContent('#notes');
            if (key === 'text') {
              if (payload === LONG) {
                assert.ok(
                  notes.includes(
                    `The text in the address has ${LONG.length} characters (at most 20000).`,
                  ),
                  notes,
                );
              } else {
                assert.deepEqual(
                  await page.$$eval('table[data-head="0"] th[scope="col"]', (ths) =>
                    ths.map((t) => t.dataset.token),
                  ),
                  tokenize(payload),
                  `#text=${payload}`,
                );
              }
            } else if (key === 'preset') {
              assert.ok(notes.includes(`Unknown preset "${quoteValue(payload)}"`), notes);
            } else {
              assert.ok(
                notes.includes(`${key}=${quoteValue(payload)} in the address`),
                `${key}: ${notes}`,
              );
            }
            await unchanged(`#${key}=${payload.slice(0, 40)}`);
          }
          await setHash(page, `#${enc}=1&seed=7`);
          assert.ok(
            (await page.textContent('#notes')).includes(
              `Ignored unknown setting "${quoteValue(payload)}"`,
            ),
          );
          await unchanged(`#${payload.slice(0, 40)}=1`);
        }
        // Notes and alerts hold text only (p elements with text nodes).
        assert.equal(await page.locator('#notes *:not(p), #alert *').count(), 0);

        // Back to the preset: the page still computes the course numbers.
        await setHash(page, '#preset=module-08');
        assert.deepEqual(await tableRow(page, 0, 0), ['0.000', '0.000', '0.424', '0.576', '0.000']);

        assert.equal(await page.evaluate(() => window.__pwned), undefined);
        assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no CSP violation');
        assert.deepEqual(problems, [], 'no dialog, console error, failed or foreign request');
        for (const u of p.requests) assert.ok(target().isOwn(u), `own files only: ${u}`);

        // Control: the policy is in force and the violation listener works — an inline script
        // added by a test is refused, does not run, and is reported.
        await page.evaluate(() => {
          const s = document.createElement('script');
          s.textContent = 'window.__pwned = "inline";';
          document.body.append(s);
        });
        await page.waitForFunction(() => window.__csp.length > 0);
        assert.equal(await page.evaluate(() => window.__pwned), undefined);
        assert.match((await page.evaluate(() => window.__csp)).join('\n'), /script-src/);
        assert.ok(
          problems.some((m) => /Content Security Policy/.test(m)),
          'the refusal is logged in the console',
        );
      } finally {
        await p.close();
      }
    });
  });
}
