// Property tests (STYLE.md): facts that hold for any input, checked on seeded random data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fixture_util.hpp"
#include "mha/numpy_random.hpp"

namespace {

using mha_test::config;

using mha::Index;
using mha::RowMatrixXd;
using mha::RowMatrixXf;

RowMatrixXf randn_f(mha::NumpyRandomState& rng, Index r, Index c, double scale = 1.0) {
  return (rng.randn(r, c) * scale).cast<float>();
}

mha::AttentionWeights random_fused(mha::NumpyRandomState& rng, Index d, bool bias) {
  const double s = 1.0 / std::sqrt(static_cast<double>(d));
  mha::VectorXf in_b, out_b;
  if (bias) {
    in_b = randn_f(rng, 3 * d, 1, 0.3).col(0);
    out_b = randn_f(rng, d, 1, 0.3).col(0);
  }
  return mha::AttentionWeights::fused(randn_f(rng, 3 * d, d, s), in_b, randn_f(rng, d, d, s),
                                      out_b);
}

// --- Rows of the attention matrix ---------------------------------------------------------------

// Each row of the weights sums to 1, or is exactly 0 when every key is masked (then flagged in
// fully_masked_rows). Tolerance 1e-5: a float32 sum of m <= 16 terms in [0, 1] is within
// m * 2^-24 ~ 1e-6 of the exact sum, and the normalisation adds one more rounding.
TEST(Properties, RowsSumToOneOrAreZeroWhenFullyMasked) {
  mha::NumpyRandomState rng(11);
  const Index n = 7, m = 9, d = 12, h = 3;
  const auto cfg = config(d, h);
  const auto w = random_fused(rng, d, true);
  const RowMatrixXf q = randn_f(rng, n, d), k = randn_f(rng, m, d), v = randn_f(rng, m, d);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  masks.attn_mask = mha::HeadStack(h, n, m);
  for (Index i = 0; i < masks.attn_mask.size(); ++i)
    masks.attn_mask.data()[i] = rng.random_sample() < 0.3 ? 1.0f : 0.0f;
  for (Index j = 0; j < m; ++j) masks.attn_mask(1, 4, j) = 1.0f;  // head 1, row 4: fully masked
  for (Index j = 0; j < m; ++j) masks.attn_mask(2, 0, j) = 0.0f;  // head 2, row 0: nothing masked
  for (const bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "forward" : "reference");
    const auto r = fast ? mha::multi_head_attention_forward(cfg, w, q, k, v, masks)
                        : mha::multi_head_attention_reference(cfg, w, q, k, v, masks);
    ASSERT_EQ(r.fully_masked_rows.size(), static_cast<std::size_t>(h * n));
    int full_count = 0;
    for (Index hh = 0; hh < h; ++hh)
      for (Index i = 0; i < n; ++i) {
        bool all_masked = true;
        double sum = 0.0;
        for (Index j = 0; j < m; ++j) {
          const float a = r.attn_weights(hh, i, j);
          EXPECT_GE(a, 0.0f);
          EXPECT_LE(a, 1.0f);
          if (masks.attn_mask(hh, i, j) != 0.0f) {
            EXPECT_EQ(a, 0.0f) << "masked key " << j << " must get weight exactly 0";
          } else {
            all_masked = false;
          }
          sum += a;
        }
        const auto flag = r.fully_masked_rows[static_cast<std::size_t>(hh * n + i)];
        EXPECT_EQ(flag, all_masked ? 1 : 0) << "head " << hh << " row " << i;
        if (all_masked) {
          ++full_count;
          EXPECT_EQ(sum, 0.0) << "head " << hh << " row " << i;
        } else {
          EXPECT_NEAR(sum, 1.0, 1e-5) << "head " << hh << " row " << i;
        }
      }
    EXPECT_GE(full_count, 1);
  }
}

