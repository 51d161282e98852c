// The explain views' part of the random-embeddings state: the extra mask (besides the causal
// checkbox), switched-off heads and the combined view, read from the URL hash and written back.
// Pure functions, no DOM: tested by tests/web/explain.test.mjs.
//
// Keys (all optional; fallbacks are omitted from the hash):
//   mask=none|padding|window|drawn   the extra mask, combined with `causal` as PyTorch combines
//                                    is_causal with attn_mask / key_padding_mask
//   pad=k        key padding: the last k key tokens are ignored (0 <= k <= n)
//   window=w     sliding window: query i may attend to keys j with |i - j| <= w (0 <= w < n)
//   drawn=i.j,…  drawn mask: the cells (query i, key j) that may not attend
//   off=h,…      heads switched off (their output zeroed before out_proj)
//   combine=mean|max  the combined view of all heads shown in the explain section
import { parseInteger, quoteValue } from '../chrome/values.js';
import { keysToHash } from '../chrome/address_keys.js';

export const MASK_KINDS = Object.freeze(['none', 'padding', 'window', 'drawn']);
export const COMBINED_VIEWS = Object.freeze(['mean', 'max']);
/** The most drawn cells a hash may carry (64 tokens: 4096 cells). */
export const MAX_DRAWN_CELLS = 4096;

