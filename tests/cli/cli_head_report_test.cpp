// `mha patterns --report` and `mha probes` (docs/cli.md): the card of a file against the golden
// values of tests/fixtures/head_report.json (numpy), scored pronoun probes, the probes' JSON, and
// bad input (exit 2, one line naming the problem).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_util.hpp"

namespace {

using nlohmann::json;
using namespace mha_cli_test;

json golden() { return json::parse(slurp(std::string(MHA_FIXTURES_DIR) + "/head_report.json")); }

TEST(CliHeadReport, ReportOfAFileMatchesNumpy) {
  const json doc = golden();
  const json& ex = doc.at("examples")[1];  // 12 tokens, causal, no probe
  const std::string path = temp_path("attn.json");
  write_file(path, json({{"tokens", ex.at("tokens")}, {"attn_weights", ex.at("attn")}}).dump());
  // One example alone: its rows and the chance of a causal row i, 1 / (i + 1), by hand (the
  // pooled golden values are checked through --probes below).
  const json out = parse_stdout(run_mha({"patterns", path, "--report"}));
  EXPECT_EQ(out.at("examples"), 1);
  EXPECT_EQ(out.at("layers"), 2);
  EXPECT_EQ(out.at("num_heads"), 3);
  EXPECT_EQ(out.at("by_word"), false);
  const json& s = out.at("heads")[0].at("scores");
  EXPECT_EQ(s[0].at("name"), "previous_token_argmax");
  EXPECT_EQ(s[0].at("count"), 11);
  double chance = 0.0;
  for (int i = 1; i < 12; ++i) chance += 1.0 / (i + 1);
  EXPECT_NEAR(s[0].at("chance").get<double>(), chance / 11, 1e-12);
  const std::string table = run_mha({"patterns", path, "--report", "--format", "table"}).out;
  EXPECT_NE(table.find("best head of each kind"), std::string::npos);
  std::remove(path.c_str());
}

TEST(CliHeadReport, ScoredProbesGiveTheGoldenPooledCard) {
  // The three golden examples as scored probes: the first is a pronoun probe whose tokens are
  // one character each, so its token spans are character spans.
  const json doc = golden();
  json probes = {{"probe", "pronoun"}, {"examples", json::array()}};
  for (std::size_t e = 0; e < 3; ++e) {
    const json& ex = doc.at("examples")[e];
    json p = {{"tokens", ex.at("tokens")}, {"attn_weights", ex.at("attn")}};
    if (e == 0) {
      json offsets = json::array();
      for (int t = 0; t < 9; ++t) offsets.push_back({t, t + 1});
      p["offsets"] = offsets;
      p["text"] = "abcdefghi";
      p["pronoun"] = {8, 9};
      p["antecedent"] = {6, 8};
      p["other"] = {1, 5};
    }
    probes["examples"].push_back(p);
  }
  const std::string path = temp_path("probes.json");
  write_file(path, probes.dump());
  const json out = parse_stdout(run_mha({"patterns", "--report", "--probes", path}));
  EXPECT_EQ(out.at("probes"), 1);
  const json& g = doc.at("by_token");
  for (std::size_t k = 0; k < g.size(); ++k) {
    for (const json& s : out.at("heads")[k].at("scores")) {
      const json& v = g[k].at(s.at("name").get<std::string>());
      if (v.at("value").is_null()) {
        EXPECT_TRUE(s.at("value").is_null());
        continue;
      }
      EXPECT_NEAR(s.at("value").get<double>(), v.at("value").get<double>(), 1e-12);
      EXPECT_NEAR(s.at("chance").get<double>(), v.at("chance").get<double>(), 1e-12);
    }
  }
  std::remove(path.c_str());
}

TEST(CliHeadReport, ProbesAreWrittenAsJson) {
  const json ind = parse_stdout(run_mha({"probes", "induction", "--seed", "3", "--count", "2"}));
  EXPECT_EQ(ind.at("examples")[0].at("words"), golden().at("induction_probe_seed_3")[0]);
  const json pro = parse_stdout(run_mha({"probes", "pronoun"}));
  EXPECT_EQ(pro.at("examples").size(), 40u);
}

TEST(CliHeadReport, BadInputExitsTwoWithOneLine) {
  EXPECT_TRUE(fails_with(run_mha({"probes"}), {"induction or pronoun"}));
  EXPECT_TRUE(fails_with(run_mha({"probes", "pronoun", "--count", "0"}), {"--count"}));
  const std::string path = temp_path("nan.json");
  write_file(path, R"({"tokens": ["a", "b"], "attn_weights": [[[1, 0], [0.5, 0.7]]]})");
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--report"}), {"row 1 sums to 1.2"}));
  write_file(path, R"({"attn_weights": [[[1, 0], [0.5, 0.5]]]})");
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--report"}), {"needs the tokens"}));
  write_file(path, R"({"examples": [{"tokens": ["a", "b"], "attn_weights": [[[1, 0], [0.5, 0.5]]],
    "offsets": [[0, 1], [2, 3]], "text": "a b", "pronoun": [2, 3], "antecedent": [0, 1],
    "other": [7, 9]}]})");
  EXPECT_TRUE(fails_with(run_mha({"patterns", "--report", "--probes", path}), {"covers no token"}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--probes", path}), {"--report"}));
  std::remove(path.c_str());
}

}  // namespace

// --word-index reads a JSON array or one integer per line, with the same card; anything else is
// status 2 naming the file and the item.
TEST(CliHeadReport, WordIndexAsJsonArrayOrLines) {
  const std::string attn = temp_path("wi_attn.json");
  write_file(attn, R"({"tokens": ["a", "b", "c"],
                       "attn_weights": [[[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]]]})");
  const std::string as_json = temp_path("wi.json"), as_lines = temp_path("wi.txt"),
                    bad = temp_path("wi_bad.json");
  write_file(as_json, "[0, 1, 1]");
  write_file(as_lines, "0\n1\n1\n");
  write_file(bad, "[0, \"x\", 1]");
  const CliRun a = run_mha({"patterns", attn, "--report", "--word-index", as_json});
  const CliRun b = run_mha({"patterns", attn, "--report", "--word-index", as_lines});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(json::parse(a.out).at("by_word"), true);
  EXPECT_TRUE(fails_with(run_mha({"patterns", attn, "--report", "--word-index", bad}),
                         {"--word-index", "\"x\" is not a word index"}));
  for (const auto& p : {attn, as_json, as_lines, bad}) std::remove(p.c_str());
}
