// The Date translator's small multiples: one button per layer × kind × head of the model, each a
// canvas with one pixel per cell (scaled by CSS without smoothing), coloured by the same table
// as the grids (trained/model_grids.js paintThumb). Built once per model; a keystroke repaints them.
import { KINDS, headKey, layerView, thumbCell } from './date_view.js';
import { el } from '../../draw/dom.js';
import { paintThumb } from '../trained/model_grids.js';

export class Overview {
  /**
   * @param {HTMLElement} container #date-overview
   * @param {(which: {kind: string, layer: number, head: number}) => void} onZoom a button was chosen
   */
  constructor(container, onZoom) {
    this.container = container;
    this.onZoom = onZoom;
    /** [{kind, layer, head, button, canvas}], built once per model (null before). */
    this.thumbs = null;
  }

  /**
   * The buttons for the model of `config`, built once; `roles` (headKey → {role}) name the heads
   * whose role was measured.
   */
  build(config, roles) {
    if (this.thumbs) return;
    const counts = {
      encoder_self: config.num_encoder_layers,
      decoder_self: config.num_decoder_layers,
      cross: config.num_decoder_layers,
    };
    this.thumbs = [];
    const rows = [];
    for (const { id: kind, label, short } of KINDS) {
      for (let layer = 0; layer < counts[kind]; layer++) {
        const row = el('div', 'overview-row');
        const thumbs = el('div', 'thumbs');
        for (let head = 0; head < config.num_heads; head++) {
          const button = el('button', 'thumb');
          button.type = 'button';
          Object.assign(button.dataset, { kind, layer: String(layer), head: String(head) });
          const role = roles.get(headKey(kind, layer, head));
          const name = `${label}, layer ${layer}, head ${head}${role?.role ? `: ${role.role}` : ''}`;
          // The visible text ("h2") starts the accessible name (WCAG 2.5.3, label in name).
          button.setAttribute('aria-label', `h${head}: enlarge ${name}`);
          button.title = name;
          button.setAttribute('aria-pressed', 'false');
          const canvas = el('canvas', 'thumb-canvas');
          canvas.setAttribute('aria-hidden', 'true');
          button.append(canvas, el('span', 'thumb-head', `h${head}`));
          button.addEventListener('click', () => this.onZoom({ kind, layer, head }));
          thumbs.append(button);
          this.thumbs.push({ kind, layer, head, button, canvas });
        }
        row.append(el('p', 'overview-title', `${short}, layer ${layer}`), thumbs);
        rows.push(row);
      }
    }
    this.container.replaceChildren(...rows);
    this.container.dataset.count = String(this.thumbs.length);
  }

  /** Repaints every small multiple from a translation (one pixel per cell, scaled by CSS). */
  draw(result) {
    const views = new Map();
    for (const t of this.thumbs) {
      const key = `${t.kind}/${t.layer}`;
      if (!views.has(key)) views.set(key, layerView(result, t.kind, t.layer));
      const { n, m, attn_weights: weights } = views.get(key);
      const cell = thumbCell(n, m);
      paintThumb(t.canvas, weights, t.head, n, m, m * cell, n * cell);
    }
  }

  /** Marks the enlarged head's button (aria-pressed). */
  markZoomed(z) {
    for (const t of this.thumbs ?? []) {
      const on = !!z && t.kind === z.kind && t.layer === z.layer && t.head === z.head;
      t.button.setAttribute('aria-pressed', String(on));
    }
  }

  /** Marks the buttons of the heads switched off (headKey strings in `off`). */
  markOff(off) {
    for (const t of this.thumbs ?? [])
      t.button.classList.toggle('is-off', off.includes(headKey(t.kind, t.layer, t.head)));
  }
}
