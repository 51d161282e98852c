// The subword tokenizer (cpp/models/mha/subword_tokenizer.*) against the sentencepiece library:
// ids and piece offsets of every text of tests/fixtures/english_subword_golden.json (11,511
// held-out sentences, edge cases, seeded random strings; scripts/fixtures/make_subword_golden.py)
// exactly; words and word_index on hand-worked texts; decoding back to the normalized text; the
// typed errors of bad descriptions, invalid UTF-8 and over-long text.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/english_tokenizer.hpp"
#include "mha/errors.hpp"
#include "mha/subword_tokenizer.hpp"

namespace {

using mha::ByteSpan;
using mha::SubwordTokenizer;
using mha_test::json;
using mha_test::message_of;

const std::string fixtures = MHA_FIXTURES_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const std::string& description_text() {
  static const std::string text = read_text(fixtures + "/english_subword_tokenizer.json");
  return text;
}

const SubwordTokenizer& tokenizer() {
  static const SubwordTokenizer t = SubwordTokenizer::from_json(description_text());
  return t;
}

const json& golden() {
  static const json doc = mha_test::load_fixture("english_subword_golden.json");
  return doc;
}

std::vector<long> integers(const std::string& s) {
  std::istringstream in(s);
  return {std::istream_iterator<long>(in), std::istream_iterator<long>()};
}

/// The golden spans "begin length length ..." as (begin, end) pairs.
std::vector<ByteSpan> golden_spans(const std::string& s) {
  const std::vector<long> v = integers(s);
  std::vector<ByteSpan> spans;
  if (v.empty()) return spans;
  std::size_t at = static_cast<std::size_t>(v[0]);
  for (std::size_t i = 1; i < v.size(); ++i) {
    spans.push_back({at, at + static_cast<std::size_t>(v[i])});
    at = spans.back().end;
  }
  return spans;
}

/// What SentencePiece's normalizer makes of prepared text, written plainly (without the
/// dummy prefix, U+2581 read back as a space): what decode() must give back.
std::string normalized_for_decode(const std::string& text) {
  const std::string bar = "\xE2\x96\x81";
  std::string prepared = mha::english_lookup_form(text);
  std::string s;  // leading spaces dropped, runs of spaces kept as one, spaces as U+2581
  bool prev_space = true;
  for (const char c : prepared) {
    if (c == ' ') {
      if (!prev_space) s += bar;
      prev_space = true;
    } else {
      s += c;
      prev_space = false;
    }
  }
  if (!s.empty()) s = bar + s;
  while (s.size() >= 3 && s.compare(s.size() - 3, 3, bar) == 0) s.resize(s.size() - 3);
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 3, bar) == 0) {
      out += ' ';
      i += 3;
    } else {
      out += s[i++];
    }
  }
  if (!out.empty()) out.erase(0, 1);
  return out;
}

std::string describe(const std::vector<int>& ids) {
  std::string s;
  for (const int id : ids) s += std::to_string(id) + " ";
  return s;
}

/// Checks one golden text; returns whether ids and spans both matched.
bool matches(const std::string& label, const std::string& text, const std::string& ids,
             const std::string& spans) {
  const mha::SubwordEncoding e = tokenizer().encode(text);
  const std::vector<long> want = integers(ids);
  const std::vector<int> want_ids(want.begin(), want.end());
  const bool ids_ok = e.ids == want_ids;
  const bool spans_ok = e.spans == golden_spans(spans);
  EXPECT_TRUE(ids_ok) << label << ": " << json(text).dump() << "\n  core:    " << describe(e.ids)
                      << "\n  library: " << ids;
  EXPECT_TRUE(spans_ok) << label << ": spans differ for " << json(text).dump();
  EXPECT_EQ(e.pieces.size(), e.ids.size());
  EXPECT_EQ(e.word_index.size(), e.ids.size());
  EXPECT_EQ(tokenizer().decode(e.ids), normalized_for_decode(text)) << label;
  return ids_ok && spans_ok;
}

