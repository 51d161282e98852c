// The one-head model beside the loaded English model on the reader's text (the head-count
// experiment of experiments.js): the sweep's one-head model, loaded when asked (its file fetched
// when served, its script from file://), both run on the text, every head's grid and both held-out
// losses drawn.
import { el, h } from '../../draw/dom.js';
import { modelBytes } from '../trained/model_bytes.js';
import { paintThumb } from '../trained/model_grids.js';
import { fmt } from './experiments_view.js';
import { formatProbability, nextPieceLabel } from './english_view.js';

export class OneHeadComparison {
  /**
   * @param {{oneHead: any, sweep: any, heldout: string[]}} data the build's experiments
   * @param {{model: () => any, mod: () => any, text: () => string, modules: object}} hooks
   */
  constructor(data, hooks) {
    this.data = data;
    this.hooks = hooks;
    /** The one-head EnglishModel, once loaded. */
    this.model = null;
  }

  /** Its parts: a note, the button, a status line and the figures (none when the build has no such model). */
  parts() {
    const src = this.data.oneHead;
    if (!src) return [];
    const button = h('button', {
      className: 'en-button',
      id: 'english-exp-one-head',
      text: 'Compare on the text above: the one-head model beside this one',
      attrs: { type: 'button' },
    });
    const out = h('div', { className: 'en-exp-compare', id: 'english-exp-compare' });
    const status = h('p', { className: 'help', attrs: { 'aria-live': 'polite' } });
    button.addEventListener('click', async () => {
      status.textContent = 'Loading the one-head model…';
      try {
        await this.compare(out);
        status.textContent = '';
      } catch (e) {
        status.textContent = `Could not compare: ${e.message}`;
      }
    });
    const steps = this.data.sweep?.steps;
    return [
      el(
        'p',
        'help',
        'Module 08’s challenge: one head instead of eight at the same d_model keeps the attention’s parameters. ' +
          `The one-head model of this sweep (${steps} steps; ${src.bytes.toLocaleString('en-US')} bytes, loaded when asked) ` +
          'beside the model above (eight heads, trained longer): their grids on your text show what one head a layer can hold; ' +
          'compare their losses in the table above, where both trained the same steps.',
      ),
      button,
      status,
      out,
    ];
  }

  /** Loads the one-head model (once) and draws both models on the text above into `out`. */
  async compare(out) {
    const src = this.data.oneHead;
    if (!this.model) {
      const { bytes } = await modelBytes(
        { file: src.file, script: src.script, global: src.global, heads: src.heads },
        this.hooks.modules,
      );
      this.model = new (this.hooks.mod().EnglishModel)(bytes);
    }
    const text = this.hooks.text();
    const models = [
      { name: 'this model', model: this.hooks.model() },
      {
        name: `one head a layer (the sweep’s, ${this.data.sweep?.steps} steps)`,
        model: this.model,
      },
    ];
    out.replaceChildren();
    for (const { name, model } of models) {
      const r = model.run(text, { top: 3 });
      const held = model.heldoutLoss(this.data.heldout);
      const c = model.config;
      const fig = h('figure', { className: 'en-exp-model', data: { heads: c.num_heads } });
      fig.append(
        h('figcaption', {
          text:
            `${name}: ${c.num_layers} layers × ${c.num_heads} head${c.num_heads === 1 ? '' : 's'} ` +
            `(d_head ${c.d_model / c.num_heads}); held-out loss ${fmt(held.perCharacter)} nats per character; ` +
            `next piece: ${r.nextToken.map((t) => `“${nextPieceLabel(t.token)}” ${formatProbability(t.probability)}`).join(', ')}`,
        }),
      );
      fig.dataset.loss = String(held.perCharacter);
      const size = Math.max(48, Math.min(120, Math.floor(640 / c.num_heads)));
      for (const a of r.attention) {
        const row = h('div', { className: 'en-exp-layer' }, h('span', { text: `L${a.layer}` }));
        for (let k = 0; k < c.num_heads; k++) {
          const canvas = h('canvas', {
            className: 'en-exp-thumb',
            attrs: { role: 'img', 'aria-label': `${name}, layer ${a.layer} head ${k}` },
          });
          paintThumb(canvas, a.weights, k, r.n, r.n, size, size);
          row.append(canvas);
        }
        fig.append(row);
      }
      out.append(fig);
    }
  }
}
