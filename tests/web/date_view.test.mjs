// web/src/modes/date/date_view.js: axis labels per attention kind, slicing a layer out of a translation,
// the heads' roles, the bundled model's bytes and metadata.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base64ToBytes } from '../../web/src/compute/bytes.js';
import { readFileSync } from 'node:fs';
import {
  KINDS,
  KIND_IDS,
  BOS,
  CUT,
  decoderSteps,
  displayToken,
  sourceLength,
  tooLongMessage,
  axisTokens,
  layerView,
  allPanels,
  thumbCell,
  headKey,
  readRoles,
  roleFindings,
  briefFindings,
  claimsByHead,
  checkedHead,
  formatPercent,
  safetensorsMetadata,
  metadataJson,
  modelSummary,
  dateReadout,
  layerCount,
  dateFigureParts,
  offHeadNames,
} from '../../web/src/modes/date/date_view.js';

/**
 * A translation shaped like mod.DateModel's: S input chars, h heads, 2 + 2 layers, and
 * T = characters written + 1 decoder steps (the last wrote <eos>, or its prediction was dropped).
 */
function fakeResult(input = 'Nov 30', output = '2026-11-30', eos = true, h = 2) {
  const source_tokens = Array.from(input);
  const output_tokens = [...Array.from(output), ...(eos ? ['<eos>'] : [])];
  const S = source_tokens.length;
  const T = Array.from(output).length + 1;
  const fill = (n, m) => Float32Array.from({ length: h * n * m }, (_, i) => i);
  return {
    input,
    output,
    source_tokens,
    output_tokens,
    num_heads: h,
    num_encoder_layers: 2,
    num_decoder_layers: 2,
    encoder_self: [fill(S, S), fill(S, S)],
    decoder_self: [fill(T, T), fill(T, T)],
    cross: [fill(T, S), fill(T, S)],
  };
}

test('three kinds, in the order encoder self, decoder self, cross', () => {
  assert.deepEqual(KIND_IDS, ['encoder_self', 'decoder_self', 'cross']);
  assert.match(KINDS[1].label, /causal/);
});

test('spaces and invisible characters become visible labels; other tokens stay', () => {
  assert.equal(displayToken(' '), '␣');
  assert.equal(displayToken('\t'), '⇥');
  assert.equal(displayToken('\n'), '↵');
  assert.equal(displayToken('\u200B'), 'U+200B');
  assert.equal(displayToken('\u00A0'), 'U+00A0');
  assert.equal(displayToken('\u0007'), 'U+0007');
  for (const t of ['N', '3', ',', '<eos>', '<', 'é', '😀', '<script>'])
    assert.equal(displayToken(t), t);
});

test('length counts code points; the too-long message names both numbers', () => {
  assert.equal(sourceLength('Nov 30, 2026'), 12);
  assert.equal(sourceLength('😀😀'), 2);
  assert.equal(sourceLength(''), 0);
  assert.equal(
    tooLongMessage(45, 32),
    'This input has 45 characters; the model reads at most 32 (its max_source_len). Shorten it to see a translation.',
  );
});

test('axes: encoder input × input, decoder output × (<bos> + output so far), cross output × input', () => {
  const r = fakeResult('Nov 3', '2026-11-03');
  const src = ['N', 'o', 'v', '␣', '3'];
  const out = [...'2026-11-03', '<eos>'];
  assert.deepEqual(axisTokens(r, 'encoder_self'), { rows: src, cols: src });
  assert.deepEqual(axisTokens(r, 'cross'), { rows: out, cols: src });
  const dec = axisTokens(r, 'decoder_self');
  assert.deepEqual(dec.rows, out);
  assert.deepEqual(dec.cols, [BOS, ...'2026-11-03']);
  assert.equal(dec.cols.length, dec.rows.length, 'square');
  assert.throws(() => axisTokens(r, 'bogus'), /unknown attention kind "bogus"/);
});

test("stopped at max_target_len without <eos>: the last step's dropped prediction is a (cut) row", () => {
  const r = fakeResult('x', '0000-00-00', false);
  assert.equal(decoderSteps(r), 11, 'from the weights');
  const dec = axisTokens(r, 'decoder_self');
  assert.deepEqual(dec.rows, [...'0000-00-00', CUT]);
  assert.deepEqual(dec.cols, [BOS, ...'0000-00-00']);
  assert.deepEqual(axisTokens(r, 'cross').rows, [...'0000-00-00', CUT]);
  assert.equal(layerView(r, 'cross', 0).n, 11);
  assert.equal(layerView(r, 'decoder_self', 1).m, 11);
  assert.equal(decoderSteps({ ...r, steps: 11 }), 11);
});

