// The page's token rule on UTF-8 text (english_tokenizer.hpp): a direct transcription of
// tokenize.js's regular expression
//   [\p{L}\p{N}\p{M}]+(?:['’][\p{L}\p{N}\p{M}]+)*
//   | \p{Regional_Indicator}{2}
//   | [^\s\p{L}\p{N}\p{Cf}](?:[\p{M}\p{Emoji_Modifier}\uFE0F]|\u200D[^\s])*
// tried in that order at each code point; a code point that starts none of them (a space or a
// format character) is skipped.
#include "mha/english_tokenizer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iterator>

#include "mha/errors.hpp"
#include "mha/utf8.hpp"

namespace mha {

namespace {

enum class TokenClass : std::uint8_t {
  other,
  space,
  format,
  mark,
  word,
  regional_indicator,
  emoji_modifier
};

struct ClassRange {
  std::uint32_t first, last;
  TokenClass cls;
};

constexpr ClassRange class_ranges[] = {
#include "english_token_classes.inc"
};

TokenClass token_class(std::uint32_t cp) {
  const auto it = std::upper_bound(std::begin(class_ranges), std::end(class_ranges), cp,
                                   [](std::uint32_t c, const ClassRange& r) { return c < r.first; });
  if (it == std::begin(class_ranges)) return TokenClass::other;
  const ClassRange& r = *std::prev(it);
  return cp <= r.last ? r.cls : TokenClass::other;
}

/// The text as code points with their byte offsets (offsets has one more entry: the end).
struct Decoded {
  std::vector<std::uint32_t> cps;
  std::vector<std::size_t> offsets;
};

Decoded decode(const std::string& text) {
  Decoded d;
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = utf8_decode(text, i, &cp);
    if (n == 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      throw value_error(std::string("text is not valid UTF-8: byte ") + hex + " at offset " +
                        std::to_string(i));
    }
    d.cps.push_back(cp);
    d.offsets.push_back(i);
    i += n;
  }
  d.offsets.push_back(text.size());
  return d;
}

bool is_word(TokenClass c) { return c == TokenClass::word || c == TokenClass::mark; }

}  // namespace

std::vector<std::string> english_tokenize(const std::string& text) {
  const Decoded d = decode(text);
  const std::size_t n = d.cps.size();
  std::vector<TokenClass> cls(n);
  for (std::size_t i = 0; i < n; ++i) cls[i] = token_class(d.cps[i]);
  const auto is_apostrophe = [&](std::size_t i) { return d.cps[i] == 0x27 || d.cps[i] == 0x2019; };

  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < n;) {
    std::size_t end = i;
    if (is_word(cls[i])) {  // 1. a word, joined runs included
      while (end < n && is_word(cls[end])) ++end;
      while (end + 1 < n && is_apostrophe(end) && is_word(cls[end + 1])) {
        end += 1;
        while (end < n && is_word(cls[end])) ++end;
      }
    } else if (cls[i] == TokenClass::regional_indicator && i + 1 < n &&
               cls[i + 1] == TokenClass::regional_indicator) {  // 2. a flag
      end = i + 2;
    } else if (cls[i] != TokenClass::space && cls[i] != TokenClass::format) {  // 3. a symbol
      end = i + 1;
      for (;;) {
        if (end < n && (cls[end] == TokenClass::mark || cls[end] == TokenClass::emoji_modifier ||
                        d.cps[end] == 0xFE0F)) {
          end += 1;
        } else if (end + 1 < n && d.cps[end] == 0x200D && cls[end + 1] != TokenClass::space) {
          end += 2;
        } else {
          break;
        }
      }
    } else {  // a space or a format character separates
      ++i;
      continue;
    }
    tokens.push_back(text.substr(d.offsets[i], d.offsets[end] - d.offsets[i]));
    i = end;
  }
  return tokens;
}

std::string english_lookup_form(const std::string& token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    const char c = token[i];
    if (c >= 'A' && c <= 'Z') {
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else if (token.compare(i, 3, "\xE2\x80\x99") == 0) {  // U+2019
      out.push_back('\'');
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace mha
