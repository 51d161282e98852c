// The head report card (cpp/analysis/mha/head_report.hpp, probes.hpp; docs/patterns.md "Head report
// card"): hand-made heads whose scores are known (a previous-token head scores 1, a uniform head
// scores its chance exactly, an induction head on a repeated sequence scores 1, a constructed
// pronoun probe), the by-word view by hand, the golden values of tests/fixtures/head_report.json
// (numpy, scripts/fixtures/make_head_report_fixtures.py) to 1e-12, the probes' draws against
// numpy's, and bad input as typed errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "mha/errors.hpp"
#include "mha/head_report.hpp"
#include "mha/head_report_io.hpp"
#include "mha/patterns_io.hpp"
#include "mha/probes.hpp"

namespace {

using json = nlohmann::json;
using mha::Index;

json fixture(const std::string& name) {
  std::ifstream in(std::string(MHA_FIXTURES_DIR) + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

const mha::CardScore& score(const mha::HeadCard& h, const std::string& name) {
  for (const auto& s : h.scores) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no score " + name);
}

mha::ReportExample example(std::vector<mha::HeadStack> layers, std::vector<std::string> tokens) {
  mha::ReportExample ex;
  ex.layers = std::move(layers);
  ex.tokens = std::move(tokens);
  return ex;
}

/// A causal (1, n, n) stack whose row i is all on key target(i).
template <class F>
mha::HeadStack one_hot(Index n, F target) {
  mha::HeadStack s(1, n, n);
  for (Index i = 0; i < n; ++i) s(0, i, target(i)) = 1.0f;
  return s;
}

mha::HeadStack uniform_causal(Index h, Index n) {
  mha::HeadStack s(h, n, n);
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j <= i; ++j) s(k, i, j) = 1.0f / float(i + 1);
    }
  }
  return s;
}

std::vector<std::string> numbered(Index n) {
  std::vector<std::string> t;
  for (Index i = 0; i < n; ++i) t.push_back("t" + std::to_string(i));
  return t;
}

double mean_inverse_visible(Index first_row, Index n) {
  double s = 0.0;
  for (Index i = first_row; i < n; ++i) s += 1.0 / double(i + 1);
  return s / double(n - first_row);
}

TEST(HeadReport, PreviousTokenHeadScoresOneAgainstTheMeanOfOneOverVisibleKeys) {
  const Index n = 8;
  mha::ReportExample ex = example({one_hot(n, [](Index i) { return i == 0 ? 0 : i - 1; })}, numbered(n));
  const mha::HeadReportCard card = mha::head_report({ex});
  ASSERT_EQ(card.heads.size(), 1u);
  const mha::HeadCard& h = card.heads[0];
  const double chance = mean_inverse_visible(1, n);  // rows 1..7 see i+1 keys
  for (const char* name : {"previous_token_argmax", "previous_token"}) {
    EXPECT_DOUBLE_EQ(*score(h, name).value, 1.0) << name;
    EXPECT_DOUBLE_EQ(*score(h, name).chance, chance) << name;
    EXPECT_EQ(score(h, name).count, n - 1) << name;
  }
  EXPECT_DOUBLE_EQ(*score(h, "argmax_offset").value, 1.0);
  EXPECT_EQ(*score(h, "argmax_offset").offset, -1);
  EXPECT_DOUBLE_EQ(*score(h, "local_band").value, 1.0);
  EXPECT_EQ(h.labels, (std::vector<std::string>{"previous-token"}));
  EXPECT_FALSE(score(h, "induction").value.has_value());  // no repeated token
  EXPECT_FALSE(score(h, "coreference").value.has_value());
  EXPECT_EQ(score(h, "previous_token_argmax").figure.find("Voita et al. 2019"), 0u);
}

