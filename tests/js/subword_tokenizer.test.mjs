// The subword tokenizer through the wasm module under node: every text of
// tests/fixtures/english_subword_golden.json (11,511 held-out sentences, edge cases, random
// strings; ids and spans of the sentencepiece library, scripts/fixtures/make_subword_golden.py)
// identical, spans and word spans in UTF-16 code units, word_index on a worked example, and
// errors as JS Errors after which the tokenizer keeps working.
// Run: node --test tests/js/subword_tokenizer.test.mjs   Needs build/wasm/mha_wasm.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, fixture, loadModule } from './module.mjs';

const descriptionText = readFileSync(
  path.join(root, 'tests/fixtures/english_subword_tokenizer.json'),
  'utf8',
);

let mod;
let tokenizer;
before(async () => {
  mod = await loadModule();
  tokenizer = new mod.SubwordTokenizer(descriptionText);
});
after(() => tokenizer?.delete());

/** UTF-16 offset of every UTF-8 byte offset of text (those inside a character: its start). */
function utf16AtByte(text) {
  const at = [];
  let units = 0;
  for (const ch of text) {
    const bytes = new TextEncoder().encode(ch).length;
    for (let k = 0; k < bytes; k++) at.push(units);
    units += ch.length;
  }
  at.push(units);
  return at;
}

/** The golden spans ("begin length length ...", UTF-8 bytes) as flat UTF-16 [begin, end, ...]. */
function goldenSpans(text, spans) {
  const v = spans ? spans.split(' ').map(Number) : [];
  const at = utf16AtByte(text);
  const flat = [];
  let byte = v[0];
  for (let i = 1; i < v.length; i++) {
    flat.push(at[byte], at[byte + v[i]]);
    byte += v[i];
  }
  return flat;
}

function same(text, ids, spans) {
  const e = tokenizer.encode(text);
  const want = ids ? ids.split(' ').map(Number) : [];
  return (
    e.ids.length === want.length &&
    e.ids.every((id, i) => id === want[i]) &&
    e.spans.length === 2 * want.length &&
    goldenSpans(text, spans).every((s, i) => s === e.spans[i])
  );
}

test('every golden text encodes as the sentencepiece library does', () => {
  const doc = fixture('english_subword_golden.json');
  assert.equal(doc.held_out.length, 11511);
  const heldOut = doc.held_out.filter(([text, ids, spans]) => same(text, ids, spans)).length;
  const edge = doc.edge_cases.filter(([, text, ids, spans]) => same(text, ids, spans));
  assert.equal(heldOut, doc.held_out.length);
  assert.equal(edge.length, doc.edge_cases.length);
  console.log(
    `wasm: ${heldOut} of ${doc.held_out.length} held-out sentences and ${edge.length} of ` +
      `${doc.edge_cases.length} edge cases identical to sentencepiece ${doc.sentencepiece}`,
  );
});

test('pieces, UTF-16 spans, words and word_index of a worked example', () => {
  assert.equal(tokenizer.vocabSize, 4096);
  assert.equal(tokenizer.pieces.length, 4096);
  assert.deepEqual(tokenizer.pieces.slice(0, 3), ['<unk>', '<bos>', '<0x00>']);
  const text = 'Hello,  World’s 12 café 😀!';
  const e = tokenizer.encode(text);
  assert.deepEqual(e.pieces, [
    '▁hell',
    'o',
    ',',
    '▁world',
    "'",
    's',
    '▁',
    '1',
    '2',
    '▁ca',
    'f',
    '<0xC3>',
    '<0xA9>',
    '▁',
    '<0xF0>',
    '<0x9F>',
    '<0x98>',
    '<0x80>',
    '!',
  ]);
  assert.ok(e.ids instanceof Int32Array && e.spans instanceof Int32Array);
  // UTF-16: the emoji is two code units (24-26), é one.
  assert.deepEqual(
    [...e.spans],
    [
      0, 4, 4, 5, 5, 6, 6, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18, 21, 21, 22, 22, 22, 22,
      23, 23, 24, 24, 24, 24, 24, 24, 24, 24, 26, 26, 27,
    ],
  );
  const pieceTexts = [];
  for (let i = 0; i < e.ids.length; i++)
    pieceTexts.push(text.slice(e.spans[2 * i], e.spans[2 * i + 1]));
  assert.equal(pieceTexts.join(''), text);
  assert.deepEqual(e.words, ['Hello', ',', 'World’s', '12', 'café', '😀', '!']);
  assert.deepEqual([...e.word_spans], [0, 5, 5, 6, 8, 15, 16, 18, 19, 23, 24, 26, 26, 27]);
  assert.deepEqual([...e.word_index], [0, 0, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6]);
  const empty = tokenizer.encode('   ');
  assert.equal(empty.ids.length, 0);
  assert.deepEqual(empty.words, []);
});

test('the description as an object gives the same tokenizer', () => {
  const t = new mod.SubwordTokenizer(JSON.parse(descriptionText));
  try {
    assert.deepEqual([...t.encode('The cat sat.').ids], [...tokenizer.encode('The cat sat.').ids]);
  } finally {
    t.delete();
  }
});

test('bad descriptions and text are JS Errors; the tokenizer keeps working', () => {
  const d = JSON.parse(descriptionText);
  const cases = [
    [() => new mod.SubwordTokenizer(42), /needs the tokenizer's JSON text or object, got 42/],
    [() => new mod.SubwordTokenizer('{"type":'), /the tokenizer description is malformed JSON/],
    [
      () => new mod.SubwordTokenizer({ ...d, scores: d.scores.slice(1) }),
      /^Error: scores has 4095 entries, pieces has 4096$/,
    ],
    [
      () => new mod.SubwordTokenizer({ ...d, types: ['odd', ...d.types.slice(1)] }),
      /types\[0\] must be one of/,
    ],
    [() => tokenizer.encode(7), /encode\(text\): text must be a string, got a number/],
    [() => tokenizer.encode('a\uD800b'), /a lone surrogate at index 1/],
  ];
  for (const [call, message] of cases) {
    assert.throws(call, message);
    assert.deepEqual([...tokenizer.encode('the cat').ids], [262, 1772]);
  }
});
