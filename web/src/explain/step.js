// One cell of one head, step by step: the numbers of softmax(q_i · k_j / sqrt(d_head) + mask)
// and of v_j's part in the head's output, as the core's explainCell gives them, laid out as the
// panel's rows. Pure: tests/web/explain.test.mjs, tests/js/explain_step.test.mjs.
//
// Shapes (row-major, as docs/js-api.md): q (n, d), k and v (m, d), scores and attn_weights
// (h, n, m), head_outputs (n, d); head h owns columns h*d_head … (h+1)*d_head - 1.
import { formatWeight } from '../draw/format.js';

/**
 * The panel's numbers from the core's explanation of one cell, mod.explainCell(result, {head, i,
 * j, masks…}) (mha::explain_cell: q·k recomputed in double, the mask term of the masks given, exp
 * of the shifted score and its row sum): every number of the panel is the core's.
 */
export function fromCoreExplanation(c) {
  const dh = c.d_head;
  return {
    head: c.head,
    i: c.i,
    j: c.j,
    d_head: dh,
    columns: [c.head * dh, (c.head + 1) * dh - 1],
    q: Array.from(c.q_i),
    k: Array.from(c.k_j),
    v: Array.from(c.v_j),
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
  const add = (key, label, value, detail = '', raw = null) =>
    rows.push({ key, label, value, detail, raw });
  const [c0, c1] = e.columns;
  add(
    'q',
    `q_${e.i} (query '${queryToken}', head ${e.head})`,
    formatVector(e.q),
    `row ${e.i} of Q, columns ${c0}–${c1} (d_head = ${e.d_head} values)`,
    e.q,
  );
  add(
    'k',
    `k_${e.j} (key '${keyToken}', head ${e.head})`,
    formatVector(e.k),
    `row ${e.j} of K, columns ${c0}–${c1}`,
    e.k,
  );
  add(
    'dot',
    `q_${e.i} · k_${e.j}`,
    e.dot === null ? 'not used (masked)' : formatNumber(e.dot),
    `the sum of the ${e.d_head} products, by the core (explainCell)`,
    e.dot,
  );
  add(
    'scaled',
    `÷ √d_head = ÷ ${formatNumber(e.scale)}`,
    e.scaled === null ? 'not used (masked)' : formatNumber(e.scaled),
    `√${e.d_head} = ${formatNumber(e.scale)}`,
    e.scaled,
  );
  add(
    'mask',
    '+ mask term',
    e.maskTerm === 0 ? '0' : formatNumber(e.maskTerm),
    e.maskTerm === 0 ? 'key allowed: 0 is added' : 'may not attend: −∞ is added',
    e.maskTerm,
  );
  add(
    'score',
    `s_${e.i},${e.j}, the score the softmax sees`,
    formatNumber(e.score),
    'from the core',
    e.score,
  );
  if (e.fullyMasked) {
    add(
      'exp',
      'exp',
      '0',
      'every key of this row is masked: the core sets the weights to 0 (never NaN)',
      0,
    );
    add('sum', 'row sum', '0', 'no key left to normalise over', 0);
  } else {
    add(
      'exp',
      `exp(s_${e.i},${e.j} − max_k s_${e.i},k)`,
      formatNumber(e.exp, 6),
      `the row's largest score, ${formatNumber(e.rowMax)}, is subtracted first (a stable softmax; the ratio is unchanged)`,
      e.exp,
    );
    add(
      'sum',
      `row sum Σ_k exp(s_${e.i},k − max)`,
      formatNumber(e.rowSum, 6),
      `over the ${"row's"} keys; masked keys add 0`,
      e.rowSum,
    );
  }
  const ratio = e.weightRecomputed ?? (e.rowSum ? e.exp / e.rowSum : 0);
  add(
    'weight',
    `weight a_${e.i},${e.j}`,
    formatWeight(e.weight),
    e.fullyMasked
      ? 'fully masked row'
      : `exp ÷ row sum = ${formatNumber(ratio, 6)}; the core's weight: ${formatNumber(e.weight, 6)}`,
    e.weight,
  );
  add(
    'v',
    `v_${e.j} (head ${e.head})`,
    formatVector(e.v),
    `row ${e.j} of V, columns ${c0}–${c1}`,
    e.v,
  );
  add(
    'contribution',
    `a_${e.i},${e.j} · v_${e.j}`,
    formatVector(e.contribution),
    `v_${e.j}'s part of head ${e.head}'s output for query ${e.i}`,
    e.contribution,
  );
  add(
    'output',
    `y_${e.i} = Σ_k a_${e.i},k v_k (head ${e.head})`,
    formatVector(e.headOutput),
    e.fullyMasked
      ? 'all 0: nothing to attend to'
      : "the head's output row, from the core, before concat and W_O",
    e.headOutput,
  );
  return rows;
}
