// web/src/chrome/address_keys.js parseMode (the mode) and web/src/modes/date/date_state.js (the
// Date translator's settings) in the URL hash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DATE_DEFAULTS,
  DATE_HASH_KEYS,
  LAST_LAYER,
  parseOff,
  parseDateHash,
  dateStateToHash,
} from '../../web/src/modes/date/date_state.js';
import { parseMode } from '../../web/src/chrome/address_keys.js';
import { parseHash } from '../../web/src/modes/random/random_state.js';

test('no mode, or mode=random, is the random-embeddings page; mode=date the translator', () => {
  assert.deepEqual(parseMode(''), { mode: 'random', notes: [] });
  assert.deepEqual(parseMode('#preset=module-08'), { mode: 'random', notes: [] });
  assert.deepEqual(parseMode('#mode=random'), { mode: 'random', notes: [] });
  assert.deepEqual(parseMode('#mode=date'), { mode: 'date', notes: [] });
  const bad = parseMode('#mode=%3Cb%3E');
  assert.equal(bad.mode, 'random');
  assert.deepEqual(bad.notes, ['Unknown mode "<b>" in the address; showing random embeddings.']);
});

test("the brief's example address", () => {
  const { state, notes } = parseDateHash('#mode=date&date=Nov%2030,%202026');
  assert.deepEqual(
    state,
    { date: 'Nov 30, 2026', kind: 'cross', layer: LAST_LAYER, off: [] },
    'the last layer by default',
  );
  assert.deepEqual(notes, []);
});

test('kind and layer; invalid values fall back with a note', () => {
  assert.deepEqual(parseDateHash('#mode=date&kind=decoder_self&layer=1').state, {
    ...DATE_DEFAULTS,
    kind: 'decoder_self',
    layer: 1,
  });
  const r = parseDateHash('#mode=date&kind=bogus&layer=-1');
  assert.deepEqual(r.state, DATE_DEFAULTS);
  assert.equal(r.notes.length, 2);
  assert.match(
    r.notes[0],
    /kind=bogus in the address is not one of encoder_self, decoder_self, cross; using kind=cross\./,
  );
  assert.match(r.notes[1], /layer=-1 in the address is not a layer number; using the last layer\./);
  const long = parseDateHash(`#mode=date&date=${'x'.repeat(2001)}`);
  assert.equal(long.state.date, DATE_DEFAULTS.date);
  assert.match(long.notes[0], /2001 characters \(at most 2000\)/);
  assert.equal(parseDateHash('#mode=date&date=').state.date, '', 'an empty date is kept');
});

test('written and read back: spaces as %20, commas and slashes kept, & # + escaped', () => {
  const h = dateStateToHash({ date: 'Nov 30, 2026', kind: 'cross', layer: 1 });
  assert.equal(h, 'mode=date&date=Nov%2030,%202026&kind=cross&layer=1');
  assert.equal(
    dateStateToHash(DATE_DEFAULTS),
    'mode=date&date=Nov%2030,%202026&kind=cross',
    'no layer: the last',
  );
  assert.deepEqual(parseDateHash(`#${dateStateToHash(DATE_DEFAULTS)}`).state, DATE_DEFAULTS);
  for (const date of ['30/11/2026', 'a&b=c#d+e', '31 February 2026', '<img src=x>', '  ', '😀 é']) {
    for (const kind of ['encoder_self', 'decoder_self', 'cross']) {
      const state = { date, kind, layer: 1, off: [] };
      const hash = `#${dateStateToHash(state)}`;
      assert.equal(parseMode(hash).mode, 'date');
      assert.deepEqual(parseDateHash(hash), { state, notes: [] }, hash);
    }
  }
});

test('heads switched off: kind/layer/head items, in the address and back', () => {
  assert.deepEqual(parseOff('cross/1/2, encoder_self/0/3,cross/1/2'), {
    off: ['cross/1/2', 'encoder_self/0/3'],
    bad: [],
  });
  assert.deepEqual(parseOff('cross/01/2,bogus/0/0,cross/1,<b>'), {
    off: ['cross/1/2'],
    bad: ['bogus/0/0', 'cross/1', '<b>'],
  });
  assert.deepEqual(parseOff(''), { off: [], bad: [] });
  const state = {
    date: '30.11.26',
    kind: 'decoder_self',
    layer: 0,
    off: ['cross/1/2', 'decoder_self/0/3'],
  };
  const hash = `#${dateStateToHash(state)}`;
  assert.equal(
    hash,
    '#mode=date&date=30.11.26&kind=decoder_self&layer=0&off=cross/1/2,decoder_self/0/3',
  );
  assert.deepEqual(parseDateHash(hash), { state, notes: [] });
  const r = parseDateHash('#mode=date&off=cross/1/2,x');
  assert.deepEqual(r.state.off, ['cross/1/2']);
  assert.deepEqual(r.notes, [
    'off=x in the address: not kind/layer/head (e.g. cross/1/2); ignored.',
  ]);
});

test('the random page does not call the date keys unknown', () => {
  assert.deepEqual(DATE_HASH_KEYS, ['mode', 'date', 'kind', 'layer', 'off']);
  // The page hands the random mode every mode's keys (main.js ctx.addressKeys).
  const { notes } = parseHash('#mode=random&date=x&kind=cross&layer=0&off=cross/0/0&seed=3', {
    modeKeys: DATE_HASH_KEYS,
  });
  assert.deepEqual(notes, []);
  assert.ok(parseHash('#bogus=1').notes.some((n) => /unknown setting "bogus"/.test(n)));
});
