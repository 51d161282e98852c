// Multi-head attention, fast path (products in mha/kernels.hpp). Shapes and formula: see
// attention.hpp.
#include "mha/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>

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

// ---------------------------------------------------------------------------------------------
// HeadStack

HeadStack::HeadStack(Index heads, Index rows, Index cols, float fill) {
  if (heads < 0 || rows < 0 || cols < 0) {
    throw shape_error("HeadStack shape " + shape_str(heads, rows, cols) + " has a negative size");
  }
  heads_ = heads;
  rows_ = rows;
  cols_ = cols;
  data_.assign(static_cast<std::size_t>(heads * rows * cols), fill);
}

HeadStack HeadStack::uninitialized(Index heads, Index rows, Index cols) {
  HeadStack s;
  if (heads < 0 || rows < 0 || cols < 0) {
    throw shape_error("HeadStack shape " + shape_str(heads, rows, cols) + " has a negative size");
  }
  s.heads_ = heads;
  s.rows_ = rows;
  s.cols_ = cols;
  s.data_.resize(static_cast<std::size_t>(heads * rows * cols));  // default-initialised: unwritten
  return s;
}

Eigen::Map<RowMatrixXf> HeadStack::head(Index i) {
  return Eigen::Map<RowMatrixXf>(data_.data() + offset(i, 0, 0), rows_, cols_);
}

Eigen::Map<const RowMatrixXf> HeadStack::head(Index i) const {
  return Eigen::Map<const RowMatrixXf>(data_.data() + offset(i, 0, 0), rows_, cols_);
}

// ---------------------------------------------------------------------------------------------
// Configuration

void AttentionConfig::validate() const {
  if (num_heads <= 0) {
    throw config_error("num_heads=" + std::to_string(num_heads) + " must be a positive integer");
  }
  if (d_model <= 0) {
    throw config_error("d_model=" + std::to_string(d_model) + " must be a positive integer");
  }
  for (const auto& [name, value] : {std::pair{"kdim", kdim}, std::pair{"vdim", vdim}}) {
    if (value < 0) {
      throw config_error(std::string(name) + "=" + std::to_string(value) +
                         " must be positive (or 0 for 'same as d_model')");
    }
  }
  if (num_heads > limits::max_num_heads) {
    throw limit_error("num_heads=" + std::to_string(num_heads) + " exceeds the limit of " +
                      std::to_string(limits::max_num_heads));
  }
  for (const auto& [name, value] : {std::pair{"d_model", d_model}, std::pair{"kdim", key_dim()},
                                    std::pair{"vdim", value_dim()}}) {
    if (value > limits::max_d_model) {
      throw limit_error(std::string(name) + "=" + std::to_string(value) + " exceeds the limit of " +
                        std::to_string(limits::max_d_model));
    }
  }
  if (d_model % num_heads != 0) {
    // std::string, not an ostringstream: iostreams would add ~80 KB of locale code to the wasm.
    std::string msg = "d_model=" + std::to_string(d_model) + " is not divisible by num_heads=" +
                      std::to_string(num_heads) +
                      " (each head needs d_model / num_heads columns; valid num_heads for d_model=" +
                      std::to_string(d_model) + ":";
    for (Index h = 1; h <= d_model && h <= limits::max_num_heads; ++h) {
      if (d_model % h == 0) msg += " " + std::to_string(h);
    }
    msg += ')';
    throw config_error(msg);
  }
}

Index parameter_count(const AttentionConfig& config, bool bias) {
  config.validate();
  const Index d = config.d_model;
  const Index projections = d * d + d * config.key_dim() + d * config.value_dim() + d * d;
  return projections + (bias ? 3 * d + d : 0);
}

// ---------------------------------------------------------------------------------------------
// Weights

AttentionWeights AttentionWeights::fused(RowMatrixXf in_proj_weight, VectorXf in_proj_bias,
                                         RowMatrixXf out_proj_weight, VectorXf out_proj_bias) {
  AttentionWeights w;
  w.in_proj_weight = std::move(in_proj_weight);
  w.in_proj_bias = std::move(in_proj_bias);
  w.out_proj_weight = std::move(out_proj_weight);
  w.out_proj_bias = std::move(out_proj_bias);
  return w;
}

