// Head patterns (patterns.hpp, docs/patterns.md): synthetic heads with known answers, the
// Jensen–Shannon distance at its ends, combinations, rollout, masks, cell explanations, ablation,
// validation errors, and golden values from scripts/fixtures/make_pattern_fixtures.py (numpy, an
// independent implementation of the documented formulas) for a random stack and module 08's
// seed-7 preset; the token scores (duplicate_token, induction, punctuation) on synthetic heads,
// against TransformerLens's induction stripe, and against the golden token cases.
//
// Tolerances: synthetic cases are exact up to double rounding (1e-12); golden token scores 1e-12
// (the same float32 weights, normalised in double in both); golden scores 1e-9 for
// the random stack (the same float32 weights in both), 1e-6 for module 08 (our float64 forward
// rounded to float32 against numpy's float64 weights rounded to float32).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/experiment.hpp"
#include "mha/patterns.hpp"

namespace {

using mha::HeadStack;
using mha::Index;
using mha_test::message_of;

/// One head (1, n, m) from a function giving row i's weights.
template <typename F>
HeadStack one_head(Index n, Index m, F row) {
  HeadStack s(1, n, m);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < m; ++j) s(0, i, j) = row(i, j);
  }
  return s;
}

HeadStack previous_token_head(Index n) {
  return one_head(n, n,
                  [](Index i, Index j) { return (i == 0 ? j == 0 : j == i - 1) ? 1.f : 0.f; });
}

HeadStack uniform_head(Index n) {
  return one_head(n, n, [n](Index, Index) { return 1.0f / float(n); });
}

TEST(Patterns, PurePreviousTokenHeadScoresOneAndIsLabelled) {
  const auto hs = mha::score_heads(previous_token_head(6));
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_DOUBLE_EQ(*hs[0].scores.previous_token, 1.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance, 5.0 / 6.0);  // row 0 at distance 0, others 1
  EXPECT_DOUBLE_EQ(*hs[0].scores.entropy_bits, 0.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.max_weight, 1.0);
  EXPECT_TRUE(hs[0].causal);
  EXPECT_EQ(hs[0].labels, std::vector<std::string>{"previous-token"});
}

TEST(Patterns, UniformHeadHasMaximumEntropyAndNoLabel) {
  for (Index n : {2, 3, 5, 8, 33}) {
    const auto hs = mha::score_heads(uniform_head(n));
    EXPECT_NEAR(*hs[0].scores.entropy_bits, std::log2(double(n)), 1e-6) << n;
    EXPECT_NEAR(*hs[0].scores.entropy_normalized, 1.0, 1e-6) << n;
    EXPECT_NEAR(*hs[0].scores.max_weight, 1.0 / double(n), 1e-7) << n;
    EXPECT_FALSE(hs[0].causal);
    EXPECT_TRUE(hs[0].labels.empty()) << n << ": " << hs[0].labels[0];
  }
}

TEST(Patterns, CausalUniformHeadIsRecognisedAndUnlabelled) {
  const Index n = 6;
  const auto s =
      one_head(n, n, [](Index i, Index j) { return j <= i ? 1.0f / float(i + 1) : 0.f; });
  const auto hs = mha::score_heads(s);
  EXPECT_TRUE(hs[0].causal);
  EXPECT_TRUE(hs[0].labels.empty());
  // The baseline is the causal uniform head itself.
  EXPECT_NEAR(*hs[0].scores.first_token, *hs[0].uniform_baseline.first_token, 1e-7);
}

TEST(Patterns, DiagonalHeadIsPositional) {
  const auto hs =
      mha::score_heads(one_head(7, 7, [](Index i, Index j) { return i == j ? 1.f : 0.f; }));
  EXPECT_DOUBLE_EQ(*hs[0].scores.diagonal, 1.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.local_band, 1.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance, 0.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.vertical_stripe, 0.0);  // own position left out
  EXPECT_EQ(hs[0].labels, std::vector<std::string>{"positional"});
}

TEST(Patterns, FirstTokenStripe) {
  const auto hs =
      mha::score_heads(one_head(6, 6, [](Index, Index j) { return j == 0 ? 1.f : 0.f; }));
  EXPECT_DOUBLE_EQ(*hs[0].scores.vertical_stripe, 1.0);
  EXPECT_EQ(hs[0].scores.stripe_key, 0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.first_token, 1.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance, 2.5);  // (0 + 1 + ... + 5) / 6
  EXPECT_EQ(hs[0].labels, std::vector<std::string>{"vertical-stripe"});
}

TEST(Patterns, StripeOnAPunctuationKey) {
  // Every row puts 0.8 on key 3 (a comma, say) and spreads 0.2 over the others.
  const auto hs =
      mha::score_heads(one_head(8, 8, [](Index, Index j) { return j == 3 ? 0.8f : 0.2f / 7.0f; }));
  EXPECT_EQ(hs[0].scores.stripe_key, 3);
  EXPECT_NEAR(*hs[0].scores.vertical_stripe, 0.8, 1e-6);
  EXPECT_EQ(hs[0].labels, std::vector<std::string>{"vertical-stripe"});
}

