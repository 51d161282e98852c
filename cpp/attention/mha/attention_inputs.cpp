// Multi-head attention's inputs: the weight stack type, the configuration, the projection
// weights, the masks and the options, and the checks of one forward call's inputs
// (attention.hpp).
#include "mha/attention.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "mha/detail/input_checks.hpp"
#include "mha/detail/format.hpp"

namespace mha {

using detail::shape_str;

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
    if (!detail::rows_finite(*W)) detail::expect_finite(name, *W);
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
  if (!key_padding_mask.empty()) {
    const float p = key_padding_mask[static_cast<std::size_t>(j)];
    if (key_padding_mask_kind == Kind::additive) {
      t += p;
    } else if (p != 0.0f) {
      return neg_inf;
    }
  }
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
  for (std::size_t j = 0; key_padding_mask_kind == Kind::additive && j < key_padding_mask.size();
       ++j) {
    const float a = key_padding_mask[j];
    if (std::isnan(a) || a == std::numeric_limits<float>::infinity()) {
      throw value_error(std::string("key_padding_mask holds ") + (std::isnan(a) ? "NaN" : "+inf") +
                        " at " + std::to_string(j) +
                        "; a float mask may hold finite values, or -inf to mask");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Options

void ForwardOptions::validate(Index num_heads) const {
  if (!ablated_heads.empty() && static_cast<Index>(ablated_heads.size()) != num_heads) {
    throw shape_error("ablated_heads has " + std::to_string(ablated_heads.size()) +
                      " entries, expected one per head, num_heads = " + std::to_string(num_heads));
  }
}

// ---------------------------------------------------------------------------------------------
// Checking a call's inputs

namespace detail {

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
  if (!detail::rows_finite(query)) detail::expect_finite("query", query);
  if (!same(key, query) && !detail::rows_finite(key)) detail::expect_finite("key", key);
  if (!same(value, query) && !same(value, key) && !detail::rows_finite(value)) {
    detail::expect_finite("value", value);
  }
  masks.validate(config.num_heads, query.rows(), key.rows());
  options.validate(config.num_heads);
}

}  // namespace detail

void validate_forward_inputs(const AttentionConfig& config, const AttentionWeights& weights,
                             const MatrixRef& query, const MatrixRef& key, const MatrixRef& value,
                             const AttentionMasks& masks, const ForwardOptions& options) {
  config.validate();
  detail::check_input_shapes(config, query, key, value);
  weights.validate(config);
  detail::check_input_values(config, query, key, value, masks, options);
}

}  // namespace mha
