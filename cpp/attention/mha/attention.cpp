// Multi-head attention, fast path (products in mha/kernels.hpp). Shapes and formula: see
// attention.hpp.
#include "mha/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "mha/detail/input_checks.hpp"
#include "mha/detail/format.hpp"
#include "mha/kernels.hpp"

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#define MHA_HUGE_PAGES 1
#endif

namespace mha {

using detail::shape_str;

void check_weight_entries(Index num_heads, Index n, Index m) {
  // 64-bit product: Eigen::Index is 32-bit under wasm32, and h * n * m may overflow it.
  if (std::int64_t{num_heads} * n * m > std::int64_t{limits::max_weight_entries}) {
    throw limit_error("num_heads * n * m = " + std::to_string(num_heads) + " * " +
                      std::to_string(n) + " * " + std::to_string(m) +
                      " attention weights exceed the limit of " +
                      std::to_string(limits::max_weight_entries));
  }
}

// ---------------------------------------------------------------------------------------------
// Large arrays

namespace detail {

namespace {
#if defined(MHA_HUGE_PAGES)
constexpr std::size_t kHugePage = std::size_t{2} << 20;  // x86-64 and arm64 (4 KiB base pages)
std::size_t in_huge_pages(std::size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}
#endif
}  // namespace

void* allocate_large(std::size_t bytes) {
#if defined(MHA_HUGE_PAGES)
  const std::size_t rounded = in_huge_pages(bytes);
  void* p = ::operator new(rounded, std::align_val_t{kHugePage});
  // Advice only: where transparent huge pages are off (or "never") this changes nothing.
  ::madvise(p, rounded, MADV_HUGEPAGE);
  return p;
#else
  return ::operator new(bytes);
#endif
}

// The unsized forms of operator delete: the sized ones are declared only under
// __cpp_sized_deallocation, which clang before version 17 leaves off by default.
void deallocate_large(void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(MHA_HUGE_PAGES)
  ::operator delete(p, std::align_val_t{kHugePage});
#else
  ::operator delete(p);
#endif
}

}  // namespace detail

namespace detail {

/// A layer's projection weights prepared once for kernels::gemm (packed panels), so that a
/// forward call does not repack them. Only built when the build uses the blocked kernels: the
/// Eigen back end reads the weights in place.
struct PreparedWeights {
  kernels::Operand in_proj;  ///< in_proj_weightᵀ (d, 3d), fused form only
  kernels::Operand q, k, v;  ///< W_qᵀ (d, d), W_kᵀ (kdim, d), W_vᵀ (vdim, d)
  kernels::Operand out;      ///< out_proj_weightᵀ (d, d)
};

}  // namespace detail

namespace {

using StridedMap = Eigen::Map<const RowMatrixXf, 0, Eigen::OuterStride<>>;

/// The operand Wᵀ (in, out) for x Wᵀ, with W (out, in) row-major.
kernels::Operand transposed_weight(const Eigen::Ref<const RowMatrixXf>& W) {
  return kernels::Operand(W.cols(), W.rows(), W.data(), W.outerStride(), true);
}

/// y (rows, out) = x (rows, in) Wᵀ + b into y (row stride ldy), with Wᵀ prepared or, when
/// `prepared` is null, prepared here from W; only the first `out_features` outputs (rows of W)
/// when that is not -1.
void linear_into(const MatrixRef& x, const Eigen::Ref<const RowMatrixXf>& W,
                 const kernels::Operand* prepared, const float* b, float* y, Index ldy,
                 Index out_features = -1) {
  const kernels::Operand local = prepared != nullptr ? kernels::Operand() : transposed_weight(W);
  kernels::gemm(x.rows(), x.data(), x.outerStride(), prepared != nullptr ? *prepared : local, 1.0f,
                b, y, ldy, out_features);
}

/// The head-independent part of the additive mask (n, m), or an empty matrix when there is none:
/// key_padding_mask, is_causal and a 2-D attn_mask.
RowMatrixXf shared_mask(const AttentionMasks& masks, Index n, Index m) {
  const bool has_2d =
      masks.attn_mask_kind != AttentionMasks::Kind::none && masks.attn_mask.heads() == 1;
  if (!has_2d && masks.key_padding_mask.empty() && !masks.is_causal) return {};
  RowMatrixXf M(n, m);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < m; ++j) M(i, j) = masks.term(0, i, j);
  }
  return M;
}