// Causal: query i never attends to key j > i, so the strict upper triangle is exactly 0 (not just
// small: exp(-inf) = 0), for n == m and for n != m (mask j > i as torch.triu(ones(n, m), 1)).
TEST(Properties, CausalUpperTriangleIsExactlyZero) {
  mha::NumpyRandomState rng(12);
  for (const auto& [n, m] : std::vector<std::pair<Index, Index>>{{6, 6}, {4, 7}, {7, 4}, {1, 1}}) {
    const Index d = 8, h = 2;
    const auto cfg = config(d, h);
    const auto w = random_fused(rng, d, true);
    const RowMatrixXf q = randn_f(rng, n, d), kv = randn_f(rng, m, d);
    mha::AttentionMasks masks;
    masks.is_causal = true;
    for (const bool fast : {true, false}) {
      const auto r = fast ? mha::multi_head_attention_forward(cfg, w, q, kv, kv, masks)
                          : mha::multi_head_attention_reference(cfg, w, q, kv, kv, masks);
      for (Index hh = 0; hh < h; ++hh)
        for (Index i = 0; i < n; ++i) {
          double sum = 0.0;
          for (Index j = 0; j < m; ++j) {
            if (j > i) {
              EXPECT_EQ(r.attn_weights(hh, i, j), 0.0f)
                  << "n=" << n << " m=" << m << " i=" << i << " j=" << j;
            }
            sum += r.attn_weights(hh, i, j);
          }
          EXPECT_NEAR(sum, 1.0, 1e-5);
        }
      // Row 0 sees only key 0: its weight is exactly 1.
      for (Index hh = 0; hh < h; ++hh) EXPECT_FLOAT_EQ(r.attn_weights(hh, 0, 0), 1.0f);
    }
  }
}

// --- One head is plain attention -----------------------------------------------------------------

// h = 1 equals a hand-written single-head attention in double:
//   Q = x Wq^T + bq, K = x Wk^T + bk, V = x Wv^T + bv, A = softmax(Q K^T / sqrt(d)),
//   y = (A V) Wo^T + bo.
// Tolerance: float32 core vs double, |a - e| <= 1e-5 (weights) and 1e-5 * max|e| (output).
TEST(Properties, OneHeadEqualsHandWrittenSingleHeadAttention) {
  mha::NumpyRandomState rng(13);
  const Index n = 6, m = 5, d = 10;
  const auto cfg = config(d, 1);
  const auto w = random_fused(rng, d, true);
  const RowMatrixXf q = randn_f(rng, n, d), k = randn_f(rng, m, d), v = randn_f(rng, m, d);
  const RowMatrixXd W = w.in_proj_weight.cast<double>();
  const Eigen::VectorXd b = w.in_proj_bias.cast<double>();
  const RowMatrixXd Q =
      (q.cast<double>() * W.topRows(d).transpose()).rowwise() + b.head(d).transpose();
  const RowMatrixXd K =
      (k.cast<double>() * W.middleRows(d, d).transpose()).rowwise() + b.segment(d, d).transpose();
  const RowMatrixXd V =
      (v.cast<double>() * W.bottomRows(d).transpose()).rowwise() + b.tail(d).transpose();
  RowMatrixXd S = Q * K.transpose() / std::sqrt(static_cast<double>(d));
  RowMatrixXd A(n, m);
  for (Index i = 0; i < n; ++i) {
    const double mx = S.row(i).maxCoeff();
    double sum = 0.0;
    for (Index j = 0; j < m; ++j) sum += (A(i, j) = std::exp(S(i, j) - mx));
    A.row(i) /= sum;
  }
  const RowMatrixXd Y = ((A * V) * w.out_proj_weight.cast<double>().transpose()).rowwise() +
                        w.out_proj_bias.cast<double>().transpose();
  for (const bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "forward" : "reference");
    const auto r = fast ? mha::multi_head_attention_forward(cfg, w, q, k, v)
                        : mha::multi_head_attention_reference(cfg, w, q, k, v);
    const auto dw = mha_test::compare(r.attn_weights.data(), A.data(),
                                      static_cast<std::size_t>(A.size()), 1e-5, 0.0);
    const auto dy = mha_test::compare(r.output.data(), Y.data(), static_cast<std::size_t>(Y.size()),
                                      1e-5 * Y.cwiseAbs().maxCoeff(), 1e-5);
    EXPECT_TRUE(mha_test::close(dw));
    EXPECT_TRUE(mha_test::close(dy));
    mha_test::report(
        std::string("one head vs hand-written (") + (fast ? "forward" : "reference") + ") weights",
        dw);
    mha_test::report(
        std::string("one head vs hand-written (") + (fast ? "forward" : "reference") + ") output",
        dy);
  }
}

