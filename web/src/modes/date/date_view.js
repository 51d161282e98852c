// The Date translator mode's pure helpers (no DOM): which labels go on which axis, where one
// head's matrix is in the model's result, the heads' measured roles, the bundled model's bytes.
// Tested by tests/web/date_view.test.mjs.
//
// A result of model.translate(text) (docs/js-api.md, mod.DateModel) holds, per layer, one
// Float32Array of h stacked (n, m) matrices, head i at offset i*n*m:
//   encoder_self[l]  (h, S, S)  S = input characters
//   decoder_self[l]  (h, T, T)  T = decoder steps; causal
//   cross[l]         (h, T, S)
// Decoder query t is the position whose output is output_tokens[t] (it reads <bos> and the
// characters written before it), so decoder rows are labelled with output_tokens. T is one more
// than the characters written: the last step wrote <eos>, or its prediction was dropped because
// max_target_len characters were already written (that row is labelled CUT).

import { KIND_IDS } from './date_state.js';

/** The three kinds of attention, in the order the page lists them. */
export const KINDS = Object.freeze([
  Object.freeze({
    id: KIND_IDS[0],
    label: 'Encoder self-attention',
    short: 'Encoder self',
    rows: 'input character (query)',
    cols: 'input characters it reads (keys)',
  }),
  Object.freeze({
    id: KIND_IDS[1],
    label: 'Decoder self-attention (causal)',
    short: 'Decoder self',
    rows: 'output character being written (query)',
    cols: 'what the decoder has read so far: <bos>, then its own earlier output (keys)',
  }),
  Object.freeze({
    id: KIND_IDS[2],
    label: 'Cross-attention',
    short: 'Cross',
    rows: 'output character being written (query)',
    cols: 'input characters (keys)',
  }),
]);

/** The kinds' ids, in the order of KINDS (the address's kind=…: date_state.js). */
export { KIND_IDS };

/** @returns {object|undefined} the KINDS entry of `id` */
export function kindInfo(id) {
  return KINDS.find((k) => k.id === id);
}

/** The label of the decoder's first input position. */
export const BOS = '<bos>';
export const EOS = '<eos>';
/** The row of a final step whose prediction was dropped (max_target_len characters written). */
export const CUT = '(cut)';

/** T, the decoder steps: result.steps, or read off the decoder's weights. */
export function decoderSteps(result) {
  if (Number.isInteger(result.steps)) return result.steps;
  const w = result.decoder_self?.[0];
  if (w && result.num_heads > 0) return Math.round(Math.sqrt(w.length / result.num_heads));
  return result.output_tokens.length;
}

/**
 * One character as an axis label and table header: a space is "␣", a tab "⇥", a line break
 * "↵", any other invisible character its code point ("U+200B"). Longer tokens ("<eos>") stay.
 */
