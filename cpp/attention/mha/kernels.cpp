// Compute kernels: blocked GEMM on packed panels, Eigen GEMM, vectorised exp. See kernels.hpp.
//
// The blocked GEMM follows Goto & van de Geijn 2008 ("Anatomy of high-performance matrix
// multiplication"): B is packed into column panels (kPanel = 8 wide, kDepth = 256 deep, 8 KiB,
// L1-resident while a block of A rows streams past it). Pairs of full panels go through a 2x16
// micro-kernel (wide_tile: 8 four-float accumulators, per k step four B vectors and one A value
// broadcast per row, v128.load32_splat in wasm); the last panels, and the rows left over, through
// 6x8 tiles (12 accumulators, two B vectors per k step). WebAssembly SIMD128 has no fused
// multiply-add, so each step here is a multiply and an add. Relaxed SIMD has one
// (f32x4.relaxed_madd), which Emscripten 3.1.6 cannot emit: the 6-row sums go through the pointer
// tile6_sums, the wasm modules replace its table slot with cpp/bindings/wasm/relaxed_simd.wat where
// the engine validates it, and set tile6_fused, which sends every panel to the 6x8 tiles (faster
// there than the 2x16 multiply-then-add). The 2x16 tiles read A's rows as interleaved pairs,
// packed once per block of rows (pack_row_pair); every other tile reads A in place.
#include "mha/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace mha::kernels {

namespace {

// Four floats / four int32 (GCC and Clang vector extensions; SIMD128 in wasm, SSE natively).
typedef float v4f __attribute__((vector_size(16)));
typedef std::int32_t v4i __attribute__((vector_size(16)));

inline v4f load4(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, v4f v) { std::memcpy(p, &v, sizeof v); }
inline v4f splat4(float x) { return v4f{x, x, x, x}; }

constexpr Index kPanel = PackedB::kPanel;
constexpr Index kDepth = PackedB::kDepth;
// Rows of the micro-kernel's tile: 12 accumulators + 2 B + 1 A. V8 on x64 allocates 15 xmm
// registers (xmm15 is its scratch) and needs one more for each product, so one loop over 6 rows
// spills one accumulator: a store, a load and an add per k step (node 20's --print-wasm-code),
// a loop-carried chain through memory. On a core with two multiply and two add pipes that chain,
// not the arithmetic, sets the pace; kPass below avoids it.
constexpr int kRows = 6;
// The SIMD128 6x8 tiles take the panels outside full pairs (a last full panel of an odd count, a
// partial edge panel; every panel where tile6_fused); full pairs go to the 2x16 tile (wide_tile).
// The SIMD128 sums of a 6-row tile run as kPass-row passes over the same panel (read again from
// L1): 6 accumulators + 2 B + 1 A + 1 product, no spill; and each pass takes k two steps a loop
// iteration (pass_sums). Of the splits measured (scripts/bench/ab_core.mjs; docs/benchmarks.md),
// 3+3 rows with k unrolled by 2 was the fastest. The relaxed-SIMD kernel (fused multiply-add: no
// product register) runs 6 rows in one loop.
constexpr int kPass = 3;
// Rows of A per pass over one B panel block: 24 x 256 x 4 = 24 KiB of A (packed in pairs for the
// 2 x 16 tiles) stays in L1 with the panels while it meets every panel. In wasm, blocks of 12 to
// 48 rows ran within a few percent of each other (docs/benchmarks.md).
constexpr Index kRowBlock = 24;

/// lo[r] | hi[r] = A[r, 0:kc] * panel for r < R: per k step two B vectors and one splat per row.
/// Unroll: k steps per loop iteration, as the compiler may lay them out (see kPass).
template <int R, int Unroll = 1>
inline void sums(Index kc, const float* A, Index lda, const float* panel, v4f* lo, v4f* hi) {
  static_assert(Unroll == 1 || Unroll == 2, "k steps per iteration: 1 or 2");
  const float* a[R];
  for (int r = 0; r < R; ++r) {
    lo[r] = v4f{0, 0, 0, 0};
    hi[r] = v4f{0, 0, 0, 0};
    a[r] = A + r * lda;
  }
  const auto step = [&](Index k) {
    const v4f b0 = load4(panel), b1 = load4(panel + 4);
    panel += kPanel;
    for (int r = 0; r < R; ++r) {
      const v4f x = splat4(a[r][k]);
      lo[r] += x * b0;
      hi[r] += x * b1;
    }
  };
  if constexpr (Unroll == 2) {
#if defined(__clang__)
#pragma clang loop unroll_count(2)
#else
#pragma GCC unroll 2
#endif
    for (Index k = 0; k < kc; ++k) step(k);
  } else {
    for (Index k = 0; k < kc; ++k) step(k);
  }
}

/// Rows 0 .. kPass-1 of a tile's sums into acc (kPass x 8 floats, row-major), k unrolled by 2:
/// one copy of the loop for both passes (inlined twice it cost 388 bytes of the gzip budget).
__attribute__((noinline)) void pass_sums(std::int32_t kc, const float* A, std::int32_t lda,
                                         const float* panel, float* acc) noexcept {
  v4f lo[kPass], hi[kPass];
  sums<kPass, 2>(kc, A, lda, panel, lo, hi);
  for (int r = 0; r < kPass; ++r) {
    store4(acc + r * kPanel, lo[r]);
    store4(acc + r * kPanel + 4, hi[r]);
  }
}

}  // namespace

