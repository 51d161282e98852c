// The Eigen fast path against the plain reference on 60 seeded random configurations
// (n, m, d, h, kdim, vdim, bias, self/cross attention, boolean / per-head / additive masks,
// key padding, causal). Random numbers come from mha::NumpyRandomState, so the configurations
// are the same on every platform.
//
// Tolerance: both are float32 results from identical inputs; the reference accumulates in double,
// the fast path in float32 (Eigen GEMM), so they differ by float32 summation error only:
// <= ~d * eps32 * sum|terms| ~ 1e-6 relative for d <= 64 with weights of std 1/sqrt(in).
//   weights: |a - e| <= 1e-5 absolute;  output: |a - e| <= 1e-5 * max|e| + 1e-5 |e|.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "fixture_util.hpp"
#include "mha/numpy_random.hpp"

namespace {

struct RandomCase {
  mha::AttentionConfig config;
  mha::AttentionWeights weights;
  mha::RowMatrixXf query, key, value;
  mha::AttentionMasks masks;
  bool self_attention = false;
  std::string label;
};

mha::Index pick(mha::NumpyRandomState& rng, mha::Index lo, mha::Index hi) {  // uniform in [lo, hi]
  return lo + static_cast<mha::Index>(rng.random_sample() * static_cast<double>(hi - lo + 1));
}

mha::RowMatrixXf randn_f(mha::NumpyRandomState& rng, mha::Index r, mha::Index c, double scale) {
  return (rng.randn(r, c) * scale).cast<float>();
}

RandomCase make_case(mha::NumpyRandomState& rng, int index) {
  RandomCase rc;
  const mha::Index h = pick(rng, 1, 6);
  const mha::Index d_head = pick(rng, 1, 8);
  const mha::Index d = h * d_head;
  rc.self_attention = rng.random_sample() < 0.5;
  const mha::Index n = pick(rng, 1, 12);
  const mha::Index m = rc.self_attention ? n : pick(rng, 1, 12);
  const bool other_dims = !rc.self_attention && rng.random_sample() < 0.6;
  const mha::Index kdim = other_dims ? pick(rng, 1, 20) : d;
  const mha::Index vdim = other_dims ? pick(rng, 1, 20) : d;
  const bool bias = rng.random_sample() < 0.5;
  rc.config.d_model = d;
  rc.config.num_heads = h;
  rc.config.kdim = kdim;
  rc.config.vdim = vdim;

  const double s = 1.0 / std::sqrt(static_cast<double>(d));
  mha::VectorXf in_b, out_b;
  if (bias) {
    in_b = randn_f(rng, 3 * d, 1, 0.2).col(0);
    out_b = randn_f(rng, d, 1, 0.2).col(0);
  }
  const mha::RowMatrixXf wo = randn_f(rng, d, d, s);
  if (kdim == d && vdim == d && rng.random_sample() < 0.7) {
    rc.weights = mha::AttentionWeights::fused(randn_f(rng, 3 * d, d, s), in_b, wo, out_b);
  } else {
    rc.weights = mha::AttentionWeights::separate(
        randn_f(rng, d, d, s), randn_f(rng, d, kdim, 1.0 / std::sqrt(double(kdim))),
        randn_f(rng, d, vdim, 1.0 / std::sqrt(double(vdim))), in_b, wo, out_b);
  }
  rc.query = randn_f(rng, n, d, 1.0);
  if (rc.self_attention) {
    rc.key = rc.query;
    rc.value = rc.query;
  } else {
    rc.key = randn_f(rng, m, kdim, 1.0);
    rc.value = randn_f(rng, m, vdim, 1.0);
  }

  const double mask_kind = rng.random_sample();
  if (mask_kind < 0.2) {
    rc.masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
    rc.masks.attn_mask = mha::HeadStack(1, n, m);
    for (mha::Index i = 0; i < rc.masks.attn_mask.size(); ++i)
      rc.masks.attn_mask.data()[i] = rng.random_sample() < 0.3 ? 1.0f : 0.0f;
  } else if (mask_kind < 0.4) {
    rc.masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
    rc.masks.attn_mask = mha::HeadStack(h, n, m);
    for (mha::Index i = 0; i < rc.masks.attn_mask.size(); ++i)
      rc.masks.attn_mask.data()[i] = rng.random_sample() < 0.3 ? 1.0f : 0.0f;
  } else if (mask_kind < 0.6) {
    rc.masks.attn_mask_kind = mha::AttentionMasks::Kind::additive;
    const bool per_head = rng.random_sample() < 0.5;
    rc.masks.attn_mask = mha::HeadStack(per_head ? h : 1, n, m);
    for (mha::Index i = 0; i < rc.masks.attn_mask.size(); ++i)
      rc.masks.attn_mask.data()[i] =
          rng.random_sample() < 0.15 ? -INFINITY : static_cast<float>(rng.standard_normal());
  }
  if (rng.random_sample() < 0.3) {
    for (mha::Index j = 0; j < m; ++j)
      rc.masks.key_padding_mask.push_back(rng.random_sample() < 0.25 ? 1 : 0);
  }
  rc.masks.is_causal = rng.random_sample() < 0.25;

  rc.label =
      "case " + std::to_string(index) + ": n=" + std::to_string(n) + " m=" + std::to_string(m) +
      " d=" + std::to_string(d) + " h=" + std::to_string(h) + " kdim=" + std::to_string(kdim) +
      " vdim=" + std::to_string(vdim) + (bias ? " bias" : "") +
      (rc.weights.is_fused() ? " fused" : " separate") + (rc.self_attention ? " self" : " cross") +
      (rc.masks.is_causal ? " causal" : "") + (rc.masks.key_padding_mask.empty() ? "" : " kpm") +
      (rc.masks.attn_mask_kind == mha::AttentionMasks::Kind::none
           ? ""
           : (rc.masks.attn_mask_kind == mha::AttentionMasks::Kind::boolean ? " bool-mask"
                                                                            : " float-mask") +
                 std::string(rc.masks.attn_mask.heads() > 1 ? "(h,n,m)" : "(n,m)"));
  return rc;
}

TEST(FastVsReference, SixtySeededRandomConfigurations) {
  mha::NumpyRandomState rng(20240601);
  mha_test::Deviation worst_w, worst_o;
  int fully_masked_seen = 0, masked_cases = 0;
  for (int i = 0; i < 60; ++i) {
    const RandomCase rc = make_case(rng, i);
    SCOPED_TRACE(rc.label);
    const auto fast = mha::multi_head_attention_forward(rc.config, rc.weights, rc.query, rc.key,
                                                        rc.value, rc.masks);
    const auto ref = mha::multi_head_attention_reference(rc.config, rc.weights, rc.query, rc.key,
                                                         rc.value, rc.masks);
    ASSERT_EQ(fast.output.rows(), ref.output.rows());
    ASSERT_EQ(fast.output.cols(), ref.output.cols());
    ASSERT_EQ(fast.attn_weights.size(), ref.attn_weights.size());
    EXPECT_FALSE(mha_test::any_nan(fast.output.data(), fast.output.size()));
    EXPECT_FALSE(mha_test::any_nan(ref.output.data(), ref.output.size()));
    EXPECT_FALSE(mha_test::any_nan(fast.attn_weights.data(), fast.attn_weights.size()));
    EXPECT_EQ(fast.fully_masked_rows, ref.fully_masked_rows);
    double scale = 0.0;
    for (mha::Index k = 0; k < ref.output.size(); ++k)
      scale = std::max(scale, std::abs(double(ref.output.data()[k])));
    const auto dw = mha_test::compare(fast.attn_weights.data(), ref.attn_weights.data(),
                                      static_cast<std::size_t>(ref.attn_weights.size()), 1e-5, 0.0);
    const auto dout =
        mha_test::compare(fast.output.data(), ref.output.data(),
                          static_cast<std::size_t>(ref.output.size()), 1e-5 * scale, 1e-5);
    EXPECT_TRUE(mha_test::close(dw)) << "attn_weights";
    EXPECT_TRUE(mha_test::close(dout)) << "output";
    worst_w.max_abs = std::max(worst_w.max_abs, dw.max_abs);
    worst_o.max_abs = std::max(worst_o.max_abs, dout.max_abs / std::max(scale, 1e-30));
    for (auto f : ref.fully_masked_rows) fully_masked_seen += f;
    masked_cases += rc.masks.attn_mask_kind != mha::AttentionMasks::Kind::none ||
                    rc.masks.is_causal || !rc.masks.key_padding_mask.empty();
  }
  mha_test::report("fast vs reference, 60 configurations: weights (abs)", worst_w);
  mha_test::report("fast vs reference, 60 configurations: output (abs / max|output|)", worst_o);
  // The generator must actually exercise masks and fully masked rows.
  EXPECT_GT(masked_cases, 20);
  EXPECT_GT(fully_masked_seen, 0);
}

// The fast path keeps its scratch buffers (projections, head outputs, a block of scores) between
// calls on a thread (attention.cpp, Workspace). Nothing of one call may reach the next: the 60
// cases (each as output and weights, and as weights only) run again in reverse order, after a
// call large enough to make the workspace release its buffers (more than 2^20 floats), must give
// the same bits as the first pass; and two threads running them at once, in opposite orders, the
// same bits again (each thread has its own).
// Variant 0: the output and weights without intermediates (the head outputs in scratch);
// 1: the weights only (no V). Self-attention passes one matrix three times, as a layer's callers
// do, so fused weights take the one-product Q | K | V path.
mha::AttentionResult forward(const RandomCase& rc, int variant) {
  mha::ForwardOptions options(false);
  options.weights_only = variant == 1;
  const mha::RowMatrixXf& key = rc.self_attention ? rc.query : rc.key;
  const mha::RowMatrixXf& value = rc.self_attention ? rc.query : rc.value;
  return mha::multi_head_attention_forward(rc.config, rc.weights, rc.query, key, value, rc.masks,
                                           options);
}

bool same_bits(const mha::AttentionResult& a, const mha::AttentionResult& b) {
  const auto same = [](const float* x, const float* y, mha::Index count) {
    // (no memcmp of an empty result: its data() is null, which memcmp must not get)
    return count == 0 || std::memcmp(x, y, sizeof(float) * static_cast<std::size_t>(count)) == 0;
  };
  return a.output.rows() == b.output.rows() && a.output.cols() == b.output.cols() &&
         a.attn_weights.size() == b.attn_weights.size() &&
         same(a.output.data(), b.output.data(), a.output.size()) &&
         same(a.attn_weights.data(), b.attn_weights.data(), a.attn_weights.size()) &&
         a.fully_masked_rows == b.fully_masked_rows;
}

TEST(FastPathScratch, ResultsDoNotDependOnEarlierCalls) {
  mha::NumpyRandomState rng(20240601);
  std::vector<RandomCase> cases;
  std::vector<mha::AttentionResult> first;
  for (int i = 0; i < 60; ++i) {
    cases.push_back(make_case(rng, i));
    for (int variant = 0; variant < 2; ++variant) first.push_back(forward(cases.back(), variant));
  }
  // (1100, 320) self-attention: a fused Q | K | V of 1100 x 960 floats, more than the 2^20 kept.
  mha::AttentionConfig big_config;
  big_config.d_model = 320;
  big_config.num_heads = 4;
  const double s = 1.0 / std::sqrt(320.0);
  const mha::AttentionWeights big_weights = mha::AttentionWeights::fused(
      randn_f(rng, 960, 320, s), mha::VectorXf(), randn_f(rng, 320, 320, s), mha::VectorXf());
  const mha::RowMatrixXf big_x = randn_f(rng, 1100, 320, 1.0);
  const auto big = mha::multi_head_attention_forward(big_config, big_weights, big_x, big_x, big_x);
  ASSERT_EQ(big.attn_weights.size(), 4 * 1100 * 1100);
  for (int i = 59; i >= 0; --i) {
    SCOPED_TRACE(cases[static_cast<std::size_t>(i)].label);
    for (int variant = 1; variant >= 0; --variant) {
      EXPECT_TRUE(same_bits(forward(cases[static_cast<std::size_t>(i)], variant),
                            first[static_cast<std::size_t>(2 * i + variant)]));
    }
  }
  // The large call itself, after the small ones, and a small one right after it.
  EXPECT_TRUE(same_bits(
      mha::multi_head_attention_forward(big_config, big_weights, big_x, big_x, big_x), big));
  EXPECT_TRUE(same_bits(forward(cases[7], 0), first[14]));

  int mismatches[2] = {0, 0};
  std::atomic<int> ready{0};
  std::thread threads[2];
  for (int t = 0; t < 2; ++t) {
    threads[t] = std::thread([&, t] {
      ++ready;
      while (ready.load() < 2) std::this_thread::yield();  // start together
      for (int round = 0; round < 20; ++round) {
        for (int j = 0; j < 120; ++j) {
          const int k = t == 0 ? j : 119 - j;  // case k / 2, variant k % 2
          if (!same_bits(forward(cases[static_cast<std::size_t>(k / 2)], k % 2),
                         first[static_cast<std::size_t>(k)])) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches[0], 0);
  EXPECT_EQ(mismatches[1], 0);
}

// A forward that fails to allocate (std::bad_alloc: here an address-space limit, in the field any
// large request near the memory's end) leaves this thread's kept scratch buffers usable: growing
// one must not free it first and keep the freed pointer when the new block cannot be had, or
// the next forward writes into freed memory (glibc: "malloc(): invalid size", exit 134). In a
// child process (gtest death-test fork), so the limit and any damage stay there.
TEST(FastPathScratchDeathTest, FailedAllocationLeavesTheScratchUsable) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an address-space limit does not mix with ASan's shadow memory";
#else
  mha::NumpyRandomState rng(11);
  const auto layer = [&](mha::Index d, mha::Index h) {
    mha::AttentionConfig config;
    config.d_model = d;
    config.num_heads = h;
    const double s = 1.0 / std::sqrt(static_cast<double>(d));
    return mha::MultiheadAttention(
        config, mha::AttentionWeights::fused(randn_f(rng, 3 * d, d, s), mha::VectorXf(),
                                             randn_f(rng, d, d, s), mha::VectorXf()));
  };
  const mha::MultiheadAttention small = layer(64, 4), big = layer(1024, 1);
  const mha::RowMatrixXf x_small = randn_f(rng, 64, 64, 1.0);
  const mha::RowMatrixXf x_big = randn_f(rng, 4096, 1024, 1.0);  // Q | K | V: 48 MiB
  const mha::ForwardOptions options(false);
  const mha::AttentionResult want = small.forward(x_small, {}, options);
  EXPECT_EXIT(
      {
        (void)small.forward(x_small, {}, options);  // the kept buffers hold this call's sizes
        long pages = 0;
        std::ifstream("/proc/self/statm") >> pages;
        rlimit limit{};
        getrlimit(RLIMIT_AS, &limit);
        const rlimit before = limit;
        limit.rlim_cur = static_cast<rlim_t>(pages) * 4096 + (rlim_t(40) << 20);  // 40 MiB more
        setrlimit(RLIMIT_AS, &limit);
        bool threw = false;
        try {
          (void)big.forward(x_big, {}, options);
        } catch (const std::bad_alloc&) {
          threw = true;
        }
        setrlimit(RLIMIT_AS, &before);
        const bool same = same_bits(small.forward(x_small, {}, options), want);
        std::exit(threw && same ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
#endif
}

}  // namespace