TEST(Patterns, FarKeyHeadIsLongRange) {
  const Index n = 10;  // row i looks at key (i + 5) mod 10: distance 5 everywhere
  const auto hs = mha::score_heads(
      one_head(n, n, [n](Index i, Index j) { return j == (i + 5) % n ? 1.f : 0.f; }));
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance, 5.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance_normalized, 5.0 / 9.0);
  EXPECT_EQ(hs[0].labels, std::vector<std::string>{"long-range"});
}

TEST(Patterns, FullyMaskedRowsAreSkippedNeverNaN) {
  HeadStack s = previous_token_head(5);
  for (Index j = 0; j < 5; ++j) s(0, 2, j) = 0.0f;  // row 2 fully masked
  const auto hs = mha::score_heads(s);
  EXPECT_EQ(hs[0].rows_scored, 4);
  EXPECT_DOUBLE_EQ(*hs[0].scores.previous_token, 1.0);
  // Every row masked: no score, no label, no NaN.
  const auto none = mha::score_heads(HeadStack(2, 3, 3, 0.0f));
  EXPECT_EQ(none[1].rows_scored, 0);
  EXPECT_FALSE(none[1].scores.previous_token.has_value());
  EXPECT_FALSE(none[1].scores.entropy_bits.has_value());
  EXPECT_TRUE(none[1].labels.empty());
  const auto d = mha::js_distance_matrix(HeadStack(2, 3, 3, 0.0f));
  EXPECT_EQ(d(0, 1), 0.0);
}

TEST(Patterns, OneTokenHasNoPreviousToken) {
  const auto hs = mha::score_heads(HeadStack(1, 1, 1, 1.0f));
  EXPECT_FALSE(hs[0].scores.previous_token.has_value());
  EXPECT_DOUBLE_EQ(*hs[0].scores.entropy_normalized, 0.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance_normalized, 0.0);
  EXPECT_TRUE(hs[0].labels.empty());
}

TEST(Patterns, CrossAttentionShapesAreScoredByIndex) {
  // n = 3 queries, m = 5 keys, row i on key i + 1.
  const auto hs =
      mha::score_heads(one_head(3, 5, [](Index i, Index j) { return j == i + 1 ? 1.f : 0.f; }));
  EXPECT_DOUBLE_EQ(*hs[0].scores.previous_token, 0.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance, 1.0);
  EXPECT_DOUBLE_EQ(*hs[0].scores.mean_distance_normalized, 0.25);
  EXPECT_FALSE(hs[0].causal);
}

TEST(Patterns, JensenShannonDistanceEnds) {
  const Index n = 5;
  HeadStack s(3, n, n);
  for (Index i = 0; i < n; ++i) {
    s(0, i, i) = 1.0f;            // diagonal
    s(1, i, i) = 1.0f;            // the same
    s(2, i, (i + 1) % n) = 1.0f;  // disjoint support in every row
  }
  const mha::RowMatrixXd d = mha::js_distance_matrix(s);
  EXPECT_DOUBLE_EQ(d(0, 1), 0.0);
  EXPECT_DOUBLE_EQ(d(0, 2), 1.0);
  EXPECT_DOUBLE_EQ(d(2, 1), 1.0);
  EXPECT_DOUBLE_EQ(d(1, 1), 0.0);
  // Half overlap: p = (1, 0), q = (1/2, 1/2): JSD = 1/2 log2(4/3) + 1/4 log2(2/3) + 1/4 log2(2)
  HeadStack t(2, 1, 2);
  t(0, 0, 0) = 1.0f;
  t(1, 0, 0) = t(1, 0, 1) = 0.5f;
  const double jsd = 0.5 * std::log2(4.0 / 3.0) + 0.25 * std::log2(2.0 / 3.0) + 0.25;
  EXPECT_NEAR(mha::js_distance_matrix(t)(0, 1), std::sqrt(jsd), 1e-12);
}

TEST(Patterns, MeanAndMaxOverHeads) {
  HeadStack s(2, 2, 2);
  s(0, 0, 0) = 1.0f;  // head 0: diagonal
  s(0, 1, 1) = 1.0f;
  s(1, 0, 1) = 1.0f;  // head 1: row 0 -> key 1, row 1 uniform
  s(1, 1, 0) = s(1, 1, 1) = 0.5f;
  const mha::RowMatrixXf mean = mha::mean_over_heads(s);
  EXPECT_FLOAT_EQ(mean(0, 0), 0.5f);
  EXPECT_FLOAT_EQ(mean(0, 1), 0.5f);
  EXPECT_FLOAT_EQ(mean(1, 0), 0.25f);
  EXPECT_FLOAT_EQ(mean(1, 1), 0.75f);
  const mha::RowMatrixXf mx = mha::max_over_heads(s);
  EXPECT_FLOAT_EQ(mx(0, 0), 1.0f);
  EXPECT_FLOAT_EQ(mx(0, 1), 1.0f);
  EXPECT_FLOAT_EQ(mx(1, 0), 0.5f);
  EXPECT_FLOAT_EQ(mx(1, 1), 1.0f);
}

