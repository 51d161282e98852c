// Switching heads off: a head's output is zeroed before W_O (the core's ablated_heads), and the
// layer's output changes by ‖y_off − y‖ / ‖y‖ (Frobenius norms over the whole (n, d) output).
// relativeChange() is pure (tests/web/explain.test.mjs); renderAblation() places the panel.
import { h, simpleTable } from './dom.js';

/** ‖y − y0‖_F / ‖y0‖_F, in double precision; 0 when both are zero, Infinity when only y0 is. */
export function relativeChange(y, y0) {
  let num = 0;
  let den = 0;
  for (let t = 0; t < y0.length; t++) {
    const dlt = y[t] - y0[t];
    num += dlt * dlt;
    den += y0[t] * y0[t];
  }
  if (den === 0) return num === 0 ? 0 : Infinity;
  return Math.sqrt(num / den);
}

/** "12.3 %" (one decimal; below 0.05 % shown as "< 0.1 %" unless exactly 0). */
export function formatPercent(x) {
  if (x === 0) return '0 %';
  if (!Number.isFinite(x)) return '∞';
  const p = x * 100;
  return p < 0.05 ? '< 0.1 %' : `${p.toFixed(1)} %`;
}

/** A 0/1 list of h entries with 1 for each head in `off`. */
export function ablatedList(numHeads, off) {
  const out = new Uint8Array(numHeads);
  for (const x of off) if (x >= 0 && x < numHeads) out[x] = 1;
  return out;
}

/**
 * @param {Element} container
 * @param {{numHeads: number, off: number[], run: (ablated: Uint8Array) => Float32Array,
 *          base: Float32Array, onChange: (off: number[]) => void}} p
 *   run: the layer's output (n*d) with those heads switched off, from the core;
 *   base: the output with every head on.
 */
export function renderAblation(container, { numHeads, off, run, base, onChange }) {
  const fieldset = h('fieldset', { className: 'ablation-switches' }, h('legend', { text: 'Switch a head off' }));
  for (let i = 0; i < numHeads; i++) {
    const id = `ablate-${i}-${Math.random().toString(36).slice(2, 7)}`;
    const box = h('input', { id, attrs: { type: 'checkbox' }, data: { ablateHead: i } });
    box.checked = off.includes(i);
    box.addEventListener('change', () => {
      const next = [...fieldset.querySelectorAll('input[data-ablate-head]')]
        .filter((b) => b.checked).map((b) => Number(b.dataset.ablateHead));
      onChange(next);
    });
    fieldset.append(h('span', { className: 'field-check' }, box, h('label', { text: `head ${i}`, attrs: { for: id } })));
  }
  const change = off.length ? relativeChange(run(ablatedList(numHeads, off)), base) : 0;
  const line = h('p', { className: 'ablation-result', data: { change, off: off.join(',') } },
    off.length
      ? `With head${off.length === 1 ? '' : 's'} ${off.join(', ')} off, the layer’s output changes by ${formatPercent(change)} ` +
        '(‖y_off − y‖ / ‖y‖ over all tokens and features). The grids still show every head’s weights: switching off acts after the softmax.'
      : 'Every head is on. Tick a head to zero its output before W_O and see how much the layer’s output moves.');
  const single = [];
  for (let i = 0; i < numHeads; i++) single.push(relativeChange(run(ablatedList(numHeads, [i])), base));
  const table = simpleTable({
    caption: 'Each head switched off alone: relative change of the layer output',
    head: ['head off', '‖y_off − y‖ / ‖y‖'],
    rows: single.map((c, i) => [`head ${i}`, formatPercent(c)]),
    rowData: (i) => ({ head: i, change: single[i] }),
  });
  container.replaceChildren(fieldset, line, h('div', { className: 'table-scroll' }, table));
}
