// The English mode's text helpers (web/src/modes/english/english_view.js): roles from the core's
// head-pattern labels, the heads file, the lines under the prediction and the tokens, the
// headPatterns request, the terms of the captions and their explanations (english_text.js
// LABEL_HELP), and module 03's kinds measured in web/english_lm_heads.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base64ToBytes } from '../../web/src/compute/bytes.js';
import { readFileSync } from 'node:fs';
import {
  formatPerplexity,
  formatProbability,
  measuredRole,
  perplexityComparison,
  perplexityText,
  coreferenceNote,
  englishFigureParts,
  readTypicalRoles,
  tokenLabels,
  tokensNote,
  typicalText,
  captionTerms,
  headName,
  headNameOf,
  inductionFinding,
  modelKinds,
  nextPieceLabel,
  patternsRequest,
  pieceLabels,
  cardTable,
  liveCardText,
  valueWithChance,
  wordGroups,
} from '../../web/src/modes/english/english_view.js';
import { LABEL_HELP, TARGETS } from '../../web/src/modes/english/english_text.js';

const HEADS_JSON = JSON.parse(
  readFileSync(new URL('../../web/english_lm_heads.json', import.meta.url), 'utf8'),
);

const tokens = ['<bos>', 'the', 'cat', ',', 'sat'];

/** A heads file of two heads written here, with every part the page reads (values chosen by hand). */
const card = (values) =>
  Object.entries(values).map(([name, [value, chance, count, probe]]) => ({
    name,
    value,
    chance,
    count,
    probe,
  }));
const FILE = {
  model: { xxh64: '0123456789abcdef', file: 'web/english_lm.safetensors', config: {} },
  measured: { nearer_name: 0.5, pronoun_probes: 40, coreference_head: { layer: 1, head: 0 } },
  protocols: {
    previous_token_argmax: { protocol: 'Voita: argmax on i-1', figure: 'Voita: >= 90%' },
    punctuation: { protocol: 'Clark: weight on punctuation', figure: null },
  },
  heads: [
    {
      layer: 0,
      head: 1,
      role: 'previous token',
      score: 0.95,
      ablation_cost: 0.12,
      card: card({
        previous_token_argmax: [0.95, 0.03, 3810, 'held-out text'],
        local_band: [0.2, 0.07, 3810, 'held-out text'],
        punctuation: [0.1, 0.09, 3810, 'held-out text'],
        induction: [0.02, 0.03, 750, 'induction probe'],
        coreference: [0.5, 0.5, 40, 'pronoun probe'],
      }),
    },
    {
      layer: 1,
      head: 0,
      role: 'no clear pattern',
      score: 0.6,
      ablation_cost: -0.004,
      card: card({
        previous_token_argmax: [0.1, 0.03, 3810, 'held-out text'],
        local_band: [0.1, 0.07, 3810, 'held-out text'],
        punctuation: [0.4, 0.09, 3810, 'held-out text'],
        induction: [0.45, 0.03, 750, 'induction probe'],
        coreference: [0.6, 0.5, 40, 'pronoun probe'],
      }),
    },
    { layer: -1, head: 0, role: 'x' },
    { layer: 0, head: 2, role: '' },
    null,
  ],
};

test('a head with no label has no clear pattern', () => {
  assert.deepEqual(measuredRole({ scores: { previous_token: 0.3 }, labels: [] }, tokens), {
    text: 'no clear pattern',
    labels: [],
  });
});

test('labels in plain words with their scores, highest first, at most two', () => {
  const p = {
    scores: { previous_token: 0.834, induction: 0.61, punctuation: 0.9, local_band: 0.95 },
    labels: ['previous-token', 'induction', 'punctuation'],
  };
  assert.equal(measuredRole(p, tokens).text, 'punctuation 0.90 · previous token 0.83');
  assert.equal(
    measuredRole({ scores: { duplicate_token: 0.7 }, labels: ['duplicate-token'] }, tokens).text,
    'duplicate token 0.70',
  );
  assert.equal(
    measuredRole({ scores: { local_band: 0.7 }, labels: ['positional'] }, tokens).text,
    'nearby tokens 0.70',
  );
});

test('a stripe on the first token is "first token"; elsewhere it names the token', () => {
  assert.equal(
    measuredRole(
      {
        scores: { vertical_stripe: 0.8, stripe_key: 0, first_token: 0.72 },
        labels: ['vertical-stripe'],
      },
      tokens,
    ).text,
    'first token 0.72',
  );
  assert.equal(
    measuredRole(
      {
        scores: { vertical_stripe: 0.55, stripe_key: 3, first_token: 0.1 },
        labels: ['vertical-stripe'],
      },
      tokens,
    ).text,
    'stripe on “,” 0.55',
  );
});