// --- Heads are interchangeable ------------------------------------------------------------------

// Permuting the heads (row blocks of W_q, W_k, W_v and of the in-projection bias, and the matching
// column blocks of W_out) permutes attn_weights and leaves the output unchanged.
// A head's weights depend only on that head's rows, but the fast path's GEMM may round a column
// of Q = x W_q^T differently when it sits at another position (Eigen packs panels and tails with
// different kernels), so weights are compared with |a - e| <= 1e-6 (float32 rounding of values in
// [0, 1]); the output sums the heads' contributions in another order: |a - e| <= 1e-5 * max|e|.
TEST(Properties, PermutingHeadsPermutesWeightsAndKeepsOutput) {
  mha::NumpyRandomState rng(14);
  const Index n = 5, d = 12, h = 4, dh = d / h;
  const std::vector<Index> perm = {2, 0, 3, 1};  // new head i is old head perm[i]
  const auto cfg = config(d, h);
  const auto w = random_fused(rng, d, true);
  mha::AttentionWeights p = w;
  for (Index i = 0; i < h; ++i)
    for (Index part = 0; part < 3; ++part) {
      p.in_proj_weight.middleRows(part * d + i * dh, dh) =
          w.in_proj_weight.middleRows(part * d + perm[i] * dh, dh);
      p.in_proj_bias.segment(part * d + i * dh, dh) =
          w.in_proj_bias.segment(part * d + perm[i] * dh, dh);
    }
  for (Index i = 0; i < h; ++i)
    p.out_proj_weight.middleCols(i * dh, dh) = w.out_proj_weight.middleCols(perm[i] * dh, dh);
  const RowMatrixXf x = randn_f(rng, n, d);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  masks.attn_mask = mha::HeadStack(1, n, n);
  masks.attn_mask(0, 1, 3) = 1.0f;
  for (const bool fast : {true, false}) {
    SCOPED_TRACE(fast ? "forward" : "reference");
    const auto a = fast ? mha::multi_head_attention_forward(cfg, w, x, x, x, masks)
                        : mha::multi_head_attention_reference(cfg, w, x, x, x, masks);
    const auto b = fast ? mha::multi_head_attention_forward(cfg, p, x, x, x, masks)
                        : mha::multi_head_attention_reference(cfg, p, x, x, x, masks);
    double max_head_diff = 0.0;
    for (Index i = 0; i < h; ++i)
      for (Index r = 0; r < n; ++r)
        for (Index c = 0; c < n; ++c) {
          EXPECT_NEAR(b.attn_weights(i, r, c), a.attn_weights(perm[i], r, c), 1e-6) << "head " << i;
          max_head_diff =
              std::max(max_head_diff,
                       std::abs(double(a.attn_weights(i, r, c) - a.attn_weights(perm[i], r, c))));
        }
    EXPECT_GT(max_head_diff, 1e-3) << "the heads must differ, or the test proves nothing";
    const auto dy = mha_test::compare(b.output.data(), a.output.data(),
                                      static_cast<std::size_t>(a.output.size()),
                                      1e-5 * a.output.cwiseAbs().maxCoeff(), 0.0);
    EXPECT_TRUE(mha_test::close(dy));
    mha_test::report(
        std::string("head permutation output (") + (fast ? "forward" : "reference") + ")", dy);
  }
}

