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

}  // namespace mha
