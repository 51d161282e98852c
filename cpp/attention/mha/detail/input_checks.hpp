// The checks of one forward call's inputs and the vectorised finiteness scan they use, shared by
// the input checks (attention_inputs.cpp) and the forward pass (attention.cpp).
#pragma once

#include "mha/attention.hpp"
#include "mha/kernels.hpp"

namespace mha::detail {

/// Whether every entry of a (rows, cols) row-major block with row stride `stride` is finite:
/// kernels::all_finite row by row (vectorised; Eigen 3.4's allFinite is scalar in WebAssembly).
/// The detail:: checks of format.hpp then name the first bad entry.
inline bool rows_finite(const float* p, Index rows, Index cols, Index stride) {
  for (Index r = 0; r < rows; ++r) {
    if (!kernels::all_finite(p + r * stride, cols)) return false;
  }
  return true;
}

inline bool rows_finite(const MatrixRef& x) {
  return rows_finite(x.data(), x.rows(), x.cols(), x.outerStride());
}

/// Shapes and limits of one call's inputs (the first half of validate_forward_inputs).
void check_input_shapes(const AttentionConfig& config, const MatrixRef& query, const MatrixRef& key,
                        const MatrixRef& value);

/// Finiteness of the inputs, masks and options (the second half of validate_forward_inputs).
void check_input_values(const AttentionConfig& config, const MatrixRef& query, const MatrixRef& key,
                        const MatrixRef& value, const AttentionMasks& masks,
                        const ForwardOptions& options);

}  // namespace mha::detail
