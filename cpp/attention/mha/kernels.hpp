// Compute kernels of the forward pass: matrix products and the softmax exponential.
//
// Two GEMM back ends with one contract, C (M, N) = alpha * A (M, K) * B (K, N) + bias (N):
//   - Eigen (native builds): Eigen's GEMM on maps over the caller's memory, which calls OpenBLAS's
//     sgemm where the build found it (EIGEN_USE_BLAS: CMakeLists.txt MHA_USE_BLAS);
//   - blocked (WebAssembly): our own register-blocked GEMM on packed panels of B, written with
//     GCC/Clang vector extensions (4 floats), which Emscripten compiles to SIMD128 (-msimd128).
//     Eigen 3.4 has no WebAssembly packet math, so in wasm its GEMM is scalar (~4 GFLOP/s).
//     Natively the same code compiles to SSE, so the native tests check it too
//     (tests/core/kernels_test.cpp); -DMHA_BLOCKED_GEMM=ON makes the native forward use it.
// gemm() picks the back end of the build; Operand carries B prepared for it (packed panels for
// the blocked back end, a view for Eigen), so a B used by many products is prepared once.
// Kernels that cannot throw are noexcept, so that their callers need no cleanup for them.
//
// Layouts (row-major, as everywhere in mha): A element (i, k) at A[i * lda + k]; B either
// row-major (K, N) — element (k, j) at B[k * ldb + j] — or given as its transpose Bᵀ (N, K) —
// element (k, j) at B[j * ldb + k], as a weight W (out, in) is for x Wᵀ and K_h is for Q_h K_hᵀ.
// Shape legend of the callers: n = query tokens, m = key tokens, d = d_model, h = num_heads.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <vector>

namespace mha::kernels {

using Index = Eigen::Index;

/// B (K, N) ready for the blocked GEMM: panels of kPanel columns, zero-padded on the right, in
/// blocks of kDepth rows of K. Block b (rows k0 = b*kDepth .. k0 + kc) starts at
/// k0 * padded_cols; its panel p (columns 8p .. 8p + 7) at that + p * kc * kPanel, entry (k, jj)
/// at + k * kPanel + jj.
class PackedB {
 public:
  static constexpr Index kPanel = 8;    ///< columns per panel: two 4-float vectors
  static constexpr Index kDepth = 256;  ///< rows of K per block (a panel block is 8 KiB)

  PackedB() = default;
  /// Packs B (K, N); `transposed` says the memory holds Bᵀ (N, K) with row stride ldb.
  PackedB(Index K, Index N, const float* B, Index ldb, bool transposed);

  Index depth() const { return depth_; }  ///< K
  Index cols() const { return cols_; }    ///< N
  Index padded_cols() const { return padded_; }
  const float* data() const { return data_.data(); }

 private:
  Index depth_ = 0, cols_ = 0, padded_ = 0;
  std::vector<float> data_;
};

/// C (M, N) = alpha * A (M, K) * B + bias, B packed (K = B.depth(), N = B.cols()). bias (N) or
/// nullptr; C is overwritten (row stride ldc). M >= 0. Register-blocked micro-kernels: 2 x 16
/// tiles over pairs of full panels and 6 x 8 tiles for the rest, or 6 x 8 tiles only when
/// tile6_fused says the 6-row slot holds a fused multiply-add kernel.
/// `cols` in [0, N] (or -1 for N): only the first `cols` columns of B and C (the query and key
/// thirds of a fused in_proj, say).
void gemm_blocked(Index M, const float* A, Index lda, const PackedB& B, float alpha,
                  const float* bias, float* C, Index ldc, Index cols = -1) noexcept;

/// The 6x8 micro-kernel's sums, the GEMM's inner loop: acc (6 x 8 floats, row-major) =
/// A[0:6, 0:kc] (row stride lda, in floats) * panel (kc x 8, a PackedB panel). kc >= 1. Units:
/// floats; no errors. The default is tile6_sums_simd128 (multiply then add). An engine with
/// relaxed SIMD may swap it for f32x4.relaxed_madd (cpp/bindings/wasm/relaxed_simd.wat) through
/// its slot in the function table: gemm_blocked calls whatever this pointer's slot holds.
using Tile6Sums = void (*)(std::int32_t kc, const float* A, std::int32_t lda, const float* panel,
                           float* acc) noexcept;
void tile6_sums_simd128(std::int32_t kc, const float* A, std::int32_t lda, const float* panel,
                        float* acc) noexcept;
extern Tile6Sums volatile tile6_sums;
/// True once tile6_sums's slot holds a fused multiply-add kernel (relaxed SIMD: set by the wasm
/// modules' relaxed_simd.js through mha_tile6_fused): gemm_blocked then runs every tile through
/// it, which is faster there than the 2 x 16 multiply-then-add tiles (docs/benchmarks.md).
/// False by default: the 2 x 16 tiles for pairs of full panels.
extern bool volatile tile6_fused;

/// The same product with Eigen's GEMM: B as described by (B, ldb, transposed). Eigen packs the
/// operands into buffers that each thread keeps between products (up to 4 MiB), where its
/// product expression would allocate them for every product; the results are the expression's.
void gemm_eigen(Index M, Index N, Index K, const float* A, Index lda, const float* B, Index ldb,
                bool transposed, float alpha, const float* bias, float* C, Index ldc);

/// True when gemm() uses the blocked kernels (WebAssembly builds, or -DMHA_BLOCKED_GEMM=ON).
constexpr bool uses_blocked_gemm() {
#if defined(__EMSCRIPTEN__) || defined(MHA_BLOCKED_GEMM)
  return true;
#else
  return false;
#endif
}

/// The build's GEMM back end, for reports (mha_bench): "blocked" (WebAssembly, MHA_BLOCKED_GEMM),
/// "eigen+openblas" (Eigen's products calling OpenBLAS's sgemm: EIGEN_USE_BLAS, CMake's
/// MHA_USE_BLAS) or "eigen".
constexpr const char* gemm_backend() {
#if defined(__EMSCRIPTEN__) || defined(MHA_BLOCKED_GEMM)
  return "blocked";
#elif defined(MHA_GEMM_OPENBLAS)
  return "eigen+openblas";
#else
  return "eigen";
#endif
}

/// The right operand B (K, N) of gemm(), prepared for the build's back end: packed panels for
/// the blocked kernels, or a view of the caller's memory for Eigen (which must then outlive it).
class Operand {
 public:
  Operand() = default;
  Operand(Index K, Index N, const float* B, Index ldb, bool transposed);

