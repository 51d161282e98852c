// <mha-attention>'s attributes: presets, overrides, and a message naming every bad value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ATTRIBUTES,
  DATE_PRESET,
  ENGLISH_PRESET,
  EXPERIMENTS,
  readAttributes,
} from '../../web/src/element/attributes.js';
import { PRESETS } from '../../web/src/modes/random/random_state.js';

const read = (attrs) => readAttributes((n) => (n in attrs ? attrs[n] : null));

test('no attributes: module 08; a preset; attributes override it', () => {
  const none = read({});
  assert.equal(none.ok, true);
  assert.deepEqual(none.state, PRESETS['module-08'].state);
  assert.equal(none.preset, null);
  const m08 = read({ preset: 'module-08' });
  assert.deepEqual(
    [m08.state, m08.preset, m08.tokens.length],
    [PRESETS['module-08'].state, 'module-08', 5],
  );
  const over = read({ preset: 'module-08', 'num-heads': '4' });
  assert.deepEqual([over.state.num_heads, over.state.seed, over.preset], [4, 7, null]);
  const own = read({
    tokens: 'The cat sat on the mat',
    'd-model': '8',
    'num-heads': '2',
    seed: '7',
    causal: '',
  });
  assert.deepEqual(own.state, {
    text: 'The cat sat on the mat',
    d_model: 8,
    num_heads: 2,
    seed: 7,
    causal: true,
    positional: false,
  });
  assert.deepEqual(own.tokens, ['The', 'cat', 'sat', 'on', 'the', 'mat']);
  assert.equal(read({ text: 'a b' }).state.text, 'a b', 'text is an alias of tokens');
  assert.equal(read({ causal: 'false' }).state.causal, false);
  assert.equal(read({ preset: 'causal-positions', causal: '0' }).state.causal, false);
  assert.deepEqual(read({ heads: '1, 0 1', cell: '1.0.4' }).heads, [1, 0]);
  assert.deepEqual(read({ cell: '1.0.4' }).cell, { head: 1, row: 0, col: 4 });
  assert.ok(ATTRIBUTES.includes('d-model') && ATTRIBUTES.includes('preset'));
});

test('date-translator preset: text, kind and layer', () => {
  const d = read({ preset: DATE_PRESET, tokens: '30.11.26', kind: 'encoder_self', layer: '0' });
  assert.deepEqual(d, {
    ok: true,
    kind: 'date',
    text: '30.11.26',
    attention: 'encoder_self',
    layer: 0,
    heads: null,
    cell: null,
    display: { theme: 'auto', layout: 'grid', cellSize: null },
  });
  assert.deepEqual(
    [
      read({ preset: DATE_PRESET }).text,
      read({ preset: DATE_PRESET }).attention,
      read({ preset: DATE_PRESET }).layer,
    ],
    ['Nov 30, 2026', 'cross', null],
  );
});

test("english preset: the text (tokens or text), an optional layer; the page's default text", () => {
  assert.equal(ENGLISH_PRESET, 'english');
  assert.deepEqual(read({ preset: 'english', text: 'The cat sat.', layer: '1', heads: '0,2' }), {
    ok: true,
    kind: 'english',
    text: 'The cat sat.',
    layer: 1,
    heads: [0, 2],
    cell: null,
    experiment: null,
    display: { theme: 'auto', layout: 'grid', cellSize: null },
  });
  assert.equal(read({ preset: 'english', tokens: 'A b' }).text, 'A b');
  assert.equal(read({ preset: 'english', experiment: 'prune' }).experiment, 'prune');
  assert.deepEqual(
    EXPERIMENTS.map((e) => read({ preset: 'english', experiment: e }).experiment),
    ['prune', 'date', 'sweep', 'replay'],
  );
  assert.equal(
    read({ preset: 'english', experiment: 'heads' }).message,
    'experiment="heads" is not one of prune, date, sweep, replay.',
  );
  assert.equal(
    read({ preset: 'date-translator', experiment: 'prune' }).message,
    'experiment="prune" needs preset="english" (the experiments are on its heads).',
  );
  assert.equal(
    read({ experiment: 'prune' }).message,
    'experiment="prune" needs preset="english" (the experiments are on its heads).',
  );
  const plain = read({ preset: 'english' });
  assert.deepEqual(
    [plain.text, plain.layer],
    ['The dog sat by the door. The man sat by the fire.', null],
  );
  assert.match(
    read({ preset: 'english', layer: 'last' }).message,
    /^layer="last" is not a layer number/,
  );
});