test('empty output (<eos> first): one decoder step', () => {
  const r = fakeResult('ab', '', true);
  assert.deepEqual(axisTokens(r, 'decoder_self'), { rows: ['<eos>'], cols: [BOS] });
  assert.equal(layerView(r, 'cross', 0).n, 1);
});

test("layerView: the layer's weights with n, m and no masked rows; sizes are checked", () => {
  const r = fakeResult('Nov 30', '2026-11-30');
  const v = layerView(r, 'cross', 1);
  assert.equal(v.n, 11);
  assert.equal(v.m, 6);
  assert.equal(v.num_heads, 2);
  assert.equal(v.attn_weights, r.cross[1]);
  assert.equal(v.fully_masked_rows.length, 22);
  assert.ok(v.fully_masked_rows.every((x) => x === 0));
  assert.equal(layerView(r, 'encoder_self', 0).n, 6);
  assert.throws(() => layerView(r, 'cross', 2), /no cross layer 2/);
  r.cross[0] = new Float32Array(5);
  assert.throws(() => layerView(r, 'cross', 0), /cross layer 0 has 5 weights, expected 2\*11\*6/);
});

test('all panels: every encoder layer, then decoder self, then cross — (L_enc + 2 L_dec) of them', () => {
  const r = fakeResult();
  assert.deepEqual(
    allPanels(r).map((p) => `${p.kind}${p.layer}`),
    ['encoder_self0', 'encoder_self1', 'decoder_self0', 'decoder_self1', 'cross0', 'cross1'],
  );
  assert.equal(layerCount(r, 'encoder_self'), 2);
  r.num_encoder_layers = 3;
  r.encoder_self.push(r.encoder_self[0]);
  assert.equal(allPanels(r).length, 3 + 2 * 2);
});

test('small multiples: 2 to 6 px a cell, the larger side near 64 px', () => {
  assert.equal(thumbCell(11, 12), 5);
  assert.equal(thumbCell(3, 3), 6);
  assert.equal(thumbCell(11, 40), 2);
  assert.equal(thumbCell(11, 200), 2);
  assert.equal(thumbCell(0, 0), 6);
});

test('roles: label and ablated_accuracy of the heads file, as fractions or percentages', () => {
  const roles = readRoles({
    accuracy: 0.998,
    heads: [
      { kind: 'cross', layer: 1, head: 2, label: 'reads the year: 91%', ablated_accuracy: 0.975 },
      { kind: 'encoder_self', layer: 0, head: 0, label: 'positional', ablated_accuracy: 99.5 },
      { kind: 'decoder_self', layer: 1, head: 3 },
      { kind: 'nonsense', layer: 0, head: 0, label: 'x' },
      { kind: 'cross', layer: 'one', head: 0, label: 'x' },
      null,
    ],
  });
  assert.equal(roles.size, 3);
  assert.deepEqual(roles.get(headKey('cross', 1, 2)), {
    role: 'reads the year: 91%',
    ablated: 'without this head: 97.5% exact match (with all: 99.8%)',
  });
  assert.equal(roles.get(headKey('encoder_self', 0, 0)).role, 'positional');
  assert.match(roles.get(headKey('encoder_self', 0, 0)).ablated, /: 99\.5% /);
  assert.deepEqual(roles.get(headKey('decoder_self', 1, 3)), { role: null, ablated: null });
  const list = readRoles({
    heads: [{ kind: 'decoder_cross', layer: 0, head: 1, label: 'reads the day: 80%' }],
  });
  assert.equal(list.get('cross/0/1').role, 'reads the day: 80%');
  assert.equal(list.get('cross/0/1').ablated, null);
  for (const bad of [
    null,
    undefined,
    42,
    'x',
    {},
    { heads: 'no' },
    [{ kind: 'cross', layer: 0, head: 0 }],
  ])
    assert.equal(readRoles(bad).size, 0);
});

