// The explain panels' element builder (h, from draw/dom.js: the page's one) and their tables.
import { h } from '../draw/dom.js';

export { h };

/** A table with a caption, one header row and body rows of cell texts (first cell a row header). */
export function simpleTable({ caption, head, rows, className = 'explain-table', rowData }) {
  const table = h('table', { className });
  if (caption) table.createCaption().textContent = caption;
  const thead = table.createTHead().insertRow();
  for (const t of head) thead.append(h('th', { text: t, attrs: { scope: 'col' } }));
  const body = table.createTBody();
  rows.forEach((cells, r) => {
    const tr = body.insertRow();
    if (rowData) Object.assign(tr.dataset, rowData(r));
    cells.forEach((t, c) => {
      const cell = c === 0 ? h('th', { text: t, attrs: { scope: 'row' } }) : h('td', { text: t });
      tr.append(cell);
    });
  });
  return table;
}
