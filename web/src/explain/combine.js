// Combined views of all heads, each labelled with its formula: the mean over heads (what
// PyTorch's nn.MultiheadAttention returns by default) and the max over heads, computed by the
// core (meanOverHeads / maxOverHeads), drawn as one more grid.
import { h } from './dom.js';
import { readTheme } from '../draw/heatmap.js';
import { gridFigure } from './grid.js';

/** Attention rollout (Abnar & Zuidema 2020, §3), as the core's attentionRollout computes it. */
export const ROLLOUT_FORMULA = 'R = Â_L ⋯ Â_1, Â_l = rownorm(½ · mean_k A_l,k + ½ · I)';

export const COMBINATIONS = Object.freeze({
  mean: Object.freeze({
    label: 'Mean over heads',
    formula: '(1/h) Σₖ Aₖ(i, j)',
    note:
      'What PyTorch’s nn.MultiheadAttention returns by default (average_attn_weights=True). It hides ' +
      'specialised heads: a head that alone looks at one key contributes only 1/h of that key’s weight.',
  }),
  max: Object.freeze({
    label: 'Max over heads',
    formula: 'maxₖ Aₖ(i, j)',
    note: 'Every key that some head looks at stands out. Not a distribution: a row sums to between 1 and h.',
  }),
});

/**
 * @param {HTMLElement} container
 * @param {{labels: object, kind: 'mean'|'max', matrix: Float32Array, n: number, m: number, tokens: string[],
 *          keyTokens?: string[], numHeads: number, onKind: (kind: string) => void}} p
 *   labels: the page's label cache (draw/labels.js); matrix: the core's (n, m) combination
 */
export function renderCombined(
  container,
  { labels, kind, matrix, n, m, tokens, keyTokens = tokens, numHeads, onKind },
) {
  const c = COMBINATIONS[kind];
  const group = h(
    'fieldset',
    { className: 'combine-kinds' },
    h('legend', { text: 'Combine the heads by' }),
  );
  for (const [key, spec] of Object.entries(COMBINATIONS)) {
    const id = `combine-${key}-${Math.random().toString(36).slice(2, 7)}`;
    const radio = h('input', {
      id,
      attrs: { type: 'radio', name: `combine-${container.dataset.panel ?? 'x'}`, value: key },
    });
    radio.checked = key === kind;
    radio.addEventListener('change', () => radio.checked && onKind(key));
    group.append(
      h(
        'span',
        { className: 'field-check' },
        radio,
        h('label', { text: `${spec.label}: ${spec.formula}`, attrs: { for: id } }),
      ),
    );
  }
  const result = { n, m, attn_weights: matrix, fully_masked_rows: new Uint8Array(n) };
  const name = `${c.label} (${numHeads} heads)`;
  const { figure: fig, heatmap: hm } = gridFigure({
    labels,
    result,
    tokens,
    keyTokens,
    name,
    className: 'combined-figure',
    data: { combined: kind },
    caption: h(
      'span',
      {},
      h('strong', { text: `${c.label}: ${c.formula}` }),
      h('span', { className: 'help', text: ` — ${c.note}` }),
    ),
    // The table caption's usual note says rows sum to 1: true for the mean, not for the max.
    tableNote:
      kind === 'max'
        ? 'rows: query tokens, columns: key tokens; the largest weight any head gives'
        : 'rows: query tokens, columns: key tokens; each row sums to 1',
  });
  container.replaceChildren(group, fig);
  hm.resize(Math.max(240, Math.min(480, container.clientWidth || 480)), readTheme(container));
}