export function displayToken(token) {
  const s = String(token);
  if (s === ' ') return '\u2423';
  if (s === '\t') return '\u21E5';
  if (s === '\n' || s === '\r' || s === '\r\n') return '\u21B5';
  if (Array.from(s).length === 1 && /^[\p{Cc}\p{Cf}\p{Z}\p{Co}\p{Cn}]$/u.test(s)) {
    return `U+${s.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return s;
}

/** Characters as the model counts them (code points: an emoji is one, not two). */
export function sourceLength(text) {
  return Array.from(String(text)).length;
}

/** The message for an input the model cannot read (longer than max_source_len). */
export function tooLongMessage(length, max) {
  return (
    `This input has ${length} characters; the model reads at most ${max} ` +
    `(its max_source_len). Shorten it to see a translation.`
  );
}

/** How many layers of `kind` the result has. */
export function layerCount(result, kind) {
  return kind === 'encoder_self' ? result.num_encoder_layers : result.num_decoder_layers;
}

/**
 * Row (query) and column (key) labels of `kind`'s grids, display-ready (see displayToken).
 * @returns {{rows: string[], cols: string[]}}
 */
export function axisTokens(result, kind) {
  const src = result.source_tokens.map(displayToken);
  if (kind === 'encoder_self') return { rows: src, cols: src };
  const T = decoderSteps(result);
  const written = result.output_tokens.filter((t) => t !== EOS).map(displayToken);
  const out = result.output_tokens.map(displayToken);
  const rows = Array.from({ length: T }, (_, t) => (t < out.length ? out[t] : CUT));
  switch (kind) {
    case 'decoder_self':
      return { rows, cols: [BOS, ...written].slice(0, T) };
    case 'cross':
      return { rows, cols: src };
    default:
      throw new Error(`unknown attention kind "${kind}"`);
  }
}

/**
 * Layer `layer` of `kind` as a result for HeadHeatmap and headTable:
 * {n, m, num_heads, attn_weights (h*n*m), fully_masked_rows (h*n, all 0), rows, cols}.
 * Throws when the arrays do not have the sizes their labels imply.
 */
export function layerView(result, kind, layer) {
  const { rows, cols } = axisTokens(result, kind);
  const layers = result[kind];
  if (!Array.isArray(layers) || layer < 0 || layer >= layers.length) {
    throw new Error(`the result has no ${kind} layer ${layer}`);
  }
  const h = result.num_heads;
  const n = rows.length;
  const m = cols.length;
  const w = layers[layer];
  if (!w || w.length !== h * n * m) {
    throw new Error(
      `${kind} layer ${layer} has ${w ? w.length : 0} weights, expected ${h}*${n}*${m}`,
    );
  }
  return {
    n,
    m,
    num_heads: h,
    attn_weights: w,
    fully_masked_rows: new Uint8Array(h * n),
    rows,
    cols,
  };
}

/** Every (kind, layer) of the model in display order: encoder layers, then per decoder layer. */
export function allPanels(result) {
  const panels = [];
  for (const { id } of KINDS) {
    for (let l = 0; l < layerCount(result, id); l++) panels.push({ kind: id, layer: l });
  }
  return panels;
}

/** Pixel size of one cell of a small-multiple grid: the larger side near 64 px, 2 to 6 px a cell. */
export function thumbCell(n, m) {
  return Math.max(2, Math.min(6, Math.floor(64 / Math.max(1, n, m))));
}

export function headKey(kind, layer, head) {
  return `${kind}/${layer}/${head}`;
}

/** "cross", "cross_attention", "decoder_cross", "encoder-self", "enc_self_attn"... → a KINDS id. */
function normalizeKind(kind) {
  const s = String(kind ?? '').toLowerCase();
  if (s.includes('cross') || s.includes('multihead_attn')) return 'cross';
  if (s.startsWith('enc')) return 'encoder_self';
  if (s.startsWith('dec')) return 'decoder_self';
  return null;
}

/** A fraction (0.91) or a percentage (91) → "91%" / "97.5%" (at most `digits` decimals). */
export function formatPercent(v, digits = 1) {
  const x = Number(v);
  if (!Number.isFinite(x)) return null;
  const pct = Math.abs(x) <= 1 ? x * 100 : x;
  const s = pct.toFixed(digits);
  return `${s.includes('.') ? s.replace(/\.?0+$/, '') : s}%`;
}

function firstField(obj, names) {
  for (const k of names) {
    if (obj && obj[k] !== undefined && obj[k] !== null) return obj[k];
  }
  return undefined;
}

/** A whole number of points or a fraction as its shortest 2-decimal text: 0.857391 → "0.86". */
const twoDecimals = (x) => Number(x).toFixed(2);

/**
 * Module 03's claims as date-eval measured them (json.claims), by the head each names (headKey):
 * {number, claim: "a content head that copies the year", holds, brief: the statement up to its
 * "Measured:" part, without the head's name, e.g. "Claim 2, a content head that copies the year:
 * true (year tracking 1.00, the claim needs at least 0.5)"}. Claims without a readable head are left out.
 */
export function claimsByHead(json) {
  const out = new Map();
  const claims =
    json && typeof json === 'object' && !Array.isArray(json) && Array.isArray(json.claims)
      ? json.claims
      : [];
  claims.forEach((c, i) => {
    const kind = normalizeKind(c?.kind);
    const layer = Number(c?.layer);
    const head = Number(c?.index);
    if (
      !kind ||
      !Number.isInteger(layer) ||
      !Number.isInteger(head) ||
      typeof c.claim !== 'string' ||
      typeof c.holds !== 'boolean'
    )
      return;
    const statement = typeof c.statement === 'string' ? c.statement.split(' Measured:')[0] : '';
    const brief =
      statement.replace(/\(([a-z_]+ layer \d+ head \d+): /, '(').replace(/\.$/, '') ||
      `Claim ${i + 1}, ${c.claim}: ${c.holds}`;
    out.set(headKey(kind, layer, head), { number: i + 1, claim: c.claim, holds: c.holds, brief });
  });
  return out;
}

/**
 * The caption of a cross-attention head that date-eval measured with field shares and tracking:
 * what sets it apart from the layer's other cross heads, in the file's numbers. The name: the
 * claim that holds on it ("the content head that copies the year (claim 2)"), else the field its
 * rows read most exclusively ("strongest on the month: 89%"); then its tracking over the three
 * fields and the exact match without it, with "the layer's most needed" / "least needed" for the
 * cross heads of its layer whose switching off costs most / least. Null when the entry lacks
 * the figures.
 */
function crossCaption(e, claim, layerDrops) {
  const track = Number(e.tracking?.all);
  const shares = [
    ['year', e.year_share],
    ['month', e.month_share],
    ['day', e.day_share],
  ].filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
  if (!Number.isFinite(track) || !shares.length) return null;
  let name;
  if (claim?.holds) name = `${claim.claim.replace(/^an? /, 'the ')} (claim ${claim.number})`;
  else {
    const [field, share] = shares.reduce((a, b) => (b[1] > a[1] ? b : a));
    name = `strongest on the ${field}: ${formatPercent(share, 0)} of the ${field} rows`;
  }
  const parts = [name, `tracking over the three fields ${twoDecimals(track)}`];
  const acc = e.ablated_accuracy;
  if (typeof acc === 'number') {
    const drop = Number(e.accuracy_drop);
    let rank = '';
    if (Number.isFinite(drop) && layerDrops.length > 1) {
      if (drop === Math.max(...layerDrops)) rank = ', the layer\u2019s most needed';
      else if (drop === Math.min(...layerDrops)) rank = ', the layer\u2019s least needed';
    }
    parts.push(`${formatPercent(acc, 2)} exact match without it${rank}`);
  }
  return parts.join(' · ');
}

/**
 * The heads' measured roles (web/date_model_heads.json, written by the C++ side) as a Map from
 * headKey to {role: string|null, ablated: string|null, type?, prunable?, label?, claim?}. Accepts
 * an array of entries or an object with a `heads` array; an entry names kind, layer, head, a role
 * label and the exact-match accuracy with that head ablated. Anything unreadable is skipped: roles
 * are extra information.
 *
 * `role` is the caption's bold line. For a cross head with field shares and tracking it tells the
 * head from its layer's others (crossCaption: the layer-1 cross heads all "read the field being
 * written"), and date-eval's label moves to `label`; a head that a holding claim names starts
 * with the claim ("the mostly redundant head that could be pruned (claim 3) · looks at the year:
 * 31%"). `claim`: the brief statement of a claim that names the head (claimsByHead), true or false.
 */
export function readRoles(json) {
  const roles = new Map();
  const list = Array.isArray(json?.heads) ? json.heads : [];
  const baseline = json?.accuracy ?? undefined;
  const claims = claimsByHead(json);
  const drops = (kind, layer) =>
    list
      .filter((x) => x && normalizeKind(x.kind) === kind && Number(x.layer) === layer)
      .map((x) => Number(x.accuracy_drop))
      .filter(Number.isFinite);
  for (const e of list) {
    if (!e || typeof e !== 'object') continue;
    const kind = normalizeKind(e.kind);
    const layer = Number(e.layer);
    const head = Number(e.head);
    if (!kind || !Number.isInteger(layer) || !Number.isInteger(head)) continue;
    const role = e.label;
    const ablatedRaw = e.ablated_accuracy;
    // Accuracies with 2 decimals: switching off one head often moves them by a tenth of a percent.
    const ablated = typeof ablatedRaw !== 'number' ? null : formatPercent(ablatedRaw, 2);
    const base = baseline === undefined ? null : formatPercent(baseline, 2);
    const entry = {
      role: typeof role === 'string' && role.trim() ? role.trim() : null,
      ablated: ablated
        ? `without this head: ${ablated} exact match${base ? ` (with all: ${base})` : ''}`
        : null,
    };
    // The type (cross heads) and the prunable mark are worded by the C++ side (date-eval).
    if (typeof e.type_label === 'string' && e.type_label) entry.type = e.type_label;
    const least = json?.checks?.least_useful_head;
    if (
      least?.prunable === true &&
      typeof least.prunable_label === 'string' &&
      normalizeKind(least.kind) === kind &&
      Number(least.layer) === layer &&
      Number(least.index) === head
    ) {
      entry.prunable = least.prunable_label;
    }
    const claim = claims.get(headKey(kind, layer, head));
    const caption = kind === 'cross' ? crossCaption(e, claim, drops(kind, layer)) : null;
    if (caption) {
      if (entry.role) entry.label = entry.role;
      entry.role = caption;
    } else if (claim?.holds && entry.role) {
      entry.role = `${claim.claim.replace(/^an? /, 'the ')} (claim ${claim.number}) · ${entry.role}`;
    }
    if (claim) entry.claim = claim.brief;
    roles.set(headKey(kind, layer, head), entry);
  }
  return roles;
}

/**
 * The page's findings: module 03's three claims as date-eval measured and worded them
 * (json.claims[].statement, e.g. "Claim 2, a content head that copies the year: true (...).
 * Measured: ..."). [] when absent.
 */
export function roleFindings(json) {
  const claims = json && typeof json === 'object' && !Array.isArray(json) ? json.claims : null;
  return Array.isArray(claims)
    ? claims.map((c) => c?.statement).filter((t) => typeof t === 'string' && t)
    : [];
}

/**
 * The claims briefly: each statement up to its "Measured:" part, e.g. "Claim 2, a content head
 * that copies the year: true (cross layer 1 head 2: year tracking 1.00, the claim needs at least 0.5)." [] when
 * absent.
 */
export function briefFindings(json) {
  return roleFindings(json).map((t) => t.split(' Measured:')[0]);
}

/** The head named by json.checks[name] ({kind, layer, index}) as {kind, layer, head}, or null. */
export function checkedHead(json, name) {
  const c = json && typeof json === 'object' && !Array.isArray(json) ? json.checks?.[name] : null;
  const kind = c ? normalizeKind(c.kind) : null;
  const layer = Number(c?.layer);
  const head = Number(c?.index ?? c?.head_index);
  return kind && Number.isInteger(layer) && Number.isInteger(head) ? { kind, layer, head } : null;
}

/**
 * The safetensors header's __metadata__ (strings), or null when the bytes are not safetensors.
 * Only for display (the training figures); the module does the real loading and checking.
 */
export function safetensorsMetadata(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n < 2 || 8 + n > bytes.length) return null;
  try {
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    const meta = header?.__metadata__;
    return meta && typeof meta === 'object' ? meta : null;
  } catch {
    return null;
  }
}

/** A JSON string from the metadata as an object, or null. */
export function metadataJson(meta, key) {
  try {
    const v = JSON.parse(meta?.[key]);
    return v && typeof v === 'object' ? v : null;
  } catch {
    return null;
  }
}

/** One line about the model: its shape, size and training figures (those present). */
export function modelSummary(config, byteLength, training) {
  const parts = [];
  if (config) {
    parts.push(
      `d_model ${config.d_model}, ${config.num_heads} heads, ` +
        `${config.num_encoder_layers} encoder + ${config.num_decoder_layers} decoder layers`,
    );
    if (config.max_source_len) parts.push(`reads at most ${config.max_source_len} characters`);
  }
  if (byteLength) parts.push(`${Math.round(byteLength / 1024)} KB of fp16 weights`);
  if (training) {
    const acc = firstField(training, [
      'heldout_exact_match',
      'heldout_accuracy',
      'held_out_accuracy',
      'accuracy',
      'exact_match',
      'val_accuracy',
      'test_accuracy',
    ]);
    const pct = acc !== undefined && typeof acc !== 'object' ? formatPercent(acc) : null;
    if (pct) parts.push(`${pct} exact match on held-out dates (training run)`);
    const secs = Number(training.seconds ?? training.training_seconds);
    if (Number.isFinite(secs) && secs > 0) parts.push(`trained in ${Math.round(secs / 60)} min`);
  }
  return parts.join(' · ');
}

/** The readout line for one cell, e.g. "cross-attention · layer 1 · head 2 · output '0' reads input '3': 0.912". */
export function dateReadout(kind, layer, head, rowToken, colToken, weightText) {
  const info = kindInfo(kind);
  const [q, k] =
    kind === 'encoder_self'
      ? ['input', 'input']
      : kind === 'cross'
        ? ['output', 'input']
        : ['output', 'read'];
  return (
    `${info ? info.short.toLowerCase() : kind} · layer ${layer} · head ${head} · ` +
    `${q} '${rowToken}' → ${k} '${colToken}': ${weightText}`
  );
}

/** Switched-off heads (headKey strings) as the page names them: "cross layer 1 head 2". */
export function offHeadNames(off) {
  return off.map((key) => {
    const [kind, layer, head] = String(key).split('/');
    return `${kindInfo(kind)?.short.toLowerCase() ?? kind} layer ${layer} head ${head}`;
  });
}

/**
 * The figure export of layer `layer` of `kind` in translation `result` (chrome/page.js
 * figureParts, drawn by chrome/figure.js): every head of the layer, captioned "head h" (with
 * "(switched off)" when it is), its measured role under the caption; rows the layer's query
 * tokens, columns its keys (axisTokens); the caption lines: the input and output, the attention
 * kind and layer, the axes, the heads switched off; the file name's stem.
 * @param {object} result a translation (model.translate)
 * @param {{kind: string, layer: number, off?: readonly string[], roles?: Map}} p off: headKey strings;
 *   roles: readRoles' map
 */
export function dateFigureParts(result, { kind, layer, off = [], roles = new Map() }) {
  const view = layerView(result, kind, layer);
  const info = kindInfo(kind);
  const heads = Array.from({ length: view.num_heads }, (_, h) => h);
  const offNames = offHeadNames(off);
  return {
    data: {
      weights: view.attn_weights,
      heads,
      queryTokens: view.rows,
      keyTokens: view.cols,
      maskedRows: view.fully_masked_rows,
      config: { kind, layer, num_heads: view.num_heads, n: view.n, m: view.m },
    },
    title: `Date translator: ${info.label}, layer ${layer}, reading “${result.input}”`,
    headNames: heads.map(
      (h) => `head ${h}${off.includes(headKey(kind, layer, h)) ? ' (switched off)' : ''}`,
    ),
    headNotes: heads.map((h) => roles.get(headKey(kind, layer, h))?.role ?? ''),
    columns: heads.length,
    panelWidth: 240,
    caption: [
      `Input “${result.input}” → output “${result.output}” · ${info.label}, layer ${layer} (layers 0–${layerCount(result, kind) - 1}) · ${view.num_heads} heads`,
      `Rows: ${info.rows}. Columns: ${info.cols}.`,
      `Heads switched off: ${offNames.length ? offNames.join(', ') : 'none'}`,
    ],
    stem: `mha-date-${kind.replace(/_/g, '-')}-l${layer}`,
  };
}
