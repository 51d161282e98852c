// One head versus many: the same sentence, seed and d_model with num_heads = 1 beside the
// current num_heads. The caller runs the core for both (numpyExperiment) and passes the results.
import { h } from './dom.js';
import { readTheme } from '../draw/heatmap.js';
import { gridFigure } from './grid.js';

/** The comparison's caption lines (pure). */
export function compareCaptions(d, numHeads) {
  return {
    single: `num_heads = 1: one softmax per query over d_head = ${d} dimensions`,
    multi: `num_heads = ${numHeads}: ${numHeads} softmax${numHeads === 1 ? '' : 'es'} per query, each over d_head = ${d / numHeads} dimensions`,
    note:
      'Same X, same W_q, W_k, W_v, W_o (the same seeded draws) and the same 4 · d_model² parameters; only the split differs. ' +
      '(The one-head grid runs the float32 layer on them.)',
  };
}

/**
 * @param {HTMLElement} container
 * @param {{labels: object, tokens: string[], single: object, multi: object}} p the label cache;
 *   core results with 1 and h heads
 */
export function renderCompare(container, { labels, tokens, single, multi }) {
  const d = multi.d_model;
  const caps = compareCaptions(d, multi.num_heads);
  const theme = readTheme(container);
  const singleSide = h(
    'div',
    { className: 'compare-side' },
    h('p', { className: 'compare-title', text: caps.single }),
  );
  const multiSide = h(
    'div',
    { className: 'compare-side' },
    h('p', { className: 'compare-title', text: caps.multi }),
  );
  const made = [
    gridFigure({
      labels,
      result: single,
      tokens,
      name: 'One head (num_heads = 1)',
      className: 'compare-head',
      data: { compare: 'single', compareHead: 0 },
    }),
  ];
  singleSide.append(made[0].figure);
  const heads = h('div', { className: 'compare-heads' });
  for (let i = 0; i < multi.num_heads; i++) {
    const f = gridFigure({
      labels,
      result: multi,
      head: i,
      tokens,
      name: `Head ${i} of ${multi.num_heads}`,
      className: 'compare-head',
      data: { compare: 'multi', compareHead: i },
    });
    made.push(f);
    heads.append(f.figure);
  }
  multiSide.append(heads);
  container.replaceChildren(
    h('p', { className: 'help', text: caps.note }),
    h('div', { className: 'compare' }, singleSide, multiSide),
  );
  // Size after insertion: the grids fit the panel's width.
  const width = Math.max(240, container.clientWidth || 600);
  const per = Math.max(
    160,
    Math.min(360, Math.floor(width / Math.min(multi.num_heads + 1, 4)) - 24),
  );
  for (const f of made) f.heatmap.resize(per, theme);
}