TEST(Patterns, RolloutOfOneAndTwoLayers) {
  // One layer, head average A: R = 0.5 A + 0.5 I (rows already sum to 1).
  HeadStack a = previous_token_head(3);
  const mha::RowMatrixXd r1 = mha::attention_rollout({a});
  EXPECT_DOUBLE_EQ(r1(0, 0), 1.0);
  EXPECT_DOUBLE_EQ(r1(1, 0), 0.5);
  EXPECT_DOUBLE_EQ(r1(1, 1), 0.5);
  EXPECT_DOUBLE_EQ(r1(2, 1), 0.5);
  // Two layers: R = Â Â. Row 2: 0.5 [0, .5, .5] + 0.5 [0, 0, 0.5]·... computed by hand:
  // Â = [[1,0,0],[.5,.5,0],[0,.5,.5]];  Â² row 2 = [.25, .5, .25].
  const mha::RowMatrixXd r2 = mha::attention_rollout({a, a});
  EXPECT_DOUBLE_EQ(r2(2, 0), 0.25);
  EXPECT_DOUBLE_EQ(r2(2, 1), 0.5);
  EXPECT_DOUBLE_EQ(r2(2, 2), 0.25);
  for (Index i = 0; i < 3; ++i) EXPECT_NEAR(r2.row(i).sum(), 1.0, 1e-12);
  // A fully masked row becomes the identity row.
  HeadStack z(1, 2, 2, 0.0f);
  z(0, 0, 0) = 1.0f;
  const mha::RowMatrixXd rz = mha::attention_rollout({z});
  EXPECT_DOUBLE_EQ(rz(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(rz(1, 0), 0.0);
}

TEST(Patterns, RolloutErrors) {
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([] { mha::attention_rollout({}); }),
                     "at least one layer");
  EXPECT_MESSAGE_HAS(
      message_of<mha::shape_error>([] { mha::attention_rollout({HeadStack(1, 2, 3, 0.5f)}); }),
      "layer 0 has 2 queries and 3 keys");
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([] {
                       mha::attention_rollout({uniform_head(2), uniform_head(3)});
                     }),
                     "layer 1 has 3 tokens, layer 0 has 2");
}

TEST(Patterns, ValidationNamesHeadRowAndValue) {
  HeadStack s = uniform_head(4);
  s(0, 2, 1) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([&] { mha::score_heads(s); }),
                     "attn_weights: head 0, row 2, key 1 holds NaN");
  s = uniform_head(4);
  s(0, 1, 3) = -0.25f;
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([&] { mha::js_distance_matrix(s); }),
                     "row 1, key 3 holds -0.25");
  s = uniform_head(4);
  s(0, 3, 0) = 0.125f;  // row 3 sums to 0.875
  EXPECT_MESSAGE_HAS(
      message_of<mha::value_error>([&] { mha::mean_over_heads(s, "layer 2"); }),
      "layer 2: head 0, row 3 sums to 0.875; every row must sum to 1 (within 0.001)");
  s(0, 3, 0) = std::numeric_limits<float>::infinity();
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([&] { mha::max_over_heads(s); }), "holds +inf");
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([] { mha::score_heads(HeadStack(1, 0, 3)); }),
                     "has shape (1, 0, 3)");
  EXPECT_MESSAGE_HAS(
      message_of<mha::limit_error>([] { mha::score_heads(HeadStack(300, 1, 1, 1.0f)); }),
      "300 heads");
  // float16-exported rows are accepted: off by 4e-4.
  s = uniform_head(4);
  s(0, 0, 0) += 4e-4f;
  EXPECT_NO_THROW(mha::score_heads(s));
}

TEST(Patterns, SlidingWindowMask) {
  const HeadStack m = mha::sliding_window_mask(5, 5, 1);
  for (Index i = 0; i < 5; ++i) {
    for (Index j = 0; j < 5; ++j)
      EXPECT_EQ(m(0, i, j), std::abs(i - j) > 1 ? 1.0f : 0.0f) << i << j;
  }
  const HeadStack c = mha::sliding_window_mask(5, 5, 2, true);
  EXPECT_EQ(c(0, 4, 2), 0.0f);  // i - 2
  EXPECT_EQ(c(0, 4, 1), 1.0f);  // too far back
  EXPECT_EQ(c(0, 2, 3), 1.0f);  // future
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([] { mha::sliding_window_mask(3, 3, -1); }),
                     "got -1");
  EXPECT_MESSAGE_HAS(message_of<mha::limit_error>([] { mha::sliding_window_mask(5000, 3, 1); }),
                     "limit of 4096");
  // Used as a boolean attn_mask, it gives zero weight outside the window.
  const mha::NumpyExperiment e = mha::make_numpy_experiment(7, 5, 8, 2);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  masks.attn_mask = m;
  const mha::MultiheadAttention layer(e.config, e.weights);
  const mha::AttentionResult r = layer.forward(e.x, masks);
  EXPECT_EQ(r.attn_weights(1, 0, 4), 0.0f);
  EXPECT_NO_THROW(mha::validate_attention_weights(r.attn_weights));
}

