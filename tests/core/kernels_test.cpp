// The compute kernels (cpp/attention/mha/kernels.hpp) against plain loops, and the forward pass at
// sizes that cross the kernels' block boundaries against the reference.
//
// The blocked GEMM is the WebAssembly build's kernel; natively it compiles to SSE with the same
// blocking, packing and edge handling, so these tests check that logic here (tests/js checks the
// wasm build itself).
//
// Tolerances:
//   GEMM: |c - exact| <= (K + 2) * 1.2e-7 * (|alpha| * sum_k |a_ik b_kj| + |bias_j|) + 1e-30, the
//     worst-case float32 summation bound (gamma_K with unit roundoff 6e-8, doubled) against a
//     double-precision loop.
//   exp: relative error <= 4e-7 (about 3 float32 ulp) for arguments in (-87.33, 0] against
//     std::exp in double; exactly 0 below -87.34 and for -inf.
//   forward at block-crossing sizes: the tolerances of fast_vs_reference_test.cpp
//     (weights 1e-5 absolute; output 1e-5 of max|expected| plus 1e-5 relative).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/kernels.hpp"
#include "mha/numpy_random.hpp"

namespace {

using mha::Index;
namespace kernels = mha::kernels;

std::vector<float> randn(mha::NumpyRandomState& rng, Index count) {
  const mha::RowMatrixXd draws = rng.randn(1, count);
  std::vector<float> out(static_cast<std::size_t>(count));
  for (Index i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = static_cast<float>(draws(0, i));
  return out;
}

struct GemmCase {
  Index M, N, K;
  bool transposed;
  float alpha;
  bool bias;
};

std::string label(const GemmCase& c) {
  return "M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) +
         (c.transposed ? " B given transposed" : " B row-major") +
         " alpha=" + std::to_string(c.alpha) + (c.bias ? " with bias" : "");
}

/// Runs `product` (one of the back ends) on a random case with padded strides (lda > K,
/// ldb > inner width, ldc > N) and checks every entry against a double loop, and that the padding
/// columns of C are untouched. With `cols` >= 0 only the first `cols` columns are asked for
/// (gemm's `cols`, as weights_only's Q | K of a fused in_proj): the rest must stay untouched.
template <typename Product>
void check_gemm(const GemmCase& c, Product product, Index cols = -1) {
  const Index written = cols < 0 ? c.N : cols;
  mha::NumpyRandomState rng(static_cast<std::uint32_t>(c.M * 131 + c.N * 17 + c.K));
  const Index lda = c.K + 3, ldc = c.N + 5;
  const Index ldb = (c.transposed ? c.K : c.N) + 2;
  const std::vector<float> A = randn(rng, c.M * lda);
  const std::vector<float> B = randn(rng, (c.transposed ? c.N : c.K) * ldb);
  const std::vector<float> bias = randn(rng, c.N);
  constexpr float sentinel = 12345.0f;
  std::vector<float> C(static_cast<std::size_t>(c.M * ldc), sentinel);
  product(c, A.data(), lda, B.data(), ldb, c.bias ? bias.data() : nullptr, C.data(), ldc, cols);

  double worst = 0.0;
  for (Index i = 0; i < c.M; ++i) {
    for (Index j = 0; j < written; ++j) {
      double exact = 0.0, magnitude = 0.0;
      for (Index k = 0; k < c.K; ++k) {
        const double b = c.transposed ? B[j * ldb + k] : B[k * ldb + j];
        exact += double(A[i * lda + k]) * b;
        magnitude += std::abs(double(A[i * lda + k]) * b);
      }
      exact = exact * c.alpha + (c.bias ? bias[j] : 0.0);
      magnitude = magnitude * std::abs(c.alpha) + (c.bias ? std::abs(bias[j]) : 0.0);
      const double tol = double(c.K + 2) * 1.2e-7 * magnitude + 1e-30;
      const double err = std::abs(double(C[i * ldc + j]) - exact);
      worst = std::max(worst, err / tol);
      ASSERT_LE(err, tol) << label(c) << " at (" << i << ", " << j << "): got " << C[i * ldc + j]
                          << ", expected " << exact;
    }
    for (Index j = written; j < ldc; ++j) {
      ASSERT_EQ(C[i * ldc + j], sentinel)
          << label(c) << ": wrote column " << j << " of row " << i << ", past the " << written
          << " asked for";
    }
  }
  ::testing::Test::RecordProperty(label(c), std::to_string(worst) + " of the tolerance");
}

// Odd sizes, 1, sizes below / at / above the micro-kernels (6 x 8, 2 x 16), the row block (24)
// and the depth block (256), in both B layouts.
const std::vector<GemmCase> kGemmCases = {
    {1, 1, 1, true, 1.0f, false},     {1, 1, 1, false, 1.0f, true},
    {5, 3, 2, false, 1.0f, false},    {6, 8, 4, true, 0.5f, true},
    {7, 9, 13, true, 1.0f, true},     {13, 17, 31, false, -2.0f, false},
    {97, 33, 64, true, 0.125f, false}, {64, 384, 128, true, 1.0f, true},
    {100, 65, 257, false, 1.0f, true}, {193, 23, 513, true, 1.0f, true},
    {12, 200, 600, false, 0.3f, false}, {2, 1, 300, true, 1.0f, false},
    // 2 x 16 tiles over pairs of full panels: exactly one and three pairs, an odd row left over,
    // a lone last full panel (24 = 3 panels), one row only.
    {7, 16, 300, false, 1.0f, true},   {25, 48, 40, true, -0.5f, false},
    {3, 24, 9, false, 1.0f, true},     {1, 32, 17, true, 1.0f, true},
};

void blocked(const GemmCase& c, const float* A, Index lda, const float* B, Index ldb,
             const float* bias, float* C, Index ldc, Index cols) {
  const kernels::PackedB packed(c.K, c.N, B, ldb, c.transposed);
  kernels::gemm_blocked(c.M, A, lda, packed, c.alpha, bias, C, ldc, cols);
}

void eigen(const GemmCase& c, const float* A, Index lda, const float* B, Index ldb,
           const float* bias, float* C, Index ldc, Index cols) {
  kernels::gemm_eigen(c.M, cols < 0 ? c.N : cols, c.K, A, lda, B, ldb, c.transposed, c.alpha, bias,
                      C, ldc);
}

void dispatched(const GemmCase& c, const float* A, Index lda, const float* B, Index ldb,
                const float* bias, float* C, Index ldc, Index cols) {
  const kernels::Operand op(c.K, c.N, B, ldb, c.transposed);
  kernels::gemm(c.M, A, lda, op, c.alpha, bias, C, ldc, cols);
}

TEST(Kernels, BlockedGemmMatchesLoops) {
  for (const GemmCase& c : kGemmCases) check_gemm(c, blocked);
}

// The 6-row tiles' sums go through kernels::tile6_sums, whose function-table slot the wasm modules
// give to the relaxed-SIMD kernel (cpp/bindings/wasm/relaxed_simd.wat). Any kernel keeping its
// contract (acc[r * 8 + j] = sum_k A[r * lda + k] * panel[k * 8 + j]) gives the same GEMM within
// the tolerance: here a plain loop with one rounding per step (std::fma), as a fused kernel does.
int g_slot_calls = 0;
void tile6_sums_fma_loop(std::int32_t kc, const float* A, std::int32_t lda, const float* panel,
                         float* acc) noexcept {
  ++g_slot_calls;
  for (int r = 0; r < 6; ++r) {
    for (int j = 0; j < 8; ++j) {
      float s = 0.0f;
      for (std::int32_t k = 0; k < kc; ++k) s = std::fma(A[r * lda + k], panel[k * 8 + j], s);
      acc[r * 8 + j] = s;
    }
  }
}

// Calls of the 6-row slot gemm_blocked makes for c: one per 6-row tile (rows in blocks of 24),
// panel and 256-deep block, over every 8-column panel when `fused`, else over the panels outside
// full pairs (pairs go through the 2 x 16 tiles). 13 x 17 x 31 has 2 tiles x 3 panels x 1 block
// fused, 2 x 1 x 1 otherwise; 193 rows are 8 blocks of 4 tiles and one row.
int expected_slot_calls(const GemmCase& c, bool fused) {
  int tiles = 0;
  for (Index i0 = 0; i0 < c.M; i0 += 24) {
    tiles += static_cast<int>(std::min<Index>(24, c.M - i0) / 6);
  }
  const int panels = static_cast<int>((c.N + 7) / 8);
  const int paired = fused ? 0 : static_cast<int>(c.N / 8) / 2 * 2;
  return tiles * (panels - paired) * static_cast<int>((c.K + 255) / 256);
}

// Where the slot holds a fused multiply-add kernel (the wasm modules' relaxed SIMD), tile6_fused
// sends every panel through it.
TEST(Kernels, SixRowTilesGoThroughTheSwappableSlot) {
  ASSERT_EQ(kernels::tile6_sums, &kernels::tile6_sums_simd128);
  ASSERT_FALSE(kernels::tile6_fused);
  kernels::tile6_sums = &tile6_sums_fma_loop;
  kernels::tile6_fused = true;
  g_slot_calls = 0;
  for (const GemmCase& c : kGemmCases) check_gemm(c, blocked);
  const int calls = g_slot_calls;
  kernels::tile6_fused = false;
  kernels::tile6_sums = &kernels::tile6_sums_simd128;
  int expected = 0;
  for (const GemmCase& c : kGemmCases) expected += expected_slot_calls(c, true);
  EXPECT_EQ(calls, expected);
  EXPECT_GT(expected, 100);
  g_slot_calls = 0;
  for (const GemmCase& c : kGemmCases) check_gemm(c, blocked);
  EXPECT_EQ(g_slot_calls, 0) << "the default kernel is back in the slot";
}

// By default pairs of full panels run as 2 x 16 tiles, not through the slot: it sees only the
// rest, and the products still match the loops (BlockedGemmMatchesLoops checks them without a
// counting kernel).
TEST(Kernels, PairsOfFullPanelsSkipTheSlotUnlessFused) {
  ASSERT_FALSE(kernels::tile6_fused);
  kernels::tile6_sums = &tile6_sums_fma_loop;
  int expected = 0, fused = 0;
  g_slot_calls = 0;
  for (const GemmCase& c : kGemmCases) {
    check_gemm(c, blocked);
    expected += expected_slot_calls(c, false);
    fused += expected_slot_calls(c, true);
  }
  const int calls = g_slot_calls;
  kernels::tile6_sums = &kernels::tile6_sums_simd128;
  EXPECT_EQ(calls, expected);
  EXPECT_GT(expected, 10);
  EXPECT_LT(expected, fused / 2) << "most tiles of these cases are in full pairs";
}

TEST(Kernels, EigenGemmMatchesLoops) {
  for (const GemmCase& c : kGemmCases) check_gemm(c, eigen);
}

// gemm_eigen runs Eigen's GEMM with packing buffers kept between products (KeptPacking in
// kernels.cpp) and Eigen's own blocking: its products must be Eigen's product expression's, bit
// for bit, whatever ran before (larger, smaller, above the 2^20 floats it keeps), both layouts of
// B, and the sizes Eigen hands to other kernels (coefficient-wise below M + N + K = 20, GEMV).
TEST(Kernels, EigenGemmWithKeptPackingIsEigensProduct) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  struct Shape {
    Index M, N, K;
  };
  // 512 x 2304 x 768 (the fused QKV product of 512 tokens at d_model 768): on this project's
  // machines Eigen blocks it as kc = 768, mc = 2304, nc = 256, more than the 2^20 floats kept, so
  // the buffers are released after it (Eigen sizes its blocks from the caches it finds). 200 x
  // 300 x 700 before and after it: the kept buffers reused, then fresh ones.
  const Shape shapes[] = {{200, 300, 700}, {7, 9, 25}, {512, 2304, 768}, {64, 384, 128},
                          {5, 3, 2},       {1, 50, 40}, {50, 1, 40},      {200, 300, 700}};
  mha::NumpyRandomState rng(77);
  int compared = 0;
  for (const Shape& s : shapes) {
    for (const bool transposed : {false, true}) {
      SCOPED_TRACE(std::to_string(s.M) + " x " + std::to_string(s.N) + " x " +
                   std::to_string(s.K) + (transposed ? " (B given transposed)" : ""));
      const RowMatrix a = (rng.randn(s.M, s.K)).cast<float>();
      const RowMatrix b = (rng.randn(s.K, s.N)).cast<float>();
      const RowMatrix bt = b.transpose();
      RowMatrix want(s.M, s.N);
      if (transposed) {
        want.noalias() = a * bt.transpose();
      } else {
        want.noalias() = a * b;
      }
      RowMatrix got(s.M, s.N);
      got.setConstant(std::numeric_limits<float>::quiet_NaN());  // every entry must be written
      kernels::gemm_eigen(s.M, s.N, s.K, a.data(), s.K, transposed ? bt.data() : b.data(),
                          transposed ? s.K : s.N, transposed, 1.0f, nullptr, got.data(), s.N);
      ASSERT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * std::size_t(want.size())), 0);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 16);
}

