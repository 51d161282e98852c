// The plain reference implementation: loops over heads, rows and columns, accumulating in double.
// Deliberately naive and kept forever; the Eigen path and the wasm build are tested against it.
// Formula and shapes: see attention.hpp (n = query tokens, m = key tokens, d = d_model,
// h = num_heads, d_head = d / h).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/detail/format.hpp"

namespace mha {

namespace {

/// y[t][o] = b[o] + sum_k x[t][k] * W[o][k]   for x (rows, in), W (out, in).
RowMatrixXd linear_loops(const MatrixRef& x, const Eigen::Ref<const RowMatrixXf>& W,
                         const float* bias) {
  RowMatrixXd y(x.rows(), W.rows());
  for (Index t = 0; t < x.rows(); ++t) {
    for (Index o = 0; o < W.rows(); ++o) {
      double acc = bias != nullptr ? static_cast<double>(bias[o]) : 0.0;
      for (Index k = 0; k < x.cols(); ++k) {
        acc += static_cast<double>(x(t, k)) * static_cast<double>(W(o, k));
      }
      y(t, o) = acc;
    }
  }
  return y;
}

}  // namespace

AttentionResult multi_head_attention_reference(const AttentionConfig& config,
                                               const AttentionWeights& weights,
                                               const MatrixRef& query, const MatrixRef& key,
                                               const MatrixRef& value, const AttentionMasks& masks,
                                               const ForwardOptions& options) {
  // options.keep_intermediates is ignored: the reference always fills the intermediates.
  validate_forward_inputs(config, weights, query, key, value, masks, options);
  const Index n = query.rows(), m = key.rows(), d = config.d_model, h = config.num_heads;
  const Index d_head = config.d_head();
  const bool has_bias = weights.in_proj_bias.size() > 0;
  const float* b = weights.in_proj_bias.data();

  const RowMatrixXd Q = linear_loops(query, weights.q_weight(), has_bias ? b : nullptr);
  const RowMatrixXd K = linear_loops(key, weights.k_weight(), has_bias ? b + d : nullptr);
  const RowMatrixXd V = linear_loops(value, weights.v_weight(), has_bias ? b + 2 * d : nullptr);

  AttentionResult result;
  result.attn_weights = HeadStack(h, n, m);
  result.scores = HeadStack(h, n, m);
  result.fully_masked_rows.assign(static_cast<std::size_t>(h * n), 0);
  RowMatrixXd Y = RowMatrixXd::Zero(n, d);  // concat(Y_1 .. Y_h)
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_head));

  std::vector<double> s(static_cast<std::size_t>(m));
  for (Index head = 0; head < h; ++head) {
    const Index c0 = head * d_head;
    for (Index i = 0; i < n; ++i) {
      // Scores of query i against every key j, with the mask term.
      double row_max = -std::numeric_limits<double>::infinity();
      for (Index j = 0; j < m; ++j) {
        double dot = 0.0;
        for (Index c = c0; c < c0 + d_head; ++c) dot += Q(i, c) * K(j, c);
        const double scaled = dot * scale;
        if (!std::isfinite(static_cast<float>(scaled))) {
          throw value_error("the scores Q K^T / sqrt(d_head) overflows float32 at " +
                            detail::shape_str(i, j) +
                            ": inputs or weights are too large in magnitude");
        }
        const double sj = scaled + static_cast<double>(masks.term(head, i, j));
        if (static_cast<float>(sj) == std::numeric_limits<float>::infinity()) {
          throw value_error("score + attn_mask overflows float32 at head " + std::to_string(head) +
                            ", query " + std::to_string(i) +
                            "; keep float mask values finite and moderate (or -inf to mask)");
        }
        s[static_cast<std::size_t>(j)] = sj;
        result.scores(head, i, j) = static_cast<float>(sj);
        if (sj > row_max) row_max = sj;
      }
      if (row_max == -std::numeric_limits<double>::infinity()) {
        result.fully_masked_rows[static_cast<std::size_t>(head * n + i)] = 1;
        continue;  // weights stay 0, this head's output row stays 0
      }
      // Softmax with the row maximum subtracted.
      double sum = 0.0;
      for (Index j = 0; j < m; ++j) {
        s[static_cast<std::size_t>(j)] = std::exp(s[static_cast<std::size_t>(j)] - row_max);
        sum += s[static_cast<std::size_t>(j)];
      }
      for (Index j = 0; j < m; ++j) {
        const double a = s[static_cast<std::size_t>(j)] / sum;
        result.attn_weights(head, i, j) = static_cast<float>(a);
        if (options.ablated(head)) continue;  // switched off: this head's Y stays 0
        for (Index c = c0; c < c0 + d_head; ++c) Y(i, c) += a * V(j, c);
      }
    }
  }

  result.head_outputs = Y.cast<float>();
  result.q = Q.cast<float>();
  result.k = K.cast<float>();
  result.v = V.cast<float>();
  result.output.resize(n, d);
  for (Index t = 0; t < n; ++t) {
    for (Index o = 0; o < d; ++o) {
      double acc =
          weights.out_proj_bias.size() > 0 ? static_cast<double>(weights.out_proj_bias[o]) : 0.0;
      for (Index c = 0; c < d; ++c)
        acc += Y(t, c) * static_cast<double>(weights.out_proj_weight(o, c));
      result.output(t, o) = static_cast<float>(acc);
    }
  }
  // Same contract as the fast path: a float32 result that overflowed is an error, not inf/NaN.
  detail::expect_no_overflow("the query projection Q", result.q);
  detail::expect_no_overflow("the key projection K", result.k);
  detail::expect_no_overflow("the value projection V", result.v);
  detail::expect_no_overflow("the output projection", result.output);
  return result;
}

}  // namespace mha