AttentionWeights AttentionWeights::separate(RowMatrixXf q_proj_weight, RowMatrixXf k_proj_weight,
                                            RowMatrixXf v_proj_weight, VectorXf in_proj_bias,
                                            RowMatrixXf out_proj_weight, VectorXf out_proj_bias) {
  AttentionWeights w;
  w.q_proj_weight = std::move(q_proj_weight);
  w.k_proj_weight = std::move(k_proj_weight);
  w.v_proj_weight = std::move(v_proj_weight);
  w.in_proj_bias = std::move(in_proj_bias);
  w.out_proj_weight = std::move(out_proj_weight);
  w.out_proj_bias = std::move(out_proj_bias);
  return w;
}

AttentionWeights AttentionWeights::from_numpy(const MatrixRef& Wq, const MatrixRef& Wk,
                                              const MatrixRef& Wv, const MatrixRef& Wo) {
  const Index d = Wq.rows();
  for (const auto& [name, W] : {std::pair<const char*, const MatrixRef*>{"Wq", &Wq},
                                {"Wk", &Wk},
                                {"Wv", &Wv},
                                {"Wo", &Wo}}) {
    if (W->rows() != d || W->cols() != d) {
      throw shape_error(std::string(name) + " is " + shape_str(W->rows(), W->cols()) +
                        ", expected (d_model, d_model) = " + shape_str(d, d) +
                        " like Wq (numpy convention X @ W)");
    }
  }
  // X @ Wq == X Wq  ==  X (Wq^T)^T: PyTorch's W_q is Wq^T.
  RowMatrixXf in_proj(3 * d, d);
  in_proj.topRows(d) = Wq.transpose();
  in_proj.middleRows(d, d) = Wk.transpose();
  in_proj.bottomRows(d) = Wv.transpose();
  return fused(std::move(in_proj), VectorXf(), Wo.transpose(), VectorXf());
}

Eigen::Ref<const RowMatrixXf> AttentionWeights::q_weight() const {
  if (!is_fused()) return q_proj_weight;
  const Index d = in_proj_weight.cols();
  return in_proj_weight.topRows(d);
}

Eigen::Ref<const RowMatrixXf> AttentionWeights::k_weight() const {
  if (!is_fused()) return k_proj_weight;
  const Index d = in_proj_weight.cols();
  return in_proj_weight.middleRows(d, d);
}

Eigen::Ref<const RowMatrixXf> AttentionWeights::v_weight() const {
  if (!is_fused()) return v_proj_weight;
  const Index d = in_proj_weight.cols();
  return in_proj_weight.bottomRows(d);
}

namespace {

void expect_shape(const char* name, Index rows, Index cols, Index want_rows, Index want_cols,
                  const std::string& meaning) {
  if (rows != want_rows || cols != want_cols) {
    throw shape_error(std::string(name) + " is " + shape_str(rows, cols) + ", expected " + meaning +
                      " = " + shape_str(want_rows, want_cols));
  }
}

void expect_length(const char* name, Index size, Index want, const std::string& meaning) {
  if (size != 0 && size != want) {
    throw shape_error(std::string(name) + " has " + std::to_string(size) + " values, expected " +
                      meaning + " = " + std::to_string(want) + " (or none)");
  }
}

}  // namespace

namespace {
/// Whether every entry of a (rows, cols) row-major block with row stride `stride` is finite:
/// kernels::all_finite row by row (vectorised; Eigen 3.4's allFinite is scalar in wasm, 2 ms for
/// d_model 512's 4 d x d weights). The detail:: checks then name the first bad entry.
bool rows_finite(const float* p, Index rows, Index cols, Index stride) {
  for (Index r = 0; r < rows; ++r) {
    if (!kernels::all_finite(p + r * stride, cols)) return false;
  }
  return true;
}
bool rows_finite(const MatrixRef& x) {
  return rows_finite(x.data(), x.rows(), x.cols(), x.outerStride());
}
}  // namespace