test('roles as the C++ side writes them (date_model_heads.json): label, ablated_accuracy, checks', () => {
  const json = {
    accuracy: 0.998,
    model: { xxh64: 'DDC8DC5EAE1D5285', file: 'web/date_model.safetensors' },
    heads: [
      {
        kind: 'cross',
        layer: 1,
        head: 2,
        label: 'reads the year: 82%',
        ablated_accuracy: 0.9,
        accuracy_drop: 0.098,
      },
    ],
    checks: {
      year_head: { head: 'cross layer 1 head 2', year_share: 0.822254, at_least_80_percent: true },
      least_useful_head: { head: 'cross layer 0 head 0', ablated_accuracy: 0.9975 },
    },
  };
  assert.deepEqual(readRoles(json).get('cross/1/2'), {
    role: 'reads the year: 82%',
    ablated: 'without this head: 90% exact match (with all: 99.8%)',
  });
  assert.deepEqual(roleFindings(json), [], 'no claims: no findings');
  json.checks.year_head = { ...json.checks.year_head, kind: 'cross', layer: 1, index: 2 };
  assert.deepEqual(checkedHead(json, 'year_head'), { kind: 'cross', layer: 1, head: 2 });
  assert.equal(checkedHead(json, 'least_useful_head'), null, 'no kind/layer/index');
  assert.equal(checkedHead(null, 'year_head'), null);
  assert.deepEqual(roleFindings({}), []);
  assert.deepEqual(roleFindings(null), []);
});

test("head types, the prunable mark and module 03's claims: the C++ side's words, shown as they are", () => {
  const json = {
    accuracy: 0.998,
    heads: [
      {
        kind: 'cross',
        layer: 1,
        head: 2,
        label: 'reads the year',
        type: 'content',
        type_label: 'content head: t',
        ablated_accuracy: 0.9,
      },
      { kind: 'cross', layer: 0, head: 1, label: 'x', type: 'positional', type_label: '' },
      { kind: 'encoder_self', layer: 0, head: 2, label: 'y', ablated_accuracy: 0.997 },
    ],
    checks: {
      least_useful_head: {
        kind: 'encoder_self',
        layer: 0,
        index: 2,
        prunable: true,
        prunable_label: 'prunable: p',
      },
    },
    claims: [
      { statement: 'Claim 1, a: false (x). Measured: m.' },
      null,
      { statement: 42 },
      { statement: 'Claim 3, c: true (z). Measured: n.' },
    ],
  };
  const roles = readRoles(json);
  assert.deepEqual(roles.get('cross/1/2'), {
    role: 'reads the year',
    type: 'content head: t',
    ablated: 'without this head: 90% exact match (with all: 99.8%)',
  });
  assert.equal(roles.get('cross/0/1').type, undefined, 'an empty label is not shown');
  assert.equal(roles.get('encoder_self/0/2').prunable, 'prunable: p');
  assert.equal(roles.get('cross/1/2').prunable, undefined, 'only the head the check names');
  json.checks.least_useful_head.prunable = false;
  assert.equal(
    readRoles(json).get('encoder_self/0/2').prunable,
    undefined,
    'not prunable: no mark',
  );
  assert.deepEqual(roleFindings(json), [
    'Claim 1, a: false (x). Measured: m.',
    'Claim 3, c: true (z). Measured: n.',
  ]);
  assert.deepEqual(roleFindings([]), []);
});

