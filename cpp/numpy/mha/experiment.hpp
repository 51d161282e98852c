// The course's module 08: its seeded numpy experiment, reproduced exactly:
//
//   np.random.seed(seed)
//   X = np.random.randn(n, d_model)
//   Wq, Wk, Wv, Wo = [np.random.randn(d_model, d_model) for _ in range(4)]
//   Q, K, V = X @ Wq, X @ Wk, X @ Wv      # split into num_heads chunks of d_head columns
//   mha_out = concat(heads) @ Wo          # no bias
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mha/attention.hpp"
#include "mha/numpy_random.hpp"

namespace mha {

/// numpy's standard-normal stream after np.random.seed(seed), drawn once and kept. The
/// experiment's X is draws [0, n*d) and its weights the next 4*d*d, so a page that changes the
/// token count (typing a word) or the number of heads reuses the draws instead of drawing again
/// (about 25 ns a draw in WebAssembly: 1M draws for d_model 512). numpy carries the polar
/// method's cached second variate from one randn call to the next, so slicing one stream gives
/// exactly what consecutive randn calls give.
class NumpyNormalStream {
 public:
  explicit NumpyNormalStream(std::uint32_t seed);
  std::uint32_t seed() const { return seed_; }
  /// Number of draws kept so far (8 bytes each).
  Index drawn() const { return static_cast<Index>(draws_.size()); }
  /// Draws [offset, offset + count) of the stream, drawing up to there first. The pointer is
  /// valid until the next call. Throws shape_error when offset or count is negative.
  const double* draws(Index offset, Index count);

 private:
  std::uint32_t seed_;
  NumpyRandomState rng_;
  std::vector<double> draws_;
};

/// Precision of numpy_experiment_forward's products and softmax.
///   float64: numpy's own dtype; every rounding the course prints is reproduced.
///   float32: the fast path (mha::MultiheadAttention), as PyTorch runs the same draws cast to
///            float32 (torch.from_numpy(X).float()); weights agree with float64 to about 1e-6 for
///            module-sized runs, less for large d_model (the course's unscaled randn weights give
///            logits of order d_model * sqrt(d_head)).
enum class ExperimentPrecision { float64, float32 };

/// Multiply-adds of one forward of the experiment: (n, d) x (d, d) four times, then the h heads'
/// Q_i K_i^T and A_i V_i (2 * n * n * d in all): n * d * (4 * d + 2 * n).
double numpy_experiment_work(Index tokens, Index d_model);

/// Work up to which "auto" precision stays in float64 (a few milliseconds in WebAssembly, where
/// Eigen's float64 product is scalar). Every run of the course modules (module 08: 5 tokens, d_model 8:
/// 1680 multiply-adds) is far below; module 03's d_model 512 with 64 tokens (71M) is far above.
inline constexpr double kExperimentFloat64MaxWork = 4e6;

/// float64 up to kExperimentFloat64MaxWork, float32 above.
ExperimentPrecision auto_experiment_precision(Index tokens, Index d_model);

struct NumpyExperiment {
  AttentionConfig config;      ///< d_model, num_heads (kdim = vdim = d_model)
  RowMatrixXf x;               ///< (n, d) token embeddings, float32 of numpy's float64 draws
  RowMatrixXd x_f64;           ///< (n, d) the draws as numpy holds them
  RowMatrixXd Wq, Wk, Wv, Wo;  ///< (d, d) each, numpy's `X @ W` convention, float64 (empty
                               ///< when made for ExperimentPrecision::float32)
  AttentionWeights weights;    ///< the same weights in PyTorch's fused layout (float32)
};

/// Draws module 08's X and weights for `tokens` x `d_model` with `num_heads` heads.
/// Throws config_error (d_model % num_heads != 0, ...), shape_error (tokens <= 0),
/// limit_error (beyond mha::limits).
NumpyExperiment make_numpy_experiment(std::uint32_t seed, Index tokens, Index d_model,
                                      Index num_heads);

/// The same from a kept stream (same draws, bit for bit). With ExperimentPrecision::float32 only
/// x, x_f64 and the float32 weights are filled (what the fast path needs), saving 4 d x d doubles.
NumpyExperiment make_numpy_experiment(NumpyNormalStream& stream, Index tokens, Index d_model,
                                      Index num_heads,
                                      ExperimentPrecision precision = ExperimentPrecision::float64);

/// The experiment's input X (n, d) in float64: numpy's draws, plus the sinusoidal positional
/// encoding when `positional`.
RowMatrixXd numpy_experiment_input(const NumpyExperiment& experiment, bool positional);

/// Module 08's forward pass in float64, as the course's numpy code computes it: X @ Wq etc. with
/// numpy's float64 draws (Eigen double products, as numpy's dgemm), then the reference's per-head
/// loops in double: softmax(Q_i K_i^T / sqrt(d_head) + mask), concat @ Wo. Weights agree with
/// numpy to ~1e-12, so every 3-decimal rounding the course prints is reproduced; the float32 fast
/// path drifts with d_model (the course's unscaled randn weights give logits of order d).
/// Results are float32 copies. Shapes: x (n, d) from numpy_experiment_input; masks for (h, n, n)
/// (e.g. is_causal); options.ablated_heads as in ForwardOptions (intermediates always kept).
/// Throws shape_error when x is not (n, d_model) or ablated_heads has the wrong size,
/// value_error / shape_error for bad masks or non-finite x.
AttentionResult numpy_experiment_forward(const NumpyExperiment& experiment, const RowMatrixXd& x,
                                         const AttentionMasks& masks = {},
                                         const ForwardOptions& options = {});

/// The same forward in float32 through `layer` (a MultiheadAttention made from
/// experiment.weights, no bias): x is rounded to float32 first; options.keep_intermediates is
/// honoured. Errors as MultiheadAttention::forward.
AttentionResult numpy_experiment_forward_f32(const MultiheadAttention& layer, const RowMatrixXd& x,
                                             const AttentionMasks& masks = {},
                                             const ForwardOptions& options = {});

/// The float32 attention weights of heads first_head .. first_head + head_count - 1 of the
/// experiment on `tokens` tokens, from the kept draws (the page's grids: weights only, no
/// intermediates). Q | K of those heads is one product X · [Wq | Wk] restricted to their columns,
/// whose right side is packed straight from numpy's (in, out) draws: no (out, in) transposes, no
/// V or Wo, and only the heads asked for (a view may split the heads between two workers).
/// The same weights as numpy_experiment_forward_f32 with the whole layer: bit for bit with the
/// blocked kernels (WebAssembly), within float32 rounding with Eigen's (tests/core/
/// numpy_stream_test.cpp). X is rounded to float32 after adding the positional encoding, as
/// numpy_experiment_input then numpy_experiment_forward_f32 do.
/// Shapes: masks for (num_heads, n, n), n = tokens. Returns attn_weights (head_count, n, n) and
/// fully_masked_rows (head_count·n) only.
/// Throws as make_numpy_experiment, shape_error for a head range outside [0, num_heads) or bad
/// masks.
AttentionResult numpy_experiment_weights_f32(NumpyNormalStream& stream, Index tokens,
                                             const AttentionConfig& config, bool positional,
                                             const AttentionMasks& masks, Index first_head,
                                             Index head_count);

/// One request of the experiment, as read_experiment_request (experiment_request.hpp) reads it
/// for every front end: which road it takes and what it returns are decided here, once.
struct ExperimentRequest {
  std::uint32_t seed = 0;         ///< numpy's seed (the caller's NumpyNormalStream(seed) draws)
  Index tokens = 0;               ///< n
  AttentionConfig config;         ///< d_model, num_heads (kdim = vdim = d_model)
  ExperimentPrecision precision = ExperimentPrecision::float64;
  bool positional = false;        ///< add sinusoidal_positional_encoding(n, d) to X
  AttentionMasks masks;           ///< for (h, n, n)
  ForwardOptions options;         ///< keep_intermediates, weights_only, ablated_heads
  bool return_parameters = true;  ///< keep X and the float32 weights for the caller
  bool head_range = false;        ///< first_head / head_count were asked for
  Index first_head = 0;           ///< in [0, h)
  Index head_count = 0;           ///< in [1, h - first_head]: the heads returned on the grids' road

