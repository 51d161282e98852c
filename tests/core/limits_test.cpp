// Bad input and size limits that tests/core/errors_test.cpp does not already cover:
// a config whose numbers name both values, kdim/vdim that disagree with the weights, every
// mha::limits entry refused before anything is allocated (measured with a counting operator
// new), the largest documented sizes computed, one head fully masked by a per-head mask, logits
// in the thousands, the polarity of boolean masks (a causal mask and its inverse), and module
// 08's experiment refusing too many weights before it draws its inputs.
//
// Shape legend (attention.hpp): n = query tokens, m = key tokens, d = d_model, h = num_heads.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <new>
#include <string>

#include "fixture_util.hpp"
#include "mha/attention.hpp"
#include "mha/experiment.hpp"

// ---------------------------------------------------------------------------------------------
// A counting global operator new: while `g_counting` is set, the largest single request and the
// total are recorded. HeadStack (the (h, n, m) weights) lives in a std::vector, so a refused
// request that allocated its weights first would show up here.

namespace {
std::atomic<bool> g_counting{false};
std::atomic<std::size_t> g_largest{0}, g_total{0};

void* counted_alloc(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_total += size;
    std::size_t prev = g_largest.load();
    while (size > prev && !g_largest.compare_exchange_weak(prev, size)) {
    }
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size) { return counted_alloc(size); }
void* operator new[](std::size_t size) { return counted_alloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

// Over-aligned requests: large arrays (mha::detail::allocate_large, 2 MiB-aligned on Linux) come
// through here, so they are counted too.
namespace {
void* counted_aligned_alloc(std::size_t size, std::align_val_t align) {
  const auto a = static_cast<std::size_t>(align);
  if (g_counting.load(std::memory_order_relaxed)) {
    g_total += size;
    std::size_t prev = g_largest.load();
    while (size > prev && !g_largest.compare_exchange_weak(prev, size)) {
    }
  }
  const std::size_t rounded = (size == 0 ? a : (size + a - 1) / a * a);
  if (void* p = std::aligned_alloc(a, rounded)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t size, std::align_val_t a) { return counted_aligned_alloc(size, a); }
void* operator new[](std::size_t size, std::align_val_t a) {
  return counted_aligned_alloc(size, a);
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using mha::Index;
using mha::RowMatrixXf;
using mha_test::message_of;
using L = mha::limits;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Expects `f` to throw limit_error naming `part`, allocating at most 1 MiB through operator new
/// on the way (the inputs exist before the call): the count, not a wall-clock time, shows that the
/// refusal came before the big allocation (tests assert no timings; benchmarks measure them).
void expect_limit_error_without_allocation(const std::function<void()>& f,
                                           const std::string& part) {
  g_largest = 0;
  g_total = 0;
  g_counting = true;
  std::string msg;
  try {
    f();
    ADD_FAILURE() << "did not throw";
  } catch (const mha::limit_error& e) {
    msg = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw the wrong type, what(): " << e.what();
  }
  g_counting = false;
  EXPECT_MESSAGE_HAS(msg, part);
  EXPECT_LT(g_total.load(), std::size_t{1} << 20) << "allocated before refusing: " << msg;
}

using mha_test::config;

/// Deterministic, well-scaled values in [-scale, scale] (a cheap hash; fast for 50M entries).
RowMatrixXf pattern(Index r, Index c, std::uint32_t salt, float scale = 0.5f) {
  return RowMatrixXf::NullaryExpr(r, c, [=](Index i, Index j) {
    std::uint32_t x = static_cast<std::uint32_t>(i * 7919 + j * 104729) ^ (salt * 2654435761u);
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    return scale * (static_cast<float>(x % 2001u) / 1000.0f - 1.0f);
  });
}

mha::AttentionWeights weights(Index d, bool bias, float scale = 0.5f) {
  mha::VectorXf in_b, out_b;
  if (bias) {
    in_b = pattern(3 * d, 1, 11, 0.1f).col(0);
    out_b = pattern(d, 1, 12, 0.1f).col(0);
  }
  return mha::AttentionWeights::fused(pattern(3 * d, d, 13, scale), in_b, pattern(d, d, 14, scale),
                                      out_b);
}

mha::AttentionMasks bool_mask(Index heads, Index n, Index m,
                              const std::function<bool(Index, Index, Index)>& masked) {
  mha::AttentionMasks masks;
  masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
  masks.attn_mask = mha::HeadStack(heads, n, m);
  for (Index k = 0; k < heads; ++k) {
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < m; ++j) masks.attn_mask(k, i, j) = masked(k, i, j) ? 1.0f : 0.0f;
    }
  }
  return masks;
}

void expect_rows_sum_to_one_or_zero(const mha::AttentionResult& r) {
  const Index h = r.attn_weights.heads(), n = r.attn_weights.rows();
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) {
      const double sum = r.attn_weights.head(k).row(i).cast<double>().sum();
      if (r.fully_masked_rows[static_cast<std::size_t>(k * n + i)]) {
        EXPECT_EQ(sum, 0.0) << "head " << k << " row " << i;
      } else {
        EXPECT_NEAR(sum, 1.0, 1e-5) << "head " << k << " row " << i;
      }
    }
  }
}

void expect_close(const RowMatrixXf& a, const RowMatrixXf& b, float tol, const char* what) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  EXPECT_TRUE(a.allFinite()) << what;
  const float err = (a - b).cwiseAbs().maxCoeff();
  EXPECT_LE(err, tol) << what << ": max |fast - reference| = " << err;
}

