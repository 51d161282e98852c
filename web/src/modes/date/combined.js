// The Date translator's combined views, each labelled with its formula: the mean and the max over
// the heads of the layer on screen (the core's meanOverHeads / maxOverHeads) and the attention
// rollout across the encoder's layers and across the decoder's self-attention layers (the core's
// attentionRollout; Abnar & Zuidema 2020). Built only while its <details> is open.
import { h } from '../../explain/dom.js';
import { renderCombined, ROLLOUT_FORMULA } from '../../explain/combine.js';
import { readTheme } from '../../draw/heatmap.js';
import { gridFigure } from '../../explain/grid.js';
import { axisTokens, kindInfo, layerView } from './date_view.js';

export class DateCombined {
  /**
   * @param {HTMLDetailsElement} details its body is filled while open
   * @param {{getModule: () => Promise<object>, labels: object}} deps getModule: the module with
   *   meanOverHeads, maxOverHeads and attentionRollout (the full module, which the Date translator
   *   has loaded); labels: the page's label cache (draw/labels.js LabelCache)
   */
  constructor(details, { getModule, labels }) {
    this.details = details;
    this.labels = labels;
    this.body = details.querySelector('.explain-body');
    this.getModule = getModule;
    this.last = null; // {result, kind, layer}
    this.kind = 'mean';
    details.addEventListener('toggle', () => this.draw());
  }

  /** A new translation (or another kind / layer) is on screen. */
  update(result, kind, layer) {
    this.last = { result, kind, layer };
    this.draw();
  }

  draw() {
    if (!this.details.open || !this.last) return;
    const last = this.last;
    this.getModule().then(
      (mod) => {
        if (last === this.last && this.details.open) this.drawWith(mod);
      },
      (e) => {
        this.body.replaceChildren(
          h('p', { className: 'help', text: e instanceof Error ? e.message : String(e) }),
        );
      },
    );
  }

  drawWith(mod) {
    const { result: r, kind, layer } = this.last;
    const view = layerView(r, kind, layer);
    const req = { attn_weights: view.attn_weights, num_heads: r.num_heads, n: view.n, m: view.m };
    const combined = h('div', { className: 'date-combine', data: { panel: 'date-combine' } });
    const encoder = h('div', { className: 'date-rollout', data: { rollout: 'encoder_self' } });
    const decoder = h('div', { className: 'date-rollout', data: { rollout: 'decoder_self' } });
    this.body.replaceChildren(
      h('p', {
        className: 'help',
        text: `${kindInfo(kind).label}, layer ${layer}, all ${r.num_heads} heads combined; then the rollouts across layers.`,
      }),
      combined,
      h('div', { className: 'rollouts' }, encoder, decoder),
    );
    const drawCombined = (k) => {
      this.kind = k;
      renderCombined(combined, {
        labels: this.labels,
        kind: k,
        matrix: k === 'max' ? mod.maxOverHeads(req) : mod.meanOverHeads(req),
        n: view.n,
        m: view.m,
        tokens: view.rows,
        keyTokens: view.cols,
        numHeads: r.num_heads,
        onKind: drawCombined,
      });
    };
    drawCombined(this.kind);
    for (const [box, which] of [
      [encoder, 'encoder_self'],
      [decoder, 'decoder_self'],
    ]) {
      const layers = r[which];
      const { rows, cols } = axisTokens(r, which);
      const n = rows.length;
      const rollout = Float32Array.from(
        mod.attentionRollout({ layers, num_heads: r.num_heads, n }),
      );
      const name = `Rollout of ${kindInfo(which).label.toLowerCase()} over its ${layers.length} layers`;
      const result = { n, m: n, attn_weights: rollout, fully_masked_rows: new Uint8Array(n) };
      const { figure, heatmap: hm } = gridFigure({
        labels: this.labels,
        result,
        tokens: rows,
        keyTokens: cols,
        name,
        className: 'combined-figure',
        data: { rollout: which },
        caption: h(
          'span',
          {},
          h('strong', { text: `${name}: ${ROLLOUT_FORMULA}` }),
          h('span', {
            className: 'help',
            text: ' — how much of each position j reaches position i after all the layers, if attention and the residual carry it linearly (Abnar & Zuidema 2020).',
          }),
        ),
      });
      box.replaceChildren(figure);
      hm.resize(Math.max(240, Math.min(420, box.clientWidth || 420)), readTheme(box));
    }
  }
}