/// Rows of one head's (n, m) scores computed, softmaxed and multiplied by V_h per block: a block
/// of scores (96 x m floats; 768 KiB at m = 2048) stays in cache between the three steps.
constexpr Index kRowsPerBlock = 96;

/// Scratch memory of one forward pass (the projections, the head outputs, a block of scores).
/// Natively it is kept between calls on each thread: allocated and freed on every call, it would
/// go back to the system each time (glibc trims its heap's top once more than 128 KiB is free
/// there) and come back as page faults, which would cost more than a small forward's arithmetic
/// (docs/benchmarks.md). The buffers only grow, each to the largest size a
/// call asked of it; once they total more than kKeepFloats they are released at the end of the
/// call (large calls: glibc then raises its own trim threshold, and the products outweigh the
/// faults). In WebAssembly nothing is kept (the linear memory never shrinks,
/// so there is nothing to save, and memoryStats() reports what stays allocated). A nested forward
/// on the same thread would get buffers of its own.
class Workspace {
 public:
#if defined(__EMSCRIPTEN__)
  static constexpr Index kKeepFloats = 0;
#else
  static constexpr Index kKeepFloats = Index(1) << 20;  ///< 4 MiB at most, per thread
#endif

  /// A buffer of at least `count` floats, unwritten; valid until the lease ends.
  float* projections(Index count) { return kernels::reserve_floats(projections_, count); }
  float* head_outputs(Index count) { return kernels::reserve_floats(head_outputs_, count); }
  float* block(Index count) { return kernels::reserve_floats(block_, count); }

 private:
  friend class WorkspaceLease;
  static Workspace& kept() {
    thread_local Workspace workspace;
    return workspace;
  }
  VectorXf projections_, head_outputs_, block_;
  bool busy_ = false;
};

/// The workspace of one forward pass: this thread's kept one, or (in WebAssembly, or while the
/// kept one is in use) a fresh one.
class WorkspaceLease {
 public:
  WorkspaceLease() {
    if (Workspace::kKeepFloats > 0 && !Workspace::kept().busy_) {
      workspace_ = &Workspace::kept();
      workspace_->busy_ = true;
    }
  }
  WorkspaceLease(const WorkspaceLease&) = delete;
  WorkspaceLease& operator=(const WorkspaceLease&) = delete;
  ~WorkspaceLease() {
    if (workspace_ == &fresh_) return;
    workspace_->busy_ = false;
    if (workspace_->projections_.size() + workspace_->head_outputs_.size() +
            workspace_->block_.size() > Workspace::kKeepFloats) {
      *workspace_ = Workspace();
    }
  }
  Workspace& get() { return *workspace_; }

 private:
  Workspace fresh_;
  Workspace* workspace_ = &fresh_;
};

/// The per-head part of the forward pass: for heads first_head .. first_head + heads - 1, whose
/// projections are q's and k's (and v's) columns [i·d_head, (i+1)·d_head): the scores, the masks,
/// the softmax and (when v is given) A·V into head_outputs (n, heads·d_head, row-major).
struct HeadsInput {
  const float* q;
  Index ldq;
  const float* k;
  Index ldk;
  const float* v;  ///< nullptr: the weights only
  Index ldv;
  Index n, m, heads, d_head;
  Index first_head;  ///< head number of column block 0 (masks and ablation are indexed by it)
};