TEST(Patterns, ExplainCellMatchesTheCore) {
  const mha::NumpyExperiment e = mha::make_numpy_experiment(7, 5, 8, 2);
  mha::AttentionMasks masks;
  masks.is_causal = true;
  const mha::MultiheadAttention layer(e.config, e.weights);
  const mha::AttentionResult r = layer.forward(e.x, masks);
  for (Index h = 0; h < 2; ++h) {
    for (Index i = 0; i < 5; ++i) {
      mha::RowMatrixXd y = mha::RowMatrixXd::Zero(1, 4);
      for (Index j = 0; j < 5; ++j) {
        const mha::CellExplanation c = mha::explain_cell(r, masks, h, i, j);
        EXPECT_EQ(c.d_head, 4);
        EXPECT_DOUBLE_EQ(c.scale, 0.5);
        EXPECT_DOUBLE_EQ(c.weight, r.attn_weights(h, i, j));
        EXPECT_NEAR(c.weight_recomputed, c.weight, 1e-6);
        if (j > i) {
          EXPECT_TRUE(std::isinf(c.mask_term) && c.mask_term < 0);
          EXPECT_EQ(c.exp_shifted, 0.0);
          EXPECT_EQ(c.weight, 0.0);
        } else {
          EXPECT_EQ(c.mask_term, 0.0);
          EXPECT_NEAR(c.scaled + c.mask_term, c.score, 1e-4 * (1.0 + std::abs(c.score)));
          EXPECT_LE(c.exp_shifted, 1.0);
        }
        EXPECT_GE(c.row_sum_shifted, 1.0);
        for (Index t = 0; t < 4; ++t) y(0, t) += c.contribution[static_cast<std::size_t>(t)];
        if (j == 4) {
          for (Index t = 0; t < 4; ++t) {
            EXPECT_NEAR(y(0, t), c.head_output_i[static_cast<std::size_t>(t)],
                        1e-4 * (1.0 + std::abs(y(0, t))));
          }
        }
      }
    }
  }
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([&] { mha::explain_cell(r, masks, 2, 0, 0); }),
                     "head=2 is outside [0, 2)");
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([&] { mha::explain_cell(r, masks, 0, 0, 5); }),
                     "j=5 is outside [0, 5)");
  const mha::AttentionResult bare = layer.forward(e.x, masks, mha::ForwardOptions(false));
  EXPECT_MESSAGE_HAS(message_of<mha::shape_error>([&] { mha::explain_cell(bare, masks, 0, 0, 0); }),
                     "keep_intermediates");
}

TEST(Patterns, ExplainCellFullyMaskedRow) {
  const mha::NumpyExperiment e = mha::make_numpy_experiment(7, 3, 8, 2);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  masks.attn_mask = HeadStack(1, 3, 3, 0.0f);
  for (Index j = 0; j < 3; ++j) masks.attn_mask(0, 1, j) = 1.0f;  // row 1: every key masked
  const mha::MultiheadAttention layer(e.config, e.weights);
  const mha::AttentionResult r = layer.forward(e.x, masks);
  const mha::CellExplanation c = mha::explain_cell(r, masks, 0, 1, 2);
  EXPECT_TRUE(c.row_fully_masked);
  EXPECT_EQ(c.weight, 0.0);
  EXPECT_EQ(c.weight_recomputed, 0.0);
  EXPECT_EQ(c.row_sum_shifted, 0.0);
  for (double x : c.contribution) EXPECT_EQ(x, 0.0);
}

TEST(Patterns, AblationRelativeChange) {
  const mha::NumpyExperiment e = mha::make_numpy_experiment(7, 5, 8, 2);
  const mha::MultiheadAttention layer(e.config, e.weights);
  const mha::AblationEffect none = mha::ablation_effect(layer, e.x, e.x, e.x, {}, {0, 0});
  EXPECT_EQ(none.relative_change, 0.0);
  const mha::AblationEffect both = mha::ablation_effect(layer, e.x, e.x, e.x, {}, {1, 1});
  EXPECT_DOUBLE_EQ(both.relative_change, 1.0);  // no bias: output 0
  const mha::AblationEffect one = mha::ablation_effect(layer, e.x, e.x, e.x, {}, {1, 0});
  // Linearity of out_proj (no bias): out = out_0 + out_1, so ablating head 0 removes out_0.
  const mha::AblationEffect other = mha::ablation_effect(layer, e.x, e.x, e.x, {}, {0, 1});
  const mha::RowMatrixXf sum = one.ablated_output + other.ablated_output;
  EXPECT_TRUE(sum.isApprox(one.output, 1e-5f));
  EXPECT_GT(one.relative_change, 0.0);
  EXPECT_MESSAGE_HAS(
      message_of<mha::shape_error>([&] { mha::ablation_effect(layer, e.x, e.x, e.x, {}, {1}); }),
      "ablated_heads");
  EXPECT_MESSAGE_HAS(
      message_of<mha::value_error>(
          [] { mha::relative_change(mha::RowMatrixXf::Zero(2, 2), mha::RowMatrixXf::Ones(2, 2)); }),
      "all zero");
}

// ------------------------------------------------------------------------------------------------
// Token scores

