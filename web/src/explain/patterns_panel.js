// Head patterns as scores (module 03's table: previous token, positional band, vertical stripe,
// long range; with tokens also duplicate token, induction and punctuation), the row entropy and
// mean attention distance, the labels the core gives when a
// score passes its documented threshold, and the pairwise Jensen–Shannon distance of the heads
// (module 08 exercise 1 for any h). Every number comes from the core's headPatterns
// (docs/js-api.md); the pure formatting below is tested in tests/web/explain.test.mjs.
import { h, simpleTable } from './dom.js';

/** A score for the table: 3 decimals, or "—" when the core had no row to score (null). */
export function formatScore(x, digits = 3) {
  if (x === null || x === undefined) return '—';
  return x.toFixed(digits);
}

/** The labels of one head as text; none means no simple rule fits (module 03's content-based). */
export function labelText(labels) {
  return labels.length ? labels.join(', ') : 'none (content-based or mixed: no simple rule)';
}

/**
 * The most and least similar pairs of heads in a Jensen–Shannon distance matrix (h*h, row-major).
 * @returns {{closest: {a, b, d}, farthest: {a, b, d}} | null} null for fewer than two heads
 */
export function distanceExtremes(dist, numHeads) {
  if (numHeads < 2) return null;
  let closest = null;
  let farthest = null;
  for (let a = 0; a < numHeads; a++) {
    for (let b = a + 1; b < numHeads; b++) {
      const d = dist[a * numHeads + b];
      if (!closest || d < closest.d) closest = { a, b, d };
      if (!farthest || d > farthest.d) farthest = { a, b, d };
    }
  }
  return { closest, farthest };
}

/** The token scores' columns (shown when the core had tokens): score key and heading. */
export const TOKEN_COLUMNS = Object.freeze([
  ['duplicate_token', 'duplicate token (mass on earlier copies)'],
  ['induction', 'induction (mass on the token after an earlier copy)'],
  ['punctuation', 'punctuation (mass on punctuation keys)'],
]);

/** True when the core scored tokens (punctuation is null only without key tokens). */
export function hasTokenScores(heads) {
  return heads.some((x) => x.scores.punctuation !== null);
}

/** The label rule, from the thresholds the core used; `tokens`: also the token scores' rule. */
export function thresholdText(t, tokens = false) {
  return (
    `A head gets a label when its score is at least the threshold and beats a uniform head of the same shape by ${t.margin}: ` +
    `previous-token ≥ ${t.previous_token}, positional (mass on |i − j| ≤ 1) ≥ ${t.local_band}, ` +
    `vertical-stripe ≥ ${t.vertical_stripe}, long-range (mean distance ÷ (n − 1)) ≥ ${t.long_range}` +
    (tokens
      ? `, duplicate-token ≥ ${t.duplicate_token}, induction ≥ ${t.induction}, punctuation ≥ ${t.punctuation}.`
      : '.')
  );
}

/**
 * numpy's `np.allclose(a, b)` with its defaults (rtol 1e-5, atol 1e-8): |a − b| ≤ atol + rtol·|b|
 * for every element. Module 08 prints it for heads 0 and 1 ("same pattern? False").
 * @param {ArrayLike<number>} a @param {ArrayLike<number>} b same length
 */
export function allclose(a, b, rtol = 1e-5, atol = 1e-8) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (!(Math.abs(a[i] - b[i]) <= atol + rtol * Math.abs(b[i]))) return false;
  }
  return true;
}

/**
 * @param {HTMLElement} container
 * @param {{patterns: object, tokens: string[], keyTokens?: string[], weights?: Float32Array}} p
 *   patterns: mod.headPatterns({attn_weights, num_heads, n, m, tokens?, query_tokens?})'s result
 *   (with tokens, the columns of TOKEN_COLUMNS are shown);
 *   weights: the (h, n, m) stack the patterns were scored on; when given, module 08's check
 *   `np.allclose(weights[0], weights[1])` is printed beside the distances
 */
export function renderPatterns(
  container,
  { patterns, tokens, keyTokens = tokens, weights = null },
) {
  const { heads, js_distance: dist, thresholds } = patterns;
  const cell = (s, base, key) => `${formatScore(s[key])} (uniform ${formatScore(base[key])})`;
  const tokenColumns = hasTokenScores(heads) ? TOKEN_COLUMNS : [];
  const scores = simpleTable({
    caption:
      'Per head: module 03’s detections as scores (mean over the rows that are not fully masked)',
    head: [
      'head',
      'previous token (weight on i − 1)',
      'positional band (mass on |i − j| ≤ 1)',
      'vertical stripe (key)',
      'mean distance (tokens)',
      'row entropy (bits)',
      ...tokenColumns.map((c) => c[1]),
      'labels',
    ],
    rows: heads.map((x) => [
      `head ${x.head}`,
      cell(x.scores, x.uniform_baseline, 'previous_token'),
      cell(x.scores, x.uniform_baseline, 'local_band'),
      x.scores.vertical_stripe === null
        ? '—'
        : `${formatScore(x.scores.vertical_stripe)} on ‘${keyTokens[x.scores.stripe_key] ?? x.scores.stripe_key}’`,
      formatScore(x.scores.mean_distance, 2),
      `${formatScore(x.scores.entropy_bits, 2)} of ${formatScore(Math.log2(keyTokens.length), 2)}`,
      ...tokenColumns.map(([key]) => cell(x.scores, x.uniform_baseline, key)),
      labelText(x.labels),
    ]),
    rowData: (i) => ({
      head: heads[i].head,
      labels: heads[i].labels.join(','),
      scores: JSON.stringify(heads[i].scores),
    }),
  });
  scores.classList.add('patterns-table');
  const numHeads = heads.length;
  const matrix = simpleTable({
    caption:
      'Pairwise head distance: mean over query rows of the Jensen–Shannon distance (base 2, √JSD) — 0 = the same rows, 1 = disjoint',
    head: ['', ...heads.map((x) => `head ${x.head}`)],
    rows: heads.map((x, a) => [
      `head ${x.head}`,
      ...heads.map((_, b) => formatScore(dist[a * numHeads + b])),
    ]),
    rowData: (a) => ({
      head: a,
      distances: JSON.stringify(Array.from(dist.subarray(a * numHeads, (a + 1) * numHeads))),
    }),
  });
  matrix.classList.add('js-matrix');
  const ext = distanceExtremes(dist, numHeads);
  let line = 'One head: nothing to compare.';
  if (ext && numHeads === 2) line = `Heads 0 and 1 are at distance ${formatScore(ext.farthest.d)}.`;
  else if (ext) {
    line =
      `Most different: heads ${ext.farthest.a} and ${ext.farthest.b} (${formatScore(ext.farthest.d)}); ` +
      `most alike: heads ${ext.closest.a} and ${ext.closest.b} (${formatScore(ext.closest.d)}).`;
  }
  if (weights && numHeads >= 2) {
    const size = weights.length / numHeads;
    const same = allclose(weights.subarray(0, size), weights.subarray(size, 2 * size));
    line +=
      ` same pattern? ${same ? 'True' : 'False'} (module 08's np.allclose(weights[0], weights[1]), ` +
      'rtol 1e-5, atol 1e-8)';
  }
  const summary = h('p', { className: 'patterns-summary', text: line });
  container.replaceChildren(
    h('p', { className: 'help', text: thresholdText(thresholds, tokenColumns.length > 0) }),
    h('div', { className: 'table-scroll' }, scores),
    summary,
    h('div', { className: 'table-scroll' }, matrix),
  );
}
