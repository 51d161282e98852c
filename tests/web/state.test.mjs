import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULTS,
  PRESETS,
  PAGE_LIMITS,
  SEED_MAX,
  largestDivisorAtMost,
  readControls,
  checkPageLimits,
  parseHash,
  presetOf,
  stateToHash,
} from '../../web/src/modes/random/random_state.js';
import { parseInteger, parseBoolean } from '../../web/src/chrome/values.js';
import {
  VIEW_KEYS,
  defaultView,
  parseView,
  viewToHash,
} from '../../web/src/chrome/address_keys.js';

const NO_VIEW = { cell: null, embed: false };

test('module 08 preset is seed 7, 5 tokens, d_model 8, 2 heads, no positions, not causal', () => {
  const s = PRESETS['module-08'].state;
  assert.deepEqual(
    {
      d_model: s.d_model,
      num_heads: s.num_heads,
      seed: s.seed,
      causal: s.causal,
      positional: s.positional,
    },
    { d_model: 8, num_heads: 2, seed: 7, causal: false, positional: false },
  );
  assert.equal(s.text.split(' ').length, 5);
  assert.deepEqual(DEFAULTS, s);
});

test('integers are parsed strictly', () => {
  assert.equal(parseInteger('42'), 42);
  assert.equal(parseInteger(' +7 '), 7);
  assert.equal(parseInteger('-3'), -3);
  assert.equal(parseInteger('-0'), 0);
  for (const bad of [
    '',
    '4.0',
    '2.5',
    '4e1',
    '0x10',
    'abc',
    '1 2',
    null,
    undefined,
    '99999999999999999',
  ]) {
    assert.equal(parseInteger(bad), null, String(bad));
  }
  assert.equal(parseInteger(String(SEED_MAX)), 4294967295);
});

test('booleans', () => {
  assert.equal(parseBoolean('1'), true);
  assert.equal(parseBoolean('TRUE'), true);
  assert.equal(parseBoolean('off'), false);
  assert.equal(parseBoolean('maybe'), null);
});

test('largest divisor', () => {
  assert.equal(largestDivisorAtMost(8, 3), 2);
  assert.equal(largestDivisorAtMost(9, 2), 1);
  assert.equal(largestDivisorAtMost(12, 16), 12);
});

const raw = (over = {}) => ({
  text: 'Heads look at different things',
  d_model: '8',
  num_heads: '2',
  seed: '7',
  causal: false,
  positional: false,
  ...over,
});

test('readControls accepts valid settings and returns the tokens', () => {
  const r = readControls(raw({ causal: true }));
  assert.equal(r.ok, true);
  assert.deepEqual(r.state, { ...DEFAULTS, causal: true });
  assert.equal(r.tokens.length, 5);
});

test('readControls names the value it cannot use', () => {
  assert.match(
    readControls(raw({ num_heads: '2.5' })).message,
    /^num_heads=2\.5 is not a whole number/,
  );
  assert.match(readControls(raw({ d_model: '' })).message, /^d_model is empty/);
  assert.match(readControls(raw({ seed: '-1' })).message, /^seed=-1 is outside 0\.\.4294967295/);
  assert.match(readControls(raw({ seed: '4294967296' })).message, /^seed=4294967296 is outside/);
  assert.match(readControls(raw({ text: 'x '.repeat(2049) })).message, /2049 tokens/);
});

test('readControls leaves zero, negative and non-dividing head counts to the module', () => {
  for (const h of ['0', '-2', '3']) assert.equal(readControls(raw({ num_heads: h })).ok, true, h);
});

test('page display limits', () => {
  assert.equal(checkPageLimits({ d_model: 8, num_heads: 2 }), null);
  assert.match(checkPageLimits({ d_model: 64, num_heads: 32 }), /num_heads=32 .*16/);
  assert.equal(checkPageLimits({ d_model: 1024, num_heads: 16 }), null);
  assert.match(checkPageLimits({ d_model: 2048, num_heads: 2 }), /d_model=2048 .*1024/);
  assert.equal(PAGE_LIMITS.maxTokens, 2048);
});

