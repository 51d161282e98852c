// numpy's legacy random source, reproduced bit for bit: np.random.seed(s) followed by
// np.random.randn(...), np.random.random_sample(...), as a course notebook calls them. Natively
// (glibc's log, as numpy's) every draw; in WebAssembly musl's log() puts about 4 in 100,000
// normal draws 1-2 ulp away (docs/js-api.md, mod.randn). The uniforms are exact everywhere.
//
// Source: numpy/random/src/mt19937/ (MT19937, Matsumoto & Nishimura 1998, init_genrand seeding
// for an integer seed) and numpy/random/src/legacy/legacy-distributions.c (legacy_gauss: the
// Marsaglia polar method, which caches the second variate of each pair).
#pragma once

#include <array>
#include <cstdint>

#include "mha/attention.hpp"

namespace mha {

/// The state behind np.random.seed / np.random.randn (numpy.random.RandomState, MT19937).
class NumpyRandomState {
 public:
  /// As np.random.seed(seed) with an integer seed in [0, 2^32 - 1].
  explicit NumpyRandomState(std::uint32_t seed);
  void seed(std::uint32_t seed);

  /// Next raw 32-bit MT19937 output.
  std::uint32_t next_uint32() {
    if (pos_ == kStateLen) regenerate();
    std::uint32_t y = mt_[static_cast<std::size_t>(pos_++)];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
  }
  /// As np.random.random_sample(): uniform in [0, 1) with 53 random bits (mt19937_next_double:
  /// 27 + 26 bits).
  __attribute__((always_inline)) double random_sample() {
    const std::uint32_t a = next_uint32() >> 5;
    const std::uint32_t b = next_uint32() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
  }
  /// As one draw of np.random.randn() (standard normal, legacy polar method).
  double standard_normal();
  /// out[0 .. count) = the next count draws of standard_normal(), as count calls would give them
  /// (a cached second variate first; an odd last draw leaves its pair's second cached), without
  /// the per-draw branch on the cached variate: the page draws millions for a new seed.
  void standard_normals(double* out, Index count);
  /// As np.random.randn(rows, cols): rows * cols draws, filled row-major.
  /// Throws shape_error when rows or cols is negative.
  RowMatrixXd randn(Index rows, Index cols);

  static constexpr int kStateLen = 624;

 private:
  /// The next 624 words of state (mt19937_gen), in three loops without a modulo (the same words
  /// as the one-loop form with (i + 1) % 624 and (i + 397) % 624: tests/core/numpy_random_test.cpp
  /// checks both over several regenerations).
  void regenerate();
  double polar_pair(double& second, bool& cached);

  std::array<std::uint32_t, kStateLen> mt_{};
  int pos_ = 0;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace mha