test('a label the page does not know is written as the core names it', () => {
  assert.equal(
    measuredRole({ scores: { new_kind: 0.5 }, labels: ['new-kind'] }, tokens).text,
    'new kind 0.50',
  );
  assert.equal(measuredRole({ scores: {}, labels: ['induction'] }, tokens).text, 'induction —');
});

test("typical roles: the heads file's role with its card row and chance, bad entries left out", () => {
  const roles = readTypicalRoles(FILE);
  assert.deepEqual([...roles.keys()], ['0.1', '1.0']);
  assert.equal(
    typicalText(roles.get('0.1')),
    'held-out: previous token 0.95 (chance 0.03) · off: loss +0.120',
  );
  // No clear role: the score furthest above its chance (the pronoun probe left out).
  assert.equal(
    typicalText(roles.get('1.0')),
    'held-out: no clear pattern · best induction 0.45 (chance 0.03) · off: loss -0.004',
  );
  assert.equal(roles.get('0.1').card.length, 5);
  // A file without cards (an older one): the role and score alone.
  const old = readTypicalRoles({ heads: [{ layer: 1, head: 2, role: 'induction', score: 0.7 }] });
  assert.equal(typicalText(old.get('1.2')), 'held-out: induction 0.70');
  assert.equal(typicalText(undefined), '');
  for (const nothing of [null, {}, { heads: 'no' }, []])
    assert.equal(readTypicalRoles(nothing).size, 0);
  assert.equal(valueWithChance({ value: 0.934, chance: 0.031 }), '0.93 (chance 0.03)');
  assert.equal(valueWithChance({ value: 0.5, chance: null }), '0.50');
  assert.equal(valueWithChance({ value: null, chance: 0.5 }), '—');
});

test('the whole card: every row with its words, protocol and the paper’s figure', () => {
  const rows = cardTable(
    readTypicalRoles(FILE).get('0.1').card,
    new Map(Object.entries(FILE.protocols)),
  );
  assert.deepEqual(rows[0], {
    name: 'previous_token_argmax',
    words: 'previous token (argmax)',
    value: 0.95,
    chance: 0.03,
    count: 3810,
    offset: null,
    probe: 'held-out text',
    protocol: 'Voita: argmax on i-1',
    figure: 'Voita: >= 90%',
  });
  assert.equal(rows[2].figure, null, 'no published figure');
  assert.equal(rows[3].protocol, null, 'no protocol in the file');
  // A live card's score carries its own protocol and figure (mod.headReport).
  const live = cardTable([
    {
      name: 'argmax_offset',
      value: 0.9,
      chance: 0.2,
      count: 12,
      offset: -1,
      protocol: 'P',
      figure: 'F',
    },
  ]);
  assert.equal(live[0].offset, -1);
  assert.equal(live[0].protocol, 'P');
  assert.equal(
    liveCardText({
      labels: ['previous-token'],
      scores: [
        { name: 'previous_token', value: 0.91, chance: 0.2 },
        { name: 'punctuation', value: 0.3, chance: 0.1 },
      ],
    }),
    'previous token 0.91 (chance 0.20)',
  );
  assert.equal(
    liveCardText({ labels: [], scores: [{ name: 'punctuation', value: 0.3, chance: 0.1 }] }),
    'punctuation 0.30 (chance 0.10)',
  );
});

test('probabilities, perplexities and their comparison', () => {
  assert.equal(formatProbability(0.2345), '23.4 %');
  assert.equal(formatProbability(0.0004), '<0.1 %');
  assert.equal(formatProbability(Number.NaN), '—');
  assert.equal(formatPerplexity(7.4219), '7.42');
  assert.equal(formatPerplexity(84.23), '84.2');
  assert.equal(formatPerplexity(12345.6), '12,346');
  assert.equal(formatPerplexity(null), '—');
  assert.match(perplexityText(84.2, 14), /^Perplexity: 84\.2 over 14 pieces/);
  assert.match(perplexityText(null, 0), /nothing to score yet/);
  assert.equal(
    perplexityComparison(84.2, 120.5, 2),
    'Perplexity: 120.5 with 2 heads off (+36.3 against 84.2 with every head on).',
  );
  assert.equal(
    perplexityComparison(84.2, 80, 1),
    'Perplexity: 80.0 with 1 head off (−4.20 against 84.2 with every head on).',
  );
});

