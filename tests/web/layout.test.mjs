import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  gridLayout,
  cellAt,
  moveCell,
  MIN_CELL,
  MAX_CELL,
  FONT_PX,
  COMPACT_MAX_SIDE,
  OUTLINE_PAD,
} from '../../web/src/draw/layout.js';

test('cells fill the available width between the limits', () => {
  const small = gridLayout({
    n: 5,
    m: 5,
    rowLabelWidth: 50,
    colLabelWidth: 50,
    availableWidth: 1000,
  });
  assert.equal(small.cell, MAX_CELL);
  const big = gridLayout({
    n: 64,
    m: 64,
    rowLabelWidth: 80,
    colLabelWidth: 80,
    availableWidth: 330,
  });
  assert.equal(big.cell, MIN_CELL);
  assert.ok(MIN_CELL > FONT_PX, 'one label per cell never overlaps the next');
  const mid = gridLayout({
    n: 20,
    m: 20,
    rowLabelWidth: 40,
    colLabelWidth: 40,
    availableWidth: 600,
  });
  assert.ok(mid.cell > MIN_CELL && mid.cell < MAX_CELL);
  assert.ok(mid.width <= 600);
});

test('more than 64 tokens: a compact grid without labels, fractional cells, hit testing still exact', () => {
  const l = gridLayout({
    n: 2048,
    m: 2048,
    rowLabelWidth: 0,
    colLabelWidth: 0,
    availableWidth: 1200,
  });
  assert.equal(l.labels, false);
  assert.equal(l.cell, COMPACT_MAX_SIDE / 2048);
  assert.ok(l.width <= COMPACT_MAX_SIDE + 2 * OUTLINE_PAD && l.height === l.width);
  const at = (x, y) => cellAt(l, 2048, 2048, l.originX + x, l.originY + y);
  assert.deepEqual(at(0.1, 0.1), { row: 0, col: 0 });
  assert.deepEqual(at(COMPACT_MAX_SIDE - 0.01, 280), { row: 1024, col: 2047 });
  assert.equal(at(COMPACT_MAX_SIDE + 0.5, 1), null);
  const narrow = gridLayout({
    n: 100,
    m: 65,
    rowLabelWidth: 90,
    colLabelWidth: 90,
    availableWidth: 300,
  });
  assert.equal(narrow.labels, false);
  assert.ok(narrow.width <= 300);
  assert.equal(
    gridLayout({ n: 64, m: 64, rowLabelWidth: 80, colLabelWidth: 80, availableWidth: 330 }).labels,
    true,
  );
});

test('column labels turn when they do not fit their cell', () => {
  const across = gridLayout({
    n: 3,
    m: 3,
    rowLabelWidth: 20,
    colLabelWidth: 20,
    availableWidth: 400,
  });
  assert.equal(across.rotateColumns, false);
  const turned = gridLayout({
    n: 3,
    m: 3,
    rowLabelWidth: 20,
    colLabelWidth: 60,
    availableWidth: 400,
  });
  assert.equal(turned.rotateColumns, true);
  assert.ok(turned.originY >= 60, 'the band holds the longest turned label');
});

test('cellAt maps points to cells and rejects the margins', () => {
  const l = gridLayout({ n: 4, m: 6, rowLabelWidth: 30, colLabelWidth: 10, availableWidth: 400 });
  const at = (r, c) =>
    cellAt(l, 4, 6, l.originX + (c + 0.5) * l.cell, l.originY + (r + 0.5) * l.cell);
  assert.deepEqual(at(0, 0), { row: 0, col: 0 });
  assert.deepEqual(at(3, 5), { row: 3, col: 5 });
  assert.equal(cellAt(l, 4, 6, l.originX - 1, l.originY + 1), null);
  assert.equal(cellAt(l, 4, 6, l.originX + 1, l.originY + 4 * l.cell + 1), null);
});

test('keyboard moves stay inside the grid', () => {
  assert.deepEqual(moveCell('ArrowRight', 0, 0, 3, 3), { row: 0, col: 1 });
  assert.deepEqual(moveCell('ArrowLeft', 0, 0, 3, 3), { row: 0, col: 0 });
  assert.deepEqual(moveCell('ArrowDown', 2, 1, 3, 3), { row: 2, col: 1 });
  assert.deepEqual(moveCell('End', 1, 0, 3, 5), { row: 1, col: 4 });
  assert.deepEqual(moveCell('PageUp', 2, 2, 3, 3), { row: 0, col: 2 });
  assert.equal(moveCell('a', 0, 0, 3, 3), null);
});

