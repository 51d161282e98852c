// The explain section of the random-embeddings mode: one <details> per view, each built only
// while it is open (nothing here runs on the update path of a closed panel), from the result the
// page already has plus, where a view needs another run, the core itself.
// Host-agnostic: everything is built inside `container`.
import { h } from './dom.js';
import { fromCoreExplanation } from './step.js';
import { formatCount } from '../draw/format.js';
import { MAX_KEPT_WEIGHTS, keepsIntermediates } from '../compute/cost.js';
import { renderStepPanel } from './step_panel.js';
import { renderPipeline } from './pipeline.js';
import { renderParams } from './params_panel.js';
import { renderCompare } from './compare.js';
import { renderAblation } from './ablation.js';
import { maskDescription } from './masks.js';
import { renderPatterns } from './patterns_panel.js';
import { renderCombined } from './combine.js';

/** The Files panel's script (web/src/explain/file_panel.js: buildFilePanel), added when it is first opened. */
export const FILE_PANEL_SCRIPT = 'file_panel.js';

/** The panels, in page order: key, summary text, whether open at first. */
export const PANELS = Object.freeze([
  { key: 'step', title: 'Step by step: one cell, from q and k to the weight', open: true },
  { key: 'pipeline', title: 'The pipeline, with the current shapes (module 08)', open: false },
  { key: 'params', title: 'Parameters: 4 · d_model², whatever num_heads is', open: false },
  { key: 'compare', title: 'One head versus many', open: false },
  {
    key: 'patterns',
    title: 'Head patterns: scores, labels and how alike the heads are',
    open: false,
  },
  { key: 'combine', title: 'Combined views: mean and max over heads', open: false },
  { key: 'ablation', title: 'Switch heads off: how much the layer output moves', open: false },
  { key: 'files', title: 'Bring your own attention or weights (.npy, .safetensors)', open: false },
]);

/**
 * Panels that call the core's explain functions (explainCell, headPatterns, meanOverHeads,
 * maxOverHeads): drawn with the full module, which the page may load only on first use.
 */
const FULL_MODULE_PANELS = Object.freeze(['step', 'patterns', 'combine', 'ablation']);
/** Panels that run the layer again on the experiment's X and weights (layerRequest). */
const PARAMETER_PANELS = Object.freeze(['compare', 'ablation']);

/**
 * Multiply-adds above which a panel that computes on the page (not in the worker) waits for a
 * click: a fraction of a second of work. (Switching heads off at 2048 tokens, d_model 768,
 * 12 heads would otherwise hold the page for tens of seconds.)
 */
export const PANEL_MAX_WORK = 1e9;

/**
 * The view a panel is drawn for, as a string: the settings and the masks, not the heads switched
 * off or the combined view chosen (ticking a head asked once is not a new question), nor whether
 * the result carries X and the weights.
 */
function viewKey({ state, explain }) {
  return JSON.stringify({ ...state, ...explain, off: undefined, combine: undefined });
}

/**
 * What panel `key` would compute on the page for `result` when that is too much to do unasked
 * (a sentence for its note), or '' when it is not. `mod`: the core, whose experimentWork gives the
 * multiply-adds of one forward of the layer.
 */
export function panelTooLarge(key, { n, m, d_model: d, num_heads: heads }, mod) {
  const forward = mod.experimentWork({ tokens: n, d_model: d });
  const work = key === 'ablation' ? (heads + 1) * forward : key === 'compare' ? forward : 0;
  if (work > PANEL_MAX_WORK) {
    return (
      `This panel runs the layer ${key === 'ablation' ? `${heads + 1} times` : 'again with one head'} ` +
      `here: ${formatCount(work)} multiply-adds, more than ${formatCount(PANEL_MAX_WORK)}.`
    );
  }
  // Scores and combinations read every weight, pairs of heads too.
  if ((key === 'patterns' || key === 'combine') && !keepsIntermediates(heads, n)) {
    return `This panel reads all ${formatCount(heads * n * m)} weights here, more than ${formatCount(MAX_KEPT_WEIGHTS)}.`;
  }
  return '';
}

