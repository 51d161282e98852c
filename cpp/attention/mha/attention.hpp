// Multi-head scaled dot-product attention: the core of mha-lab.
//
// Shape legend (used in every comment of this file and of attention.cpp):
//   n      = query tokens
//   m      = key/value tokens (m == n for self-attention)
//   d      = d_model (width of the query, of every projection and of the output)
//   kdim   = width of the key input   (== d unless given)
//   vdim   = width of the value input (== d unless given)
//   h      = num_heads
//   d_head = d / h
// All matrices are row-major (as JS typed arrays and numpy are): element (r, c) of an (R, C)
// matrix sits at index r * C + c. A (h, n, m) stack puts head i's (n, m) matrix at offset i*n*m.
//
// Formula (Vaswani et al. 2017, "Attention Is All You Need", §3.2.1–3.2.2), weight layout and
// mask semantics as PyTorch nn.MultiheadAttention / F.multi_head_attention_forward:
// clang-format off
//   Q = query W_q^T + b_q                        (n, d)
//   K = key   W_k^T + b_k                        (m, d)
//   V = value W_v^T + b_v                        (m, d)
//   for each head i (columns i*d_head .. (i+1)*d_head - 1 of Q, K and V):
//     S_i = Q_i K_i^T / sqrt(d_head) + M_i       (n, m)       M_i: additive mask, 0, -inf or a float
//     A_i = softmax(S_i), row by row             (n, m)       the row maximum subtracted first;
//                                                             a row whose every key is masked is all 0
//     Y_i = A_i V_i                              (n, d_head)
//   output = concat(Y_1 .. Y_h) W_out^T + b_out  (n, d)
// clang-format on
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "mha/errors.hpp"

namespace mha {

namespace detail {
struct PreparedWeights;  // a layer's weights packed for the blocked kernels (attention.cpp)
}  // namespace detail

using Index = Eigen::Index;
/// Row-major float matrix: the layout of JS typed arrays, numpy arrays and PyTorch tensors.
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VectorXf = Eigen::VectorXf;
/// Read-only view of any row-major float matrix (or a Map over caller memory), without a copy.
using MatrixRef = Eigen::Ref<const RowMatrixXf>;

/// Documented size limits. Every entry point checks them before allocating, so an oversize
/// request is a mha::limit_error, never an out-of-memory abort (wasm has at most 2 GiB).
struct limits {
  static constexpr Index max_tokens = 4096;    ///< n and m
  static constexpr Index max_d_model = 4096;   ///< d, kdim, vdim
  static constexpr Index max_num_heads = 256;  ///< h
  /// h * n * m: one (h, n, m) float stack is at most 256 MiB (e.g. 12 heads x 2048 x 2048 fits).
  static constexpr Index max_weight_entries = Index{1} << 26;
};

/// Throws limit_error ("num_heads * n * m = h * n * m attention weights exceed the limit of ...")
/// when h·n·m > limits::max_weight_entries, computed in 64 bits (Eigen::Index is 32-bit in
/// wasm32). For every entry point that will hold (h, n, m) weights, before it allocates.
void check_weight_entries(Index num_heads, Index n, Index m);

namespace detail {
/// Arrays of at least this many bytes (a (12, 1448, 1448) float stack and up) are allocated by
/// allocate_large.
constexpr std::size_t kLargeArrayBytes = std::size_t{32} << 20;
/// `bytes` of memory for one large array, aligned to 2 MiB: natively on Linux with
/// madvise(MADV_HUGEPAGE), so that first writes fault once per 2 MiB page instead of once per
/// 4 KiB (hosts whose transparent_hugepage is "madvise", Debian's default, otherwise give 4 KiB
/// pages): a fresh (h, n, m) weight stack of hundreds of MB otherwise spends much of a call in page
/// faults (docs/benchmarks.md). Throws std::bad_alloc.
void* allocate_large(std::size_t bytes);
/// Frees what allocate_large(bytes) returned.
void deallocate_large(void* p, std::size_t bytes) noexcept;

/// std::allocator whose construct() without arguments default-initialises: resize() on a vector
/// of floats allocates without writing (HeadStack::uninitialized). Arrays of kLargeArrayBytes
/// and more come from allocate_large.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  using std::allocator<T>::allocator;
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  T* allocate(std::size_t count) {
    if (count <= max_count() && count * sizeof(T) >= kLargeArrayBytes) {
      return static_cast<T*>(allocate_large(count * sizeof(T)));
    }
    return std::allocator<T>::allocate(count);  // throws for a count too large
  }
  void deallocate(T* p, std::size_t count) noexcept {
    if (count <= max_count() && count * sizeof(T) >= kLargeArrayBytes) {
      deallocate_large(p, count * sizeof(T));
    } else {
      std::allocator<T>::deallocate(p, count);
    }
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

 private:
  static constexpr std::size_t max_count() { return std::size_t(-1) / sizeof(T); }
};
}  // namespace detail

/// A stack of `heads` matrices, each (rows, cols), contiguous and row-major:
/// entry (i, r, c) at data()[(i * rows + r) * cols + c]. Used for (h, n, m) attention weights,
/// scores and masks.
class HeadStack {
 public:
  HeadStack() = default;
  HeadStack(Index heads, Index rows, Index cols, float fill = 0.0f);
  /// A stack whose entries are allocated but not written, for a caller that writes every one
  /// (the forward pass): saves a pass over h * n * m floats (200 MB at 12 x 2048 x 2048).
  static HeadStack uninitialized(Index heads, Index rows, Index cols);

