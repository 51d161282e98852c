#include "mha/masks.hpp"

#include <cstdlib>
#include <string>

#include "mha/errors.hpp"

namespace mha {

HeadStack sliding_window_mask(Index n, Index m, Index window, bool causal) {
  if (n < 1 || m < 1) {
    throw shape_error("sliding_window_mask needs n >= 1 and m >= 1, got n=" + std::to_string(n) +
                      ", m=" + std::to_string(m));
  }
  if (window < 0) {
    throw shape_error("sliding window must be >= 0 (keys |i - j| <= window), got " +
                      std::to_string(window));
  }
  if (n > limits::max_tokens || m > limits::max_tokens) {
    throw limit_error("sliding_window_mask: n=" + std::to_string(n) + ", m=" + std::to_string(m) +
                      " exceed the limit of " + std::to_string(limits::max_tokens) + " tokens");
  }
  HeadStack mask(1, n, m, 0.0f);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < m; ++j) {
      const bool outside = std::abs(i - j) > window || (causal && j > i);
      mask(0, i, j) = outside ? 1.0f : 0.0f;
    }
  }
  return mask;
}

}  // namespace mha