/**
 * The forward request of the float32 layer with the experiment's own X and weights (numpyExperiment
 * returns x, in_proj_weight, out_proj_weight) and the masks the page sent: fast, for views that
 * run the layer several times (switching heads off, one head versus many).
 */
export function layerRequest(result, request, numHeads = result.num_heads) {
  const out = {
    d_model: result.d_model,
    num_heads: numHeads,
    n: result.n,
    query: result.x,
    in_proj_weight: result.in_proj_weight,
    out_proj_weight: result.out_proj_weight,
    keep_intermediates: false,
  };
  for (const key of ['attn_mask', 'key_padding_mask', 'is_causal'])
    if (request[key] !== undefined) out[key] = request[key];
  return out;
}

/** The message of a panel whose core function this build of the module lacks. */
function missing(name) {
  return `This build of the attention core has no ${name}(): rebuild it (./scripts/build.sh).`;
}

export class ExplainPanels {
  /**
   * @param {HTMLElement} container where the panels go
   * @param {{getModule: () => object, getFullModule: () => Promise<object>,
   *          onAblate: (off: number[]) => void, onCombine: (kind: string) => void,
   *          onError: (message: string) => void, onClearError: () => void,
   *          onNeedParameters?: () => void, scripts: object, labels: object}} deps
   *   getModule: the page's attention core (numpyExperiment, parameterCount), ready;
   *   getFullModule: the module with the explain functions and the file loaders (it may be
   *   loaded on demand: FULL_MODULE_PANELS and the file panel wait for it);
   *   onAblate: the user switched heads off or on (the page keeps the list and updates);
   *   onCombine: the user chose a combined view (kept in the address);
   *   onError / onClearError: the page's alert region (file problems);
   *   onNeedParameters: an open panel needs the experiment's X and weights, which the view's
   *   result lacks (the page leaves them out while no such panel is open: needsParameters());
   *   scripts: the page's script loader (compute/wasm_modules.js WasmModules), which adds the
   *   Files panel's script;
   *   labels: the page's label cache (draw/labels.js LabelCache), shared by the panels' grids
   */
  constructor(
    container,
    {
      getModule,
      getFullModule,
      onAblate,
      onCombine,
      onError,
      onClearError,
      onNeedParameters = () => {},
      scripts,
      labels,
    },
  ) {
    this.container = container;
    this.scripts = scripts;
    this.labels = labels;
    this.getModule = getModule;
    this.getFullModule = getFullModule;
    this.onError = onError;
    this.onClearError = onClearError;
    this.onAblate = onAblate;
    this.onCombine = onCombine;
    this.onNeedParameters = onNeedParameters;
    // {state, tokens, result, request, explain, maskFields}: the settings, the core's result and
    // the request that made it, the explain keys (explain_state.js) and the mask fields sent.
    this.ctx = null;
    this.cell = null; // the locked {head, row, col}
    this.bodies = {};
    this.details = {};
    this.built = {}; // key: the ctx it was built for
    this.forced = {}; // key: the view (viewKey) for which a click asked for a panel too large to draw unasked
    for (const p of PANELS) {
      const body = h('div', { className: 'explain-body', data: { panel: p.key } });
      const details = h(
        'details',
        { className: 'explain-panel', id: `explain-${p.key}`, data: { panel: p.key } },
        h('summary', { text: p.title }),
        body,
      );
      if (p.open) details.open = true;
      details.addEventListener('toggle', () => {
        if (details.open) this.refresh(p.key);
      });
      this.bodies[p.key] = body;
      this.details[p.key] = details;
      container.append(details);
    }
  }

  /** A new valid view (see this.ctx). Rebuilds the open panels only. */
  update(ctx) {
    this.ctx = ctx;
    if (ctx.explain.off.length) this.details.ablation.open = true;
    if (ctx.explain.combine) this.details.combine.open = true;
    const { result } = ctx;
    if (
      this.cell &&
      (this.cell.head >= result.num_heads || this.cell.row >= result.n || this.cell.col >= result.m)
    ) {
      this.cell = null;
    }
    for (const p of PANELS) if (this.details[p.key].open) this.refresh(p.key);
  }

  /** Whether an open panel runs the layer on the experiment's X and weights (layerRequest). */
  needsParameters() {
    return PARAMETER_PANELS.some((key) => this.details[key].open);
  }

