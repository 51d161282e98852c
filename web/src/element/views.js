// What an <mha-attention> shows, built from its attributes or its child: module 08's experiment,
// the Date translator, the English model, or weights given as JSON. Each builder returns
// {ok: true, result, queryTokens, keyTokens, title, summary, config, headNames?, headNotes?, notes?}
// (element.js draws it) or {ok: false, message} (element.js shows the message).
import { formatCount, precisionNote } from '../draw/format.js';
import {
  briefFindings,
  kindInfo,
  layerCount,
  layerView,
  readRoles,
} from '../modes/date/date_view.js';
import { readTypicalRoles, tokenLabels, typicalText } from '../modes/english/english_view.js';
import { measuredElsewhere } from '../modes/trained/heads_file.js';
import { attr, attributeNames } from './attributes.js';
import { quoteValue } from '../chrome/values.js';
import { errorMessage } from '../chrome/alerts.js';

/**
 * What an element shows, or why it shows nothing.
 * @typedef {{ok: true, result: object, queryTokens: string[], keyTokens: string[], title: string,
 *   summary: string, config: object, headNotes?: object[], headNames?: string[], notes?: string[]}
 *   | {ok: false, message: string}} ElementView
 */

/** config.source of weights given as the element's JSON child. */
export const GIVEN = 'weights given to the element';

/**
 * The view of the element's child <script>: weights given as JSON (givenWeights) when its type is
 * application/json, else a message naming the type.
 * @param {Element} script
 * @returns {ElementView}
 */
export function childView(script) {
  const type = (script.getAttribute('type') ?? '').trim().toLowerCase();
  return type === 'application/json'
    ? givenWeights(script.textContent)
    : {
        ok: false,
        message: `the weights' child script has type="${quoteValue(script.getAttribute('type') ?? '')}"; the element reads weights from a script of type application/json.`,
      };
}

/**
 * The view of weights given as JSON text (the element's <script type="application/json"> child):
 * {attn_weights: (h, n, m) nested arrays of weights in [0, 1], tokens: m strings, query_tokens?: n
 * strings (default: tokens), title?, summary?}. A row of zeros is a fully masked row.
 * @param {string} text
 * @returns {ElementView}
 */
export function givenWeights(text) {
  if (typeof text !== 'string' || !text.trim()) {
    return {
      ok: false,
      message: "the weights' JSON (the child script of type application/json) is empty.",
    };
  }
  let d;
  try {
    d = JSON.parse(text);
  } catch (e) {
    return {
      ok: false,
      message: `the weights' JSON does not parse: ${e instanceof Error ? e.message : e}`,
    };
  }
  const w = d?.attn_weights;
  if (
    !Array.isArray(w) ||
    !w.length ||
    !Array.isArray(w[0]) ||
    !w[0].length ||
    !Array.isArray(w[0][0])
  ) {
    return {
      ok: false,
      message: "the weights' JSON needs attn_weights as (num_heads, n, m) nested arrays.",
    };
  }
  const h = w.length;
  const n = w[0].length;
  const m = w[0][0].length;
  const keyTokens = Array.isArray(d.tokens)
    ? d.tokens.map(String)
    : Array.from({ length: m }, (_, j) => String(j));
  const queryTokens = Array.isArray(d.query_tokens)
    ? d.query_tokens.map(String)
    : n === m
      ? keyTokens
      : Array.from({ length: n }, (_, i) => String(i));
  if (keyTokens.length !== m || queryTokens.length !== n) {
    return {
      ok: false,
      message: `the weights are (${h}, ${n}, ${m}) but there are ${queryTokens.length} query and ${keyTokens.length} key tokens.`,
    };
  }
  const attn = new Float32Array(h * n * m);
  const fully = new Uint8Array(h * n);
  for (let k = 0; k < h; k++) {
    if (!Array.isArray(w[k]) || w[k].length !== n)
      return { ok: false, message: `attn_weights[${k}] is not ${n} rows.` };
    for (let i = 0; i < n; i++) {
      const row = w[k][i];
      if (!Array.isArray(row) || row.length !== m)
        return { ok: false, message: `attn_weights[${k}][${i}] is not ${m} weights.` };
      let sum = 0;
      for (let j = 0; j < m; j++) {
        const x = row[j];
        if (typeof x !== 'number' || !(x >= 0 && x <= 1))
          return {
            ok: false,
            message: `attn_weights[${k}][${i}][${j}] = ${x} is not a weight in [0, 1].`,
          };
        attn[(k * n + i) * m + j] = x;
        sum += x;
      }
      if (sum === 0) fully[k * n + i] = 1;
    }
  }
  const title = typeof d.title === 'string' ? d.title : 'Attention weights';
  return {
    ok: true,
    result: { attn_weights: attn, fully_masked_rows: fully, num_heads: h, n, m },
    queryTokens,
    keyTokens,
    title,
    summary:
      typeof d.summary === 'string'
        ? d.summary
        : `${title} · ${h} head${h === 1 ? '' : 's'} · ${n} × ${m}`,
    config: { num_heads: h, n, m, source: GIVEN },
  };
}

