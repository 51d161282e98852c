// The step-by-step panel for one locked cell (head h, query i, key j). Host-agnostic: it only
// writes into `container` (works inside a shadow root too).
import { h } from './dom.js';
import { stepRows } from './step.js';

/**
 * Fills `container` with the steps of one cell.
 * @param {HTMLElement} container
 * @param {object|null} e explainCell(...)'s result, or null for the hint (or for `note`)
 * @param {{queryToken?: string, keyToken?: string, maskLine?: string, note?: string}} [text] labels;
 *   `note`, when e is null: why a locked cell has no steps (yet), instead of the hint
 */
export function renderStepPanel(
  container,
  e,
  { queryToken = '', keyToken = '', maskLine = '', note = '' } = {},
) {
  if (!e) {
    container.replaceChildren(
      h('p', {
        className: 'help',
        text:
          note ||
          'Click a cell of any grid (or press Enter on it) to lock it and see how its weight is made.',
      }),
    );
    delete container.dataset.cell;
    if (note) container.dataset.note = 'true';
    else delete container.dataset.note;
    return;
  }
  delete container.dataset.note;
  container.dataset.cell = `${e.head}.${e.i}.${e.j}`;
  const title = h(
    'p',
    { className: 'step-title' },
    h('strong', {
      text: `Head ${e.head}, query ${e.i} ‘${queryToken}’ → key ${e.j} ‘${keyToken}’`,
    }),
    ` · d_head = ${e.d_head} · mask: ${maskLine}`,
  );
  const table = h('table', { className: 'explain-table step-table' });
  table.createCaption().textContent =
    'How the core turned q and k into this weight (numbers from the core’s intermediates)';
  const hr = table.createTHead().insertRow();
  for (const t of ['step', 'value', 'where it comes from'])
    hr.append(h('th', { text: t, attrs: { scope: 'col' } }));
  const body = table.createTBody();
  for (const row of stepRows(e, queryToken, keyToken)) {
    const tr = body.insertRow();
    tr.dataset.step = row.key;
    if (row.raw !== null && row.raw !== undefined) {
      tr.dataset.value = Array.isArray(row.raw) ? JSON.stringify(row.raw) : String(row.raw);
    }
    tr.append(
      h('th', { text: row.label, attrs: { scope: 'row' } }),
      h('td', {}, h('code', { className: 'step-value', text: row.value })),
      h('td', { className: 'help', text: row.detail }),
    );
  }
  container.replaceChildren(title, h('div', { className: 'table-scroll' }, table));
}
