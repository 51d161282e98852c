// numpy's legacy random source, reproduced bit for bit: np.random.seed(s) followed by
// np.random.randn(...), np.random.random_sample(...), as a course notebook calls them.
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
  std::uint32_t next_uint32();
  /// As np.random.random_sample(): uniform in [0, 1) with 53 random bits.
  double random_sample();
  /// As one draw of np.random.randn() (standard normal, legacy polar method).
  double standard_normal();
  /// As np.random.randn(rows, cols): rows * cols draws, filled row-major.
  /// Throws shape_error when rows or cols is negative.
  RowMatrixXd randn(Index rows, Index cols);

 private:
  std::array<std::uint32_t, 624> mt_{};
  int pos_ = 0;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace mha
