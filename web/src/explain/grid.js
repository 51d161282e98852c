// One extra grid for the explain views: a HeadHeatmap canvas, its hidden table twin, in a figure.
// Never marked data-head (the page's own grids are found by [data-head]); `data` names it instead.
import { h } from './dom.js';
import { HeadHeatmap } from '../draw/heatmap.js';
import { headTable } from '../draw/table.js';
import { MAX_TABLE_TOKENS } from '../draw/tables.js';

/**
 * @param {object} p
 * @param {import('../draw/labels.js').LabelCache} p.labels the page's label cache
 * @param {object} p.result {n, m, attn_weights, fully_masked_rows} (head `head` of a stack)
 * @param {number} [p.head] which head of result.attn_weights (default 0)
 * @param {string[]} p.tokens row labels, @param {string[]} [p.keyTokens] column labels
 * @param {string} p.name the grid's accessible name and the table's caption title
 * @param {Node|string} [p.caption] the figure caption (default: the name)
 * @param {object} p.data data-* attributes for the figure, canvas and table (e.g. {combined: 'mean'})
 * @param {string} [p.className] the figure's class
 * @param {string} [p.tableNote] the table caption's note (default: rows and columns, rows sum to 1)
 * @returns {{figure: HTMLElement, heatmap: HeadHeatmap}} call heatmap.resize(width, theme) once placed
 */
export function gridFigure({
  labels,
  result,
  head = 0,
  tokens,
  keyTokens,
  name,
  caption,
  data,
  className = 'explain-grid',
  tableNote,
}) {
  const heatmap = new HeadHeatmap({
    labels,
    head,
    result,
    tokens,
    keyTokens,
    name,
    onSelect: (sel) => heatmap.setSelection(sel),
  });
  delete heatmap.canvas.dataset.head;
  Object.assign(heatmap.canvas.dataset, stringify(data));
  // The hidden table twin, as under the page's own grids: none beyond MAX_TABLE_TOKENS (a file
  // may hold hundreds of tokens; the grid's keyboard readout gives every value then).
  let twin;
  if (Math.max(result.n, result.m) > MAX_TABLE_TOKENS) {
    twin = h('p', {
      text: `No table for more than ${MAX_TABLE_TOKENS} tokens: focus the grid and use the arrow keys.`,
    });
  } else {
    twin = headTable(
      head,
      result.attn_weights,
      result.fully_masked_rows,
      tokens,
      keyTokens ?? tokens,
      { title: name },
    );
    delete twin.dataset.head;
    Object.assign(twin.dataset, stringify(data));
    if (tableNote) twin.caption.lastChild.textContent = ` (${tableNote})`;
  }
  const figure = h(
    'figure',
    { className, data },
    h('figcaption', {}, caption ?? name),
    h('div', { className: 'grid-scroll' }, heatmap.element),
    h('div', { className: 'visually-hidden table-holder' }, twin),
  );
  return { figure, heatmap };
}

function stringify(data) {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, String(v)]));
}