TEST(Kernels, BuildBackEndGemmMatchesLoops) {
  for (const GemmCase& c : kGemmCases) check_gemm(c, dispatched);
}

TEST(Kernels, GemmOfTheFirstColumnsOnly) {
  // Column counts inside a panel, at a panel edge, and none: the Q | K thirds of a fused in_proj.
  for (const GemmCase& c : {GemmCase{13, 24, 31, true, 1.0f, true},
                            GemmCase{97, 48, 300, false, 0.5f, true},
                            GemmCase{7, 9, 5, true, 1.0f, false}}) {
    for (const Index cols : {Index{0}, Index{1}, Index{8}, c.N - 3, c.N}) {
      check_gemm(c, blocked, cols);
      check_gemm(c, eigen, cols);
      check_gemm(c, dispatched, cols);
    }
  }
}

TEST(Kernels, PackedPanelsAreZeroPaddedToEightColumns) {
  const std::vector<float> B = {1, 2, 3, 4, 5, 6};  // (K=2, N=3) row-major
  const kernels::PackedB p(2, 3, B.data(), 3, false);
  EXPECT_EQ(p.padded_cols(), 8);
  const std::vector<float> expected = {1, 2, 3, 0, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<float>(p.data(), p.data() + 16), expected);
  const std::vector<float> Bt = {1, 4, 2, 5, 3, 6};  // the same B given as Bt (N=3, K=2)
  const kernels::PackedB pt(2, 3, Bt.data(), 2, true);
  EXPECT_EQ(std::vector<float>(pt.data(), pt.data() + 16), expected);
}

