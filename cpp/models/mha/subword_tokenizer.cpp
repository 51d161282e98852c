// SentencePiece's BPE encoder (subword_tokenizer.hpp), written from the library's documented
// behaviour and checked against it (tests/core/subword_tokenizer_test.cpp): the normalizer's
// whitespace rules and offset map (normalizer.cc, Normalizer::Normalize), the merge loop with
// stale-pair detection by length (bpe_model.cc, Model::Encode), the split of unused pieces, and
// byte fallback with its piece offsets (sentencepiece_processor.cc, Encode).
#include "mha/subword_tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>
#include <utility>

#include "mha/english_tokenizer.hpp"
#include "mha/errors.hpp"
#include "mha/json_strict.hpp"
#include "mha/utf8.hpp"

namespace mha {

namespace {

using json = nlohmann::json;

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581, SentencePiece's space

const char* const type_names[] = {"normal", "unknown", "control", "byte", "unused"};

std::string in_quotes(std::string_view s) { return json(std::string(s)).dump(); }

/// "<0x%02X>", SentencePiece's ByteToPiece.
std::string byte_piece(unsigned b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", b);
  return buf;
}

/// The byte of a "<0xXX>" piece (upper-case hex), or -1.
int byte_of_piece(const std::string& p) {
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  int v = 0;
  for (int k = 3; k < 5; ++k) {
    const char c = p[static_cast<std::size_t>(k)];
    if (c >= '0' && c <= '9') {
      v = v * 16 + (c - '0');
    } else if (c >= 'A' && c <= 'F') {
      v = v * 16 + (c - 'A' + 10);
    } else {
      return -1;
    }
  }
  return v;
}

/// Byte length of each character of valid UTF-8 text s, in order; 0 when s is not valid.
std::size_t char_length(const std::string& s, std::size_t i) {
  std::uint32_t cp = 0;
  return utf8_decode(s, i, &cp);
}

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = char_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/// A candidate merge of the adjacent symbols left and right (indices of their first character)
/// into a piece of `size` bytes; stale once either symbol has changed (the sizes no longer add
/// up) or gone (empty).
struct SymbolPair {
  float score;
  int left, right;
  std::size_t size;
};

/// Highest score first; among equal scores, the leftmost pair (bpe_model.cc's comparator).
struct PairOrder {
  bool operator()(const SymbolPair& a, const SymbolPair& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

struct Symbol {
  std::size_t begin = 0, size = 0;  ///< bytes of the normalized text
  int prev = -1, next = -1;
};

}  // namespace

struct SubwordTokenizer::Tables {
  SubwordTokenizerSpec spec;
  std::unordered_map<std::string_view, int> mergeable;  ///< normal and unused pieces -> id
  std::unordered_map<std::string_view, int> reserved;   ///< unknown, control, byte -> id
  int unk_id = 0;
  int byte_ids[256] = {};           ///< <0xXX> -> id, when byte_fallback
  std::size_t max_piece_bytes = 0;  ///< longest mergeable piece

