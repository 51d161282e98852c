// Every bad input throws the right typed error, with a message that names the values involved;
// and the small pure functions (positional encoding) give hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fixture_util.hpp"

namespace {

using mha_test::config;
using mha_test::message_of;

using mha::Index;
using mha::RowMatrixXf;

/// Deterministic, well-scaled data (no RNG needed for error tests).
RowMatrixXf filled(Index r, Index c, float seed = 0.1f) {
  RowMatrixXf m(r, c);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = std::sin(seed + 0.37f * static_cast<float>(i));
  return m;
}

mha::AttentionWeights good_weights(Index d, bool bias = true) {
  mha::VectorXf in_b, out_b;
  if (bias) {
    in_b = filled(3 * d, 1, 0.5f).col(0) * 0.1f;
    out_b = filled(d, 1, 0.7f).col(0) * 0.1f;
  }
  return mha::AttentionWeights::fused(filled(3 * d, d, 0.2f) * 0.3f, in_b,
                                      filled(d, d, 0.3f) * 0.3f, out_b);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// --- Configuration ------------------------------------------------------------------------------

TEST(Errors, IndivisibleHeadsNameBothValues) {
  const auto msg = message_of<mha::config_error>([] { config(10, 3).validate(); });
  EXPECT_MESSAGE_HAS(msg, "d_model=10");
  EXPECT_MESSAGE_HAS(msg, "num_heads=3");
  // The same error from every entry point that takes a config.
  const auto msg2 =
      message_of<mha::config_error>([] { mha::parameter_count(config(10, 3), true); });
  EXPECT_MESSAGE_HAS(msg2, "d_model=10");
  EXPECT_MESSAGE_HAS(msg2, "num_heads=3");
  const auto msg3 = message_of<mha::config_error>(
      [] { mha::MultiheadAttention(config(10, 3), good_weights(10)); });
  EXPECT_MESSAGE_HAS(msg3, "num_heads=3");
  const auto msg4 = message_of<mha::config_error>([] {
    const RowMatrixXf x = filled(2, 10);
    mha::multi_head_attention_forward(config(10, 3), good_weights(10), x, x, x);
  });
  EXPECT_MESSAGE_HAS(msg4, "d_model=10");
  message_of<mha::config_error>([] {
    const RowMatrixXf x = filled(2, 10);
    mha::multi_head_attention_reference(config(10, 3), good_weights(10), x, x, x);
  });
}

TEST(Errors, NonPositiveSizesAreConfigErrors) {
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([] { config(8, 0).validate(); }), "num_heads=0");
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([] { config(8, -1).validate(); }),
                     "num_heads=-1");
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([] { config(0, 2).validate(); }), "d_model=0");
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([] { config(-4, 2).validate(); }), "d_model=-4");
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([] { config(8, 2, -1, 0).validate(); }),
                     "kdim=-1");
  EXPECT_MESSAGE_HAS(message_of<mha::config_error>([] { config(8, 2, 0, -3).validate(); }),
                     "vdim=-3");
  EXPECT_THROW(mha::parameter_count(config(8, 0), false), mha::config_error);
  EXPECT_NO_THROW(config(8, 8).validate());  // d_head = 1 is valid
  EXPECT_NO_THROW(config(8, 1).validate());
}

TEST(Errors, SizesBeyondTheLimitsAreLimitErrors) {
  using L = mha::limits;
  EXPECT_THROW(config(L::max_d_model + 1, 1).validate(), mha::limit_error);
  EXPECT_THROW(config(2 * (L::max_num_heads + 1), L::max_num_heads + 1).validate(),
               mha::limit_error);
  EXPECT_THROW(config(8, 2, L::max_d_model + 1, 0).validate(), mha::limit_error);
  EXPECT_THROW(config(8, 2, 0, L::max_d_model + 1).validate(), mha::limit_error);
  EXPECT_THROW(mha::parameter_count(config(L::max_d_model + 1, 1), false), mha::limit_error);
  EXPECT_NO_THROW(config(L::max_d_model, L::max_num_heads).validate());
  const auto msg = message_of<mha::limit_error>([] { config(L::max_d_model + 1, 1).validate(); });
  EXPECT_MESSAGE_HAS(msg, std::to_string(L::max_d_model + 1));

  // Too many tokens (n > max_tokens), for the query and for the keys.
  const auto w = good_weights(4, false);
  const RowMatrixXf big = filled(L::max_tokens + 1, 4), small = filled(3, 4);
  EXPECT_MESSAGE_HAS(message_of<mha::limit_error>([&] {
                       mha::multi_head_attention_forward(config(4, 1), w, big, small, small);
                     }),
                     std::to_string(L::max_tokens + 1));
  EXPECT_THROW(mha::multi_head_attention_forward(config(4, 1), w, small, big, big),
               mha::limit_error);
  EXPECT_THROW(mha::multi_head_attention_reference(config(4, 1), w, big, small, small),
               mha::limit_error);

  // h * n * m beyond max_weight_entries (16 * 4096 * 4096 = 2^28 > 2^26) is refused before the
  // (h, n, m) stack (1 GiB) is allocated.
  const auto w16 = good_weights(16, false);
  const RowMatrixXf x = RowMatrixXf::Zero(L::max_tokens, 16);
  EXPECT_THROW(mha::multi_head_attention_forward(config(16, 16), w16, x, x, x), mha::limit_error);
  EXPECT_THROW(mha::multi_head_attention_reference(config(16, 16), w16, x, x, x), mha::limit_error);
}