TEST(Kernels, ExpShiftedSumMatchesStdExp) {
  for (const Index count : {1, 2, 3, 4, 5, 7, 8, 33, 1000}) {
    std::vector<float> x(static_cast<std::size_t>(count));
    for (Index j = 0; j < count; ++j) {
      x[j] = 2.0f - 100.0f * float(j) / float(std::max<Index>(count - 1, 1));  // 2 .. -98
    }
    const float shift = 2.0f;
    std::vector<float> y = x;
    const float sum = kernels::exp_shifted_sum(y.data(), count, shift);
    double exact_sum = 0.0;
    for (Index j = 0; j < count; ++j) {
      const double arg = double(x[j]) - shift;
      const double exact = std::exp(double(x[j] - shift));
      exact_sum += exact;
      if (arg > -87.33) {  // the normal float range
        EXPECT_NEAR(y[j], exact, 4e-7 * exact) << "count " << count << " exp(" << arg << ")";
      } else if (arg < -87.34) {  // below it: 0 rather than a denormal
        EXPECT_EQ(y[j], 0.0f) << "count " << count << " exp(" << arg << ")";
      }
    }
    EXPECT_NEAR(sum, exact_sum, 1e-6 * exact_sum) << "count " << count;
  }
}

TEST(Kernels, ExpOfMinusInfinityIsExactlyZero) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-inf, 0.0f, -inf, -1.0f, -inf, -inf, -200.0f};
  const float sum = kernels::exp_shifted_sum(x.data(), static_cast<Index>(x.size()), 0.0f);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_EQ(x[4], 0.0f);
  EXPECT_EQ(x[5], 0.0f);
  EXPECT_EQ(x[6], 0.0f);  // below the normal range: 0, not a denormal
  EXPECT_FLOAT_EQ(x[1], 1.0f);
  EXPECT_NEAR(x[3], std::exp(-1.0), 4e-7);
  EXPECT_NEAR(sum, 1.0 + std::exp(-1.0), 1e-6);
}

