// Each head's weights as an HTML table: the accessible (and testable) twin of its canvas.
// Built with DOM nodes and textContent only: tokens come from users and URLs.
import { formatWeight } from './format.js';

/**
 * @param {number} head index
 * @param {Float32Array} weights (h, n, m) row-major
 * @param {Uint8Array} maskedRows (h, n): 1 where every key of the row is masked
 * @param {string[]} queryTokens n labels, @param {string[]} keyTokens m labels
 * @param {{title?: string, note?: string}} [text] the caption's title and the note after it
 * @returns {HTMLTableElement} (to be placed in a .visually-hidden wrapper: a table itself
 *   grows to its content whatever its CSS width, and would widen the page)
 */
export function headTable(head, weights, maskedRows, queryTokens, keyTokens, text = {}) {
  return runToEnd(headTableSteps(head, weights, maskedRows, queryTokens, keyTokens, text));
}

/** Runs a generator of steps (headTableSteps) to its end: its return value. */
export function runToEnd(steps) {
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/** Rows of a table built per step of headTableSteps: 512 cells of a 64 x 64 table, well inside tables.js's SLICE_MS. */
export const TABLE_STEP_ROWS = 8;

/**
 * headTable in steps, for building it between other work (tables.js): a generator that yields
 * after every TABLE_STEP_ROWS rows and returns the finished table (the same as headTable's).
 */
export function* headTableSteps(head, weights, maskedRows, queryTokens, keyTokens, text = {}) {
  const n = queryTokens.length;
  const m = keyTokens.length;
  const table = document.createElement('table');
  table.className = 'weights-table';
  table.dataset.head = String(head);

  const caption = table.createCaption();
  caption.textContent = text.title ?? `Head ${head} attention weights`;
  const note = document.createElement('span');
  note.textContent = ` (${text.note ?? 'rows: query tokens, columns: key tokens'}; each row sums to 1)`;
  caption.append(note);

  const thead = table.createTHead();
  const hr = thead.insertRow();
  const corner = document.createElement('td');
  hr.append(corner);
  keyTokens.forEach((tok, j) => hr.append(headerCell('col', tok, j)));

  const tbody = table.createTBody();
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % TABLE_STEP_ROWS === 0) yield;
    const tr = tbody.insertRow();
    tr.dataset.row = String(i);
    const masked = maskedRows[head * n + i] === 1;
    const th = headerCell('row', queryTokens[i], i);
    if (masked) {
      tr.dataset.masked = 'true';
      th.append(' (every key masked)');
    }
    tr.append(th);
    const base = (head * n + i) * m;
    for (let j = 0; j < m; j++) {
      const td = document.createElement('td');
      const w = weights[base + j];
      td.dataset.weight = String(w);
      td.textContent = formatWeight(w);
      tr.append(td);
    }
  }
  return table;
}

function headerCell(scope, token, index) {
  const th = document.createElement('th');
  th.scope = scope;
  th.dataset.index = String(index);
  th.dataset.token = token;
  th.textContent = token;
  // Repeated words ("the … the") stay distinguishable for screen-reader users.
  const pos = document.createElement('span');
  pos.className = 'position';
  pos.textContent = ` (position ${index})`;
  th.append(pos);
  return th;
}
