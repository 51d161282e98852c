// One cell of one head, step by step: the numbers of softmax(q_i · k_j / sqrt(d_head) + mask)
// and of v_j's part in the head's output, read out of the core's result. Pure: tests/web/step.test.mjs.
//
// Shapes (row-major, as docs/js-api.md): q (n, d), k and v (m, d), scores and attn_weights
// (h, n, m), head_outputs (n, d); head h owns columns h*d_head … (h+1)*d_head - 1.
import { formatWeight } from '../draw/format.js';

/**
 * The numbers behind weight (head, i, j) of a forward result that kept its intermediates.
 * From the core, as returned: q_i, k_j, v_j (head h's slices), the score s_ij the softmax saw
 * (q_i·k_j/sqrt(d_head) + mask term), the weight a_ij, the head's output row y_i and whether
 * the row is fully masked. Each derived number is the one-line arithmetic the panel prints, on
 * those values: dot = s_ij·sqrt(d_head) when unmasked (−∞ otherwise), exp(s_ij − max_k s_ik),
 * the row sum of those (a stable softmax subtracts the row maximum; the ratio is unchanged),
 * and the contribution a_ij·v_j. The core's weight is shown beside exp/sum, which must agree.
 * @param {object} result forward / numpyExperiment result with q, k, v, scores, head_outputs
 * @param {number} head, @param {number} i query row, @param {number} j key column
 * @param {boolean} maskedCell whether the page's masks say (i, j) may not attend
 */
export function explainCell(result, head, i, j, maskedCell = false) {
  const { n, m, d_model: d, d_head: dh } = result;
  if (!result.q || !result.scores) throw new Error('this result has no intermediates (keep_intermediates was false)');
  if (!(head >= 0 && head < result.num_heads && i >= 0 && i < n && j >= 0 && j < m)) {
    throw new Error(`cell (head ${head}, query ${i}, key ${j}) is outside ${result.num_heads} heads × ${n} × ${m}`);
  }
  const cols = (arr, row) => Array.from(arr.subarray(row * d + head * dh, row * d + (head + 1) * dh));
  const q = cols(result.q, i);
  const k = cols(result.k, j);
  const v = cols(result.v, j);
  const row = Array.from(result.scores.subarray((head * n + i) * m, (head * n + i + 1) * m));
  const score = row[j];
  const weight = result.attn_weights[(head * n + i) * m + j];
  const fullyMasked = result.fully_masked_rows[head * n + i] === 1;
  const scale = Math.sqrt(dh);
  const masked = maskedCell || score === -Infinity;
  const rowMax = row.reduce((a, b) => Math.max(a, b), -Infinity);
  const exps = row.map((s) => (s === -Infinity ? 0 : Math.exp(s - rowMax)));
  const rowSum = exps.reduce((a, b) => a + b, 0);
  return {
    source: 'result',
    head, i, j, d_head: dh, columns: [head * dh, (head + 1) * dh - 1],
    q, k, v,
    dot: masked ? null : score * scale,
    scale,
    scaled: masked ? null : score,
    maskTerm: masked ? -Infinity : 0,
    score,
    rowMax: fullyMasked ? null : rowMax,
    exp: fullyMasked ? 0 : exps[j],
    rowSum: fullyMasked ? 0 : rowSum,
    weight,
    contribution: v.map((x) => weight * x),
    headOutput: cols(result.head_outputs, i),
    fullyMasked,
  };
}

/**
 * The same shape from the core's own explanation, mod.explainCell(result, {head, i, j, masks…})
 * (mha::explain_cell: q·k recomputed in double, the mask term of the masks given, exp of the
 * shifted score and its row sum): every number of the panel is then the core's.
 */
export function fromCoreExplanation(c) {
  const dh = c.d_head;
  return {
    source: 'core',
    head: c.head, i: c.i, j: c.j, d_head: dh, columns: [c.head * dh, (c.head + 1) * dh - 1],
    q: Array.from(c.q_i), k: Array.from(c.k_j), v: Array.from(c.v_j),
    dot: c.dot,
    scale: 1 / c.scale,
    scaled: c.scaled,
    maskTerm: c.mask_term,
    score: c.score,
    rowMax: c.row_fully_masked ? null : c.row_max,
    exp: c.exp_shifted,
    rowSum: c.row_sum_shifted,
    weightRecomputed: c.weight_recomputed,
    weight: c.weight,
    contribution: Array.from(c.contribution),
    headOutput: Array.from(c.head_output_i),
    fullyMasked: c.row_fully_masked,
  };
}