// --- Weights ------------------------------------------------------------------------------------

TEST(Errors, WrongWeightShapesNameExpectedAndActual) {
  const auto cfg = config(8, 2);
  auto w = good_weights(8);
  w.in_proj_weight = filled(24, 9);
  const auto msg = message_of<mha::shape_error>([&] { w.validate(cfg); });
  EXPECT_MESSAGE_HAS(msg, "(24, 9)");
  EXPECT_MESSAGE_HAS(msg, "(24, 8)");
  EXPECT_THROW(mha::MultiheadAttention(cfg, w), mha::shape_error);

  auto w2 = good_weights(8);
  w2.out_proj_weight = filled(8, 7);
  const auto msg2 = message_of<mha::shape_error>([&] { mha::MultiheadAttention(cfg, w2); });
  EXPECT_MESSAGE_HAS(msg2, "(8, 7)");
  EXPECT_MESSAGE_HAS(msg2, "(8, 8)");

  auto w3 = good_weights(8);
  w3.in_proj_bias = mha::VectorXf::Zero(23);
  const auto msg3 = message_of<mha::shape_error>([&] { w3.validate(cfg); });
  EXPECT_MESSAGE_HAS(msg3, "23");
  EXPECT_MESSAGE_HAS(msg3, "24");

  auto w4 = good_weights(8);
  w4.out_proj_bias = mha::VectorXf::Zero(9);
  EXPECT_THROW(w4.validate(cfg), mha::shape_error);

  // Weights for d = 8 used with a config of d = 12.
  EXPECT_THROW(good_weights(8).validate(config(12, 2)), mha::shape_error);

  // Separate form: k_proj_weight must be (d, kdim).
  const auto sep = mha::AttentionWeights::separate(filled(8, 8), filled(8, 5), filled(8, 6), {},
                                                   filled(8, 8), {});
  EXPECT_NO_THROW(sep.validate(config(8, 2, 5, 6)));
  const auto msg5 = message_of<mha::shape_error>([&] { sep.validate(config(8, 2, 4, 6)); });
  EXPECT_MESSAGE_HAS(msg5, "(8, 5)");
  EXPECT_MESSAGE_HAS(msg5, "(8, 4)");
  // kdim != d_model cannot use the fused form.
  EXPECT_THROW(good_weights(8).validate(config(8, 2, 4, 8)), mha::shape_error);
}

TEST(Errors, NonFiniteWeightsAreValueErrors) {
  const auto cfg = config(8, 2);
  for (const float bad : {kNaN, kInf, -kInf}) {
    auto w = good_weights(8);
    w.in_proj_weight(5, 3) = bad;
    const auto msg = message_of<mha::value_error>([&] { mha::MultiheadAttention(cfg, w); });
    EXPECT_MESSAGE_HAS(msg, "in_proj_weight");
    const RowMatrixXf x = filled(3, 8);
    EXPECT_THROW(mha::multi_head_attention_forward(cfg, w, x, x, x), mha::value_error);
    EXPECT_THROW(mha::multi_head_attention_reference(cfg, w, x, x, x), mha::value_error);

    auto wb = good_weights(8);
    wb.out_proj_bias[2] = bad;
    EXPECT_THROW(wb.validate(cfg), mha::value_error);
    auto wo = good_weights(8);
    wo.out_proj_weight(0, 0) = bad;
    EXPECT_THROW(wo.validate(cfg), mha::value_error);
  }
}

// --- Inputs -------------------------------------------------------------------------------------