// --- Configuration ------------------------------------------------------------------------------

TEST(Limits, IndivisibleD1024By12NamesBoth) {
  for (const auto& msg :
       {message_of<mha::config_error>([] { config(1024, 12).validate(); }),
        message_of<mha::config_error>([] { mha::parameter_count(config(1024, 12), true); }),
        message_of<mha::config_error>([] {
          const RowMatrixXf x = pattern(2, 1024, 1);
          mha::multi_head_attention_forward(config(1024, 12), weights(1024, false), x, x, x);
        })}) {
    EXPECT_MESSAGE_HAS(msg, "d_model=1024 is not divisible by num_heads=12");
    // The message lists the head counts that would work; 8 and 16 are among them.
    EXPECT_MESSAGE_HAS(msg, " 8 16 ");
  }
}

TEST(Limits, KdimAndVdimThatDisagreeWithTheWeights) {
  const Index d = 8;
  const auto sep = [&](Index wk_cols, Index wv_cols) {
    return mha::AttentionWeights::separate(pattern(d, d, 1), pattern(d, wk_cols, 2),
                                           pattern(d, wv_cols, 3), {}, pattern(d, d, 4), {});
  };
  const RowMatrixXf q = pattern(3, d, 5);
  // Config says kdim = 6 but k_proj_weight is (8, 5).
  auto msg = message_of<mha::shape_error>([&] {
    const RowMatrixXf k = pattern(4, 6, 6), v = pattern(4, 6, 7);
    mha::multi_head_attention_forward(config(d, 2, 6, 6), sep(5, 6), q, k, v);
  });
  EXPECT_MESSAGE_HAS(msg, "k_proj_weight is (8, 5), expected (d_model, kdim) = (8, 6)");
  // vdim = 3 but v_proj_weight is (8, 4).
  msg = message_of<mha::shape_error>([&] {
    const RowMatrixXf k = pattern(4, 6, 6), v = pattern(4, 3, 7);
    mha::multi_head_attention_reference(config(d, 2, 6, 3), sep(6, 4), q, k, v);
  });
  EXPECT_MESSAGE_HAS(msg, "v_proj_weight is (8, 4), expected (d_model, vdim) = (8, 3)");
  // The layer checks it at construction.
  msg =
      message_of<mha::shape_error>([&] { mha::MultiheadAttention(config(d, 2, 5, 0), sep(6, 8)); });
  EXPECT_MESSAGE_HAS(msg, "k_proj_weight is (8, 6), expected (d_model, kdim) = (8, 5)");
  // Fused in_proj_weight cannot serve kdim != d_model.
  msg = message_of<mha::shape_error>(
      [&] { mha::MultiheadAttention(config(d, 2, 6, 0), weights(d, false)); });
  EXPECT_MESSAGE_HAS(msg, "kdim=6 and vdim=8 differ from d_model=8");
  // Weights agree with the config but the key input does not.
  msg = message_of<mha::shape_error>([&] {
    const RowMatrixXf k = pattern(4, 7, 6), v = pattern(4, 6, 7);
    mha::multi_head_attention_forward(config(d, 2, 6, 6), sep(6, 6), q, k, v);
  });
  EXPECT_MESSAGE_HAS(msg, "key is (4, 7), expected (m, kdim) = (4, 6)");
}

