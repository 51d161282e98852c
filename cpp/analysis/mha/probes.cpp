// The head report card's probes (probes.hpp).
#include "mha/probes.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>

#include "mha/numpy_random.hpp"
#include "mha/patterns_io.hpp"

namespace mha {
namespace {

using json = nlohmann::json;

#include "probe_words.inc"

std::vector<std::string> list(const char* const* begin, const char* const* end) {
  return std::vector<std::string>(begin, end);
}

/// numpy.random.RandomState.randint(0, k) for 1 <= k <= 2^32: masked rejection sampling.
std::uint32_t randint(NumpyRandomState& rs, std::uint32_t k) {
  const std::uint32_t max = k - 1;
  if (max == 0) return 0;
  std::uint32_t mask = max;
  for (int s : {1, 2, 4, 8, 16}) mask |= mask >> s;
  for (;;) {
    const std::uint32_t v = rs.next_uint32() & mask;
    if (v <= max) return v;
  }
}

void check_range(const char* name, int value, int low, int high) {
  if (value < low || value > high) {
    throw value_error(std::string(name) + " = " + std::to_string(value) + " is outside [" +
                      std::to_string(low) + ", " + std::to_string(high) + "]");
  }
}

/// Code points of UTF-8 `s` (bytes that are not continuation bytes).
Index code_points(const std::string& s) {
  return static_cast<Index>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

const char* const kOccupations[] = {"baker",  "pilot",  "doctor", "teacher", "farmer", "painter",
                                    "driver", "lawyer", "nurse",  "singer",  "writer", "cook"};
constexpr std::uint32_t kNumOccupations = 12;
constexpr std::uint32_t kNumTemplates = 5;

/// One template: the pieces between the slots. Slot order: first person (occupation, mention),
/// second person (occupation, mention), place, pronoun; templates 1 and 3 use no occupation.
std::string fill(std::uint32_t t, const std::string& o1, const std::string& m1,
                 const std::string& o2, const std::string& m2, const std::string& place,
                 std::vector<std::pair<Index, Index>>& spans, const std::string& pronoun) {
  std::string text;
  const auto put = [&](const std::string& s, bool span) {
    if (span) spans.emplace_back(code_points(text), code_points(text) + code_points(s));
    text += s;
  };
  switch (t) {
    case 0:
      put("the " + o1 + " ", false), put(m1, true), put(" and the " + o2 + " ", false);
      put(m2, true), put(" dined in " + place + ". ", false);
      break;
    case 1:
      put(m1, true), put(" phoned ", false), put(m2, true);
      put(" from " + place + ", and then ", false);
      break;
    case 2:
      put("in " + place + ", the " + o1 + " ", false), put(m1, true);
      put(" searched for the " + o2 + " ", false), put(m2, true), put(" until ", false);
      break;
    case 3:
      put(m1, true), put(" and ", false), put(m2, true);
      put(" sailed to " + place + " together. later ", false);
      break;
    default:
      put("after the " + o1 + " ", false), put(m1, true), put(" called the " + o2 + " ", false);
      put(m2, true), put(" in " + place + ", ", false);
      break;
  }
  put(pronoun, true);
  return text;
}

std::pair<std::uint32_t, std::uint32_t> two_distinct(NumpyRandomState& rs, std::uint32_t k) {
  const std::uint32_t a = randint(rs, k);
  std::uint32_t b = randint(rs, k - 1);
  if (b >= a) ++b;
  return {a, b};
}

void check_words(const std::vector<std::string>& words, const char* name) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].empty() || words[i].find_first_of(" \t\n\r") != std::string::npos) {
      throw value_error(std::string(name) + "[" + std::to_string(i) + "] = \"" + words[i] +
                        "\" must be one word: not empty, no space");
    }
  }
}

json span_json(std::pair<Index, Index> s) { return json::array({s.first, s.second}); }

std::pair<Index, Index> read_span(const json& ex, const char* key, const std::string& what) {
  if (!ex.contains(key) || !ex.at(key).is_array() || ex.at(key).size() != 2 ||
      !ex.at(key)[0].is_number_integer() || !ex.at(key)[1].is_number_integer()) {
    throw parse_error(what + "." + key + " must be [start, end], two integers");
  }
  return {ex.at(key)[0].get<Index>(), ex.at(key)[1].get<Index>()};
}

