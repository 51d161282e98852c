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
    text: 'the old man walked slowly down the long road to the small house by the river',
    look: 'Previous-token heads: a bright line just under the diagonal, each word reading the word before it.',
  }),
  Object.freeze({
    id: 'punctuation',
    label: 'Commas and periods',
    text: 'Yes, we can. No, we will not. Red, green and blue, then black, white and gray. It is late, and it is cold.',
    look:
      'Punctuation: module 03 describes heads whose attention collapses on commas and periods (bright columns ' +
      'under “,” and “.”); a caption says “punctuation” only where a head earns it on this text.',
  }),
  Object.freeze({
    id: 'induction',
    label: 'A repeated list',
    text: 'river horse seven glass window chair table music green paper river horse seven glass window chair table music green paper',
    look:
      'Induction heads: in the second copy each word may read the word that followed its first occurrence, a ' +
      'stripe parallel to the diagonal, one list-length to the left.',
  }),
  Object.freeze({
    id: 'coreference',
    label: 'Coreference',
    text: "The animal didn't cross the street because it was too tired.",
    look: null, // COREFERENCE_NOTE says what to look for
  }),
]);

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
  'Rows: each token as a query (its row predicts the next word); columns: the token itself and the ones before it. ' +
  'Under each grid: its role measured on this text by the core’s head-pattern scores and, where known, over held-out ' +
  'text (the terms are explained under the grids). Select a grid to enlarge it with its labels; “off” switches a head off.';

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
    [
      'duplicate token',
      'a repeated word reads its own earlier copies. Unknown words (<unk>) are never copies of each other.',
    ],
    [
      'induction',
      'in repeated text, a word reads the word that followed its earlier occurrence, to predict the same continuation (Olsson et al. 2022). Unknown words (<unk>) never count as repeats.',
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
      'the head’s usual role, measured over sentences the model never trained on (induction: on random common words repeated), with its score.',
    ],
    [
      'off: perplexity',
      'how much the perplexity of held-out text rises with this head switched off (negative: it falls).',
    ],
  ].map(([term, text]) => Object.freeze({ term, text })),
);