// --- Limits: refused before allocation -----------------------------------------------------------

TEST(Limits, EveryLimitIsRefusedBeforeAllocation) {
  // Tokens: n = max_tokens + 1 (query) and m = max_tokens + 1 (key/value).
  {
    const auto w = weights(4, false);
    const RowMatrixXf big = pattern(L::max_tokens + 1, 4, 1), small = pattern(3, 4, 2);
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_forward(config(4, 1), w, big, small, small); },
        "query has 4097 tokens, above the limit of 4096");
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_reference(config(4, 1), w, small, big, big); },
        "key has 4097 tokens, above the limit of 4096");
  }
  // d_model, kdim, vdim = max_d_model + 1; num_heads = max_num_heads + 1.
  {
    const RowMatrixXf x = pattern(2, 4, 3);
    const auto w = weights(4, false);
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_forward(config(L::max_d_model + 1, 1), w, x, x, x); },
        "d_model=4097 exceeds the limit of 4096");
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_forward(config(4, 1, L::max_d_model + 1, 0), w, x, x, x); },
        "kdim=4097 exceeds the limit of 4096");
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_forward(config(4, 1, 0, L::max_d_model + 1), w, x, x, x); },
        "vdim=4097 exceeds the limit of 4096");
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_forward(config(514, 257), w, x, x, x); },
        "num_heads=257 exceeds the limit of 256");
    expect_limit_error_without_allocation(
        [&] { mha::MultiheadAttention(config(1 << 30, 1 << 20), w); }, "exceeds the limit");
    expect_limit_error_without_allocation(
        [&] { mha::sinusoidal_positional_encoding(Index{1} << 40, 8); }, "exceeds the limits");
  }
  // h * n * m far beyond memory: 256 heads x 4096 x 4096 = 2^32 weights (16 GiB of floats), with
  // every single size within its own limit. Refused instantly, nothing allocated.
  {
    const Index d = 256, n = L::max_tokens;
    const RowMatrixXf x = RowMatrixXf::Zero(n, d);
    const auto w = weights(d, false);
    for (int path = 0; path < 2; ++path) {
      expect_limit_error_without_allocation(
          [&] {
            if (path == 0) {
              mha::multi_head_attention_forward(config(d, L::max_num_heads), w, x, x, x);
            } else {
              mha::multi_head_attention_reference(config(d, L::max_num_heads), w, x, x, x);
            }
          },
          "num_heads * n * m = 256 * 4096 * 4096 attention weights exceed the limit of 67108864");
    }
    // Just above the limit, cross-attention: 5 heads x 4096 x 3277 = 67,112,960 > 2^26.
    const RowMatrixXf kv = RowMatrixXf::Zero(3277, 8);
    const RowMatrixXf q8 = RowMatrixXf::Zero(n, 10);
    mha::AttentionConfig c = config(10, 5, 8, 8);
    const auto sep = mha::AttentionWeights::separate(pattern(10, 10, 1), pattern(10, 8, 2),
                                                     pattern(10, 8, 3), {}, pattern(10, 10, 4), {});
    expect_limit_error_without_allocation(
        [&] { mha::multi_head_attention_forward(c, sep, q8, kv, kv); },
        "num_heads * n * m = 5 * 4096 * 3277");
  }
}

// --- The largest documented sizes work ----------------------------------------------------------

TEST(Limits, MaxTokensWithTheMostHeadsThatFit) {
  // n = m = max_tokens with h * n * m = max_weight_entries exactly (4 heads x 4096 x 4096).
  const Index n = L::max_tokens, h = L::max_weight_entries / (n * n), d = 2 * h;
  ASSERT_EQ(h * n * n, L::max_weight_entries);
  const RowMatrixXf x = pattern(n, d, 21, 1.0f);
  const auto w = weights(d, true);
  mha::AttentionMasks masks;
  masks.is_causal = true;
  const auto r = mha::multi_head_attention_forward(config(d, h), w, x, x, x, masks, {false});
  ASSERT_EQ(r.attn_weights.size(), L::max_weight_entries);
  EXPECT_TRUE(r.output.allFinite());
  // Spot-check rows against the definition: causal zeros, sums of 1, and the first row (one key)
  // has weight exactly 1.
  for (Index k = 0; k < h; ++k) {
    EXPECT_EQ(r.attn_weights(k, 0, 0), 1.0f);
    for (Index i : {Index{0}, Index{1}, n / 2, n - 1}) {
      const auto row = r.attn_weights.head(k).row(i);
      EXPECT_NEAR(row.cast<double>().sum(), 1.0, 1e-4) << "head " << k << " row " << i;
      if (i + 1 < n) {
        EXPECT_EQ(row.tail(n - i - 1).cwiseAbs().maxCoeff(), 0.0f);
      }
    }
  }
  for (auto f : r.fully_masked_rows) EXPECT_EQ(f, 0);
}