TEST(Kernels, MaxAndFiniteSeesEveryEntry) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Counts through each part of the pass: four vectors at a time (4, 8 or 16 lanes each, by
  // target), one vector at a time, and the scalar tail.
  for (const Index count : {1, 3, 4, 5, 9, 17, 64, 67, 130, 201}) {
    for (Index at = 0; at < count; ++at) {
      std::vector<float> x(static_cast<std::size_t>(count), -3.0f);
      x[at] = 2.5f;
      bool finite = false;
      EXPECT_EQ(kernels::max_and_finite(x.data(), count, finite), 2.5f) << count << " " << at;
      EXPECT_TRUE(finite);
      for (const float bad : {inf, -inf, nan}) {
        x[at] = bad;
        kernels::max_and_finite(x.data(), count, finite);
        EXPECT_FALSE(finite) << "count " << count << ", " << bad << " at " << at;
        EXPECT_EQ(kernels::first_non_finite(x.data(), count), at);
      }
    }
  }
}

TEST(Kernels, MaxAndFiniteTakesTheLargestOfDistinctValues) {
  // Every entry different, the largest at each place in turn: each of the four running maxima
  // and the tail must reach the result.
  for (const Index count : {7, 16, 63, 64, 65, 129}) {
    for (Index at = 0; at < count; ++at) {
      std::vector<float> x(static_cast<std::size_t>(count));
      for (Index j = 0; j < count; ++j) x[static_cast<std::size_t>(j)] = -static_cast<float>(j) - 1.0f;
      x[static_cast<std::size_t>(at)] = 0.5f;
      bool finite = false;
      EXPECT_EQ(kernels::max_and_finite(x.data(), count, finite), 0.5f) << count << " " << at;
      EXPECT_TRUE(finite);
    }
  }
}

