// Sharing (links and snippets), the cell selection with its lock, and the announcement text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  elementSnippet,
  escapeAttribute,
  iframeSnippet,
  linkWithHash,
  shareableLink,
} from '../../web/src/chrome/share.js';
import { CellSelection } from '../../web/src/draw/selection.js';
import { announceText } from '../../web/src/chrome/announce.js';
import { DEFAULTS } from '../../web/src/modes/random/random_state.js';

test('links keep the address and replace the hash', () => {
  assert.equal(
    linkWithHash('https://x.org/a/index.html#old', 'preset=module-08'),
    'https://x.org/a/index.html#preset=module-08',
  );
  assert.equal(
    linkWithHash('file:///tmp/dist/index.html', '#embed=1'),
    'file:///tmp/dist/index.html#embed=1',
  );
  assert.equal(linkWithHash('https://x.org/#a', ''), 'https://x.org/');
});

test('a link handed on names no folder of the disk: relative from file://, whole from a host', () => {
  assert.deepEqual(shareableLink('https://x.org/a/index.html#old', 'mode=english&text=a'), {
    link: 'https://x.org/a/index.html#mode=english&text=a',
    relative: false,
  });
  assert.deepEqual(shareableLink('http://127.0.0.1:8000/#x', 'embed=1'), {
    link: 'http://127.0.0.1:8000/#embed=1',
    relative: false,
  });
  assert.deepEqual(
    shareableLink('file:///home/ann/course/dist/index.html#old', '#mode=date&embed=1'),
    { link: 'index.html#mode=date&embed=1', relative: true },
  );
  assert.deepEqual(shareableLink('file:///C:/Users/ann/mha/page.html', ''), {
    link: 'page.html',
    relative: true,
  });
  assert.deepEqual(shareableLink('file:///srv/dist/', 'a=1'), {
    link: 'index.html#a=1',
    relative: true,
  });
  for (const href of [
    'file:///home/ann/dist/index.html',
    'file:///C:/x/index.html?q=1',
    'blob:null/1234',
  ]) {
    assert.doesNotMatch(shareableLink(href, 'text=a').link, /file:|home|ann|C:|blob:/, href);
  }
});

test('snippets escape what goes into attributes', () => {
  assert.equal(escapeAttribute('a&b"<c>'), 'a&amp;b&quot;&lt;c&gt;');
  assert.equal(
    iframeSnippet('https://x.org/index.html#text=a&embed=1'),
    '<iframe src="https://x.org/index.html#text=a&amp;embed=1" title="Multi-head attention weights (mha-lab)" ' +
      'width="100%" height="560" loading="lazy" allow="clipboard-write" data-mha-embed></iframe>' +
      '<script src="mha-embed.js"></script>',
  );
  assert.match(
    iframeSnippet('x', { title: '"><script>', height: 300.4 }),
    /title="&quot;&gt;&lt;script&gt;" width="100%" height="300"/,
  );
});

test('element snippet: a preset, or every setting as an attribute', () => {
  assert.equal(
    elementSnippet(DEFAULTS, { preset: 'module-08' }),
    '<script src="mha-attention.js"></script>\n<mha-attention preset="module-08"></mha-attention>',
  );
  const s = {
    text: 'The "cat" sat',
    d_model: 8,
    num_heads: 2,
    seed: 7,
    causal: true,
    positional: false,
  };
  assert.equal(
    elementSnippet(s, {
      scriptSrc: 'https://x.org/mha/mha-attention.js',
      cell: { head: 1, row: 0, col: 2 },
    }),
    '<script src="https://x.org/mha/mha-attention.js"></script>\n' +
      '<mha-attention tokens="The &quot;cat&quot; sat" d-model="8" num-heads="2" seed="7" causal cell="1.0.2"></mha-attention>',
  );
});

test("announcements read \"head h, query 'q', key 'k': w\"", () => {
  assert.equal(announceText(2, 'cat', 'sat', 0.4239), "head 2, query 'cat', key 'sat': 0.424");
  assert.equal(
    announceText(0, 'a', 'b', 0, { masked: true }),
    "head 0, query 'a', key 'b': 0.000 (every key of this row is masked)",
  );
  assert.equal(
    announceText(1, 'a', 'b', 1, { lock: 'locked' }),
    "head 1, query 'a', key 'b': 1.000, locked",
  );
});

test('selection: hover, lock by click/Enter, arrows move the lock, Escape clears', () => {
  const log = [];
  const sel = new CellSelection((cell, info) =>
    log.push([cell && `${cell.head}.${cell.row}.${cell.col}`, info.locked, info.reason]),
  );
  sel.hover({ head: 0, row: 1, col: 2 });
  sel.hover({ head: 0, row: 1, col: 2 }); // the same cell: no report
  assert.deepEqual(log, [['0.1.2', false, 'hover']]);
  sel.toggle({ head: 0, row: 1, col: 2 });
  assert.equal(sel.locked, true);
  assert.deepEqual(sel.lockedCell, { head: 0, row: 1, col: 2 });
  sel.hover({ head: 1, row: 0, col: 0 }); // ignored while locked
  sel.hover(null);
  sel.blur();
  assert.deepEqual(sel.cell, { head: 0, row: 1, col: 2 });
  sel.move({ head: 0, row: 2, col: 2 }); // arrows: the lock moves along
  assert.deepEqual([sel.lockedCell, sel.locked], [{ head: 0, row: 2, col: 2 }, true]);
  sel.toggle({ head: 1, row: 0, col: 0 }); // another cell: locks that one
  assert.deepEqual(sel.lockedCell, { head: 1, row: 0, col: 0 });
  sel.toggle({ head: 1, row: 0, col: 0 }); // the locked cell: unlocks, stays current
  assert.deepEqual(
    [sel.cell, sel.locked, sel.lockedCell],
    [{ head: 1, row: 0, col: 0 }, false, null],
  );
  sel.toggle({ head: 1, row: 0, col: 0 });
  sel.clear();
  assert.deepEqual([sel.cell, sel.locked], [null, false]);
  sel.restore({ head: 0, row: 0, col: 3 }, true);
  assert.deepEqual(
    log.map((l) => l[2]),
    ['hover', 'lock', 'move', 'lock', 'unlock', 'lock', 'clear', 'restore'],
  );
  assert.deepEqual(log.at(-1), ['0.0.3', true, 'restore']);
  sel.blur();
  assert.deepEqual(sel.cell, { head: 0, row: 0, col: 3 }, 'a locked cell survives blur');
  sel.toggle(sel.cell);
  sel.blur();
  assert.equal(sel.cell, null, 'an unlocked one does not');
});