TEST(Limits, LargeStacksAreOneCountedAllocationOnHugePageBoundaries) {
  // (1, 2048, 4097) floats = 33.6 MB, above detail::kLargeArrayBytes (32 MiB): allocate_large.
  const Index rows = 2048, cols = 4097;
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * sizeof(float);
  ASSERT_GE(bytes, mha::detail::kLargeArrayBytes);
  g_largest = 0;
  g_total = 0;
  g_counting = true;
  {
    mha::HeadStack s = mha::HeadStack::uninitialized(1, rows, cols);
    g_counting = false;
    EXPECT_GE(g_largest.load(), bytes);
    EXPECT_LT(g_total.load(), bytes + (std::size_t{4} << 20));  // one array, at most 2 MiB padding
#if defined(__linux__)
    // Natively on Linux the array starts on a 2 MiB boundary (madvise(MADV_HUGEPAGE) applies).
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.data()) % (std::uintptr_t{2} << 20), 0u);
#endif
    s(0, 0, 0) = 1.5f;
    s(0, rows - 1, cols - 1) = -2.5f;
    EXPECT_EQ(s.data()[0], 1.5f);
    EXPECT_EQ(s.data()[rows * cols - 1], -2.5f);
    // The filling constructor and a copy go through the same allocator.
    const mha::HeadStack filled(1, rows, cols, 0.25f);
    mha::HeadStack copy = filled;
    EXPECT_EQ(copy(0, rows - 1, cols - 1), 0.25f);
    EXPECT_EQ(copy(0, 1000, 17), 0.25f);
  }
  // Just under the threshold: the ordinary allocator, still correct.
  const mha::HeadStack small(1, 1024, 2048, -1.0f);
  EXPECT_EQ(small(0, 1023, 2047), -1.0f);
}

TEST(Limits, MaxDModelWithAFewTokens) {
  const Index d = L::max_d_model, h = 16, n = 3;
  const RowMatrixXf x = pattern(n, d, 31, 1.0f);
  // Weights scaled by 1/sqrt(d) keep projections O(1).
  const auto w = weights(d, true, 1.0f / 64.0f);
  const auto r = mha::multi_head_attention_forward(config(d, h), w, x, x, x, {}, {false});
  EXPECT_EQ(r.output.rows(), n);
  EXPECT_EQ(r.output.cols(), d);
  EXPECT_TRUE(r.output.allFinite());
  expect_rows_sum_to_one_or_zero(r);
}

TEST(Limits, MaxNumHeadsMatchesTheReference) {
  const Index h = L::max_num_heads, d = 2 * h, n = 5, m = 7;
  const RowMatrixXf q = pattern(n, d, 41, 1.0f), kv = pattern(m, d, 42, 1.0f);
  const auto w = weights(d, true, 0.1f);
  const auto fast = mha::multi_head_attention_forward(config(d, h), w, q, kv, kv);
  const auto ref = mha::multi_head_attention_reference(config(d, h), w, q, kv, kv);
  ASSERT_EQ(fast.attn_weights.heads(), h);
  expect_rows_sum_to_one_or_zero(fast);
  for (Index k = 0; k < h; ++k) {
    expect_close(fast.attn_weights.head(k), ref.attn_weights.head(k), 1e-5f, "weights");
  }
  expect_close(fast.output, ref.output, 1e-4f, "output");
}

// --- Masks: one head fully masked ---------------------------------------------------------------