// --- Parameter count -----------------------------------------------------------------------------

TEST(Properties, ParameterCountIsTheSameForEveryValidHeadCount) {
  for (const Index d : {8, 12, 64, 512}) {
    for (Index h = 1; h <= d && h <= mha::limits::max_num_heads; ++h) {
      if (d % h != 0) {
        EXPECT_THROW(mha::parameter_count(config(d, h), false), mha::config_error)
            << "d=" << d << " h=" << h;
        continue;
      }
      EXPECT_EQ(mha::parameter_count(config(d, h), false), 4 * d * d) << "d=" << d << " h=" << h;
      EXPECT_EQ(mha::parameter_count(config(d, h), true), 4 * d * d + 4 * d)
          << "d=" << d << " h=" << h;
    }
  }
}

TEST(Properties, ParameterCountEqualsPyTorch) {
  const auto doc = mha_test::load_fixture("param_counts.json");
  int checked = 0;
  for (const auto& row : doc.at("counts")) {
    const auto cfg = config(row.at("d_model").get<Index>(), row.at("num_heads").get<Index>(),
                            row.at("kdim").get<Index>(), row.at("vdim").get<Index>());
    EXPECT_EQ(mha::parameter_count(cfg, row.at("bias").get<bool>()), row.at("count").get<Index>())
        << row.dump();
    ++checked;
  }
  EXPECT_EQ(checked, 24);
  // Module 08: 256 for d_model = 8 without bias, with 1 or 2 heads.
  EXPECT_EQ(mha::parameter_count(config(8, 2), false), 256);
  EXPECT_EQ(mha::parameter_count(config(8, 1), false), 256);
}

// --- The fused self-attention path --------------------------------------------------------------

// One (n, d) x (d, 3d) product for q = k = v must give what three separate products over equal
// copies give. The dot products are the same sums; only Eigen's blocking may reorder them, so we
// allow float32 rounding: weights 1e-6 absolute, output 1e-6 * max|output|.
TEST(Properties, FusedSelfAttentionEqualsSeparateEqualCopies) {
  mha::NumpyRandomState rng(15);
  for (const auto& [n, d, h] :
       std::vector<std::tuple<Index, Index, Index>>{{5, 8, 2}, {17, 64, 8}, {1, 4, 4}}) {
    const auto cfg = config(d, h);
    const auto w = random_fused(rng, d, true);
    const RowMatrixXf x = randn_f(rng, n, d);
    const RowMatrixXf key_copy = x, value_copy = x;
    const mha::MultiheadAttention layer(cfg, w);
    const auto fused = layer.forward(x);
    const auto same_ref = mha::multi_head_attention_forward(cfg, w, x, x, x);
    const auto copies = layer.forward(x, key_copy, value_copy);
    for (const auto* other : {&same_ref, &copies}) {
      const auto dw =
          mha_test::compare(fused.attn_weights.data(), other->attn_weights.data(),
                            static_cast<std::size_t>(fused.attn_weights.size()), 1e-6, 0.0);
      const auto dy = mha_test::compare(fused.output.data(), other->output.data(),
                                        static_cast<std::size_t>(fused.output.size()),
                                        1e-6 * other->output.cwiseAbs().maxCoeff(), 0.0);
      EXPECT_TRUE(mha_test::close(dw)) << "n=" << n << " d=" << d;
      EXPECT_TRUE(mha_test::close(dy)) << "n=" << n << " d=" << d;
    }
  }
}

// --- Intermediates ------------------------------------------------------------------------------

