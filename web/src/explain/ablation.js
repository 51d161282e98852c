// Switching heads off: a head's output is zeroed before W_O (the core's ablated_heads), and the
// layer's output changes by ‖y_off − y‖ / ‖y‖ (Frobenius norms over the whole (n, d) output), as
// the core's ablationEffect computes it. The pure parts are tested in tests/web/explain.test.mjs.
import { h, simpleTable } from './dom.js';

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
 * @param {HTMLElement} container
 * @param {{numHeads: number, off: number[], change: (ablated: Uint8Array) => number,
 *          onChange: (off: number[]) => void}} p
 *   change: the relative change of the layer output with those heads off, from the core
 *   (ablationEffect; it throws when the output is all zero, e.g. every row fully masked)
 */
export function renderAblation(container, { numHeads, off, change, onChange }) {
  const fieldset = h(
    'fieldset',
    { className: 'ablation-switches' },
    h('legend', { text: 'Switch a head off' }),
  );
  for (let i = 0; i < numHeads; i++) {
    const id = `ablate-${i}-${Math.random().toString(36).slice(2, 7)}`;
    const box = h('input', { id, attrs: { type: 'checkbox' }, data: { ablateHead: i } });
    box.checked = off.includes(i);
    box.addEventListener('change', () => {
      const next = [...fieldset.querySelectorAll('input[data-ablate-head]')]
        .filter((b) => b.checked)
        .map((b) => Number(b.dataset.ablateHead));
      onChange(next);
    });
    fieldset.append(
      h(
        'span',
        { className: 'field-check' },
        box,
        h('label', { text: `head ${i}`, attrs: { for: id } }),
      ),
    );
  }
  let chosen = 0;
  const single = [];
  try {
    chosen = off.length ? change(ablatedList(numHeads, off)) : 0;
    for (let i = 0; i < numHeads; i++) single.push(change(ablatedList(numHeads, [i])));
  } catch (e) {
    container.replaceChildren(
      fieldset,
      h('p', { className: 'ablation-result', text: e instanceof Error ? e.message : String(e) }),
    );
    return;
  }
  const line = h(
    'p',
    { className: 'ablation-result', data: { change: chosen, off: off.join(',') } },
    off.length
      ? `With head${off.length === 1 ? '' : 's'} ${off.join(', ')} off, the layer’s output changes by ${formatPercent(chosen)} ` +
          '(‖y_off − y‖ / ‖y‖ over all tokens and features). The grids still show every head’s weights: switching off acts after the softmax.'
      : 'Every head is on. Tick a head to zero its output before W_O and see how much the layer’s output moves.',
  );
  const table = simpleTable({
    caption:
      'Each head switched off alone: relative change of the layer output (the core’s ablationEffect, float32 layer)',
    head: ['head off', '‖y_off − y‖ / ‖y‖'],
    rows: single.map((c, i) => [`head ${i}`, formatPercent(c)]),
    rowData: (i) => ({ head: i, change: single[i] }),
  });
  container.replaceChildren(fieldset, line, h('div', { className: 'table-scroll' }, table));
}
