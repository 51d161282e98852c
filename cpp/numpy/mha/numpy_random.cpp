// numpy's legacy RandomState (MT19937 + legacy Gaussian), bit for bit. See numpy_random.hpp.
// Compiled with -ffp-contract=off (CMakeLists.txt): a fused multiply-add in x1*x1 + x2*x2 would
// change which pairs the polar method rejects, and so every later draw.
#include "mha/numpy_random.hpp"

#include <cmath>
#include <string>

namespace mha {

namespace {
constexpr int kShift = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfU;
constexpr std::uint32_t kUpperMask = 0x80000000U;
constexpr std::uint32_t kLowerMask = 0x7fffffffU;

/// One word of mt19937_gen: from words i and i + 1 of the state (y) and word i + 397 (m).
inline std::uint32_t twist(std::uint32_t m, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t y = (a & kUpperMask) | (b & kLowerMask);
  return m ^ (y >> 1) ^ ((y & 1U) != 0 ? kMatrixA : 0U);
}
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

void NumpyRandomState::regenerate() {
  std::uint32_t* mt = mt_.data();
  constexpr int kN = kStateLen, kM = kShift;
  int i = 0;
  for (; i < kN - kM; ++i) mt[i] = twist(mt[i + kM], mt[i], mt[i + 1]);
  for (; i < kN - 1; ++i) mt[i] = twist(mt[i + kM - kN], mt[i], mt[i + 1]);
  mt[kN - 1] = twist(mt[kM - 1], mt[kN - 1], mt[0]);
  pos_ = 0;
}

/// One pair of legacy_gauss (Marsaglia's polar method): returns f * x2 and puts f * x1, the
/// variate numpy caches for the next call, in `second` (and sets `cached`).
inline double NumpyRandomState::polar_pair(double& second, bool& cached) {
  double x1 = 0.0, x2 = 0.0, r2 = 0.0;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  second = f * x1;
  cached = true;
  return f * x2;
}

double NumpyRandomState::standard_normal() {
  // legacy_gauss: Marsaglia's polar method; the second variate is cached for the next call.
  if (has_gauss_) {
    const double cached = gauss_;
    has_gauss_ = false;
    gauss_ = 0.0;
    return cached;
  }
  return polar_pair(gauss_, has_gauss_);
}

void NumpyRandomState::standard_normals(double* out, Index count) {
  Index i = 0;
  if (count > 0 && has_gauss_) out[i++] = standard_normal();
  bool unused = false;
  for (; i + 2 <= count; i += 2) out[i] = polar_pair(out[i + 1], unused);
  if (i < count) out[i] = standard_normal();
}

RowMatrixXd NumpyRandomState::randn(Index rows, Index cols) {
  if (rows < 0 || cols < 0) {
    throw shape_error("randn(" + std::to_string(rows) + ", " + std::to_string(cols) +
                      "): sizes must be non-negative");
  }
  RowMatrixXd out(rows, cols);
  standard_normals(out.data(), out.size());
  return out;
}

}  // namespace mha