// With keep_intermediates: q/k/v are the projections, softmax(scores) = attn_weights,
// head_outputs head i = A_i V_i, and head_outputs W_out^T + b_out = output. Checked in double
// from the float32 intermediates; tolerance 1e-5 (abs on weights, relative to max|.| elsewhere).
TEST(Properties, IntermediatesAreConsistentWithTheResult) {
  mha::NumpyRandomState rng(16);
  const Index n = 6, m = 8, d = 12, h = 3, kdim = 5, vdim = 7, dh = d / h;
  const auto cfg = config(d, h, kdim, vdim);
  const double s = 0.4;
  const mha::VectorXf in_b = randn_f(rng, 3 * d, 1, 0.3).col(0),
                      out_b = randn_f(rng, d, 1, 0.3).col(0);
  const auto w =
      mha::AttentionWeights::separate(randn_f(rng, d, d, s), randn_f(rng, d, kdim, s),
                                      randn_f(rng, d, vdim, s), in_b, randn_f(rng, d, d, s), out_b);
  const RowMatrixXf q = randn_f(rng, n, d), k = randn_f(rng, m, kdim), v = randn_f(rng, m, vdim);
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
  masks.attn_mask = mha::HeadStack(1, n, m);
  for (Index i = 0; i < masks.attn_mask.size(); ++i)
    masks.attn_mask.data()[i] = static_cast<float>(rng.standard_normal());
  masks.attn_mask(0, 2, 5) = -INFINITY;
  masks.key_padding_mask.assign(static_cast<std::size_t>(m), 0);
  masks.key_padding_mask[3] = 1;
  for (Index j = 0; j < m; ++j) masks.attn_mask(0, 4, j) = -INFINITY;  // row 4 fully masked

  const auto r =
      mha::multi_head_attention_forward(cfg, w, q, k, v, masks, mha::ForwardOptions{true});
  ASSERT_EQ(r.q.rows(), n);
  ASSERT_EQ(r.q.cols(), d);
  ASSERT_EQ(r.k.rows(), m);
  ASSERT_EQ(r.k.cols(), d);
  ASSERT_EQ(r.v.rows(), m);
  ASSERT_EQ(r.v.cols(), d);
  ASSERT_EQ(r.scores.heads(), h);
  ASSERT_EQ(r.scores.rows(), n);
  ASSERT_EQ(r.scores.cols(), m);
  ASSERT_EQ(r.head_outputs.rows(), n);
  ASSERT_EQ(r.head_outputs.cols(), d);

  auto check = [](const char* what, const RowMatrixXf& actual, const RowMatrixXd& expected) {
    const auto dev =
        mha_test::compare(actual.data(), expected.data(), static_cast<std::size_t>(expected.size()),
                          1e-5 * std::max(1.0, expected.cwiseAbs().maxCoeff()), 0.0);
    EXPECT_TRUE(mha_test::close(dev)) << what;
  };
  const RowMatrixXd Q = (q.cast<double>() * w.q_weight().cast<double>().transpose()).rowwise() +
                        in_b.head(d).cast<double>().transpose();
  const RowMatrixXd K = (k.cast<double>() * w.k_weight().cast<double>().transpose()).rowwise() +
                        in_b.segment(d, d).cast<double>().transpose();
  const RowMatrixXd V = (v.cast<double>() * w.v_weight().cast<double>().transpose()).rowwise() +
                        in_b.tail(d).cast<double>().transpose();
  check("q", r.q, Q);
  check("k", r.k, K);
  check("v", r.v, V);

  RowMatrixXd heads = RowMatrixXd::Zero(n, d);
  for (Index hh = 0; hh < h; ++hh) {
    RowMatrixXd A = RowMatrixXd::Zero(n, m);
    for (Index i = 0; i < n; ++i) {
      // scores = Q_i K_i^T / sqrt(d_head) + M: finite entries as computed from r.q, r.k; masked =
      // -inf.
      bool any = false;
      double mx = -INFINITY;
      for (Index j = 0; j < m; ++j) {
        const double sc = r.scores(hh, i, j);
        const bool masked = masks.key_padding_mask[static_cast<std::size_t>(j)] != 0 ||
                            std::isinf(masks.attn_mask(0, i, j));
        if (masked) {
          EXPECT_TRUE(std::isinf(sc) && sc < 0)
              << "scores(" << hh << "," << i << "," << j << ") must be -inf";
          continue;
        }
        const double expect = r.q.row(i)
                                      .segment(hh * dh, dh)
                                      .cast<double>()
                                      .dot(r.k.row(j).segment(hh * dh, dh).cast<double>()) /
                                  std::sqrt(static_cast<double>(dh)) +
                              masks.attn_mask(0, i, j);
        EXPECT_NEAR(sc, expect, 1e-5 * std::max(1.0, std::abs(expect)))
            << "scores(" << hh << "," << i << "," << j << ")";
        any = true;
        mx = std::max(mx, sc);
      }
      EXPECT_EQ(r.fully_masked_rows[static_cast<std::size_t>(hh * n + i)], any ? 0 : 1);
      if (!any) continue;
      double sum = 0.0;
      for (Index j = 0; j < m; ++j) {
        const double sc = r.scores(hh, i, j);
        A(i, j) = std::isinf(sc) ? 0.0 : std::exp(sc - mx);
        sum += A(i, j);
      }
      A.row(i) /= sum;
    }
    const auto dw = mha_test::compare(r.attn_weights.head(hh).data(), A.data(),
                                      static_cast<std::size_t>(A.size()), 1e-5, 0.0);
    EXPECT_TRUE(mha_test::close(dw)) << "softmax(scores) vs attn_weights, head " << hh;
    const RowMatrixXd Ah = r.attn_weights.head(hh).cast<double>();
    heads.middleCols(hh * dh, dh) = Ah * r.v.middleCols(hh * dh, dh).cast<double>();
  }
  check("head_outputs = A_i V_i", r.head_outputs, heads);
  for (Index j = 0; j < d; ++j) EXPECT_EQ(r.head_outputs(4, j), 0.0f) << "fully masked row 4";
  const RowMatrixXd Y =
      (r.head_outputs.cast<double>() * w.out_proj_weight.cast<double>().transpose()).rowwise() +
      out_b.cast<double>().transpose();
  check("head_outputs W_out^T + b_out = output", r.output, Y);

  // Without keep_intermediates the result carries output and weights only, and they are the same.
  const auto lean =
      mha::multi_head_attention_forward(cfg, w, q, k, v, masks, mha::ForwardOptions{false});
  EXPECT_EQ(lean.q.size(), 0);
  EXPECT_EQ(lean.k.size(), 0);
  EXPECT_EQ(lean.v.size(), 0);
  EXPECT_TRUE(lean.scores.empty());
  EXPECT_EQ(lean.head_outputs.size(), 0);
  EXPECT_TRUE(lean.output == r.output);
  EXPECT_EQ(lean.fully_masked_rows, r.fully_masked_rows);
  EXPECT_TRUE(std::equal(lean.attn_weights.data(),
                         lean.attn_weights.data() + lean.attn_weights.size(),
                         r.attn_weights.data()));
}

