// UTF-8 decoding for the models' text input (the date model's characters, the English model's
// tokens). RFC 3629: 1 to 4 bytes per code point; overlong forms, surrogates (U+D800..U+DFFF)
// and code points above U+10FFFF are invalid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mha {

/// Decodes the code point starting at byte i of s (i < s.size()) into *cp.
/// Returns its byte length (1 to 4), or 0 when the bytes at i are not valid UTF-8 (*cp is then
/// left unspecified).
inline std::size_t utf8_decode(const std::string& s, std::size_t i, std::uint32_t* cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  std::uint32_t v = 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    v = c & 0x1Fu;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    v = c & 0x0Fu;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    v = c & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (byte(i + k) & 0x3Fu);
  }
  const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < min_cp[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

}  // namespace mha
