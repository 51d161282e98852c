// The random-embeddings mode's settings: defaults, presets, reading them from the controls and
// from the URL hash, and writing them back to the hash. Pure functions, no DOM: tested by
// tests/web/state.test.mjs.
//
// State: { text: string, d_model: int, num_heads: int, seed: uint32, causal: bool, positional: bool }
// The wasm module is the authority on which (d_model, num_heads) pairs are valid; the checks here
// are only those the module cannot see (empty or non-integer input, this page's display limits).
import { tokenizeChecked, MAX_TOKENS } from '../../chrome/tokenize.js';
import { addressNotes, parseView, viewToHash } from '../../chrome/address_keys.js';
import { hashParams, parseBoolean, parseInteger, quoteValue } from '../../chrome/values.js';
import { EXPLAIN_KEYS } from '../../explain/explain_state.js';

export const SEED_MAX = 4294967295; // 2^32 - 1: numpy's legacy np.random.seed range

/**
 * Display limits of this page (the module's own limits may be larger): 2048 tokens (grids beyond
 * 64 tokens are compact, lod.js), d_model up to 1024 and 16 heads (large views are
 * computed in a worker when served, compute/compute.js).
 */
export const PAGE_LIMITS = Object.freeze({ maxTokens: MAX_TOKENS, maxDModel: 1024, maxHeads: 16 });

/**
 * The random-embeddings mode's settings.
 * @typedef {{text: string, d_model: number, num_heads: number, seed: number, causal: boolean,
 *   positional: boolean}} RandomState
 */

export const PRESETS = Object.freeze({
  'module-08': Object.freeze({
    label: 'Module 08 experiment',
    state: Object.freeze({
      text: 'Heads look at different things',
      d_model: 8,
      num_heads: 2,
      seed: 7,
      causal: false,
      positional: false,
    }),
  }),
  'causal-positions': Object.freeze({
    label: 'Causal, positions, 4 heads',
    state: Object.freeze({
      text: 'The animal didn’t cross the street because it was too tired.',
      d_model: 16,
      num_heads: 4,
      seed: 0,
      causal: true,
      positional: true,
    }),
  }),
});

export const DEFAULT_PRESET = 'module-08';
export const DEFAULTS = PRESETS[DEFAULT_PRESET].state;

const KEYS = Object.freeze(['text', 'd_model', 'num_heads', 'seed', 'causal', 'positional']);
/** The keys this mode reads: its settings, a preset's name and the explain panels' keys. */
export const RANDOM_HASH_KEYS = Object.freeze(['preset', ...KEYS, ...Object.keys(EXPLAIN_KEYS)]);
const MAX_TEXT_CHARS = 20000; // 2048 tokens of a few characters each

/** The largest divisor of d that is <= cap (at least 1). */
export function largestDivisorAtMost(d, cap) {
  for (let h = Math.min(d, cap); h > 1; h--) if (d % h === 0) return h;
  return 1;
}

/**
 * Reads the raw strings of the form controls.
 * Checks only what the module cannot: empty and non-integer numbers, the seed range,
 * the token count. Zero, negative and non-dividing head counts go to the module, whose
 * message the page shows.
 * @param {{text: string, d_model: string, num_heads: string, seed: string, causal: boolean,
 *          positional: boolean}} raw
 * @returns {{ok: true, state: object, tokens: string[]} | {ok: false, message: string}}
 */
export function readControls(raw, limits = PAGE_LIMITS) {
  const ints = {};
  for (const key of ['d_model', 'num_heads', 'seed']) {
    const s = String(raw[key] ?? '').trim();
    if (s === '') return { ok: false, message: `${key} is empty: enter a whole number.` };
    const v = parseInteger(s);
    if (v === null) return { ok: false, message: `${key}=${quoteValue(s)} is not a whole number.` };
    ints[key] = v;
  }
  if (ints.seed < 0 || ints.seed > SEED_MAX) {
    return {
      ok: false,
      message: `seed=${ints.seed} is outside 0..${SEED_MAX} (numpy's seed range).`,
    };
  }
  const tok = tokenizeChecked(String(raw.text ?? ''), limits.maxTokens);
  if (tok.ok === false) return { ok: false, message: tok.message };
  const state = {
    text: String(raw.text),
    d_model: ints.d_model,
    num_heads: ints.num_heads,
    seed: ints.seed,
    causal: Boolean(raw.causal),
    positional: Boolean(raw.positional),
  };
  return { ok: true, state, tokens: tok.tokens };
}

/**
 * This page's display limits, checked after the module has accepted (d_model, num_heads).
 * @returns {string|null} a message, or null when the state can be drawn.
 */
export function checkPageLimits(state, limits = PAGE_LIMITS) {
  if (state.d_model > limits.maxDModel) {
    return `d_model=${state.d_model} is larger than this page draws (${limits.maxDModel} at most).`;
  }
  if (state.num_heads > limits.maxHeads) {
    return (
      `num_heads=${state.num_heads} is more heads than this page draws ` +
      `(${limits.maxHeads} grids at most); choose fewer heads.`
    );
  }
  return null;
}