std::vector<std::string> read_strings(const json& v, const std::string& what) {
  if (!v.is_array()) throw parse_error(what + " must be an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      throw parse_error(what + "[" + std::to_string(i) + "] must be a string, got " +
                        std::string(v[i].type_name()));
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

}  // namespace

const std::vector<std::string>& induction_words() {
  static const std::vector<std::string> w = list(std::begin(kInductionWords), std::end(kInductionWords));
  return w;
}
const std::vector<std::string>& probe_names() {
  static const std::vector<std::string> w = list(std::begin(kProbeNames), std::end(kProbeNames));
  return w;
}
const std::vector<std::string>& probe_places() {
  static const std::vector<std::string> w = list(std::begin(kProbePlaces), std::end(kProbePlaces));
  return w;
}

json induction_probe(std::uint32_t seed, int count, int length, int repeats,
                     const std::vector<std::string>& words) {
  check_range("count", count, 1, 10000);
  check_range("length", length, 2, static_cast<int>(words.size()));
  check_range("repeats", repeats, 2, 100);
  check_words(words, "words");
  NumpyRandomState rs(seed);
  json examples = json::array();
  const auto W = static_cast<std::uint32_t>(words.size());
  for (int e = 0; e < count; ++e) {
    std::vector<std::uint32_t> idx(W);
    std::iota(idx.begin(), idx.end(), 0u);
    std::vector<std::string> chosen;
    for (std::uint32_t k = 0; k < static_cast<std::uint32_t>(length); ++k) {
      std::swap(idx[k], idx[k + randint(rs, W - k)]);
      chosen.push_back(words[idx[k]]);
    }
    std::string text;
    for (int r = 0; r < repeats; ++r) {
      for (const auto& w : chosen) text += (text.empty() ? "" : " ") + w;
    }
    examples.push_back({{"text", text}, {"words", chosen}});
  }
  return {{"probe", "induction"},
          {"protocol",
           "Olsson et al. 2022 prefix matching: " + std::to_string(length) +
               " random words (Brown Corpus frequency ranks 101-1100) repeated " +
               std::to_string(repeats) +
               " times; put your model's <bos> first if it has one; score the induction row of "
               "the head report card"},
          {"seed", seed},
          {"length", length},
          {"repeats", repeats},
          {"examples", examples}};
}

json pronoun_probe(std::uint32_t seed, int count, const std::vector<std::string>& names,
                   const std::vector<std::string>& places) {
  check_range("count", count, 1, 10000);
  if (names.size() < 2) throw value_error("the pronoun probe needs at least 2 names");
  if (places.empty()) throw value_error("the pronoun probe needs at least 1 place");
  check_words(names, "names");
  check_words(places, "places");
  NumpyRandomState rs(seed);
  json examples = json::array();
  for (int e = 0; e < count; ++e) {
    const std::uint32_t t = randint(rs, kNumTemplates);
    const auto [oa, ob] = two_distinct(rs, kNumOccupations);
    const auto [na, nb] = two_distinct(rs, static_cast<std::uint32_t>(names.size()));
    const std::string& place = places[randint(rs, static_cast<std::uint32_t>(places.size()))];
    const bool she = randint(rs, 2) == 1;
    const bool antecedent_first = e % 2 == 0;
    const std::string antecedent = std::string(she ? "mrs. " : "mr. ") + names[na];
    const std::string other = std::string(she ? "mr. " : "mrs. ") + names[nb];
    std::vector<std::pair<Index, Index>> spans;
    const std::string text =
        antecedent_first
            ? fill(t, kOccupations[oa], antecedent, kOccupations[ob], other, place, spans,
                   she ? "she" : "he")
            : fill(t, kOccupations[ob], other, kOccupations[oa], antecedent, place, spans,
                   she ? "she" : "he");
    examples.push_back({{"text", text},
                        {"pronoun", span_json(spans[2])},
                        {"antecedent", span_json(spans[antecedent_first ? 0 : 1])},
                        {"other", span_json(spans[antecedent_first ? 1 : 0])},
                        {"antecedent_first", antecedent_first},
                        {"template", t}});
  }
  return {{"probe", "pronoun"},
          {"protocol",
           "two people introduced with gendered titles, then the pronoun of one of them (the "
           "antecedent, mentioned first in half of the sentences); spans count Unicode code points "
           "of text, [start, end); score the coreference row of the head report card"},
          {"seed", seed},
          {"examples", examples}};
}