TEST(HeadReport, UniformRowsScoreTheirChanceExactly) {
  const Index n = 11;
  std::vector<std::string> tokens = {"<bos>", "a", ",", "b", "a", ".", "b", "a", ",", "c", "a"};
  mha::ReportExample ex = example({uniform_causal(2, n), uniform_causal(2, n)}, tokens);
  const mha::HeadReportCard card = mha::head_report({ex});
  ASSERT_EQ(card.heads.size(), 4u);
  for (const mha::HeadCard& h : card.heads) {
    for (const mha::CardScore& s : h.scores) {
      if (s.name == "coreference") continue;
      ASSERT_TRUE(s.value.has_value()) << s.name;
      EXPECT_NEAR(*s.value, *s.chance, 1e-15) << s.name;
    }
    EXPECT_TRUE(h.labels.empty());
  }
  // Chance by hand: first token, rows 1..10, mean of 1/(i+1).
  EXPECT_DOUBLE_EQ(*score(card.heads[0], "first_token").chance, mean_inverse_visible(1, n));
  // Punctuation: row i sees the punctuation among keys 0..i.
  double p = 0.0;
  int punct = 0;
  for (Index i = 1; i < n; ++i) {
    const std::string& t = tokens[static_cast<std::size_t>(i)];
    punct += (t == "," || t == ".") ? 1 : 0;
    p += double(punct) / double(i + 1);
  }
  EXPECT_NEAR(*score(card.heads[0], "punctuation").chance, p / double(n - 1), 1e-15);
}

TEST(HeadReport, InductionHeadOnARepeatedSequenceScoresOne) {
  // Olsson et al.'s probe in miniature: <bos> + 5 distinct tokens repeated 4 times; the head reads,
  // from every token of a later copy, the token after its previous occurrence (i - 4), and key 0
  // from the first copy.
  const Index R = 5, repeats = 4, n = 1 + R * repeats;
  std::vector<std::string> tokens = {"<bos>"};
  for (Index r = 0; r < repeats; ++r) {
    for (Index k = 0; k < R; ++k) tokens.push_back("w" + std::to_string(k));
  }
  mha::ReportExample ex = example({one_hot(n, [&](Index i) { return i <= R ? 0 : i - (R - 1); })}, tokens);
  const mha::HeadCard h = mha::head_report({ex}).heads[0];
  const mha::CardScore& ind = score(h, "induction");
  EXPECT_DOUBLE_EQ(*ind.value, 1.0);
  // Rows with an earlier occurrence whose successor is visible: copies 2..4, except the first
  // token of copy 2 (its earlier occurrence, token 1, is followed by token 2 — visible, so it counts).
  EXPECT_EQ(ind.count, R * (repeats - 1));
  // Chance: row i of copy c has c - 1 induction keys among i + 1.
  double chance = 0.0;
  for (Index i = R + 1; i < n; ++i) chance += double((i - 1) / R) / double(i + 1);
  EXPECT_NEAR(*ind.chance, chance / double(ind.count), 1e-15);
  EXPECT_NE(std::find(h.labels.begin(), h.labels.end(), "induction"), h.labels.end());
  EXPECT_DOUBLE_EQ(*score(h, "same_token").value, 0.0);  // it reads i - 4, never a copy at i - 5
}

