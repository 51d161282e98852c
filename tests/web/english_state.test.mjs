// The English mode's address keys (web/src/modes/english/english_state.js): text, off, sel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ENGLISH_DEFAULTS,
  ENGLISH_HASH_KEYS,
  MAX_TEXT_CHARS,
  englishStateToHash,
  headId,
  parseEnglishHash,
  parseHead,
  parseOffHeads,
} from '../../web/src/modes/english/english_state.js';
import { parseMode } from '../../web/src/chrome/address_keys.js';

test('mode=english is a mode of the address', () => {
  assert.deepEqual(parseMode('#mode=english&text=hi'), { mode: 'english', notes: [] });
  assert.deepEqual(ENGLISH_HASH_KEYS, ['mode', 'text', 'off', 'sel', 'words']);
});

test('no keys: the defaults', () => {
  const { state, notes } = parseEnglishHash('#mode=english');
  assert.deepEqual(state, { text: ENGLISH_DEFAULTS.text, off: [], sel: null, words: false });
  assert.deepEqual(notes, []);
});

test('text, off, sel and words are read back from the hash they write', () => {
  for (const state of [
    { text: 'The cat sat, then ran / away.', off: ['0.1', '1.3'], sel: '1.2', words: false },
    { text: '', off: [], sel: null, words: true },
    { text: 'émile 😀 & = # ? % +', off: ['10.15'], sel: '0.0', words: true },
  ]) {
    const hash = englishStateToHash(state);
    assert.match(hash, /^mode=english&text=/);
    assert.equal(parseMode(`#${hash}`).mode, 'english');
    assert.deepEqual(parseEnglishHash(`#${hash}`), { state, notes: [] }, hash);
  }
});

test('spaces are %20 and commas stay readable', () => {
  assert.equal(
    englishStateToHash({ text: 'a b, c', off: [], sel: null }),
    'mode=english&text=a%20b,%20c',
  );
});

test('words=1 is the by-word view; pieces by default (no key written); anything else a note', () => {
  assert.equal(parseEnglishHash('#mode=english&words=1').state.words, true);
  assert.equal(parseEnglishHash('#mode=english&words=0').state.words, false);
  assert.equal(
    englishStateToHash({ text: 'a', off: [], sel: '1.2', words: true }),
    'mode=english&text=a&sel=1.2&words=1',
  );
  assert.equal(
    englishStateToHash({ text: 'a', off: [], sel: null, words: false }),
    'mode=english&text=a',
  );
  const { state, notes } = parseEnglishHash('#mode=english&words=yes');
  assert.equal(state.words, false);
  assert.deepEqual(notes, [
    'words=yes in the address is not 1 (by word) or 0 (pieces); showing pieces.',
  ]);
});

test('heads are layer.head; bad ones are dropped with a note', () => {
  assert.deepEqual(parseHead('1.2'), { layer: 1, head: 2 });
  assert.equal(parseHead('1/2'), null);
  assert.equal(parseHead('-1.2'), null);
  assert.equal(headId({ layer: 3, head: 0 }), '3.0');
  assert.deepEqual(parseOffHeads('0.1, 0.1,x,1.03'), { off: ['0.1', '1.3'], bad: ['x'] });
  const { state, notes } = parseEnglishHash('#mode=english&off=0.1,cross/1/2&sel=<b>');
  assert.deepEqual(state.off, ['0.1']);
  assert.equal(state.sel, null);
  assert.equal(notes.length, 2);
  assert.match(notes[0], /off=cross\/1\/2 .*ignored/);
  assert.match(notes[1], /sel=<b> .*no head enlarged/);
});

test('a text longer than the address may carry falls back to the default, with a note', () => {
  const { state, notes } = parseEnglishHash(`#mode=english&text=${'a'.repeat(MAX_TEXT_CHARS + 1)}`);
  assert.equal(state.text, ENGLISH_DEFAULTS.text);
  assert.match(notes[0], /characters \(at most 20000\)/);
});
