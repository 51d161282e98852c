// The English mode's examples and default text use only words the shipped model knows: an
// unknown word is read as <unk>, and a repeated list with <unk> in it shows a weaker induction
// stripe than the example promises. Reads the vocabulary from web/english_lm.safetensors's
// metadata and splits the texts with the page's token rule (docs/english-lm-format.md: lookup
// form is ASCII A–Z lower-cased, U+2019 written as ').
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenize } from '../../web/src/chrome/tokenize.js';
import { EXAMPLES } from '../../web/src/modes/english/english_text.js';
import { ENGLISH_DEFAULTS } from '../../web/src/modes/english/english_state.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function vocabulary() {
  const bytes = readFileSync(path.join(ROOT, 'web', 'english_lm.safetensors'));
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  return new Set(JSON.parse(header.__metadata__.vocab));
}

const lookup = (token) => token.replace(/[A-Z]/g, (c) => c.toLowerCase()).replace(/\u2019/g, "'");

test("every example and the default text use only words in the model's vocabulary", () => {
  const vocab = vocabulary();
  assert.equal(vocab.size, 4000);
  assert.ok(!vocab.has('candle'), 'the check can fail: a word the model does not know');
  const texts = [...EXAMPLES.map((e) => [e.id, e.text]), ['default', ENGLISH_DEFAULTS.text]];
  for (const [id, text] of texts) {
    const unknown = tokenize(text).filter((t) => !/^\s+$/.test(t) && !vocab.has(lookup(t)));
    assert.deepEqual(unknown, [], `${id}: not in the vocabulary`);
  }
});
