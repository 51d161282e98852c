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
 * @param {number} p.n query tokens (rows)
 * @param {number} p.m key tokens (columns)
 * @param {number} p.rowLabelWidth widest row label, CSS px (measured by the caller)
 * @param {number} p.colLabelWidth widest column label, CSS px
 * @param {number} p.availableWidth width the grid may use, CSS px
 * @param {boolean} [p.labels] false: a compact grid without labels at any token count (a
 *   thumbnail of the small multiples, see smallMultiples)
 * @returns {{cell: number, originX: number, originY: number, width: number, height: number,
 *            rotateColumns: boolean, labels: boolean}}
 */
export function gridLayout({ n, m, rowLabelWidth, colLabelWidth, availableWidth, labels = true }) {
  if (!labels || Math.max(n, m) > LABELLED_MAX_TOKENS) {
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
    case 'ArrowUp':
      return { row: clamp(row - 1, n - 1), col };
    case 'ArrowDown':
      return { row: clamp(row + 1, n - 1), col };
    case 'ArrowLeft':
      return { row, col: clamp(col - 1, m - 1) };
    case 'ArrowRight':
      return { row, col: clamp(col + 1, m - 1) };
    case 'Home':
      return { row, col: 0 };
    case 'End':
      return { row, col: m - 1 };
    case 'PageUp':
      return { row: 0, col };
    case 'PageDown':
      return { row: n - 1, col };
    default:
      return null;
  }
}

/** The most heads side by side (smallMultiples). */
export const MAX_COLUMNS = 8;
/** Labelled grids are preferred while all heads fit in this many rows of them. */
export const MAX_LABELLED_ROWS = 2;
/** A thumbnail's cells are at least this many CSS px (or its side at least THUMB_MIN_SIDE). */
export const THUMB_MIN_CELL = 3;
export const THUMB_MIN_SIDE = 160;

/**
 * The small multiples: how `count` grids of n × m cells share a row `width` CSS px wide.
 * Labelled grids (cells >= MIN_CELL) are used when they all fit in MAX_LABELLED_ROWS rows; else
 * the grids are thumbnails without labels (the readout, the keyboard and an enlarged grid still
 * name every cell), as many to a row as keep cells >= THUMB_MIN_CELL, up to MAX_COLUMNS; the
 * rows then as even as the count allows.
 * @param {object} p
 * @param {number} p.count grids (heads, or layers × heads)
 * @param {number} p.n rows of each grid
 * @param {number} p.m its columns
 * @param {number} p.width the row's content width, CSS px
 * @param {number} [p.labelWidth] the widest row label, CSS px (a labelled grid's label band)
 * @param {number} [p.gap] space between two grids, CSS px
 * @param {number} [p.framePad] what each grid's frame adds to its width (padding, border), CSS px
 * @param {number} [p.maxColumns]
 * @returns {{columns: number, rows: number, available: number, labels: boolean}} columns and
 *   rows of grids, the width each grid may use (gridLayout's availableWidth), whether labelled
 */
export function smallMultiples({
  count,
  n,
  m,
  width,
  labelWidth = 0,
  gap = 16,
  framePad = 18,
  maxColumns = MAX_COLUMNS,
}) {
  if (!(count >= 1) || !(n >= 1) || !(m >= 1) || !(width > 0)) {
    throw new RangeError(
      `smallMultiples: count ${count}, n ${n}, m ${m}, width ${width} must be positive`,
    );
  }
  const most = Math.max(1, Math.min(count, maxColumns));
  const per = (c) => Math.floor((width - (c - 1) * gap) / c) - framePad;
  // Rows as even as the count allows (8 heads that fit 7 to a row: two rows of 4).
  const result = (most, labels) => {
    const rows = Math.ceil(count / most);
    const columns = Math.ceil(count / rows);
    return { columns, rows, available: Math.max(64, per(columns)), labels };
  };
  if (Math.max(n, m) <= LABELLED_MAX_TOKENS) {
    const need = Math.ceil(labelWidth) + LABEL_GAP + 2 * OUTLINE_PAD + m * MIN_CELL;
    let c = most;
    while (c > 1 && per(c) < need) c--;
    if (Math.ceil(count / c) <= MAX_LABELLED_ROWS || count === 1) return result(c, true);
  }
  const side = Math.min(THUMB_MIN_SIDE, THUMB_MIN_CELL * Math.max(n, m)) + 2 * OUTLINE_PAD;
  let c = most;
  while (c > 1 && per(c) < side) c--;
  return result(c, false);
}

/** Cell numbers: the font (CSS px) and the cell sizes from which "0.42" and ".42" fit legibly. */
export const NUMBER_FONT_PX = 11;
export const NUMBER_FULL_CELL = 30;
export const NUMBER_SHORT_CELL = 22;

/**
 * How a weight is printed in a cell `cell` CSS px wide: 'full' ("0.42"), 'short' (".42", "1.0"
 * for weights that round to 1) or null (too small to read).
 */
export function cellNumberStyle(cell) {
  if (cell >= NUMBER_FULL_CELL) return 'full';
  if (cell >= NUMBER_SHORT_CELL) return 'short';
  return null;
}

/** Weight `w` (0..1) as printed in a cell, to two decimals, in `style` (cellNumberStyle). */
export function cellNumberText(w, style) {
  if (Number.isNaN(w)) return '';
  const t = w.toFixed(2);
  if (style === 'full' || t === '1.00') return style === 'full' ? t : '1.0';
  return t.replace(/^0/, '');
}
