// The English model's settings in the URL hash:
//   #mode=english&text=The%20cat%20sat.&off=0.1,1.3&sel=1.2
// text: what the text box holds; off: the heads switched off, "layer.head"; sel: the head
// enlarged, "layer.head"; words=1: the by-word view (each word's pieces merged; default: pieces). Pure functions, no DOM: tested by tests/web/english_state.test.mjs.
// (chrome/address_keys.js parseMode says which mode an address is for.)
import { boundedText, hashParams, quoteValue } from '../../chrome/values.js';
import { offNote, parseOffList } from '../trained/off_heads.js';

/** Keys this module reads (main.js hands them to the modes that report unknown keys). */
export const ENGLISH_HASH_KEYS = Object.freeze(['mode', 'text', 'off', 'sel', 'words']);

/**
 * The English mode's defaults: the text, the heads switched off, the selected cell, the view
 * (false: pieces, true: by word).
 * @type {Readonly<{text: string, off: readonly string[], sel: object|null, words: boolean}>}
 */
export const ENGLISH_DEFAULTS = Object.freeze({
  text: 'The dog sat by the door. The man sat by the fire.',
  off: Object.freeze([]),
  sel: null,
  words: false,
});

/** Longest text the address may carry (the model reads its first max_len tokens; the page says so). */
export const MAX_TEXT_CHARS = 20000;
/** At most this many heads switched off from the address (a small model has far fewer). */
const MAX_OFF = 256;

const HEAD = /^(\d{1,3})\.(\d{1,3})$/;

/** "1.2" → {layer: 1, head: 2}, or null. */
export function parseHead(raw) {
  const m = HEAD.exec(String(raw).trim());
  return m ? { layer: Number(m[1]), head: Number(m[2]) } : null;
}

/** {layer, head} → "layer.head" (the address's and the page's key of a head). */
export function headId({ layer, head }) {
  return `${layer}.${head}`;
}

/**
 * "0.1,1.3" → {off: ['0.1', '1.3'], bad: [...]}: duplicates dropped. The page drops heads the
 * model does not have (it knows the model's size only once it is loaded).
 */
export function parseOffHeads(raw) {
  return parseOffList(
    raw,
    (item) => {
      const h = parseHead(item);
      return h ? headId(h) : null;
    },
    MAX_OFF,
  );
}

/**
 * The English mode's settings from the hash; invalid values fall back to the defaults with a note.
 * @returns {{state: {text: string, off: string[], sel: string|null, words: boolean}, notes: string[]}}
 */
export function parseEnglishHash(hash) {
  const p = hashParams(hash);
  const state = { ...ENGLISH_DEFAULTS, off: [] };
  const notes = [];
  if (p.has('text')) {
    const text = boundedText(p, 'text', MAX_TEXT_CHARS, 'text', 'showing the default text', notes);
    if (text !== null) state.text = text;
  }
  if (p.has('off')) {
    const { off, bad } = parseOffHeads(p.get('off'));
    state.off = off;
    if (bad.length) notes.push(offNote(bad, 'layer.head (e.g. 0.1)'));
  }
  if (p.has('sel')) {
    const raw = p.get('sel');
    const h = parseHead(raw);
    if (h) state.sel = headId(h);
    else
      notes.push(
        `sel=${quoteValue(raw)} in the address is not layer.head (e.g. 1.2); no head enlarged.`,
      );
  }
  if (p.has('words')) {
    const raw = p.get('words');
    if (raw === '1' || raw === '0') state.words = raw === '1';
    else
      notes.push(
        `words=${quoteValue(raw)} in the address is not 1 (by word) or 0 (pieces); showing pieces.`,
      );
  }
  return { state, notes };
}

/** The hash (without "#") that chrome's parseMode and parseEnglishHash read back as English mode with `state`. */
export function englishStateToHash(state) {
  // encodeURIComponent keeps spaces as %20 (not "+"); commas and slashes are fine in a fragment.
  const text = encodeURIComponent(state.text).replace(/%2C/g, ',').replace(/%2F/g, '/');
  const off = state.off?.length ? `&off=${state.off.join(',')}` : '';
  const sel = state.sel ? `&sel=${state.sel}` : '';
  const words = state.words ? '&words=1' : '';
  return `mode=english&text=${text}${off}${sel}${words}`;
}