void tile6_sums_simd128(std::int32_t kc, const float* A, std::int32_t lda, const float* panel,
                        float* acc) noexcept {
  // Two passes of 3 rows over the panel (see kPass): no accumulator spilled.
  pass_sums(kc, A, lda, panel, acc);
  pass_sums(kc, A + kPass * lda, lda, panel, acc + kPass * kPanel);
}

// Read on every call (volatile): the compiler must not turn it into a direct call, since the
// wasm modules swap what its table slot holds.
Tile6Sums volatile tile6_sums = &tile6_sums_simd128;
bool volatile tile6_fused = false;

namespace {

/// One (R, 8) tile: C = alpha * A[0:R, 0:kc] * panel (+ bias on the first depth block, else += C).
/// `cols` <= 8 of the tile's columns are stored (the panel is zero-padded beyond them).
template <int R>
void tile(Index kc, const float* A, Index lda, const float* panel, float alpha, const float* bias,
          bool first, float* C, Index ldc, Index cols) noexcept {
  v4f lo[R], hi[R];
  if constexpr (R == kRows) {  // through the swappable slot (see tile6_sums)
    alignas(16) float acc[kRows * kPanel];
    tile6_sums(static_cast<std::int32_t>(kc), A, static_cast<std::int32_t>(lda), panel, acc);
    for (int r = 0; r < R; ++r) {
      lo[r] = load4(acc + r * kPanel);
      hi[r] = load4(acc + r * kPanel + 4);
    }
  } else {
    sums<R>(kc, A, lda, panel, lo, hi);
  }
  const v4f va = splat4(alpha);
  float bias8[kPanel] = {};
  // A call to memcpy per tile: a constant-size copy for full panels would be a little faster but
  // costs code size in the page's first load, which has a size budget.
  if (first && bias != nullptr) std::memcpy(bias8, bias, sizeof(float) * cols);
  for (int r = 0; r < R; ++r) {
    float* c = C + r * ldc;
    float out[kPanel];
    if (first) {
      store4(out, lo[r] * va + load4(bias8));
      store4(out + 4, hi[r] * va + load4(bias8 + 4));
      if (cols == kPanel) {
        std::memcpy(c, out, sizeof out);
        continue;
      }
    } else if (cols == kPanel) {
      store4(c, lo[r] * va + load4(c));
      store4(c + 4, hi[r] * va + load4(c + 4));
      continue;
    } else {
      store4(out, lo[r] * va);
      store4(out + 4, hi[r] * va);
      for (Index j = 0; j < cols; ++j) out[j] += c[j];
    }
    std::memcpy(c, out, sizeof(float) * static_cast<std::size_t>(cols));
  }
}

// noexcept in the type: a call through a pointer that may throw needs a cleanup path in its
// caller (under Emscripten's JS exception emulation, once used here, a JS trampoline per
// remainder tile: kernels.hpp).
using TileFn = void (*)(Index, const float*, Index, const float*, float, const float*, bool, float*,
                        Index, Index) noexcept;
constexpr TileFn kTiles[kRows + 1] = {nullptr,  &tile<1>, &tile<2>, &tile<3>,
                                      &tile<4>, &tile<5>, &tile<6>};

/// Rows 0 and 1 of A[:, 0:kc] interleaved, the 2 x 16 tile's packed operand: dst[2k] = A[0, k],
/// dst[2k + 1] = A[1, k] (dst holds 2 kc floats).
void pack_row_pair(Index kc, const float* A, Index lda, float* dst) noexcept {
  const float* r0 = A;
  const float* r1 = A + lda;
  Index k = 0;
  for (; k + 4 <= kc; k += 4) {
    const v4f a = load4(r0 + k), b = load4(r1 + k);
    store4(dst + 2 * k, __builtin_shufflevector(a, b, 0, 4, 1, 5));
    store4(dst + 2 * k + 4, __builtin_shufflevector(a, b, 2, 6, 3, 7));
  }
  for (; k < kc; ++k) {
    dst[2 * k] = r0[k];
    dst[2 * k + 1] = r1[k];
  }
}

/// Two rows by 16 columns: C[0:2, 0:16] = alpha * A[0:2, 0:kc] * (panel | panel + stride) (+ bias
/// on the first depth block, else += C), from two adjacent full panels. 8 accumulators + 4 B + 1 A
/// + 1 product: no spill in V8's 15 registers, and per k step 4 loads and 2 splats feed 16
/// vector operations, where a 3-row pass of the 6 x 8 tile has 5 feeding 12 (ONNX Runtime's MLAS
/// kernel for wasm SIMD has this shape too). The same sums in the same order as tile<R>: the
/// results are bit for bit those of the 6 x 8 tiles, and the forward is faster with them than
/// with 6 x 8 tiles alone (scripts/bench/ab_core.mjs; docs/benchmarks.md).
/// A is the rows' pack_row_pair buffer (2 kc floats); kc >= 1.
/// The loop is bound by the instructions V8 issues per k step, not by the arithmetic: beside the
/// 16 products and sums and 6 loads, every address update costs one (node 20's
/// --print-wasm-code). So each operand is read through one pointer that steps by a constant, with
/// the values at fixed offsets from it: 3 updates a step, where two rows of A read by a scaled
/// index (a0[k], a1[k]) cost 5 (the gain is in docs/benchmarks.md). Not unrolled: V8 then hoists
/// the loads of the following steps and spills (measured slower).
__attribute__((noinline)) void wide_tile(std::int32_t kc, const float* A, const float* panel,
                                         std::int32_t stride, float alpha, const float* bias,
                                         bool first, float* C, std::int32_t ldc) noexcept {
  v4f s00 = {0, 0, 0, 0}, s01 = s00, s02 = s00, s03 = s00;
  v4f s10 = s00, s11 = s00, s12 = s00, s13 = s00;
  const float* a = A;
  const float* p0 = panel;
  const float* p1 = panel + stride;
  const float* const end = a + 2 * kc;
  do {
    const v4f b0 = load4(p0), b1 = load4(p0 + 4), b2 = load4(p1), b3 = load4(p1 + 4);
    p0 += kPanel;
    p1 += kPanel;
    const v4f x = splat4(a[0]);
    const v4f y = splat4(a[1]);
    a += 2;
    s00 += x * b0;
    s01 += x * b1;
    s02 += x * b2;
    s03 += x * b3;
    s10 += y * b0;
    s11 += y * b1;
    s12 += y * b2;
    s13 += y * b3;
  } while (a != end);
  const v4f va = splat4(alpha);
  const v4f sums[2][4] = {{s00, s01, s02, s03}, {s10, s11, s12, s13}};
  for (int r = 0; r < 2; ++r) {
    float* c = C + r * ldc;
    for (int q = 0; q < 4; ++q) {
      const v4f add = !first ? load4(c + 4 * q) : bias != nullptr ? load4(bias + 4 * q) : v4f{};
      store4(c + 4 * q, sums[r][q] * va + add);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Packing

PackedB::PackedB(Index K, Index N, const float* B, Index ldb, bool transposed)
    : depth_(K), cols_(N), padded_((N + kPanel - 1) / kPanel * kPanel) {
  data_.assign(static_cast<std::size_t>(K * padded_), 0.0f);
  for (Index k0 = 0; k0 < K; k0 += kDepth) {
    const Index kc = std::min(kDepth, K - k0);
    float* block = data_.data() + k0 * padded_;
    for (Index j0 = 0; j0 < N; j0 += kPanel) {
      const Index nr = std::min(kPanel, N - j0);
      float* panel = block + (j0 / kPanel) * kc * kPanel;
      if (transposed) {  // B[j * ldb + k]: column j of B is a row of the memory
        for (Index jj = 0; jj < nr; ++jj) {
          const float* src = B + (j0 + jj) * ldb + k0;
          for (Index k = 0; k < kc; ++k) panel[k * kPanel + jj] = src[k];
        }
      } else {
        const float* src = B + k0 * ldb + j0;
        // A full panel's rows have a constant size: two vector moves each, not a call to memcpy
        // per row (the edge panel's nr < 8 floats still are one).
        const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(nr);
        constexpr std::size_t kPanelBytes = sizeof(float) * kPanel;
        if (nr == kPanel) {
          for (Index k = 0; k < kc; ++k) {
            std::memcpy(panel + k * kPanel, src + k * ldb, kPanelBytes);
          }
        } else {
          for (Index k = 0; k < kc; ++k) std::memcpy(panel + k * kPanel, src + k * ldb, bytes);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GEMM

void gemm_blocked(Index M, const float* A, Index lda, const PackedB& B, float alpha,
                  const float* bias, float* C, Index ldc, Index cols) noexcept {
  const Index K = B.depth(), N = cols >= 0 ? std::min(cols, B.cols()) : B.cols();
  const Index padded = B.padded_cols();
  if (M <= 0 || N <= 0) return;
  if (K == 0) {  // an empty sum: C = bias (or 0)
    for (Index i = 0; i < M; ++i) {
      for (Index j = 0; j < N; ++j) C[i * ldc + j] = bias != nullptr ? bias[j] : 0.0f;
    }
    return;
  }
  for (Index k0 = 0; k0 < K; k0 += kDepth) {
    const Index kc = std::min(kDepth, K - k0);
    const float* block = B.data() + k0 * padded;
    const bool first = k0 == 0;
    for (Index i0 = 0; i0 < M; i0 += kRowBlock) {
      const Index mc = std::min(kRowBlock, M - i0);
      Index j0 = 0;
      if (!tile6_fused && N >= 2 * kPanel) {
        // Pairs of full panels in 2 x 16 tiles (wide_tile) on the block's row pairs, packed once
        // for all of them; the last row of an odd count in 1 x 8 tiles, read from A. The 24 KiB
        // buffer is per thread rather than on the stack (Emscripten's stack can be 64 KiB).
        alignas(16) static thread_local float pairs[kRowBlock * kDepth];
        for (Index i = 0; i + 2 <= mc; i += 2) {
          pack_row_pair(kc, A + (i0 + i) * lda + k0, lda, pairs + i * kc);
        }
        for (; j0 + 2 * kPanel <= N; j0 += 2 * kPanel) {
          const float* panel = block + (j0 / kPanel) * kc * kPanel;
          const float* b = bias != nullptr ? bias + j0 : nullptr;
          const auto stride = static_cast<std::int32_t>(kc * kPanel);
          float* c = C + i0 * ldc + j0;
          Index i = 0;
          for (; i + 2 <= mc; i += 2) {
            wide_tile(static_cast<std::int32_t>(kc), pairs + i * kc, panel, stride, alpha, b, first,
                      c + i * ldc, static_cast<std::int32_t>(ldc));
          }
          for (Index q = 0; i < mc && q < 2; ++q) {
            tile<1>(kc, A + (i0 + i) * lda + k0, lda, panel + q * kc * kPanel, alpha,
                    b != nullptr ? b + q * kPanel : nullptr, first,
                    C + (i0 + i) * ldc + j0 + q * kPanel, ldc, kPanel);
          }
        }
      }
      for (; j0 < N; j0 += kPanel) {  // the rest (all panels when tile6_fused) in 6 x 8 tiles
        const Index nr = std::min(kPanel, N - j0);
        const float* panel = block + (j0 / kPanel) * kc * kPanel;
        const float* b = bias != nullptr ? bias + j0 : nullptr;
        Index i = 0;
        for (; i + kRows <= mc; i += kRows) {
          tile<kRows>(kc, A + (i0 + i) * lda + k0, lda, panel, alpha, b, first,
                      C + (i0 + i) * ldc + j0, ldc, nr);
        }
        if (i < mc) {
          kTiles[mc - i](kc, A + (i0 + i) * lda + k0, lda, panel, alpha, b, first,
                         C + (i0 + i) * ldc + j0, ldc, nr);
        }
      }
    }
  }
}

namespace {

/// Eigen's packing buffers for its GEMM (blocks of A and B, sized by its cache-based blocking),
/// kept between products on each thread. Eigen's product expression allocates them on the heap
/// for every product once they exceed 128 KiB (EIGEN_STACK_ALLOCATION_LIMIT); glibc would give
/// them back to the system after each forward and the next would take page faults for them
/// (docs/benchmarks.md). They only grow, each to the largest block a product asked of
/// it; once they total more than kKeepFloats they are released at the end of the product.
/// The blocking is Eigen 3.4's own (computeProductBlockingSizes, as gemm_blocking_space for a
/// row-major result computes it), so the products and their rounding are the same.
class KeptPacking : public Eigen::internal::level3_blocking<float, float> {
 public:
  static constexpr Index kKeepFloats = Index(1) << 20;  ///< 4 MiB at most, per thread

  /// The blocking of C (M, N) = A (M, K) B (K, N), C row-major: Eigen runs it as Cᵀ = Bᵀ Aᵀ.
  KeptPacking(Index M, Index N, Index K) {
    m_mc = N;
    m_nc = M;
    m_kc = K;
    Eigen::internal::computeProductBlockingSizes<float, float, 1>(m_kc, m_mc, m_nc, Index(1));
    m_blockA = reserve_floats(buffers().a, m_mc * m_kc);
    m_blockB = reserve_floats(buffers().b, m_kc * m_nc);
  }
  KeptPacking(const KeptPacking&) = delete;
  KeptPacking& operator=(const KeptPacking&) = delete;
  ~KeptPacking() {
    Buffers& kept = buffers();
    if (kept.a.size() + kept.b.size() > kKeepFloats) kept = Buffers();
  }

 private:
  struct Buffers {
    Eigen::VectorXf a, b;
  };
  static Buffers& buffers() {
    thread_local Buffers kept;
    return kept;
  }
};

}  // namespace

float* reserve_floats(Eigen::VectorXf& buffer, Index count) {
  if (buffer.size() < count) {
    buffer.resize(0);  // frees the old block: a failed allocation below leaves the buffer empty
    buffer.resize(count);
  }
  return buffer.data();
}

void gemm_eigen(Index M, Index N, Index K, const float* A, Index lda, const float* B, Index ldb,
                bool transposed, float alpha, const float* bias, float* C, Index ldc) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  if (M <= 0 || N <= 0) return;
  const Eigen::Map<const RowMatrix, 0, Stride> a(A, M, K, Stride(lda));
  Eigen::Map<RowMatrix, 0, Stride> c(C, M, N, Stride(ldc));
  // Where Eigen's own product would run its blocked GEMM (not its coefficient-wise product of
  // tiny sizes, nor a matrix-vector product), run that GEMM with the kept packing buffers.
  if (K > 0 && M > 1 && N > 1 && M + N + K >= EIGEN_GEMM_TO_COEFFBASED_THRESHOLD) {
    c.setZero();  // the GEMM adds to C, as Eigen's product does after setZero
    KeptPacking packing(M, N, K);
    if (transposed) {  // B (K, N) is column-major in memory: Bᵀ (N, K) row-major
      Eigen::internal::general_matrix_matrix_product<Index, float, Eigen::RowMajor, false, float,
                                                     Eigen::ColMajor, false, Eigen::RowMajor,
                                                     1>::run(M, N, K, A, lda, B, ldb, C, 1, ldc,
                                                             1.0f, packing);
    } else {
      Eigen::internal::general_matrix_matrix_product<Index, float, Eigen::RowMajor, false, float,
                                                     Eigen::RowMajor, false, Eigen::RowMajor,
                                                     1>::run(M, N, K, A, lda, B, ldb, C, 1, ldc,
                                                             1.0f, packing);
    }
  } else if (transposed) {
    const Eigen::Map<const RowMatrix, 0, Stride> bt(B, N, K, Stride(ldb));
    c.noalias() = a * bt.transpose();
  } else {
    const Eigen::Map<const RowMatrix, 0, Stride> b(B, K, N, Stride(ldb));
    c.noalias() = a * b;
  }
  if (alpha != 1.0f) c *= alpha;
  if (bias != nullptr) c.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias, N);
}

Operand::Operand(Index K, Index N, const float* B, Index ldb, bool transposed)
    : K_(K), N_(N), ldb_(ldb), B_(B), transposed_(transposed) {
  if (uses_blocked_gemm()) {
    packed_ = PackedB(K, N, B, ldb, transposed);
    B_ = nullptr;  // the packed copy is all that is read: no pointer into the caller's memory
  }
}

void gemm(Index M, const float* A, Index lda, const Operand& B, float alpha, const float* bias,
          float* C, Index ldc, Index cols) noexcept(uses_blocked_gemm()) {
  if (uses_blocked_gemm()) {
    gemm_blocked(M, A, lda, B.packed_, alpha, bias, C, ldc, cols);
  } else {  // the first `cols` columns of B: rows of the memory when it holds Bᵀ, else columns
    const Index N = cols >= 0 ? std::min(cols, B.N_) : B.N_;
    gemm_eigen(M, N, B.K_, A, lda, B.B_, B.ldb_, B.transposed_, alpha, bias, C, ldc);
  }
}

// ---------------------------------------------------------------------------------------------
// exp and the other passes over the (n, m) rows

namespace {

// Lanes of the vectors of the passes below: four in WebAssembly (SIMD128); natively as many as
// the target has (-march=native: 16 with AVX-512, 8 with AVX2). At (512, 768, 12) natively these
// passes took 10 % of a forward with four lanes (perf of build/native/mha_bench on AVX-512).
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX2__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float vf __attribute__((vector_size(4 * kLanes)));
typedef std::int32_t vi __attribute__((vector_size(4 * kLanes)));

inline vf loadv(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
inline vf splatv(float x) { return x - vf{}; }  // x in every lane (x - +0 is x, also for -0)
/// a > b ? a : b in every lane (b where a is NaN). In WebAssembly this is f32x4.pmax, one
/// max instruction in V8; clang writes the select itself as a compare and a blend, or, where the
/// lanes come out the same, as f32x4.max, whose NaN rules cost V8 on x64 about eight
/// instructions. The results are the select's.
inline vf max_select(vf a, vf b) {
#if defined(__wasm_simd128__)
  static_assert(kLanes == 4, "SIMD128 vectors hold four floats");
  return __builtin_wasm_pmax_f32x4(b, a);  // pmax(b, a) = b < a ? a : b
#else
  return a > b ? a : b;
#endif
}

/// The lanes' sum as a pairwise tree ((v0 + v1) + (v2 + v3) for four lanes).
inline float sum_lanes(vf v) {
  // Written out for four lanes: clang -O2 (the WebAssembly build) keeps the loops below as loops
  // over a stack copy of v.
  if constexpr (kLanes == 4) return (v[0] + v[1]) + (v[2] + v[3]);
  for (int w = 1; w < kLanes; w *= 2) {
    for (int i = 0; i + w < kLanes; i += 2 * w) v[i] += v[i + w];
  }
  return v[0];
}
/// The lanes' largest, by the same tree.
inline float max_lanes(vf v) {
  if constexpr (kLanes == 4) return std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
  for (int w = 1; w < kLanes; w *= 2) {
    for (int i = 0; i + w < kLanes; i += 2 * w) v[i] = std::max(v[i], v[i + w]);
  }
  return v[0];
}

/// exp(x) for x <= 0 (and -inf), kLanes at a time: Cephes expf (range reduction by ln 2 in two
/// parts, degree-5 polynomial). Below -87.3 (where exp leaves the normal float range) the
/// result is 0, which also makes exp(-inf) exactly 0.
inline vf exp_nonpositive(vf x) {
  const vf lo = splatv(-87.33654f);
  const vi dead = x < lo;  // -1 where the result is 0
  x = max_select(x, lo);
  // n = round(x / ln 2) by the 1.5 * 2^23 trick (|x / ln 2| < 2^22): t = x / ln 2 + 1.5 * 2^23
  // has the exponent of 1.5 * 2^23, whose unit in the last place is 1, so n = t - 1.5 * 2^23 is
  // exact, and so is the integer n, the difference of the two floats' bits (no float to int
  // conversion: i32x4.trunc_sat_f32x4_s is a sequence of about eight instructions in V8).
  const vf magic = splatv(12582912.0f);
  const vf t = x * splatv(1.44269504088896341f) + magic;
  const vf n = t - magic;
  const vf r = (x - n * splatv(0.693359375f)) - n * splatv(-2.12194440e-4f);
  vf p = splatv(1.9875691500e-4f);
  p = p * r + splatv(1.3981999507e-3f);
  p = p * r + splatv(8.3334519073e-3f);
  p = p * r + splatv(4.1665795894e-2f);
  p = p * r + splatv(1.6666665459e-1f);
  p = p * r + splatv(5.0000001201e-1f);
  const vf y = p * (r * r) + r + splatv(1.0f);
  vi t_bits;
  std::memcpy(&t_bits, &t, sizeof t_bits);
  const vi bits = (t_bits - 0x4B400000 + 127) << 23;  // 2^n, n in [-126, 0]; 0x4B400000 = magic
  vf pow2;
  std::memcpy(&pow2, &bits, sizeof pow2);
  const vf e = y * pow2;
  vi e_bits;
  std::memcpy(&e_bits, &e, sizeof e_bits);
  e_bits &= ~dead;
  vf out;
  std::memcpy(&out, &e_bits, sizeof out);
  return out;
}

}  // namespace

float exp_shifted_sum(float* x, Index count, float shift) noexcept {
  const vf s = splatv(shift);
  vf acc = splatv(0.0f);
  Index j = 0;
  for (; j + kLanes <= count; j += kLanes) {
    const vf e = exp_nonpositive(loadv(x + j) - s);
    storev(x + j, e);
    acc += e;
  }
  float sum = sum_lanes(acc);
  if (j < count) {  // the last values, fewer than kLanes, through the same vector code
    float tail[kLanes];
    for (float& t : tail) t = -INFINITY;
    std::memcpy(tail, x + j, sizeof(float) * static_cast<std::size_t>(count - j));
    const vf e = exp_nonpositive(loadv(tail) - s);
    storev(tail, e);
    std::memcpy(x + j, tail, sizeof(float) * static_cast<std::size_t>(count - j));
    sum += sum_lanes(e);
  }
  return sum;
}

float max_and_finite(const float* x, Index count, bool& all_finite) noexcept {
  // Four independent maxima and NaN sums: one chain of compare-selects would be bound by its
  // latency (a select waits for the one before), four keep the pipes busy. The maximum of the
  // four is the maximum of all; the sums are NaN or 0 in any order.
  const vf zero = splatv(0.0f), low = splatv(-INFINITY);
  vf mx[4] = {low, low, low, low}, bad[4] = {zero, zero, zero, zero};
  Index j = 0;
  for (; j + 4 * kLanes <= count; j += 4 * kLanes) {
    for (int u = 0; u < 4; ++u) {
      const vf a = loadv(x + j + u * kLanes);
      bad[u] += a * zero;  // NaN once any entry is NaN or ±inf, else 0
      mx[u] = max_select(a, mx[u]);
    }
  }
  for (; j + kLanes <= count; j += kLanes) {
    const vf a = loadv(x + j);
    bad[0] += a * zero;
    mx[0] = max_select(a, mx[0]);
  }
  for (int u = 1; u < 4; ++u) {
    mx[0] = max_select(mx[u], mx[0]);
    bad[0] += bad[u];
  }
  float result = max_lanes(mx[0]);
  float bad_sum = sum_lanes(bad[0]);
  for (; j < count; ++j) {
    bad_sum += x[j] * 0.0f;
    if (x[j] > result) result = x[j];
  }
  all_finite = bad_sum == 0.0f;
  return result;
}

bool all_finite(const float* x, Index count) noexcept {
  vf bad = splatv(0.0f);
  const vf zero = splatv(0.0f);
  Index j = 0;
  // NaN once one entry is not finite, else 0
  for (; j + kLanes <= count; j += kLanes) bad += loadv(x + j) * zero;
  float bad_sum = sum_lanes(bad);
  for (; j < count; ++j) bad_sum += x[j] * 0.0f;
  return bad_sum == 0.0f;
}

Index first_non_finite(const float* x, Index count) noexcept {
  for (Index j = 0; j < count; ++j) {
    if (!std::isfinite(x[j])) return j;
  }
  return count;
}

void scale(float* x, Index count, float s) noexcept { scale_into(x, x, count, s); }

void scale_into(float* dst, const float* x, Index count, float s) noexcept {
  const vf vs = splatv(s);
  Index j = 0;
  for (; j + kLanes <= count; j += kLanes) storev(dst + j, loadv(x + j) * vs);
  for (; j < count; ++j) dst[j] = x[j] * s;
}

}  // namespace mha::kernels