TEST(HeadReport, CoreferenceOnAConstructedProbe) {
  // "the baker mrs. kolba and the pilot mr. dent met . she": tokens split at spaces.
  const std::string text = "the baker mrs. kolba and the pilot mr. dent met . she";
  std::vector<std::string> tokens;
  std::vector<std::pair<Index, Index>> offsets;
  for (std::size_t s = 0; s < text.size();) {
    std::size_t e = text.find(' ', s);
    if (e == std::string::npos) e = text.size();
    tokens.push_back(text.substr(s, e - s));
    offsets.emplace_back(Index(s), Index(e));
    s = e + 1;
  }
  ASSERT_EQ(tokens.size(), 12u);  // she is token 11; "mrs. kolba" 2-3, "mr. dent" 7-8
  const Index n = 12;
  const auto probe = mha::probe_from_offsets(offsets, {51, 54}, {10, 20}, {35, 43}, "probe");
  EXPECT_EQ(probe.pronoun, (std::vector<Index>{11}));
  EXPECT_EQ(probe.antecedent, (std::vector<Index>{2, 3}));
  EXPECT_EQ(probe.other, (std::vector<Index>{7, 8}));
  // Head 0 looks from "she" at "kolba" (0.6) and "dent" (0.4); head 1 the other way round; head 2
  // is uniform (a tie: 2/12 on each name, not larger).
  mha::HeadStack s = uniform_causal(3, n);
  for (Index k = 0; k < 2; ++k) {
    for (Index j = 0; j < n; ++j) s(k, 11, j) = 0.0f;
  }
  s(0, 11, 3) = 0.6f, s(0, 11, 8) = 0.4f;
  s(1, 11, 3) = 0.4f, s(1, 11, 8) = 0.6f;
  mha::ReportExample ex = example({s}, tokens);
  ex.probe = probe;
  const mha::HeadReportCard card = mha::head_report({ex, ex});
  EXPECT_EQ(card.probes, 2);
  EXPECT_DOUBLE_EQ(*card.nearer_name, 0.0);  // the antecedent is the farther name
  const double expected[] = {1.0, 0.0, 0.0};
  for (std::size_t k = 0; k < 3; ++k) {
    const mha::CardScore& c = score(card.heads[k], "coreference");
    EXPECT_DOUBLE_EQ(*c.value, expected[k]) << k;
    EXPECT_DOUBLE_EQ(*c.chance, 0.5);
    EXPECT_EQ(c.count, 2);
  }
  EXPECT_NE(card.heads[0].labels.back(), "");
  EXPECT_EQ(card.heads[0].labels.back(), "coreference");
  ASSERT_FALSE(card.best.empty());
  EXPECT_EQ(card.best.back().kind, "coreference");
  EXPECT_EQ(card.best.back().head, 0);
}

TEST(HeadReport, ByWordSumsKeyPiecesAndAveragesQueryPieces) {
  // 3 pieces, words [0, 1, 1]: W[1, 0] = mean(a[1,0], a[2,0]), W[1, 1] = mean(a[1,1], a[2,1]+a[2,2]).
  mha::HeadStack s(1, 3, 3);
  s(0, 0, 0) = 1.0f;
  s(0, 1, 0) = 0.25f, s(0, 1, 1) = 0.75f;
  s(0, 2, 0) = 0.5f, s(0, 2, 1) = 0.25f, s(0, 2, 2) = 0.25f;
  const mha::HeadStack w = mha::by_word_stack(s, {0, 1, 1});
  ASSERT_EQ(w.rows(), 2);
  EXPECT_FLOAT_EQ(w(0, 0, 0), 1.0f);
  EXPECT_FLOAT_EQ(w(0, 0, 1), 0.0f);
  EXPECT_FLOAT_EQ(w(0, 1, 0), 0.375f);
  EXPECT_FLOAT_EQ(w(0, 1, 1), 0.625f);
  EXPECT_EQ(mha::by_word_tokens({"<bos>", "\xE2\x96\x81" "ko", "lba"}, {0, 1, 1}),
            (std::vector<std::string>{"<bos>", "kolba"}));
}

