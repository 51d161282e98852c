// Masks built from a rule rather than given cell by cell, as AttentionMasks::attn_mask inputs.
// Shapes: n = query tokens, m = key tokens.
#pragma once

#include "mha/attention.hpp"

namespace mha {

/// Sliding-window mask (1, n, m), boolean in PyTorch polarity (1 = may NOT attend): query i may
/// attend key j iff |i - j| <= window, and, when `causal`, also j <= i (so keys i-window .. i).
/// Longformer's local attention (Beltagy et al. 2020) with window w = one-sided width.
/// window >= max(n, m) - 1 masks nothing (except the causal part). For n != m, i and j are indices.
/// Throws shape_error (n or m < 1, window < 0), limit_error (beyond mha::limits).
HeadStack sliding_window_mask(Index n, Index m, Index window, bool causal = false);

}  // namespace mha