TEST(PatternsTokens, WithoutTokensTheyAreNullopt) {
  for (const auto& hs : {mha::score_heads(previous_token_head(5)),
                         mha::score_heads(previous_token_head(5), mha::HeadTokens{})}) {
    EXPECT_FALSE(hs[0].scores.duplicate_token.has_value());
    EXPECT_FALSE(hs[0].scores.induction.has_value());
    EXPECT_FALSE(hs[0].scores.punctuation.has_value());
    EXPECT_FALSE(hs[0].uniform_baseline.punctuation.has_value());
  }
}

TEST(PatternsTokens, DuplicateTokenHeadLooksAtEveryEarlierCopy) {
  // a b a c a: rows 2 and 4 have earlier copies (row 4 two: keys 0 and 2).
  const std::vector<std::string> t = {"a", "b", "a", "c", "a"};
  // Row 4 splits 0.25 / 0.25 over its copies and 0.5 on itself; row 2 all on key 0; others self.
  const auto s = one_head(5, 5, [](Index i, Index j) {
    if (i == 2) return j == 0 ? 1.f : 0.f;
    if (i == 4) return j == 4 ? 0.5f : (j == 0 || j == 2) ? 0.25f : 0.f;
    return i == j ? 1.f : 0.f;
  });
  const auto hs = mha::score_heads(s, mha::HeadTokens{t, {}});
  EXPECT_NEAR(*hs[0].scores.duplicate_token, (1.0 + 0.5) / 2.0, 1e-12);
  // Nothing above the diagonal: causal, so the uniform head sees keys j <= i: row 2 has 1 copy
  // among 3 keys, row 4 2 among 5.
  EXPECT_TRUE(hs[0].causal);
  EXPECT_NEAR(*hs[0].uniform_baseline.duplicate_token, (1.0 / 3.0 + 2.0 / 5.0) / 2.0, 1e-12);
  // Induction keys: row 2 ("a" at 0) -> key 1; row 4 ("a" at 0, 2) -> keys 1, 3.
  EXPECT_NEAR(*hs[0].scores.induction, 0.0, 1e-12);
  EXPECT_NEAR(*hs[0].uniform_baseline.induction, (1.0 / 3.0 + 2.0 / 5.0) / 2.0, 1e-12);
  EXPECT_NEAR(*hs[0].scores.punctuation, 0.0, 1e-12);
  // duplicate_token 0.75 >= 0.5 and >= 0.367 + 0.15; local_band 0.7 does not beat the causal
  // uniform head's 0.713 by the margin.
  EXPECT_EQ(hs[0].labels, (std::vector<std::string>{"duplicate-token"}));
}

TEST(PatternsTokens, NoRepeatsAndOneTokenGiveNullopt) {
  const auto hs = mha::score_heads(uniform_head(4), mha::HeadTokens{{"w", "x", ",", "z"}, {}});
  EXPECT_FALSE(hs[0].scores.duplicate_token.has_value());
  EXPECT_FALSE(hs[0].scores.induction.has_value());
  EXPECT_NEAR(*hs[0].scores.punctuation, 0.25, 1e-7);  // float32 1/4 rows, exact
  const auto one = mha::score_heads(uniform_head(1), mha::HeadTokens{{"."}, {}});
  EXPECT_FALSE(one[0].scores.duplicate_token.has_value());
  EXPECT_FALSE(one[0].scores.induction.has_value());
  EXPECT_DOUBLE_EQ(*one[0].scores.punctuation, 1.0);
  EXPECT_DOUBLE_EQ(*one[0].uniform_baseline.punctuation, 1.0);
  EXPECT_TRUE(one[0].labels.empty());  // 1.0 does not beat the baseline 1.0 by the margin
}

TEST(PatternsTokens, PunctuationHeadIsLabelled) {
  // Every row on the last key, a period: punctuation 1 against a uniform 2/6.
  const std::vector<std::string> t = {"It", "rains", ",", "we", "stay", "."};
  const auto s = one_head(6, 6, [](Index, Index j) { return j == 5 ? 1.f : 0.f; });
  const auto hs = mha::score_heads(s, mha::HeadTokens{t, {}});
  EXPECT_DOUBLE_EQ(*hs[0].scores.punctuation, 1.0);
  EXPECT_NEAR(*hs[0].uniform_baseline.punctuation, 2.0 / 6.0, 1e-12);
  EXPECT_EQ(hs[0].labels, (std::vector<std::string>{"vertical-stripe", "punctuation"}));
}

TEST(PatternsTokens, CausalBaselineCountsOnlyAllowedKeys) {
  // Causal uniform head over ", a , b": punctuation keys 0 and 2.
  const auto s =
      one_head(4, 4, [](Index i, Index j) { return j <= i ? 1.0f / float(i + 1) : 0.f; });
  const auto hs = mha::score_heads(s, mha::HeadTokens{{",", "a", ",", "b"}, {}});
  ASSERT_TRUE(hs[0].causal);
  const double want = (1.0 + 1.0 / 2.0 + 2.0 / 3.0 + 2.0 / 4.0) / 4.0;
  EXPECT_NEAR(*hs[0].uniform_baseline.punctuation, want, 1e-12);
  EXPECT_NEAR(*hs[0].scores.punctuation, want, 1e-7);  // float32 weights 1/3
  // Row 2 (",") has an earlier copy at key 0 (weight 1/3) and an induction key 1 (1/3).
  EXPECT_NEAR(*hs[0].uniform_baseline.duplicate_token, 1.0 / 3.0, 1e-12);
  EXPECT_NEAR(*hs[0].uniform_baseline.induction, 1.0 / 3.0, 1e-12);
}

