import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize, tokenizeChecked, MAX_TOKENS } from '../../web/src/chrome/tokenize.js';

test('words are runs of letters and digits; spaces only separate', () => {
  assert.deepEqual(tokenize('Heads look at different things'), [
    'Heads',
    'look',
    'at',
    'different',
    'things',
  ]);
  assert.deepEqual(tokenize('  a\tb\n42  '), ['a', 'b', '42']);
  assert.deepEqual(tokenize(''), []);
  assert.deepEqual(tokenize('   '), []);
});

test('an inner apostrophe (straight or curly) keeps a word whole', () => {
  assert.deepEqual(tokenize("don't l’homme"), ["don't", 'l’homme']);
  assert.deepEqual(tokenize("'quoted'"), ["'", 'quoted', "'"]);
});

test('every other non-space character is a token by itself', () => {
  assert.deepEqual(tokenize('Hello, world.'), ['Hello', ',', 'world', '.']);
  assert.deepEqual(tokenize('a+b=c'), ['a', '+', 'b', '=', 'c']);
  assert.deepEqual(tokenize('snake_case'), ['snake', '_', 'case']);
});

test('markup is split into plain tokens', () => {
  assert.deepEqual(tokenize('<img src=x onerror=window.__pwned=1>'), [
    '<',
    'img',
    'src',
    '=',
    'x',
    'onerror',
    '=',
    'window',
    '.',
    '_',
    '_',
    'pwned',
    '=',
    '1',
    '>',
  ]);
});

test('Unicode letters, combining marks and emoji sequences', () => {
  assert.deepEqual(tokenize('naïve café Ελλάδα 東京'), ['naïve', 'café', 'Ελλάδα', '東京']);
  assert.deepEqual(tokenize('cafe\u0301'), ['cafe\u0301']); // decomposed é stays in the word
  assert.deepEqual(tokenize('नमस्ते दुनिया'), ['नमस्ते', 'दुनिया']);
  assert.deepEqual(tokenize('hi 👍🏽 👩‍💻!'), ['hi', '👍🏽', '👩‍💻', '!']);
  assert.deepEqual(tokenize('🇫🇷🇩🇪'), ['🇫🇷', '🇩🇪']);
});

test('token count limits', () => {
  assert.equal(MAX_TOKENS, 2048);
  assert.equal(tokenizeChecked('a '.repeat(2048)).ok, true);
  const over = tokenizeChecked('a '.repeat(2049));
  assert.equal(over.ok, false);
  assert.match(over.message, /2049 tokens; this page shows at most 2048/);
  const none = tokenizeChecked(' ');
  assert.equal(none.ok, false);
  assert.match(none.message, /no tokens/);
});

test('invisible format characters separate and are never tokens of their own', () => {
  // U+200B zero-width space, U+00AD soft hyphen, U+FEFF byte-order mark, U+2060 word joiner.
  assert.deepEqual(tokenize('cat\u200Bsat'), ['cat', 'sat']);
  assert.deepEqual(tokenize('\uFEFFThe cat \u200B sat\u2060'), ['The', 'cat', 'sat']);
  assert.deepEqual(tokenize('a \u00AD b'), ['a', 'b']);
  // A zero-width joiner inside an emoji sequence still keeps the sequence whole.
  assert.deepEqual(tokenize('hi 👩\u200D💻'), ['hi', '👩\u200D💻']);
});
