// numpy's legacy RandomState (MT19937 + legacy Gaussian), bit for bit. See numpy_random.hpp.
// Compiled with -ffp-contract=off (CMakeLists.txt): a fused multiply-add in x1*x1 + x2*x2 would
// change which pairs the polar method rejects, and so every later draw.
#include "mha/numpy_random.hpp"

#include <cmath>
#include <string>

namespace mha {

namespace {
constexpr int kStateLen = 624;
constexpr int kShift = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;
}  // namespace

NumpyRandomState::NumpyRandomState(std::uint32_t seed) { this->seed(seed); }

void NumpyRandomState::seed(std::uint32_t seed) {
  // numpy mt19937_seed (Knuth's init_genrand), used by np.random.seed(int).
  std::uint32_t s = seed;
  for (int pos = 0; pos < kStateLen; ++pos) {
    mt_[static_cast<std::size_t>(pos)] = s;
    s = 1812433253U * (s ^ (s >> 30)) + static_cast<std::uint32_t>(pos + 1);
  }
  pos_ = kStateLen;
  has_gauss_ = false;
  gauss_ = 0.0;
}

std::uint32_t NumpyRandomState::next_uint32() {
  if (pos_ == kStateLen) {  // regenerate the whole state (mt19937_gen)
    for (int i = 0; i < kStateLen; ++i) {
      const std::uint32_t y = (mt_[static_cast<std::size_t>(i)] & kUpperMask) |
                              (mt_[static_cast<std::size_t>((i + 1) % kStateLen)] & kLowerMask);
      mt_[static_cast<std::size_t>(i)] = mt_[static_cast<std::size_t>((i + kShift) % kStateLen)] ^
                                         (y >> 1) ^ ((y & 1U) != 0 ? kMatrixA : 0U);
    }
    pos_ = 0;
  }
  std::uint32_t y = mt_[static_cast<std::size_t>(pos_++)];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

double NumpyRandomState::random_sample() {
  // mt19937_next_double: 27 + 26 bits.
  const std::uint32_t a = next_uint32() >> 5;
  const std::uint32_t b = next_uint32() >> 6;
  return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
}

double NumpyRandomState::standard_normal() {
  // legacy_gauss: Marsaglia's polar method; the second variate is cached for the next call.
  if (has_gauss_) {
    const double cached = gauss_;
    has_gauss_ = false;
    gauss_ = 0.0;
    return cached;
  }
  double x1 = 0.0, x2 = 0.0, r2 = 0.0;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

RowMatrixXd NumpyRandomState::randn(Index rows, Index cols) {
  if (rows < 0 || cols < 0) {
    throw shape_error("randn(" + std::to_string(rows) + ", " + std::to_string(cols) +
                      "): sizes must be non-negative");
  }
  RowMatrixXd out(rows, cols);
  for (Index r = 0; r < rows; ++r) {
    for (Index c = 0; c < cols; ++c) out(r, c) = standard_normal();
  }
  return out;
}

}  // namespace mha
