// The English mode's wording that is likely to be edited: the example texts and what each is
// meant to show, the note on coreference, the note shown after "Repeat this text", what each
// caption label means. One place, plain strings (shown as text, never as HTML).

/**
 * The example buttons: `label` on the button, `text` put in the box, `look` said under the
 * buttons once chosen (what to look for in the grids; the mode adds what was measured: whether
 * the model has the kind of head, english_view.js modelKinds, and what the heads did on the text).
 */
export const EXAMPLES = Object.freeze([
  Object.freeze({
    id: 'previous',
    label: 'Previous token',
    text: 'The old fisherman walked slowly down the winding road to his small house by the river.',
    look: 'Previous-token heads: a bright line just under the diagonal, each piece reading the piece before it.',
  }),
  Object.freeze({
    id: 'punctuation',
    label: 'A list with commas',
    text: 'We bought apples, pears, plums, cherries and grapes. Then we went home, washed them, and ate them all.',
    look:
      'Punctuation: module 03 describes heads whose attention collapses on commas and periods (bright columns ' +
      'under “,” and “.”); a caption says “punctuation” only where a head earns it on this text.',
  }),
  Object.freeze({
    id: 'induction',
    label: 'A repeated phrase',
    text: 'Mr Dursley drilled holes in the garden fence. Later that evening, Mr Dursley drilled holes in the garden fence.',
    look:
      'Induction heads: in the second copy each piece may read the piece that followed its first occurrence, a ' +
      'stripe parallel to the diagonal, one phrase-length to the left.',
  }),
  Object.freeze({
    id: 'coreference',
    label: 'A pronoun',
    text: "The animal didn't cross the street because it was too tired.",
    look: null, // COREFERENCE_NOTE (or the measured note) says what to look for
  }),
]);

/**
 * The report card's scores in plain words (docs/patterns.md "Head report card"): `words` as the
 * page writes the score, `role` the held-out role of web/english_lm_heads.json that stands on it,
 * `label` the core's label that the score earns (mod.headReport `labels`).
 */
export const CARD_WORDS = Object.freeze({
  previous_token_argmax: { words: 'previous token (argmax)', role: 'previous token', label: null },
  previous_token: { words: 'previous token', role: null, label: 'previous-token' },
  local_band: { words: 'neighbourhood', role: 'neighbourhood', label: 'positional' },
  argmax_offset: { words: 'argmax at one offset', role: null, label: null },
  punctuation: { words: 'punctuation', role: 'punctuation', label: 'punctuation' },
  first_token: { words: 'first token', role: 'first token', label: 'first-token' },
  induction: { words: 'induction', role: 'induction', label: 'induction' },
  same_token: {
    words: 'same token (content)',
    role: 'same token (content)',
    label: 'duplicate-token',
  },
  coreference: { words: 'coreference', role: 'coreference', label: 'coreference' },
});

/**
 * The targets the shipped model is held to (module 03's kinds, measured on held-out text or a
 * probe): `name` the card score, `probe` which measurement, `target` the least value (null: no
 * target, reported as measured), `kind` module 03's name, `what` the score in words, `source`.
 */
export const TARGETS = Object.freeze(
  [
    [
      'Previous token',
      'previous_token_argmax',
      'held-out text',
      0.9,
      'rows whose largest weight is on the token before',
      'Voita et al. 2019 call a head positional at 90 %',
    ],
    [
      'Positional / neighbourhood',
      'local_band',
      'held-out text',
      null,
      'mean weight within one position',
      'module 03',
    ],
    [
      'Punctuation',
      'punctuation',
      'held-out text',
      0.5,
      'mean weight on punctuation',
      'Clark et al. 2019',
    ],
    [
      'Coreference',
      'coreference',
      'pronoun probe',
      0.8,
      'pronoun sentences whose pronoun weighs its antecedent above the other name',
      'chance 50 %',
    ],
    [
      'Content-based',
      'same_token',
      'held-out text',
      null,
      'mean weight on earlier copies of the same token, two or more back',
      'Wang et al. 2022',
    ],
    [
      'Beyond module 03, induction',
      'induction',
      'induction probe',
      0.4,
      'Olsson et al. 2022’s prefix matching on random pieces repeated',
      'Olsson et al. 2022',
    ],
    [
      'Beyond module 03, first token (attention sink)',
      'first_token',
      'held-out text',
      null,
      'mean weight on <bos>',
      'Gu et al. 2024',
    ],
  ].map(([kind, name, probe, target, what, source]) =>
    Object.freeze({ kind, name, probe, target, what, source }),
  ),
);

/** The by-word view's rule, said next to its switch (the core computes it: mod.byWordWeights). */
export const BY_WORD_RULE =
  'By word: each word’s pieces merged. The weight from word u to word v is the sum of the weights from a ' +
  'piece of u to the pieces of v, averaged over the pieces of u (sum over key pieces, mean over query ' +
  'pieces), so every row still sums to 1.';