test('cross heads with shares and tracking: a caption that tells them apart; claims by head; the shipped file', () => {
  const cross = (head, shares, all, acc, drop) => ({
    kind: 'cross',
    layer: 1,
    head,
    label: 'reads the field being written',
    year_share: shares[0],
    month_share: shares[1],
    day_share: shares[2],
    tracking: { all },
    ablated_accuracy: acc,
    accuracy_drop: drop,
  });
  const json = {
    accuracy: 0.998,
    heads: [
      cross(0, [0.78, 0.89, 0.83], 0.857, 0.8565, 0.1415),
      cross(1, [0.81, 0.73, 0.57], 0.836, 0.983, 0.015),
      cross(2, [0.94, 0.86, 0.98], 0.972, 0.5275, 0.4705),
      { kind: 'encoder_self', layer: 0, head: 2, label: 'looks at the year: 31%' },
    ],
    claims: [
      {
        claim: 'a positional head that reads the day',
        holds: false,
        kind: 'cross',
        layer: 1,
        index: 1,
        statement:
          'Claim 1, a positional head that reads the day: false (cross layer 1 head 1: day tracking 0.77, the claim needs below 0.5). Measured: m.',
      },
      {
        claim: 'a content head that copies the year',
        holds: true,
        kind: 'cross',
        layer: 1,
        index: 2,
        statement:
          'Claim 2, a content head that copies the year: true (cross layer 1 head 2: year tracking 1.00, the claim needs at least 0.5). Measured: m.',
      },
      {
        claim: 'a mostly redundant head that could be pruned',
        holds: true,
        kind: 'encoder_self',
        layer: 0,
        index: 2,
        statement: 'Claim 3, x: true (encoder_self layer 0 head 2: y). Measured: z.',
      },
    ],
  };
  const roles = readRoles(json);
  assert.deepEqual(roles.get('cross/1/0'), {
    role: 'strongest on the month: 89% of the month rows · tracking over the three fields 0.86 · 85.65% exact match without it',
    label: 'reads the field being written',
    ablated: 'without this head: 85.65% exact match (with all: 99.8%)',
  });
  assert.equal(
    roles.get('cross/1/1').role,
    'strongest on the year: 81% of the year rows · tracking over the three fields 0.84 · 98.3% exact match without it, the layer’s least needed',
  );
  assert.equal(
    roles.get('cross/1/1').claim,
    'Claim 1, a positional head that reads the day: false (day tracking 0.77, the claim needs below 0.5)',
  );
  assert.equal(
    roles.get('cross/1/2').role,
    'the content head that copies the year (claim 2) · tracking over the three fields 0.97 · 52.75% exact match without it, the layer’s most needed',
  );
  assert.equal(
    roles.get('encoder_self/0/2').role,
    'the mostly redundant head that could be pruned (claim 3) · looks at the year: 31%',
  );
  assert.equal(roles.get('encoder_self/0/2').claim, 'Claim 3, x: true (y)');
  assert.deepEqual([...claimsByHead(json).keys()], ['cross/1/1', 'cross/1/2', 'encoder_self/0/2']);
  assert.deepEqual(briefFindings(json), [
    'Claim 1, a positional head that reads the day: false (cross layer 1 head 1: day tracking 0.77, the claim needs below 0.5).',
    'Claim 2, a content head that copies the year: true (cross layer 1 head 2: year tracking 1.00, the claim needs at least 0.5).',
    'Claim 3, x: true (encoder_self layer 0 head 2: y).',
  ]);
  // The shipped heads file: the four cross heads of layer 1 have four captions.
  const shipped = readRoles(
    JSON.parse(readFileSync(new URL('../../web/date_model_heads.json', import.meta.url), 'utf8')),
  );
  const layer1 = [0, 1, 2, 3].map((h) => shipped.get(`cross/1/${h}`).role);
  assert.equal(new Set(layer1).size, 4, layer1.join(' | '));
  assert.match(
    layer1[2],
    /^the content head that copies the year \(claim 2\) · tracking over the three fields 0\.97 · /,
  );
});

test('percentages', () => {
  assert.equal(formatPercent(0.91), '91%');
  assert.equal(formatPercent(0.9975), '99.8%');
  assert.equal(formatPercent(91), '91%');
  assert.equal(formatPercent(1), '100%');
  assert.equal(formatPercent('x'), null);
  assert.equal(formatPercent(0.9975, 2), '99.75%');
  assert.equal(formatPercent(0.9, 2), '90%');
  assert.equal(formatPercent(0.998, 2), '99.8%');
});

/** A minimal safetensors file: u64 header length, the JSON header, then data. */
function safetensors(metadata, data = [1, 2, 3, 4]) {
  const header = new TextEncoder().encode(JSON.stringify({ __metadata__: metadata }));
  const bytes = new Uint8Array(8 + header.length + data.length);
  new DataView(bytes.buffer).setUint32(0, header.length, true);
  bytes.set(header, 8);
  bytes.set(data, 8 + header.length);
  return bytes;
}

