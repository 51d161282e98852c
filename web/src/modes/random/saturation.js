// Why module 08's grids turn one-hot as d_model grows: the share of rows that put nearly all
// their weight on one key, and the note the random mode shows when most rows do. Pure (no DOM;
// tests/web/saturation.test.mjs).

/** A row counts as one-hot when its largest weight is at least this. */
export const ONE_HOT_WEIGHT = 0.99;
/** The note is shown when at least this share of the rows is one-hot. */
export const NOTE_SHARE = 0.75;

/**
 * Rows of a weight stack whose largest weight is >= ONE_HOT_WEIGHT, over the rows that carry a
 * distribution (a fully masked row, all zero, is not counted).
 * @param {Float32Array|Float64Array|number[]} attnWeights (h, n, m) row-major
 * @param {number} numHeads h @param {number} n rows @param {number} m keys
 * @returns {{oneHot: number, rows: number}}
 */
export function oneHotRows(attnWeights, numHeads, n, m) {
  let oneHot = 0;
  let rows = 0;
  for (let r = 0; r < numHeads * n; r++) {
    let max = 0;
    let sum = 0;
    for (let j = r * m; j < (r + 1) * m; j++) {
      const w = attnWeights[j];
      sum += w;
      if (w > max) max = w;
    }
    if (sum === 0) continue;
    rows++;
    if (max >= ONE_HOT_WEIGHT) oneHot++;
  }
  return { oneHot, rows };
}

/**
 * The note for a view whose rows are mostly one-hot, or '' when fewer than NOTE_SHARE of them
 * are. The reason is module 08's program: X, W_Q and W_K are drawn from randn with no scaling,
 * so Q = X W_Q has entries of variance d_model, and a score q·k/√d_head (a sum of d_head products
 * of variance d_model², divided by √d_head) has a standard deviation of about d_model; softmax
 * of numbers that far apart gives almost all the weight to the largest.
 * @param {{oneHot: number, rows: number}} counts oneHotRows' result
 * @param {number} dModel d_model
 */
export function saturationNote({ oneHot, rows }, dModel) {
  if (!rows || oneHot / rows < NOTE_SHARE) return '';
  const every = oneHot === rows;
  return (
    `${every ? 'Every row' : `${oneHot} of ${rows} rows`} of these grids ${every ? 'puts' : 'put'} at least ` +
    `${Math.round(ONE_HOT_WEIGHT * 100)} % of ${every ? 'its' : 'their'} weight on one key. That is module 08's random weights, not ` +
    `attention learning to pick one word: X, W_Q and W_K are randn with no scaling, so a score Q Kᵀ/√d_head has a ` +
    `standard deviation of about d_model (${dModel} here), and softmax of scores that far apart is one-hot. ` +
    'A smaller d_model gives softer rows; trained models keep their scores small, and so does PyTorch’s ' +
    'initialisation (xavier_uniform_: weights of variance 1/(2·d_model) instead of 1).'
  );
}