TEST(Errors, InputShapesAreChecked) {
  const auto cfg = config(8, 2);
  const mha::MultiheadAttention layer(cfg, good_weights(8));
  const RowMatrixXf q = filled(4, 8), kv5 = filled(5, 8), kv6 = filled(6, 8);

  // key and value token counts differ.
  const auto msg = message_of<mha::shape_error>([&] { layer.forward(q, kv5, kv6); });
  EXPECT_MESSAGE_HAS(msg, "5");
  EXPECT_MESSAGE_HAS(msg, "6");
  EXPECT_THROW(mha::multi_head_attention_reference(cfg, layer.weights(), q, kv5, kv6),
               mha::shape_error);

  // query of the wrong width.
  const auto msg2 = message_of<mha::shape_error>([&] { layer.forward(filled(4, 7)); });
  EXPECT_MESSAGE_HAS(msg2, "(4, 7)");
  // key of the wrong width (kdim = d = 8).
  const auto msg3 = message_of<mha::shape_error>([&] { layer.forward(q, filled(5, 9), kv5); });
  EXPECT_MESSAGE_HAS(msg3, "(5, 9)");
  EXPECT_THROW(layer.forward(q, kv5, filled(5, 3)), mha::shape_error);

  // Empty query (n = 0) and empty keys (m = 0).
  const auto msg4 = message_of<mha::shape_error>([&] { layer.forward(RowMatrixXf(0, 8)); });
  EXPECT_MESSAGE_HAS(msg4, "(0, 8)");
  EXPECT_THROW(layer.forward(q, RowMatrixXf(0, 8), RowMatrixXf(0, 8)), mha::shape_error);
  EXPECT_THROW(
      mha::multi_head_attention_reference(cfg, layer.weights(), RowMatrixXf(0, 8), kv5, kv5),
      mha::shape_error);
}

TEST(Errors, NonFiniteInputsAreValueErrors) {
  const auto cfg = config(8, 2);
  const mha::MultiheadAttention layer(cfg, good_weights(8));
  for (const float bad : {kNaN, kInf, -kInf}) {
    RowMatrixXf q = filled(4, 8);
    q(2, 5) = bad;
    const RowMatrixXf kv = filled(5, 8);
    const auto msg = message_of<mha::value_error>([&] { layer.forward(q, kv, kv); });
    EXPECT_MESSAGE_HAS(msg, "query");
    EXPECT_THROW(layer.forward(q), mha::value_error);
    EXPECT_THROW(mha::multi_head_attention_reference(cfg, layer.weights(), q, kv, kv),
                 mha::value_error);
    RowMatrixXf k = kv;
    k(0, 0) = bad;
    EXPECT_THROW(layer.forward(filled(4, 8), k, kv), mha::value_error);
    EXPECT_THROW(layer.forward(filled(4, 8), kv, k), mha::value_error);
  }
}

// --- Masks --------------------------------------------------------------------------------------

TEST(Errors, MaskShapesAreChecked) {
  const auto cfg = config(8, 2);
  const mha::MultiheadAttention layer(cfg, good_weights(8));
  const RowMatrixXf q = filled(4, 8), kv = filled(5, 8);

  mha::AttentionMasks wrong;
  wrong.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  wrong.attn_mask = mha::HeadStack(1, 5, 4);  // transposed: expected (4, 5)
  const auto msg = message_of<mha::shape_error>([&] { layer.forward(q, kv, kv, wrong); });
  EXPECT_MESSAGE_HAS(msg, "(4, 5)");
  EXPECT_THROW(mha::multi_head_attention_reference(cfg, layer.weights(), q, kv, kv, wrong),
               mha::shape_error);

  mha::AttentionMasks heads3;  // 3 heads for a 2-head layer
  heads3.attn_mask_kind = mha::AttentionMasks::Kind::additive;
  heads3.attn_mask = mha::HeadStack(3, 4, 5);
  EXPECT_THROW(layer.forward(q, kv, kv, heads3), mha::shape_error);
  heads3.attn_mask = mha::HeadStack(2, 4, 5);
  EXPECT_NO_THROW(layer.forward(q, kv, kv, heads3));

  mha::AttentionMasks kpm;
  kpm.key_padding_mask = {0, 1, 0, 0};  // 4 entries for m = 5 keys
  const auto msg2 = message_of<mha::shape_error>([&] { layer.forward(q, kv, kv, kpm); });
  EXPECT_MESSAGE_HAS(msg2, "4");
  EXPECT_MESSAGE_HAS(msg2, "5");
}

