// How <mha-attention> shares its width between its heads' grids (the `layout` and `cell-size`
// attributes). Pure, no DOM: tested by tests/web/element_columns.test.mjs; used by element.js,
// which gives each HeadHeatmap the width returned here (gridLayout then sizes the cells).
import { LABELLED_MAX_TOKENS, MAX_CELL, MIN_CELL, OUTLINE_PAD } from '../draw/layout.js';

/**
 * Side by side, a grid's cells are at least this large when the element picks the size: a cell
 * to point at, with its row and column labels (FONT_PX 12) written beside it.
 */
export const COMFORT_CELL = 16;
/** A compact grid (more than LABELLED_MAX_TOKENS tokens a side) is at least this wide side by side. */
export const COMPACT_MIN_SIDE = 200;

/**
 * The number of columns of grids and the width each grid may use.
 *
 * - layout "stack": one grid per row, each given the whole width.
 * - layout "grid" without cellSize: the fewest rows of grids whose cells stay ≥ COMFORT_CELL
 *   (≥ COMPACT_MIN_SIDE wide for compact grids), then, for that many rows, the fewest columns (the
 *   largest cells); one column when even that does not fit.
 * - cellSize (MIN_CELL…MAX_CELL): every grid's cells are that size; as many columns as fit (at
 *   least one; a grid wider than the element scrolls sideways).
 *
 * @param {object} p
 * @param {number} p.width the heads' box, CSS px
 * @param {number} p.count how many grids
 * @param {number} p.m key tokens (columns of cells) of each grid
 * @param {number} p.labelBand CSS px of a grid's width that is not cells (row labels, gaps, outline)
 * @param {'grid'|'stack'} p.layout
 * @param {number|null} p.cellSize a fixed cell size, or null
 * @param {number} p.gap CSS px between grids
 * @param {number} p.frame CSS px each grid's frame takes (padding and border, both sides)
 * @returns {{columns: number, availableWidth: number}} availableWidth: what each grid is given
 */
export function headColumns({ width, count, m, labelBand, layout, cellSize = null, gap, frame }) {
  const per = (c) => Math.floor((width - gap * (c - 1)) / c) - frame;
  const whole = Math.max(0, per(1));
  if (count < 1) return { columns: 1, availableWidth: whole };
  if (cellSize !== null) {
    const need = labelBand + m * cellSize + OUTLINE_PAD;
    const columns =
      layout === 'stack'
        ? 1
        : Math.max(1, Math.min(count, Math.floor((width + gap) / (need + frame + gap))));
    return { columns, availableWidth: need };
  }
  if (layout === 'stack' || count === 1) return { columns: 1, availableWidth: whole };
  const compact = m > LABELLED_MAX_TOKENS;
  const fits = (c) => {
    const w = per(c);
    return compact
      ? w >= COMPACT_MIN_SIDE
      : Math.floor((w - labelBand - OUTLINE_PAD) / m) >= COMFORT_CELL;
  };
  let widest = 1;
  for (let c = 2; c <= count; c++) if (fits(c)) widest = c;
  const rows = Math.ceil(count / widest);
  const columns = Math.ceil(count / rows);
  return { columns, availableWidth: Math.max(0, per(columns)) };
}

/** The cell sizes `cell-size` accepts: whole CSS px from MIN_CELL to MAX_CELL. */
export const CELL_SIZE_RANGE = Object.freeze({ min: MIN_CELL, max: MAX_CELL });
