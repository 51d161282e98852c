// The plain reference implementation: loops over heads, rows and columns, accumulating in double
// (the loops are in detail/reference_impl.hpp, shared with module 08's float64 program).
// Deliberately naive and kept forever; the Eigen path and the wasm build are tested against it.
// Formula and shapes: see attention.hpp (n = query tokens, m = key tokens, d = d_model,
// h = num_heads, d_head = d / h).
#include "mha/attention.hpp"
#include "mha/detail/reference_impl.hpp"

namespace mha {

AttentionResult multi_head_attention_reference(const AttentionConfig& config,
                                               const AttentionWeights& weights,
                                               const MatrixRef& query, const MatrixRef& key,
                                               const MatrixRef& value, const AttentionMasks& masks,
                                               const ForwardOptions& options) {
  // options.keep_intermediates and options.weights_only are ignored: the reference always
  // computes the output and fills the intermediates.
  validate_forward_inputs(config, weights, query, key, value, masks, options);
  const Index d = config.d_model;
  const float* b = weights.in_proj_bias.size() > 0 ? weights.in_proj_bias.data() : nullptr;
  const RowMatrixXd Q = detail::linear_loops(query, weights.q_weight(), b);
  const RowMatrixXd K = detail::linear_loops(key, weights.k_weight(), b ? b + d : nullptr);
  const RowMatrixXd V = detail::linear_loops(value, weights.v_weight(), b ? b + 2 * d : nullptr);
  RowMatrixXd Y;
  AttentionResult result = detail::reference_heads(config, Q, K, V, masks, options, Y);
  const float* out_b = weights.out_proj_bias.size() > 0 ? weights.out_proj_bias.data() : nullptr;
  result.output = detail::linear_loops(Y, weights.out_proj_weight, out_b).cast<float>();
  detail::expect_no_overflow("the output projection", result.output);
  return result;
}

}  // namespace mha