/**
 * Settings from a URL hash such as "#preset=module-08" or
 * "#text=Heads+look&d_model=8&num_heads=2&seed=7&causal=0&positional=1".
 * Never fails: each unknown or invalid value falls back to the preset or the default,
 * with a note saying so. Values are only validated here; they are displayed as text.
 * @param {object} [options]
 * @param {Iterable<string>} [options.modeKeys] the keys the page's modes read (main.js hands them
 *   all: ctx.addressKeys), which are not unknown here either
 * @param {object} [options.limits] the page's display limits
 * @returns {{state: object, notes: string[], preset: string|null, view: object}}
 */
export function parseHash(hash, { modeKeys = [], limits = PAGE_LIMITS } = {}) {
  const notes = [];
  const params = hashParams(hash);
  let base = DEFAULTS;
  let preset = null;
  if (params.has('preset')) {
    const name = params.get('preset');
    if (Object.hasOwn(PRESETS, name)) {
      base = PRESETS[name].state;
      preset = name;
    } else {
      notes.push(`Unknown preset "${quoteValue(name)}" in the address; showing the default.`);
    }
  }
  notes.push(...addressNotes(hash, [...RANDOM_HASH_KEYS, ...modeKeys]));
  /** @type {RandomState} */
  const state = { ...base };
  const fallback = (key, raw, why) => {
    notes.push(`${key}=${quoteValue(raw)} in the address ${why}; using ${key}=${state[key]}.`);
  };

  if (params.has('text')) {
    const raw = params.get('text');
    const tok = raw.length > MAX_TEXT_CHARS ? null : tokenizeChecked(raw, limits.maxTokens);
    if (tok?.ok) state.text = raw;
    else {
      const why =
        tok?.ok === false
          ? `The text in the address cannot be shown: ${tok.message}`
          : `The text in the address has ${raw.length} characters (at most ${MAX_TEXT_CHARS}).`;
      notes.push(`${why} Using "${state.text}".`);
    }
  }
  if (params.has('d_model')) {
    const raw = params.get('d_model');
    const v = parseInteger(raw);
    if (v !== null && v >= 1 && v <= limits.maxDModel) state.d_model = v;
    else fallback('d_model', raw, `is not a whole number from 1 to ${limits.maxDModel}`);
  }
  if (params.has('num_heads')) {
    const raw = params.get('num_heads');
    const v = parseInteger(raw);
    if (v !== null && v >= 1 && v <= limits.maxHeads && state.d_model % v === 0)
      state.num_heads = v;
    else {
      if (state.d_model % state.num_heads !== 0) {
        state.num_heads = largestDivisorAtMost(state.d_model, state.num_heads);
      }
      const why =
        v === null || v < 1
          ? `is not a whole number from 1 to ${limits.maxHeads}`
          : v > limits.maxHeads
            ? `is more than ${limits.maxHeads}, the most heads the page draws`
            : `does not divide d_model=${state.d_model}`;
      fallback('num_heads', raw, why);
    }
  }
  if (state.d_model % state.num_heads !== 0) {
    // d_model came from the address and the preset's head count does not divide it.
    const h = largestDivisorAtMost(state.d_model, state.num_heads);
    notes.push(
      `num_heads=${state.num_heads} does not divide d_model=${state.d_model}; using num_heads=${h}.`,
    );
    state.num_heads = h;
  }
  if (params.has('seed')) {
    const raw = params.get('seed');
    const v = parseInteger(raw);
    if (v !== null && v >= 0 && v <= SEED_MAX) state.seed = v;
    else fallback('seed', raw, `is not a whole number from 0 to ${SEED_MAX}`);
  }
  for (const key of ['causal', 'positional']) {
    if (params.has(key)) {
      const raw = params.get(key);
      const v = parseBoolean(raw);
      if (v !== null) state[key] = v;
      else fallback(key, raw, 'is not 1/0 or true/false');
    }
  }
  if (preset && KEYS.some((k) => params.has(k)) && presetOf(state) !== preset) preset = null;
  const parsedView = parseView(hash, state);
  return { state, notes: [...notes, ...parsedView.notes], preset, view: parsedView.view };
}

/** The name of the preset equal to `state`, or null. */
export function presetOf(state) {
  for (const [name, p] of Object.entries(PRESETS)) {
    if (KEYS.every((k) => p.state[k] === state[k])) return name;
  }
  return null;
}

/** The hash (without "#") that parseHash reads back as `state` and `view` (chrome/address_keys.js VIEW_KEYS). */
export function stateToHash(state, view = {}) {
  const name = presetOf(state);
  const p = new URLSearchParams();
  if (name) p.set('preset', name);
  else {
    p.set('text', state.text);
    p.set('d_model', String(state.d_model));
    p.set('num_heads', String(state.num_heads));
    p.set('seed', String(state.seed));
    p.set('causal', state.causal ? '1' : '0');
    p.set('positional', state.positional ? '1' : '0');
  }
  return p.toString() + viewToHash(view);
}