  Index heads() const { return heads_; }
  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Index size() const { return heads_ * rows_ * cols_; }
  bool empty() const { return size() == 0; }

  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  float& operator()(Index head, Index row, Index col) { return data_[offset(head, row, col)]; }
  float operator()(Index head, Index row, Index col) const { return data_[offset(head, row, col)]; }

  /// Head i as an Eigen (rows, cols) row-major matrix view into this stack.
  Eigen::Map<RowMatrixXf> head(Index i);
  Eigen::Map<const RowMatrixXf> head(Index i) const;

 private:
  std::size_t offset(Index head, Index row, Index col) const {
    return static_cast<std::size_t>((head * rows_ + row) * cols_ + col);
  }
  Index heads_ = 0, rows_ = 0, cols_ = 0;
  std::vector<float, detail::DefaultInitAllocator<float>> data_;
};

/// Sizes of one multi-head attention layer, as nn.MultiheadAttention(embed_dim=d_model,
/// num_heads, kdim, vdim). kdim/vdim of 0 mean "same as d_model".
struct AttentionConfig {
  Index d_model = 0;
  Index num_heads = 0;
  Index kdim = 0;
  Index vdim = 0;

  Index key_dim() const { return kdim == 0 ? d_model : kdim; }
  Index value_dim() const { return vdim == 0 ? d_model : vdim; }
  /// d_head = d_model / num_heads (call validate() first).
  Index d_head() const { return d_model / num_heads; }
  /// True when kdim == vdim == d_model: the projections may be fused into in_proj_weight.
  bool same_embed_dim() const { return key_dim() == d_model && value_dim() == d_model; }

  /// Throws config_error when num_heads <= 0, d_model <= 0, kdim/vdim < 0, or
  /// d_model % num_heads != 0 (message e.g. "d_model=512 is not divisible by num_heads=7");
  /// limit_error beyond mha::limits.
  void validate() const;
};

/// Learned parameters of one layer, in PyTorch's layout: each projection weight is
/// (out_features, in_features) and is applied as x W^T + b.
///   in_proj_weight  (3d, d): rows [0, d) = W_q, [d, 2d) = W_k, [2d, 3d) = W_v   (fused form)
///   q_proj_weight (d, d), k_proj_weight (d, kdim), v_proj_weight (d, vdim)       (separate form)
///   in_proj_bias (3d) or empty;  out_proj_weight (d, d);  out_proj_bias (d) or empty.
/// Exactly one of the fused and separate forms is set; build with the factories below.
struct AttentionWeights {
  RowMatrixXf in_proj_weight;
  RowMatrixXf q_proj_weight, k_proj_weight, v_proj_weight;
  VectorXf in_proj_bias;
  RowMatrixXf out_proj_weight;
  VectorXf out_proj_bias;