TEST(SubwordTokenizer, ReadsTheDescription) {
  const SubwordTokenizer& t = tokenizer();
  EXPECT_EQ(t.vocab_size(), 4096u);
  EXPECT_EQ(golden().at("vocab_size").get<std::size_t>(), 4096u);
  EXPECT_EQ(t.spec().pieces[0], "<unk>");
  EXPECT_EQ(t.spec().types[0], mha::PieceType::unknown);
  EXPECT_EQ(t.spec().pieces[1], "<bos>");
  EXPECT_EQ(t.spec().types[1], mha::PieceType::control);
  EXPECT_EQ(t.spec().pieces[2], "<0x00>");
  EXPECT_EQ(t.spec().pieces[257], "<0xFF>");
  EXPECT_EQ(t.spec().types[257], mha::PieceType::byte);
  EXPECT_EQ(t.spec().types[258], mha::PieceType::normal);
}

TEST(SubwordTokenizer, EveryHeldOutSentenceAsTheLibrary) {
  const json& cases = golden().at("held_out");
  ASSERT_EQ(cases.size(), 11511u);
  std::size_t same = 0, pieces = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    same += matches("held_out[" + std::to_string(i) + "]", c[0], c[1], c[2]);
    pieces += integers(c[1]).size();
  }
  EXPECT_EQ(same, cases.size());
  std::cout << "[ golden   ] " << same << " of " << cases.size()
            << " held-out sentences identical to sentencepiece " << golden().at("sentencepiece")
            << " (ids and spans; " << pieces << " pieces)\n";
}

TEST(SubwordTokenizer, EveryEdgeCaseAsTheLibrary) {
  const json& cases = golden().at("edge_cases");
  ASSERT_GE(cases.size(), 300u);
  std::size_t same = 0;
  for (const json& c : cases) same += matches(c[0], c[1], c[2], c[3]);
  EXPECT_EQ(same, cases.size());
  std::cout << "[ golden   ] " << same << " of " << cases.size()
            << " edge cases identical to sentencepiece\n";
}

TEST(SubwordTokenizer, DecodesHeldOutSentencesToTheirPreparedText) {
  std::size_t exact = 0;
  for (const json& c : golden().at("held_out")) {
    const std::string text = c[0];
    const std::string prepared = mha::english_lookup_form(text);
    if (prepared.find("  ") != std::string::npos || prepared.front() == ' ' ||
        prepared.back() == ' ') {
      continue;
    }
    const std::vector<long> ids = integers(c[1]);
    EXPECT_EQ(tokenizer().decode(std::vector<int>(ids.begin(), ids.end())), prepared);
    ++exact;
  }
  EXPECT_GT(exact, 11000u);
}

TEST(SubwordTokenizer, SpansAndWordsOfAWorkedExample) {
  // Bytes: Hello 0-5, "," 5, spaces 6-7, World 8-13, U+2019 13-16, s 16, space 17, 12 18-20,
  // space 20, caf 21-24, é 24-26, space 26, U+1F600 27-31, ! 31.
  const std::string text = "Hello,  World\xE2\x80\x99s 12 caf\xC3\xA9 \xF0\x9F\x98\x80!";
  const mha::SubwordEncoding e = tokenizer().encode(text);
  const std::vector<std::string> pieces = {"\xE2\x96\x81hell",
                                           "o",
                                           ",",
                                           "\xE2\x96\x81world",
                                           "'",
                                           "s",
                                           "\xE2\x96\x81",
                                           "1",
                                           "2",
                                           "\xE2\x96\x81"
                                           "ca",
                                           "f",
                                           "<0xC3>",
                                           "<0xA9>",
                                           "\xE2\x96\x81",
                                           "<0xF0>",
                                           "<0x9F>",
                                           "<0x98>",
                                           "<0x80>",
                                           "!"};
  EXPECT_EQ(e.pieces, pieces);
  const std::vector<ByteSpan> spans = {{0, 4},   {4, 5},   {5, 6},   {6, 13},  {13, 16},
                                       {16, 17}, {17, 18}, {18, 19}, {19, 20}, {20, 23},
                                       {23, 24}, {24, 24}, {24, 26}, {26, 27}, {27, 27},
                                       {27, 27}, {27, 27}, {27, 31}, {31, 32}};
  EXPECT_EQ(e.spans, spans);
  const std::vector<std::string> words = {
      "Hello", ",", "World\xE2\x80\x99s", "12", "caf\xC3\xA9", "\xF0\x9F\x98\x80", "!"};
  EXPECT_EQ(e.words, words);
  const std::vector<ByteSpan> word_spans = {{0, 5},   {5, 6},   {8, 17}, {18, 20},
                                            {21, 26}, {27, 31}, {31, 32}};
  EXPECT_EQ(e.word_spans, word_spans);
  // The lone spaces (pieces 6 and 13) belong to the word after them.
  const std::vector<int> word_index = {0, 0, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6};
  EXPECT_EQ(e.word_index, word_index);
  EXPECT_EQ(tokenizer().decode(e.ids), "hello, world's 12 caf\xC3\xA9 \xF0\x9F\x98\x80!");
}