void AttentionWeights::validate(const AttentionConfig& config) const {
  const Index d = config.d_model;
  const bool separate_given =
      q_proj_weight.size() > 0 || k_proj_weight.size() > 0 || v_proj_weight.size() > 0;
  if (is_fused() && separate_given) {
    throw shape_error("both in_proj_weight and q/k/v_proj_weight were given: give one form");
  }
  if (is_fused()) {
    if (!config.same_embed_dim()) {
      throw shape_error("kdim=" + std::to_string(config.key_dim()) +
                        " and vdim=" + std::to_string(config.value_dim()) +
                        " differ from d_model=" + std::to_string(d) +
                        ": give separate q_proj_weight, k_proj_weight, v_proj_weight instead of "
                        "in_proj_weight");
    }
    expect_shape("in_proj_weight", in_proj_weight.rows(), in_proj_weight.cols(), 3 * d, d,
                 "(3*d_model, d_model)");
  } else if (separate_given) {
    expect_shape("q_proj_weight", q_proj_weight.rows(), q_proj_weight.cols(), d, d,
                 "(d_model, d_model)");
    expect_shape("k_proj_weight", k_proj_weight.rows(), k_proj_weight.cols(), d, config.key_dim(),
                 "(d_model, kdim)");
    expect_shape("v_proj_weight", v_proj_weight.rows(), v_proj_weight.cols(), d, config.value_dim(),
                 "(d_model, vdim)");
  } else {
    throw shape_error(
        "no input projection: give in_proj_weight (3*d_model, d_model) or "
        "q_proj_weight, k_proj_weight and v_proj_weight");
  }
  expect_length("in_proj_bias", in_proj_bias.size(), 3 * d, "3*d_model");
  expect_shape("out_proj_weight", out_proj_weight.rows(), out_proj_weight.cols(), d, d,
               "(d_model, d_model)");
  expect_length("out_proj_bias", out_proj_bias.size(), d, "d_model");

  using Named = std::pair<const char*, const RowMatrixXf*>;
  for (const auto& [name, W] : {Named{"in_proj_weight", &in_proj_weight},
                                Named{"q_proj_weight", &q_proj_weight},
                                Named{"k_proj_weight", &k_proj_weight},
                                Named{"v_proj_weight", &v_proj_weight},
                                Named{"out_proj_weight", &out_proj_weight}}) {
    if (!rows_finite(*W)) detail::expect_finite(name, *W);
  }
  detail::expect_finite("in_proj_bias", in_proj_bias.transpose());
  detail::expect_finite("out_proj_bias", out_proj_bias.transpose());
}

// ---------------------------------------------------------------------------------------------
// Masks

float AttentionMasks::term(Index head, Index i, Index j) const {
  constexpr float neg_inf = -std::numeric_limits<float>::infinity();
  float t = 0.0f;
  if (attn_mask_kind != Kind::none) {
    const float a = attn_mask(attn_mask.heads() == 1 ? 0 : head, i, j);
    if (attn_mask_kind == Kind::boolean) {
      if (a != 0.0f) return neg_inf;
    } else {
      t += a;
    }
  }
  if (!key_padding_mask.empty() && key_padding_mask[static_cast<std::size_t>(j)] != 0)
    return neg_inf;
  if (is_causal && j > i) return neg_inf;
  return t;
}

void AttentionMasks::validate(Index num_heads, Index n, Index m) const {
  if (attn_mask_kind == Kind::none) {
    if (!attn_mask.empty()) {
      throw shape_error("attn_mask holds values but its kind is none (boolean or additive?)");
    }
  } else {
    const Index heads = attn_mask.heads();
    if ((heads != 1 && heads != num_heads) || attn_mask.rows() != n || attn_mask.cols() != m) {
      const std::string got = heads == 1 ? shape_str(attn_mask.rows(), attn_mask.cols())
                                         : shape_str(heads, attn_mask.rows(), attn_mask.cols());
      throw shape_error("attn_mask is " + got + ", expected (n, m) = " + shape_str(n, m) +
                        " or (num_heads, n, m) = " + shape_str(num_heads, n, m));
    }
    if (attn_mask_kind == Kind::additive) {
      for (Index hh = 0; hh < heads; ++hh) {
        for (Index i = 0; i < n; ++i) {
          for (Index j = 0; j < m; ++j) {
            const float a = attn_mask(hh, i, j);
            if (std::isnan(a) || a == std::numeric_limits<float>::infinity()) {
              throw value_error(std::string("attn_mask holds ") + (std::isnan(a) ? "NaN" : "+inf") +
                                " at " + (heads == 1 ? shape_str(i, j) : shape_str(hh, i, j)) +
                                "; a float mask may hold finite values, or -inf to mask");
            }
          }
        }
      }
    }
  }
  if (!key_padding_mask.empty() && static_cast<Index>(key_padding_mask.size()) != m) {
    throw shape_error("key_padding_mask has " + std::to_string(key_padding_mask.size()) +
                      " values, expected one per key token, m = " + std::to_string(m));
  }
}

// ---------------------------------------------------------------------------------------------
// Forward