// --- Masks combine additively -------------------------------------------------------------------

TEST(Properties, MaskTermsCombineAdditively) {
  const Index h = 2, n = 3, m = 4;
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
  masks.attn_mask = mha::HeadStack(h, n, m);
  masks.attn_mask(0, 1, 2) = 0.5f;
  masks.attn_mask(1, 1, 2) = -2.0f;
  masks.attn_mask(1, 0, 0) = -INFINITY;
  masks.key_padding_mask = {0, 0, 0, 1};
  masks.is_causal = true;
  EXPECT_NO_THROW(masks.validate(h, n, m));
  EXPECT_EQ(masks.term(0, 1, 2), -INFINITY);  // causal: key 2 > query 1
  EXPECT_EQ(masks.term(0, 2, 2), 0.0f);
  EXPECT_EQ(masks.term(0, 2, 3), -INFINITY);  // key padding
  EXPECT_EQ(masks.term(1, 0, 0), -INFINITY);  // float -inf
  masks.is_causal = false;
  EXPECT_EQ(masks.term(0, 1, 2), 0.5f);
  EXPECT_EQ(masks.term(1, 1, 2), -2.0f);
  mha::AttentionMasks b;
  b.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  b.attn_mask = mha::HeadStack(1, n, m);
  b.attn_mask(0, 2, 1) = 1.0f;
  EXPECT_EQ(b.term(0, 2, 1), -INFINITY);
  EXPECT_EQ(b.term(1, 2, 1), -INFINITY);  // a (1, n, m) mask is shared by every head
  EXPECT_EQ(b.term(1, 2, 0), 0.0f);
}

