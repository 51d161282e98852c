// Number and label formatting shared by the grids, the tables and the readout.

/** A weight in [0, 1] with 3 decimals; -0 and tiny negatives print as 0.000. */
export function formatWeight(w) {
  if (Number.isNaN(w)) return 'NaN';
  const s = w.toFixed(3);
  return s === '-0.000' ? '0.000' : s;
}

/** Integer with thin grouping (256, 1 048 576) as in the course modules. */
export function formatCount(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202F');
}

/**
 * A label that fits a canvas axis: at most `maxChars` code points, with "…" when cut.
 * (Code points, not UTF-16 units, so an emoji is never split in half.)
 */
export function truncateLabel(token, maxChars = 10) {
  const chars = Array.from(token);
  return chars.length <= maxChars ? token : chars.slice(0, maxChars - 1).join('') + '…';
}

/** The readout line: "head 0 · query 'Heads' → key 'at': 0.424". */
export function readoutText(head, queryToken, keyToken, weight) {
  return `head ${head} · query '${queryToken}' → key '${keyToken}': ${formatWeight(weight)}`;
}

/**
 * Which arithmetic the grids were computed in (the page's #precision, the element's summary):
 *   "Computed in float64, as numpy: n·d·(4d + 2n) = 1 680 multiply-adds ≤ 4M."
 *   "Computed in float32, as PyTorch: n·d·(4d + 2n) = 71 303 168 multiply-adds > 4M."
 * @param {'float64'|'float32'} precision the core's result.precision
 * @param {number} work n·d·(4d + 2n), the core's experimentWork
 */
export function precisionText(precision, work) {
  const f32 = precision === 'float32';
  return `Computed in ${precision}, as ${f32 ? 'PyTorch' : 'numpy'}: n·d·(4d + 2n) = ${formatCount(work)} multiply-adds ${f32 ? '>' : '≤'} 4M.`;
}

/** The same in a few words (the element's summary): "float64 (numpy’s dtype)". */
export function precisionNote(precision) {
  return precision === 'float32' ? 'float32 (as PyTorch; over 4M multiply-adds)' : 'float64 (numpy’s dtype)';
}