test('every invalid attribute gives a message that names it and its value', () => {
  const cases = [
    [
      { preset: 'module-99' },
      /^preset="module-99" is not one of module-08, causal-positions, date-translator, english\.$/,
    ],
    [{ 'd-model': 'abc' }, /^d_model=abc is not a whole number\. \(attribute d-model\)$/],
    [{ 'num-heads': '2.5' }, /^num_heads=2\.5 is not a whole number\. \(attribute num-heads\)$/],
    [{ seed: '-1' }, /^seed=-1 is outside 0\.\.4294967295.*\(attribute seed\)$/],
    [
      { 'd-model': '2048' },
      /^d_model=2048 is larger than this page draws \(1024 at most\)\. \(attribute d-model\)$/,
    ],
    [{ tokens: '  ' }, /no tokens.*\(attribute tokens\)$/],
    [{ causal: 'maybe' }, /^causal="maybe" is not true or false/],
    [{ positional: 'x' }, /^positional="x" is not true or false/],
    [{ heads: 'first' }, /^heads="first" is not a list of head numbers/],
    [{ heads: '' }, /^heads="" is not a list/],
    [{ cell: '0-0-2' }, /^cell="0-0-2" is not head\.query\.key/],
    [
      { preset: DATE_PRESET, kind: 'self' },
      /^kind="self" is not one of encoder_self, decoder_self, cross\.$/,
    ],
    [{ preset: DATE_PRESET, layer: '-1' }, /^layer="-1" is not a layer number/],
    [
      { tokens: '<img src=x onerror=alert(1)>'.repeat(300) },
      /tokens; this page shows at most 2048/,
    ],
  ];
  for (const [attrs, want] of cases) {
    const r = read(attrs);
    assert.equal(r.ok, false, JSON.stringify(attrs));
    assert.match(r.message, want, JSON.stringify(attrs));
  }
  // Values the module judges (a head count that does not divide d_model) pass here: the element
  // shows the module's own message.
  assert.equal(read({ 'num-heads': '3' }).ok, true);
});

test('theme, layout and cell-size: defaults, valid values, and a message naming each bad value', () => {
  assert.deepEqual(read({}).display, { theme: 'auto', layout: 'grid', cellSize: null });
  const set = read({ theme: 'dark', layout: 'stack', 'cell-size': '24' });
  assert.deepEqual(set.display, { theme: 'dark', layout: 'stack', cellSize: 24 });
  assert.equal(read({ theme: 'light' }).display.theme, 'light');
  assert.equal(
    read({ preset: DATE_PRESET, theme: 'dark' }).display.theme,
    'dark',
    'the date preset too',
  );
  assert.equal(read({ 'cell-size': '14' }).display.cellSize, 14);
  assert.equal(read({ 'cell-size': ' 44 ' }).display.cellSize, 44);
  for (const n of ['theme', 'layout', 'cell-size']) assert.ok(ATTRIBUTES.includes(n), n);
  const bad = (attrs, text) => {
    const r = read(attrs);
    assert.equal(r.ok, false, JSON.stringify(attrs));
    assert.equal(r.message, text);
  };
  bad({ theme: 'blue' }, 'theme="blue" is not one of auto, light, dark.');
  bad({ theme: '' }, 'theme="" is not one of auto, light, dark.');
  bad({ layout: 'rows' }, 'layout="rows" is not one of grid, stack.');
  for (const v of ['13', '45', '20.5', '-20', 'big', '', '1e1']) {
    bad({ 'cell-size': v }, `cell-size="${v}" is not a whole number of CSS pixels from 14 to 44.`);
  }
});