  /// The id of piece text w as SentencePiece's PieceToId: reserved (unknown, control, byte)
  /// pieces first, then normal and unused ones; the unknown piece's id when neither.
  int piece_to_id(std::string_view w) const {
    if (const auto r = reserved.find(w); r != reserved.end()) return r->second;
    if (const auto m = mergeable.find(w); m != mergeable.end()) return m->second;
    return unk_id;
  }
};

SubwordTokenizer::SubwordTokenizer(SubwordTokenizerSpec spec_in) {
  auto tables = std::make_shared<Tables>();
  tables->spec = std::move(spec_in);
  Tables& t = *tables;
  const SubwordTokenizerSpec& spec = t.spec;
  const std::size_t v = spec.pieces.size();
  if (v == 0) throw config_error("the tokenizer has no pieces");
  if (v > max_pieces) {
    throw limit_error("the tokenizer has " + std::to_string(v) +
                      " pieces, more than the limit of " + std::to_string(max_pieces));
  }
  if (spec.scores.size() != v) {
    throw shape_error("scores has " + std::to_string(spec.scores.size()) + " entries, pieces has " +
                      std::to_string(v));
  }
  if (spec.types.size() != v) {
    throw shape_error("types has " + std::to_string(spec.types.size()) + " entries, pieces has " +
                      std::to_string(v));
  }
  int unknowns = 0;
  bool have_byte[256] = {};
  for (std::size_t i = 0; i < v; ++i) {
    const std::string& p = spec.pieces[i];
    const std::string at = "pieces[" + std::to_string(i) + "]";
    const auto id = static_cast<int>(i);
    const PieceType type = spec.types[i];
    if (p.empty()) throw config_error(at + " is empty");
    if (!valid_utf8(p)) throw config_error(at + " is not valid UTF-8");
    if (!std::isfinite(spec.scores[i])) {
      throw value_error("scores[" + std::to_string(i) + "] is " + std::to_string(spec.scores[i]) +
                        "; every score must be finite");
    }
    const bool mergeable = type == PieceType::normal || type == PieceType::unused;
    if (!mergeable && char_length(p, 0) == p.size()) {
      throw config_error(at + " " + in_quotes(p) + " of type " +
                         type_names[static_cast<int>(type)] +
                         " is one character: text could spell it (reserved pieces are longer)");
    }
    if (type == PieceType::byte) {
      const int b = byte_of_piece(p);
      if (b < 0) throw config_error(at + " " + in_quotes(p) + " has type byte but is not <0xXX>");
      if (have_byte[b]) throw config_error("byte piece " + in_quotes(p) + " is given twice");
      have_byte[b] = true;
      t.byte_ids[b] = id;
    }
    if (type == PieceType::unknown) {
      ++unknowns;
      t.unk_id = id;
    }
    auto& table = mergeable ? t.mergeable : t.reserved;
    const bool fresh = table.emplace(std::string_view(p), id).second &&
                       (mergeable ? t.reserved : t.mergeable).count(p) == 0;
    if (!fresh) throw config_error(at + " " + in_quotes(p) + " is given twice");
    if (mergeable) t.max_piece_bytes = std::max(t.max_piece_bytes, p.size());
  }
  if (unknowns != 1) {
    throw config_error("the tokenizer needs exactly one piece of type unknown, has " +
                       std::to_string(unknowns));
  }
  if (spec.byte_fallback) {
    for (unsigned b = 0; b < 256; ++b) {
      if (!have_byte[b]) {
        throw config_error("byte_fallback needs the 256 byte pieces; " + byte_piece(b) +
                           " is missing");
      }
    }
  }
  t_ = std::move(tables);
}

SubwordTokenizer SubwordTokenizer::from_json(std::string_view json_text) {
  const json doc = parse_json_strict(json_text, "the tokenizer description");
  if (!doc.is_object()) {
    throw parse_error("the tokenizer description must be a JSON object, got " +
                      std::string(doc.type_name()));
  }
  static const char* const keys[] = {
      "type",          "prepare", "add_dummy_prefix", "remove_extra_whitespaces",
      "byte_fallback", "pieces",  "scores",           "types"};
  for (const auto& item : doc.items()) {
    if (std::find(std::begin(keys), std::end(keys), item.key()) == std::end(keys)) {
      throw parse_error("the tokenizer description has an unknown key " + in_quotes(item.key()) +
                        " (expected type, prepare, add_dummy_prefix, remove_extra_whitespaces, "
                        "byte_fallback, pieces, scores, types)");
    }
  }
  const auto field = [&](const char* key) -> const json& {
    const auto it = doc.find(key);
    if (it == doc.end()) {
      throw parse_error(std::string("the tokenizer description has no \"") + key + "\"");
    }
    return *it;
  };
  const auto expect_string = [&](const char* key, const char* value) {
    const json& f = field(key);
    if (!f.is_string() || f.get<std::string>() != value) {
      throw parse_error(std::string(key) + " is " + f.dump() + ", this build reads \"" + value +
                        "\"");
    }
  };
  const auto boolean = [&](const char* key) {
    const json& f = field(key);
    if (!f.is_boolean()) {
      throw parse_error(std::string(key) + " must be true or false, got " + f.dump());
    }
    return f.get<bool>();
  };
  const auto array = [&](const char* key) -> const json& {
    const json& f = field(key);
    if (!f.is_array()) {
      throw parse_error(std::string(key) + " must be a JSON list, got " +
                        std::string(f.type_name()));
    }
    return f;
  };
  const auto element_error = [](const char* key, std::size_t i, const char* what, const json& e) {
    return parse_error(std::string(key) + "[" + std::to_string(i) + "] must be " + what + ", got " +
                       e.dump());
  };

  expect_string("type", "sentencepiece-bpe");
  expect_string("prepare", "ascii-lowercase");
  SubwordTokenizerSpec spec;
  spec.add_dummy_prefix = boolean("add_dummy_prefix");
  spec.remove_extra_whitespaces = boolean("remove_extra_whitespaces");
  spec.byte_fallback = boolean("byte_fallback");
  const json& pieces = array("pieces");
  const json& scores = array("scores");
  const json& types = array("types");
  if (pieces.size() > max_pieces) {
    throw limit_error("the tokenizer has " + std::to_string(pieces.size()) +
                      " pieces, more than the limit of " + std::to_string(max_pieces));
  }
  spec.pieces.reserve(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].is_string()) throw element_error("pieces", i, "a string", pieces[i]);
    spec.pieces.push_back(pieces[i].get<std::string>());
  }
  spec.scores.reserve(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!scores[i].is_number()) throw element_error("scores", i, "a number", scores[i]);
    const double s = scores[i].get<double>();
    if (!(std::abs(s) <= double(FLT_MAX))) {
      throw element_error("scores", i, "a float32 number", scores[i]);
    }
    spec.scores.push_back(static_cast<float>(s));
  }
  spec.types.reserve(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    const auto name = std::find_if(std::begin(type_names), std::end(type_names),
                                   [&](const char* n) { return t.is_string() && t == n; });
    if (name == std::end(type_names)) {
      throw element_error("types", i,
                          "one of \"normal\", \"unknown\", \"control\", \"byte\", \"unused\"", t);
    }
    spec.types.push_back(static_cast<PieceType>(name - std::begin(type_names)));
  }
  return SubwordTokenizer(std::move(spec));
}

