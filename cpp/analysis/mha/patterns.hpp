// Head patterns: what each head does, measured as numbers (docs/patterns.md).
//
// The course's module 03 ("What different heads learn") lists the kinds of head and how to see
// them in a grid:
// clang-format off
//   kind                        behaviour                                  in the grid
//   previous token              large weight on position t-1 for every t  first sub-diagonal bright
//   positional / neighbourhood  weight decays with distance               narrow bright diagonal band
//   punctuation                 attention collapses on commas or periods  bright vertical stripes
//   coreference                 pronouns look at their antecedent         long-range spikes
//   content-based               matches semantic role, not position       no simple rule captures it
// clang-format on
// Each detection column becomes a score here; a head earns a label when its score passes a
// documented threshold (HeadScoreThresholds), and the scores are always reported with the label.
//
// Shape legend (as attention.hpp): h = num_heads, n = query tokens (rows), m = key tokens
// (columns), L = layers. A weight stack is a HeadStack (h, n, m), row-major; row i of head k is
// the distribution of query i over the m keys. Positions are indices: query i and key j are
// "the same position" when i == j, so the positional scores mean what module 03 says for
// self-attention (n == m); for cross-attention (n != m) they compare indices all the same.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mha/attention.hpp"
#include "mha/masks.hpp"
#include "mha/weights_check.hpp"

namespace mha {

/// The scores of one head. Every score is an average over the head's *scored rows*: rows that are
/// not all zero (a fully masked row carries no distribution). Each row is divided by its sum
/// first (it is 1 within the validation tolerance). A score with no row to average over (e.g.
/// previous_token of a 1-token input) is std::nullopt, never NaN.
struct HeadScoreValues {
  /// Mean weight on key i-1, over scored rows i >= 1 with i-1 < m. Range [0, 1]; 1 for a pure
  /// previous-token head. (Module 03: "first sub-diagonal is bright".)
  std::optional<double> previous_token;
  /// Mean weight on key i (the diagonal), over scored rows i < m. Range [0, 1].
  std::optional<double> diagonal;
  /// Mean mass on keys |j - i| <= 1 (the diagonal band of width 1 on each side), over scored
  /// rows. Range [0, 1]. (Module 03: "narrow bright diagonal band".)
  std::optional<double> local_band;
  /// Vertical stripe: max over keys j of the mean weight that the scored rows i != j put on key j
  /// (a row's weight on its own position is left out, so a diagonal head is no stripe and the
  /// first row of a causal head, forced onto key 0, does not count). Range [0, 1]; 1 when every
  /// other row looks only at one key. (Module 03: "bright vertical stripes on those tokens".)
  std::optional<double> vertical_stripe;
  /// The key j of vertical_stripe (-1 when vertical_stripe is nullopt).
  Index stripe_key = -1;
  /// Mean weight on key 0 over scored rows i >= 1: the "first token" stripe. Range [0, 1].
  std::optional<double> first_token;
  /// Mean attention distance, sum_j a_ij |i - j|, averaged over scored rows, in tokens.
  /// Range [0, max(n, m) - 1]. (Module 03's coreference: "long-range spikes".)
  std::optional<double> mean_distance;
  /// mean_distance / (max(n, m) - 1): range [0, 1] (0 when max(n, m) == 1).
  std::optional<double> mean_distance_normalized;
  /// Row entropy -sum_j a_ij log2 a_ij (0 log 0 = 0), averaged over scored rows, in bits.
  /// Range [0, log2 m]; log2 m for a uniform head.
  std::optional<double> entropy_bits;
  /// entropy_bits / log2(m): range [0, 1] (0 when m == 1).
  std::optional<double> entropy_normalized;
  /// Mean of each row's largest weight: 1 for a head that always picks one key, 1/m if uniform.
  std::optional<double> max_weight;