TEST(PatternsTokens, InductionEqualsTransformerLensOnARepeatedRandomSequence) {
  // <bos> + R distinct tokens, repeated: TransformerLens's induction score is the mean over the
  // second copy's rows i = R+1 .. 2R of a[i, i - (R - 1)] (the token after the first
  // occurrence). A causal head with random weights, the induction keys made heavier.
  const Index R = 9, n = 2 * R + 1;
  std::vector<std::string> tokens = {"<bos>"};
  for (Index t = 0; t < R; ++t) tokens.push_back("tok" + std::to_string(37 * t % 101));
  for (Index t = 0; t < R; ++t) tokens.push_back(tokens[static_cast<std::size_t>(t + 1)]);
  std::uint32_t state = 12345;
  const auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return float(state >> 8) / float(1u << 24);
  };
  HeadStack w(2, n, n);
  for (Index k = 0; k < 2; ++k) {
    for (Index i = 0; i < n; ++i) {
      double sum = 0.0;
      std::vector<double> row(static_cast<std::size_t>(n), 0.0);
      for (Index j = 0; j <= i; ++j) {
        double x = 0.1 + next();
        if (k == 0 && i > R && j == i - (R - 1)) x += 20.0;
        row[static_cast<std::size_t>(j)] = x;
        sum += x;
      }
      for (Index j = 0; j < n; ++j) w(k, i, j) = float(row[static_cast<std::size_t>(j)] / sum);
    }
  }
  const auto hs = mha::score_heads(w, mha::HeadTokens{tokens, {}});
  for (Index k = 0; k < 2; ++k) {
    double tl = 0.0, row_sum = 0.0;
    for (Index i = R + 1; i <= 2 * R; ++i) {
      row_sum = 0.0;
      for (Index j = 0; j < n; ++j) row_sum += double(w(k, i, j));
      tl += double(w(k, i, i - (R - 1))) / row_sum;
    }
    tl /= double(R);
    ASSERT_TRUE(hs[static_cast<std::size_t>(k)].scores.induction.has_value());
    EXPECT_NEAR(*hs[static_cast<std::size_t>(k)].scores.induction, tl, 1e-12) << k;
  }
  EXPECT_EQ(hs[0].labels, (std::vector<std::string>{"induction"}));
  // The duplicate-token rows are the same second-copy rows, one earlier copy each at i - R.
  EXPECT_TRUE(hs[1].scores.duplicate_token.has_value());
}

TEST(PatternsTokens, UnmatchedTokensAreNoRepeat) {
  // <bos> <unk> a <unk> b: two different unknown words, both read as "<unk>". A head whose row 3
  // reads key 2 (the token after the first "<unk>") and every other row its own position.
  const std::vector<std::string> t = {"<bos>", "<unk>", "a", "<unk>", "b"};
  const auto s = one_head(5, 5, [](Index i, Index j) { return (i == 3 ? j == 2 : j == i) ? 1.f : 0.f; });
  // Compared as strings, row 3 has an earlier copy (key 1) and an induction key (key 2).
  const auto as_strings = mha::score_heads(s, mha::HeadTokens{t, {}});
  EXPECT_DOUBLE_EQ(*as_strings[0].scores.induction, 1.0);
  EXPECT_DOUBLE_EQ(*as_strings[0].scores.duplicate_token, 0.0);
  EXPECT_NEAR(*as_strings[0].uniform_baseline.induction, 1.0 / 4.0, 1e-12);
  // local_band 1 against the causal uniform head's 0.713: positional as well.
  EXPECT_EQ(as_strings[0].labels, (std::vector<std::string>{"positional", "induction"}));
  // With "<unk>" unmatched no row has an earlier copy or an induction key.
  const auto unmatched = mha::score_heads(s, mha::HeadTokens{t, {}, {"<unk>"}});
  EXPECT_FALSE(unmatched[0].scores.duplicate_token.has_value());
  EXPECT_FALSE(unmatched[0].scores.induction.has_value());
  EXPECT_FALSE(unmatched[0].uniform_baseline.duplicate_token.has_value());
  EXPECT_FALSE(unmatched[0].uniform_baseline.induction.has_value());
  EXPECT_DOUBLE_EQ(*unmatched[0].scores.punctuation, 0.0);
  EXPECT_EQ(unmatched[0].labels, (std::vector<std::string>{"positional"}));
}

