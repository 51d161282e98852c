// <mha-attention>'s attributes → the settings it shows, or a message naming the bad value.
// Pure functions, no DOM: tested by tests/web/element_attributes.test.mjs; used by element.js.
import { parseBoolean, parseInteger, quoteValue } from '../chrome/values.js';
import { PRESETS, checkPageLimits, readControls } from '../modes/random/random_state.js';
import { KIND_IDS } from '../modes/date/date_view.js';
import { DATE_DEFAULTS } from '../modes/date/date_state.js';
import { ENGLISH_DEFAULTS } from '../modes/english/english_state.js';
import { CELL_SIZE_RANGE } from './columns.js';

/** The preset that shows the trained date translator instead of module 08's experiment. */
export const DATE_PRESET = 'date-translator';
/** The preset that shows the trained English language model (the page's English mode). */
export const ENGLISH_PRESET = 'english';
/** The presets of trained models, after the page's presets in messages. */
const MODEL_PRESETS = Object.freeze([DATE_PRESET, ENGLISH_PRESET]);

/** Every attribute the element reads (observedAttributes: a change re-renders). */
export const ATTRIBUTES = Object.freeze([
  'tokens',
  'text',
  'd-model',
  'num-heads',
  'seed',
  'causal',
  'positional',
  'preset',
  'heads',
  'cell',
  'kind',
  'layer',
  'label',
  'theme',
  'layout',
  'cell-size',
  'experiment',
]);

/** experiment (with preset="english"): one of the English mode's experiments on the heads, alone. */
export const EXPERIMENTS = Object.freeze(['prune', 'date', 'sweep', 'replay']);

/** theme: the element's colours; "auto" follows the reader's prefers-color-scheme. */
export const THEMES = Object.freeze(['auto', 'light', 'dark']);
/** layout: "grid" puts the heads side by side (as many as fit), "stack" one per row. */
export const LAYOUTS = Object.freeze(['grid', 'stack']);

/** `name="value"` as a message quotes it. */
export const attr = (name, value) => `${name}="${quoteValue(value)}"`;

/**
 * The element's settings from its attributes (pure; exported for tests).
 * @param {(name: string) => string|null} get the attribute getter
 * @returns {{ok: true, kind: 'random', state: object, tokens: string[], heads: number[]|null,
 *            cell: object|null, preset: string|null, display}
 *         | {ok: true, kind: 'date', text: string, attention: string, layer: number|null, heads, cell, display}
 *         | {ok: true, kind: 'english', text: string, layer: number|null, heads, cell, experiment: string|null, display}
 *         | {ok: false, message: string}}  display: see readDisplay
 */
export function readAttributes(get) {
  const display = readDisplay(get);
  if (display.ok === false) return display;
  const read = readView(get);
  if (read.ok === false) return read;
  return { ...read, display: display.display };
}

/**
 * How the element is drawn, from theme, layout and cell-size (pure; exported for tests).
 * @returns {{ok: true, display: {theme: 'auto'|'light'|'dark', layout: 'grid'|'stack', cellSize: number|null}}
 *         | {ok: false, message: string}}
 */
export function readDisplay(get) {
  const theme = get('theme') ?? 'auto';
  if (!THEMES.includes(theme))
    return { ok: false, message: `${attr('theme', theme)} is not one of ${THEMES.join(', ')}.` };
  const layout = get('layout') ?? 'grid';
  if (!LAYOUTS.includes(layout))
    return { ok: false, message: `${attr('layout', layout)} is not one of ${LAYOUTS.join(', ')}.` };
  let cellSize = null;
  const raw = get('cell-size');
  if (raw !== null) {
    cellSize = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
    const { min, max } = CELL_SIZE_RANGE;
    if (!(cellSize >= min && cellSize <= max)) {
      return {
        ok: false,
        message: `${attr('cell-size', raw)} is not a whole number of CSS pixels from ${min} to ${max}.`,
      };
    }
  }
  return { ok: true, display: { theme, layout, cellSize } };
}

/**
 * The view's settings (everything but the display attributes).
 * @param {(name: string) => string|null} get the attribute getter
 * @returns {{ok: true, kind: 'random', state: object, tokens: string[], heads: number[]|null,
 *            cell: object|null, preset: string|null}
 *         | {ok: true, kind: 'date', text: string, attention: string, layer: number|null,
 *            heads: number[]|null, cell: object|null}
 *         | {ok: true, kind: 'english', text: string, layer: number|null, heads: number[]|null,
 *            cell: object|null, experiment: string|null}
 *         | {ok: false, message: string}}
 */
