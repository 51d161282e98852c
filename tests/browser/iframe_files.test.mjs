// The iframe's file list of docs/embedding.md ("The files", the table after <!-- iframe files -->):
// exactly the files it names are copied from dist/ into an empty folder, and every mode of the page
// (random embeddings, the Date translator, the English mode, and embed=1) is opened from that folder,
// served over http and from file://: each comes up ready, with no request for a file outside the
// list (a missing one fails the request) and no "did not load" message. Then, with english.js
// removed, the English tab's alert says that it did not load once, not twice.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIST, ROOT, openPage, useBrowserAndTargets } from './helpers.mjs';

const TIMEOUT = 180_000;

/** The first column's file names of the table that follows `<!-- iframe files -->` in docs/embedding.md. */
export function iframeFiles(markdown) {
  const start = markdown.indexOf('<!-- iframe files -->');
  assert.ok(start >= 0, 'docs/embedding.md marks the iframe file table with <!-- iframe files -->');
  const rows = [];
  for (const line of markdown.slice(start).split('\n').slice(1)) {
    if (!line.startsWith('|')) {
      if (rows.length) break;
      continue;
    }
    rows.push(line);
  }
  const files = rows
    .slice(2)
    .flatMap((r) => [...r.split('|')[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]));
  assert.ok(files.length > 0, 'the iframe table names files');
  return files;
}

const FILES = iframeFiles(readFileSync(path.join(ROOT, 'docs', 'embedding.md'), 'utf8'));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'mha-iframe-files-'));
const env = useBrowserAndTargets(() => {
  for (const f of FILES) copyFileSync(path.join(DIST, f), path.join(tmp, f));
  return { dir: tmp };
});
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Each mode: its address and the selector that says it is ready. */
const MODES = [
  ['random embeddings', '#preset=module-08&cell=0.0.2', '#heads canvas[data-head="1"]'],
  ['embed=1', '#preset=module-08&cell=0.0.2&embed=1', '#heads canvas[data-head="1"]'],
  ['the Date translator', '#mode=date&date=30.11.26', '#date-panel[data-state="ready"]'],
  [
    'the English mode',
    '#mode=english&text=The%20dog%20sat%20by%20the%20door.',
    '#english-panel[data-state="ready"]',
  ],
];

for (const which of [0, 1]) {
  const target = () => env.servers.targets[which];
  describe(`the iframe's files of docs/embedding.md, ${which === 0 ? 'served over http' : 'opened from file://'}`, {
    timeout: TIMEOUT,
  }, () => {
    for (const [name, hash, ready] of MODES) {
      test(`${name}: ready from the listed files alone`, async () => {
        const p = await openPage(env.browser, target(), hash);
        try {
          await p.page.waitForSelector(`${ready}, p.alert[role="alert"]:not(:empty)`, {
            timeout: 60_000,
          });
          const alerts = await p.page.$$eval('[role="alert"]', (as) =>
            as.map((a) => a.textContent).filter(Boolean),
          );
          assert.deepEqual(
            alerts.filter((a) => /did not load|could not be loaded/.test(a)),
            [],
          );
          assert.ok(await p.page.$(ready), `${ready}: ${alerts.join(' | ')}`);
          assert.doesNotMatch(await p.page.textContent('body'), /did not load/);
          assert.deepEqual(
            p.problems,
            [],
            'no failed request (every file it asked for is listed), no console error',
          );
          const asked = new Set(
            p.requests
              .filter((u) => !u.startsWith('data:') && !u.startsWith('blob:'))
              .map((u) => decodeURIComponent(new URL(u).pathname.split('/').pop()))
              .filter(Boolean),
          );
          for (const f of asked)
            assert.ok(
              FILES.includes(f),
              `${f} is requested but not listed: ${[...asked].join(' ')}`,
            );
        } finally {
          await p.close();
        }
      });
    }
  });
}

test('english.js missing: the English tab says once that it did not load', {
  timeout: TIMEOUT,
}, async () => {
  rmSync(path.join(tmp, 'english.js'));
  try {
    const p = await openPage(env.browser, env.servers.targets[1], '#mode=english');
    try {
      const alert = await (
        await p.page.waitForSelector('#english-panel p.alert', { timeout: 30_000 })
      ).textContent();
      assert.equal(
        alert,
        'The English mode could not be loaded: english.js did not load: keep it next to index.html ' +
          '(./scripts/build.sh writes it).',
      );
      assert.equal(alert.match(/did not load/g).length, 1);
    } finally {
      await p.close();
    }
  } finally {
    copyFileSync(path.join(DIST, 'english.js'), path.join(tmp, 'english.js'));
  }
});