  /// nn.MultiheadAttention's own form (kdim == vdim == d_model). Biases may be empty.
  static AttentionWeights fused(RowMatrixXf in_proj_weight, VectorXf in_proj_bias,
                                RowMatrixXf out_proj_weight, VectorXf out_proj_bias);
  /// Separate q/k/v weights, needed when kdim or vdim differs from d_model. Biases may be empty.
  static AttentionWeights separate(RowMatrixXf q_proj_weight, RowMatrixXf k_proj_weight,
                                   RowMatrixXf v_proj_weight, VectorXf in_proj_bias,
                                   RowMatrixXf out_proj_weight, VectorXf out_proj_bias);
  /// The numpy course convention (module 08): Q = X @ Wq with Wq (d, d), output = concat @ Wo,
  /// no bias. Stored transposed into the fused PyTorch form, so both conventions share one path.
  static AttentionWeights from_numpy(const MatrixRef& Wq, const MatrixRef& Wk, const MatrixRef& Wv,
                                     const MatrixRef& Wo);

  bool is_fused() const { return in_proj_weight.size() > 0; }
  /// W_q (d, d), W_k (d, kdim), W_v (d, vdim): views into whichever form is stored.
  Eigen::Ref<const RowMatrixXf> q_weight() const;
  Eigen::Ref<const RowMatrixXf> k_weight() const;
  Eigen::Ref<const RowMatrixXf> v_weight() const;

  /// Throws shape_error when a weight's shape disagrees with `config` (message names expected
  /// and actual), value_error when any entry is NaN or ±Inf.
  void validate(const AttentionConfig& config) const;
};

/// The masks of one forward call, combined additively as PyTorch does.
struct AttentionMasks {
  enum class Kind { none, boolean, additive };
  /// attn_mask: none, or (1, n, m) shared by every head, or (h, n, m) per head (PyTorch's 3-D
  /// mask for batch 1).
  ///   boolean:  nonzero entry = may NOT attend (PyTorch polarity: true means masked out).
  ///   additive: added to the scaled scores; -inf masks, NaN and +inf are rejected (value_error).
  Kind attn_mask_kind = Kind::none;
  HeadStack attn_mask;
  /// key_padding_mask (m), or empty: none. As key_padding_mask_kind says:
  ///   boolean (the default): nonzero = ignore that key for every query and head;
  ///   additive: entry j is added to the scaled score of key j for every query and head, as
  ///             nn.MultiheadAttention adds a float key_padding_mask; -inf masks, NaN and +inf
  ///             are rejected (value_error).
  Kind key_padding_mask_kind = Kind::boolean;
  std::vector<float> key_padding_mask;
  /// Causal mask: query i may not attend to keys j > i, i.e. torch.triu(ones(n, m), 1) as a
  /// boolean mask (also when n != m). Applied on top of attn_mask when both are given (PyTorch
  /// 2.x treats is_causal only as a hint that attn_mask is causal; here it is the mask itself).
  bool is_causal = false;

  /// Additive term M_h(i, j) added to the scaled score of head `head`, query i, key j:
  /// 0, -inf, or the float mask's value (summed over every mask given).
  float term(Index head, Index i, Index j) const;
  /// Throws shape_error/value_error when a mask disagrees with (h, n, m) or holds NaN/+inf.
  void validate(Index num_heads, Index n, Index m) const;
};

struct ForwardOptions {
  ForwardOptions() = default;
  ForwardOptions(bool keep) : keep_intermediates(keep) {}  // NOLINT: {false} reads well

