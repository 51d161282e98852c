// The selected query row of every head as text, one line per head in the course's format
// (format.js queryRowText, module 08: "head 0 weights, token 0: [0. 0. 0.424 0.576 0. ]"),
// with a Copy button. With no selection it shows the last selected row (row 0 at first).
import { queryRowText } from './format.js';

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** numpy summarises longer arrays (format.js numpyArrayString): such rows are not printed. */
const MAX_PRINTED = 1000;

export class QueryRowText {
  /**
   * @param {Document} doc
   * @param {HTMLElement} output where the lines go (one child div per head)
   * @param {HTMLButtonElement} [copy] the Copy button (copies the lines as numpy prints them)
   */
  constructor(doc, output, copy) {
    this.doc = doc;
    this.output = output;
    this.row = 0;
    this.shown = null; // {result, row} on screen
    if (!copy) return;
    this.status = doc.createElement('span');
    this.status.className = 'query-row-status';
    this.status.setAttribute('role', 'status');
    copy.after(this.status);
    copy.addEventListener('click', () => this.copy());
  }

  /**
   * Shows query row `sel.row` (or the last one shown when sel is null) of every head of `result`
   * ({num_heads, n, m, attn_weights}: the core's weights, head h's row i at (h·n + i)·m).
   */
  show(result, sel) {
    if (sel && sel.row < result.n) this.row = sel.row;
    if (this.row >= result.n) this.row = 0;
    const { row } = this;
    if (this.shown && this.shown.result === result && this.shown.row === row) return;
    this.shown = { result, row };
    const { n, m } = result;
    // A head's own weights where the result has them (compute/split.js: no joined copy).
    const rowOf = (h) => {
      const own = result.headWeights?.[h];
      const [w, at] = own ? [own, row * m] : [result.attn_weights, (h * n + row) * m];
      return Array.prototype.slice.call(w, at, at + m);
    };
    const lines = [];
    for (let h = 0; h < result.num_heads; h++) {
      const div = this.doc.createElement('div');
      div.textContent =
        m > MAX_PRINTED
          ? `head ${h} weights, token ${row}: ${m} weights (numpy would summarise them; save the CSV for all)`
          : queryRowText(h, row, rowOf(h));
      lines.push(div);
    }
    this.output.replaceChildren(...lines);
    this.output.dataset.row = String(row);
    if (this.status) setText(this.status, '');
  }

  /** The lines as numpy prints them (padding kept), one per head. */
  text() {
    return [...this.output.children].map((d) => d.textContent).join('\n');
  }

  /** Copies the lines; where the clipboard is refused, selects them for Ctrl+C instead. */
  async copy() {
    const text = this.text();
    try {
      await navigator.clipboard.writeText(text);
      setText(this.status, 'Copied.');
    } catch {
      const range = this.doc.createRange();
      range.selectNodeContents(this.output);
      const selection = this.doc.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      setText(this.status, 'Selected: press Ctrl+C (⌘C) to copy.');
    }
  }
}