/**
 * What the page says about coreference. Module 03 lists coreference heads (a pronoun reading
 * its antecedent); whether a head of this small model does is a measurement, not a promise.
 */
export const COREFERENCE_NOTE =
  'Coreference: in “The animal didn’t cross the street because it was too tired.”, “it” means the ' +
  'animal. Module 03 describes heads whose pronouns look at their antecedent; this model is small and ' +
  'was trained on little text, so it is not expected to resolve “it” unless a head measurably does. ' +
  'Look at the row of “it” in each head: a bright cell under “animal” would be such a head; weight ' +
  'spread over the earlier words, or on “street”, means no head here does.';

/**
 * Shown after "Repeat this text" (followed by what the heads did on the text: english_view.js
 * inductionFinding): what the induction stripe is.
 */
export const REPEAT_NOTE =
  'The text now appears twice. In the second copy, an induction head attends to the token after the same ' +
  'token’s first occurrence (it predicts that what followed last time follows again): a stripe parallel to the ' +
  'diagonal, one copy-length to the left, in the heads captioned “induction”.';

/** What the small multiples show (under their heading). */
export const HEADS_HELP =
  'Rows: each token (a piece of a word; “·” marks a piece that continues the word before it) as a query ' +
  '(its row predicts the next piece); columns: the token itself and the ones before it. Under each grid: its ' +
  'role measured on this text by the core’s head-pattern scores and, where known, over held-out text with its ' +
  'chance baseline (the terms are explained under the grids). Select a grid to enlarge it with its labels and ' +
  'its whole report card; “off” switches a head off.';

/**
 * What each term of the grids' captions means, in the order the page lists them: `term` as the
 * captions write it (english_view.js measuredRole, typicalText; "stripe on" stands for
 * "stripe on “,”" and the like), `text` one line.
 */
export const LABEL_HELP = Object.freeze(
  [
    [
      'previous token',
      'most of each word’s weight is on the word just before it: a bright line under the diagonal (module 03’s previous-token head).',
    ],
    [
      'nearby tokens',
      'most of the weight is within one position: the word itself and the word before it, a narrow bright band on the diagonal (module 03’s positional / neighbourhood head).',
    ],
    [
      'first token',
      'an attention sink: most of the weight is on <bos>, the first token. Softmax weights must sum to 1, so a head with nothing to read in a row parks its weight on the first token, which every word can see (Xiao et al. 2023, “Efficient Streaming Language Models with Attention Sinks”; Clark et al. 2019 saw BERT’s heads do the same on [SEP] and [CLS]). Not one of module 03’s kinds.',
    ],
    [
      'stripe on',
      'most of the other words’ weight is on one token, a bright column (module 03’s vertical stripe).',
    ],
    [
      'punctuation',
      'most of the weight is on punctuation tokens such as “,” and “.” (module 03’s punctuation head).',
    ],
    [
      'long range',
      'the weight lies far from the word: on average more than half the text away (module 03 draws coreference as long-range spikes; far is not yet coreference).',
    ],
    ['duplicate token', 'a repeated piece reads its own earlier copies.'],
    [
      'induction',
      'in repeated text, a piece reads the piece that followed its earlier occurrence, to predict the same continuation (Olsson et al. 2022).',
    ],
    [
      'no clear pattern',
      'no simple rule above fits this head on this text: its weight is spread out, or follows the words themselves (module 03’s content-based heads would be among these; this page does not measure that).',
    ],
    [
      'this text',
      'the role the core’s head-pattern scores measure on the text in the box, with the score (a share of the weight, 0 to 1); at most two, the higher first.',
    ],
    [
      'held-out',
      'the head’s usual role, measured over text the model never trained on (induction: Olsson et al. 2022’s repeated random pieces), with its score and chance; the enlarged head shows its whole report card.',
    ],
    [
      'previous token (argmax)',
      'the share of rows whose largest weight is on the token just before (Voita et al. 2019 call a head positional when one offset wins in 90 % of rows).',
    ],
    [
      'neighbourhood',
      'most of the weight is within one position (module 03’s neighbourhood head), measured over held-out text.',
    ],
    [
      'same token (content)',
      'weight on earlier copies of the same piece, two or more back: attention that follows what a token is, not where it is (a content-based head; Wang et al. 2022’s duplicate-token heads).',
    ],
    [
      'best',
      'a head with no clear role over held-out text: the score furthest above its chance, for comparison.',
    ],
    [
      'chance',
      'the same score for a head that spreads its weight evenly over the tokens it may read, on the same rows: a score near its chance means nothing.',
    ],
    [
      'argmax at one offset',
      'the share of rows whose largest weight is at the head’s most frequent distance, whichever it is (Voita et al. 2019’s positional heads: 90 % or more).',
    ],
    [
      'off: loss',
      'how much the loss of held-out text rises, in nats per character, with this head switched off (negative: it falls): small numbers mean other heads do the same job.',
    ],
  ].map(([term, text]) => Object.freeze({ term, text })),
);