  // Token scores (docs/patterns.md "Token scores"): std::nullopt when no tokens are given, or
  // when the score needs query tokens and there are none (HeadTokens). "Same token" means
  // identical strings (byte for byte), neither of them one of HeadTokens::unmatched.
  /// Duplicate token: mean, over scored rows i that have an earlier copy of their token (keys
  /// j < i with key_j == query_i), of the weight on all those copies. Range [0, 1]; nullopt when
  /// no row has an earlier copy. (TransformerLens's duplicate-token detection pattern.)
  std::optional<double> duplicate_token;
  /// Induction: mean, over scored rows i that have an induction key (a key k with
  /// 1 <= k <= i - 1 and key_{k-1} == query_i: the token after an earlier occurrence of the
  /// current token), of the weight on all those keys. Range [0, 1]; nullopt when no row has one.
  /// On <bos> + R random tokens repeated twice it is TransformerLens's induction score: the mean
  /// of a[i, i - (R - 1)] over the second copy's rows i = R + 1 .. 2R.
  std::optional<double> induction;
  /// Punctuation: mean over scored rows of the total weight on keys whose token is punctuation
  /// (is_punctuation_token). Range [0, 1]; 0 when no key is punctuation. Needs key tokens only.
  std::optional<double> punctuation;
};

/// The tokens naming a stack's rows and columns, for the token scores of HeadScoreValues.
/// keys: (m) key tokens, or empty (then every token score is nullopt).
/// queries: (n) query tokens; empty means "the keys" when n == m (self-attention) and "unknown"
/// when n != m (cross-attention: duplicate_token and induction are then nullopt, punctuation,
/// which reads key tokens only, is still scored).
/// unmatched: tokens that are the same as no token, not even another copy of themselves, for
/// duplicate_token and induction: a language model's unknown token ("<unk>") stands for every
/// word its vocabulary lacks, so two "<unk>" are not a repeat. Punctuation is unaffected.
struct HeadTokens {
  std::vector<std::string> keys;
  std::vector<std::string> queries;
  std::vector<std::string> unmatched = {};
};

/// True when `token` is punctuation for the punctuation score: not empty, valid UTF-8, and every
/// code point of Unicode general category P* (Pc Pd Ps Pe Pi Pf Po) or one of the symbol
/// categories Sm, Sc, Sk (not So: emoji, pictographs and (c) are content). On ASCII this is C's
/// ispunct: the 32 characters !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~. Examples: "," "." "?!" "—" "«"
/// "(" "€"; not "a,", " ,", "", "😀". The table (punctuation_table.inc, Unicode 14.0.0) is
/// generated from Python's unicodedata by scripts/codegen/gen_punctuation_table.py.
bool is_punctuation_token(std::string_view token);

/// Thresholds of the labels (docs/patterns.md "Labels"). A head earns a label when its score is
/// >= the threshold AND beats the same score of a uniform head of the same shape (uniform over
/// each row's allowed keys: all m keys, or keys j <= i when the head is causal — zero above the
/// diagonal) by at least `margin`, so that a short input, where even uniform attention puts half
/// its mass near the diagonal, earns no label by chance.
struct HeadScoreThresholds {
  double previous_token = 0.5;   ///< label "previous-token"
  double local_band = 0.5;       ///< label "positional" (unless previous-token, the narrower kind)
  double vertical_stripe = 0.5;  ///< label "vertical-stripe"
  /// label "long-range": mean_distance_normalized (unless vertical-stripe: a stripe on an early
  /// token is far from late queries, and the stripe is the narrower description)
  double long_range = 0.5;
  double duplicate_token = 0.5;  ///< label "duplicate-token"
  double induction = 0.5;        ///< label "induction"
  double punctuation = 0.5;      ///< label "punctuation"
  double margin = 0.15;          ///< every label: score >= uniform head's score + margin
};

/// One head: its scores, the scores a uniform head of the same shape would get (the baseline
/// the labels are measured against), and its labels.
struct HeadScores {
  Index head = 0;
  Index rows_scored = 0;  ///< rows that are not all zero
  bool causal = false;    ///< every weight above the diagonal is exactly 0 (and n == m, n > 1)
  HeadScoreValues scores;
  HeadScoreValues uniform_baseline;
  /// In this order when earned: "previous-token", "positional", "vertical-stripe", "long-range",
  /// "duplicate-token", "induction", "punctuation".
  /// Empty: no simple rule fits (module 03's "content-based", or a mixture).
  std::vector<std::string> labels;
};

/// The labels of docs/patterns.md for `scores` measured against `baseline` (the uniform head's
/// scores): "previous-token" (previous_token), "positional" (local_band; not when previous-token),
/// "vertical-stripe" (vertical_stripe), "long-range" (mean_distance_normalized; not when
/// vertical-stripe), "duplicate-token" (duplicate_token), "induction" (induction), "punctuation"
/// (punctuation), each when score >= threshold and score >= baseline + margin.
/// Used by score_heads, and on scores averaged over many inputs.
std::vector<std::string> head_labels(const HeadScoreValues& scores, const HeadScoreValues& baseline,
                                     const HeadScoreThresholds& thresholds = {});

/// Scores and labels of every head of `weights` (h, n, m); the token scores are nullopt.
/// Throws as validate_attention_weights (`what` names the stack).
std::vector<HeadScores> score_heads(const HeadStack& weights,
                                    const HeadScoreThresholds& thresholds = {},
                                    const std::string& what = "attn_weights");

/// The same with the token scores: `tokens.keys` (m strings or empty), `tokens.queries`
/// (n strings or empty; see HeadTokens).
/// Throws shape_error when keys are given and are not m, or queries are given and are not n
/// ("tokens has 5 entries, attn_weights has 6 keys"); as validate_attention_weights.
std::vector<HeadScores> score_heads(const HeadStack& weights, const HeadTokens& tokens,
                                    const HeadScoreThresholds& thresholds = {},
                                    const std::string& what = "attn_weights");

/// Pairwise head similarity: D(a, b) = mean over query rows of the Jensen–Shannon distance
/// between row i of head a and row i of head b,
///   JSD(p, q) = 1/2 KL(p || M) + 1/2 KL(q || M),  M = (p + q) / 2,  logarithms base 2,
///   distance = sqrt(JSD)  (a metric, Endres & Schindelin 2003),
/// each in [0, 1]: 0 for identical rows, 1 for rows with disjoint supports. Rows zero in both
/// heads are skipped; a row zero in only one head counts as distance 1. Module 08 exercise 1
/// ("confirm the same holds pairwise across more heads") for any h.
/// Returns (h, h), symmetric, zero diagonal (0 everywhere when no row is scored).
/// Throws as validate_attention_weights.
RowMatrixXd js_distance_matrix(const HeadStack& weights, const std::string& what = "attn_weights");

/// Mean over heads, (n, m): (1/h) sum_k A_k — what PyTorch's nn.MultiheadAttention returns by
/// default (average_attn_weights=True). It hides specialised heads: a head that alone looks at
/// one key contributes only 1/h of that key's weight. Rows sum to 1 (or less where some heads'
/// rows are fully masked). Throws as validate_attention_weights.
RowMatrixXf mean_over_heads(const HeadStack& weights, const std::string& what = "attn_weights");

/// Max over heads, (n, m): max_k A_k(i, j), element by element. Not a distribution (rows sum to
/// between 1 and h); shows every key some head looks at. Throws as validate_attention_weights.
RowMatrixXf max_over_heads(const HeadStack& weights, const std::string& what = "attn_weights");

/// Attention rollout across layers (Abnar & Zuidema 2020, "Quantifying Attention Flow in
/// Transformers", §3), the variant with heads averaged and the residual as identity:
///   Â_l = rownorm(0.5 * mean_k A_{l,k} + 0.5 * I)     (n, n) per layer l = 0 .. L-1
///   R_0 = Â_0,   R_l = Â_l R_{l-1},   returns R_{L-1}  (n, n)
/// R(i, j) = how much of input token j reaches position i at the last layer, if attention and the
/// residual carry it linearly. Each row of R sums to 1. A fully masked row of the head average
/// becomes the identity row (the residual alone carries it).
/// layers: L >= 1 stacks (h, n, n), all with the same n (h may differ).
/// Throws shape_error (no layer, a non-square layer, n differing between layers), and as
/// validate_attention_weights ("layer 2" names the stack).
RowMatrixXd attention_rollout(const std::vector<HeadStack>& layers);


/// One cell (head, i, j) of a forward pass, every step of the formula with the core's numbers
/// (attention.hpp; Vaswani et al. 2017 §3.2.1), so a page can show them without re-implementing
/// attention. d_head = d / h with d = q.cols(), h = attn_weights.heads().
struct CellExplanation {
  Index head = 0, i = 0, j = 0, d_head = 0;
  std::vector<double> q_i;  ///< (d_head) Q[i, head*d_head .. ], the projected query (bias included)
  std::vector<double> k_j;  ///< (d_head) K[j, head*d_head .. ]
  std::vector<double> v_j;  ///< (d_head) V[j, head*d_head .. ]
  double dot = 0.0;         ///< q_i · k_j, recomputed in double from q_i and k_j
  double scale = 0.0;       ///< 1 / sqrt(d_head)
  double scaled = 0.0;      ///< dot * scale
  /// Mask term M(i, j) added to the scaled score: 0, -inf, or an additive mask's value
  /// (AttentionMasks::term of the masks given).
  double mask_term = 0.0;
  double score = 0.0;  ///< the core's logit scores(head, i, j) (= scaled + mask_term, to rounding)
  /// The stable softmax subtracts the row maximum before exp (it cancels in the ratio):
  ///   weight = exp(score - row_max) / sum_j' exp(score_j' - row_max) = exp(score) / sum
  ///   exp(score_j')
  double row_max = 0.0;      ///< max over the row's scores (-inf when the row is fully masked)
  double exp_shifted = 0.0;  ///< exp(score - row_max), in (0, 1]; 0 when masked
  double row_sum_shifted =
      0.0;  ///< sum over the row of exp(score_j' - row_max), >= 1 unless masked
  /// exp(score) without the shift and its row sum: what a naive softmax computes. May be +inf
  /// (overflow, the reason for the shift) or 0 (underflow); then `weight` still comes out right.
  double exp_unshifted = 0.0;
  double row_sum_unshifted = 0.0;
  double weight_recomputed = 0.0;     ///< exp_shifted / row_sum_shifted (0 for a fully masked row)
  double weight = 0.0;                ///< the core's attn_weights(head, i, j)
  bool row_fully_masked = false;      ///< every key of row i was masked: weights 0, never NaN
  std::vector<double> contribution;   ///< (d_head) weight * v_j: this key's share of Y_head[i]
  std::vector<double> head_output_i;  ///< (d_head) Y_head[i] = sum_j weight_ij v_j (the core's)
};

/// Explains cell (head, i, j) of `result`, which must hold the intermediates (q, k, v, scores,
/// head_outputs: ForwardOptions::keep_intermediates, the default). `masks` are the masks the
/// forward pass used (for the mask term; an AttentionMasks{} for none).
/// Throws shape_error when the intermediates are missing or inconsistent with attn_weights, or
/// head/i/j lie outside (h, n, m) (the message names the index and its range); shape_error /
/// value_error when `masks` do not fit (h, n, m).
CellExplanation explain_cell(const AttentionResult& result, const AttentionMasks& masks, Index head,
                             Index i, Index j);

/// Relative change ||changed - base||_F / ||base||_F (Frobenius norms, in double), e.g. of a
/// layer's output when heads are ablated. Throws shape_error when the shapes differ, value_error
/// when ||base|| is 0 (the ratio is undefined) or a value is not finite.
double relative_change(const MatrixRef& base, const MatrixRef& changed);

/// A layer's output with and without some heads (ForwardOptions::ablated_heads semantics: the
/// head's output is zeroed before out_proj; Michel et al. 2019).
struct AblationEffect {
  RowMatrixXf output;            ///< (n, d) every head on
  RowMatrixXf ablated_output;    ///< (n, d) with the heads off
  double relative_change = 0.0;  ///< ||ablated - output||_F / ||output||_F
};

/// Runs `layer` twice on query/key/value (shapes as MultiheadAttention::forward) with `masks`:
/// once as it is, once with `ablated_heads` (h entries, nonzero = off).
/// Throws as multi_head_attention_forward, and as relative_change (a zero output).
AblationEffect ablation_effect(const MultiheadAttention& layer, const MatrixRef& query,
                               const MatrixRef& key, const MatrixRef& value,
                               const AttentionMasks& masks,
                               const std::vector<std::uint8_t>& ablated_heads);

}  // namespace mha