  /// Keep q, k, v, scores and head_outputs in the result (an "explain this cell" view needs them).
  /// Off saves two (n, d)-sized and one (h, n, m)-sized buffers.
  bool keep_intermediates = true;
  /// The attention weights only: skip the value projection, A·V and out_proj, about half the work
  /// when n < 2d (a view that draws the weights, as the page's grids). The result's output, v and
  /// head_outputs are then empty (q, k and scores are kept as keep_intermediates says), and
  /// ablated_heads changes nothing (it acts on the head outputs).
  bool weights_only = false;
  /// Head ablation, (h) or empty: a nonzero entry switches that head off — its output Y_i is
  /// zeroed before out_proj (Michel et al. 2019, "Are Sixteen Heads Really Better than One?").
  /// Its attention weights are still computed and returned. Throws shape_error unless the size
  /// is 0 or num_heads.
  std::vector<std::uint8_t> ablated_heads;

  bool ablated(Index head) const {
    return !ablated_heads.empty() && ablated_heads[static_cast<std::size_t>(head)] != 0;
  }

  /// Checks the options against a layer of `num_heads` heads: ablated_heads has 0 or num_heads
  /// entries. Every forward road (the layer, the numpy experiment, its grids-only path) calls it.
  /// Throws shape_error "ablated_heads has 3 entries, expected one per head, num_heads = 2".
  void validate(Index num_heads) const;
};

/// Everything one forward pass produces. Per-head weights are always returned, never averaged.
struct AttentionResult {
  RowMatrixXf output;      ///< (n, d), in the units of the value projection
  HeadStack attn_weights;  ///< (h, n, m); each row sums to 1, or is all 0 if fully masked
  /// (h, n): 1 where every key of that head's query row was masked (weights 0, head output 0).
  std::vector<std::uint8_t> fully_masked_rows;

  // Intermediates (empty unless ForwardOptions::keep_intermediates):
  RowMatrixXf q;     ///< (n, d) projected queries; head i = columns [i*d_head, (i+1)*d_head)
  RowMatrixXf k;     ///< (m, d) projected keys
  RowMatrixXf v;     ///< (m, d) projected values
  HeadStack scores;  ///< (h, n, m) logits the softmax sees: Q_i K_i^T / sqrt(d_head) + M_i
  RowMatrixXf head_outputs;  ///< (n, d) concat(Y_1 .. Y_h), before out_proj
};

/// Multi-head attention forward pass, fast path (Eigen), no dropout. See the formula at the top.
///
/// Shapes: query (n, d), key (m, kdim), value (m, vdim); masks as AttentionMasks documents.
/// When query, key and value are the same matrix and the weights are fused, the three projections
/// run as one (n, d) x (d, 3d) product. Memory: natively, each calling thread keeps its scratch
/// buffers (the projections, the head outputs, a block of scores) between calls when they total
/// at most 4 MiB, and Eigen's GEMM packing buffers up to 4 MiB more (kernels.hpp gemm_eigen);
/// larger ones are freed before the call returns. Calls on different threads are independent.
/// Returns: AttentionResult (output (n, d), attn_weights (h, n, m), fully_masked_rows (h, n), and
///   the intermediates when options.keep_intermediates).
/// Throws: config_error (bad config), shape_error (any shape mismatch, empty input), value_error
///   (NaN/±Inf in inputs or weights, NaN/+inf in a float mask), limit_error (beyond mha::limits).
AttentionResult multi_head_attention_forward(const AttentionConfig& config,
                                             const AttentionWeights& weights,
                                             const MatrixRef& query, const MatrixRef& key,
                                             const MatrixRef& value,
                                             const AttentionMasks& masks = {},
                                             const ForwardOptions& options = {});

/// The attention weights of heads first_head .. first_head + c - 1 from their projections, as
/// multi_head_attention_forward computes them after the projections (the same kernels, so the
/// same weights bit for bit): for head first_head + i, softmax(Q_i K_iᵀ / sqrt(d_head) + M) with
/// Q_i, K_i column block i (d_head wide) of q and k, and M the masks' term for that head.
/// For callers that project themselves (the seeded experiment's fast path packs its weights
/// straight from numpy's draws) or split the heads between workers.
///
/// Shapes (n = queries, m = keys, c = heads computed): q (n, c·d_head), k (m, c·d_head); masks
/// as AttentionMasks documents for config.num_heads heads. Returns attn_weights (c, n, m),
/// fully_masked_rows (c·n) and, with keep_scores, scores (c, n, m); nothing else.
/// Throws config_error (config), shape_error (shapes, or heads beyond num_heads), value_error
/// (q or k not finite: an overflow upstream).
AttentionResult attention_weights_from_projections(const AttentionConfig& config,
                                                   Index first_head, const MatrixRef& q,
                                                   const MatrixRef& k,
                                                   const AttentionMasks& masks,
                                                   bool keep_scores = false);

/// The plain reference: the same contract as multi_head_attention_forward, written as loops over
/// heads, rows and columns with double accumulation. Slow and obviously correct; the fast path
/// and the wasm build are tested against it. It always computes everything: keep_intermediates
/// and weights_only are ignored (a weights_only result is checked against its weights).
AttentionResult multi_head_attention_reference(const AttentionConfig& config,
                                               const AttentionWeights& weights,
                                               const MatrixRef& query, const MatrixRef& key,
                                               const MatrixRef& value,
                                               const AttentionMasks& masks = {},
                                               const ForwardOptions& options = {});

/// Validates every input of a forward call (config, weights, shapes, finiteness, masks, options,
/// limits) and throws the error the forward functions would. Both forward functions call it first.
void validate_forward_inputs(const AttentionConfig& config, const AttentionWeights& weights,
                             const MatrixRef& query, const MatrixRef& key, const MatrixRef& value,
                             const AttentionMasks& masks, const ForwardOptions& options = {});

/// Number of learned parameters, counted as PyTorch's sum(p.numel() for p in mha.parameters()):
///   d*d + d*kdim + d*vdim (q, k, v projections) + d*d (out_proj), plus 3d + d with biases.
///   With kdim == vdim == d: 4d^2, plus 4d with biases — the same for every valid num_heads.
/// Throws config_error like AttentionConfig::validate.
Index parameter_count(const AttentionConfig& config, bool bias);

/// One layer: config and weights validated once, then forward() as often as needed.
/// Mirrors nn.MultiheadAttention (batch_first, batch of 1, no dropout, no add_bias_kv).
class MultiheadAttention {
 public:
  /// Throws config_error / shape_error / value_error as AttentionConfig/AttentionWeights::validate.
  MultiheadAttention(AttentionConfig config, AttentionWeights weights);

