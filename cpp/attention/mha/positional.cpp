// Sinusoidal positional encoding (attention.hpp).
#include <cmath>
#include <mutex>
#include <string>

#include "mha/attention.hpp"
#include "mha/detail/format.hpp"

namespace mha {

using detail::shape_str;

// ---------------------------------------------------------------------------------------------
// Positional encoding

RowMatrixXd sinusoidal_positional_encoding_f64(Index n, Index d) {
  if (n <= 0 || d <= 0) {
    throw shape_error("positional encoding of " + shape_str(n, d) + ": n and d must be positive");
  }
  if (n > limits::max_tokens || d > limits::max_d_model) {
    throw limit_error("positional encoding of " + shape_str(n, d) + " exceeds the limits (" +
                      std::to_string(limits::max_tokens) + " tokens, d_model " +
                      std::to_string(limits::max_d_model) + ")");
  }
  // Rows do not depend on n: the rows computed for this d are kept (up to kPeCacheEntries), and a
  // request for more rows computes only the new ones. Typing on the page changes n by a token at
  // a time, and recomputing n x d sines and cosines would be a large share of each update.
  constexpr Index kPeCacheEntries = Index{1} << 21;  // 16 MiB of doubles
  static Index cached_d = 0;
  static RowMatrixXd& cached = *new RowMatrixXd();  // never destroyed: no exit-time work
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // wasm builds have one thread
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
#endif
  // Row-major: the first rows are the first n * d doubles.
  const Index from = cached_d == d ? std::min(n, cached.rows()) : 0;
  RowMatrixXd pe(n, d);
  std::copy_n(cached.data(), from * d, pe.data());
  if (from == n) return pe;
  // Columns 2i and 2i + 1 share the angle pos / 10000^(2i/d); the power is taken once per pair
  // of columns, not per entry (the same doubles as per entry, so the same angles).
  for (Index two_i = 0; two_i < d; two_i += 2) {
    const double denominator =
        std::pow(10000.0, static_cast<double>(two_i) / static_cast<double>(d));
    for (Index pos = from; pos < n; ++pos) {
      const double angle = static_cast<double>(pos) / denominator;
      pe(pos, two_i) = std::sin(angle);
      if (two_i + 1 < d) pe(pos, two_i + 1) = std::cos(angle);
    }
  }
  if (n * d <= kPeCacheEntries) {
    cached_d = d;
    cached = pe;
  }
  return pe;
}

RowMatrixXf sinusoidal_positional_encoding(Index n, Index d) {
  return sinusoidal_positional_encoding_f64(n, d).cast<float>();
}

}  // namespace mha