TEST(Errors, FloatMaskRejectsNaNAndPlusInfButTakesMinusInf) {
  const auto cfg = config(8, 2);
  const mha::MultiheadAttention layer(cfg, good_weights(8));
  const RowMatrixXf x = filled(4, 8);
  for (const float bad : {kNaN, kInf}) {
    mha::AttentionMasks masks;
    masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
    masks.attn_mask = mha::HeadStack(1, 4, 4);
    masks.attn_mask(0, 1, 2) = bad;
    const auto msg = message_of<mha::value_error>([&] { layer.forward(x, masks); });
    EXPECT_MESSAGE_HAS(msg, "attn_mask");
    EXPECT_THROW(masks.validate(2, 4, 4), mha::value_error);
    EXPECT_THROW(mha::multi_head_attention_reference(cfg, layer.weights(), x, x, x, masks),
                 mha::value_error);
  }
  mha::AttentionMasks ok;
  ok.attn_mask_kind = mha::AttentionMasks::Kind::additive;
  ok.attn_mask = mha::HeadStack(1, 4, 4);
  ok.attn_mask(0, 1, 2) = -kInf;
  ok.attn_mask(0, 3, 0) = -1e30f;  // very negative but finite: still a number
  EXPECT_NO_THROW(ok.validate(2, 4, 4));
  const auto r = layer.forward(x, ok);
  EXPECT_EQ(r.attn_weights(0, 1, 2), 0.0f);
  EXPECT_EQ(r.attn_weights(1, 1, 2), 0.0f);
  // exp(-1e30 - max) underflows: 0, or a float32 subnormal if exp clamps its argument (Eigen's
  // vectorised exp does, at about -88.4). Only -inf is promised an exact 0.
  EXPECT_LT(r.attn_weights(0, 3, 0), 1e-30f);
  EXPECT_GE(r.attn_weights(0, 3, 0), 0.0f);
  EXPECT_FALSE(mha_test::any_nan(r.output.data(), r.output.size()));
  // A whole row of -inf is a fully masked row, not an error.
  for (Index j = 0; j < 4; ++j) ok.attn_mask(0, 0, j) = -kInf;
  const auto r2 = layer.forward(x, ok);
  EXPECT_EQ(r2.fully_masked_rows[0], 1);
  EXPECT_EQ(r2.fully_masked_rows[4], 1);  // head 1, row 0
  EXPECT_FALSE(mha_test::any_nan(r2.output.data(), r2.output.size()));
}

// --- Float32 overflow of finite inputs -----------------------------------------------------------

// Finite inputs whose float32 products overflow are a value_error, never inf/NaN, and the
// reference has the same contract as the fast path ("the same contract as
// multi_head_attention_forward"), so both must refuse the same inputs.
TEST(Errors, Float32OverflowIsAValueErrorInBothPaths) {
  const Index d = 8, h = 2;
  const auto cfg = config(d, h);
  const mha::AttentionWeights ones = mha::AttentionWeights::fused(
      RowMatrixXf::Constant(3 * d, d, 1.0f), {}, RowMatrixXf::Constant(d, d, 1.0f), {});
  // 1. The projection overflows: Q = 8 * 3e38.
  const RowMatrixXf huge = RowMatrixXf::Constant(3, d, 3e38f);
  EXPECT_THROW(mha::multi_head_attention_forward(cfg, ones, huge, huge, huge), mha::value_error);
  EXPECT_THROW(mha::multi_head_attention_reference(cfg, ones, huge, huge, huge), mha::value_error);
  // 2. Only the scores overflow: Q = K = 8e19 per entry (finite), Q_i K_i^T / 2 = 4 * 6.4e39 / 2.
  const RowMatrixXf big = RowMatrixXf::Constant(3, d, 1e19f);
  EXPECT_THROW(mha::multi_head_attention_forward(cfg, ones, big, big, big), mha::value_error);
  EXPECT_THROW(mha::multi_head_attention_reference(cfg, ones, big, big, big), mha::value_error);
  // 3. A huge finite float mask value is a number (no error) until score + mask overflows.
  const RowMatrixXf x = filled(3, d);
  const auto w = good_weights(d);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
  masks.attn_mask = mha::HeadStack(1, 3, 3, 3e38f);
  masks.attn_mask(0, 0, 0) = 3.4e38f;
  EXPECT_NO_THROW(
      mha::multi_head_attention_forward(cfg, w, x, x, x, masks));  // 3e38 + O(1) is finite
  mha::AttentionMasks masks2 = masks;
  for (Index i = 0; i < masks2.attn_mask.size(); ++i) masks2.attn_mask.data()[i] = 3.4e38f;
  // x = 6e17: Q = K = 4.8e18, scores = 4 * 2.3e37 / 2 = 4.6e37 (finite); + 3.4e38 overflows.
  const RowMatrixXf x_big = RowMatrixXf::Constant(3, d, 6e17f);
  EXPECT_THROW(mha::multi_head_attention_forward(cfg, ones, x_big, x_big, x_big, masks2),
               mha::value_error);
  EXPECT_THROW(mha::multi_head_attention_reference(cfg, ones, x_big, x_big, x_big, masks2),
               mha::value_error);
}