/// Fills result.attn_weights, fully_masked_rows and (keep_intermediates) scores for `p.heads`
/// heads; the caller has validated everything and checked q, k, v for overflow.
void attend_heads(const HeadsInput& p, const AttentionMasks& masks, const ForwardOptions& options,
                  AttentionResult& result, float* head_outputs, Workspace& workspace) {
  const Index n = p.n, m = p.m, h = p.heads, d_head = p.d_head, d = h * d_head;
  const float *q = p.q, *k = p.k, *v = p.v;
  const Index ldq = p.ldq, ldk = p.ldk, ldv = p.ldv;
  const bool with_v = v != nullptr;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_head)));
  // Every entry of the stacks is written below (block by block), so they start unwritten.
  result.attn_weights = HeadStack::uninitialized(h, n, m);
  result.fully_masked_rows.assign(static_cast<std::size_t>(h * n), 0);
  if (options.keep_intermediates) result.scores = HeadStack::uninitialized(h, n, m);
  // One block of rows of scores (kRowsPerBlock, m), reused by every block of every head: the
  // product writes it and the softmax reads it while it is in cache; the normalised weights
  // reach the (h, n, m) stack in sequential row writes, where A·V reads them back (in cache).
  // Writing the products straight into the stack (200 MB at 12 x 2048 x 2048) cost a cache miss
  // per store.
  float* const block = workspace.block(std::min(kRowsPerBlock, n) * m);

  // Masks: a per-head (h, n, m) attn_mask is added head by head (with the shared terms);
  // everything else is one (n, m) matrix added to every head.
  const bool per_head_mask =
      masks.attn_mask_kind != AttentionMasks::Kind::none && masks.attn_mask.heads() > 1;
  const RowMatrixXf M_shared = per_head_mask ? RowMatrixXf() : shared_mask(masks, n, m);
  constexpr float neg_inf = -std::numeric_limits<float>::infinity();

  for (Index i = 0; i < h; ++i) {
    // K_h as the operand K_hᵀ (d_head, m) and V_h (m, d_head): prepared once per head.
    const kernels::Operand Kt(d_head, m, k + i * d_head, ldk, true);
    const bool ablated = options.ablated(p.first_head + i);
    const bool av = with_v && !ablated;  // A·V for this head
    const kernels::Operand Vh =
        av ? kernels::Operand(m, d_head, v + i * d_head, ldv, false) : kernels::Operand();
    float* A_head = result.attn_weights.data() + i * n * m;
    for (Index r0 = 0; r0 < n; r0 += kRowsPerBlock) {
      const Index rows = std::min(kRowsPerBlock, n - r0);
      float* A = block;
      // Scores (rows, m) = Q_h K_hᵀ / sqrt(d_head): the scale is the product's alpha.
      kernels::gemm(rows, q + r0 * ldq + i * d_head, ldq, Kt, scale, nullptr, A, m);
      for (Index r = r0; r < r0 + rows; ++r) {
        float* row = A + (r - r0) * m;
        bool finite = true;
        float row_max = kernels::max_and_finite(row, m, finite);
        if (!finite) {
          const Index c = kernels::first_non_finite(row, m);
          throw value_error("the scores Q K^T / sqrt(d_head) overflows float32 at head " +
                            std::to_string(p.first_head + i) + ", " + shape_str(r, c) +
                            ": inputs or weights are too large in magnitude");
        }
        if (per_head_mask || M_shared.size() > 0) {
          // A finite mask term whose sum with the score overflows float32 (a huge float mask
          // value) is an error, never a silent -inf (which would read as masked) or +inf.
          bool overflow = false;
          if (per_head_mask) {
            for (Index c = 0; c < m; ++c) {
              const float t = masks.term(p.first_head + i, r, c);
              row[c] += t;
              overflow |= std::isinf(row[c]) && t != neg_inf;
            }
          } else {
            const float* mask_row = M_shared.data() + r * m;
            for (Index c = 0; c < m; ++c) {
              row[c] += mask_row[c];
              overflow |= std::isinf(row[c]) && mask_row[c] != neg_inf;
            }
          }
          if (overflow) {
            throw detail::mask_overflow_error(p.first_head + i, r);
          }
          row_max = kernels::max_and_finite(row, m, finite);
        }
        if (options.keep_intermediates) {
          std::copy(row, row + m, result.scores.data() + (i * n + r) * m);
        }
        float* weights_row = A_head + r * m;
        if (row_max == neg_inf) {  // every key masked: weights 0, head output 0 (never NaN)
          std::fill(weights_row, weights_row + m, 0.0f);
          result.fully_masked_rows[static_cast<std::size_t>(i * n + r)] = 1;
          continue;
        }
        // Masked keys (-inf) get exactly 0; the row's maximum gets exp(0) = 1, so sum >= 1.
        // The normalised row goes straight into the stack: one pass for the scaling and the copy.
        const float sum = kernels::exp_shifted_sum(row, m, row_max);
        kernels::scale_into(weights_row, row, m, 1.0f / sum);
      }
      if (av) {  // A·V from the block's rows of the stack, still in cache
        kernels::gemm(rows, A_head + r0 * m, m, Vh, 1.0f, nullptr,
                      head_outputs + r0 * d + i * d_head, d);
      }
    }
    if (with_v && ablated) {
      for (Index r = 0; r < n; ++r) std::fill_n(head_outputs + r * d + i * d_head, d_head, 0.0f);
    }
  }
}

