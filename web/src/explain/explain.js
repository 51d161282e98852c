// The explain section of the random-embeddings mode: one <details> per view, each built only
// while it is open (nothing here runs on the update path of a closed panel), from the result the
// page already has plus, where a view needs another run, the core itself.
// Host-agnostic: everything is built inside `container`.
import { h } from './dom.js';
import { explainCell } from './step.js';
import { renderStepPanel } from './step_panel.js';
import { renderPipeline } from './pipeline.js';
import { renderParams } from './params_panel.js';
import { renderCompare } from './compare.js';
import { renderAblation } from './ablation.js';
import { isMasked, maskDescription } from './masks.js';

/** The panels, in page order: key, summary text, whether open at first. */
export const PANELS = Object.freeze([
  { key: 'step', title: 'Step by step: one cell, from q and k to the weight', open: true },
  { key: 'pipeline', title: 'The pipeline, with the current shapes (module 08)', open: false },
  { key: 'params', title: 'Parameters: 4 · d_model², whatever num_heads is', open: false },
  { key: 'compare', title: 'One head versus many', open: false },
  { key: 'ablation', title: 'Switch heads off: how much the layer output moves', open: false },
]);

export class ExplainPanels {
  /**
   * @param {Element} container where the panels go
   * @param {{getModule: () => object, onAblate: (off: number[]) => void}} deps
   *   onAblate: the user switched heads off or on (the page keeps the list and updates)
   */
  constructor(container, { getModule, onAblate }) {
    this.container = container;
    this.getModule = getModule;
    this.onAblate = onAblate;
    // {state, tokens, result, request, explain, maskFields}: the settings, the core's result and
    // the request that made it, the explain keys (explain_state.js) and the mask fields sent.
    this.ctx = null;
    this.cell = null; // the locked {head, row, col}
    this.bodies = {};
    this.details = {};
    this.built = {}; // key -> the ctx it was built for
    for (const p of PANELS) {
      const body = h('div', { className: 'explain-body', data: { panel: p.key } });
      const details = h('details', { className: 'explain-panel', id: `explain-${p.key}`, data: { panel: p.key } },
        h('summary', { text: p.title }), body);
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
    const { result } = ctx;
    if (this.cell && (this.cell.head >= result.num_heads || this.cell.row >= result.n || this.cell.col >= result.m)) {
      this.cell = null;
    }
    for (const p of PANELS) if (this.details[p.key].open) this.refresh(p.key);
  }

  /** Locks a cell ({head, row, col} or null) and shows its steps. */
  lock(cell) {
    this.cell = cell ? { head: cell.head, row: cell.row, col: cell.col } : null;
    if (cell) this.details.step.open = true;
    this.refresh('step');
  }

  refresh(key) {
    if (!this.ctx || !this.details[key].open) return;
    const { state, tokens, result } = this.ctx;
    const body = this.bodies[key];
    const mod = this.getModule();
    switch (key) {
      case 'step': {
        const c = this.cell;
        const n = tokens.length;
        const masked = c && isMasked(this.ctx.maskFields, state.causal, n, c.row, c.col);
        const e = c ? explainCell(result, c.head, c.row, c.col, masked) : null;
        renderStepPanel(body, e, {
          queryToken: c ? tokens[c.row] : '', keyToken: c ? tokens[c.col] : '',
          maskLine: maskDescription({ ...state, ...this.ctx.explain }, n),
        });
        break;
      }
      case 'pipeline':
        renderPipeline(body, { n: tokens.length, d_model: result.d_model, num_heads: result.num_heads });
        break;
      case 'params':
        if (this.built.params === this.ctx) return;
        renderParams(body, {
          d_model: result.d_model, num_heads: result.num_heads,
          count: (req) => mod.parameterCount(req), maxHeads: mod.limits.max_num_heads,
        });
        break;
      case 'compare': {
        if (this.built.compare === this.ctx) return;
        // The same request with one head (a per-head switch-off list has no meaning there).
        const { ablated_heads: _unused, ...request } = this.ctx.request;
        const single = mod.numpyExperiment({ ...request, num_heads: 1, keep_intermediates: false });
        renderCompare(body, { tokens, single, multi: result });
        break;
      }
      case 'ablation': {
        if (this.built.ablation === this.ctx) return;
        const request = { ...this.ctx.request, keep_intermediates: false };
        renderAblation(body, {
          numHeads: result.num_heads,
          off: this.ctx.explain.off,
          base: result.output,
          run: (ablated) => mod.numpyExperiment({ ...request, ablated_heads: ablated }).output,
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