// A finite float mask entry that takes a score below -FLT_MAX is the same error in both paths:
// float32 would make it -inf, which reads as masked, yet only -inf or a boolean mask masks.
// The mask value -FLT_MAX (torch.finfo(torch.float32).min, as many exporters write it) plus a
// score of ordinary size stays finite: such keys get weight 0 and the rest a normal softmax.
TEST(Errors, FiniteMaskOverflowingToMinusInfIsAValueErrorInBothPaths) {
  const Index d = 8, h = 2;
  const auto cfg = config(d, h);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
  masks.attn_mask = mha::HeadStack(h, 3, 3, -3.4e38f);  // per head (h, n, m)
  // Q = 4.8e18 and K = -4.8e18 per entry: scores = 4 * -2.3e37 / 2 = -4.6e37, finite;
  // + -3.4e38 is below -FLT_MAX (3.40282e38).
  const RowMatrixXf x = RowMatrixXf::Constant(3, d, 6e17f);
  RowMatrixXf in_proj = RowMatrixXf::Constant(3 * d, d, 1.0f);
  in_proj.middleRows(d, d).setConstant(-1.0f);  // K = -x
  const mha::AttentionWeights neg =
      mha::AttentionWeights::fused(in_proj, {}, RowMatrixXf::Constant(d, d, 1.0f), {});
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([&] {
                       mha::multi_head_attention_forward(cfg, neg, x, x, x, masks);
                     }),
                     "score + attn_mask overflows float32 at head 0, query 0");
  EXPECT_MESSAGE_HAS(message_of<mha::value_error>([&] {
                       mha::multi_head_attention_reference(cfg, neg, x, x, x, masks);
                     }),
                     "score + attn_mask overflows float32 at head 0, query 0");
  // The same mask shared by the heads, (n, m): the same error.
  masks.attn_mask = mha::HeadStack(1, 3, 3, -3.4e38f);
  EXPECT_THROW(mha::multi_head_attention_forward(cfg, neg, x, x, x, masks), mha::value_error);
  EXPECT_THROW(mha::multi_head_attention_reference(cfg, neg, x, x, x, masks), mha::value_error);

  // -FLT_MAX on keys 1 and 2 with ordinary scores: weights (1, 0, 0), no row fully masked.
  const RowMatrixXf xs = filled(3, d);
  const auto w = good_weights(d);
  masks.attn_mask = mha::HeadStack(1, 3, 3, 0.0f);
  for (Index i = 0; i < 3; ++i) {
    masks.attn_mask(0, i, 1) = masks.attn_mask(0, i, 2) = -std::numeric_limits<float>::max();
  }
  for (const auto& r : {mha::multi_head_attention_forward(cfg, w, xs, xs, xs, masks),
                        mha::multi_head_attention_reference(cfg, w, xs, xs, xs, masks)}) {
    for (Index head = 0; head < h; ++head) {
      for (Index i = 0; i < 3; ++i) {
        EXPECT_EQ(r.attn_weights(head, i, 0), 1.0f);  // exp(-3.4e38 - s) is exactly 0 in float
        EXPECT_EQ(r.attn_weights(head, i, 1), 0.0f);
        EXPECT_EQ(r.attn_weights(head, i, 2), 0.0f);
        EXPECT_EQ(r.fully_masked_rows[static_cast<std::size_t>(head * 3 + i)], 0);
      }
    }
  }
}

// --- Errors are all mha::error
// --------------------------------------------------------------------

TEST(Errors, EveryTypedErrorIsAnMhaError) {
  EXPECT_THROW(config(10, 3).validate(), mha::error);
  EXPECT_THROW(config(mha::limits::max_d_model + 1, 1).validate(), mha::error);
  EXPECT_THROW(mha::sinusoidal_positional_encoding(0, 4), mha::error);
}