/// The forward pass proper; the caller has validated every input.
AttentionResult forward_validated(const AttentionConfig& config, const AttentionWeights& weights,
                                  const detail::PreparedWeights* prepared, const MatrixRef& query,
                                  const MatrixRef& key, const MatrixRef& value,
                                  const AttentionMasks& masks, const ForwardOptions& options) {
  const Index n = query.rows(), m = key.rows(), d = config.d_model, h = config.num_heads;
  const Index d_head = config.d_head();
  const float* in_bias = weights.in_proj_bias.size() > 0 ? weights.in_proj_bias.data() : nullptr;
  const auto bias = [&](Index part) { return in_bias != nullptr ? in_bias + part * d : nullptr; };

  // Projections. Self-attention with fused weights: one (n, d) x (d, 3d) product into qkv, whose
  // columns are Q | K | V; otherwise three products. q, k, v point at head 0's columns.
  const bool self_attention = query.data() == key.data() && key.data() == value.data() &&
                              query.outerStride() == key.outerStride() &&
                              key.outerStride() == value.outerStride();
  // With options.weights_only there is no V: the fused product stops after Q | K.
  const bool with_v = !options.weights_only;
  WorkspaceLease lease;
  Workspace& workspace = lease.get();
  float *q = nullptr, *k = nullptr, *v = nullptr;
  Index ldq = d, ldk = d, ldv = d;
  if (self_attention && weights.is_fused()) {
    const Index parts = with_v ? 3 : 2;
    q = workspace.projections(n * parts * d);  // (n, parts·d): Q | K | V
    linear_into(query, weights.in_proj_weight, prepared ? &prepared->in_proj : nullptr, in_bias,
                q, parts * d, parts * d);
    k = q + d;
    v = with_v ? q + 2 * d : nullptr;
    ldq = ldk = ldv = parts * d;
  } else {
    const bool separate = prepared != nullptr && !weights.is_fused();
    q = workspace.projections((n + (with_v ? 2 : 1) * m) * d);  // Q (n, d), K (m, d), V (m, d)
    k = q + n * d;
    v = with_v ? k + m * d : nullptr;
    linear_into(query, weights.q_weight(), separate ? &prepared->q : nullptr, bias(0), q, d);
    linear_into(key, weights.k_weight(), separate ? &prepared->k : nullptr, bias(1), k, d);
    if (with_v) {
      linear_into(value, weights.v_weight(), separate ? &prepared->v : nullptr, bias(2), v, d);
    }
  }
  // Finite inputs can still overflow float32 in a product (|x| near 1e19 and up): say so rather
  // than let inf - inf turn into NaN weights.
  if (!detail::rows_finite(q, n, d, ldq)) {
    detail::expect_no_overflow("the query projection Q", StridedMap(q, n, d, ldq));
  }
  if (!detail::rows_finite(k, m, d, ldk)) {
    detail::expect_no_overflow("the key projection K", StridedMap(k, m, d, ldk));
  }
  if (with_v && !detail::rows_finite(v, m, d, ldv)) {
    detail::expect_no_overflow("the value projection V", StridedMap(v, m, d, ldv));
  }

  AttentionResult result;
  // The head outputs (n, d) are an intermediate the caller may keep: then they are its own.
  if (with_v && options.keep_intermediates) result.head_outputs.resize(n, d);
  float* const head_outputs = !with_v                      ? nullptr
                              : options.keep_intermediates ? result.head_outputs.data()
                                                           : workspace.head_outputs(n * d);
  attend_heads({q, ldq, k, ldk, v, ldv, n, m, h, d_head, 0}, masks, options, result, head_outputs,
               workspace);
  if (!with_v) {  // weights only: no output, no v, no head outputs
    if (options.keep_intermediates) {
      result.q = StridedMap(q, n, d, ldq);
      result.k = StridedMap(k, m, d, ldk);
    }
    return result;
  }

  const float* out_bias =
      weights.out_proj_bias.size() > 0 ? weights.out_proj_bias.data() : nullptr;
  result.output.resize(n, d);
  linear_into(Eigen::Map<const RowMatrixXf>(head_outputs, n, d), weights.out_proj_weight,
              prepared ? &prepared->out : nullptr, out_bias, result.output.data(), d);
  if (!detail::rows_finite(result.output.data(), n, d, d)) {
    detail::expect_no_overflow("the output projection", result.output);
  }
  if (options.keep_intermediates) {
    result.q = StridedMap(q, n, d, ldq);
    result.k = StridedMap(k, m, d, ldk);
    result.v = StridedMap(v, m, d, ldv);
  }
  return result;
}

}  // namespace