/**
 * Module 08's experiment for the attributes; the module's errors name the values.
 * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaCoreModule} mod
 * @param {object} read the element's settings (attributes.js readAttributes)
 * @returns {ElementView}
 */
export function randomView(mod, read) {
  const { state, tokens } = read;
  let result;
  try {
    const params = mod.parameterCount({ d_model: state.d_model, num_heads: state.num_heads });
    result = mod.numpyExperiment({
      seed: state.seed,
      tokens: tokens.length,
      d_model: state.d_model,
      num_heads: state.num_heads,
      positional: state.positional,
      is_causal: state.causal,
      precision: 'auto', // float64 as numpy up to 4M multiply-adds, float32 above (as the page)
      // The element draws the weights only: no V, head outputs, X or weights back.
      weights_only: true,
      keep_intermediates: false,
      return_parameters: false,
    });
    result.parameter_count ??= params;
  } catch (e) {
    return { ok: false, message: attributeNames(e instanceof Error ? e.message : String(e)) };
  }
  const title = `Attention weights of "${state.text}"`;
  return {
    ok: true,
    result,
    queryTokens: tokens,
    keyTokens: tokens,
    title,
    summary:
      `n = ${tokens.length} token${tokens.length === 1 ? '' : 's'} · d_model = ${result.d_model} · ` +
      `num_heads = ${result.num_heads} · d_head = ${result.d_head}${state.causal ? ' · causal' : ''}` +
      `${state.positional ? ' · + positions' : ''} · seed ${state.seed} · ` +
      `${formatCount(result.parameter_count)} parameters (4 · d_model²) · ${precisionNote(result.precision)}`,
    config: {
      d_model: result.d_model,
      num_heads: result.num_heads,
      d_head: result.d_head,
      seed: state.seed,
      is_causal: state.causal,
      positional: state.positional,
      text: state.text,
      precision: result.precision,
      source: 'numpy_experiment (module 08)',
    },
  };
}

/**
 * A trained model loaded for an element (`load`: ElementShared's dateModel or englishModel) and
 * `run(model)`'s output on the element's input: {model, heads, out}, or {failed: message} when
 * the model could not be loaded ("the `name` could not be loaded: …") or run refused the input
 * (its error's message).
 * @template M, R
 * @param {string} name
 * @param {() => Promise<{model: M, heads: object|null}>} load
 * @param {(model: M) => R} run
 * @returns {Promise<{model?: M, heads?: object|null, out?: R, failed?: string}>}
 */
async function trainedRun(name, load, run) {
  let loaded;
  try {
    loaded = await load();
  } catch (e) {
    return { failed: `the ${name} could not be loaded: ${errorMessage(e)}` };
  }
  try {
    return { ...loaded, out: run(loaded.model) };
  } catch (e) {
    return { failed: errorMessage(e) };
  }
}

/**
 * The Date translator: one layer of one kind of attention of the trained model, each head
 * captioned with its measured role (readRoles of the model's heads file) and the layer's
 * findings: module 03's claims as date-eval measured them.
 * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaModule} mod
 * @param {object} read the element's settings (attributes.js readAttributes)
 * @param {import('./shared.js').ElementShared} shared what the page's elements share
 * @returns {Promise<ElementView>}
 */
