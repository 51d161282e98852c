// The current cell of a set of head grids, and whether it is locked (clicked, tapped, or Enter).
// Hovering moves an unlocked selection only; the arrow keys move it, locked or not (a locked
// selection moves with them and stays locked); Escape clears it. No DOM: used by the page and by
// every <mha-attention> element, each with its own instance.

/** @typedef {{head: number, row: number, col: number}} Cell */

const sameCell = (a, b) =>
  a === b || Boolean(a && b && a.head === b.head && a.row === b.row && a.col === b.col);

export class CellSelection {
  /**
   * @param {(cell: Cell|null, info: {locked: boolean, reason: string}) => void} onChange
   *   called after every change (reason: 'hover', 'move', 'lock', 'unlock', 'clear', 'restore')
   */
  constructor(onChange) {
    this.onChange = onChange;
    /** @type {Cell|null} */
    this.cell = null;
    this.locked = false;
  }

  set(cell, locked, reason) {
    const c = cell ? { head: cell.head, row: cell.row, col: cell.col } : null;
    if (sameCell(c, this.cell) && locked === this.locked && reason !== 'restore') return;
    this.cell = c;
    this.locked = Boolean(c) && locked;
    this.onChange(this.cell, { locked: this.locked, reason });
  }

  /** A pointer over a cell (or off the grid: null). Ignored while locked. */
  hover(cell) {
    if (!this.locked) this.set(cell, false, 'hover');
  }

  /** Arrow keys or focus: the cell moves; a lock moves with it. */
  move(cell) {
    this.set(cell, this.locked, 'move');
  }

  /** Click, tap or Enter on `cell`: locks it, or unlocks it when it is the locked cell. */
  toggle(cell) {
    if (this.locked && sameCell(cell, this.cell)) this.set(cell, false, 'unlock');
    else this.set(cell, true, 'lock');
  }

  /** Escape: no cell, no lock. */
  clear() {
    this.set(null, false, 'clear');
  }

  /** Focus left the grids: an unlocked selection goes, a locked one stays. */
  blur() {
    if (!this.locked) this.set(null, false, 'hover');
  }

  /** Sets the cell and lock as given (e.g. from the address) and reports it. */
  restore(cell, locked) {
    this.set(cell, locked, 'restore');
  }

  /** The locked cell, or null. */
  get lockedCell() {
    return this.locked ? this.cell : null;
  }
}