namespace {

/// Shapes and limits of one call's inputs (the first half of validate_forward_inputs).
void check_input_shapes(const AttentionConfig& config, const MatrixRef& query, const MatrixRef& key,
                        const MatrixRef& value) {
  const Index n = query.rows();
  const Index m = key.rows();
  if (n == 0 || query.cols() == 0) {
    throw shape_error("query is empty: " + shape_str(n, query.cols()) +
                      ", expected (n, d_model=" + std::to_string(config.d_model) + ") with n >= 1");
  }
  if (m == 0 || value.rows() == 0) {
    throw shape_error("key/value are empty: key " + shape_str(m, key.cols()) + ", value " +
                      shape_str(value.rows(), value.cols()) + "; at least one key token is needed");
  }
  for (const auto& [name, tokens] : {std::pair{"query", n}, std::pair{"key", m}}) {
    if (tokens > limits::max_tokens) {
      throw limit_error(std::string(name) + " has " + std::to_string(tokens) +
                        " tokens, above the limit of " + std::to_string(limits::max_tokens));
    }
  }
  check_weight_entries(config.num_heads, n, m);
  if (query.cols() != config.d_model) {
    throw shape_error("query is " + shape_str(n, query.cols()) +
                      ", expected (n, d_model) = " + shape_str(n, config.d_model));
  }
  if (key.cols() != config.key_dim()) {
    throw shape_error("key is " + shape_str(m, key.cols()) +
                      ", expected (m, kdim) = " + shape_str(m, config.key_dim()));
  }
  if (value.rows() != m) {
    throw shape_error("key has m=" + std::to_string(m) + " tokens but value has " +
                      std::to_string(value.rows()) + "; they must match");
  }
  if (value.cols() != config.value_dim()) {
    throw shape_error("value is " + shape_str(value.rows(), value.cols()) +
                      ", expected (m, vdim) = " + shape_str(m, config.value_dim()));
  }
}

/// Finiteness of the inputs, masks and options (the second half of validate_forward_inputs).
void check_input_values(const AttentionConfig& config, const MatrixRef& query, const MatrixRef& key,
                        const MatrixRef& value, const AttentionMasks& masks,
                        const ForwardOptions& options) {
  // The vectorised scan first; the detail:: check then names the first bad entry. Self-attention
  // passes one matrix three times: it is scanned once.
  const auto same = [](const MatrixRef& a, const MatrixRef& b) {
    return a.data() == b.data() && a.rows() == b.rows() && a.cols() == b.cols() &&
           a.outerStride() == b.outerStride();
  };
  if (!rows_finite(query)) detail::expect_finite("query", query);
  if (!same(key, query) && !rows_finite(key)) detail::expect_finite("key", key);
  if (!same(value, query) && !same(value, key) && !rows_finite(value)) {
    detail::expect_finite("value", value);
  }
  masks.validate(config.num_heads, query.rows(), key.rows());
  if (!options.ablated_heads.empty() &&
      static_cast<Index>(options.ablated_heads.size()) != config.num_heads) {
    throw shape_error(
        "ablated_heads has " + std::to_string(options.ablated_heads.size()) +
        " entries, expected one per head, num_heads = " + std::to_string(config.num_heads));
  }
}

}  // namespace

