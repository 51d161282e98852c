// libFuzzer target: the subword tokenizer (cpp/models/mha/subword_tokenizer.*).
//
// Byte 0 is flags, the rest is the input:
//   bit 0 clear: the rest is text, encoded by the English model's tokenizer
//                (tests/fixtures/english_subword_tokenizer.json, read once);
//   bit 0 set:   the rest is a tokenizer description (JSON) for SubwordTokenizer::from_json,
//                then a fixed text encoded by it.
//
// Expected outcomes: a typed mha::error (invalid UTF-8, text over the limit, a refused
// description), or an encoding whose vectors all have one entry per piece, ids inside the
// vocabulary with the vocabulary's piece text, never a control piece nor <unk> when
// byte_fallback, spans that follow
// each other without gap inside the text, word_index rising from 0 in steps of 0 or 1 to the
// last word, every word the text of its span, and decode(ids) equal to the
// prepared text once spaces (and written U+2581) are taken out of both. Findings: a crash, a
// sanitizer report, an exception that is not an mha::error, or a violated invariant.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "mha/english_tokenizer.hpp"
#include "mha/subword_tokenizer.hpp"

namespace {

const mha::SubwordTokenizer& english() {
  static const mha::SubwordTokenizer t = [] {
    std::ifstream in(std::string(MHA_FIXTURES_DIR) + "/english_subword_tokenizer.json",
                     std::ios::binary);
    if (!in) mha_fuzz::finding("cannot read tests/fixtures/english_subword_tokenizer.json");
    return mha::SubwordTokenizer::from_json(
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  }();
  return t;
}

std::string without_spaces(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ') continue;
    if (s.compare(i, 3, "\xE2\x96\x81") == 0) {
      i += 2;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

void check(const mha::SubwordTokenizer& t, const std::string& text) {
  const mha::SubwordEncoding e = t.encode(text);
  const std::size_t p = e.ids.size();
  if (e.pieces.size() != p || e.spans.size() != p || e.word_index.size() != p)
    mha_fuzz::finding("per-piece vectors of different lengths", double(p));
  const mha::SubwordTokenizerSpec& spec = t.spec();
  for (std::size_t i = 0; i < p; ++i) {
    const int id = e.ids[i];
    if (id < 0 || static_cast<std::size_t>(id) >= t.vocab_size())
      mha_fuzz::finding("an id outside the vocabulary", id);
    if (e.pieces[i] != spec.pieces[static_cast<std::size_t>(id)])
      mha_fuzz::finding("a piece that is not its id's text", id);
    const mha::PieceType type = spec.types[static_cast<std::size_t>(id)];
    if (type == mha::PieceType::control || (type == mha::PieceType::unknown && spec.byte_fallback))
      mha_fuzz::finding("a control piece, or an unknown one with byte fallback", id);
    const mha::ByteSpan s = e.spans[i];
    if (s.begin > s.end || s.end > text.size())
      mha_fuzz::finding("a span outside the text", double(s.begin), double(s.end));
    if (i > 0 && s.begin != e.spans[i - 1].end)
      mha_fuzz::finding("a span that does not begin where the last one ends", double(i));
    const int w = e.word_index[i];
    if (w < 0 || static_cast<std::size_t>(w) >= e.words.size())
      mha_fuzz::finding("word_index out of range", w);
    const int step = i == 0 ? w : w - e.word_index[i - 1];
    if (step != 0 && step != 1) mha_fuzz::finding("word_index does not rise by 0 or 1", w);
  }
  if (p > 0 && static_cast<std::size_t>(e.word_index.back()) + 1 != e.words.size())
    mha_fuzz::finding("a word without a piece", double(e.words.size()));
  if (e.word_spans.size() != e.words.size()) mha_fuzz::finding("word_spans and words differ");
  for (std::size_t k = 0; k < e.words.size(); ++k) {
    const mha::ByteSpan s = e.word_spans[k];
    if (s.begin > s.end || s.end > text.size() || text.substr(s.begin, s.end - s.begin) != e.words[k])
      mha_fuzz::finding("a word that is not the text of its span", double(k));
  }
  if (spec.byte_fallback &&
      without_spaces(t.decode(e.ids)) != without_spaces(mha::english_lookup_form(text))) {
    mha_fuzz::finding("decode(encode(text)) is not the prepared text");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if ((data[0] & 1) == 0) {
      check(english(), rest);
    } else {
      const mha::SubwordTokenizer t = mha::SubwordTokenizer::from_json(rest);
      check(t, "The cat\xE2\x80\x99s  caf\xC3\xA9 \t\xF0\x9F\x98\x80 42!");
    }
  } catch (const mha::error&) {
    // a typed refusal is an expected outcome
  }
  return 0;
}
