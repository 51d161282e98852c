// The Date translator's settings in the URL hash:
//   #mode=date&date=Nov%2030%2C%202026&kind=cross&layer=0&off=cross/1/2
// (chrome/address_keys.js parseMode says which mode an address is for.)
// Pure functions, no DOM: tested by tests/web/date_state.test.mjs.

import { boundedText, hashParams, quoteValue } from '../../chrome/values.js';
import { offNote, parseOffList } from '../trained/off_heads.js';

/** The Date translator's kinds of attention (modes/date/date_view.js KINDS labels them). */
export const KIND_IDS = Object.freeze(['encoder_self', 'decoder_self', 'cross']);

/** Keys this module reads (main.js hands them to the modes that report unknown keys). */
export const DATE_HASH_KEYS = Object.freeze(['mode', 'date', 'kind', 'layer', 'off']);

/** layer LAST_LAYER: the model's last layer of the kind (where the decoder reads the input most clearly). */
export const LAST_LAYER = -1;

/**
 * The Date translator's settings. `off`: the heads switched off, as "kind/layer/head" strings (see
 * parseOff).
 * @typedef {{date: string, kind: string, layer: number, off: readonly string[]}} DateState
 */

/** @type {Readonly<DateState>} */
export const DATE_DEFAULTS = Object.freeze({
  date: 'Nov 30, 2026',
  kind: 'cross',
  layer: LAST_LAYER,
  off: Object.freeze([]),
});

/** At most this many heads switched off from the address (a model has far fewer). */
const MAX_OFF = 64;

/**
 * "cross/1/2,encoder_self/0/3" → {off: ['cross/1/2', 'encoder_self/0/3'], bad: [...]}: each item a
 * kind, a layer and a head; duplicates dropped. The page drops heads the model does not have.
 */
export function parseOff(raw) {
  return parseOffList(
    raw,
    (item) => {
      const m = /^([a-z_]+)\/(\d{1,2})\/(\d{1,2})$/.exec(item);
      return m && KIND_IDS.includes(m[1]) ? `${m[1]}/${Number(m[2])}/${Number(m[3])}` : null;
    },
    MAX_OFF,
  );
}

/** Longest date text the address may carry (the model's own limit is smaller; the page says so). */
export const MAX_DATE_CHARS = 2000;

/**
 * The Date translator's settings from the hash; invalid values fall back to the defaults with a
 * note. `layer` is only checked to be a small whole number here (LAST_LAYER when absent): the
 * page resolves and clamps it to the model's layer count once the model is loaded.
 * @returns {{state: {date: string, kind: string, layer: number}, notes: string[]}}
 */
export function parseDateHash(hash) {
  const p = hashParams(hash);
  const state = { ...DATE_DEFAULTS };
  const notes = [];
  if (p.has('date')) {
    const date = boundedText(p, 'date', MAX_DATE_CHARS, 'date', `using "${state.date}"`, notes);
    if (date !== null) state.date = date;
  }
  if (p.has('kind')) {
    const raw = p.get('kind');
    if (KIND_IDS.includes(raw)) state.kind = raw;
    else
      notes.push(
        `kind=${quoteValue(raw)} in the address is not one of ${KIND_IDS.join(', ')}; using kind=${state.kind}.`,
      );
  }
  if (p.has('layer')) {
    const raw = p.get('layer');
    if (/^\d{1,2}$/.test(raw.trim())) state.layer = Number(raw.trim());
    else
      notes.push(
        `layer=${quoteValue(raw)} in the address is not a layer number; using the last layer.`,
      );
  }
  if (p.has('off')) {
    const { off, bad } = parseOff(p.get('off'));
    state.off = off;
    if (bad.length) notes.push(offNote(bad, 'kind/layer/head (e.g. cross/1/2)'));
  }
  return { state, notes };
}

/** The hash (without "#") that chrome's parseMode and parseDateHash read back as date mode with `state`. */
export function dateStateToHash(state) {
  // encodeURIComponent keeps spaces as %20 (not "+"); commas and slashes are fine in a fragment.
  const date = encodeURIComponent(state.date).replace(/%2C/g, ',').replace(/%2F/g, '/');
  const layer = state.layer === LAST_LAYER ? '' : `&layer=${state.layer}`;
  const off = state.off?.length ? `&off=${state.off.join(',')}` : '';
  return `mode=date&date=${date}&kind=${state.kind}${layer}${off}`;
}
