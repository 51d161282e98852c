// A tiny DOM builder for the explain panels: text via textContent only (tokens come from users
// and URLs), attributes via setAttribute, no inline styles (the page runs under style-src 'self').

/**
 * h('p', {className: 'x', text: 'hello', data: {step: 'dot'}, attrs: {scope: 'row'}}, ...children)
 * Children: nodes or strings (strings become text nodes); null/false are skipped.
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = String(props.text);
  if (props.id) node.id = props.id;
  for (const [k, v] of Object.entries(props.data ?? {})) node.dataset[k] = String(v);
  for (const [k, v] of Object.entries(props.attrs ?? {})) node.setAttribute(k, String(v));
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return node;
}

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