TEST(Kernels, ScaleIntoWritesTheScaledCopy) {
  for (Index count = 1; count <= 40; ++count) {
    std::vector<float> x(static_cast<std::size_t>(count)), dst(static_cast<std::size_t>(count) + 1, -7.0f);
    for (Index j = 0; j < count; ++j) x[static_cast<std::size_t>(j)] = static_cast<float>(j + 1);
    kernels::scale_into(dst.data(), x.data(), count, 0.25f);
    for (Index j = 0; j < count; ++j) {
      EXPECT_EQ(dst[static_cast<std::size_t>(j)], 0.25f * static_cast<float>(j + 1)) << count << ", " << j;
      EXPECT_EQ(x[static_cast<std::size_t>(j)], static_cast<float>(j + 1));  // the source is unchanged
    }
    EXPECT_EQ(dst.back(), -7.0f) << "nothing written past count " << count;
  }
}

TEST(Kernels, ScaleMultipliesEveryEntry) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7};
  kernels::scale(x.data(), 7, 0.5f);
  EXPECT_EQ(x, (std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f}));
  // Every count up to 40: the vector loop (4, 8 or 16 lanes, by target) and its scalar tail.
  for (Index count = 1; count <= 40; ++count) {
    std::vector<float> y(static_cast<std::size_t>(count));
    for (Index j = 0; j < count; ++j) y[static_cast<std::size_t>(j)] = static_cast<float>(j + 1);
    kernels::scale(y.data(), count, 0.25f);
    for (Index j = 0; j < count; ++j) {
      EXPECT_EQ(y[static_cast<std::size_t>(j)], 0.25f * static_cast<float>(j + 1)) << count << ", " << j;
    }
  }
}

