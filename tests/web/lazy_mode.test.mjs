// The alert of a mode whose script or files could not be loaded (modes/lazy_mode.js): where the
// missing file belongs is said once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureText } from '../../web/src/modes/lazy_mode.js';

test("a missing script: the loader's advice once, not again by the stand-in", () => {
  const loader =
    'english.js did not load: keep it next to index.html (./scripts/build.sh writes it)';
  const text = failureText('English mode', 'english.js', loader);
  assert.equal(
    text,
    'The English mode could not be loaded: english.js did not load: keep it next to index.html ' +
      '(./scripts/build.sh writes it).',
  );
  assert.equal(text.match(/did not load/g).length, 1);
  assert.equal(text.match(/next to index\.html/g).length, 1);
  // The mode's stylesheet missing: its own advice, not advice about english.js.
  assert.equal(
    failureText(
      'English mode',
      'english.js',
      'english.css did not load: keep it next to index.html',
    ),
    'The English mode could not be loaded: english.css did not load: keep it next to index.html.',
  );
});

test("any other failure: the error, then where the mode's script belongs", () => {
  assert.equal(
    failureText('Date translator', 'date.js', 'date.js loaded but defines no mhaDateMode'),
    'The Date translator could not be loaded: date.js loaded but defines no mhaDateMode. ' +
      'Keep date.js next to index.html (./scripts/build.sh writes it).',
  );
});