test('piece labels: the word mark removed, a continuing piece after “·”, a character’s bytes once', () => {
  // "Hello, 😀 café" as a SentencePiece model with byte fallback reads it (hand-written pieces).
  const run = {
    n: 12,
    tokens: [
      '<bos>',
      '▁Hell',
      'o',
      ',',
      '▁',
      '<0xF0>',
      '<0x9F>',
      '<0x98>',
      '<0x80>',
      '▁caf',
      '<0xC3>',
      '<0xA9>',
    ],
    wordIndex: Int32Array.from([0, 1, 1, 2, 3, 3, 3, 3, 3, 4, 4, 4]),
    words: ['<bos>', 'Hello', ',', '😀', 'café'],
    unknown: Array(12).fill(false),
    truncatedTokens: 0,
  };
  assert.deepEqual(tokenLabels(run), [
    '<bos>',
    'Hell',
    '·o',
    ',',
    '␣',
    '😀',
    '·byte 2/4',
    '·byte 3/4',
    '·byte 4/4',
    'caf',
    '·é',
    '·byte 2/2',
  ]);
  // A control character's byte, and bytes cut before the character ends, stay as they are.
  assert.deepEqual(pieceLabels(['<bos>', '▁a', '<0x0A>'], [0, 1, 1]), ['<bos>', 'a', '·<0x0A>']);
  assert.deepEqual(pieceLabels(['<bos>', '<0xF0>', '<0x9F>'], [0, 1, 1]), [
    '<bos>',
    '<0xF0>',
    '·<0x9F>',
  ]);
  // The chips: one per word, its pieces without the joiner, a character's further bytes marked.
  const groups = wordGroups(run);
  assert.deepEqual(
    groups.map((g) => [g.text, g.pieces.map((p) => p.label).join('|')]),
    [
      ['<bos>', '<bos>'],
      ['Hello', 'Hell|o'],
      [',', ','],
      ['😀', '␣|😀|byte 2/4|byte 3/4|byte 4/4'],
      ['café', 'caf|é|byte 2/2'],
    ],
  );
  assert.deepEqual(
    groups[4].pieces.map((p) => p.byte),
    [false, false, true],
  );
  assert.equal(tokensNote(run, 64), '12 tokens: <bos> and 11 pieces of 4 words.');
  const long = { ...run, truncatedTokens: 37 };
  assert.match(
    tokensNote(long, 64),
    /37 more tokens cut: the model reads at most 64 tokens \(<bos> and the first 63 pieces of the text\)/,
  );
  // The next-piece table: a word's start bare, a continuation after “·”.
  assert.deepEqual(['▁the', 's', '▁', '<0xF0>', '<bos>'].map(nextPieceLabel), [
    'the',
    '·s',
    '␣',
    '<0xF0>',
    '<bos>',
  ]);
});

test('base64 to bytes', () => {
  assert.deepEqual(
    [...base64ToBytes(Buffer.from([0, 1, 254, 255]).toString('base64'))],
    [0, 1, 254, 255],
  );
});

test('coreferenceNote: the coreference head’s pronoun-probe share, its chance and the target met or missed', () => {
  const no = coreferenceNote(FILE);
  assert.match(no, /measured on 40 held-out sentences with two names and a pronoun/);
  assert.match(
    no,
    /its coreference head, L1 H0, puts more of the pronoun’s weight on its antecedent than on the other name in 60 % of them \(chance 50 %; the antecedent is the nearer name in 50 % of them\)\./,
  );
  assert.match(no, /Target 80 %: missed — no head of this model resolves such pronouns\./);
  const met = structuredClone(FILE);
  met.heads[1].card.find((r) => r.name === 'coreference').value = 0.85;
  assert.match(
    coreferenceNote(met),
    /in 85 % of them .* Target 80 %: met\. Look at the row of “it” in head L1 H0\./,
  );
  for (const bad of [null, {}, { heads: [] }, { ...FILE, measured: {} }])
    assert.equal(coreferenceNote(bad), null);
});

