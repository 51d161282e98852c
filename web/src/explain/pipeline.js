// Module 08's pipeline with the current shapes filled in: X → fused QKV (one d × 3d matrix,
// module 03) → Q, K, V split into h chunks → per-head attention → concat → W_O.
// pipelineStages() is pure (tests/web/explain.test.mjs); renderPipeline() places it.
import { h } from './dom.js';

/** How many per-head columns to draw before eliding the middle ones. */
export const MAX_DRAWN_HEADS = 4;

/** The heads drawn as columns: all when h <= 4, else 0, 1, …, h-2, h-1 with a gap marker (null). */
export function drawnHeads(numHeads) {
  if (numHeads <= MAX_DRAWN_HEADS) return [...Array(numHeads).keys()];
  return [0, 1, null, numHeads - 1];
}

/**
 * The stages as text, with shapes for n tokens, d = d_model, h heads (d_head = d / h).
 * @returns {{key: string, label: string, shape: string, note: string}[]}
 */
export function pipelineStages(n, d, numHeads) {
  const dh = d / numHeads;
  return [
    {
      key: 'x',
      label: 'X',
      shape: `(${n}, ${d})`,
      note: `one row per token (module 08: row i of randn(n, d_model))`,
    },
    {
      key: 'qkv',
      label: 'X @ W_qkv',
      shape: `(${n}, ${d}) @ (${d}, ${3 * d}) → (${n}, ${3 * d})`,
      note: `one fused d × 3d matrix holds W_q, W_k, W_v side by side (module 03); PyTorch stores it as in_proj_weight (${3 * d}, ${d})`,
    },
    {
      key: 'split3',
      label: 'Q, K, V',
      shape: `3 × (${n}, ${d})`,
      note: 'the three column blocks of the fused product',
    },
    {
      key: 'split',
      label: `split into ${numHeads} head${numHeads === 1 ? '' : 's'}`,
      shape: `${numHeads} × (${n}, ${dh}) each`,
      note: `head i takes columns i·${dh} … i·${dh} + ${dh - 1} of Q, K and V (d_head = ${d} / ${numHeads} = ${dh}; a reshape, no parameters)`,
    },
    {
      key: 'attend',
      label: 'attention per head',
      shape: `softmax((${n}, ${dh}) @ (${dh}, ${n}) / √${dh}) @ (${n}, ${dh}) → (${n}, ${dh})`,
      note: `${numHeads} independent softmaxes, each over a ${dh}-dimensional subspace`,
    },
    {
      key: 'concat',
      label: 'concat',
      shape: `${numHeads} × (${n}, ${dh}) → (${n}, ${d})`,
      note: 'the head outputs side by side (a reshape, no parameters)',
    },
    {
      key: 'wo',
      label: '@ W_O',
      shape: `(${n}, ${d}) @ (${d}, ${d}) → (${n}, ${d})`,
      note: 'the output projection mixes the heads (PyTorch: out_proj)',
    },
    { key: 'out', label: 'output', shape: `(${n}, ${d})`, note: 'the layer’s output' },
  ];
}

/** Draws the stages as a flow, with one column per (drawn) head for the split and attention. */
export function renderPipeline(container, { n, d_model: d, num_heads: numHeads }) {
  const stages = pipelineStages(n, d, numHeads);
  const dh = d / numHeads;
  const list = h('ol', {
    className: 'pipeline',
    attrs: { 'aria-label': 'Multi-head attention, stage by stage, with the current shapes' },
  });
  for (const s of stages) {
    const item = h(
      'li',
      { className: 'pipeline-stage', data: { stage: s.key } },
      h('span', { className: 'pipeline-label', text: s.label }),
      h('code', { className: 'pipeline-shape', text: s.shape }),
      h('span', { className: 'pipeline-note help', text: s.note }),
    );
    if (s.key === 'split' || s.key === 'attend') {
      const heads = h('ul', {
        className: 'pipeline-heads',
        attrs: { 'aria-label': `the ${numHeads} heads` },
      });
      for (const i of drawnHeads(numHeads)) {
        heads.append(
          i === null
            ? h('li', { className: 'pipeline-head gap', text: `… ${numHeads - 3} more` })
            : h(
                'li',
                { className: 'pipeline-head', data: { head: i } },
                s.key === 'split'
                  ? `Q_${i}, K_${i}, V_${i} (${n}, ${dh})`
                  : `out_head${i} (${n}, ${dh})`,
              ),
        );
      }
      item.append(heads);
    }
    list.append(item);
  }
  container.replaceChildren(list);
}
