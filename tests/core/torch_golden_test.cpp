// Every PyTorch nn.MultiheadAttention case of tests/fixtures/torch_mha.json through both
// mha::multi_head_attention_forward (fast path) and mha::multi_head_attention_reference.
//
// Both sides are float32 with bit-identical inputs and weights; they differ only in summation
// order (and the reference accumulates in double). The fixture script also recomputed every case
// in float64 and found PyTorch within 2e-7 (weights, absolute) and 3e-7 (output, relative to the
// output's scale) of it. Tolerances here (mha_test::expect_golden):
//   weights: |a - e| <= 1e-5                          (absolute; weights are in [0, 1])
//   output : |a - e| <= 1e-5 * max|e| + 1e-5 |e|      (relative to the output's scale; the
//            large_logits case has outputs ~90, the others ~1..4)
// Measured: weights <= 1.5e-7, output <= 1.1e-5 absolute for large_logits (1.2e-7 of its scale),
// <= 8e-7 elsewhere.
// A fully masked row is the project's semantics (weights 0, head output 0), not PyTorch's NaN:
// the script stored the former. No NaN may appear anywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "fixture_util.hpp"

namespace {

using mha_test::json;

const json& fixture() {
  static const json doc = mha_test::load_fixture("torch_mha.json");
  return doc;
}

struct Inputs {
  mha::RowMatrixXf query, key, value;
};

Inputs inputs_of(const json& c) {
  Inputs in;
  in.query = mha_test::matrix_f(c.at("query"));
  if (c.at("self_attention").get<bool>()) {
    in.key = in.query;
    in.value = in.query;
  } else {
    in.key = mha_test::matrix_f(c.at("key"));
    in.value = mha_test::matrix_f(c.at("value"));
  }
  return in;
}

void check_case(const json& c, const mha::AttentionResult& r, const std::string& how) {
  const std::string name = c.at("name").get<std::string>() + " (" + how + ")";
  const json& exp = c.at("expected");
  const auto n = c.at("n").get<mha::Index>();
  const auto m = c.at("m").get<mha::Index>();
  const auto d = c.at("d_model").get<mha::Index>();
  const auto h = c.at("num_heads").get<mha::Index>();
  ASSERT_EQ(r.output.rows(), n) << name;
  ASSERT_EQ(r.output.cols(), d) << name;
  ASSERT_EQ(r.attn_weights.heads(), h) << name;
  ASSERT_EQ(r.attn_weights.rows(), n) << name;
  ASSERT_EQ(r.attn_weights.cols(), m) << name;
  EXPECT_FALSE(mha_test::any_nan(r.output.data(), r.output.size())) << name;
  EXPECT_FALSE(mha_test::any_nan(r.attn_weights.data(), r.attn_weights.size())) << name;

  mha_test::expect_golden(r, exp, "torch " + name);

  const auto full = mha_test::flat(exp.at("fully_masked_rows"));
  ASSERT_EQ(r.fully_masked_rows.size(), full.size()) << name << " fully_masked_rows is (h, n)";
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(static_cast<double>(r.fully_masked_rows[i]), full[i])
        << name << " fully_masked_rows[" << i << "]";
    if (full[i] != 0.0) {
      const auto head = static_cast<mha::Index>(i) / n;
      const auto row = static_cast<mha::Index>(i) % n;
      for (mha::Index j = 0; j < m; ++j)
        EXPECT_EQ(r.attn_weights(head, row, j), 0.0f)
            << name << " fully masked row weights must be exactly 0";
    }
  }
}

TEST(TorchGolden, FixtureCoversTheRequiredCases) {
  std::vector<std::string> names;
  for (const auto& c : fixture().at("cases")) names.push_back(c.at("name").get<std::string>());
  for (const char* required :
       {"bias", "no_bias", "bool_mask_2d", "bool_mask_per_head", "float_mask", "key_padding_mask",
        "causal", "fully_masked_row", "fully_masked_row_one_head", "cross_kdim_vdim",
        "large_logits", "d_head_1", "one_head", "float_key_padding_mask",
        "float_key_padding_mask_float_attn_mask"})
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
}

