// numpyExperiment's kept draws and its precision (cpp/numpy/mha/experiment.hpp):
//   - NumpyNormalStream: slices of one kept stream are exactly numpy's consecutive randn calls,
//     in whatever order they are asked for;
//   - make_numpy_experiment(stream, ...) is make_numpy_experiment(seed, ...), bit for bit;
//   - numpy_experiment_work / auto_experiment_precision at the 4e6 boundary;
//   - numpy_experiment_forward_f32 (the float32 fast path) against the float64 path and against
//     numpy's own numbers (tests/fixtures/numpy_mha.json, module 08's program);
//   - numpy_experiment_weights_f32 (the grids' path: weights of a head range straight from the
//     draws) against numpy_experiment_forward_f32 and numpy's numbers, and its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "fixture_util.hpp"
#include "mha/experiment.hpp"
#include "mha/kernels.hpp"
#include "mha/numpy_random.hpp"

namespace {

using mha::ExperimentPrecision;
using mha::Index;

/// Exact equality, shapes first (Eigen's operator== requires equal shapes).
template <typename A, typename B>
bool same(const A& a, const B& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

/// What numpy does after np.random.seed(seed): X = randn(n, d), then Wq, Wk, Wv, Wo = randn(d, d).
struct Consecutive {
  mha::RowMatrixXd x, wq, wk, wv, wo;
  Consecutive(std::uint32_t seed, Index n, Index d) {
    mha::NumpyRandomState rng(seed);
    x = rng.randn(n, d);
    wq = rng.randn(d, d);
    wk = rng.randn(d, d);
    wv = rng.randn(d, d);
    wo = rng.randn(d, d);
  }
};

/// The stream's draws [offset, offset + rows * cols) as a (rows, cols) row-major matrix.
mha::RowMatrixXd slice(mha::NumpyNormalStream& s, Index offset, Index rows, Index cols) {
  return Eigen::Map<const mha::RowMatrixXd>(s.draws(offset, rows * cols), rows, cols);
}

TEST(NumpyNormalStream, SlicesAreConsecutiveRandnCallsInAnyOrder) {
  mha::NumpyNormalStream stream(7);
  EXPECT_EQ(stream.seed(), 7u);
  EXPECT_EQ(stream.drawn(), 0);
  const Index d = 8;
  // Token counts 5, then 3 (fewer: nothing new drawn), then 9 (more: drawn on), as the page asks.
  for (const Index n : {5, 3, 9}) {
    const Consecutive numpy(7, n, d);
    const Index before = stream.drawn();
    EXPECT_TRUE(same(slice(stream, 0, n, d), numpy.x)) << "X, n = " << n;
    const Index w = n * d;
    EXPECT_TRUE(same(slice(stream, w, d, d), numpy.wq)) << "Wq, n = " << n;
    EXPECT_TRUE(same(slice(stream, w + d * d, d, d), numpy.wk)) << "Wk, n = " << n;
    EXPECT_TRUE(same(slice(stream, w + 2 * d * d, d, d), numpy.wv)) << "Wv, n = " << n;
    EXPECT_TRUE(same(slice(stream, w + 3 * d * d, d, d), numpy.wo)) << "Wo, n = " << n;
    EXPECT_EQ(stream.drawn(), std::max(before, n * d + 4 * d * d))
        << "draws only up to what was asked";
  }
  // The polar method caches its second variate: an odd count (5 * 8 + 1 = 41 draws) splits a pair.
  mha::NumpyRandomState rng(7);
  for (Index i = 0; i < 41; ++i)
    EXPECT_EQ(stream.draws(i, 1)[0], rng.standard_normal()) << "draw " << i;
  // A new seed is a new stream (the binding replaces its stream when the seed changes).
  mha::NumpyNormalStream other(8);
  const Consecutive numpy8(8, 4, d);
  EXPECT_TRUE(same(slice(other, 0, 4, d), numpy8.x));
  EXPECT_TRUE(same(slice(other, 4 * d + 3 * d * d, d, d), numpy8.wo));
  EXPECT_FALSE(same(slice(other, 0, 4, d), slice(stream, 0, 4, d)));
}

TEST(NumpyNormalStream, NegativeOffsetOrCountIsAShapeError) {
  mha::NumpyNormalStream stream(7);
  EXPECT_MESSAGE_HAS(mha_test::message_of<mha::shape_error>([&] { stream.draws(-1, 3); }),
                     "draws(-1, 3)");
  EXPECT_MESSAGE_HAS(mha_test::message_of<mha::shape_error>([&] { stream.draws(0, -2); }),
                     "non-negative");
  EXPECT_EQ(stream.drawn(), 0);
}

TEST(NumpyNormalStream, ExperimentFromAStreamIsTheSeedsExperimentBitForBit) {
  mha::NumpyNormalStream stream(7);
  // Out of order and with several head counts: the page keeps one stream for every change.
  const Index cases[][3] = {{5, 8, 2}, {3, 8, 2}, {9, 8, 4}, {5, 8, 1}, {20, 16, 4}};
  for (const auto& c : cases) {
    const Index n = c[0], d = c[1], h = c[2];
    const std::string what =
        "n " + std::to_string(n) + " d " + std::to_string(d) + " h " + std::to_string(h);
    const auto e = mha::make_numpy_experiment(7, n, d, h);
    const auto s = mha::make_numpy_experiment(stream, n, d, h);
    EXPECT_EQ(s.config.d_model, d);
    EXPECT_EQ(s.config.num_heads, h);
    EXPECT_TRUE(same(s.x_f64, e.x_f64)) << what;
    EXPECT_TRUE(same(s.x, e.x)) << what;
    EXPECT_TRUE(same(s.Wq, e.Wq)) << what;
    EXPECT_TRUE(same(s.Wk, e.Wk)) << what;
    EXPECT_TRUE(same(s.Wv, e.Wv)) << what;
    EXPECT_TRUE(same(s.Wo, e.Wo)) << what;
    EXPECT_TRUE(same(s.weights.in_proj_weight, e.weights.in_proj_weight)) << what;
    EXPECT_TRUE(same(s.weights.out_proj_weight, e.weights.out_proj_weight)) << what;
    // And so the float64 forward is the same, bit for bit.
    const auto rs = mha::numpy_experiment_forward(s, mha::numpy_experiment_input(s, false));
    const auto re = mha::numpy_experiment_forward(e, mha::numpy_experiment_input(e, false));
    ASSERT_EQ(rs.attn_weights.size(), re.attn_weights.size());
    EXPECT_TRUE(std::equal(rs.attn_weights.data(), rs.attn_weights.data() + rs.attn_weights.size(),
                           re.attn_weights.data()))
        << what;
    EXPECT_TRUE(same(rs.output, re.output)) << what;
    // float32: the float64 matrices are not filled; X and the float32 weights are the same.
    const auto f = mha::make_numpy_experiment(stream, n, d, h, ExperimentPrecision::float32);
    EXPECT_EQ(f.Wq.size(), 0) << what;
    EXPECT_EQ(f.Wo.size(), 0) << what;
    EXPECT_TRUE(same(f.x_f64, e.x_f64)) << what;
    EXPECT_TRUE(same(f.weights.in_proj_weight, e.weights.in_proj_weight)) << what;
    EXPECT_TRUE(same(f.weights.out_proj_weight, e.weights.out_proj_weight)) << what;
  }
  // A stream of another seed is not silently reused: its own draws.
  mha::NumpyNormalStream eight(8);
  EXPECT_TRUE(same(mha::make_numpy_experiment(eight, 4, 8, 2).x_f64,
                   mha::make_numpy_experiment(8, 4, 8, 2).x_f64));
}

TEST(ExperimentPrecision, WorkAndTheAutoBoundary) {
  // n * d * (4d + 2n): module 08 (5, 8) is 5 * 8 * 42 = 1680; the page's target sizes.
  EXPECT_EQ(mha::numpy_experiment_work(5, 8), 1680.0);
  EXPECT_EQ(mha::numpy_experiment_work(64, 512), 71303168.0);
  EXPECT_EQ(mha::numpy_experiment_work(512, 768), 1610612736.0);
  EXPECT_EQ(mha::kExperimentFloat64MaxWork, 4e6);
  // No (n, d) gives 4e6 exactly; the nearest on either side at d 64 and d 128:
  EXPECT_EQ(mha::numpy_experiment_work(124, 64), 3999744.0);
  EXPECT_EQ(mha::numpy_experiment_work(125, 64), 4048000.0);
  EXPECT_EQ(mha::numpy_experiment_work(50, 128), 3916800.0);
  EXPECT_EQ(mha::numpy_experiment_work(51, 128), 4008192.0);
  EXPECT_EQ(mha::auto_experiment_precision(124, 64), ExperimentPrecision::float64);
  EXPECT_EQ(mha::auto_experiment_precision(125, 64), ExperimentPrecision::float32);
  EXPECT_EQ(mha::auto_experiment_precision(50, 128), ExperimentPrecision::float64);
  EXPECT_EQ(mha::auto_experiment_precision(51, 128), ExperimentPrecision::float32);
  EXPECT_EQ(mha::auto_experiment_precision(5, 8), ExperimentPrecision::float64);
  EXPECT_EQ(mha::auto_experiment_precision(64, 512), ExperimentPrecision::float32);
  // At the largest page sizes the product is far beyond 2^31 and still exact in double.
  EXPECT_EQ(mha::numpy_experiment_work(mha::limits::max_tokens, 1024),
            static_cast<double>(mha::limits::max_tokens) * 1024.0 *
                (4.0 * 1024.0 + 2.0 * static_cast<double>(mha::limits::max_tokens)));
}

// Tolerances of the float32 path, as NumpyGolden's (numpy_golden_test.cpp, where they are
// derived): X and W rounded to float32 (relative 6e-8) and d-term dot products accumulated in
// float32 move a score by about 1e-5 at most for these sizes (|scores| up to ~60 at d 16), a
// softmax weight by at most a quarter of that; so
//   weights: |a - e| <= 1e-5 (absolute, weights are in [0, 1]);
//   output : |a - e| <= 1e-5 * max|e| + 1e-5 * |e|.
// Measured (native): module 08 weights 4.8e-7, output 4.5e-6 absolute; fixture cases
// weights <= 4.5e-7.
constexpr double kF32WeightsAtol = 1e-5;
constexpr double kF32OutputScaledAtol = 1e-5;
constexpr double kF32OutputRtol = 1e-5;

double max_abs(const mha::RowMatrixXf& m) { return m.cwiseAbs().maxCoeff(); }

TEST(ExperimentPrecision, Float32PathAgreesWithFloat64PathForModule08) {
  mha::NumpyNormalStream stream(7);
  const auto e64 = mha::make_numpy_experiment(stream, 5, 8, 2, ExperimentPrecision::float64);
  const auto r64 = mha::numpy_experiment_forward(e64, mha::numpy_experiment_input(e64, false));
  auto e32 = mha::make_numpy_experiment(stream, 5, 8, 2, ExperimentPrecision::float32);
  const mha::MultiheadAttention layer(e32.config, e32.weights);
  const auto r32 =
      mha::numpy_experiment_forward_f32(layer, mha::numpy_experiment_input(e32, false));
  const auto dw =
      mha_test::compare(r32.attn_weights.data(), r64.attn_weights.data(),
                        static_cast<std::size_t>(r64.attn_weights.size()), kF32WeightsAtol, 0.0);
  EXPECT_TRUE(mha_test::close(dw)) << "weights";
  const double scale = max_abs(r64.output);
  const auto dout = mha_test::compare(r32.output.data(), r64.output.data(),
                                      static_cast<std::size_t>(r64.output.size()),
                                      kF32OutputScaledAtol * scale, kF32OutputRtol);
  EXPECT_TRUE(mha_test::close(dout)) << "output";
  mha_test::report("module 08 float32 path vs float64 path weights", dw);
  mha_test::report("module 08 float32 path vs float64 path output", dout);
  // Not the same arithmetic: the two differ somewhere (else this test would compare one path).
  EXPECT_GT(dw.max_abs + dout.max_abs, 0.0);
  // Module 08's printed numbers, to 3 decimals: head 0 token 0 = [0 0 0.424 0.576 0],
  // head 1 token 0 = [0 0 0 0 1], the same in float32.
  const double head0[5] = {0.0, 0.0, 0.424, 0.576, 0.0};
  const double head1[5] = {0.0, 0.0, 0.0, 0.0, 1.0};
  for (Index j = 0; j < 5; ++j) {
    EXPECT_EQ(std::round(static_cast<double>(r32.attn_weights(0, 0, j)) * 1000.0) / 1000.0,
              head0[j]);
    EXPECT_EQ(std::round(static_cast<double>(r32.attn_weights(1, 0, j)) * 1000.0) / 1000.0,
              head1[j]);
  }
  // Intermediates kept by default, dropped on request (the float64 path always keeps them).
  EXPECT_EQ(r32.scores.size(), 2 * 5 * 5);
  const auto lean = mha::numpy_experiment_forward_f32(
      layer, mha::numpy_experiment_input(e32, false), {}, mha::ForwardOptions(false));
  EXPECT_EQ(lean.scores.size(), 0);
  EXPECT_EQ(lean.q.size(), 0);
  EXPECT_TRUE(std::equal(lean.attn_weights.data(),
                         lean.attn_weights.data() + lean.attn_weights.size(),
                         r32.attn_weights.data()));
}

TEST(ExperimentPrecision, Float32PathMatchesNumpysGoldenNumbers) {
  const mha_test::json doc = mha_test::load_fixture("numpy_mha.json");
  ASSERT_EQ(doc.at("cases").at(0).at("name").get<std::string>(), "seed7_n5_d8_h2");
  for (const auto& c : doc.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    mha::NumpyNormalStream stream(c.at("seed").get<std::uint32_t>());
    auto e =
        mha::make_numpy_experiment(stream, c.at("n").get<Index>(), c.at("d_model").get<Index>(),
                                   c.at("num_heads").get<Index>(), ExperimentPrecision::float32);
    const mha::MultiheadAttention layer(e.config, e.weights);
    const auto r = mha::numpy_experiment_forward_f32(layer, mha::numpy_experiment_input(e, false));
    const auto w = mha_test::flat(c.at("expected").at("attn_weights"));
    const auto out = mha_test::flat(c.at("expected").at("output"));
    ASSERT_EQ(static_cast<std::size_t>(r.attn_weights.size()), w.size()) << name;
    ASSERT_EQ(static_cast<std::size_t>(r.output.size()), out.size()) << name;
    double scale = 0.0;
    for (double v : out) scale = std::max(scale, std::abs(v));
    const auto dw =
        mha_test::compare(r.attn_weights.data(), w.data(), w.size(), kF32WeightsAtol, 0.0);
    EXPECT_TRUE(mha_test::close(dw)) << name << " weights";
    const auto dout = mha_test::compare(r.output.data(), out.data(), out.size(),
                                        kF32OutputScaledAtol * scale, kF32OutputRtol);
    EXPECT_TRUE(mha_test::close(dout)) << name << " output";
    mha_test::report("numpy " + name + " float32 experiment path weights", dw);
  }
}

// numpy_experiment_weights_f32 against the layer path: with the blocked kernels (wasm, and native
// builds with -DMHA_BLOCKED_GEMM=ON) the same arithmetic in the same order, so bit for bit
// (tests/js/precision.test.mjs checks that in wasm); with Eigen's GEMM the projection is a
// product of another shape, which Eigen may block and sum in another order: two float32 sums of
// the same d terms. The course's unscaled randn weights make the logits large (about
// d·sqrt(d_head) / sqrt(d_head) ~ 100 at d 96), so a weight may move by 1e-5 or so (measured
// natively: 2.0e-5 at 33 tokens, d 96, 6 heads); 1e-4 absolute on weights in [0, 1].
constexpr double kWeightsPathAtol = 1e-4;

TEST(ExperimentWeightsPath, HeadRangesMatchTheLayerPath) {
  struct Case {
    Index n, d, h;
    bool positional, causal;
  };
  for (const Case& k : {Case{5, 8, 2, false, false}, Case{33, 96, 6, true, false},
                        Case{17, 64, 4, false, true}}) {
    mha::NumpyNormalStream stream(7);
    auto e = mha::make_numpy_experiment(stream, k.n, k.d, k.h, ExperimentPrecision::float32);
    const mha::MultiheadAttention layer(e.config, e.weights);
    mha::AttentionMasks masks;
    masks.is_causal = k.causal;
    const auto full = mha::numpy_experiment_forward_f32(
        layer, mha::numpy_experiment_input(e, k.positional), masks, mha::ForwardOptions(false));
    for (Index first = 0; first < k.h; ++first) {
      for (Index count = 1; first + count <= k.h; ++count) {
        const auto r = mha::numpy_experiment_weights_f32(stream, k.n, e.config, k.positional,
                                                         masks, first, count);
        ASSERT_EQ(r.attn_weights.heads(), count);
        ASSERT_EQ(r.fully_masked_rows.size(), static_cast<std::size_t>(count * k.n));
        EXPECT_EQ(r.output.size(), 0);
        EXPECT_EQ(r.scores.size(), 0);
        const auto diff = mha_test::compare(
            r.attn_weights.data(), full.attn_weights.data() + first * k.n * k.n,
            static_cast<std::size_t>(count * k.n * k.n), kWeightsPathAtol, 0.0);
        EXPECT_TRUE(mha_test::close(diff)) << k.n << " " << k.d << " heads " << first << "+" << count;
        if (mha::kernels::uses_blocked_gemm()) {
          EXPECT_EQ(diff.max_abs, 0.0);
        }
      }
    }
  }
  // Module 08's printed row, from this path too: head 0 token 0 = [0 0 0.424 0.576 0].
  mha::NumpyNormalStream stream(7);
  const mha::AttentionConfig c{8, 2};
  const auto r = mha::numpy_experiment_weights_f32(stream, 5, c, false, {}, 0, 1);
  const double head0[5] = {0.0, 0.0, 0.424, 0.576, 0.0};
  for (Index j = 0; j < 5; ++j) {
    EXPECT_EQ(std::round(static_cast<double>(r.attn_weights(0, 0, j)) * 1000.0) / 1000.0,
              head0[j]);
  }
}

TEST(ExperimentWeightsPath, BadRangesAndMasksAreErrorsNamingTheValues) {
  mha::NumpyNormalStream stream(7);
  const mha::AttentionConfig c{8, 2};
  const auto message = [&](Index first, Index count) {
    try {
      mha::numpy_experiment_weights_f32(stream, 5, c, false, {}, first, count);
    } catch (const mha::shape_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(1, 2),
            "first_head=1, head_count=2: the heads must lie in [0, num_heads) with num_heads = 2");
  EXPECT_NE(message(-1, 1).find("first_head=-1"), std::string::npos);
  EXPECT_NE(message(0, 0).find("head_count=0"), std::string::npos);
  EXPECT_THROW(mha::numpy_experiment_weights_f32(stream, 0, c, false, {}, 0, 1), mha::shape_error);
  EXPECT_THROW(mha::numpy_experiment_weights_f32(stream, 5, mha::AttentionConfig{8, 3}, false, {},
                                                 0, 1),
               mha::config_error);
  mha::AttentionMasks bad;
  bad.key_padding_mask.assign(4, 0);  // 4 keys for 5 tokens
  EXPECT_THROW(mha::numpy_experiment_weights_f32(stream, 5, c, false, bad, 0, 1),
               mha::shape_error);
  // The stream keeps working after the errors.
  EXPECT_EQ(mha::numpy_experiment_weights_f32(stream, 5, c, false, {}, 0, 2).attn_weights.size(),
            2 * 5 * 5);
}

}  // namespace
