// One head versus many: the same sentence, seed and d_model with num_heads = 1 beside the
// current num_heads. The caller runs the core for both (numpyExperiment) and passes the results.
import { h } from './dom.js';
import { HeadHeatmap, readTheme } from '../heatmap.js';
import { headTable } from '../table.js';

/** The comparison's caption lines (pure). */
export function compareCaptions(d, numHeads) {
  return {
    single: `num_heads = 1: one softmax per query over d_head = ${d} dimensions`,
    multi: `num_heads = ${numHeads}: ${numHeads} softmax${numHeads === 1 ? '' : 'es'} per query, each over d_head = ${d / numHeads} dimensions`,
    note: 'Same X, same W_q, W_k, W_v, W_o (the same seeded draws) and the same 4 · d_model² parameters; only the split differs.',
  };
}

function figure(result, head, tokens, name, width, theme, kind) {
  const hm = new HeadHeatmap({ head, result, tokens, name, onSelect: (sel) => hm.setSelection(sel) });
  // Not data-head: the page's own grids and tables are found by [data-head].
  delete hm.canvas.dataset.head;
  hm.canvas.dataset.compare = kind;
  hm.canvas.dataset.compareHead = String(head);
  const fig = h('figure', { className: 'compare-head', data: { compare: kind, compareHead: head } },
    h('figcaption', { text: name }), h('div', { className: 'grid-scroll' }, hm.canvas));
  const hidden = h('div', { className: 'visually-hidden table-holder' });
  const table = headTable(head, result.attn_weights, result.fully_masked_rows, tokens, tokens, { title: `${name} attention weights` });
  delete table.dataset.head;
  table.dataset.compare = kind;
  table.dataset.compareHead = String(head);
  hidden.append(table);
  fig.append(hidden);
  return { fig, hm, width, theme };
}

/**
 * @param {Element} container
 * @param {{tokens: string[], single: object, multi: object}} p core results with 1 and h heads
 */
export function renderCompare(container, { tokens, single, multi }) {
  const d = multi.d_model;
  const caps = compareCaptions(d, multi.num_heads);
  const theme = readTheme(container);
  const singleSide = h('div', { className: 'compare-side' }, h('p', { className: 'compare-title', text: caps.single }));
  const multiSide = h('div', { className: 'compare-side' }, h('p', { className: 'compare-title', text: caps.multi }));
  const made = [figure(single, 0, tokens, 'One head (num_heads = 1)', 0, theme, 'single')];
  singleSide.append(made[0].fig);
  const heads = h('div', { className: 'compare-heads' });
  for (let i = 0; i < multi.num_heads; i++) {
    const f = figure(multi, i, tokens, `Head ${i} of ${multi.num_heads}`, 0, theme, 'multi');
    made.push(f);
    heads.append(f.fig);
  }
  multiSide.append(heads);
  container.replaceChildren(h('p', { className: 'help', text: caps.note }), h('div', { className: 'compare' }, singleSide, multiSide));
  // Size after insertion: the grids fit the panel's width.
  const width = Math.max(240, container.clientWidth || 600);
  const per = Math.max(160, Math.min(360, Math.floor(width / Math.min(multi.num_heads + 1, 4)) - 24));
  for (const f of made) f.hm.resize(per, theme);
}