// --- Sinusoidal positional encoding -------------------------------------------------------------

// PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)), by hand for d =
// 4: columns: sin(pos), cos(pos), sin(pos / 100), cos(pos / 100). Tolerance 1e-6: float32 of values
// in
// [-1, 1] rounds by <= 6e-8; an argument computed in float32 (pos <= 5) adds at most ~5e-7.
TEST(PositionalEncoding, HandComputedValues) {
  const RowMatrixXf pe = mha::sinusoidal_positional_encoding(6, 4);
  ASSERT_EQ(pe.rows(), 6);
  ASSERT_EQ(pe.cols(), 4);
  EXPECT_EQ(pe(0, 0), 0.0f);
  EXPECT_EQ(pe(0, 1), 1.0f);
  EXPECT_EQ(pe(0, 2), 0.0f);
  EXPECT_EQ(pe(0, 3), 1.0f);
  EXPECT_NEAR(pe(1, 0), std::sin(1.0), 1e-6);
  EXPECT_NEAR(pe(1, 1), std::cos(1.0), 1e-6);
  EXPECT_NEAR(pe(1, 2), std::sin(0.01), 1e-6);
  EXPECT_NEAR(pe(1, 3), std::cos(0.01), 1e-6);
  for (Index pos = 0; pos < 6; ++pos) {
    const double p = static_cast<double>(pos);
    EXPECT_NEAR(pe(pos, 0), std::sin(p), 1e-6) << pos;
    EXPECT_NEAR(pe(pos, 1), std::cos(p), 1e-6) << pos;
    EXPECT_NEAR(pe(pos, 2), std::sin(p / 100.0), 1e-6) << pos;
    EXPECT_NEAR(pe(pos, 3), std::cos(p / 100.0), 1e-6) << pos;
  }
  // Odd d: the last column is a sine of frequency 10000^(-(d-1)/d): d = 3 -> pos / 10000^(2/3).
  const RowMatrixXf pe3 = mha::sinusoidal_positional_encoding(3, 3);
  ASSERT_EQ(pe3.cols(), 3);
  EXPECT_NEAR(pe3(2, 2), std::sin(2.0 / std::pow(10000.0, 2.0 / 3.0)), 1e-6);
  EXPECT_NEAR(pe3(2, 1), std::cos(2.0), 1e-6);
}

// The encoding keeps the rows it computed for one d and computes only new ones: whatever came
// before (fewer rows, more rows, another d), every entry is the formula's double, bit for bit
// (the same pow, division, sin and cos as an entry computed alone).
TEST(PositionalEncoding, KeptRowsAreTheFormulasBitForBit) {
  const auto formula = [](Index pos, Index c, Index d) {
    const double angle = static_cast<double>(pos) /
                         std::pow(10000.0, static_cast<double>(c - c % 2) / static_cast<double>(d));
    return c % 2 == 0 ? std::sin(angle) : std::cos(angle);
  };
  const std::vector<std::pair<Index, Index>> calls = {{3, 8}, {7, 8}, {5, 8}, {4, 6}, {9, 8}, {2, 8}};
  for (const auto& [n, d] : calls) {
    const mha::RowMatrixXd pe = mha::sinusoidal_positional_encoding_f64(n, d);
    ASSERT_EQ(pe.rows(), n);
    ASSERT_EQ(pe.cols(), d);
    for (Index pos = 0; pos < n; ++pos) {
      for (Index c = 0; c < d; ++c) {
        ASSERT_EQ(pe(pos, c), formula(pos, c, d)) << "n=" << n << " d=" << d << " at " << pos << "," << c;
      }
    }
  }
}

TEST(PositionalEncoding, BadSizesThrow) {
  EXPECT_THROW(mha::sinusoidal_positional_encoding(0, 4), mha::shape_error);
  EXPECT_THROW(mha::sinusoidal_positional_encoding(4, 0), mha::shape_error);
  EXPECT_THROW(mha::sinusoidal_positional_encoding(-1, 4), mha::shape_error);
  const auto msg = message_of<mha::limit_error>(
      [] { mha::sinusoidal_positional_encoding(mha::limits::max_tokens + 1, 4); });
  EXPECT_MESSAGE_HAS(msg, std::to_string(mha::limits::max_tokens + 1));
  EXPECT_THROW(mha::sinusoidal_positional_encoding(4, mha::limits::max_d_model + 1),
               mha::limit_error);
}

}  // namespace
