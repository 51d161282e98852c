// <mha-attention>'s columns of grids (web/src/element/columns.js): how many heads side by side
// and the width each grid is given, checked against gridLayout's cell for that width.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMFORT_CELL, headColumns } from '../../web/src/element/columns.js';
import { MAX_CELL, OUTLINE_PAD, gridLayout } from '../../web/src/draw/layout.js';

const base = { gap: 12, frame: 14, labelBand: 60, layout: 'grid', cellSize: null };
/** The cell gridLayout gives a grid of m columns with a row-label band of `labelBand`. */
const cellFor = (availableWidth, m, labelBand = 60) =>
  gridLayout({
    n: m,
    m,
    rowLabelWidth: labelBand - 6 - OUTLINE_PAD,
    colLabelWidth: 40,
    availableWidth,
  }).cell;

test('grid: four heads of 11 tokens in 900 px are two by two; in 1280 px one row; in 360 px one column', () => {
  const at = (width) => headColumns({ ...base, width, count: 4, m: 11 });
  const w900 = at(900);
  assert.equal(w900.columns, 2);
  assert.equal(w900.availableWidth, Math.floor((900 - 12) / 2) - 14);
  assert.ok(cellFor(w900.availableWidth, 11) >= COMFORT_CELL);
  // Three columns would also need two rows: two columns give the larger cells.
  assert.ok(cellFor(Math.floor((900 - 24) / 3) - 14, 11) < cellFor(w900.availableWidth, 11));
  const w1280 = at(1280);
  assert.equal(w1280.columns, 4);
  assert.ok(cellFor(w1280.availableWidth, 11) >= COMFORT_CELL);
  const w360 = at(360);
  assert.deepEqual(w360, { columns: 1, availableWidth: 360 - 14 });
});

test('grid balances the rows: five heads that fit three a row are three and two, not four and one', () => {
  // Four columns fit at this width, so two rows are needed; three columns also give two rows.
  const r = headColumns({ ...base, width: 4 * (60 + 11 * 21 + 3 + 14) + 3 * 12, count: 5, m: 11 });
  assert.equal(r.columns, 3);
});

test('stack: one column of the whole width; one head: the whole width', () => {
  assert.deepEqual(headColumns({ ...base, layout: 'stack', width: 1280, count: 8, m: 5 }), {
    columns: 1,
    availableWidth: 1266,
  });
  assert.deepEqual(headColumns({ ...base, width: 1280, count: 1, m: 5 }), {
    columns: 1,
    availableWidth: 1266,
  });
});

test('cell-size: every grid gets exactly that cell; as many columns as fit, at least one', () => {
  for (const size of [14, 24, MAX_CELL]) {
    const r = headColumns({ ...base, width: 900, count: 8, m: 11, cellSize: size });
    assert.equal(cellFor(r.availableWidth, 11), size, `cell-size ${size}`);
    const need = 60 + 11 * size + OUTLINE_PAD + 14;
    assert.equal(r.columns, Math.min(8, Math.floor((900 + 12) / (need + 12))));
    assert.ok(r.columns * need + (r.columns - 1) * 12 <= 900);
  }
  const narrow = headColumns({ ...base, width: 300, count: 4, m: 11, cellSize: 44 });
  assert.equal(narrow.columns, 1, 'wider than the element: one column, the grid scrolls');
  assert.equal(cellFor(narrow.availableWidth, 11), 44);
  assert.equal(
    headColumns({ ...base, layout: 'stack', width: 1280, count: 4, m: 5, cellSize: 20 }).columns,
    1,
  );
});

test('compact grids (more than 64 tokens) sit side by side when each is at least 200 px wide', () => {
  assert.equal(headColumns({ ...base, labelBand: 3, width: 900, count: 8, m: 512 }).columns, 4);
  assert.equal(headColumns({ ...base, labelBand: 3, width: 400, count: 8, m: 512 }).columns, 1);
});