test('hash: preset, full settings, round trip', () => {
  assert.deepEqual(parseHash('#preset=module-08'), {
    state: { ...DEFAULTS },
    notes: [],
    preset: 'module-08',
    view: NO_VIEW,
  });
  assert.deepEqual(parseHash(''), {
    state: { ...DEFAULTS },
    notes: [],
    preset: null,
    view: NO_VIEW,
  });
  const s = {
    text: 'a <b> & c’d',
    d_model: 12,
    num_heads: 3,
    seed: 4294967295,
    causal: true,
    positional: true,
  };
  const h = stateToHash(s);
  assert.deepEqual(parseHash(`#${h}`), { state: s, notes: [], preset: null, view: NO_VIEW });
  assert.equal(stateToHash(PRESETS['causal-positions'].state), 'preset=causal-positions');
  assert.equal(presetOf({ ...DEFAULTS, seed: 8 }), null);
});

test('hash: preset with an override is no longer that preset', () => {
  const r = parseHash('#preset=module-08&seed=9');
  assert.equal(r.state.seed, 9);
  assert.equal(r.preset, null);
  assert.deepEqual(r.notes, []);
});

test('hash: invalid values fall back with a note each, never throw', () => {
  const r = parseHash('#d_model=abc&num_heads=0&seed=-5&causal=maybe&bogus=1&preset=nope');
  assert.deepEqual(r.state, { ...DEFAULTS });
  assert.equal(r.notes.length, 6);
  assert.ok(r.notes.some((n) => /d_model=abc/.test(n)));
  assert.ok(r.notes.some((n) => /num_heads=0/.test(n)));
  assert.ok(r.notes.some((n) => /seed=-5/.test(n)));
  assert.ok(r.notes.some((n) => /causal=maybe/.test(n)));
  assert.ok(r.notes.some((n) => /unknown setting "bogus"/.test(n)));
  assert.ok(r.notes.some((n) => /Unknown preset "nope"/.test(n)));
  for (const weird of ['#%', '#&&&', '#text=', '#text=%E0%A4%A', `#text=${'a+'.repeat(100)}`]) {
    const p = parseHash(weird);
    assert.equal(typeof p.state.text, 'string', weird);
  }
});

test('hash: a head count that does not divide d_model falls back to a divisor', () => {
  const r = parseHash('#d_model=9&num_heads=2');
  assert.equal(r.state.d_model, 9);
  assert.equal(r.state.num_heads, 1);
  assert.match(r.notes[0], /num_heads=2 .*d_model=9/);
  const r2 = parseHash('#d_model=10');
  assert.deepEqual([r2.state.d_model, r2.state.num_heads, r2.notes.length], [10, 2, 0]);
  const r3 = parseHash('#d_model=9');
  assert.deepEqual([r3.state.num_heads, r3.notes.length], [1, 1]);
});

test('hash: the num_heads note gives the reason that applies', () => {
  // 32 divides 512 but is more than the page draws; 7 is within the limit but does not divide.
  const over = parseHash('#d_model=512&num_heads=32').notes;
  assert.deepEqual(over, [
    'num_heads=32 in the address is more than 16, the most heads the page draws; using num_heads=2.',
  ]);
  const notDividing = parseHash('#d_model=512&num_heads=7').notes;
  assert.deepEqual(notDividing, [
    'num_heads=7 in the address does not divide d_model=512; using num_heads=2.',
  ]);
  const notNumber = parseHash('#d_model=512&num_heads=x').notes;
  assert.deepEqual(notNumber, [
    'num_heads=x in the address is not a whole number from 1 to 16; using num_heads=2.',
  ]);
  assert.deepEqual(parseHash('#d_model=512&num_heads=16').notes, []);
});

test('hash: markup in the text is kept as text, and long notes are shortened', () => {
  const r = parseHash(`#text=${encodeURIComponent('<img src=x onerror=window.__pwned=1>')}`);
  assert.equal(r.state.text, '<img src=x onerror=window.__pwned=1>');
  const long = parseHash(`#seed=${'9'.repeat(200)}`);
  assert.ok(long.notes[0].length < 200);
});

