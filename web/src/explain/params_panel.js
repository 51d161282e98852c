// The parameter panel: 4d² (+4d with biases) broken down by matrix, a table over every valid
// num_heads for the current d_model (the core's count for each: it never changes), and a field
// to try any num_heads (an invalid one shows the core's divisibility error).
// parameterBreakdown() and validHeadCounts() are pure (tests/web/explain.test.mjs).
import { h, simpleTable } from './dom.js';
import { formatCount } from '../draw/format.js';

/**
 * Each matrix of nn.MultiheadAttention(d, h) with its shape and size (PyTorch names), for d = d_model.
 * @returns {{name: string, shape: string, count: number, bias: boolean}[]}
 */
export function parameterBreakdown(d) {
  return [
    { name: 'W_Q (in_proj_weight rows 0 … d−1)', shape: `${d} × ${d}`, count: d * d, bias: false },
    { name: 'W_K (in_proj_weight rows d … 2d−1)', shape: `${d} × ${d}`, count: d * d, bias: false },
    {
      name: 'W_V (in_proj_weight rows 2d … 3d−1)',
      shape: `${d} × ${d}`,
      count: d * d,
      bias: false,
    },
    { name: 'W_O (out_proj.weight)', shape: `${d} × ${d}`, count: d * d, bias: false },
    { name: 'in_proj_bias (b_Q, b_K, b_V)', shape: `${3 * d}`, count: 3 * d, bias: true },
    { name: 'out_proj.bias', shape: `${d}`, count: d, bias: true },
  ];
}

/** Every num_heads that divides d, from 1 up to maxHeads (the core's limit). */
export function validHeadCounts(d, maxHeads) {
  const out = [];
  for (let k = 1; k <= Math.min(d, maxHeads); k++) if (d % k === 0) out.push(k);
  return out;
}

/**
 * @param {HTMLElement} container
 * @param {{d_model: number, num_heads: number, count: (req: object) => number, maxHeads: number}} p
 *   count: the core's parameterCount (throws an Error naming the values for an invalid num_heads)
 */
export function renderParams(container, { d_model: d, num_heads: numHeads, count, maxHeads }) {
  const rows = parameterBreakdown(d);
  const without = count({ d_model: d, num_heads: numHeads });
  const withBias = count({ d_model: d, num_heads: numHeads, bias: true });
  const breakdown = simpleTable({
    caption: `Parameters of one layer, d_model = ${d} (num_heads does not appear)`,
    head: ['matrix', 'shape', 'parameters'],
    rows: [
      ...rows.map((r) => [r.name, r.shape, formatCount(r.count)]),
      ['total without biases: 4 · d_model²', '', formatCount(without)],
      ['total with biases: 4 · d_model² + 4 · d_model', '', formatCount(withBias)],
    ],
    rowData: (i) =>
      i < rows.length ? { part: i } : { total: i === rows.length ? 'no-bias' : 'bias' },
  });
  const heads = validHeadCounts(d, maxHeads);
  const perHead = simpleTable({
    caption: `Every valid num_heads for d_model = ${d}: the count from the core, per head count`,
    head: ['num_heads', 'd_head', 'parameters (no bias)', 'with biases'],
    rows: heads.map((k) => [
      String(k),
      String(d / k),
      formatCount(count({ d_model: d, num_heads: k })),
      formatCount(count({ d_model: d, num_heads: k, bias: true })),
    ]),
    rowData: (i) => ({ heads: heads[i], count: count({ d_model: d, num_heads: heads[i] }) }),
  });
  perHead.classList.add('params-by-heads');
  const allSame = heads.every((k) => count({ d_model: d, num_heads: k }) === without);
  const verdict = h(
    'p',
    { className: 'params-verdict', data: { same: allSame } },
    allSame
      ? `The same ${formatCount(without)} for all ${heads.length} valid head counts: splitting happens after the projections, as a reshape.`
      : 'The counts differ between head counts — this contradicts module 08.',
  );

  const tryId = `params-try-${Math.random().toString(36).slice(2, 8)}`;
  const input = h('input', {
    id: tryId,
    attrs: { type: 'number', inputmode: 'numeric', min: '1', step: '1', value: String(numHeads) },
  });
  const out = h('output', {
    className: 'params-try-out',
    attrs: { for: tryId, 'aria-live': 'polite' },
  });
  const show = () => {
    const raw = input.value.trim();
    const k = Number(raw);
    if (!/^\d+$/.test(raw)) {
      out.textContent = `num_heads=${raw || '(empty)'} is not a whole number.`;
      out.dataset.ok = 'false';
      return;
    }
    try {
      out.textContent = `num_heads=${k}: d_head = ${d / k}, ${formatCount(count({ d_model: d, num_heads: k }))} parameters.`;
      out.dataset.ok = 'true';
    } catch (e) {
      out.textContent = e instanceof Error ? e.message : String(e);
      out.dataset.ok = 'false';
    }
  };
  input.addEventListener('input', show);
  show();
  const tryRow = h(
    'div',
    { className: 'params-try' },
    h('label', { text: `Try a num_heads for d_model = ${d}`, attrs: { for: tryId } }),
    input,
    out,
  );
  container.replaceChildren(
    h('div', { className: 'table-scroll' }, breakdown),
    verdict,
    tryRow,
    h('div', { className: 'table-scroll' }, perHead),
  );
}
