// The body of the plain reference implementation, generic over the inputs' and weights' scalar
// type (float for mha::multi_head_attention_reference, double for module 08's float64 program).
// Every sum is accumulated in double; loops only. Internal: include only from the core's .cpp.
// Shapes: n = query tokens, m = key tokens, d = d_model, h = num_heads, d_head = d / h.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/detail/format.hpp"

namespace mha::detail {

/// y(t, o) = b[o] + sum_k x(t, k) * W(o, k)   for x (rows, in), W (out, in), bias (out) or null.
template <typename X, typename W, typename B>
RowMatrixXd linear_loops(const X& x, const W& w, const B* bias) {
  RowMatrixXd y(x.rows(), w.rows());
  for (Index t = 0; t < x.rows(); ++t) {
    for (Index o = 0; o < w.rows(); ++o) {
      double acc = bias != nullptr ? static_cast<double>(bias[o]) : 0.0;
      for (Index k = 0; k < x.cols(); ++k) {
        acc += static_cast<double>(x(t, k)) * static_cast<double>(w(o, k));
      }
      y(t, o) = acc;
    }
  }
  return y;
}

/// Per-head attention from the projections Q (n, d), K (m, d), V (m, d): fills attn_weights,
/// scores, fully_masked_rows, q, k, v and head_outputs of the result (float32 copies), and Y =
/// concat(Y_1 .. Y_h) (n, d) in double for the caller's output projection. Scores that overflow
/// float32 are a value_error, as in the fast path.
inline AttentionResult reference_heads(const AttentionConfig& config, const RowMatrixXd& Q,
                                       const RowMatrixXd& K, const RowMatrixXd& V,
                                       const AttentionMasks& masks, const ForwardOptions& options,
                                       RowMatrixXd& Y) {
  const Index n = Q.rows(), m = K.rows(), d = config.d_model, h = config.num_heads;
  const Index d_head = config.d_head();
  AttentionResult result;
  result.attn_weights = HeadStack(h, n, m);
  result.scores = HeadStack(h, n, m);
  result.fully_masked_rows.assign(static_cast<std::size_t>(h * n), 0);
  Y = RowMatrixXd::Zero(n, d);  // concat(Y_1 .. Y_h)
  const double scale = 1.0 / std::sqrt(static_cast<double>(d_head));
  constexpr double neg_inf = -std::numeric_limits<double>::infinity();

  std::vector<double> s(static_cast<std::size_t>(m));
  for (Index head = 0; head < h; ++head) {
    const Index c0 = head * d_head;
    for (Index i = 0; i < n; ++i) {
      // Scores of query i against every key j, with the mask term.
      double row_max = neg_inf;
      for (Index j = 0; j < m; ++j) {
        double dot = 0.0;
        for (Index c = c0; c < c0 + d_head; ++c) dot += Q(i, c) * K(j, c);
        const double scaled = dot * scale;
        if (!std::isfinite(static_cast<float>(scaled))) {
          throw value_error("the scores Q K^T / sqrt(d_head) overflows float32 at " +
                            shape_str(i, j) + ": inputs or weights are too large in magnitude");
        }
        const float term = masks.term(head, i, j);
        const double sj = scaled + static_cast<double>(term);
        // A finite mask term that takes the score out of float32's range: an error in both
        // paths (-inf reached this way is not a mask).
        if (std::isinf(static_cast<float>(sj)) && term != -std::numeric_limits<float>::infinity()) {
          throw mask_overflow_error(head, i);
        }
        s[static_cast<std::size_t>(j)] = sj;
        result.scores(head, i, j) = static_cast<float>(sj);
        if (sj > row_max) row_max = sj;
      }
      if (row_max == neg_inf) {
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
  // Same contract as the fast path: a float32 result that overflowed is an error, not inf/NaN.
  expect_no_overflow("the query projection Q", result.q);
  expect_no_overflow("the key projection K", result.k);
  expect_no_overflow("the value projection V", result.v);
  return result;
}

}  // namespace mha::detail