AttentionResult attention_weights_from_projections(const AttentionConfig& config,
                                                   Index first_head, const MatrixRef& q,
                                                   const MatrixRef& k,
                                                   const AttentionMasks& masks,
                                                   bool keep_scores) {
  config.validate();
  const Index d_head = config.d_head(), n = q.rows(), m = k.rows();
  const Index heads = q.cols() / d_head;
  if (n == 0 || m == 0 || q.cols() == 0 || q.cols() % d_head != 0 || k.cols() != q.cols()) {
    throw shape_error("q is " + shape_str(n, q.cols()) + " and k " + shape_str(m, k.cols()) +
                      ": expected (n, c * d_head) and (m, c * d_head), c >= 1 heads of d_head = " +
                      std::to_string(d_head));
  }
  if (first_head < 0 || first_head + heads > config.num_heads) {
    throw shape_error("heads " + std::to_string(first_head) + " to " +
                      std::to_string(first_head + heads - 1) + " are not among num_heads = " +
                      std::to_string(config.num_heads));
  }
  masks.validate(config.num_heads, n, m);
  if (!detail::rows_finite(q)) detail::expect_no_overflow("the query projection Q", q);
  if (!detail::rows_finite(k)) detail::expect_no_overflow("the key projection K", k);
  ForwardOptions options(keep_scores);
  options.weights_only = true;
  AttentionResult result;
  WorkspaceLease lease;
  attend_heads({q.data(), q.outerStride(), k.data(), k.outerStride(), nullptr, 0, n, m, heads,
                d_head, first_head},
               masks, options, result, nullptr, lease.get());
  return result;
}

AttentionResult multi_head_attention_forward(const AttentionConfig& config,
                                             const AttentionWeights& weights,
                                             const MatrixRef& query, const MatrixRef& key,
                                             const MatrixRef& value, const AttentionMasks& masks,
                                             const ForwardOptions& options) {
  validate_forward_inputs(config, weights, query, key, value, masks, options);
  return forward_validated(config, weights, nullptr, query, key, value, masks, options);
}

// ---------------------------------------------------------------------------------------------
// Layer

MultiheadAttention::MultiheadAttention(AttentionConfig config, AttentionWeights weights)
    : config_(config), weights_(std::move(weights)) {
  config_.validate();
  weights_.validate(config_);
  if (kernels::uses_blocked_gemm()) {
    auto prepared = std::make_shared<detail::PreparedWeights>();
    if (weights_.is_fused()) {
      prepared->in_proj = transposed_weight(weights_.in_proj_weight);
    } else {
      prepared->q = transposed_weight(weights_.q_proj_weight);
      prepared->k = transposed_weight(weights_.k_proj_weight);
      prepared->v = transposed_weight(weights_.v_proj_weight);
    }
    prepared->out = transposed_weight(weights_.out_proj_weight);
    prepared_ = std::move(prepared);
  }
}

AttentionResult MultiheadAttention::forward(const MatrixRef& query, const MatrixRef& key,
                                            const MatrixRef& value, const AttentionMasks& masks,
                                            const ForwardOptions& options) const {
  // config_ and weights_ were validated by the constructor and cannot change since.
  detail::check_input_shapes(config_, query, key, value);
  detail::check_input_values(config_, query, key, value, masks, options);
  return forward_validated(config_, weights_, prepared_.get(), query, key, value, masks, options);
}

AttentionResult MultiheadAttention::forward(const MatrixRef& x, const AttentionMasks& masks,
                                            const ForwardOptions& options) const {
  return forward(x, x, x, masks, options);
}

}  // namespace mha