TEST(Limits, OneHeadFullyMaskedByAPerHeadMask) {
  const Index d = 12, h = 3, n = 4, m = 5, dead = 1;
  const RowMatrixXf q = pattern(n, d, 51, 1.0f), kv = pattern(m, d, 52, 1.0f);
  const auto w = weights(d, true);
  // Heads 0 and 2: a partial mask; head 1: every key masked.
  const auto partial = [](Index k, Index i, Index j) { return (i + j + k) % 3 == 0 && j != i; };
  const auto with_dead =
      bool_mask(h, n, m, [&](Index k, Index i, Index j) { return k == dead || partial(k, i, j); });
  const auto without =
      bool_mask(h, n, m, [&](Index k, Index i, Index j) { return k != dead && partial(k, i, j); });

  const auto r = mha::multi_head_attention_forward(config(d, h), w, q, kv, kv, with_dead);
  const auto base = mha::multi_head_attention_forward(config(d, h), w, q, kv, kv, without);
  const auto ref = mha::multi_head_attention_reference(config(d, h), w, q, kv, kv, with_dead);

  EXPECT_TRUE(r.output.allFinite());
  EXPECT_EQ(r.attn_weights.head(dead).cwiseAbs().maxCoeff(), 0.0f);
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) {
      EXPECT_EQ(r.fully_masked_rows[static_cast<std::size_t>(k * n + i)], k == dead ? 1 : 0)
          << "head " << k << " row " << i;
    }
    if (k != dead) {  // the other heads see exactly what they saw without the dead head's mask
      EXPECT_EQ(r.attn_weights.head(k), base.attn_weights.head(k)) << "head " << k;
    }
  }
  // The dead head contributes nothing: its slice of concat(Y_1 .. Y_h) is 0.
  const Index dh = d / h;
  EXPECT_EQ(r.head_outputs.middleCols(dead * dh, dh).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_EQ(r.fully_masked_rows, ref.fully_masked_rows);
  for (Index k = 0; k < h; ++k) {
    expect_close(r.attn_weights.head(k), ref.attn_weights.head(k), 1e-6f, "weights");
  }
  expect_close(r.output, ref.output, 1e-5f, "output");
  expect_rows_sum_to_one_or_zero(r);
}

// --- Logits in the thousands --------------------------------------------------------------------

TEST(Limits, LogitsInTheThousandsStayExact) {
  // Identity projections and integer inputs: every score S = x_i . x_j / sqrt(4) is an exact
  // float, so the only rounding is in the softmax itself.
  const Index d = 4;
  RowMatrixXf eye3(3 * d, d);
  eye3 << RowMatrixXf::Identity(d, d), RowMatrixXf::Identity(d, d), RowMatrixXf::Identity(d, d);
  const auto w = mha::AttentionWeights::fused(eye3, {}, RowMatrixXf::Identity(d, d), {});
  RowMatrixXf x(4, d);
  x << 60, 20, 0, 0,  //
      60, 20, 1, 0,   //
      60, 20, 0, 2,   //
      -60, 20, 0, 0;
  const auto r = mha::multi_head_attention_forward(config(d, 1), w, x, x, x);
  const auto ref = mha::multi_head_attention_reference(config(d, 1), w, x, x, x);
  // Scores (x_i . x_j / 2): row 0 = 2000 2000 2000 -1600; row 1 = 2000 2000.5 2000 -1600;
  // row 3 = -1600 -1600 -1600 2000.
  EXPECT_EQ(r.scores(0, 1, 1), 2000.5f);
  EXPECT_EQ(r.scores(0, 3, 0), -1600.0f);
  EXPECT_TRUE(r.attn_weights.head(0).allFinite());
  const double e = std::exp(0.5), s = 2.0 + e;
  const double want[4][4] = {{1 / 3.0, 1 / 3.0, 1 / 3.0, 0},
                             {1 / s, e / s, 1 / s, 0},
                             {0, 0, 0, 0},  // row 2 below
                             {0, 0, 0, 1}};
  for (Index j = 0; j < 4; ++j) {
    EXPECT_NEAR(r.attn_weights(0, 0, j), want[0][j], 1e-6) << j;
    EXPECT_NEAR(r.attn_weights(0, 1, j), want[1][j], 1e-6) << j;
    EXPECT_EQ(r.attn_weights(0, 3, j), static_cast<float>(want[3][j])) << j;  // exactly 0 and 1
  }
  // Row 2: scores 2000 2000 2002 -1600.
  const double e2 = std::exp(2.0), s2 = 2.0 + e2;
  EXPECT_NEAR(r.attn_weights(0, 2, 0), 1 / s2, 1e-6);
  EXPECT_NEAR(r.attn_weights(0, 2, 2), e2 / s2, 1e-6);
  EXPECT_EQ(r.attn_weights(0, 2, 3), 0.0f);
  expect_close(r.attn_weights.head(0), ref.attn_weights.head(0), 1e-6f, "weights");
  expect_close(r.output, ref.output, 1e-4f, "output");
  expect_rows_sum_to_one_or_zero(r);
}

