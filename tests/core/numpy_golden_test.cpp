// Module 08's numpy program (tests/fixtures/numpy_mha.json) through the core, two ways:
//   1. mha::make_numpy_experiment(seed, n, d, h): must draw numpy's X and Wq..Wo bit for bit;
//   2. MultiheadAttention built with AttentionWeights::from_numpy of the fixture's matrices.
// numpy computes in float64 from float64 draws; the core in float32 from the float32 casts.
//
// Tolerance. The draws are N(0, 1) and unscaled, so Q, K, V entries are ~N(0, d) and the scaled
// scores reach |s| ~ 30..60 for d = 16. Rounding X and W to float32 (relative 2^-24 = 6e-8) and
// accumulating d-term dot products in float32 perturbs a score by roughly
// eps32 * sum_j |q_j k_j| / sqrt(d_head) <= ~1e-5 absolute; a softmax weight moves by at most
// w (1 - w) |ds| <= |ds| / 4, and an output by about the same relative amount. We therefore allow
// (mha_test::expect_golden)
//   weights: |a - e| <= 1e-5                       (absolute; weights are in [0, 1])
//   output : |a - e| <= 1e-5 * max|e| + 1e-5 |e|    (relative to the output's scale, ~14..47)
// Measured (fast path and reference, all five cases): weights <= 8e-7, output <= 6e-7 * max|e|.
// Measured deviations are printed as "[ maxdev ]" lines.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fixture_util.hpp"
#include "mha/experiment.hpp"