std::size_t SubwordTokenizer::vocab_size() const { return t_->spec.pieces.size(); }

const SubwordTokenizerSpec& SubwordTokenizer::spec() const { return t_->spec; }

SubwordEncoding SubwordTokenizer::encode(const std::string& text) const {
  const Tables& t = *t_;
  const SubwordTokenizerSpec& spec = t.spec;
  if (text.size() > max_text_bytes) {
    throw limit_error("text has " + std::to_string(text.size()) +
                      " bytes, more than the limit of " + std::to_string(max_text_bytes));
  }
  SubwordEncoding out;
  out.words = english_tokenize(text);  // also refuses invalid UTF-8

  // 1. prepare, one character at a time, so that each prepared byte knows its original offset
  // (english_lookup_form maps characters to characters: U+2019's 3 bytes become 1).
  std::string prepared;
  std::vector<std::size_t> prep_to_orig;  // (prepared.size() + 1)
  prepared.reserve(text.size());
  prep_to_orig.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = char_length(text, i);
    const std::string form = english_lookup_form(text.substr(i, n));
    prepared += form;
    prep_to_orig.insert(prep_to_orig.end(), form.size(), i);
    i += n;
  }
  prep_to_orig.push_back(text.size());

  // 2. SentencePiece's normalizer (identity rule). norm_to_orig: for each normalized byte, the
  // prepared offset it came from, plus one entry for the end.
  const bool strip = spec.remove_extra_whitespaces;
  std::string normalized;
  std::vector<std::size_t> norm_to_orig;
  normalized.reserve(prepared.size() + 3 * (prepared.size() / 2 + 2));
  norm_to_orig.reserve(normalized.capacity() + 1);
  std::size_t consumed = 0;
  if (strip) {
    while (consumed < prepared.size() && prepared[consumed] == ' ') ++consumed;
  }
  if (consumed < prepared.size()) {
    const auto add_space = [&](std::size_t from) {
      normalized += kSpaceSymbol;
      norm_to_orig.insert(norm_to_orig.end(), kSpaceSymbol.size(), from);
    };
    if (spec.add_dummy_prefix) add_space(consumed);
    bool prev_space = strip;
    while (consumed < prepared.size()) {
      const std::size_t n = char_length(prepared, consumed);
      const bool space = n == 1 && prepared[consumed] == ' ';
      if (!(space && prev_space)) {
        if (space) {
          add_space(consumed);
        } else {
          normalized.append(prepared, consumed, n);
          norm_to_orig.insert(norm_to_orig.end(), n, consumed);
        }
        prev_space = space;
      }
      consumed += n;
      if (!strip) prev_space = false;
    }
    if (strip) {
      while (normalized.size() >= kSpaceSymbol.size() &&
             normalized.compare(normalized.size() - kSpaceSymbol.size(), kSpaceSymbol.size(),
                                kSpaceSymbol) == 0) {
        const std::size_t length = normalized.size() - kSpaceSymbol.size();
        consumed = norm_to_orig[length];
        normalized.resize(length);
        norm_to_orig.resize(length);
      }
    }
  }
  norm_to_orig.push_back(consumed);
  for (auto& o : norm_to_orig) o = prep_to_orig[o];  // now original byte offsets

  // 3. BPE merges over the characters of the normalized text.
  std::vector<Symbol> symbols;
  for (std::size_t i = 0; i < normalized.size();) {
    Symbol s;
    s.begin = i;
    s.size = char_length(normalized, i);
    s.prev = static_cast<int>(symbols.size()) - 1;
    i += s.size;
    s.next = i < normalized.size() ? static_cast<int>(symbols.size()) + 1 : -1;
    symbols.push_back(s);
  }
  const std::string_view norm(normalized);
  std::priority_queue<SymbolPair, std::vector<SymbolPair>, PairOrder> agenda;
  std::map<int, std::pair<std::string_view, std::string_view>> rev_merge;  // unused id -> parts
  const auto maybe_add_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<std::size_t>(left)];
    const Symbol& r = symbols[static_cast<std::size_t>(right)];
    const std::size_t size = l.size + r.size;
    if (size > t.max_piece_bytes) return;
    const auto it = t.mergeable.find(norm.substr(l.begin, size));
    if (it == t.mergeable.end()) return;
    agenda.push({spec.scores[static_cast<std::size_t>(it->second)], left, right, size});
    if (spec.types[static_cast<std::size_t>(it->second)] == PieceType::unused) {
      rev_merge[it->second] = {norm.substr(l.begin, l.size), norm.substr(r.begin, r.size)};
    }
  };
  for (std::size_t i = 1; i < symbols.size(); ++i) {
    maybe_add_pair(static_cast<int>(i) - 1, static_cast<int>(i));
  }
  while (!agenda.empty()) {
    const SymbolPair top = agenda.top();
    agenda.pop();
    Symbol& l = symbols[static_cast<std::size_t>(top.left)];
    Symbol& r = symbols[static_cast<std::size_t>(top.right)];
    if (l.size == 0 || r.size == 0 || l.size + r.size != top.size) continue;  // stale
    l.size += r.size;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<std::size_t>(r.next)].prev = top.left;
    r.size = 0;
    maybe_add_pair(l.prev, top.left);
    maybe_add_pair(top.left, l.next);
  }

  // 4. Pieces and ids: unused pieces split back, unknown symbols as bytes (or <unk>).
  std::size_t at = 0;  // normalized offset of the next piece
  const auto emit = [&](int id, std::size_t size) {
    out.ids.push_back(id);
    out.pieces.push_back(spec.pieces[static_cast<std::size_t>(id)]);
    out.spans.push_back({norm_to_orig[at], norm_to_orig[at + size]});
  };
  std::function<void(std::string_view)> resegment = [&](std::string_view w) {
    const int id = t.piece_to_id(w);
    const PieceType type = spec.types[static_cast<std::size_t>(id)];
    if (type == PieceType::unused) {
      const auto p = rev_merge.find(id);
      if (p != rev_merge.end()) {
        resegment(p->second.first);
        resegment(p->second.second);
        return;
      }
    }
    if (type == PieceType::unknown && spec.byte_fallback) {
      for (std::size_t k = 0; k < w.size(); ++k) {
        const int b = static_cast<unsigned char>(w[k]);
        out.ids.push_back(t.byte_ids[b]);
        out.pieces.push_back(spec.pieces[static_cast<std::size_t>(t.byte_ids[b])]);
        const std::size_t begin = norm_to_orig[at];
        out.spans.push_back({begin, k + 1 == w.size() ? norm_to_orig[at + w.size()] : begin});
      }
    } else {
      emit(id, w.size());
    }
    at += w.size();
  };
  if (!symbols.empty()) {
    for (int i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
      const Symbol& s = symbols[static_cast<std::size_t>(i)];
      resegment(norm.substr(s.begin, s.size));
    }
  }

  // Words and the word of each piece: the first word that ends after the piece begins.
  std::size_t from = 0;
  out.word_spans.reserve(out.words.size());
  for (const auto& w : out.words) {
    const std::size_t begin = text.find(w, from);  // words are in order, apart only by separators
    out.word_spans.push_back({begin, begin + w.size()});
    from = begin + w.size();
  }
  if (out.ids.empty()) return out;
  if (out.words.empty()) {
    // Pieces but no word (a tab, a written U+2581): one word of the pieces' text, spaces trimmed.
    std::size_t begin = out.spans.front().begin, end = out.spans.back().end;
    while (begin < end && text[begin] == ' ') ++begin;
    while (end > begin && text[end - 1] == ' ') --end;
    if (begin == end) begin = out.spans.front().begin, end = out.spans.back().end;
    out.words.push_back(text.substr(begin, end - begin));
    out.word_spans.push_back({begin, end});
    out.word_index.assign(out.ids.size(), 0);
    return out;
  }
  std::vector<std::size_t> raw;  // (p) the page word of each piece
  raw.reserve(out.ids.size());
  std::size_t w = 0;
  for (const ByteSpan& s : out.spans) {
    while (w + 1 < out.word_spans.size() && out.word_spans[w].end <= s.begin) ++w;
    raw.push_back(w);
  }
  // Words no piece crosses: a page word that no piece starts in joins the word before it (the
  // piece '".' covers '"' and '.'), so every word has a piece and word_index rises by 0 or 1.
  std::vector<std::size_t> first;  // the first page word of each word
  out.word_index.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i == 0 || raw[i] != raw[i - 1]) first.push_back(raw[i]);
    out.word_index.push_back(static_cast<int>(first.size()) - 1);
  }
  std::vector<std::string> words;
  std::vector<ByteSpan> word_spans;
  for (std::size_t g = 0; g < first.size(); ++g) {
    const std::size_t last = g + 1 < first.size() ? first[g + 1] - 1 : out.word_spans.size() - 1;
    const ByteSpan span{out.word_spans[first[g]].begin, out.word_spans[last].end};
    word_spans.push_back(span);
    words.push_back(text.substr(span.begin, span.end - span.begin));
  }
  out.words = std::move(words);
  out.word_spans = std::move(word_spans);
  return out;
}