  /// The grids' road (numpy_experiment_weights_f32: the weights straight from the draws, no
  /// layer): float32, weights_only, no intermediates, no parameters.
  bool grids() const {
    return precision == ExperimentPrecision::float32 && options.weights_only &&
           !options.keep_intermediates && !return_parameters;
  }
  /// Heads whose weights the result holds: head_count on the grids' road, else num_heads.
  Index heads_returned() const { return grids() ? head_count : config.num_heads; }
  /// Throws parse_error when a head range is asked for off the grids' road ("first_head and
  /// head_count give those heads' weights only: ask them with precision float32 ...").
  void check_head_range() const;
};

/// What run_experiment computed. `result` always; off the grids' road also the experiment (its
/// draws), the input X (n, d) in float64 and, on the float32 road, the layer the weights were
/// moved into.
struct ExperimentRun {
  AttentionResult result;
  NumpyExperiment experiment;
  RowMatrixXd x;
  std::optional<MultiheadAttention> layer;
  /// The float32 weights in PyTorch's fused layout (the layer's, or the experiment's).
  const AttentionWeights& weights() const { return layer ? layer->weights() : experiment.weights; }
};

/// Runs `request` on `stream`'s draws: on the grids' road numpy_experiment_weights_f32 for the
/// head range (ablated_heads checked, though it changes no weight); else the experiment drawn
/// in `request.precision` and run by numpy_experiment_forward (float64, everything kept) or
/// numpy_experiment_forward_f32 (float32, options honoured). Shapes as those functions.
/// Throws what they throw (config_error, shape_error, value_error, limit_error).
ExperimentRun run_experiment(NumpyNormalStream& stream, const ExperimentRequest& request);

}  // namespace mha
