// The check that a stack of numbers is attention weights: the shape within mha::limits, every
// entry finite and >= 0, every row a distribution or all zero. Used by the readers of exported
// weights (formats) and by the head analysis alike.
//
// Shape legend (as attention.hpp): h = num_heads, n = query tokens (rows), m = key tokens.
#pragma once

#include <string>

#include "mha/attention.hpp"

namespace mha {

/// Tolerance of validate_attention_weights on a row sum: |sum - 1| <= 1e-3. Wide enough for
/// weights exported in float16 (each entry rounded to 2^-11 relative: the sum moves < 5e-4).
constexpr double attention_row_sum_tolerance = 1e-3;

/// Checks that `weights` is an attention-weight stack: at least one head, row and key, within
/// mha::limits (h <= max_num_heads, n and m <= max_tokens, h*n*m <= max_weight_entries); every
/// entry finite and >= 0; every row summing to 1 within `tolerance`, or all zero (a fully masked
/// row, as the core returns it).
/// `what` names the stack in messages, e.g. "attn_weights" or "layer 1".
/// Throws shape_error (an empty dimension), limit_error (beyond mha::limits), value_error naming
/// head, row, key and value, e.g. "attn_weights: head 1, row 3 sums to 0.875; every row must sum
/// to 1 (within 0.001) or be all 0 (a fully masked row)" or "attn_weights: head 0, row 2, key 4
/// holds NaN".
void validate_attention_weights(const HeadStack& weights, const std::string& what = "attn_weights",
                                double tolerance = attention_row_sum_tolerance);

}  // namespace mha
