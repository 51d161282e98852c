// Splitting the sentence into tokens (the rule is also stated in the page's help text).
//
// Rule, applied left to right; spaces and invisible format characters (zero-width space,
// soft hyphen, byte-order mark: Unicode category Cf) only separate:
//   1. a word: a run of Unicode letters, digits and combining marks, optionally joined by an
//      apostrophe (' or ’) to another such run: "don't", "l’homme", "naïve", "42";
//   2. any other non-space character is a token by itself ("," "." "<" "="), together with the
//      combining marks, skin-tone modifiers, variation selectors or zero-width-joined characters
//      that follow it, so an emoji sequence (or a flag, two regional indicators) stays one token.
// No lower-casing, no sub-word pieces: this is a teaching page, and each token is one grid row
// and one grid column.

/** A word (rule 1) or one other symbol (rule 2). */
const TOKEN_RE =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: with the u flag each member is one code point (a mark, an emoji modifier, U+FE0F), each joined to the symbol before it
  /[\p{L}\p{N}\p{M}]+(?:['’][\p{L}\p{N}\p{M}]+)*|\p{Regional_Indicator}{2}|[^\s\p{L}\p{N}\p{Cf}](?:[\p{M}\p{Emoji_Modifier}\uFE0F]|\u200D[^\s])*/gu;

/**
 * At most this many tokens: each token is a row and a column of every head's grid. Up to 64 the
 * grids have labels and tables; beyond, they are drawn compact (layout.js, lod.js) and read through
 * the keyboard and the readout.
 */
export const MAX_TOKENS = 2048;

/** @param {string} text @returns {string[]} tokens in order (empty for blank text). */
export function tokenize(text) {
  if (typeof text !== 'string') return [];
  return text.match(TOKEN_RE) ?? [];
}

/**
 * Tokens of `text`, or the reason they cannot be shown.
 * @returns {{ok: true, tokens: string[]} | {ok: false, tokens: string[], message: string}}
 */
export function tokenizeChecked(text, maxTokens = MAX_TOKENS) {
  const tokens = tokenize(text);
  if (tokens.length === 0) {
    return { ok: false, tokens, message: 'The sentence has no tokens: type at least one word.' };
  }
  if (tokens.length > maxTokens) {
    return {
      ok: false,
      tokens,
      message:
        `The sentence has ${tokens.length} tokens; this page shows at most ${maxTokens} ` +
        '(one grid row and one column per token). Shorten it.',
    };
  }
  return { ok: true, tokens };
}