  /** Locks a cell ({head, row, col} or null) and shows its steps. */
  lock(cell) {
    this.cell = cell ? { head: cell.head, row: cell.row, col: cell.col } : null;
    if (cell) this.details.step.open = true;
    this.refresh('step');
  }

  refresh(key) {
    if (key === 'files') {
      // Independent of the view above: built once, when first opened (even before the first
      // update), from its own script (FILE_PANEL_SCRIPT: not part of the page's first load).
      if (!this.details.files.open || this.built.files) return;
      this.built.files = true;
      const body = this.bodies.files;
      body.replaceChildren(h('p', { className: 'help', text: 'Loading the file panel…' }));
      this.scripts
        .loadScript(FILE_PANEL_SCRIPT)
        .then(() => {
          // A script that ran but is not the panel's (an old copy, a server's page for a missing
          // file) is said as a missing one is.
          const build = globalThis.mhaFilePanel?.buildFilePanel;
          if (typeof build !== 'function') {
            this.scripts.forgetScript(FILE_PANEL_SCRIPT);
            throw new Error(
              `${FILE_PANEL_SCRIPT} loaded but defines no file panel: rebuild the page (./scripts/build.sh)`,
            );
          }
          body.replaceChildren();
          build(body, {
            getModule: this.getFullModule,
            labels: this.labels,
            onError: this.onError,
            onClear: this.onClearError,
          });
        })
        .catch((e) => {
          this.built.files = false; // opening the panel again tries again
          body.replaceChildren(
            h('p', { className: 'help', text: e instanceof Error ? e.message : String(e) }),
          );
        });
      return;
    }
    if (!this.ctx || !this.details[key].open) return;
    // The step panel needs the full module only once a cell is locked: the page's first load
    // stays the core alone (tests/web/size_budget.test.mjs).
    if (FULL_MODULE_PANELS.includes(key) && (key !== 'step' || this.cell)) {
      // These call the core's explain functions, which may live in the full module (loaded on
      // first use): draw when it is there, unless another view replaced this one meanwhile.
      const ctx = this.ctx;
      const cell = this.cell;
      this.getFullModule().then(
        (full) => {
          if (ctx === this.ctx && cell === this.cell && this.details[key].open)
            this.draw(key, full);
        },
        (e) => {
          this.bodies[key].replaceChildren(
            h('p', { className: 'help', text: e instanceof Error ? e.message : String(e) }),
          );
        },
      );
      return;
    }
    this.draw(key, this.getModule());
  }

