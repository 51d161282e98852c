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
  patternsRequest,
} from '../../web/src/modes/english/english_view.js';
import { LABEL_HELP } from '../../web/src/modes/english/english_text.js';

const HEADS_JSON = JSON.parse(
  readFileSync(new URL('../../web/english_lm_heads.json', import.meta.url), 'utf8'),
);

const tokens = ['<bos>', 'the', 'cat', ',', 'sat'];

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

test('typical roles: the heads file, its bad entries left out, absence gives none', () => {
  const roles = readTypicalRoles({
    heads: [
      { layer: 0, head: 1, role: 'previous token', score: 0.83, ablation_cost: 0.12 },
      { layer: 1, head: 2, role: 'induction' },
      { layer: -1, head: 0, role: 'x' },
      { layer: 0, head: 2, role: '' },
      null,
    ],
  });
  assert.deepEqual([...roles.keys()], ['0.1', '1.2']);
  assert.equal(
    typicalText(roles.get('0.1')),
    'held-out: previous token 0.83 · off: perplexity +0.12',
  );
  assert.equal(typicalText(roles.get('1.2')), 'held-out: induction');
  assert.equal(typicalText(undefined), '');
  for (const nothing of [null, {}, { heads: 'no' }, []])
    assert.equal(readTypicalRoles(nothing).size, 0);
});

test('probabilities, perplexities and their comparison', () => {
  assert.equal(formatProbability(0.2345), '23.4 %');
  assert.equal(formatProbability(0.0004), '<0.1 %');
  assert.equal(formatProbability(Number.NaN), '—');
  assert.equal(formatPerplexity(7.4219), '7.42');
  assert.equal(formatPerplexity(84.23), '84.2');
  assert.equal(formatPerplexity(12345.6), '12,346');
  assert.equal(formatPerplexity(null), '—');
  assert.match(perplexityText(84.2, 14), /^Perplexity: 84\.2 over 14 words/);
  assert.match(perplexityText(null, 0), /no word to score yet/);
  assert.equal(
    perplexityComparison(84.2, 120.5, 2),
    'Perplexity: 120.5 with 2 heads off (+36.3 against 84.2 with every head on).',
  );
  assert.equal(
    perplexityComparison(84.2, 80, 1),
    'Perplexity: 80.0 with 1 head off (−4.20 against 84.2 with every head on).',
  );
});

test('token labels mark unknown words; the tokens note counts unknown and cut tokens', () => {
  const run = {
    n: 4,
    tokens: ['<bos>', 'the', '<unk>', '<unk>'],
    words: ['<bos>', 'The', 'Zorp', '😀'],
    unknown: [false, false, true, true],
    truncatedTokens: 0,
  };
  assert.deepEqual(tokenLabels(run), ['<bos>', 'the', 'Zorp*', '😀*']);
  assert.equal(
    tokensNote(run, 64),
    '4 tokens: <bos> and 3 of the text · 2 not in the model’s vocabulary (dashed: the model reads them as <unk>).',
  );
  const long = {
    n: 64,
    tokens: Array(64).fill('a'),
    words: Array(64).fill('a'),
    unknown: Array(64).fill(false),
    truncatedTokens: 37,
  };
  assert.match(
    tokensNote(long, 64),
    /37 more tokens cut: the model reads at most 64 tokens \(<bos> and the first 63 of the text\)/,
  );
});

test('base64 to bytes', () => {
  assert.deepEqual(
    [...base64ToBytes(Buffer.from([0, 1, 254, 255]).toString('base64'))],
    [0, 1, 254, 255],
  );
});

test('coreferenceNote: the measured head and shares in words, resolved or not; null without a measurement', () => {
  const c = {
    sentences: ['The man saw the girl and he smiled .', 'x'],
    best: { layer: 1, head: 2, antecedent: 0.314, other: 0.12 },
    resolved: false,
  };
  const no = coreferenceNote({ coreference: c });
  assert.match(no, /measured on 2 sentences/);
  assert.match(no, /“The man saw the girl and he smiled\.”/);
  assert.match(
    no,
    /the head that favours the antecedent most, L1 H2, puts 31 % of the pronoun’s attention on it and 12 % on the other noun\./,
  );
  assert.doesNotMatch(no, /1\.2/, 'heads named as the grids name them');
  assert.match(no, /No head reaches half: this model is too small to resolve pronouns\./);
  const yes = coreferenceNote({
    coreference: { ...c, best: { ...c.best, antecedent: 0.61 }, resolved: true },
  });
  assert.match(
    yes,
    /puts 61 % .* That head resolves such pronouns: look at the row of “it” in head L1 H2\./,
  );
  for (const bad of [
    null,
    {},
    { coreference: {} },
    { coreference: { ...c, sentences: [] } },
    { coreference: { ...c, best: { ...c.best, antecedent: 1.5 } } },
    { coreference: { ...c, best: { ...c.best, layer: 'a' } } },
  ])
    assert.equal(coreferenceNote(bad), null);
});