void expect_golden(const json& doc, const std::string& mode) {
  std::vector<mha::ReportExample> examples;
  for (const json& e : doc.at("examples")) {
    mha::ReportExample ex;
    ex.layers = mha::attention_layers_from_json(e.at("attn"), "attn");
    ex.tokens = e.at("tokens").get<std::vector<std::string>>();
    if (mode == "by_word") ex.word_index = e.at("word_index").get<std::vector<Index>>();
    if (e.contains("probe")) {
      ex.probe = mha::CoreferenceProbe{e.at("probe").at("pronoun").get<std::vector<Index>>(),
                                       e.at("probe").at("antecedent").get<std::vector<Index>>(),
                                       e.at("probe").at("other").get<std::vector<Index>>()};
    }
    examples.push_back(std::move(ex));
  }
  const mha::HeadReportCard card = mha::head_report(examples);
  const json& golden = doc.at(mode);
  ASSERT_EQ(card.heads.size(), golden.size());
  EXPECT_EQ(card.by_word, mode == "by_word");
  for (std::size_t k = 0; k < golden.size(); ++k) {
    for (const mha::CardScore& s : card.heads[k].scores) {
      const json& g = golden[k].at(s.name);
      const std::string where = mode + " head " + std::to_string(k) + " " + s.name;
      EXPECT_EQ(s.count, g.at("count").get<Index>()) << where;
      if (g.at("value").is_null()) {
        EXPECT_FALSE(s.value.has_value()) << where;
        continue;
      }
      ASSERT_TRUE(s.value.has_value()) << where;
      EXPECT_NEAR(*s.value, g.at("value").get<double>(), 1e-12) << where;
      EXPECT_NEAR(*s.chance, g.at("chance").get<double>(), 1e-12) << where;
      if (g.contains("offset")) {
        EXPECT_EQ(*s.offset, g.at("offset").get<Index>()) << where;
      }
    }
  }
}

TEST(HeadReport, GoldenRandomExamplesByTokenMatchNumpy) {
  expect_golden(fixture("head_report.json"), "by_token");
}

TEST(HeadReport, GoldenRandomExamplesByWordMatchNumpy) {
  expect_golden(fixture("head_report.json"), "by_word");
}

TEST(HeadReport, JsonAndTableNameEveryKindWithItsProtocol) {
  const Index n = 6;
  mha::ReportExample ex = example({uniform_causal(2, n)}, numbered(n));
  const mha::HeadReportCard card = mha::head_report({ex});
  const json j = mha::head_report_to_json(card);
  EXPECT_EQ(j.at("kinds").size(), 9u);
  EXPECT_EQ(j.at("heads").size(), 2u);
  EXPECT_EQ(j.at("heads")[0].at("scores")[0].at("name"), "previous_token_argmax");
  EXPECT_TRUE(j.at("heads")[0].at("scores")[2].at("figure").is_null());  // local_band: none
  EXPECT_TRUE(j.at("nearer_name").is_null());
  const std::string table = mha::head_report_table(card);
  EXPECT_NE(table.find("prev argmax"), std::string::npos);
  EXPECT_NE(table.find("Voita et al. 2019"), std::string::npos);
}

TEST(HeadReportErrors, BadInputIsATypedErrorNamingTheProblem) {
  const Index n = 4;
  mha::ReportExample ok = example({uniform_causal(1, n)}, numbered(n));
  EXPECT_THROW(mha::head_report({}), mha::shape_error);
  mha::ReportExample short_tokens = ok;
  short_tokens.tokens.pop_back();
  EXPECT_THROW(mha::head_report({short_tokens}), mha::shape_error);
  mha::ReportExample nan = ok;
  nan.layers[0](0, 2, 1) = std::numeric_limits<float>::quiet_NaN();
  try {
    mha::head_report({nan});
    FAIL() << "NaN accepted";
  } catch (const mha::value_error& e) {
    EXPECT_NE(std::string(e.what()).find("example 0, layer 0"), std::string::npos) << e.what();
  }
  mha::ReportExample cross = ok;
  cross.layers[0] = mha::HeadStack(1, n, n + 1, 1.0f / float(n + 1));
  EXPECT_THROW(mha::head_report({cross}), mha::shape_error);
  mha::ReportExample other_heads = example({uniform_causal(2, n)}, numbered(n));
  EXPECT_THROW(mha::head_report({ok, other_heads}), mha::shape_error);
  mha::ReportExample words = ok;
  words.word_index = {0, 2, 3, 4};
  EXPECT_THROW(mha::head_report({words}), mha::value_error);
  words.word_index = {0, 1, 1, 2};
  EXPECT_THROW(mha::head_report({words, ok}), mha::shape_error);  // by word and not
  mha::ReportExample probe = ok;
  probe.probe = mha::CoreferenceProbe{{3}, {0}, {7}};
  EXPECT_THROW(mha::head_report({probe}), mha::value_error);  // token 7 of 4
  probe.probe = mha::CoreferenceProbe{{1}, {0}, {2}};
  EXPECT_THROW(mha::head_report({probe}), mha::value_error);  // pronoun before a mention
  EXPECT_THROW(mha::probe_from_offsets({{0, 3}, {4, 6}}, {10, 12}, {0, 3}, {4, 6}, "p"),
               mha::value_error);
}

