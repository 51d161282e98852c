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
  return chars.length <= maxChars ? token : `${chars.slice(0, maxChars - 1).join('')}…`;
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
  return precision === 'float32'
    ? 'float32 (as PyTorch; over 4M multiply-adds)'
    : 'float64 (numpy’s dtype)';
}

/**
 * numpy's np.round(x, decimals): scale by 10^decimals, round half to even (rint), scale back.
 */
export function npRound(x, decimals) {
  const f = 10 ** decimals;
  const y = x * f;
  let r = Math.round(y);
  if (Math.abs(y % 1) === 0.5 && r % 2 !== 0) r -= 1;
  return r / f;
}

/**
 * One float as numpy's positional format (floatmode 'maxprec', precision 8, trim '.'):
 * the shortest digits that round-trip, at most 8 after the point; whole numbers end in ".".
 * Returns [integer part with sign, fraction digits].
 */
function npFloatParts(x) {
  let s = Object.is(x, -0) ? '-0' : String(x);
  if (/e/i.test(s) || (s.split('.')[1] ?? '').length > 8) s = x.toFixed(8).replace(/0+$/, '');
  const [int, frac = ''] = s.split('.');
  return [int, frac];
}

/**
 * print() of a 1-D float64 numpy array with numpy's default print options (numpy ≥ 1.14):
 * elements padded to a common width (integer part on the left, fraction on the right with
 * spaces), separated by one space, wrapped at 75 characters with a one-space hanging indent.
 * Covers the arrays numpy prints in positional notation (what the course prints: weights
 * rounded to 3 decimals); arrays numpy would print in scientific notation or summarise are
 * refused with an error.
 * @param {ArrayLike<number>} values
 */
export function numpyArrayString(values) {
  const xs = Array.from(values);
  if (xs.length > 1000)
    throw new RangeError(
      `numpyArrayString: ${xs.length} elements; numpy summarises arrays over 1000`,
    );
  if (xs.length === 0) return '[]';
  if (!xs.every(Number.isFinite))
    throw new RangeError('numpyArrayString: only finite values are supported');
  const abs = xs.map(Math.abs).filter((a) => a !== 0);
  if (abs.length) {
    const max = Math.max(...abs),
      min = Math.min(...abs);
    if (max >= 1e8 || min < 0.0001 || max / min > 1000) {
      throw new RangeError(
        'numpyArrayString: numpy would print these values in scientific notation, which is not supported',
      );
    }
  }
  const parts = xs.map(npFloatParts);
  const padLeft = Math.max(...parts.map(([i]) => i.length));
  const padRight = Math.max(...parts.map(([, f]) => f.length));
  const words = parts.map(([i, f]) => `${i.padStart(padLeft)}.${f.padEnd(padRight)}`);
  const lineWidth = 75,
    indent = ' ',
    elemWidth = lineWidth - 1;
  let s = '',
    line = indent;
  words.forEach((word, k) => {
    if (line.length + word.length > elemWidth && line.length > indent.length) {
      s += `${line.trimEnd()}\n`;
      line = indent;
    }
    line += word;
    if (k < words.length - 1) line += ' ';
  });
  s += line;
  return `[${s.slice(indent.length)}]`;
}

/**
 * The course's line for one query row (module 08):
 *   "head 0 weights, token 0: [0.    0.    0.424 0.576 0.   ]"
 * i.e. print(np.round(weights[head][query], 3)) after the label. Shown with collapsed
 * whitespace (HTML's normal white-space) it reads as the module prints it:
 *   "head 0 weights, token 0: [0. 0. 0.424 0.576 0. ]"
 * @param {ArrayLike<number>} row the core's weights for that head and query
 */
export function queryRowText(head, query, row) {
  return `head ${head} weights, token ${query}: ${numpyArrayString(Array.from(row, (w) => npRound(w, 3)))}`;
}