test('base64 → bytes, and the safetensors metadata read for display', () => {
  const file = safetensors({
    format: 'mha-lab-date-model',
    training: '{"heldout_accuracy":0.998,"seconds":900}',
  });
  const back = base64ToBytes(Buffer.from(file).toString('base64'));
  assert.deepEqual(back, file);
  const meta = safetensorsMetadata(back);
  assert.equal(meta.format, 'mha-lab-date-model');
  assert.deepEqual(metadataJson(meta, 'training'), { heldout_accuracy: 0.998, seconds: 900 });
  assert.equal(metadataJson(meta, 'missing'), null);
  assert.equal(safetensorsMetadata(new Uint8Array(4)), null);
  assert.equal(
    safetensorsMetadata(Uint8Array.of(200, 0, 0, 0, 0, 0, 0, 0, 1)),
    null,
    'header past the end',
  );
  assert.equal(safetensorsMetadata(safetensors(null).slice(0, 12)), null);
  assert.equal(safetensorsMetadata('x'), null);
});

test('the model line', () => {
  const config = {
    d_model: 64,
    num_heads: 4,
    num_encoder_layers: 2,
    num_decoder_layers: 2,
    max_source_len: 40,
  };
  assert.equal(
    modelSummary(config, 250_000, { heldout_exact_match: 0.9985, seconds: 1200 }),
    'd_model 64, 4 heads, 2 encoder + 2 decoder layers · reads at most 40 characters · 244 KB of fp16 weights · ' +
      '99.9% exact match on held-out dates (training run) · trained in 20 min',
  );
  assert.equal(
    modelSummary(config, 0, null),
    'd_model 64, 4 heads, 2 encoder + 2 decoder layers · reads at most 40 characters',
  );
});

test('readout line', () => {
  assert.equal(
    dateReadout('cross', 1, 2, '0', '3', '0.912'),
    "cross · layer 1 · head 2 · output '0' → input '3': 0.912",
  );
  assert.equal(
    dateReadout('encoder_self', 0, 0, 'N', '␣', '0.100'),
    "encoder self · layer 0 · head 0 · input 'N' → input '␣': 0.100",
  );
  assert.equal(
    dateReadout('decoder_self', 0, 1, '2', '<bos>', '1.000'),
    "decoder self · layer 0 · head 1 · output '2' → read '<bos>': 1.000",
  );
});

test('the figure export: the layer of the main row, its heads, roles, settings and file name', () => {
  const r = fakeResult('Nov 3', '2026-11-03', true, 4);
  const roles = readRoles({
    heads: [{ kind: 'cross', layer: 1, head: 2, label: 'reads the year' }],
  });
  const p = dateFigureParts(r, {
    kind: 'cross',
    layer: 1,
    off: ['cross/1/3', 'encoder_self/0/0'],
    roles,
  });
  assert.equal(p.stem, 'mha-date-cross-l1');
  assert.deepEqual(p.data.heads, [0, 1, 2, 3]);
  assert.equal(p.data.weights, r.cross[1], "the translation's own weights, not a copy");
  assert.deepEqual(p.data.queryTokens, [...'2026-11-03', '<eos>']);
  assert.deepEqual(p.data.keyTokens, ['N', 'o', 'v', '␣', '3']);
  assert.deepEqual(p.headNames, ['head 0', 'head 1', 'head 2', 'head 3 (switched off)']);
  assert.deepEqual(p.headNotes, ['', '', 'reads the year', '']);
  assert.equal(p.title, 'Date translator: Cross-attention, layer 1, reading “Nov 3”');
  assert.deepEqual(p.caption, [
    'Input “Nov 3” → output “2026-11-03” · Cross-attention, layer 1 (layers 0–1) · 4 heads',
    'Rows: output character being written (query). Columns: input characters (keys).',
    'Heads switched off: cross layer 1 head 3, encoder self layer 0 head 0',
  ]);
  assert.deepEqual(offHeadNames(['decoder_self/0/1']), ['decoder self layer 0 head 1']);
  const enc = dateFigureParts(r, { kind: 'encoder_self', layer: 0 });
  assert.equal(enc.stem, 'mha-date-encoder-self-l0');
  assert.match(enc.stem, /^[a-z0-9-]+$/);
  assert.equal(enc.caption[2], 'Heads switched off: none');
  assert.deepEqual(enc.data.queryTokens, enc.data.keyTokens);
  assert.equal(
    dateFigureParts(r, { kind: 'decoder_self', layer: 0 }).stem,
    'mha-date-decoder-self-l0',
  );
  assert.throws(() => dateFigureParts(r, { kind: 'cross', layer: 2 }), /no cross layer 2/);
});