test('the figure export: every layer × head, a row per layer, roles, settings and file name', () => {
  const n = 4;
  const run = {
    layers: 2,
    heads: 3,
    n,
    attnWeights: new Float32Array(2 * 3 * n * n),
    tokens: ['<bos>', 'the', '<unk>', '.'],
    words: ['<bos>', 'The', 'Zorp', '.'],
    unknown: [false, false, true, false],
    truncatedTokens: 0,
  };
  const roles = new Map([['1.2', 'this text: previous token 0.91']]);
  const p = englishFigureParts(run, { text: 'The Zorp.', off: ['0.1'], roles });
  assert.equal(p.stem, 'mha-english-l2-h3-n4');
  assert.deepEqual(p.data.heads, [0, 1, 2, 3, 4, 5]);
  assert.equal(p.data.weights, run.attnWeights, "the run's own weights, (layers·heads, n, n)");
  assert.deepEqual(p.data.queryTokens, ['<bos>', 'the', 'Zorp*', '.']);
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
  assert.equal(p.title, 'English language model: “The Zorp.”');
  assert.deepEqual(p.caption, [
    'Text: “The Zorp.”',
    '2 layers × 3 heads · 4 tokens: <bos> and 3 of the text · * not in the model’s vocabulary (read as <unk>): 1',
    'Heads switched off: layer 0 head 1',
  ]);
  const long = englishFigureParts(run, { text: 'a'.repeat(700) });
  assert.equal(long.caption[0], `Text: “${'a'.repeat(600)}…”`);
  assert.equal(long.title, `English language model: “${'a'.repeat(100)}…”`);
  assert.equal(long.caption[2], 'Heads switched off: none');
});

test('heads are named as the grids name them: L1 H2', () => {
  assert.equal(headName(1, 2), 'L1 H2');
  assert.equal(headNameOf('0.3'), 'L0 H3');
  assert.match(
    coreferenceNote(HEADS_JSON),
    /the head that favours the antecedent most, L1 H2, puts 21 % of the pronoun’s attention on it and 9 % on the other noun/,
  );
});

test('the headPatterns request names the model’s unknown token as unmatched', () => {
  const w = Float32Array.of(1, 0, 0.5, 0.5);
  assert.deepEqual(patternsRequest(w, 1, 2, ['<bos>', '<unk>'], '<unk>'), {
    attn_weights: w,
    num_heads: 1,
    n: 2,
    tokens: ['<bos>', '<unk>'],
    unmatched_tokens: ['<unk>'],
  });
});

test('captionTerms: the terms of a caption line', () => {
  assert.deepEqual(captionTerms('this text: stripe on “,” 0.61 · first token 0.52'), [
    'this text',
    'stripe on',
    'first token',
  ]);
  assert.deepEqual(captionTerms('this text: no clear pattern'), ['this text', 'no clear pattern']);
  assert.deepEqual(captionTerms('held-out: previous token 0.92 · off: perplexity +12.60'), [
    'held-out',
    'previous token',
    'off: perplexity',
  ]);
  assert.deepEqual(captionTerms('held-out: induction · off: perplexity -0.24'), [
    'held-out',
    'induction',
    'off: perplexity',
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
  // Every held-out role of the committed heads file, as its caption line.
  for (const t of readTypicalRoles(HEADS_JSON).values()) lines.push(typicalText(t));
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
    'off: perplexity',
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

test('modelKinds: module 03’s kinds the committed model has and lacks, from the held-out scores', () => {
  const kinds = modelKinds(HEADS_JSON);
  assert.deepEqual(
    kinds.map((k) => [k.kind, k.present]),
    [
      ['Previous token', true],
      ['Positional / neighbourhood', true],
      ['Punctuation', false],
      ['Coreference', false],
      ['Content-based', null],
      ['Beyond module 03, induction', true],
      ['Beyond module 03, first token (attention sink)', true],
    ],
  );
  assert.equal(kinds[0].text, 'Previous token: yes, L0 H3 0.92 (mean weight on the word before).');
  assert.equal(
    kinds[1].text,
    'Positional / neighbourhood: yes, L0 H0 0.99, L0 H1 0.88 (mean weight within one position).',
  );
  assert.equal(
    kinds[2].text,
    'Punctuation: no; the highest is L0 H2 0.15 (mean weight on punctuation), under 0.5.',
  );
  assert.equal(
    kinds[3].text,
    'Coreference: no; the closest, L1 H2, puts 21 % of a pronoun’s weight on its antecedent and 9 % on the other noun.',
  );
  assert.equal(
    kinds[4].text,
    'Content-based: not measured; no simple rule fits L0 H2, L1 H0, L1 H2.',
  );
  assert.match(
    kinds[5].text,
    /^Beyond module 03, induction: yes, L1 H3 0\.93, L1 H1 0\.88 \(on random common words repeated/,
  );
  assert.equal(
    kinds[6].text,
    'Beyond module 03, first token (attention sink): yes, L1 H1 0.93, L1 H3 0.90 (mean weight on <bos>).',
  );
  assert.deepEqual(modelKinds(null), []);
  assert.deepEqual(
    modelKinds({ heads: [{ layer: 0, head: 0, role: 'x' }] }),
    [],
    'no per-head scores: nothing to say',
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