TEST(Kernels, AllFiniteFindsOneNonFiniteEntryAnywhere) {
  // Every count up to 40 and every position, so that both the vector loop and the tail see it.
  for (Index count = 1; count <= 40; ++count) {
    std::vector<float> x(static_cast<std::size_t>(count), 1.5f);
    EXPECT_TRUE(kernels::all_finite(x.data(), count)) << count;
    for (const float bad : {NAN, INFINITY, -INFINITY}) {
      for (Index at = 0; at < count; ++at) {
        x[static_cast<std::size_t>(at)] = bad;
        EXPECT_FALSE(kernels::all_finite(x.data(), count)) << count << ", " << bad << " at " << at;
        x[static_cast<std::size_t>(at)] = 1.5f;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The forward pass at sizes crossing the kernels' blocks: n > 96 (row blocks of the scores),
// m > 256 (depth blocks of A V), d > 256 (depth blocks of the projections), n = 1, m != n,
// masks, separate weights (kdim, vdim), ablation; and a layer equal to the free function.

struct ForwardCase {
  Index n, m, d, h, kdim, vdim;
  bool self, bias, causal, padding, bool_mask_per_head;
};

void check_forward(const ForwardCase& fc) {
  const std::string what = "n=" + std::to_string(fc.n) + " m=" + std::to_string(fc.m) +
                           " d=" + std::to_string(fc.d) + " h=" + std::to_string(fc.h);
  mha::NumpyRandomState rng(static_cast<std::uint32_t>(fc.n * 7 + fc.m * 3 + fc.d));
  const auto mat = [&](Index r, Index c, double s) {
    return mha::RowMatrixXf((rng.randn(r, c) * s).cast<float>());
  };
  mha::AttentionConfig config;
  config.d_model = fc.d;
  config.num_heads = fc.h;
  config.kdim = fc.kdim;
  config.vdim = fc.vdim;
  const double s = 1.0 / std::sqrt(double(fc.d));
  const mha::VectorXf in_b = fc.bias ? mha::VectorXf(mat(3 * fc.d, 1, 0.2).col(0)) : mha::VectorXf();
  const mha::VectorXf out_b = fc.bias ? mha::VectorXf(mat(fc.d, 1, 0.2).col(0)) : mha::VectorXf();
  const mha::AttentionWeights weights =
      config.same_embed_dim()
          ? mha::AttentionWeights::fused(mat(3 * fc.d, fc.d, s), in_b, mat(fc.d, fc.d, s), out_b)
          : mha::AttentionWeights::separate(mat(fc.d, fc.d, s),
                                            mat(fc.d, config.key_dim(), 1 / std::sqrt(double(config.key_dim()))),
                                            mat(fc.d, config.value_dim(), 1 / std::sqrt(double(config.value_dim()))),
                                            in_b, mat(fc.d, fc.d, s), out_b);
  const mha::RowMatrixXf query = mat(fc.n, fc.d, 1.0);
  const mha::RowMatrixXf key = fc.self ? query : mat(fc.m, config.key_dim(), 1.0);
  const mha::RowMatrixXf value = fc.self ? query : mat(fc.m, config.value_dim(), 1.0);
  mha::AttentionMasks masks;
  masks.is_causal = fc.causal;
  if (fc.padding) {
    masks.key_padding_mask.assign(static_cast<std::size_t>(fc.m), 0);
    for (Index j = 0; j < fc.m; j += 3) masks.key_padding_mask[static_cast<std::size_t>(j)] = 1;
  }
  if (fc.bool_mask_per_head) {
    masks.attn_mask_kind = mha::AttentionMasks::Kind::boolean;
    masks.attn_mask = mha::HeadStack(fc.h, fc.n, fc.m);
    for (Index i = 0; i < masks.attn_mask.size(); ++i) {
      masks.attn_mask.data()[i] = rng.random_sample() < 0.3 ? 1.0f : 0.0f;
    }
  }
  mha::ForwardOptions options;
  options.ablated_heads.assign(static_cast<std::size_t>(fc.h), 0);
  options.ablated_heads.back() = fc.h > 1 ? 1 : 0;

  const mha::MatrixRef k_in = fc.self ? mha::MatrixRef(query) : mha::MatrixRef(key);
  const mha::MatrixRef v_in = fc.self ? mha::MatrixRef(query) : mha::MatrixRef(value);
  const mha::AttentionResult fast =
      mha::multi_head_attention_forward(config, weights, query, k_in, v_in, masks, options);
  const mha::AttentionResult ref =
      mha::multi_head_attention_reference(config, weights, query, k_in, v_in, masks, options);
  const auto dw = mha_test::compare(fast.attn_weights.data(), ref.attn_weights.data(),
                                    static_cast<std::size_t>(ref.attn_weights.size()), 1e-5, 0.0);
  EXPECT_TRUE(mha_test::close(dw)) << what << " weights";
  const double scale = std::max(1.0, double(ref.output.cwiseAbs().maxCoeff()));
  const auto dy = mha_test::compare(fast.output.data(), ref.output.data(),
                                    static_cast<std::size_t>(ref.output.size()), 1e-5 * scale, 1e-5);
  EXPECT_TRUE(mha_test::close(dy)) << what << " output";
  EXPECT_EQ(fast.fully_masked_rows, ref.fully_masked_rows) << what;
  // Scores: -inf exactly where the reference masks, within 1e-4 + 1e-5 relative elsewhere.
  for (Index i = 0; i < ref.scores.size(); ++i) {
    const float a = fast.scores.data()[i], e = ref.scores.data()[i];
    if (std::isinf(e) || std::isinf(a)) {
      ASSERT_EQ(a, e) << what << " scores at flat index " << i;
    } else {
      ASSERT_NEAR(a, e, 1e-4 + 1e-5 * std::abs(e)) << what << " scores at flat index " << i;
    }
  }

  // Weights only (no V, A·V or out_proj): the same weights, masked rows, q and k; no output, v
  // or head outputs. The weights within the tolerance above (Eigen may block the 2d-column
  // product differently from the 3d-column one natively; the blocked kernels give the same bits).
  mha::ForwardOptions weights_only = options;
  weights_only.weights_only = true;
  const mha::AttentionResult w =
      mha::multi_head_attention_forward(config, weights, query, k_in, v_in, masks, weights_only);
  EXPECT_EQ(w.output.size(), 0) << what;
  EXPECT_EQ(w.v.size(), 0) << what;
  EXPECT_EQ(w.head_outputs.size(), 0) << what;
  EXPECT_EQ(w.fully_masked_rows, ref.fully_masked_rows) << what;
  EXPECT_TRUE(mha_test::close(mha_test::compare(w.attn_weights.data(), ref.attn_weights.data(),
                                                static_cast<std::size_t>(ref.attn_weights.size()),
                                                1e-5, 0.0)))
      << what << " weights_only weights";
  ASSERT_EQ(w.q.size(), fast.q.size()) << what;
  ASSERT_EQ(w.k.size(), fast.k.size()) << what;
  EXPECT_TRUE(w.q.isApprox(fast.q, 1e-6f)) << what << " weights_only q";
  EXPECT_TRUE(w.k.isApprox(fast.k, 1e-6f)) << what << " weights_only k";
  if (mha::kernels::uses_blocked_gemm()) {
    EXPECT_TRUE(std::equal(w.attn_weights.data(), w.attn_weights.data() + w.attn_weights.size(),
                           fast.attn_weights.data()))
        << what << " weights_only weights, bit for bit with the blocked kernels";
  }

  // A layer (weights validated once and, in wasm, packed once) gives exactly the same numbers.
  const mha::MultiheadAttention layer(config, weights);
  const mha::AttentionResult again = fc.self ? layer.forward(query, masks, options)
                                             : layer.forward(query, key, value, masks, options);
  EXPECT_EQ(again.output, fast.output) << what;
  EXPECT_TRUE(std::equal(again.attn_weights.data(),
                         again.attn_weights.data() + again.attn_weights.size(),
                         fast.attn_weights.data()))
      << what;
}

TEST(Kernels, ForwardAtBlockCrossingSizesMatchesTheReference) {
  // n, m, d, h, kdim, vdim, self, bias, causal, padding, per-head boolean mask
  check_forward({1, 1, 8, 2, 0, 0, true, true, false, false, false});
  check_forward({1, 300, 40, 5, 0, 0, false, true, false, true, false});
  check_forward({131, 131, 264, 3, 0, 0, true, true, true, false, false});
  check_forward({100, 270, 40, 5, 0, 0, false, false, false, true, true});
  check_forward({97, 13, 30, 6, 11, 50, false, true, false, false, true});
  check_forward({200, 200, 24, 4, 0, 0, true, false, true, true, false});
}

}  // namespace
