// Module 08's seeded numpy experiment, reproduced exactly (shared/seeds/module-08...):
//
//   np.random.seed(seed)
//   X = np.random.randn(n, d_model)
//   Wq, Wk, Wv, Wo = [np.random.randn(d_model, d_model) for _ in range(4)]
//   Q, K, V = X @ Wq, X @ Wk, X @ Wv      # split into num_heads chunks of d_head columns
//   mha_out = concat(heads) @ Wo          # no bias
#pragma once

#include <cstdint>

#include "mha/attention.hpp"

namespace mha {

struct NumpyExperiment {
  AttentionConfig config;      ///< d_model, num_heads (kdim = vdim = d_model)
  RowMatrixXf x;               ///< (n, d) token embeddings, float32 of numpy's float64 draws
  RowMatrixXd x_f64;           ///< (n, d) the draws as numpy holds them
  RowMatrixXd Wq, Wk, Wv, Wo;  ///< (d, d) each, numpy's `X @ W` convention, float64
  AttentionWeights weights;    ///< the same weights in PyTorch's fused layout (float32)
};

/// Draws module 08's X and weights for `tokens` x `d_model` with `num_heads` heads.
/// Throws config_error (d_model % num_heads != 0, ...), shape_error (tokens <= 0),
/// limit_error (beyond mha::limits).
NumpyExperiment make_numpy_experiment(std::uint32_t seed, Index tokens, Index d_model,
                                      Index num_heads);

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

}  // namespace mha
