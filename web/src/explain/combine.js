// Combined views of all heads, each labelled with its formula: the mean over heads (what
// PyTorch's nn.MultiheadAttention returns by default) and the max over heads, computed by the
// core (meanOverHeads / maxOverHeads), drawn as one more grid.
import { h } from './dom.js';
import { HeadHeatmap, readTheme } from '../heatmap.js';
import { headTable } from '../table.js';

export const COMBINATIONS = Object.freeze({
  mean: Object.freeze({
    label: 'Mean over heads',
    formula: '(1/h) Σₖ Aₖ(i, j)',
    note: 'What PyTorch’s nn.MultiheadAttention returns by default (average_attn_weights=True). It hides ' +
      'specialised heads: a head that alone looks at one key contributes only 1/h of that key’s weight.',
  }),
  max: Object.freeze({
    label: 'Max over heads',
    formula: 'maxₖ Aₖ(i, j)',
    note: 'Every key that some head looks at stands out. Not a distribution: a row sums to between 1 and h.',
  }),
});

/**
 * @param {Element} container
 * @param {{kind: 'mean'|'max', matrix: Float32Array, n: number, m: number, tokens: string[],
 *          keyTokens?: string[], numHeads: number, onKind: (kind: string) => void}} p
 *   matrix: the core's (n, m) combination
 */
export function renderCombined(container, { kind, matrix, n, m, tokens, keyTokens = tokens, numHeads, onKind }) {
  const c = COMBINATIONS[kind];
  const group = h('fieldset', { className: 'combine-kinds' }, h('legend', { text: 'Combine the heads by' }));
  for (const [key, spec] of Object.entries(COMBINATIONS)) {
    const id = `combine-${key}-${Math.random().toString(36).slice(2, 7)}`;
    const radio = h('input', { id, attrs: { type: 'radio', name: `combine-${container.dataset.panel ?? 'x'}`, value: key } });
    radio.checked = key === kind;
    radio.addEventListener('change', () => radio.checked && onKind(key));
    group.append(h('span', { className: 'field-check' }, radio, h('label', { text: `${spec.label}: ${spec.formula}`, attrs: { for: id } })));
  }
  const result = { n, m, attn_weights: matrix, fully_masked_rows: new Uint8Array(n) };
  const name = `${c.label} (${numHeads} heads)`;
  const hm = new HeadHeatmap({ head: 0, result, tokens, keyTokens, name, onSelect: (sel) => hm.setSelection(sel) });
  delete hm.canvas.dataset.head;
  hm.canvas.dataset.combined = kind;
  const table = headTable(0, matrix, result.fully_masked_rows, tokens, keyTokens, { title: name, note: 'rows: query tokens, columns: key tokens' });
  delete table.dataset.head;
  table.dataset.combined = kind;
  // headTable's caption says rows sum to 1: true for the mean, not for the max.
  if (kind === 'max') table.caption.lastChild.textContent = ' (rows: query tokens, columns: key tokens; the largest weight any head gives)';
  const fig = h('figure', { className: 'combined-figure', data: { combined: kind } },
    h('figcaption', {}, h('strong', { text: `${c.label}: ${c.formula}` }), h('span', { className: 'help', text: ` — ${c.note}` })),
    h('div', { className: 'grid-scroll' }, hm.canvas),
    h('div', { className: 'visually-hidden table-holder' }, table));
  container.replaceChildren(group, fig);
  hm.resize(Math.max(240, Math.min(480, container.clientWidth || 480)), readTheme(container));
}