TEST(Probes, InductionProbeDrawsAsNumpyRandomState) {
  const json doc = fixture("head_report.json");
  const json probe = mha::induction_probe(3, 2);
  ASSERT_EQ(probe.at("examples").size(), 2u);
  for (std::size_t e = 0; e < 2; ++e) {
    const auto words = probe.at("examples")[e].at("words").get<std::vector<std::string>>();
    EXPECT_EQ(words, doc.at("induction_probe_seed_3")[e].get<std::vector<std::string>>());
    std::string text;
    for (int r = 0; r < 4; ++r) {
      for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    }
    EXPECT_EQ(probe.at("examples")[e].at("text"), text);
  }
  EXPECT_EQ(mha::induction_words().size(), 1000u);
  EXPECT_THROW(mha::induction_probe(0, 0), mha::value_error);
}

TEST(Probes, PronounProbeSpansCutOutTheMentionsAndThePronoun) {
  const json probe = mha::pronoun_probe(5, 40);
  ASSERT_EQ(probe.at("examples").size(), 40u);
  int first = 0;
  for (std::size_t e = 0; e < 40; ++e) {
    const json& ex = probe.at("examples")[e];
    const std::string text = ex.at("text");
    const auto cut = [&](const char* key) {
      const auto s = ex.at(key).get<std::vector<Index>>();
      return text.substr(static_cast<std::size_t>(s[0]), static_cast<std::size_t>(s[1] - s[0]));
    };
    const std::string pronoun = cut("pronoun"), antecedent = cut("antecedent"), other = cut("other");
    EXPECT_EQ(antecedent.rfind(pronoun == "she" ? "mrs. " : "mr. ", 0), 0u) << text;
    EXPECT_EQ(other.rfind(pronoun == "she" ? "mr. " : "mrs. ", 0), 0u) << text;
    EXPECT_EQ(text.size(), static_cast<std::size_t>(ex.at("pronoun")[1].get<Index>())) << text;
    const bool antecedent_first = ex.at("antecedent_first");
    EXPECT_EQ(antecedent_first, e % 2 == 0);
    EXPECT_EQ(antecedent_first, ex.at("antecedent")[0] < ex.at("other")[0]);
    first += antecedent_first ? 1 : 0;
  }
  EXPECT_EQ(first, 20);
  const json own = mha::pronoun_probe(1, 2, {"ann", "bob"}, {"rome"});
  EXPECT_NE(own.at("examples")[0].at("text").get<std::string>().find("ann"), std::string::npos);
  EXPECT_THROW(mha::pronoun_probe(1, 2, {"ann"}, {"rome"}), mha::value_error);
  EXPECT_THROW(mha::pronoun_probe(1, 2, {"ann", "b b"}, {"rome"}), mha::value_error);
}

TEST(Probes, TokensInSpanAreTheTokensOverlappingIt) {
  const std::vector<std::pair<Index, Index>> offsets = {{0, 0}, {0, 3}, {3, 4}, {4, 9}, {9, 13}};
  EXPECT_EQ(mha::tokens_in_span(offsets, 0, 4), (std::vector<Index>{1, 2}));  // <bos> [0, 0) is out
  EXPECT_EQ(mha::tokens_in_span(offsets, 5, 6), (std::vector<Index>{3}));
  EXPECT_TRUE(mha::tokens_in_span(offsets, 13, 20).empty());
}

}  // namespace