function readView(get) {
  const preset = get('preset');
  const has = (n) => get(n) !== null;
  let base = PRESETS['module-08'].state;
  if (preset !== null && !MODEL_PRESETS.includes(preset)) {
    if (!Object.hasOwn(PRESETS, preset)) {
      return {
        ok: false,
        message: `${attr('preset', preset)} is not one of ${[...Object.keys(PRESETS), ...MODEL_PRESETS].join(', ')}.`,
      };
    }
    base = PRESETS[preset].state;
  }
  const text = has('tokens') ? get('tokens') : has('text') ? get('text') : null;
  const heads = parseList(get('heads'));
  if (heads === false)
    return {
      ok: false,
      message: `${attr('heads', get('heads'))} is not a list of head numbers such as "0,2".`,
    };
  const cell = parseCellAttribute(get('cell'));
  if (cell === false)
    return {
      ok: false,
      message: `${attr('cell', get('cell'))} is not head.query.key such as "0.0.2".`,
    };

  const experiment = get('experiment');
  if (experiment !== null) {
    if (preset !== ENGLISH_PRESET)
      return {
        ok: false,
        message: `${attr('experiment', experiment)} needs preset="${ENGLISH_PRESET}" (the experiments are on its heads).`,
      };
    if (!EXPERIMENTS.includes(experiment))
      return {
        ok: false,
        message: `${attr('experiment', experiment)} is not one of ${EXPERIMENTS.join(', ')}.`,
      };
  }

  let layer = null;
  if (MODEL_PRESETS.includes(preset) && has('layer')) {
    layer = parseInteger(get('layer'));
    if (layer === null || layer < 0)
      return {
        ok: false,
        message: `${attr('layer', get('layer'))} is not a layer number (0, 1, …).`,
      };
  }
  if (preset === DATE_PRESET) {
    const attention = has('kind') ? get('kind') : 'cross';
    if (!KIND_IDS.includes(attention)) {
      return {
        ok: false,
        message: `${attr('kind', attention)} is not one of ${KIND_IDS.join(', ')}.`,
      };
    }
    return {
      ok: true,
      kind: 'date',
      text: text ?? DATE_DEFAULTS.date,
      attention,
      layer,
      heads,
      cell,
    };
  }
  // The English model reads any text (the model cuts what is beyond its context, and says so).
  if (preset === ENGLISH_PRESET)
    return {
      ok: true,
      kind: 'english',
      text: text ?? ENGLISH_DEFAULTS.text,
      layer,
      heads,
      cell,
      experiment,
    };

  const bool = (name, fallback) => {
    if (!has(name)) return { value: fallback };
    const raw = get(name);
    if (raw.trim() === '') return { value: true };
    const v = parseBoolean(raw);
    return v === null
      ? { message: `${attr(name, raw)} is not true or false (or the attribute alone).` }
      : { value: v };
  };
  const causal = bool('causal', base.causal);
  if (causal.message) return { ok: false, message: causal.message };
  const positional = bool('positional', base.positional);
  if (positional.message) return { ok: false, message: positional.message };
  const read = readControls({
    text: text ?? base.text,
    d_model: has('d-model') ? get('d-model') : String(base.d_model),
    num_heads: has('num-heads') ? get('num-heads') : String(base.num_heads),
    seed: has('seed') ? get('seed') : String(base.seed),
    causal: causal.value,
    positional: positional.value,
  });
  if (read.ok === false) return { ok: false, message: attributeNames(read.message) };
  const limit = checkPageLimits(read.state);
  if (limit) return { ok: false, message: attributeNames(limit) };
  const same =
    preset !== null &&
    ['tokens', 'text', 'd-model', 'num-heads', 'seed', 'causal', 'positional'].every(
      (n) => !has(n),
    );
  return {
    ok: true,
    kind: 'random',
    state: read.state,
    tokens: read.tokens,
    heads,
    cell,
    preset: same ? preset : null,
  };
}

/** "d_model=abc …" → "d_model=abc … (attribute d-model)": the page's messages, with attribute names. */
export function attributeNames(message) {
  const named = { d_model: 'd-model', num_heads: 'num-heads', seed: 'seed' };
  const hits = Object.keys(named)
    .filter((k) => message.includes(`${k}=`) || message.startsWith(`${k} `))
    .map((k) => named[k]);
  if (hits.length) return `${message} (attribute${hits.length > 1 ? 's' : ''} ${hits.join(', ')})`;
  return /sentence|tokens/i.test(message) ? `${message} (attribute tokens)` : message;
}

/** "0,2" → [0, 2]; null when absent; false when invalid. */
function parseList(raw) {
  if (raw === null) return null;
  const parts = raw.split(/[\s,]+/).filter(Boolean);
  if (!parts.length) return false;
  const out = [];
  for (const p of parts) {
    const v = parseInteger(p);
    if (v === null || v < 0) return false;
    if (!out.includes(v)) out.push(v);
  }
  return out;
}

/** "0.0.2" → {head, row, col}; null when absent; false when invalid. */
function parseCellAttribute(raw) {
  if (raw === null) return null;
  const m = /^\s*(\d{1,2})\.(\d{1,3})\.(\d{1,3})\s*$/.exec(raw);
  return m ? { head: Number(m[1]), row: Number(m[2]), col: Number(m[3]) } : false;
}
