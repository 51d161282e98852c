// Internal helpers shared by the core's .cpp files: shape strings for messages, finiteness checks.
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <string>

#include "mha/errors.hpp"

namespace mha::detail {

/// "(2, 3)" / "(2, 3, 4)": shapes in error messages, as numpy prints them.
inline std::string shape_str(Eigen::Index a, Eigen::Index b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}
inline std::string shape_str(Eigen::Index a, Eigen::Index b, Eigen::Index c) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ")";
}

/// Throws value_error naming `name`, the first non-finite entry's position and value.
template <typename Derived>
void expect_finite(const char* name, const Eigen::DenseBase<Derived>& x) {
  if (x.size() == 0 || x.allFinite()) return;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
      const auto v = x(r, c);
      if (!std::isfinite(v)) {
        const std::string what = std::isnan(v) ? "NaN" : (v > 0 ? "+inf" : "-inf");
        const std::string where =
            Derived::IsVectorAtCompileTime ? "[" + std::to_string(r + c) + "]" : shape_str(r, c);
        throw value_error(std::string(name) + " holds " + what + " at " + where +
                          "; every value must be finite");
      }
    }
  }
}

/// Throws value_error when an intermediate computed from finite inputs is no longer finite
/// (float32 overflow), naming the quantity and the first position.
template <typename Derived>
void expect_no_overflow(const char* quantity, const Eigen::DenseBase<Derived>& x) {
  if (x.allFinite()) return;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
      if (!std::isfinite(x(r, c))) {
        throw value_error(std::string(quantity) + " overflows float32 at " + shape_str(r, c) +
                          ": inputs or weights are too large in magnitude");
      }
    }
  }
}

/// The error of a score plus a finite float attn_mask entry outside float32's range: such a
/// sum is neither a finite score nor a mask (only -inf or a boolean mask masks a key), so both
/// the fast path and the reference refuse it.
inline value_error mask_overflow_error(Eigen::Index head, Eigen::Index query) {
  return value_error("score + attn_mask overflows float32 at head " + std::to_string(head) +
                     ", query " + std::to_string(query) +
                     "; keep float mask values finite and moderate (or -inf to mask)");
}

}  // namespace mha::detail