TEST(PatternsTokens, UnmatchedTokensLeaveOtherRepeatsScored) {
  // a <unk> a <unk> .: row 2 ("a") has its copy at key 0 and its induction key 1 ("<unk>" after
  // the first "a"); row 3 ("<unk>") has none once "<unk>" is unmatched.
  const std::vector<std::string> t = {"a", "<unk>", "a", "<unk>", "."};
  const auto s = one_head(5, 5, [](Index i, Index j) {
    if (i == 2) return j == 0 ? 0.75f : j == 1 ? 0.25f : 0.f;
    if (i == 3) return j == 1 ? 1.f : 0.f;
    return i == j ? 1.f : 0.f;
  });
  const auto hs = mha::score_heads(s, mha::HeadTokens{t, {}, {"<unk>"}});
  EXPECT_DOUBLE_EQ(*hs[0].scores.duplicate_token, 0.75);  // row 2 alone
  EXPECT_DOUBLE_EQ(*hs[0].scores.induction, 0.25);        // row 2 alone
  EXPECT_NEAR(*hs[0].uniform_baseline.duplicate_token, 1.0 / 3.0, 1e-12);
  // "." is still punctuation, and an unmatched token that is punctuation stays punctuation.
  EXPECT_NEAR(*hs[0].scores.punctuation, 1.0 / 5.0, 1e-12);
  const auto comma = mha::score_heads(s, mha::HeadTokens{t, {}, {"."}});
  EXPECT_NEAR(*comma[0].scores.punctuation, 1.0 / 5.0, 1e-12);
  // Without the list the two "<unk>" are a repeat: row 3's copy at key 1 holds all its weight.
  const auto plain = mha::score_heads(s, mha::HeadTokens{t, {}});
  EXPECT_DOUBLE_EQ(*plain[0].scores.duplicate_token, (0.75 + 1.0) / 2.0);
}

TEST(PatternsTokens, UnmatchedQueryTokensInCrossAttention) {
  // Query 1 is "<unk>" and key 0 is "<unk>": an earlier copy as strings, none when unmatched.
  const auto s = one_head(2, 3, [](Index, Index j) { return j == 0 ? 1.f : 0.f; });
  const std::vector<std::string> keys = {"<unk>", "!", "y"};
  const auto plain = mha::score_heads(s, mha::HeadTokens{keys, {"q", "<unk>"}});
  EXPECT_DOUBLE_EQ(*plain[0].scores.duplicate_token, 1.0);
  const auto unmatched = mha::score_heads(s, mha::HeadTokens{keys, {"q", "<unk>"}, {"<unk>"}});
  EXPECT_FALSE(unmatched[0].scores.duplicate_token.has_value());
  EXPECT_DOUBLE_EQ(*unmatched[0].scores.punctuation, 0.0);
}

TEST(PatternsTokens, CrossAttentionNeedsQueryTokensForDuplicateAndInduction) {
  const auto s = one_head(2, 3, [](Index, Index j) { return j == 0 ? 1.f : 0.f; });
  const std::vector<std::string> keys = {"x", "!", "y"};
  const auto keys_only = mha::score_heads(s, mha::HeadTokens{keys, {}});
  EXPECT_FALSE(keys_only[0].scores.duplicate_token.has_value());
  EXPECT_FALSE(keys_only[0].scores.induction.has_value());
  EXPECT_DOUBLE_EQ(*keys_only[0].scores.punctuation, 0.0);
  EXPECT_NEAR(*keys_only[0].uniform_baseline.punctuation, 1.0 / 3.0, 1e-12);
  // Query 1 is "x": key 0 is an earlier copy (j < i), key 1 follows it (1 <= k <= i - 1 fails:
  // i - 1 = 0), so induction has no row.
  const auto both = mha::score_heads(s, mha::HeadTokens{keys, {"q", "x"}});
  EXPECT_DOUBLE_EQ(*both[0].scores.duplicate_token, 1.0);
  EXPECT_FALSE(both[0].scores.induction.has_value());
  EXPECT_EQ(message_of<mha::shape_error>([&] {
              mha::score_heads(s, mha::HeadTokens{{"a", "b"}, {}});
            }),
            "tokens has 2 entries, attn_weights has 3 keys");
  EXPECT_EQ(message_of<mha::shape_error>([&] {
              mha::score_heads(s, mha::HeadTokens{keys, {"q"}});
            }),
            "query tokens has 1 entries, attn_weights has 2 queries");
}

TEST(PatternsTokens, PunctuationClass) {
  for (const char* t : {",", ".", "!", "?", ";", ":", "\"", "(", "$", "+", "^", "~", "?!",
                        "\xE2\x80\x94" /* — */, "\xC2\xAB" /* « */, "\xE2\x82\xAC" /* € */}) {
    EXPECT_TRUE(mha::is_punctuation_token(t)) << t;
  }
  for (const char* t :
       {"", " ", " ,", "a,", "a", "1", "\xF0\x9F\x98\x80" /* emoji, So */, "\xC2\xA9" /* (c), So */,
        "\xC3\xA9" /* e acute */, "\xE2\x80" /* truncated */, "\xC0\xAE" /* overlong '.' */,
        "\xED\xA0\x80" /* surrogate */, "\xFF"}) {
    EXPECT_FALSE(mha::is_punctuation_token(t)) << t;
  }
  // Every sample of the golden file, classified there with Python's unicodedata.
  const auto doc = mha_test::load_fixture("patterns.json");
  for (const auto& sample : doc.at("punctuation_samples")) {
    const std::string t = sample.at("token").get<std::string>();
    EXPECT_EQ(mha::is_punctuation_token(t), sample.at("punctuation").get<bool>()) << t;
  }
}

