// The English mode's examples and default text, read by the shipped subword model's own
// tokenizer (mod.SubwordTokenizer of the full module, on the tokenizer in
// web/english_lm.safetensors's metadata): every text reads without an unknown piece, and each
// example holds what it is meant to show (a repeated phrase, a pronoun, a list with commas).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXAMPLES } from '../../web/src/modes/english/english_text.js';
import { ENGLISH_DEFAULTS } from '../../web/src/modes/english/english_state.js';
import { loadModule } from '../js/module.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function metadata() {
  const bytes = readFileSync(path.join(ROOT, 'web', 'english_lm.safetensors'));
  const headerLength = Number(bytes.readBigUInt64LE(0));
  return JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')).__metadata__;
}

let tok;
before(async () => {
  const mod = await loadModule();
  tok = new mod.SubwordTokenizer(metadata().tokenizer);
});

const example = (id) => EXAMPLES.find((e) => e.id === id).text;

test('every example and the default text read without an unknown piece', () => {
  const unk = tok.pieces.indexOf('<unk>');
  for (const [id, text] of [
    ...EXAMPLES.map((e) => [e.id, e.text]),
    ['default', ENGLISH_DEFAULTS.text],
  ]) {
    const e = tok.encode(text);
    assert.ok(e.ids.length > 5, id);
    assert.ok(![...e.ids].includes(unk), `${id}: an unknown piece`);
  }
});

test('the repeated phrase repeats a run of at least 8 pieces; the list has commas; the pronoun example a pronoun', () => {
  const p = tok.encode(example('induction')).pieces;
  const longestRepeat = (() => {
    let best = 0;
    for (let i = 0; i < p.length; i++)
      for (let j = i + 1; j < p.length; j++) {
        let k = 0;
        while (j + k < p.length && p[i + k] === p[j + k] && i + k < j) k++;
        best = Math.max(best, k);
      }
    return best;
  })();
  assert.ok(longestRepeat >= 8, `longest repeated run ${longestRepeat}`);
  assert.ok(tok.encode(example('punctuation')).words.filter((w) => w === ',').length >= 4);
  assert.ok(tok.encode(example('coreference')).words.includes('it'));
});