std::string SubwordTokenizer::decode(const std::vector<int>& ids) const {
  const SubwordTokenizerSpec& spec = t_->spec;
  std::string text;
  for (const int id : ids) {
    if (id < 0 || static_cast<std::size_t>(id) >= spec.pieces.size()) {
      throw value_error("id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(spec.pieces.size()) + ")");
    }
    const std::string& p = spec.pieces[static_cast<std::size_t>(id)];
    switch (spec.types[static_cast<std::size_t>(id)]) {
      case PieceType::byte:
        text.push_back(static_cast<char>(byte_of_piece(p)));
        break;
      case PieceType::normal:
      case PieceType::unused:
        for (std::size_t i = 0; i < p.size();) {
          if (p.compare(i, kSpaceSymbol.size(), kSpaceSymbol) == 0) {
            text.push_back(' ');
            i += kSpaceSymbol.size();
          } else {
            text.push_back(p[i++]);
          }
        }
        break;
      case PieceType::unknown:
      case PieceType::control:
        break;
    }
  }
  if (spec.add_dummy_prefix && !text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

std::vector<std::size_t> text_unit_offsets(const std::string& text, TextUnit unit) {
  std::vector<std::size_t> offsets(text.size() + 1);
  std::size_t units = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = char_length(text, i);
    if (n == 0) n = 1;
    for (std::size_t k = 0; k < n; ++k) offsets[i + k] = units;
    units += (unit == TextUnit::utf16 && n == 4) ? 2 : 1;
    i += n;
  }
  offsets[text.size()] = units;
  return offsets;
}

}  // namespace mha