namespace {

using mha_test::json;

const json& fixture() {
  static const json doc = mha_test::load_fixture("numpy_mha.json");
  return doc;
}

std::string name_of(const json& c) { return c.at("name").get<std::string>(); }

/// Exact equality, shapes first (Eigen's operator== requires equal shapes).
template <typename A, typename B>
bool same(const A& a, const B& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

void expect_matches_numpy(const json& c, const mha::AttentionResult& r, const std::string& how) {
  const auto n = c.at("n").get<mha::Index>();
  const auto d = c.at("d_model").get<mha::Index>();
  const auto h = c.at("num_heads").get<mha::Index>();
  ASSERT_EQ(r.output.rows(), n);
  ASSERT_EQ(r.output.cols(), d);
  ASSERT_EQ(r.attn_weights.heads(), h);
  ASSERT_EQ(r.attn_weights.rows(), n);
  ASSERT_EQ(r.attn_weights.cols(), n);
  mha_test::expect_golden(r, c.at("expected"), "numpy " + name_of(c) + " " + how);
  for (std::uint8_t f : r.fully_masked_rows) EXPECT_EQ(f, 0);
}

TEST(NumpyGolden, ExperimentDrawsNumpysMatricesBitForBit) {
  for (const auto& c : fixture().at("cases")) {
    const auto e = mha::make_numpy_experiment(
        c.at("seed").get<std::uint32_t>(), c.at("n").get<mha::Index>(),
        c.at("d_model").get<mha::Index>(), c.at("num_heads").get<mha::Index>());
    EXPECT_EQ(e.config.d_model, c.at("d_model").get<mha::Index>());
    EXPECT_EQ(e.config.num_heads, c.at("num_heads").get<mha::Index>());
    const mha::RowMatrixXd X = mha_test::matrix_d(c.at("X"));
    // Exact equality of float64 values: the generator reproduces numpy's stream bit for bit.
    EXPECT_TRUE(same(e.x_f64, X)) << name_of(c) << " X";
    EXPECT_TRUE(same(e.Wq, mha_test::matrix_d(c.at("Wq")))) << name_of(c) << " Wq";
    EXPECT_TRUE(same(e.Wk, mha_test::matrix_d(c.at("Wk")))) << name_of(c) << " Wk";
    EXPECT_TRUE(same(e.Wv, mha_test::matrix_d(c.at("Wv")))) << name_of(c) << " Wv";
    EXPECT_TRUE(same(e.Wo, mha_test::matrix_d(c.at("Wo")))) << name_of(c) << " Wo";
    EXPECT_TRUE(same(e.x, X.cast<float>())) << name_of(c) << " x is the float32 cast of X";
    // The float32 PyTorch-layout weights are the transposes: in_proj rows [0,d) = Wq^T, ...
    const auto d = e.config.d_model;
    ASSERT_TRUE(e.weights.is_fused());
    ASSERT_EQ(e.weights.in_proj_weight.rows(), 3 * d);
    EXPECT_TRUE(same(e.weights.in_proj_weight.topRows(d), e.Wq.transpose().cast<float>()))
        << name_of(c);
    EXPECT_TRUE(same(e.weights.in_proj_weight.middleRows(d, d), e.Wk.transpose().cast<float>()))
        << name_of(c);
    EXPECT_TRUE(same(e.weights.in_proj_weight.bottomRows(d), e.Wv.transpose().cast<float>()))
        << name_of(c);
    EXPECT_TRUE(same(e.weights.out_proj_weight, e.Wo.transpose().cast<float>())) << name_of(c);
    EXPECT_EQ(e.weights.in_proj_bias.size(), 0);
    EXPECT_EQ(e.weights.out_proj_bias.size(), 0);
  }
}

TEST(NumpyGolden, ExperimentForwardMatchesNumpy) {
  for (const auto& c : fixture().at("cases")) {
    const auto e = mha::make_numpy_experiment(
        c.at("seed").get<std::uint32_t>(), c.at("n").get<mha::Index>(),
        c.at("d_model").get<mha::Index>(), c.at("num_heads").get<mha::Index>());
    const mha::MultiheadAttention layer(e.config, e.weights);
    expect_matches_numpy(c, layer.forward(e.x), "experiment/forward");
    expect_matches_numpy(c, mha::multi_head_attention_reference(e.config, e.weights, e.x, e.x, e.x),
                         "experiment/reference");
  }
}

TEST(NumpyGolden, FromNumpyWeightsMatchNumpy) {
  for (const auto& c : fixture().at("cases")) {
    mha::AttentionConfig cfg;
    cfg.d_model = c.at("d_model").get<mha::Index>();
    cfg.num_heads = c.at("num_heads").get<mha::Index>();
    const auto w = mha::AttentionWeights::from_numpy(
        mha_test::matrix_f(c.at("Wq")), mha_test::matrix_f(c.at("Wk")),
        mha_test::matrix_f(c.at("Wv")), mha_test::matrix_f(c.at("Wo")));
    const mha::RowMatrixXf x = mha_test::matrix_f(c.at("X"));
    const mha::MultiheadAttention layer(cfg, w);
    expect_matches_numpy(c, layer.forward(x), "from_numpy/forward");
    expect_matches_numpy(c, layer.forward(x, x, x), "from_numpy/forward(q,k,v)");
    expect_matches_numpy(c, mha::multi_head_attention_reference(cfg, w, x, x, x),
                         "from_numpy/reference");
  }
}

// The float64 path (what the page and `mha numpy-experiment` use) is numpy's computation: only
// the final rounding to float32 separates it from numpy. Weights within 1e-7 (half an ulp of
// float32 below 1 is 6e-8, plus the double rounding of exp/sum); outputs within 1e-6 of their
// scale (float32 rounding of values up to ~50, relative 6e-8).
TEST(NumpyGolden, Float64PathMatchesNumpyToFloat32Rounding) {
  for (const auto& c : fixture().at("cases")) {
    const auto e = mha::make_numpy_experiment(
        c.at("seed").get<std::uint32_t>(), c.at("n").get<mha::Index>(),
        c.at("d_model").get<mha::Index>(), c.at("num_heads").get<mha::Index>());
    const auto r = mha::numpy_experiment_forward(e, mha::numpy_experiment_input(e, false));
    const auto out = mha_test::flat(c.at("expected").at("output"));
    const auto w = mha_test::flat(c.at("expected").at("attn_weights"));
    double scale = 1.0;
    for (double v : out) scale = std::max(scale, std::abs(v));
    const auto dw = mha_test::compare(r.attn_weights.data(), w.data(), w.size(), 1e-7, 0.0);
    EXPECT_TRUE(mha_test::close(dw)) << name_of(c) << " float64 path attn_weights";
    const auto dout = mha_test::compare(r.output.data(), out.data(), out.size(), 1e-6 * scale, 0.0);
    EXPECT_TRUE(mha_test::close(dout)) << name_of(c) << " float64 path output";
    mha_test::report("numpy " + name_of(c) + " float64 path weights", dw);
  }
}

// Where float32 and float64 round differently at 3 decimals: numpy 1.24's module-08 program with
// seed 7, n 20, d 128, h 2 gives head 1, query 10, key 2 = 0.96150298 (prints 0.962) and key 5 =
// 0.03849695 (0.038); the float32 fast path gives 0.9614999 (0.961) and 0.0385001 (0.039). The
// course's unscaled randn weights make logits of order d, so float32 error grows with d_model.
TEST(NumpyGolden, Float64PathKeepsNumpysRoundingAtLargeDModel) {
  const auto e = mha::make_numpy_experiment(7, 20, 128, 2);
  const auto r = mha::numpy_experiment_forward(e, mha::numpy_experiment_input(e, false));
  EXPECT_NEAR(r.attn_weights(1, 10, 2), 0.96150298, 1e-7);
  EXPECT_NEAR(r.attn_weights(1, 10, 5), 0.03849695, 1e-7);
  EXPECT_EQ(std::round(r.attn_weights(1, 10, 2) * 1000.0f), 962.0f);
  EXPECT_EQ(std::round(r.attn_weights(1, 10, 5) * 1000.0f), 38.0f);
}

// The module's verified printout for seed 7, n 5, d 8, h 2:
//   head 0 weights, token 0: [0. 0. 0.424 0.576 0. ]   head 1 weights, token 0: [0. 0. 0. 0. 1.]
TEST(NumpyGolden, Module08Seed7PrintoutRoundsToTheVerifiedNumbers) {
  const auto e = mha::make_numpy_experiment(7, 5, 8, 2);
  const auto r = mha::MultiheadAttention(e.config, e.weights).forward(e.x);
  auto r3 = [](float v) { return std::round(static_cast<double>(v) * 1000.0) / 1000.0; };
  const double head0[5] = {0.0, 0.0, 0.424, 0.576, 0.0};
  const double head1[5] = {0.0, 0.0, 0.0, 0.0, 1.0};
  for (mha::Index j = 0; j < 5; ++j) {
    EXPECT_EQ(r3(r.attn_weights(0, 0, j)), head0[j])
        << "head 0 token 0 key " << j << ": " << r.attn_weights(0, 0, j);
    EXPECT_EQ(r3(r.attn_weights(1, 0, j)), head1[j])
        << "head 1 token 0 key " << j << ": " << r.attn_weights(1, 0, j);
  }
  // "same pattern? False": the heads differ by far more than any tolerance.
  double max_diff = 0.0;
  for (mha::Index i = 0; i < 5; ++i)
    for (mha::Index j = 0; j < 5; ++j)
      max_diff = std::max(max_diff, std::abs(static_cast<double>(r.attn_weights(0, i, j) -
                                                                 r.attn_weights(1, i, j))));
  EXPECT_GT(max_diff, 0.1);
  // The same numbers are in the fixture, recorded by the script from numpy's own output.
  const json& c = fixture().at("cases").at(0);
  ASSERT_EQ(name_of(c), "seed7_n5_d8_h2");
  EXPECT_EQ(mha_test::flat(c.at("module08_rounded").at("head0_token0")),
            std::vector<double>(head0, head0 + 5));
}

TEST(NumpyGolden, ExperimentRejectsBadArguments) {
  EXPECT_THROW(mha::make_numpy_experiment(7, 5, 10, 3), mha::config_error);
  EXPECT_THROW(mha::make_numpy_experiment(7, 0, 8, 2), mha::shape_error);
  EXPECT_THROW(mha::make_numpy_experiment(7, -1, 8, 2), mha::shape_error);
  EXPECT_THROW(mha::make_numpy_experiment(7, 5, 8, 0), mha::config_error);
  EXPECT_THROW(mha::make_numpy_experiment(7, mha::limits::max_tokens + 1, 8, 2), mha::limit_error);
}

}  // namespace