// --- Head ablation ------------------------------------------------------------------------------

// Switching a head off zeroes its output Y_i before out_proj and nothing else: the weights of
// every head are unchanged, and the output equals out_proj applied to head_outputs with that
// head's columns zeroed. The fast path agrees with the reference within 1e-5 of the output's scale
// (float32 sums of d = 12 terms of magnitude <= ~10).
TEST(Properties, AblatedHeadOnlyLosesItsContribution) {
  mha::NumpyRandomState rng(21);
  const Index n = 5, d = 12, h = 3;
  const auto cfg = config(d, h);
  const auto w = random_fused(rng, d, true);
  const RowMatrixXf x = randn_f(rng, n, d);
  const auto full = mha::multi_head_attention_forward(cfg, w, x, x, x);
  for (Index off = 0; off < h; ++off) {
    SCOPED_TRACE("ablated head " + std::to_string(off));
    mha::ForwardOptions options;
    options.ablated_heads.assign(static_cast<std::size_t>(h), 0);
    options.ablated_heads[static_cast<std::size_t>(off)] = 1;
    const auto r = mha::multi_head_attention_forward(cfg, w, x, x, x, {}, options);
    const auto ref = mha::multi_head_attention_reference(cfg, w, x, x, x, {}, options);
    EXPECT_EQ(
        std::vector<float>(r.attn_weights.data(), r.attn_weights.data() + r.attn_weights.size()),
        std::vector<float>(full.attn_weights.data(),
                           full.attn_weights.data() + full.attn_weights.size()));
    EXPECT_TRUE((r.head_outputs.middleCols(off * 4, 4).array() == 0.0f).all());
    RowMatrixXf expected_heads = full.head_outputs;
    expected_heads.middleCols(off * 4, 4).setZero();
    const RowMatrixXf expected =
        (expected_heads * w.out_proj_weight.transpose()).rowwise() + w.out_proj_bias.transpose();
    const float scale = std::max(1.0f, expected.cwiseAbs().maxCoeff());
    EXPECT_LT((r.output - expected).cwiseAbs().maxCoeff(), 1e-5f * scale);
    EXPECT_LT((ref.output - expected).cwiseAbs().maxCoeff(), 1e-5f * scale);
    EXPECT_GT((r.output - full.output).cwiseAbs().maxCoeff(), 1e-3f);  // the head mattered
  }
  // Every head off: what is left is the output bias.
  mha::ForwardOptions all_off;
  all_off.ablated_heads.assign(static_cast<std::size_t>(h), 1);
  const auto none = mha::multi_head_attention_forward(cfg, w, x, x, x, {}, all_off);
  for (Index t = 0; t < n; ++t)
    EXPECT_EQ(RowMatrixXf(none.output.row(t)), RowMatrixXf(w.out_proj_bias.transpose()));
  // One entry per head, or none.
  mha::ForwardOptions wrong;
  wrong.ablated_heads.assign(2, 1);
  try {
    mha::multi_head_attention_forward(cfg, w, x, x, x, {}, wrong);
    ADD_FAILURE() << "no error for 2 ablation entries with 3 heads";
  } catch (const mha::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "ablated_heads has 2 entries, expected one per head, num_heads = 3"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
