// The one schema of the trained models' heads files (web/src/modes/trained/heads_file.js): both
// shipped files name their model as {"model": {"xxh64", "file", "config"}} with "heads" beside it,
// and the one reader finds the checksum and says when roles were measured on another file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { measuredElsewhere, rolesChecksum } from '../../web/src/modes/trained/heads_file.js';

const shipped = (name) =>
  JSON.parse(readFileSync(new URL(`../../web/${name}`, import.meta.url), 'utf8'));

/** The metadata of a safetensors file (its __metadata__). */
function metadataOf(name) {
  const bytes = readFileSync(new URL(`../../web/${name}`, import.meta.url));
  const n = Number(bytes.readBigUInt64LE(0));
  return JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')).__metadata__;
}

test('both shipped heads files: model.xxh64, model.file, model.config and heads, for the shipped model file', () => {
  for (const [heads, model, layersKey] of [
    ['date_model_heads.json', 'date_model.safetensors', 'num_encoder_layers'],
    ['english_lm_heads.json', 'english_lm.safetensors', 'num_layers'],
  ]) {
    const json = shipped(heads);
    assert.equal(json.model.file, `web/${model}`, heads);
    assert.match(json.model.xxh64, /^[0-9a-f]{16}$/, heads);
    assert.equal(
      json.model.xxh64,
      metadataOf(model).xxh64,
      `${heads} was measured on the shipped ${model}`,
    );
    assert.deepEqual(json.model.config, JSON.parse(metadataOf(model).config), heads);
    assert.equal(typeof json.model.config[layersKey], 'number', heads);
    assert.ok(Array.isArray(json.heads) && json.heads.length > 0, heads);
    assert.equal(json.model_xxh64, undefined, `${heads}: no second key for the checksum`);
    assert.equal(rolesChecksum(json), json.model.xxh64);
  }
});

test('rolesChecksum: json.model.xxh64 in lowercase, else null', () => {
  assert.equal(
    rolesChecksum({ model: { xxh64: 'DDC8DC5EAE1D5285', file: 'web/date_model.safetensors' } }),
    'ddc8dc5eae1d5285',
  );
  for (const bad of [
    null,
    undefined,
    [],
    'x',
    {},
    { model: { xxh64: 'nope' } },
    { model: { xxh64: 42 } },
    { model_xxh64: '817312c41723292b' },
  ]) {
    assert.equal(rolesChecksum(bad), null, JSON.stringify(bad));
  }
});

test('measuredElsewhere: the note when the roles belong to another model file, else null', () => {
  const json = { model: { xxh64: '817312c41723292b' }, heads: [] };
  assert.equal(measuredElsewhere(json, '817312C41723292B', 'Head roles'), null);
  assert.equal(
    measuredElsewhere(json, '0123456789abcdef', 'Held-out head roles'),
    'Held-out head roles not shown: they were measured on another model file (xxh64 817312c41723292b, this one is 0123456789abcdef)',
  );
  assert.equal(
    measuredElsewhere({ heads: [] }, '0123456789abcdef', 'Head roles'),
    null,
    'a file that names no model',
  );
  assert.equal(measuredElsewhere(null, '0123456789abcdef', 'Head roles'), null);
});