  const AttentionConfig& config() const { return config_; }
  const AttentionWeights& weights() const { return weights_; }
  bool has_bias() const {
    return weights_.in_proj_bias.size() > 0 || weights_.out_proj_bias.size() > 0;
  }

  /// Cross-attention: query (n, d), key (m, kdim), value (m, vdim). See
  /// multi_head_attention_forward; the result is the same (the weights are not re-validated:
  /// the constructor did that, and they cannot change since). In WebAssembly builds the
  /// projection weights are kept packed for the blocked kernels (mha/kernels.hpp) from the
  /// constructor on, so a call does not repack them.
  AttentionResult forward(const MatrixRef& query, const MatrixRef& key, const MatrixRef& value,
                          const AttentionMasks& masks = {},
                          const ForwardOptions& options = {}) const;
  /// Self-attention: query = key = value = x (n, d).
  AttentionResult forward(const MatrixRef& x, const AttentionMasks& masks = {},
                          const ForwardOptions& options = {}) const;

 private:
  AttentionConfig config_;
  AttentionWeights weights_;
  std::shared_ptr<const detail::PreparedWeights> prepared_;  ///< null with the Eigen back end
};

/// Sinusoidal positional encoding (Vaswani et al. 2017, §3.5), (n, d):
///   PE(pos, 2i) = sin(pos / 10000^(2i/d)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d)).
/// Throws shape_error when n <= 0 or d <= 0, limit_error beyond mha::limits.
RowMatrixXf sinusoidal_positional_encoding(Index n, Index d);
/// The same in float64 (sinusoidal_positional_encoding is this, rounded to float32).
RowMatrixXd sinusoidal_positional_encoding_f64(Index n, Index d);

}  // namespace mha
