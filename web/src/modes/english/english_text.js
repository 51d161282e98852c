// The English mode's wording that is likely to be edited: the example texts and what each is
// meant to show, the note on coreference, the note shown after "Repeat this text". One place,
// plain strings (shown as text, never as HTML).

/**
 * The example buttons: `label` on the button, `text` put in the box, `look` said under the
 * buttons once chosen (what to look for in the grids).
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
    look: 'Punctuation heads: bright columns on the commas and periods, read by the words that follow them.',
  }),
  Object.freeze({
    id: 'induction',
    label: 'A repeated list',
    text: 'river horse seven glass window chair table music green paper river horse seven glass window chair table music green paper',
    look: 'Induction heads: in the second copy each word reads the word that followed its first occurrence, a stripe parallel to the diagonal, one list-length to the left.',
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

/** Shown after "Repeat this text": what the induction stripe is. */
export const REPEAT_NOTE =
  'The text now appears twice. In the second copy, an induction head attends to the token after the same ' +
  'token’s first occurrence (it predicts that what followed last time follows again): look for a stripe ' +
  'parallel to the diagonal, one copy-length to the left, in the heads captioned “induction”.';

/** What the small multiples show (under their heading). */
export const HEADS_HELP =
  'Rows: each token as a query (its row predicts the next word); columns: the token itself and the ones before it. ' +
  'Under each grid: its role measured on this text by the core’s head-pattern scores and, where known, over held-out ' +
  'text. Select a grid to enlarge it with its labels; “off” switches a head off.';