TEST(SubwordTokenizer, WordIndexAroundSeparators) {
  // A trailing space and tab: "▁" and <0x09> after the last word belong to it.
  mha::SubwordEncoding e = tokenizer().encode("the cat \t");
  ASSERT_EQ(e.words, (std::vector<std::string>{"the", "cat"}));
  EXPECT_EQ(e.word_index.back(), 1);
  EXPECT_EQ(e.pieces.back(), "<0x09>");
  EXPECT_EQ(e.spans.back(), (ByteSpan{8, 9}));
  // A zero-width joiner between words: its byte pieces belong to the word after it.
  e = tokenizer().encode(
      "a\xE2\x80\x8D"
      "b");
  ASSERT_EQ(e.words, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(e.pieces, (std::vector<std::string>{"\xE2\x96\x81"
                                                "a",
                                                "<0xE2>", "<0x80>", "<0x8D>", "b"}));
  EXPECT_EQ(e.word_index, (std::vector<int>{0, 1, 1, 1, 1}));
  // No page word at all: the pieces are one word, their text with spaces trimmed.
  e = tokenizer().encode(" \t ");
  EXPECT_EQ(e.words, (std::vector<std::string>{"\t"}));
  EXPECT_EQ(e.pieces, (std::vector<std::string>{"\xE2\x96\x81", "<0x09>"}));
  EXPECT_EQ(e.spans, (std::vector<ByteSpan>{{1, 1}, {1, 2}}));
  EXPECT_EQ(e.word_index, (std::vector<int>{0, 0}));
  // A piece over two page words ('".' covers '"' and '.'): one word, word_index in steps of 1.
  e = tokenizer().encode("he said \"no\".");
  ASSERT_EQ(e.pieces.back(), "\".");
  EXPECT_EQ(e.words, (std::vector<std::string>{"he", "said", "\"", "no", "\"."}));
  EXPECT_EQ(e.word_index, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(e.word_spans.back(), (ByteSpan{11, 13}));
  // Blank text: nothing.
  for (const char* blank : {"", " ", "     "}) {
    e = tokenizer().encode(blank);
    EXPECT_TRUE(e.ids.empty() && e.spans.empty() && e.words.empty() && e.word_index.empty());
  }
}

TEST(SubwordTokenizer, InvalidUtf8IsAValueError) {
  for (const std::string& bad :
       {std::string("ab\xFF"), std::string("\xC3"), std::string("\xED\xA0\x80"),
        std::string("\xC0\xAF"), std::string("ok \xF4\x90\x80\x80")}) {
    const std::string m = message_of<mha::value_error>([&] { tokenizer().encode(bad); });
    EXPECT_NE(m.find("text is not valid UTF-8: byte 0x"), std::string::npos) << m;
  }
  EXPECT_EQ(message_of<mha::value_error>([&] { tokenizer().encode("ab\xFF"); }),
            "text is not valid UTF-8: byte 0xFF at offset 2");
}

TEST(SubwordTokenizer, TextOverTheLimitIsALimitError) {
  const std::string at_limit(SubwordTokenizer::max_text_bytes, 'a');
  EXPECT_EQ(tokenizer().encode(at_limit).ids.size() > 0, true);
  EXPECT_EQ(message_of<mha::limit_error>([&] { tokenizer().encode(at_limit + "a"); }),
            "text has 1048577 bytes, more than the limit of 1048576");
}

TEST(SubwordTokenizer, TenThousandCharactersEncodeQuickly) {
  const json& cases = golden().at("edge_cases");
  for (const json& c : cases) {
    const std::string name = c[0];
    if (name.rfind("10000", 0) != 0) continue;
    const std::string text = c[1];
    const auto start = std::chrono::steady_clock::now();
    const mha::SubwordEncoding e = tokenizer().encode(text);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ timing   ] " << name << " (" << text.size() << " bytes): " << e.ids.size()
              << " pieces in " << ms << " ms\n";
  }
  const std::string mib(SubwordTokenizer::max_text_bytes, 'e');
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = tokenizer().encode(mib).ids.size();
  std::cout
      << "[ timing   ] 1 MiB of 'e': " << n << " pieces in "
      << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()
      << " ms\n";
}

TEST(SubwordTokenizer, CopiesOutliveTheOriginal) {
  auto original =
      std::make_unique<SubwordTokenizer>(SubwordTokenizer::from_json(description_text()));
  const SubwordTokenizer copy = *original;
  const std::vector<int> ids = original->encode("the cat sat on the mat").ids;
  original.reset();
  EXPECT_EQ(copy.encode("the cat sat on the mat").ids, ids);
}

TEST(SubwordTokenizer, TextUnitOffsets) {
  const std::string text =
      "a\xC3\xA9\xF0\x9F\x98\x80"
      "b";  // a é 😀 b: bytes 0 1-2 3-6 7
  EXPECT_EQ(mha::text_unit_offsets(text, mha::TextUnit::code_point),
            (std::vector<std::size_t>{0, 1, 1, 2, 2, 2, 2, 3, 4}));
  EXPECT_EQ(mha::text_unit_offsets(text, mha::TextUnit::utf16),
            (std::vector<std::size_t>{0, 1, 1, 2, 2, 2, 2, 4, 5}));
}

// --- bad descriptions -------------------------------------------------------------------------

json description() { return json::parse(description_text()); }

template <typename E>
std::string error_of(const json& doc) {
  return message_of<E>([&] { SubwordTokenizer::from_json(doc.dump()); });
}

TEST(SubwordTokenizerSpec, JsonErrorsAreParseErrors) {
  EXPECT_NE(message_of<mha::parse_error>([] {
              SubwordTokenizer::from_json("{\"type\": ");
            }).find("the tokenizer description is malformed JSON"),
            std::string::npos);
  EXPECT_EQ(message_of<mha::parse_error>([] { SubwordTokenizer::from_json("[1]"); }),
            "the tokenizer description must be a JSON object, got array");
  json d = description();
  d.erase("scores");
  EXPECT_EQ(error_of<mha::parse_error>(d), "the tokenizer description has no \"scores\"");
  d = description();
  d["extra"] = 1;
  EXPECT_NE(error_of<mha::parse_error>(d).find("has an unknown key \"extra\""), std::string::npos);
  d = description();
  d["type"] = "sentencepiece-unigram";
  EXPECT_EQ(error_of<mha::parse_error>(d),
            "type is \"sentencepiece-unigram\", this build reads \"sentencepiece-bpe\"");
  d = description();
  d["prepare"] = "nfkc";
  EXPECT_EQ(error_of<mha::parse_error>(d),
            "prepare is \"nfkc\", this build reads \"ascii-lowercase\"");
  d = description();
  d["byte_fallback"] = "yes";
  EXPECT_EQ(error_of<mha::parse_error>(d), "byte_fallback must be true or false, got \"yes\"");
  d = description();
  d["pieces"] = "abc";
  EXPECT_EQ(error_of<mha::parse_error>(d), "pieces must be a JSON list, got string");
  d = description();
  d["pieces"][300] = 7;
  EXPECT_EQ(error_of<mha::parse_error>(d), "pieces[300] must be a string, got 7");
  d = description();
  d["scores"][9] = "x";
  EXPECT_EQ(error_of<mha::parse_error>(d), "scores[9] must be a number, got \"x\"");
  d = description();
  d["scores"][9] = 1e39;
  EXPECT_EQ(error_of<mha::parse_error>(d), "scores[9] must be a float32 number, got 1e+39");
  d = description();
  d["types"][5] = "user_defined";
  EXPECT_EQ(error_of<mha::parse_error>(d),
            "types[5] must be one of \"normal\", \"unknown\", \"control\", \"byte\", \"unused\", "
            "got \"user_defined\"");
}

TEST(SubwordTokenizerSpec, InconsistentDescriptionsAreTypedErrors) {
  json d = description();
  d["scores"].erase(d["scores"].size() - 1);
  EXPECT_EQ(error_of<mha::shape_error>(d), "scores has 4095 entries, pieces has 4096");
  d = description();
  d["types"].push_back("normal");
  EXPECT_EQ(error_of<mha::shape_error>(d), "types has 4097 entries, pieces has 4096");
  d = description();
  d["pieces"][301] = d["pieces"][300];
  EXPECT_NE(error_of<mha::config_error>(d).find(
                "pieces[301] \"" + d["pieces"][300].get<std::string>() + "\" is given twice"),
            std::string::npos);
  d = description();
  d["types"][2] = "normal";  // <0x00> becomes an ordinary piece
  EXPECT_EQ(error_of<mha::config_error>(d),
            "byte_fallback needs the 256 byte pieces; <0x00> is missing");
  d["byte_fallback"] = false;  // without byte fallback it may be missing
  EXPECT_EQ(SubwordTokenizer::from_json(d.dump()).encode("\t").ids, (std::vector<int>{4049, 0}));
  d = description();
  d["pieces"][3] = "<0x1>";
  EXPECT_EQ(error_of<mha::config_error>(d), "pieces[3] \"<0x1>\" has type byte but is not <0xXX>");
  d = description();
  d["types"][0] = "control";
  EXPECT_EQ(error_of<mha::config_error>(d),
            "the tokenizer needs exactly one piece of type unknown, has 0");
  d = description();
  d["pieces"][1] = "x";
  d["pieces"][4077] = "xx";
  EXPECT_EQ(error_of<mha::config_error>(d),
            "pieces[1] \"x\" of type control is one character: text could spell it (reserved "
            "pieces are longer)");
  d = description();
  d["pieces"][500] = "";
  EXPECT_EQ(error_of<mha::config_error>(d), "pieces[500] is empty");
  d = description();
  d["pieces"] = json::array();
  d["scores"] = json::array();
  d["types"] = json::array();
  EXPECT_EQ(error_of<mha::config_error>(d), "the tokenizer has no pieces");
}

TEST(SubwordTokenizerSpec, TheStructIsCheckedToo) {
  mha::SubwordTokenizerSpec s;
  s.pieces = {"<unk>", "a", "b", "ab"};
  s.scores = {0, 0, 0, std::numeric_limits<float>::quiet_NaN()};
  s.types.assign(4, mha::PieceType::normal);
  s.types[0] = mha::PieceType::unknown;
  s.byte_fallback = false;
  EXPECT_EQ(message_of<mha::value_error>([&] { SubwordTokenizer t(s); }),
            "scores[3] is nan; every score must be finite");
  s.scores[3] = -1;
  s.pieces[2] = "\xFF";
  EXPECT_EQ(message_of<mha::config_error>([&] { SubwordTokenizer t(s); }),
            "pieces[2] is not valid UTF-8");
  s.pieces[2] = "b";
  const SubwordTokenizer t(s);
  // "ab" merges; "c" is no piece: <unk> without byte fallback; the space's "▁" is no piece.
  EXPECT_EQ(t.encode("ab c").ids, (std::vector<int>{0, 3, 0, 0}));
  EXPECT_EQ(t.encode("ab c").pieces, (std::vector<std::string>{"<unk>", "ab", "<unk>", "<unk>"}));
}

TEST(SubwordTokenizerSpec, UnusedPiecesAreSplitBack) {
  // "abc" is reached through "ab" + "c" but unused: it comes out as "ab", "c".
  mha::SubwordTokenizerSpec s;
  s.pieces = {"<unk>", "a", "b", "c", "ab", "abc", "\xE2\x96\x81"};
  s.scores = {0, 0, 0, 0, -1, -2, 0};
  s.types.assign(7, mha::PieceType::normal);
  s.types[0] = mha::PieceType::unknown;
  s.types[5] = mha::PieceType::unused;
  s.byte_fallback = false;
  const SubwordTokenizer t(s);
  const mha::SubwordEncoding e = t.encode("abc");
  EXPECT_EQ(e.pieces, (std::vector<std::string>{"\xE2\x96\x81", "ab", "c"}));
  EXPECT_EQ(e.spans, (std::vector<ByteSpan>{{0, 0}, {0, 2}, {2, 3}}));
}

TEST(SubwordTokenizerSpec, WithoutExtraWhitespaceRemovalOrDummyPrefix) {
  json d = description();
  d["remove_extra_whitespaces"] = false;
  d["add_dummy_prefix"] = false;
  const SubwordTokenizer t = SubwordTokenizer::from_json(d.dump());
  const mha::SubwordEncoding e = t.encode(" a  ");
  // Every space kept, none added: "▁a" "▁" "▁".
  EXPECT_EQ(e.pieces, (std::vector<std::string>{"\xE2\x96\x81"
                                                "a",
                                                "\xE2\x96\x81", "\xE2\x96\x81"}));
  EXPECT_EQ(e.spans, (std::vector<ByteSpan>{{0, 2}, {2, 3}, {3, 4}}));
}

}  // namespace