std::vector<Index> tokens_in_span(const std::vector<std::pair<Index, Index>>& offsets, Index begin,
                                  Index end) {
  std::vector<Index> out;
  for (std::size_t t = 0; t < offsets.size(); ++t) {
    const auto [s, e] = offsets[t];
    if (s < e && s < end && e > begin) out.push_back(static_cast<Index>(t));
  }
  return out;
}

CoreferenceProbe probe_from_offsets(const std::vector<std::pair<Index, Index>>& offsets,
                                    std::pair<Index, Index> pronoun,
                                    std::pair<Index, Index> antecedent,
                                    std::pair<Index, Index> other, const std::string& what) {
  const auto map = [&](std::pair<Index, Index> span, const char* name) {
    std::vector<Index> t = tokens_in_span(offsets, span.first, span.second);
    if (t.empty()) {
      throw value_error(what + ": the " + name + " span [" + std::to_string(span.first) + ", " +
                        std::to_string(span.second) + ") covers no token (offsets end at " +
                        std::to_string(offsets.empty() ? 0 : offsets.back().second) + ")");
    }
    return t;
  };
  return CoreferenceProbe{map(pronoun, "pronoun"), map(antecedent, "antecedent"),
                          map(other, "other")};
}

std::vector<ReportExample> read_scored_probes(const json& doc, const std::string& what) {
  if (!doc.is_object() || !doc.contains("examples") || !doc.at("examples").is_array()) {
    throw parse_error(what + " must be an object with \"examples\": [...] (mha probes' output, "
                      "each example with tokens and attn_weights added)");
  }
  static const std::vector<std::string> known = {
      "text",     "words",          "pronoun",  "antecedent", "other",     "antecedent_first",
      "template", "tokens",         "offsets",  "attn_weights", "word_index"};
  std::vector<ReportExample> out;
  const json& list = doc.at("examples");
  for (std::size_t e = 0; e < list.size(); ++e) {
    const std::string name = what + ".examples[" + std::to_string(e) + "]";
    const json& ex = list[e];
    if (!ex.is_object()) throw parse_error(name + " must be an object");
    for (const auto& [key, value] : ex.items()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        throw parse_error("unknown key \"" + key + "\" in " + name);
      }
    }
    if (!ex.contains("tokens") || !ex.contains("attn_weights")) {
      throw parse_error(name + " needs \"tokens\" and \"attn_weights\" (run it through your model)");
    }
    ReportExample r;
    r.tokens = read_strings(ex.at("tokens"), name + ".tokens");
    r.layers = attention_layers_from_json(ex.at("attn_weights"), name + ".attn_weights");
    if (ex.contains("word_index")) {
      const json& w = ex.at("word_index");
      if (!w.is_array()) throw parse_error(name + ".word_index must be an array of integers");
      for (const auto& x : w) {
        if (!x.is_number_integer()) throw parse_error(name + ".word_index must hold integers");
        r.word_index.push_back(x.get<Index>());
      }
    }
    if (ex.contains("pronoun")) {
      if (!ex.contains("offsets") || !ex.at("offsets").is_array()) {
        throw parse_error(name + " is a pronoun probe and needs \"offsets\": [[start, end], ...] "
                          "per token, in characters of its text");
      }
      std::vector<std::pair<Index, Index>> offsets;
      const json& o = ex.at("offsets");
      for (std::size_t t = 0; t < o.size(); ++t) {
        json wrapper = {{"offset", o[t]}};
        offsets.push_back(read_span(wrapper, "offset", name + ".offsets[" + std::to_string(t) + "]"));
      }
      if (offsets.size() != r.tokens.size()) {
        throw shape_error(name + ": offsets has " + std::to_string(offsets.size()) +
                          " entries, tokens has " + std::to_string(r.tokens.size()));
      }
      r.probe = probe_from_offsets(offsets, read_span(ex, "pronoun", name),
                                   read_span(ex, "antecedent", name), read_span(ex, "other", name),
                                   name);
    }
    out.push_back(std::move(r));
  }
  if (out.empty()) throw parse_error(what + " holds no example");
  return out;
}

}  // namespace mha