/** Sorted, de-duplicated copy of drawn cells [[i, j], …] (row-major order). */
export function normalizeCells(cells) {
  const seen = new Set();
  const out = [];
  for (const [i, j] of cells) {
    const key = `${i}.${j}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([i, j]);
  }
  return out.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** "0.1,2.3" → [[0, 1], [2, 3]]; null when any entry is not "i.j" with whole numbers. */
export function parseCells(raw) {
  const s = String(raw).trim();
  if (s === '') return [];
  const cells = [];
  for (const part of s.split(',')) {
    const m = /^(\d{1,4})\.(\d{1,4})$/.exec(part.trim());
    if (!m) return null;
    cells.push([Number(m[1]), Number(m[2])]);
  }
  return cells;
}

/** "0,2" → [0, 2] sorted and unique; null when an entry is not a whole number. */
export function parseHeadList(raw) {
  const s = String(raw).trim();
  if (s === '') return [];
  const heads = new Set();
  for (const part of s.split(',')) {
    const v = parseInteger(part);
    if (v === null) return null;
    heads.add(v);
  }
  return [...heads].sort((a, b) => a - b);
}

const rejected = (key, raw, why, fallback) => ({
  note: `${key}=${quoteValue(raw)} in the address ${why}; using ${fallback}.`,
});

/**
 * The explain views' settings, as the address keeps them.
 * @typedef {{mask: string, pad: number, window: number, drawn: number[][], off: number[],
 *   combine: string}} ExplainState
 */

/**
 * One address key: its fallback, how a raw value is read against the settings read so far, and
 * how a value is written (null: the fallback, not written).
 * @typedef {{fallback: unknown,
 *   parse: (raw: string, settings: {state: {num_heads: number}, tokens: string[]}) =>
 *     ({value: any} | {note: string}),
 *   serialize: (value: any) => string|null}} AddressKey
 */

/**
 * The explain keys, in the form of chrome/address_keys.js's VIEW_KEYS: each has
 *   fallback (the value when absent or invalid; never written to the hash),
 *   parse(raw, {state, tokens}) → {value} | {note} (checked against the settings read so far),
 *   serialize(value) → string, or null for the fallback.
 */
/** @type {Readonly<Record<keyof ExplainState, AddressKey>>} */
export const EXPLAIN_KEYS = Object.freeze({
  mask: Object.freeze({
    fallback: 'none',
    parse: (raw) =>
      MASK_KINDS.includes(raw)
        ? { value: raw }
        : rejected('mask', raw, `is not one of ${MASK_KINDS.join(', ')}`, 'no extra mask'),
    serialize: (v) => (v === 'none' ? null : v),
  }),
  pad: Object.freeze({
    fallback: 1,
    parse(raw, { tokens }) {
      const v = parseInteger(raw);
      return v !== null && v >= 0 && v <= tokens.length
        ? { value: v }
        : rejected(
            'pad',
            raw,
            `is not a whole number from 0 to n=${tokens.length} (the key tokens)`,
            'pad=1',
          );
    },
    serialize: (v) => (v === 1 ? null : String(v)),
  }),
  window: Object.freeze({
    fallback: 1,
    parse(raw, { tokens }) {
      const v = parseInteger(raw);
      const max = Math.max(tokens.length - 1, 0);
      return v !== null && v >= 0 && v <= max
        ? { value: v }
        : rejected(
            'window',
            raw,
            `is not a whole number from 0 to ${max} (n=${tokens.length} tokens)`,
            'window=1',
          );
    },
    serialize: (v) => (v === 1 ? null : String(v)),
  }),
  drawn: Object.freeze({
    fallback: Object.freeze([]),
    parse(raw, { tokens }) {
      const n = tokens.length;
      const cells = parseCells(raw);
      if (cells === null)
        return rejected(
          'drawn',
          raw,
          'is not a list of query.key cells such as 0.1,2.3',
          'no drawn cells',
        );
      if (cells.length > MAX_DRAWN_CELLS)
        return rejected('drawn', raw, `has more than ${MAX_DRAWN_CELLS} cells`, 'no drawn cells');
      const outside = cells.find(([i, j]) => i >= n || j >= n);
      if (outside) {
        return rejected(
          'drawn',
          raw,
          `names cell ${outside[0]}.${outside[1]}, outside the ${n} × ${n} grid`,
          'no drawn cells',
        );
      }
      return { value: normalizeCells(cells) };
    },
    serialize: (cells) => (cells.length ? cells.map(([i, j]) => `${i}.${j}`).join(',') : null),
  }),
  off: Object.freeze({
    fallback: Object.freeze([]),
    parse(raw, { state }) {
      const heads = parseHeadList(raw);
      if (heads === null)
        return rejected('off', raw, 'is not a list of head numbers such as 0,2', 'every head on');
      const outside = heads.find((x) => x < 0 || x >= state.num_heads);
      if (outside !== undefined) {
        return rejected(
          'off',
          raw,
          `names head ${outside}, outside 0..${state.num_heads - 1}`,
          'every head on',
        );
      }
      return { value: heads };
    },
    serialize: (heads) => (heads.length ? heads.join(',') : null),
  }),
  combine: Object.freeze({
    fallback: '',
    parse: (raw) =>
      COMBINED_VIEWS.includes(raw)
        ? { value: raw }
        : rejected(
            'combine',
            raw,
            `is not one of ${COMBINED_VIEWS.join(', ')}`,
            'no combined view',
          ),
    serialize: (v) => v || null,
  }),
});

/**
 * The largest valid value of each mask field for n tokens: every key may be padded (pad <= n), a
 * window reaches at most n - 1 positions each way. readMaskControls checks against them and the
 * page's number fields take them as their max attribute.
 * @returns {{pad: number, window: number}}
 */
export function maskLimits(n) {
  return { pad: n, window: Math.max(n - 1, 0) };
}

/**
 * Reads the mask controls' raw strings (the select and two number inputs) for n tokens.
 * @returns {{ok: true, value: {mask, pad, window}} | {ok: false, message: string, key: string}}
 */
export function readMaskControls(raw, n) {
  const mask = String(raw.mask ?? 'none');
  if (!MASK_KINDS.includes(mask))
    return { ok: false, key: 'mask', message: `mask=${quoteValue(mask)} is not a mask kind` };
  const value = { mask, pad: 1, window: 1 };
  for (const key of ['pad', 'window']) {
    const s = String(raw[key] ?? '').trim();
    const v = parseInteger(s);
    const max = maskLimits(n)[key];
    if (v === null || v < 0 || v > max) {
      // Only the field the chosen mask uses is an error; the other keeps its default.
      if (mask === (key === 'pad' ? 'padding' : 'window')) {
        const what = key === 'pad' ? 'padded key tokens' : 'window half-width';
        return {
          ok: false,
          key,
          message: `${key}=${quoteValue(s)} is not a whole number from 0 to ${max} (${what}, n=${n})`,
        };
      }
      continue;
    }
    value[key] = v;
  }
  return { ok: true, value };
}

/**
 * Every explain key at its fallback.
 * @returns {ExplainState}
 */
export function defaultExplain() {
  return /** @type {ExplainState} */ (
    Object.fromEntries(Object.entries(EXPLAIN_KEYS).map(([k, spec]) => [k, spec.fallback]))
  );
}

/**
 * The explain keys of a hash, checked against the settings the rest of the hash settled on
 * (`state` from modes/random/random_state.js parseHash, `tokens` its tokens).
 * @returns {{value: ExplainState, notes: string[]}}
 */
export function parseExplainHash(hash, state, tokens) {
  let params;
  try {
    params = new URLSearchParams(String(hash ?? '').replace(/^#/, ''));
  } catch {
    params = new URLSearchParams();
  }
  const value = defaultExplain();
  const notes = [];
  for (const [key, spec] of Object.entries(EXPLAIN_KEYS)) {
    if (!params.has(key)) continue;
    const r = spec.parse(params.get(key), { state, tokens });
    if ('value' in r) value[key] = r.value;
    else notes.push(r.note);
  }
  return { value, notes };
}

/** "&mask=window&window=2": the explain keys that differ from their fallback, or "". */
export function explainToHash(value) {
  return keysToHash(EXPLAIN_KEYS, value);
}

/** `value` with drawn cells and switched-off heads that no longer exist (fewer tokens or heads) dropped. */
export function fitExplain(value, n, numHeads) {
  return {
    ...value,
    pad: Math.min(value.pad, n),
    window: Math.min(value.window, Math.max(n - 1, 0)),
    drawn: value.drawn.filter(([i, j]) => i < n && j < n),
    off: value.off.filter((x) => x < numHeads),
  };
}