test('the figure export: every layer × head, a row per layer, roles, settings and file name', () => {
  const n = 4;
  const view = {
    layers: 2,
    heads: 3,
    n,
    weights: new Float32Array(2 * 3 * n * n),
    labels: ['<bos>', 'The', '·re', '.'],
    byWord: false,
    truncatedTokens: 0,
  };
  const roles = new Map([['1.2', 'this text: previous token 0.91']]);
  const p = englishFigureParts(view, { text: 'There.', off: ['0.1'], roles });
  assert.equal(p.stem, 'mha-english-l2-h3-n4');
  assert.deepEqual(p.data.heads, [0, 1, 2, 3, 4, 5]);
  assert.equal(p.data.weights, view.weights, "the view's own weights, (layers·heads, n, n)");
  assert.deepEqual(p.data.queryTokens, view.labels);
  assert.deepEqual(p.data.keyTokens, p.data.queryTokens);
  assert.deepEqual(p.headNames, [
    'layer 0, head 0',
    'layer 0, head 1 (switched off)',
    'layer 0, head 2',
    'layer 1, head 0',
    'layer 1, head 1',
    'layer 1, head 2',
  ]);
  assert.deepEqual(p.headNotes, ['', '', '', '', '', 'this text: previous token 0.91']);
  assert.equal(p.columns, 3, 'one row of heads per layer');
  assert.equal(p.title, 'English language model: “There.”');
  assert.deepEqual(p.caption, [
    'Text: “There.”',
    '2 layers × 3 heads · 4 tokens: <bos> and 3 pieces of the text',
    'Heads switched off: layer 0 head 1',
  ]);
  const words = englishFigureParts({ ...view, n: 3, byWord: true }, { text: 'There.' });
  assert.equal(words.stem, 'mha-english-l2-h3-n3-words');
  assert.match(
    words.caption[1],
    /by word: 3 words \(<bos> and 2 of the text\), each word’s pieces merged \(sum over key pieces, mean over query pieces\)/,
  );
  const long = englishFigureParts(view, { text: 'a'.repeat(700) });
  assert.equal(long.caption[0], `Text: “${'a'.repeat(600)}…”`);
  assert.equal(long.title, `English language model: “${'a'.repeat(100)}…”`);
  assert.equal(long.caption[2], 'Heads switched off: none');
});

test('heads are named as the grids name them: L1 H2', () => {
  assert.equal(headName(1, 2), 'L1 H2');
  assert.equal(headNameOf('0.3'), 'L0 H3');
  assert.match(coreferenceNote(FILE), /head, L1 H0, puts/);
});

test('the headPatterns request: the view’s weights and tokens', () => {
  const w = Float32Array.of(1, 0, 0.5, 0.5);
  assert.deepEqual(patternsRequest(w, 1, 2, ['<bos>', '▁the']), {
    attn_weights: w,
    num_heads: 1,
    n: 2,
    tokens: ['<bos>', '▁the'],
  });
});

test('captionTerms: the terms of a caption line', () => {
  assert.deepEqual(captionTerms('this text: stripe on “,” 0.61 · first token 0.52'), [
    'this text',
    'stripe on',
    'first token',
  ]);
  assert.deepEqual(captionTerms('this text: no clear pattern'), ['this text', 'no clear pattern']);
  assert.deepEqual(captionTerms('held-out: previous token 0.92 · off: loss +12.60'), [
    'held-out',
    'previous token',
    'off: loss',
  ]);
  assert.deepEqual(captionTerms('held-out: induction · off: loss -0.24'), [
    'held-out',
    'induction',
    'off: loss',
  ]);
  assert.deepEqual(
    captionTerms(
      'held-out: no clear pattern · best punctuation 0.40 (chance 0.09) · off: loss +0.00',
    ),
    ['held-out', 'no clear pattern', 'best', 'punctuation', 'chance', 'off: loss'],
  );
  assert.deepEqual(captionTerms('held-out: previous token 0.76 (chance 0.03)'), [
    'held-out',
    'previous token',
    'chance',
  ]);
  assert.deepEqual(captionTerms(''), []);
});

test('every term a caption can show has a one-line explanation', () => {
  const help = new Map(LABEL_HELP.map((h) => [h.term, h.text]));
  const lines = [];
  // Every label of the core (docs/patterns.md), a stripe on <bos> and on another token, none.
  for (const label of [
    'previous-token',
    'positional',
    'vertical-stripe',
    'long-range',
    'duplicate-token',
    'induction',
    'punctuation',
  ]) {
    for (const stripeKey of [0, 3]) {
      const p = {
        scores: {
          previous_token: 0.9,
          local_band: 0.9,
          vertical_stripe: 0.7,
          stripe_key: stripeKey,
          first_token: 0.7,
          mean_distance_normalized: 0.6,
          duplicate_token: 0.8,
          induction: 0.8,
          punctuation: 0.6,
        },
        labels: [label],
      };
      lines.push(`this text: ${measuredRole(p, tokens).text}`);
    }
  }
  lines.push(`this text: ${measuredRole({ scores: {}, labels: [] }, tokens).text}`);
  // Every held-out role of the committed heads file and of the one written here, as its caption line.
  for (const t of readTypicalRoles(HEADS_JSON).values()) lines.push(typicalText(t));
  for (const t of readTypicalRoles(FILE).values()) lines.push(typicalText(t));
  // Every role the evaluation can write (scripts/training/evaluate_english_lm.py ROLE_ORDER).
  for (const role of [
    'neighbourhood',
    'punctuation',
    'first token',
    'induction',
    'same token (content)',
  ])
    lines.push(typicalText({ role, score: 0.6, ablation_cost: null, row: null }));
  const terms = new Set(lines.flatMap(captionTerms));
  for (const want of [
    'first token',
    'stripe on',
    'nearby tokens',
    'previous token',
    'no clear pattern',
    'induction',
    'duplicate token',
    'punctuation',
    'long range',
    'held-out',
    'this text',
    'off: loss',
    'chance',
    'best',
    'neighbourhood',
    'same token (content)',
  ])
    assert.ok(terms.has(want), want);
  for (const term of terms) assert.ok(help.get(term)?.length > 20, `no explanation for “${term}”`);
  assert.match(help.get('first token'), /attention sink/);
  assert.match(help.get('first token'), /must sum to 1/);
  assert.match(
    help.get('first token'),
    /Xiao et al\. 2023, “Efficient Streaming Language Models with Attention Sinks”/,
  );
  assert.match(help.get('first token'), /Clark et al\. 2019/);
});