export async function dateView(mod, read, shared) {
  const got = await trainedRun(
    'date model',
    () => shared.dateModel(mod),
    (model) => {
      const length = Array.from(read.text).length;
      if (length > model.maxSourceLength) {
        throw new Error(
          `${attr('tokens', read.text)} has ${length} characters; the date model reads at most ${model.maxSourceLength}.`,
        );
      }
      return model.translate(read.text);
    },
  );
  if (got.failed) return { ok: false, message: got.failed };
  const { model, heads: headsJson, out: r } = got;
  const layers = layerCount(r, read.attention);
  const layer = read.layer ?? layers - 1;
  if (layer >= layers) {
    return {
      ok: false,
      message: `${attr('layer', String(read.layer))} is not a layer of ${read.attention} (0 to ${layers - 1}).`,
    };
  }
  const v = layerView(r, read.attention, layer);
  const info = kindInfo(read.attention);
  const elsewhere = measuredElsewhere(headsJson, model.checksum, 'Head roles');
  const roles = headsJson && !elsewhere ? readRoles(headsJson) : new Map();
  const headNotes = Array.from({ length: r.num_heads }, (_, h) => {
    const role = roles.get(`${read.attention}/${layer}/${h}`);
    return role ? { role: role.role, details: [role.claim, role.prunable].filter(Boolean) } : null;
  });
  return {
    ok: true,
    result: { ...v, d_head: model.config.d_model / r.num_heads, d_model: model.config.d_model },
    queryTokens: v.rows,
    keyTokens: v.cols,
    headNotes,
    notes: elsewhere ? [`${elsewhere}.`] : briefFindings(headsJson),
    title: `Date translator: "${read.text}" → ${r.output}`,
    summary: `"${read.text}" → ${r.output} · ${info.label ?? read.attention}, layer ${layer} · ${r.num_heads} heads`,
    config: {
      model: 'date translator (web/date_model.safetensors)',
      d_model: model.config.d_model,
      num_heads: r.num_heads,
      kind: read.attention,
      layer,
      input: read.text,
      output: r.output,
    },
  };
}

/**
 * The English language model on the element's text: every head of every layer (or of the
 * `layer` attribute's layer), numbered layer by layer (layer 0's heads first), each captioned
 * "Layer l, head k" with its typical role over held-out text (the model's heads file,
 * web/english_lm_heads.json: role, score, the perplexity cost of switching it off).
 * @param {import('../../../cpp/bindings/wasm/mha_wasm').MhaModule} mod
 * @param {object} read the element's settings (attributes.js readAttributes)
 * @param {import('./shared.js').ElementShared} shared what the page's elements share
 * @returns {Promise<ElementView>}
 */
export async function englishView(mod, read, shared) {
  const got = await trainedRun(
    'English model',
    () => shared.englishModel(mod),
    (model) => model.run(read.text, { top: 1 }),
  );
  if (got.failed) return { ok: false, message: got.failed };
  const { model, heads: headsJson, out: run } = got;
  const { layers, heads: h, n } = run;
  if (read.layer !== null && read.layer >= layers) {
    return {
      ok: false,
      message: `${attr('layer', String(read.layer))} is not a layer of the English model (0 to ${layers - 1}).`,
    };
  }
  const first = read.layer ?? 0;
  const shown = read.layer === null ? layers : 1;
  const weights = run.attnWeights.subarray(first * h * n * n, (first + shown) * h * n * n);
  const elsewhere = measuredElsewhere(headsJson, model.checksum, 'Held-out head roles');
  const typical = headsJson && !elsewhere ? readTypicalRoles(headsJson) : new Map();
  const ids = Array.from({ length: shown * h }, (_, k) => [first + Math.floor(k / h), k % h]);
  const labels = tokenLabels(run);
  const config = model.config;
  const counts = [
    n === 1
      ? '1 token: <bos> alone (the text is empty)'
      : `${n} tokens: <bos> and ${n - 1} pieces of the text (“·”: a piece that continues a word)`,
  ];
  if (run.truncatedTokens > 0)
    counts.push(`${run.truncatedTokens} more cut (it reads at most ${config.max_len})`);
  const ppl = Number.isFinite(run.perplexity) ? ` · perplexity ${run.perplexity.toFixed(1)}` : '';
  const where =
    read.layer === null
      ? `${layers} layers × ${h} heads`
      : `layer ${read.layer} of ${layers} · ${h} heads`;
  return {
    ok: true,
    result: {
      n,
      m: n,
      num_heads: shown * h,
      attn_weights: weights,
      fully_masked_rows: new Uint8Array(shown * h * n),
      d_model: config.d_model,
    },
    queryTokens: labels,
    keyTokens: labels,
    headNames: ids.map(([l, k]) => `Layer ${l}, head ${k}`),
    headNotes: ids.map(([l, k]) => {
      const t = typical.get(`${l}.${k}`);
      return t ? { role: typicalText(t), details: [] } : null;
    }),
    notes: elsewhere ? [`${elsewhere}.`] : [],
    title: `English language model: "${read.text}"`,
    summary: `English language model · ${where} · ${counts.join(' · ')}${ppl}`,
    config: {
      model: 'English language model (web/english_lm.safetensors)',
      d_model: config.d_model,
      num_heads: h,
      num_layers: layers,
      layer: read.layer ?? 'all',
      heads_numbered: 'layer by layer',
      text: read.text,
      n,
    },
  };
}
