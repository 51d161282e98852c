// The address keys the page itself reads, whatever the mode: which mode is shown (mode=…), and the
// view keys (cell, embed); and the notes about an address as a whole (keys no part reads, keys
// given twice, percent-encoding that does not decode). Each mode reads its own keys in its folder
// (modes/random/random_state.js, modes/date/date_state.js, modes/english/english_state.js) and
// hands addressNotes the keys it knows. Pure functions, no DOM: tested by
// tests/web/state.test.mjs and tests/web/date_state.test.mjs.
import { tokenize } from './tokenize.js';
import { hashParams, parseBoolean, quoteValue } from './values.js';

/** The modes' ids: the address's mode=… and the tabs' data-mode (no mode: the first, random embeddings). */
export const MODES = Object.freeze(['random', 'date', 'english']);

/** @returns {{mode: 'random'|'date'|'english', notes: string[]}} */
export function parseMode(hash) {
  const p = hashParams(hash);
  if (!p.has('mode')) return { mode: 'random', notes: [] };
  const raw = p.get('mode');
  if (MODES.includes(raw))
    return { mode: /** @type {'random'|'date'|'english'} */ (raw), notes: [] };
  return {
    mode: 'random',
    notes: [`Unknown mode "${quoteValue(raw)}" in the address; showing random embeddings.`],
  };
}

/**
 * Hash keys that say how the result is viewed rather than what is computed. Each entry:
 *   parse(raw, ctx) → {value} | {note}: ctx = {state, tokens} (the settings already read from the
 *     hash, and their tokens), so a value can be checked against them;
 *   serialize(value) → string, or null to leave the key out (its default);
 *   fallback: the value when the key is absent or invalid.
 * A key added here (with a test in tests/web/state.test.mjs) round-trips through parseView
 * (and the random-embeddings parseHash's result.view) and viewToHash, and is never reported as
 * unknown.
 */
export const VIEW_KEYS = Object.freeze({
  // The locked cell: "cell=H.Q.K" = head H, query row Q, key column K (0-based).
  cell: Object.freeze({
    fallback: null,
    parse(raw, { state, tokens }) {
      const m = /^(\d{1,2})\.(\d{1,3})\.(\d{1,3})$/.exec(raw.trim());
      const cell = m && { head: Number(m[1]), row: Number(m[2]), col: Number(m[3]) };
      if (
        cell &&
        cell.head < state.num_heads &&
        cell.row < tokens.length &&
        cell.col < tokens.length
      ) {
        return { value: cell };
      }
      return {
        note:
          `cell=${quoteValue(raw)} in the address is not head.query.key within ` +
          `${state.num_heads} head${state.num_heads === 1 ? '' : 's'} and ${tokens.length} tokens ` +
          '(e.g. cell=0.0.2); no cell is selected.',
      };
    },
    serialize: (cell) => (cell ? `${cell.head}.${cell.row}.${cell.col}` : null),
  }),
  // Minimal chrome for an iframe: "#preset=module-08&embed" (or embed=1; embed=0 is the full page).
  embed: Object.freeze({
    fallback: false,
    parse(raw) {
      const v = raw.trim() === '' ? true : parseBoolean(raw);
      return v === null
        ? { note: `embed=${quoteValue(raw)} in the address is not 1/0; showing the full page.` }
        : { value: v };
    },
    serialize: (on) => (on ? '1' : null),
  }),
});

/** The keys this file reads: not unknown to any mode. */
const PAGE_KEYS = Object.freeze(['mode', ...Object.keys(VIEW_KEYS)]);

/** Every view key at its fallback value. */
export function defaultView() {
  return Object.fromEntries(Object.entries(VIEW_KEYS).map(([k, spec]) => [k, spec.fallback]));
}

/**
 * The view keys of a hash, checked against the settings they apply to (see VIEW_KEYS): `state`
 * is {text, num_heads} of the view (the random-embeddings settings, which `cell` needs; null when
 * only `embed` is read).
 * @param {string[]} [keys] the view keys to read (the others keep their fallback)
 * @returns {{view: object, notes: string[]}}
 */
export function parseView(hash, state, keys = Object.keys(VIEW_KEYS)) {
  const params = hashParams(hash);
  const view = defaultView();
  const notes = [];
  const tokens = tokenize(String(state?.text ?? ''));
  for (const key of keys) {
    if (!params.has(key)) continue;
    const r = VIEW_KEYS[key].parse(params.get(key), { state, tokens });
    if ('value' in r) view[key] = r.value;
    else notes.push(r.note);
  }
  return { view, notes };
}

/** Whether the address asks for the minimal chrome (embed; an invalid value is the full page). */
export function embedOf(hash) {
  return parseView(hash, null, ['embed']).view.embed;
}

/**
 * "&key=value&…" for the keys of `specs` ({key: {serialize(value) → string|null}}) whose
 * serialize gives a string for `values[key]` (null: the fallback, left out), or "".
 */
export function keysToHash(specs, values) {
  const p = new URLSearchParams();
  for (const [key, spec] of Object.entries(specs)) {
    const s = key in values ? spec.serialize(values[key]) : null;
    if (s !== null) p.set(key, s);
  }
  const out = p.toString();
  return out ? `&${out}` : '';
}

/** "&cell=0.0.2&embed=1": the view keys that differ from their fallback, or "". */
export function viewToHash(view = {}) {
  return keysToHash(VIEW_KEYS, view);
}

/** Whether some key or value of the hash does not decode (URLSearchParams then substitutes U+FFFD). */
function hasBrokenEncoding(hash) {
  const body = String(hash ?? '').replace(/^#/, '');
  return body.split(/[&=]/).some((part) => {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * The notes about an address as a whole, in this order: each key that neither this file nor
 * `known` names ("Ignored unknown setting"), each key given more than once, and percent-encoding
 * that does not decode.
 * @param {string} hash the address's hash
 * @param {Iterable<string>} known the keys the modes read (the mode reading the address hands
 *   its own and, from main.js, every other mode's)
 * @returns {string[]}
 */
export function addressNotes(hash, known) {
  const params = hashParams(hash);
  const read = new Set([...PAGE_KEYS, ...known]);
  const notes = [];
  for (const key of params.keys()) {
    if (!read.has(key)) notes.push(`Ignored unknown setting "${quoteValue(key)}" in the address.`);
  }
  const seen = new Set();
  const repeated = new Set();
  for (const key of params.keys()) {
    if (seen.has(key) && !repeated.has(key)) {
      repeated.add(key);
      notes.push(
        `"${quoteValue(key)}" appears more than once in the address; using its first value.`,
      );
    }
    seen.add(key);
  }
  if (hasBrokenEncoding(hash)) {
    notes.push(
      'Part of the address is not valid percent-encoding (a "%" without two hex digits, or bytes ' +
        'that are not UTF-8); it was read with replacement characters (\uFFFD).',
    );
  }
  return notes;
}
