// The English model's subword tokenizer: SentencePiece's BPE encoder (Kudo and Richardson 2018,
// arXiv:1808.06226; the encoder of sentencepiece 0.1.97, bpe_model.cc, normalizer.cc and
// sentencepiece_processor.cc), run on the description the model file stores (metadata key
// "tokenizer", docs/english-lm-format.md "Tokenizer"; written by describe() in
// scripts/training/english_subwords.py). Its ids equal sp.encode(prepare(text)) of the library
// on every sentence of tests/fixtures/english_subword_golden.json.
//
// Shape legend: V = vocabulary size (pieces), p = pieces of one encoded text, w = its words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mha {

/// The kind of a vocabulary entry, as SentencePiece's ModelProto names it (lower case).
/// Only normal and unused pieces are merge results; unused pieces are split back into the two
/// pieces that formed them. unknown, control and byte pieces never come out of a merge.
enum class PieceType : std::uint8_t { normal, unknown, control, byte, unused };

/// The tokenizer as the model file describes it (its JSON: SubwordTokenizer::from_json).
struct SubwordTokenizerSpec {
  std::vector<std::string>
      pieces;                    ///< (V) UTF-8, U+2581 for a space; byte pieces "<0x00>".."<0xFF>"
  std::vector<float> scores;     ///< (V) merge priority: the higher, the earlier
  std::vector<PieceType> types;  ///< (V)
  bool add_dummy_prefix = true;  ///< a space in front of non-empty text
  bool remove_extra_whitespaces = true;  ///< strip leading/trailing U+0020, collapse runs of it
  bool byte_fallback = true;             ///< unknown characters as their UTF-8 bytes' pieces
};

/// A byte range [begin, end) of the original text.
struct ByteSpan {
  std::size_t begin = 0, end = 0;
  bool operator==(const ByteSpan& o) const { return begin == o.begin && end == o.end; }
};

/// One text, encoded. Every per-piece vector has p entries.
struct SubwordEncoding {
  std::vector<int> ids;             ///< (p) vocabulary ids, without <bos>
  std::vector<std::string> pieces;  ///< (p) the vocabulary's text of each id
  /// (p) the bytes of the original text each piece covers, as SentencePiece's piece offsets
  /// (begin/end of its immutable proto) mapped back through the lower-casing: a piece's
  /// U+2581 covers the space it stands for and the extra spaces removed after it; the added
  /// space in front covers nothing; of the byte pieces of one character, the last covers the
  /// character and the others are empty at its start. Spans never decrease and lie on
  /// character boundaries.
  std::vector<ByteSpan> spans;
  /// (p) the word each piece belongs to, an index into words, rising from 0 in steps of 0 or 1.
  /// The candidate words are mha::english_tokenize(text) (the page's words); a piece belongs to
  /// the first that ends after the piece's span begins, so to the word holding its first byte,
  /// and a piece that begins on a space or other separator (a lone U+2581, a tab's byte) to the
  /// word after it (after the last word, the last word). A page word in which no piece begins
  /// (the piece '".' covers '"' and '.') joins the word before it. Text with pieces but no page
  /// word (a tab) is one word.
  std::vector<int> word_index;
  std::vector<std::string> words;    ///< (w) each word as written: its page words and between
  std::vector<ByteSpan> word_spans;  ///< (w) where each word lies in the text
};

/// SentencePiece BPE encoding of English text for the English model.
///
/// encode(text):
///   1. prepare: mha::english_lookup_form over the whole text (ASCII A-Z lower-cased, U+2019
///      written as ');
///   2. SentencePiece's normalizer with the identity rule: with remove_extra_whitespaces,
///      leading and trailing spaces (U+0020 only; tabs, newlines and U+00A0 are characters like
///      any other) are removed and runs of spaces kept as one; with add_dummy_prefix a space is
///      put in front; every space becomes U+2581, and then trailing U+2581 (a written U+2581
///      included) are removed. Blank text gives no pieces;
///   3. BPE: the symbols start as the UTF-8 characters; while some adjacent pair concatenates
///      to a normal or unused piece, the pair whose piece has the highest score is merged, the
///      leftmost among equal scores (a priority queue: O(c log c) for c characters);
///   4. a symbol that is no piece becomes <unk>, or with byte_fallback its UTF-8 bytes'
///      pieces <0xXX>.
class SubwordTokenizer {
 public:
  /// Longest text encode() takes, in bytes (1 MiB: 256 times the model's longest window,
  /// limits::max_tokens, of 4-byte characters).
  static constexpr std::size_t max_text_bytes = std::size_t{1} << 20;
  /// Most vocabulary entries.
  static constexpr std::size_t max_pieces = std::size_t{1} << 20;

  /// Checks the spec and builds the piece tables.
  /// Throws shape_error when scores or types have another length than pieces ("scores has 3
  /// entries, pieces has 4"); limit_error for more than max_pieces pieces; config_error for no
  /// pieces, an empty piece, a piece that is not valid UTF-8, a piece given twice, not exactly
  /// one unknown piece, a byte piece that is not "<0xXX>" (upper-case hex) or a byte given
  /// twice, a missing byte piece when byte_fallback, and an unknown, control or byte piece of
  /// one character (the text could spell it); value_error for a non-finite score.
  explicit SubwordTokenizer(SubwordTokenizerSpec spec);

  /// Reads the JSON description (english_subwords.describe()): an object with exactly the keys
  /// type ("sentencepiece-bpe"), prepare ("ascii-lowercase"), add_dummy_prefix,
  /// remove_extra_whitespaces, byte_fallback (booleans), pieces (V strings), scores (V
  /// numbers), types (V of "normal", "unknown", "control", "byte", "unused").
  /// Throws parse_error for malformed JSON, a missing or unknown key, a wrong JSON type
  /// ("scores[7] must be a number, got \"x\""), another type or prepare value, an unknown type
  /// name, a score beyond float32; then everything the constructor throws.
  static SubwordTokenizer from_json(std::string_view json_text);

  /// Encodes UTF-8 text (the steps above).
  /// Throws value_error "text is not valid UTF-8: byte 0xFF at offset 3" (english_tokenize's
  /// message), limit_error "text has N bytes, more than the limit of 1048576".
  SubwordEncoding encode(const std::string& text) const;

  /// The text of ids as SentencePiece decodes it: the pieces joined, byte pieces as their
  /// bytes, U+2581 as a space, the leading space of the first piece dropped when
  /// add_dummy_prefix, unknown and control pieces as nothing. Throws value_error for an id
  /// outside [0, V).
  std::string decode(const std::vector<int>& ids) const;

  std::size_t vocab_size() const;
  const SubwordTokenizerSpec& spec() const;

 private:
  struct Tables;
  /// The spec and its lookup tables, built once and shared by copies (the tables hold views of
  /// the spec's strings, so they never move).
  std::shared_ptr<const Tables> t_;
};

/// Offsets into text (UTF-8) counted in another unit, for the front ends: code points
/// (Python's str indices) or UTF-16 code units (JavaScript's). Returns (text.size() + 1) values:
/// entry b is the offset of byte b when b starts a character (and text.size() maps to the
/// length); entries inside a character hold the offset of that character. Assumes valid UTF-8.
enum class TextUnit : std::uint8_t { code_point, utf16 };
std::vector<std::size_t> text_unit_offsets(const std::string& text, TextUnit unit);

}  // namespace mha
