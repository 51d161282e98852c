// Shared checks of the fuzz targets (tests/fuzz/): what a successful forward pass must satisfy.
// A violated invariant is a finding: the target prints what broke and calls abort(), which
// libFuzzer (and the corpus replay driver) report as a crash.
//
// Shape legend (as attention.hpp): n = query tokens, m = key tokens, d = d_model, h = num_heads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/safetensors.hpp"

namespace mha_fuzz {

/// For the model-file targets: a random mutation almost never keeps a valid hash, so a flag
/// asks for the checksum to be re-stamped and mutated files reach the checks behind it.
/// Writes the data section's XXH64 over the header's "xxh64":"<16 hex>" value, if present.
inline void restamp_checksum(std::vector<std::uint8_t>& file) {
  if (file.size() < 8) return;
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | file[static_cast<std::size_t>(i)];
  if (header_len > file.size() - 8) return;
  const std::size_t data_begin = 8 + static_cast<std::size_t>(header_len);
  const std::string hash = mha::xxh64_hex(file.data() + data_begin, file.size() - data_begin);
  const std::string header(file.begin() + 8,
                           file.begin() + static_cast<std::ptrdiff_t>(data_begin));
  const std::string key = "\"xxh64\":\"";
  const std::size_t at = header.find(key);
  if (at == std::string::npos || at + key.size() + hash.size() > header.size()) return;
  std::memcpy(file.data() + 8 + at + key.size(), hash.data(), hash.size());
}

/// As restamp_checksum, for the English model, whose "xxh64" covers the data section, tensor
/// entries and other metadata (mha::safetensors_content_xxh64). A file the safetensors parser
/// refuses is left as it is (the loader then reports the container).
inline void restamp_content_checksum(std::vector<std::uint8_t>& file) {
  std::string hash;
  try {
    hash = mha::safetensors_content_xxh64(mha::Safetensors::parse(file), "xxh64");
  } catch (const mha::error&) {
    return;
  }
  const std::string key = "\"xxh64\":\"";
  const auto at = std::search(file.begin(), file.end(), key.begin(), key.end());
  if (at == file.end() || file.end() - at < static_cast<std::ptrdiff_t>(key.size() + hash.size())) {
    return;
  }
  std::copy(hash.begin(), hash.end(), at + static_cast<std::ptrdiff_t>(key.size()));
}

/// Prints `what` and aborts: the fuzzer records the input as a crash.
[[noreturn]] inline void finding(const char* what, double a = 0.0, double b = 0.0) {
  std::fprintf(stderr, "FUZZ FINDING: %s (%.9g, %.9g)\n", what, a, b);
  std::abort();
}

template <typename Derived>
void require_finite(const char* what, const Eigen::DenseBase<Derived>& x) {
  if (x.size() > 0 && !x.allFinite()) finding(what);
}

/// The contract of AttentionResult (attention.hpp): output (n, d) and weights (h, n, m) finite,
/// weights in [0, 1]; a row flagged in fully_masked_rows is all 0, every other row sums to 1
/// (within the float32 rounding of a sum of m terms and one division).
inline void check_result(const mha::AttentionResult& r, mha::Index h, mha::Index n, mha::Index m,
                         mha::Index d) {
  if (r.output.rows() != n || r.output.cols() != d) finding("output has the wrong shape");
  if (r.attn_weights.heads() != h || r.attn_weights.rows() != n || r.attn_weights.cols() != m) {
    finding("attn_weights has the wrong shape");
  }
  if (static_cast<mha::Index>(r.fully_masked_rows.size()) != h * n) {
    finding("fully_masked_rows has the wrong size");
  }
  require_finite("output holds NaN or inf", r.output);
  const double row_tol = (2.0 * static_cast<double>(m) + 4.0) * 0x1p-24;
  for (mha::Index i = 0; i < h; ++i) {
    const auto A = r.attn_weights.head(i);
    require_finite("attn_weights hold NaN or inf", A);
    for (mha::Index row = 0; row < n; ++row) {
      const bool masked = r.fully_masked_rows[static_cast<std::size_t>(i * n + row)] != 0;
      double sum = 0.0;
      for (mha::Index j = 0; j < m; ++j) {
        const float a = A(row, j);
        if (!(a >= 0.0f && a <= 1.0f)) finding("a weight lies outside [0, 1]", a);
        if (masked && a != 0.0f) finding("a fully masked row holds a nonzero weight", a);
        sum += a;
      }
      if (!masked && std::fabs(sum - 1.0) > row_tol) finding("a row does not sum to 1", sum);
    }
  }
}

/// A row is reported fully masked exactly when every key of it is masked: a boolean mask, the
/// causal mask, key padding or an additive -inf (AttentionMasks::term is -inf). A finite mask
/// value never masks, whatever float32 would make of the score plus it.
inline void check_masked_rows(const mha::AttentionResult& r, const mha::AttentionMasks& masks,
                              mha::Index h, mha::Index n, mha::Index m) {
  for (mha::Index i = 0; i < h; ++i) {
    for (mha::Index row = 0; row < n; ++row) {
      bool every_key_masked = true;
      for (mha::Index j = 0; j < m && every_key_masked; ++j) {
        every_key_masked = masks.term(i, row, j) == -std::numeric_limits<float>::infinity();
      }
      const bool flagged = r.fully_masked_rows[static_cast<std::size_t>(i * n + row)] != 0;
      if (flagged != every_key_masked) {
        finding(flagged ? "a row with a key the masks leave open is reported fully masked"
                        : "a row whose every key is masked is not reported fully masked",
                static_cast<double>(i), static_cast<double>(row));
      }
    }
  }
}

}  // namespace mha_fuzz