  Index depth() const { return K_; }
  Index cols() const { return N_; }

 private:
  friend void gemm(Index, const float*, Index, const Operand&, float, const float*, float*, Index,
                   Index) noexcept(uses_blocked_gemm());
  Index K_ = 0, N_ = 0, ldb_ = 0;
  const float* B_ = nullptr;
  bool transposed_ = false;
  PackedB packed_;
};

/// C (M, N) = alpha * A (M, K) * B + bias with the build's back end; contract of gemm_blocked
/// (including `cols`: the first `cols` columns only, -1 for all). noexcept where the blocked
/// kernels are used (they allocate nothing); Eigen's GEMM may allocate, so natively it may throw.
void gemm(Index M, const float* A, Index lda, const Operand& B, float alpha, const float* bias,
          float* C, Index ldc, Index cols = -1) noexcept(uses_blocked_gemm());

/// Room for at least `count` floats in `buffer` (unwritten; aligned for Eigen's packets), for
/// scratch memory kept between calls: grows only. Eigen's resize frees the old block before it
/// allocates the new one, so a failed allocation would leave `buffer` holding the freed pointer
/// and its old size; here the old block is dropped first, and a throw (std::bad_alloc) leaves
/// `buffer` empty.
float* reserve_floats(Eigen::VectorXf& buffer, Index count);

/// x[j] = exp(x[j] - shift) for j < count, in place; returns the sum of the results (float32).
/// exp(-inf) is exactly 0, so masked keys get weight 0. For softmax rows: shift = the row's
/// maximum, so every argument is <= 0. Vectorised (Cephes' expf polynomial, relative error
/// about 2 float32 ulp; arguments below -87.3 give 0 instead of a denormal). This and the
/// passes below run on vectors of 4 floats in WebAssembly (SIMD128) and of the target's width
/// natively (16 with AVX-512, 8 with AVX2), so the native sum's order differs from wasm's.
float exp_shifted_sum(float* x, Index count, float shift) noexcept;

/// The largest of x[0 .. count) (count >= 1; NaN entries are skipped), and all_finite = whether
/// every entry is finite (no NaN, no ±inf). One vectorised pass.
float max_and_finite(const float* x, Index count, bool& all_finite) noexcept;

/// True when every entry of x[0 .. count) is finite (no NaN, no ±inf). Vectorised: the finiteness
/// checks of the forward pass (Eigen 3.4's allFinite is scalar in wasm).
bool all_finite(const float* x, Index count) noexcept;

/// Index of the first entry of x[0 .. count) that is NaN or ±inf, or count when there is none.
Index first_non_finite(const float* x, Index count) noexcept;

/// x[j] *= s for j < count, vectorised.
void scale(float* x, Index count, float s) noexcept;

/// dst[j] = x[j] * s for j < count, vectorised: a scaled copy in one pass (dst == x: in place;
/// otherwise the two ranges must not overlap). The softmax's normalisation writes each row of
/// weights into the returned (h, n, m) stack this way.
void scale_into(float* dst, const float* x, Index count, float s) noexcept;

}  // namespace mha::kernels