test('modelKinds: every target met or missed from the card rows, with the best head and its chance', () => {
  const kinds = modelKinds(FILE);
  assert.deepEqual(
    kinds.map((k) => [k.kind, k.present]),
    TARGETS.map((t) => [
      t.kind,
      { previous_token_argmax: true, punctuation: false, coreference: false, induction: true }[
        t.name
      ] ?? null,
    ]),
  );
  const by = new Map(kinds.map((k) => [k.kind, k.text]));
  assert.equal(
    by.get('Previous token'),
    'Previous token: target 0.90 met; best: L0 H1, 0.95 (chance 0.03) — rows whose largest weight is on the token before, on the held-out text.',
  );
  assert.equal(
    by.get('Punctuation'),
    'Punctuation: target 0.50 missed; best: L1 H0, 0.40 (chance 0.09) — mean weight on punctuation, on the held-out text.',
  );
  // Coreference: the file's coreference head, not the largest value elsewhere.
  assert.match(
    by.get('Coreference'),
    /^Coreference: target 0\.80 missed; the coreference head: L1 H0, 0\.60 \(chance 0\.50\)/,
  );
  assert.match(
    by.get('Positional / neighbourhood'),
    /^Positional \/ neighbourhood: no target; best: L0 H1, 0\.20 \(chance 0\.07\)/,
  );
  assert.equal(by.get('Content-based'), 'Content-based: not measured for this model.');
  assert.match(
    by.get('Beyond module 03, induction'),
    /target 0\.40 met; best: L1 H0, 0\.45 \(chance 0\.03\)/,
  );
  // The shipped file: every target said, met or missed, as its own numbers say.
  const shipped = modelKinds(HEADS_JSON);
  assert.equal(shipped.length, TARGETS.length);
  for (const [i, t] of TARGETS.entries()) {
    if (t.target === null) continue;
    const best = Math.max(
      ...HEADS_JSON.heads.map((h) => h.card.find((r) => r.name === t.name)?.value ?? -1),
    );
    const c = HEADS_JSON.measured.coreference_head;
    const value =
      t.name === 'coreference'
        ? HEADS_JSON.heads
            .find((h) => h.layer === c.layer && h.head === c.head)
            .card.find((r) => r.name === 'coreference').value
        : best;
    assert.equal(shipped[i].present, value >= t.target, t.kind);
    assert.match(
      shipped[i].text,
      new RegExp(`target ${t.target.toFixed(2)} ${value >= t.target ? 'met' : 'missed'}`),
    );
  }
  assert.deepEqual(modelKinds(null), []);
  assert.deepEqual(
    modelKinds({ heads: [{ layer: 0, head: 0, role: 'x' }] }),
    [],
    'no per-head card: nothing to say',
  );
});

test('inductionFinding: the heads that earn induction on the text, or that none does', () => {
  const patterns = new Map([
    ['0.1', { scores: { induction: 0.1 }, labels: ['positional'] }],
    ['1.3', { scores: { induction: 0.714 }, labels: ['vertical-stripe', 'induction'] }],
  ]);
  assert.equal(inductionFinding(patterns), 'On this text, “induction” is earned by L1 H3 (0.71).');
  assert.match(
    inductionFinding(new Map([['0.1', patterns.get('0.1')]])),
    /^On this text no head earns “induction”/,
  );
  assert.match(inductionFinding(null), /^On this text no head earns “induction”/);
});
