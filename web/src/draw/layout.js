// Geometry of one head's grid on its canvas, in CSS pixels. Pure: tested in tests/web.
//
//   +---------------------------------------+
//   |              column labels (keys)     |  originY = height of the column-label band
//   | row labels |  cell (0,0) ... (0,m-1)  |
//   | (queries)  |  ...                     |
//   |            |  (n-1,0) ... (n-1,m-1)   |
//   +---------------------------------------+
//   originX = width of the row-label band.

/** A cell is never smaller than this, so one label per row / column never overlaps the next. */
export const MIN_CELL = 14;
/** Nor larger than this, so a short sentence stays a compact grid. */
export const MAX_CELL = 44;
export const FONT_PX = 12;
export const LABEL_GAP = 6;
/** Room around the grid for the highlight outline. */
export const OUTLINE_PAD = 3;
/**
 * Beyond this many tokens a side a grid is drawn compact (large inputs): no labels (they
 * could not be read), cells as small as the width needs (a fraction of a pixel for 2048 tokens;
 * lod.js pools them), the grid at most COMPACT_MAX_SIDE CSS px so that several heads fit a row.
 * The readout and the keyboard still give each cell's tokens and weight.
 */
export const LABELLED_MAX_TOKENS = 64;
export const COMPACT_MAX_SIDE = 560;

/**
 * @param {object} p
 * @param {number} p.n query tokens (rows), p.m key tokens (columns)
 * @param {number} p.rowLabelWidth widest row label, CSS px (measured by the caller)
 * @param {number} p.colLabelWidth widest column label, CSS px
 * @param {number} p.availableWidth width the grid may use, CSS px
 * @returns {{cell: number, originX: number, originY: number, width: number, height: number,
 *            rotateColumns: boolean, labels: boolean}}
 */
export function gridLayout({ n, m, rowLabelWidth, colLabelWidth, availableWidth }) {
  if (Math.max(n, m) > LABELLED_MAX_TOKENS) {
    const side = Math.max(64, Math.min(COMPACT_MAX_SIDE, availableWidth - 2 * OUTLINE_PAD));
    const cell = side / Math.max(n, m);
    return {
      cell,
      originX: OUTLINE_PAD,
      originY: OUTLINE_PAD,
      width: Math.ceil(m * cell) + 2 * OUTLINE_PAD,
      height: Math.ceil(n * cell) + 2 * OUTLINE_PAD,
      rotateColumns: false,
      labels: false,
    };
  }
  const originX = Math.ceil(rowLabelWidth) + LABEL_GAP + OUTLINE_PAD;
  const room = Math.floor((availableWidth - originX - OUTLINE_PAD) / m);
  const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, room));
  // Column labels are written across when every one fits its cell, else turned a quarter
  // (reading upwards): a turned label is FONT_PX tall, and cell >= MIN_CELL > FONT_PX.
  const rotateColumns = Math.ceil(colLabelWidth) + 4 > cell;
  const band = rotateColumns ? Math.ceil(colLabelWidth) : FONT_PX + 2;
  const originY = band + LABEL_GAP + OUTLINE_PAD;
  return {
    cell,
    originX,
    originY,
    width: originX + m * cell + OUTLINE_PAD,
    height: originY + n * cell + OUTLINE_PAD,
    rotateColumns,
    labels: true,
  };
}

/** The cell under point (x, y) in CSS px relative to the canvas, or null. */
export function cellAt(layout, n, m, x, y) {
  const col = Math.floor((x - layout.originX) / layout.cell);
  const row = Math.floor((y - layout.originY) / layout.cell);
  if (row < 0 || col < 0 || row >= n || col >= m) return null;
  return { row, col };
}

/** The cell reached from (row, col) by a navigation key, or null for other keys. */
export function moveCell(key, row, col, n, m) {
  const clamp = (v, hi) => Math.max(0, Math.min(hi, v));
  switch (key) {
    case 'ArrowUp': return { row: clamp(row - 1, n - 1), col };
    case 'ArrowDown': return { row: clamp(row + 1, n - 1), col };
    case 'ArrowLeft': return { row, col: clamp(col - 1, m - 1) };
    case 'ArrowRight': return { row, col: clamp(col + 1, m - 1) };
    case 'Home': return { row, col: 0 };
    case 'End': return { row, col: m - 1 };
    case 'PageUp': return { row: 0, col };
    case 'PageDown': return { row: n - 1, col };
    default: return null;
  }
}