// --- Mask polarity ------------------------------------------------------------------------------

TEST(Limits, BooleanCausalMaskEqualsIsCausal) {
  for (const auto& [n, m] : {std::pair<Index, Index>{5, 5}, {3, 6}, {6, 3}}) {
    const Index d = 8, h = 2;
    const RowMatrixXf q = pattern(n, d, 61, 1.0f), kv = pattern(m, d, 62, 1.0f);
    const auto w = weights(d, true);
    mha::AttentionMasks causal;
    causal.is_causal = true;
    // true above the diagonal = may not attend (PyTorch: torch.triu(ones(n, m), 1).bool()).
    const auto triu = bool_mask(1, n, m, [](Index, Index i, Index j) { return j > i; });
    const auto a = mha::multi_head_attention_forward(config(d, h), w, q, kv, kv, causal);
    const auto b = mha::multi_head_attention_forward(config(d, h), w, q, kv, kv, triu);
    for (Index k = 0; k < h; ++k) {
      EXPECT_EQ(a.attn_weights.head(k), b.attn_weights.head(k)) << n << "x" << m;
    }
    EXPECT_EQ(a.output, b.output);
    EXPECT_EQ(a.fully_masked_rows, b.fully_masked_rows);
  }
}

TEST(Limits, InverseCausalMaskAllowsOnlyLaterKeys) {
  const Index n = 5, d = 8, h = 2;
  const RowMatrixXf x = pattern(n, d, 71, 1.0f);
  const auto w = weights(d, true);
  // true on and below the diagonal: query i may attend only to keys j > i.
  const auto tril = bool_mask(1, n, n, [](Index, Index i, Index j) { return j <= i; });
  const auto r = mha::multi_head_attention_forward(config(d, h), w, x, x, x, tril);
  const auto ref = mha::multi_head_attention_reference(config(d, h), w, x, x, x, tril);
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j <= i; ++j) EXPECT_EQ(r.attn_weights(k, i, j), 0.0f) << i << "," << j;
      // Only the last row has no later key: fully masked.
      EXPECT_EQ(r.fully_masked_rows[static_cast<std::size_t>(k * n + i)], i == n - 1 ? 1 : 0);
    }
    EXPECT_EQ(r.attn_weights(k, n - 2, n - 1), 1.0f);  // one allowed key: weight exactly 1
    expect_close(r.attn_weights.head(k), ref.attn_weights.head(k), 1e-6f, "weights");
  }
  EXPECT_TRUE(r.output.allFinite());
  EXPECT_EQ(r.fully_masked_rows, ref.fully_masked_rows);
  expect_close(r.output, ref.output, 1e-5f, "output");
  expect_rows_sum_to_one_or_zero(r);
}

}  // namespace

TEST(Limits, NumpyExperimentRefusesTooManyWeightsBeforeDrawing) {
  // Module 08's experiment draws X and Wq..Wo (n·d + 4·d² doubles: 671 MB at n = d = 4096)
  // before any forward: the h·n² limit is checked before them (otherwise the draws would be made,
  // 10.7 s in wasm, only for the forward to refuse them).
  mha::NumpyNormalStream stream(3);
  const std::string part = "num_heads * n * m = 256 * 4096 * 4096 attention weights exceed";
  expect_limit_error_without_allocation(
      [&] {
        mha::make_numpy_experiment(stream, 4096, 4096, 256, mha::ExperimentPrecision::float32);
      },
      part);
  mha::AttentionConfig c;
  c.d_model = 4096;
  c.num_heads = 256;
  expect_limit_error_without_allocation(
      [&] { mha::numpy_experiment_weights_f32(stream, 4096, c, false, mha::AttentionMasks{}, 0, 1); },
      part);
  EXPECT_EQ(stream.drawn(), 0);
}