/** A number for the panel: 4 decimals, −∞ / ∞ spelled out, -0 as 0. */
export function formatNumber(x, digits = 4) {
  if (x === -Infinity) return '−∞';
  if (x === Infinity) return '∞';
  if (Number.isNaN(x)) return 'NaN';
  const s = x.toFixed(digits);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s.replace(/^-/, '−');
}

/** "[1.0000, −2.5000, …]" for a vector, all values. */
export function formatVector(xs, digits = 4) {
  return `[${xs.map((x) => formatNumber(x, digits)).join(', ')}]`;
}

/**
 * The panel's steps as {key, label, value, detail, raw} rows (raw: the full-precision number
 * or array, for tests and data-value) of text (the DOM builder only places
 * them). `tokens` label the query (row) and key (column).
 */
export function stepRows(e, queryToken, keyToken) {
  const rows = [];
  const add = (key, label, value, detail = '', raw = null) => rows.push({ key, label, value, detail, raw });
  const [c0, c1] = e.columns;
  add('q', `q_${e.i} (query '${queryToken}', head ${e.head})`, formatVector(e.q),
    `row ${e.i} of Q, columns ${c0}–${c1} (d_head = ${e.d_head} values)`, e.q);
  add('k', `k_${e.j} (key '${keyToken}', head ${e.head})`, formatVector(e.k), `row ${e.j} of K, columns ${c0}–${c1}`, e.k);
  const core = e.source === 'core';
  const check = e.q.reduce((acc, x, t) => acc + x * e.k[t], 0);
  add('dot', `q_${e.i} · k_${e.j}`, e.dot === null ? 'not used (masked)' : formatNumber(e.dot),
    core ? `the sum of the ${e.d_head} products, by the core (explainCell)`
      : `the core's score × √d_head; check: the ${e.d_head} products of the values above sum to ${formatNumber(check)}`, e.dot);
  add('scaled', `÷ √d_head = ÷ ${formatNumber(e.scale)}`, e.scaled === null ? 'not used (masked)' : formatNumber(e.scaled),
    `√${e.d_head} = ${formatNumber(e.scale)}`, e.scaled);
  add('mask', '+ mask term', e.maskTerm === 0 ? '0' : formatNumber(e.maskTerm),
    e.maskTerm === 0 ? 'key allowed: 0 is added' : 'may not attend: −∞ is added', e.maskTerm);
  add('score', `s_${e.i},${e.j}, the score the softmax sees`, formatNumber(e.score), 'from the core', e.score);
  if (e.fullyMasked) {
    add('exp', 'exp', '0', 'every key of this row is masked: the core sets the weights to 0 (never NaN)', 0);
    add('sum', 'row sum', '0', 'no key left to normalise over', 0);
  } else {
    add('exp', `exp(s_${e.i},${e.j} − max_k s_${e.i},k)`, formatNumber(e.exp, 6),
      `the row's largest score, ${formatNumber(e.rowMax)}, is subtracted first (a stable softmax; the ratio is unchanged)`, e.exp);
    add('sum', `row sum Σ_k exp(s_${e.i},k − max)`, formatNumber(e.rowSum, 6), `over the ${'row\'s'} keys; masked keys add 0`, e.rowSum);
  }
  const ratio = e.weightRecomputed ?? (e.rowSum ? e.exp / e.rowSum : 0);
  add('weight', `weight a_${e.i},${e.j}`, formatWeight(e.weight),
    e.fullyMasked ? 'fully masked row' : `exp ÷ row sum = ${formatNumber(ratio, 6)}; the core's weight: ${formatNumber(e.weight, 6)}`,
    e.weight);
  add('v', `v_${e.j} (head ${e.head})`, formatVector(e.v), `row ${e.j} of V, columns ${c0}–${c1}`, e.v);
  add('contribution', `a_${e.i},${e.j} · v_${e.j}`, formatVector(e.contribution),
    `v_${e.j}'s part of head ${e.head}'s output for query ${e.i}`, e.contribution);
  add('output', `y_${e.i} = Σ_k a_${e.i},k v_k (head ${e.head})`, formatVector(e.headOutput),
    e.fullyMasked ? 'all 0: nothing to attend to' : 'the head\'s output row, from the core, before concat and W_O', e.headOutput);
  return rows;
}
