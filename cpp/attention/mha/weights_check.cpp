// The check that a stack of numbers is attention weights (weights_check.hpp).
#include "mha/weights_check.hpp"

#include <cmath>
#include <cstdio>

#include "mha/detail/format.hpp"

namespace mha {
namespace {

// printf's %g is what an ostream prints at precision 6; no iostreams in the wasm modules (size).
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

void check_stack_shape(const HeadStack& w, const std::string& what) {
  if (w.heads() < 1 || w.rows() < 1 || w.cols() < 1) {
    throw shape_error(what + " has shape " + detail::shape_str(w.heads(), w.rows(), w.cols()) +
                      "; every dimension (heads, queries, keys) must be at least 1");
  }
  if (w.heads() > limits::max_num_heads) {
    throw limit_error(what + " has " + std::to_string(w.heads()) + " heads, above the limit of " +
                      std::to_string(limits::max_num_heads));
  }
  if (w.rows() > limits::max_tokens || w.cols() > limits::max_tokens) {
    throw limit_error(what + " has " + std::to_string(w.rows()) + " queries and " +
                      std::to_string(w.cols()) + " keys; the limit is " +
                      std::to_string(limits::max_tokens) + " tokens");
  }
}

}  // namespace

void validate_attention_weights(const HeadStack& w, const std::string& what, double tolerance) {
  check_stack_shape(w, what);
  const Index h = w.heads(), n = w.rows(), m = w.cols();
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) {
      double sum = 0.0;
      for (Index j = 0; j < m; ++j) {
        const float x = w(k, i, j);
        if (!std::isfinite(x) || x < 0.0f) {
          const std::string v = std::isnan(x)   ? "NaN"
                                : std::isinf(x) ? (x > 0 ? "+inf" : "-inf")
                                                : num(double(x));
          throw value_error(what + ": head " + std::to_string(k) + ", row " + std::to_string(i) +
                            ", key " + std::to_string(j) + " holds " + v +
                            "; attention weights must be finite and >= 0");
        }
        sum += x;
      }
      if (sum != 0.0 && std::abs(sum - 1.0) > tolerance) {
        throw value_error(what + ": head " + std::to_string(k) + ", row " + std::to_string(i) +
                          " sums to " + num(sum) + "; every row must sum to 1 (within " +
                          num(tolerance) + ") or be all 0 (a fully masked row)");
      }
    }
  }
}

}  // namespace mha