test('view keys: defaults, and every key is listed with parse, serialize and a fallback', () => {
  assert.deepEqual(defaultView(), NO_VIEW);
  for (const [key, spec] of Object.entries(VIEW_KEYS)) {
    assert.equal(typeof spec.parse, 'function', key);
    assert.equal(typeof spec.serialize, 'function', key);
    assert.equal(
      spec.serialize(spec.fallback),
      null,
      `${key}: the fallback is left out of the address`,
    );
  }
  assert.equal(viewToHash({}), '');
  assert.equal(viewToHash(NO_VIEW), '');
});

test('view keys round-trip with the settings: locked cell and embed', () => {
  const view = { cell: { head: 1, row: 0, col: 4 }, embed: true };
  const h = stateToHash(DEFAULTS, view);
  assert.equal(h, 'preset=module-08&cell=1.0.4&embed=1');
  assert.deepEqual(parseHash(`#${h}`), {
    state: { ...DEFAULTS },
    notes: [],
    preset: 'module-08',
    view,
  });
  const s = {
    text: 'The cat sat on the mat',
    d_model: 8,
    num_heads: 4,
    seed: 3,
    causal: true,
    positional: false,
  };
  const h2 = stateToHash(s, { cell: { head: 3, row: 5, col: 0 }, embed: false });
  assert.match(h2, /&cell=3\.5\.0$/);
  assert.deepEqual(parseHash(`#${h2}`).view, { cell: { head: 3, row: 5, col: 0 }, embed: false });
  // "#embed" alone (no value) and embed=1, embed=true are on; embed=0 is off.
  for (const on of ['#embed', '#embed=', '#embed=1', '#embed=true', '#preset=module-08&embed']) {
    assert.equal(parseHash(on).view.embed, true, on);
    assert.deepEqual(parseHash(on).notes, [], on);
  }
  assert.equal(parseHash('#embed=0').view.embed, false);
});

test('view keys: invalid or out-of-range values fall back with a note naming the value', () => {
  // module-08: 2 heads, 5 tokens.
  for (const bad of ['2.0.0', '0.5.0', '0.0.5', '0.0', 'a.b.c', '-1.0.0', '0.0.0.0', '<b>']) {
    const r = parseHash(`#preset=module-08&cell=${encodeURIComponent(bad)}`);
    assert.equal(r.view.cell, null, bad);
    assert.equal(r.notes.length, 1, bad);
    assert.ok(
      r.notes[0].startsWith(
        `cell=${bad} in the address is not head.query.key within 2 heads and 5 tokens`,
      ),
      r.notes[0],
    );
    assert.deepEqual(r.state, { ...DEFAULTS }, 'the settings are kept');
  }
  const e = parseHash('#embed=maybe');
  assert.equal(e.view.embed, false);
  assert.match(e.notes[0], /^embed=maybe in the address is not 1\/0/);
  // The cell is checked against the settings in the same address.
  assert.deepEqual(parseHash('#text=a+b&d_model=4&num_heads=1&cell=0.1.1').view.cell, {
    head: 0,
    row: 1,
    col: 1,
  });
  assert.equal(parseHash('#text=a+b&d_model=4&num_heads=1&cell=1.1.1').view.cell, null);
  // parseView alone, for the Date translator's address (only embed applies there).
  assert.deepEqual(parseView('#mode=date&date=x&embed=1', DEFAULTS), {
    view: { cell: null, embed: true },
    notes: [],
  });
});

test('a key given twice, or broken percent-encoding, is read but noted (never silent)', () => {
  const twice = parseHash('#d_model=16&d_model=32&num_heads=2');
  assert.equal(twice.state.d_model, 16, 'the first value');
  assert.ok(
    twice.notes.some((n) => n.includes('"d_model" appears more than once')),
    twice.notes.join(' | '),
  );
  assert.equal(twice.notes.filter((n) => n.includes('more than once')).length, 1);
  const broken = parseHash('#text=%E0%A4%A');
  assert.ok(
    broken.notes.some((n) => n.includes('not valid percent-encoding')),
    broken.notes.join(' | '),
  );
  const fine = parseHash('#text=caf%C3%A9+au+lait&d_model=8&num_heads=2');
  assert.equal(fine.state.text, 'café au lait');
  assert.deepEqual(
    fine.notes.filter((n) => /percent-encoding|more than once/.test(n)),
    [],
  );
});