void validate_forward_inputs(const AttentionConfig& config, const AttentionWeights& weights,
                             const MatrixRef& query, const MatrixRef& key, const MatrixRef& value,
                             const AttentionMasks& masks, const ForwardOptions& options) {
  config.validate();
  check_input_shapes(config, query, key, value);
  weights.validate(config);
  check_input_values(config, query, key, value, masks, options);
}

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
/// Natively it is kept between calls on each thread: allocated and freed on every call, the
/// ~300 KB of (64, 128, 4) went back to the system each time (glibc trims its heap's top once
/// more than 128 KiB is free there) and came back as ~40 page faults a call, 0.50 ms a forward
/// instead of 0.10 (scripts/bench/notes.md). The buffers only grow, each to the largest size a
/// call asked of it; once they total more than kKeepFloats they are released at the end of the
/// call (large calls: glibc then raises its own trim threshold, and the products outweigh the
/// faults). In WebAssembly nothing is kept (the linear memory never shrinks,
/// so there is nothing to save, and memoryStats() reports what stays allocated). A nested forward
/// on the same thread (none today) would get buffers of its own.
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
  // One block of rows of scores, then weights (kRowsPerBlock, m), reused by every block of every
  // head: the product writes it, the softmax and A·V read it while it is in cache, and it reaches
  // the (h, n, m) stack in one sequential copy. Writing the products straight into the stack
  // (200 MB at 12 x 2048 x 2048) cost a cache miss per store.
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
        if (row_max == neg_inf) {  // every key masked: weights 0, head output 0 (never NaN)
          std::fill(row, row + m, 0.0f);
          result.fully_masked_rows[static_cast<std::size_t>(i * n + r)] = 1;
          continue;
        }
        // Masked keys (-inf) get exactly 0; the row's maximum gets exp(0) = 1, so sum >= 1.
        const float sum = kernels::exp_shifted_sum(row, m, row_max);
        kernels::scale(row, m, 1.0f / sum);
      }
      if (av) {
        kernels::gemm(rows, A, m, Vh, 1.0f, nullptr, head_outputs + r0 * d + i * d_head, d);
      }
      std::memcpy(A_head + r0 * m, A, sizeof(float) * static_cast<std::size_t>(rows * m));
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
  if (!rows_finite(q, n, d, ldq)) {
    detail::expect_no_overflow("the query projection Q", StridedMap(q, n, d, ldq));
  }
  if (!rows_finite(k, m, d, ldk)) {
    detail::expect_no_overflow("the key projection K", StridedMap(k, m, d, ldk));
  }
  if (with_v && !rows_finite(v, m, d, ldv)) {
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
  if (!rows_finite(result.output.data(), n, d, d)) {
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
  if (!rows_finite(q)) detail::expect_no_overflow("the query projection Q", q);
  if (!rows_finite(k)) detail::expect_no_overflow("the key projection K", k);
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
  check_input_shapes(config_, query, key, value);
  check_input_values(config_, query, key, value, masks, options);
  return forward_validated(config_, weights_, prepared_.get(), query, key, value, masks, options);
}

AttentionResult MultiheadAttention::forward(const MatrixRef& x, const AttentionMasks& masks,
                                            const ForwardOptions& options) const {
  return forward(x, x, x, masks, options);
}

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
// Positional encoding

RowMatrixXd sinusoidal_positional_encoding_f64(Index n, Index d) {
  if (n <= 0 || d <= 0) {
    throw shape_error("positional encoding of " + shape_str(n, d) + ": n and d must be positive");
  }
  if (n > limits::max_tokens || d > limits::max_d_model) {
    throw limit_error("positional encoding of " + shape_str(n, d) + " exceeds the limits (" +
                      std::to_string(limits::max_tokens) + " tokens, d_model " +
                      std::to_string(limits::max_d_model) + ")");
  }
  // Rows do not depend on n: the rows computed for this d are kept (up to kPeCacheEntries), and a
  // request for more rows computes only the new ones. Typing on the page changes n by a token at
  // a time, and n x d sines and cosines took 15 ms of a 50 ms update at 512 tokens, d 768 in wasm.
  constexpr Index kPeCacheEntries = Index{1} << 21;  // 16 MiB of doubles
  static Index cached_d = 0;
  static RowMatrixXd& cached = *new RowMatrixXd();  // never destroyed: no exit-time work
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // wasm builds have one thread
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
#endif
  // Row-major: the first rows are the first n * d doubles.
  const Index from = cached_d == d ? std::min(n, cached.rows()) : 0;
  RowMatrixXd pe(n, d);
  std::copy_n(cached.data(), from * d, pe.data());
  if (from == n) return pe;
  // Columns 2i and 2i + 1 share the angle pos / 10000^(2i/d); the power is taken once per pair
  // of columns, not per entry (the same doubles as per entry, so the same angles).
  for (Index two_i = 0; two_i < d; two_i += 2) {
    const double denominator =
        std::pow(10000.0, static_cast<double>(two_i) / static_cast<double>(d));
    for (Index pos = from; pos < n; ++pos) {
      const double angle = static_cast<double>(pos) / denominator;
      pe(pos, two_i) = std::sin(angle);
      if (two_i + 1 < d) pe(pos, two_i + 1) = std::cos(angle);
    }
  }
  if (n * d <= kPeCacheEntries) {
    cached_d = d;
    cached = pe;
  }
  return pe;
}

RowMatrixXf sinusoidal_positional_encoding(Index n, Index d) {
  return sinusoidal_positional_encoding_f64(n, d).cast<float>();
}

}  // namespace mha