// ------------------------------------------------------------------------------------------------
// Golden values (scripts/fixtures/make_pattern_fixtures.py -> tests/fixtures/patterns.json)

void expect_scores(const mha::HeadScoreValues& s, const mha_test::json& g, double tol,
                   const std::string& where) {
  const auto opt = [&](const char* key, const std::optional<double>& v) {
    if (g.at(key).is_null()) {
      EXPECT_FALSE(v.has_value()) << where << " " << key;
    } else {
      ASSERT_TRUE(v.has_value()) << where << " " << key;
      EXPECT_NEAR(*v, g.at(key).get<double>(), tol) << where << " " << key;
    }
  };
  opt("previous_token", s.previous_token);
  opt("diagonal", s.diagonal);
  opt("local_band", s.local_band);
  opt("vertical_stripe", s.vertical_stripe);
  opt("first_token", s.first_token);
  opt("mean_distance", s.mean_distance);
  opt("mean_distance_normalized", s.mean_distance_normalized);
  opt("entropy_bits", s.entropy_bits);
  opt("entropy_normalized", s.entropy_normalized);
  opt("max_weight", s.max_weight);
  if (g.contains("punctuation")) {
    opt("duplicate_token", s.duplicate_token);
    opt("induction", s.induction);
    opt("punctuation", s.punctuation);
  }
  EXPECT_EQ(s.stripe_key, g.at("stripe_key").get<Index>()) << where;
}

/// tokens / query_tokens of a golden case (null: none).
std::vector<std::string> golden_tokens(const mha_test::json& c, const char* key) {
  if (!c.contains(key) || c.at(key).is_null()) return {};
  return c.at(key).get<std::vector<std::string>>();
}

void expect_golden(const HeadStack& w, const mha_test::json& c, double tol) {
  const std::string name = c.at("name").get<std::string>();
  const auto hs = mha::score_heads(
      w, mha::HeadTokens{golden_tokens(c, "tokens"), golden_tokens(c, "query_tokens")});
  const auto& heads = c.at("heads");
  ASSERT_EQ(hs.size(), heads.size()) << name;
  for (std::size_t k = 0; k < hs.size(); ++k) {
    const std::string where = name + " head " + std::to_string(k);
    expect_scores(hs[k].scores, heads[k].at("scores"), tol, where);
    expect_scores(hs[k].uniform_baseline, heads[k].at("uniform_baseline"), 1e-9,
                  where + " baseline");
    EXPECT_EQ(hs[k].causal, heads[k].at("causal").get<bool>()) << where;
    EXPECT_EQ(hs[k].labels, heads[k].at("labels").get<std::vector<std::string>>()) << where;
  }
  const mha::RowMatrixXd d = mha::js_distance_matrix(w);
  if (!c.contains("js_distance")) return;
  const auto& gd = c.at("js_distance");
  for (Index a = 0; a < d.rows(); ++a) {
    for (Index b = 0; b < d.cols(); ++b) {
      EXPECT_NEAR(d(a, b),
                  gd.at(static_cast<std::size_t>(a)).at(static_cast<std::size_t>(b)).get<double>(),
                  tol)
          << name << " js " << a << "," << b;
    }
  }
}

TEST(PatternsGolden, RandomStacks) {
  const auto doc = mha_test::load_fixture("patterns.json");
  for (const auto& c : doc.at("cases")) {
    if (c.contains("preset")) continue;
    expect_golden(mha_test::stack_f(c.at("attn_weights")), c, 1e-9);
  }
}

TEST(PatternsGolden, TokenCases) {
  const auto doc = mha_test::load_fixture("patterns.json");
  ASSERT_GE(doc.at("token_cases").size(), 8u);
  for (const auto& c : doc.at("token_cases")) {
    const HeadStack w = mha_test::stack_f(c.at("attn_weights"));
    expect_golden(w, c, 1e-12);
    if (c.contains("tl_induction")) {
      // TransformerLens's stripe, as numpy computed it, equals the induction score.
      const auto hs = mha::score_heads(w, mha::HeadTokens{golden_tokens(c, "tokens"), {}});
      for (std::size_t k = 0; k < hs.size(); ++k) {
        EXPECT_NEAR(*hs[k].scores.induction, c.at("tl_induction")[k].get<double>(), 1e-12) << k;
      }
    }
  }
}

TEST(PatternsGolden, Module08Preset) {
  const auto doc = mha_test::load_fixture("patterns.json");
  int seen = 0;
  for (const auto& c : doc.at("cases")) {
    if (!c.contains("preset")) continue;
    const auto& p = c.at("preset");
    const mha::NumpyExperiment e =
        mha::make_numpy_experiment(p.at("seed").get<std::uint32_t>(), p.at("tokens").get<Index>(),
                                   p.at("d_model").get<Index>(), p.at("num_heads").get<Index>());
    mha::AttentionMasks masks;
    masks.is_causal = p.at("is_causal").get<bool>();
    const mha::AttentionResult r =
        mha::numpy_experiment_forward(e, mha::numpy_experiment_input(e, false), masks);
    expect_golden(r.attn_weights, c, 1e-6);
    ++seen;
  }
  EXPECT_GE(seen, 1);
}

}  // namespace
