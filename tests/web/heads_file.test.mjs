// The one schema of the trained models' heads files (web/src/modes/trained/heads_file.js): both
// shipped files name their model as {"model": {"xxh64", "file", "config"}} with "heads" beside it,
// and the one reader finds the checksum and says when roles were measured on another file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  measuredElsewhere,
  readCardRow,
  readHeadsFile,
  rolesChecksum,
} from '../../web/src/modes/trained/heads_file.js';

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

test('readHeadsFile: the English file’s cards, protocols, measurement and checkpoints, read as written', () => {
  const json = shipped('english_lm_heads.json');
  const f = readHeadsFile(json);
  assert.equal(f.heads.size, json.heads.length);
  for (const h of json.heads) {
    const got = f.heads.get(`${h.layer}.${h.head}`);
    assert.equal(got.role, h.role);
    assert.equal(got.card.length, h.card.length);
    for (const [i, row] of h.card.entries()) {
      assert.equal(got.card[i].name, row.name);
      assert.equal(got.card[i].value, row.value);
      assert.equal(got.card[i].chance, row.chance);
      assert.equal(got.card[i].count, row.count);
      assert.equal(got.card[i].probe, row.probe);
    }
  }
  assert.deepEqual([...f.protocols.keys()], Object.keys(json.protocols));
  for (const [name, p] of f.protocols) {
    assert.equal(p.protocol, json.protocols[name].protocol);
    assert.equal(p.figure, json.protocols[name].figure ?? null);
  }
  const c = json.measured.coreference_head;
  assert.equal(f.coreferenceHead, `${c.layer}.${c.head}`);
  assert.equal(f.checkpoints.length, json.checkpoints.length);
  // Every card row names a score the file has a protocol for.
  for (const h of f.heads.values())
    for (const row of h.card) assert.ok(f.protocols.has(row.name), row.name);
});

test('readHeadsFile: the date model’s file (roles only) and malformed parts read as nothing', () => {
  const date = readHeadsFile(shipped('date_model_heads.json'));
  assert.equal(date.protocols.size, 0);
  assert.equal(date.coreferenceHead, null);
  for (const h of date.heads.values()) assert.deepEqual(h.card, []);
  for (const bad of [null, [], 'x', { heads: 'no', protocols: [], measured: 3 }]) {
    const f = readHeadsFile(bad);
    assert.equal(f.heads.size, 0);
    assert.equal(f.protocols.size, 0);
    assert.deepEqual(f.measured, {});
  }
  assert.deepEqual(
    readCardRow({ name: 'induction', value: Number.NaN, chance: 0.1, count: -1, offset: -1 }),
    {
      name: 'induction',
      value: null,
      chance: 0.1,
      count: null,
      probe: null,
      offset: -1,
    },
  );
  assert.equal(readCardRow({ value: 1 }), null);
  const f = readHeadsFile({
    heads: [{ layer: 0, head: 0, role: 'x', card: [{ name: 'a', value: 1 }, { value: 2 }, null] }],
    measured: { coreference_head: { layer: 'a', head: 0 } },
  });
  assert.equal(f.heads.get('0.0').card.length, 1);
  assert.equal(f.coreferenceHead, null);
});