test('small multiples: labelled grids side by side while they fit two rows, else thumbnails', async () => {
  const { smallMultiples, MAX_COLUMNS, THUMB_MIN_CELL, LABEL_GAP } = await import(
    '../../web/src/draw/layout.js'
  );
  // Module 03's example: 4 heads of 11 tokens in a 1248 px row: all four labelled, in one row.
  const four = smallMultiples({ count: 4, n: 11, m: 11, width: 1248, labelWidth: 60 });
  assert.deepEqual([four.columns, four.rows, four.labels], [4, 1, true]);
  assert.equal(four.available, Math.floor((1248 - 3 * 16) / 4) - 18);
  // The labelled grid fits the width it is given, at cells of at least MIN_CELL.
  const g = gridLayout({
    n: 11,
    m: 11,
    rowLabelWidth: 60,
    colLabelWidth: 60,
    availableWidth: four.available,
  });
  assert.ok(g.cell >= MIN_CELL && g.width <= four.available && g.labels);
  // 8 heads of 16 tokens at 1248 px: 4 labelled a row, 2 rows.
  const eight = smallMultiples({ count: 8, n: 16, m: 16, width: 1248, labelWidth: 20 });
  assert.deepEqual([eight.columns, eight.rows, eight.labels], [4, 2, true]);
  // 8 heads of 32 tokens: labelled would take 8 rows: thumbnails, all 8 in one row.
  const thumbs = smallMultiples({ count: 8, n: 32, m: 32, width: 1248, labelWidth: 60 });
  assert.deepEqual([thumbs.columns, thumbs.rows, thumbs.labels], [MAX_COLUMNS, 1, false]);
  assert.ok(thumbs.available >= THUMB_MIN_CELL * 32);
  // One head takes the whole width; a phone fits two labelled 5-token grids a row.
  assert.deepEqual(
    smallMultiples({ count: 1, n: 40, m: 40, width: 600, labelWidth: 60 }).columns,
    1,
  );
  const phone = smallMultiples({ count: 2, n: 5, m: 5, width: 340, labelWidth: 60 });
  assert.deepEqual([phone.columns, phone.labels], [2, true]);
  assert.ok(phone.available >= 60 + LABEL_GAP + 5 * MIN_CELL);
  // Rows as even as possible: 8 that fit 7 a row are two rows of 4.
  const even = smallMultiples({ count: 8, n: 40, m: 40, width: 1000, labelWidth: 60 });
  assert.deepEqual([even.columns, even.rows], [4, 2]);
  assert.throws(() => smallMultiples({ count: 0, n: 5, m: 5, width: 100 }), /count 0/);
  assert.throws(() => smallMultiples({ count: 2, n: 5, m: 5, width: NaN }), /width NaN/);
});

test('thumbnails: gridLayout without labels at any token count', () => {
  const l = gridLayout({
    n: 16,
    m: 16,
    rowLabelWidth: 50,
    colLabelWidth: 50,
    availableWidth: 136,
    labels: false,
  });
  assert.equal(l.labels, false);
  assert.equal(l.cell, (136 - 2 * OUTLINE_PAD) / 16);
  assert.equal(l.originX, OUTLINE_PAD);
});

test('numbers in cells: printed from 22 px cells, two decimals', async () => {
  const { cellNumberStyle, cellNumberText } = await import('../../web/src/draw/layout.js');
  assert.equal(cellNumberStyle(44), 'full');
  assert.equal(cellNumberStyle(30), 'full');
  assert.equal(cellNumberStyle(29), 'short');
  assert.equal(cellNumberStyle(22), 'short');
  assert.equal(cellNumberStyle(21), null);
  assert.equal(cellNumberStyle(MIN_CELL), null);
  assert.equal(cellNumberText(0.424, 'full'), '0.42');
  assert.equal(cellNumberText(0.576, 'full'), '0.58');
  assert.equal(cellNumberText(0.424, 'short'), '.42');
  assert.equal(cellNumberText(0, 'short'), '.00');
  assert.equal(cellNumberText(0.999, 'short'), '1.0');
  assert.equal(cellNumberText(1, 'full'), '1.00');
  assert.equal(cellNumberText(NaN, 'full'), '');
});