TEST(TorchGolden, FastPathMatchesPyTorch) {
  for (const auto& c : fixture().at("cases")) {
    const Inputs in = inputs_of(c);
    const auto r =
        mha::multi_head_attention_forward(mha_test::torch_config(c), mha_test::torch_weights(c),
                                          in.query, in.key, in.value, mha_test::torch_masks(c));
    check_case(c, r, "forward");
  }
}

TEST(TorchGolden, ReferenceMatchesPyTorch) {
  for (const auto& c : fixture().at("cases")) {
    const Inputs in = inputs_of(c);
    const auto r =
        mha::multi_head_attention_reference(mha_test::torch_config(c), mha_test::torch_weights(c),
                                            in.query, in.key, in.value, mha_test::torch_masks(c));
    check_case(c, r, "reference");
  }
}

TEST(TorchGolden, LayerSelfAttentionOverloadMatchesPyTorch) {
  for (const auto& c : fixture().at("cases")) {
    if (!c.at("self_attention").get<bool>()) continue;
    const Inputs in = inputs_of(c);
    const mha::MultiheadAttention layer(mha_test::torch_config(c), mha_test::torch_weights(c));
    EXPECT_EQ(layer.has_bias(), c.at("bias").get<bool>());
    check_case(c, layer.forward(in.query, mha_test::torch_masks(c)), "layer.forward(x)");
  }
}

// The project's semantics for a fully masked row, spelled out on the fixture: in
// "fully_masked_row" row 2 is masked for every head, so its output is exactly out_proj.bias
// (every head output is 0); in "fully_masked_row_one_head" only head 0's part of row 1 is 0.
TEST(TorchGolden, FullyMaskedRowOutputIsTheBias) {
  for (const auto& c : fixture().at("cases")) {
    if (c.at("name").get<std::string>() != "fully_masked_row") continue;
    const Inputs in = inputs_of(c);
    const auto w = mha_test::torch_weights(c);
    const auto r = mha::multi_head_attention_forward(mha_test::torch_config(c), w, in.query, in.key,
                                                     in.value, mha_test::torch_masks(c));
    for (mha::Index j = 0; j < r.output.cols(); ++j)
      EXPECT_EQ(r.output(2, j), w.out_proj_bias[j]) << j;
    for (mha::Index j = 0; j < r.head_outputs.cols(); ++j)
      EXPECT_EQ(r.head_outputs(2, j), 0.0f) << j;
    return;
  }
  FAIL() << "case fully_masked_row missing";
}

TEST(TorchGolden, FullyMaskedRowInOneHeadZeroesOnlyThatHead) {
  for (const auto& c : fixture().at("cases")) {
    if (c.at("name").get<std::string>() != "fully_masked_row_one_head") continue;
    const Inputs in = inputs_of(c);
    const auto cfg = mha_test::torch_config(c);
    const auto r = mha::multi_head_attention_forward(cfg, mha_test::torch_weights(c), in.query,
                                                     in.key, in.value, mha_test::torch_masks(c));
    const mha::Index dh = cfg.d_head();
    ASSERT_EQ(r.fully_masked_rows.size(), static_cast<std::size_t>(2 * 5));
    EXPECT_EQ(r.fully_masked_rows[1], 1);  // head 0, row 1
    for (mha::Index j = 0; j < dh; ++j) EXPECT_EQ(r.head_outputs(1, j), 0.0f);
    double head1 = 0.0;
    for (mha::Index j = dh; j < 2 * dh; ++j)
      head1 += std::abs(static_cast<double>(r.head_outputs(1, j)));
    EXPECT_GT(head1, 1e-3) << "head 1 of row 1 is not masked and must contribute";
    return;
  }
  FAIL() << "case fully_masked_row_one_head missing";
}

}  // namespace
