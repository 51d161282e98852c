// xtl::half_float (IEEE 754 binary16), included portably.
//
// xtl/xhalf_float.hpp (half 1.12 inside) uses the floating-point exception flags of <cfenv>.
// Emscripten's musl <fenv.h> defines FE_ALL_EXCEPT but not FE_INEXACT and friends, so the header
// does not compile there. The flags get the values half's own fallback uses; they only select
// which flag half would raise on an inexact conversion, and we only widen half to float (exact).
#pragma once

#include <cfenv>

#ifndef FE_INVALID
#define FE_INVALID 0x10
#endif
#ifndef FE_DIVBYZERO
#define FE_DIVBYZERO 0x08
#endif
#ifndef FE_OVERFLOW
#define FE_OVERFLOW 0x04
#endif
#ifndef FE_UNDERFLOW
#define FE_UNDERFLOW 0x02
#endif
#ifndef FE_INEXACT
#define FE_INEXACT 0x01
#endif

#include <xtl/xhalf_float.hpp>

#include <cstdint>
#include <cstring>

namespace mha::detail {

/// The float value of an IEEE binary16 bit pattern (exact: every half is a float).
inline float half_bits_to_float(std::uint16_t bits) {
  xtl::half_float h;
  static_assert(sizeof(h) == sizeof(bits), "xtl::half_float is 16 bits");
  std::memcpy(static_cast<void*>(&h), &bits, sizeof bits);  // half holds exactly its 16 bits
  return static_cast<float>(h);
}

}  // namespace mha::detail
