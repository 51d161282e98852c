// mha::run_experiment (cpp/numpy/mha/experiment.hpp), the one entry point of the experiment that
// the JS API's numpyExperiment adapts: each road gives exactly what the functions it stands for
// give (bit for bit), the head range is refused off the grids' road, and ablated_heads is
// checked on every road.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "fixture_util.hpp"
#include "mha/experiment.hpp"

namespace {

using mha::ExperimentPrecision;
using mha::Index;

bool same_stack(const mha::HeadStack& a, const mha::HeadStack& b) {
  return a.heads() == b.heads() && a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

mha::ExperimentRequest request(Index tokens, Index d, Index h, ExperimentPrecision precision) {
  mha::ExperimentRequest r;
  r.tokens = tokens;
  r.config = mha_test::config(d, h);
  r.precision = precision;
  r.head_count = h;
  return r;
}

TEST(ExperimentRequest, Float64RoadIsNumpyExperimentForward) {
  mha::ExperimentRequest r = request(5, 8, 2, ExperimentPrecision::float64);
  r.positional = true;
  r.masks.is_causal = true;
  mha::NumpyNormalStream stream(7);
  const mha::ExperimentRun run = mha::run_experiment(stream, r);

  const mha::NumpyExperiment e = mha::make_numpy_experiment(7, 5, 8, 2);
  mha::AttentionMasks causal;
  causal.is_causal = true;
  const mha::AttentionResult want =
      mha::numpy_experiment_forward(e, mha::numpy_experiment_input(e, true), causal);
  EXPECT_TRUE(same_stack(run.result.attn_weights, want.attn_weights));
  EXPECT_TRUE(run.result.output == want.output);
  EXPECT_TRUE(run.x == mha::numpy_experiment_input(e, true));
  EXPECT_FALSE(run.layer.has_value());
  EXPECT_TRUE(run.weights().in_proj_weight == e.weights.in_proj_weight);
  // Causal: query 0 sees key 0 only.
  EXPECT_EQ(run.result.attn_weights(1, 0, 0), 1.0f);
  EXPECT_EQ(run.result.attn_weights(1, 0, 4), 0.0f);
}

TEST(ExperimentRequest, Float32RoadIsTheLayer) {
  mha::ExperimentRequest r = request(6, 16, 4, ExperimentPrecision::float32);
  r.options.keep_intermediates = false;
  mha::NumpyNormalStream stream(11);
  const mha::ExperimentRun run = mha::run_experiment(stream, r);

  mha::NumpyNormalStream fresh(11);
  mha::NumpyExperiment e = mha::make_numpy_experiment(fresh, 6, 16, 4, ExperimentPrecision::float32);
  const mha::RowMatrixXd x = mha::numpy_experiment_input(e, false);
  const mha::MultiheadAttention layer(e.config, std::move(e.weights));
  const mha::AttentionResult want = mha::numpy_experiment_forward_f32(layer, x, {}, {false});
  ASSERT_TRUE(run.layer.has_value());
  EXPECT_TRUE(same_stack(run.result.attn_weights, want.attn_weights));
  EXPECT_TRUE(run.result.output == want.output);
  EXPECT_EQ(run.result.q.size(), 0);  // keep_intermediates: false is honoured
  EXPECT_TRUE(run.weights().in_proj_weight == layer.weights().in_proj_weight);
}

TEST(ExperimentRequest, GridsRoadReturnsTheHeadRangeOnly) {
  mha::ExperimentRequest r = request(9, 32, 4, ExperimentPrecision::float32);
  r.options.weights_only = true;
  r.options.keep_intermediates = false;
  r.return_parameters = false;
  r.head_range = true;
  r.first_head = 1;
  r.head_count = 2;
  ASSERT_TRUE(r.grids());
  EXPECT_EQ(r.heads_returned(), 2);
  EXPECT_NO_THROW(r.check_head_range());
  mha::NumpyNormalStream stream(3);
  const mha::ExperimentRun run = mha::run_experiment(stream, r);

  mha::NumpyNormalStream fresh(3);
  const mha::AttentionResult want =
      mha::numpy_experiment_weights_f32(fresh, 9, r.config, false, {}, 1, 2);
  EXPECT_EQ(run.result.attn_weights.heads(), 2);
  EXPECT_TRUE(same_stack(run.result.attn_weights, want.attn_weights));
  EXPECT_EQ(run.result.output.size(), 0);
  EXPECT_EQ(run.x.size(), 0);  // no parameters on this road
}

TEST(ExperimentRequest, HeadRangeOffTheGridsRoadIsAnError) {
  mha::ExperimentRequest r = request(4, 8, 2, ExperimentPrecision::float32);
  r.head_range = true;
  r.first_head = 1;
  r.head_count = 1;
  EXPECT_FALSE(r.grids());  // return_parameters and intermediates are on
  EXPECT_EQ(r.heads_returned(), 2);
  EXPECT_EQ(mha_test::message_of<mha::parse_error>([&] { r.check_head_range(); }),
            "first_head and head_count give those heads' weights only: ask them with precision "
            "float32 (or auto, above 4M multiply-adds), weights_only: true, keep_intermediates: "
            "false and return_parameters: false");
}

TEST(ExperimentRequest, AblatedHeadsAreCheckedOnEveryRoad) {
  const std::string want = "ablated_heads has 3 entries, expected one per head, num_heads = 2";
  for (const ExperimentPrecision p : {ExperimentPrecision::float64, ExperimentPrecision::float32}) {
    for (const bool grids : {false, true}) {
      mha::ExperimentRequest r = request(4, 8, 2, p);
      r.options.ablated_heads = {1, 0, 0};
      if (grids) {
        r.options.weights_only = true;
        r.options.keep_intermediates = false;
        r.return_parameters = false;
      }
      mha::NumpyNormalStream stream(1);
      EXPECT_EQ(mha_test::message_of<mha::shape_error>([&] { mha::run_experiment(stream, r); }),
                want);
    }
  }
}

}  // namespace