  /** Draws panel `key` from this.ctx with `mod` (the page's core, or the full module). */
  draw(key, mod) {
    const { state, tokens, result } = this.ctx;
    const body = this.bodies[key];
    const tooLarge = this.forced[key] !== viewKey(this.ctx) && panelTooLarge(key, result, mod);
    if (tooLarge) {
      // A click computes it (the page is then busy for a while); a new view asks again.
      const go = h('button', {
        className: 'link-button',
        text: 'Compute it anyway',
        attrs: { type: 'button' },
      });
      go.addEventListener('click', () => {
        this.forced[key] = viewKey(this.ctx);
        this.refresh(key);
      });
      body.replaceChildren(
        h('p', {
          className: 'help',
          text: `${tooLarge} The page would not answer until it is done.`,
        }),
        go,
      );
      body.dataset.state = 'large';
      return;
    }
    if (PARAMETER_PANELS.includes(key) && result.x === undefined) {
      // Computed for panels that did not need X and the weights: ask for them (the page computes
      // the view again with them, and this panel is drawn from that result).
      body.replaceChildren(
        h('p', {
          className: 'help',
          text: "Computing the layer's inputs and weights for this panel…",
        }),
      );
      body.dataset.state = 'pending';
      this.onNeedParameters();
      return;
    }
    switch (key) {
      case 'step': {
        const c = this.cell;
        const n = tokens.length;
        let e = null;
        // A locked cell needs the intermediates, V and the head outputs: the page computes them
        // (the full forward) only once a cell is locked, and never beyond MAX_KEPT_WEIGHTS
        // weights, so the first draw after locking may come before them.
        const note = !c
          ? ''
          : !keepsIntermediates(result.num_heads, result.n)
            ? `No steps at this size: the page keeps q, k and the scores only while num_heads · n² ≤ ${formatCount(MAX_KEPT_WEIGHTS)} (here ${formatCount(result.num_heads * result.n * result.m)}). The readout above gives the weight.`
            : !result.head_outputs || !result.scores
              ? 'Computing q, k, V and the head outputs for this cell…'
              : '';
        if (note) {
          renderStepPanel(body, null, { note });
          break;
        }
        if (c) {
          // The core's own explanation of the cell (the full module's explainCell), with the masks
          // the forward pass used.
          const { attn_mask, key_padding_mask, is_causal } = this.ctx.request;
          const masks = Object.fromEntries(
            Object.entries({ attn_mask, key_padding_mask, is_causal }).filter(
              ([, v]) => v !== undefined,
            ),
          );
          e = fromCoreExplanation(
            mod.explainCell(result, { head: c.head, i: c.row, j: c.col, ...masks }),
          );
        }
        renderStepPanel(body, e, {
          queryToken: c ? tokens[c.row] : '',
          keyToken: c ? tokens[c.col] : '',
          maskLine: maskDescription({ ...state, ...this.ctx.explain }, n),
        });
        break;
      }
      case 'pipeline':
        renderPipeline(body, {
          n: tokens.length,
          d_model: result.d_model,
          num_heads: result.num_heads,
        });
        break;
      case 'params':
        if (this.built.params === this.ctx) return;
        renderParams(body, {
          d_model: result.d_model,
          num_heads: result.num_heads,
          count: (req) => mod.parameterCount(req),
          maxHeads: mod.limits.max_num_heads,
        });
        break;
      case 'compare': {
        if (this.built.compare === this.ctx) return;
        // The same request with one head (a per-head switch-off list has no meaning there).
        // The float32 layer (fast) on the experiment's X and weights, with one head.
        const single = mod.forward(layerRequest(result, this.ctx.request, 1));
        renderCompare(body, { labels: this.labels, tokens, single, multi: result });
        break;
      }
      case 'patterns': {
        if (this.built.patterns === this.ctx) return;
        if (typeof mod.headPatterns !== 'function') {
          body.replaceChildren(h('p', { className: 'help', text: missing('headPatterns') }));
          break;
        }
        const patterns = mod.headPatterns({
          attn_weights: result.attn_weights,
          num_heads: result.num_heads,
          n: result.n,
          m: result.m,
          tokens,
        });
        renderPatterns(body, { patterns, tokens, weights: result.attn_weights });
        break;
      }
      case 'combine': {
        const kind = this.ctx.explain.combine || 'mean';
        const fn = kind === 'max' ? 'maxOverHeads' : 'meanOverHeads';
        if (typeof mod[fn] !== 'function') {
          body.replaceChildren(h('p', { className: 'help', text: missing(fn) }));
          break;
        }
        const matrix = mod[fn]({
          attn_weights: result.attn_weights,
          num_heads: result.num_heads,
          n: result.n,
          m: result.m,
        });
        renderCombined(body, {
          labels: this.labels,
          kind,
          matrix,
          n: result.n,
          m: result.m,
          tokens,
          numHeads: result.num_heads,
          onKind: (next) => {
            this.ctx = { ...this.ctx, explain: { ...this.ctx.explain, combine: next } };
            this.onCombine(next);
            this.refresh('combine');
          },
        });
        break;
      }
      case 'ablation': {
        if (this.built.ablation === this.ctx) return;
        if (typeof mod.ablationEffect !== 'function') {
          body.replaceChildren(h('p', { className: 'help', text: missing('ablationEffect') }));
          break;
        }
        const request = layerRequest(result, this.ctx.request);
        renderAblation(body, {
          numHeads: result.num_heads,
          off: this.ctx.explain.off,
          change: (ablated) =>
            mod.ablationEffect({ ...request, ablated_heads: ablated }).relative_change,
          onChange: (off) => this.onAblate(off),
        });
        break;
      }
      default:
    }
    this.built[key] = this.ctx;
    body.dataset.state = state ? 'ready' : 'empty';
  }
}
