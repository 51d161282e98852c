// `mha patterns` (docs/cli.md "patterns"): the same scores from JSON, .npy + tokens and
// safetensors input, stdin, the date model; the token scores (duplicate_token, induction,
// punctuation) with tokens from the JSON or from --tokens / --query-tokens; and bad input (exit 2,
// one line naming the problem). Scores are compared with the golden values of
// tests/fixtures/patterns.json (numpy, 1e-9; the printed JSON rounds nothing, so 1e-9 is loose).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cli_util.hpp"

namespace {

using nlohmann::json;
using namespace mha_cli_test;

json fixture(const std::string& name) {
  return json::parse(slurp(std::string(MHA_FIXTURES_DIR) + "/" + name));
}

/// The synthetic case of patterns.json: five heads (previous-token, diagonal, first-token,
/// far, uniform) over 8 tokens, as (h, n, n) nested arrays.
json synthetic_case() {
  const json doc = fixture("patterns.json");
  for (const auto& c : doc.at("cases")) {
    if (c.at("name").get<std::string>().rfind("synthetic", 0) == 0) return c;
  }
  throw std::runtime_error("no synthetic case in patterns.json");
}

json nested(const json& t) {
  const auto shape = t.at("shape").get<std::vector<std::size_t>>();
  const auto& data = t.at("data");
  json out = json::array();
  std::size_t k = 0;
  for (std::size_t h = 0; h < shape[0]; ++h) {
    json rows = json::array();
    for (std::size_t i = 0; i < shape[1]; ++i) {
      json row = json::array();
      for (std::size_t j = 0; j < shape[2]; ++j) row.push_back(data.at(k++));
      rows.push_back(row);
    }
    out.push_back(rows);
  }
  return out;
}

/// A float32 .npy file of `shape` holding `data`.
std::string npy(const std::vector<std::size_t>& shape, const std::vector<float>& data) {
  std::string dims;
  for (const auto d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  return out;
}

void expect_matches_golden(const json& layer, const json& golden) {
  ASSERT_EQ(layer.at("heads").size(), golden.at("heads").size());
  for (std::size_t k = 0; k < golden.at("heads").size(); ++k) {
    const json& a = layer.at("heads")[k];
    const json& e = golden.at("heads")[k];
    EXPECT_EQ(a.at("labels"), e.at("labels")) << k;
    for (const auto& [key, value] : e.at("scores").items()) {
      if (value.is_null()) {
        EXPECT_TRUE(a.at("scores").at(key).is_null()) << k << " " << key;
      } else {
        EXPECT_NEAR(a.at("scores").at(key).get<double>(), value.get<double>(), 1e-9)
            << k << " " << key;
      }
    }
  }
  for (std::size_t a = 0; a < golden.at("js_distance").size(); ++a) {
    for (std::size_t b = 0; b < golden.at("js_distance").size(); ++b) {
      EXPECT_NEAR(layer.at("js_distance")[a][b].get<double>(),
                  golden.at("js_distance")[a][b].get<double>(), 1e-9);
    }
  }
}

TEST(CliPatterns, JsonFileAndStdin) {
  const json c = synthetic_case();
  const json request = {{"tokens", {"The", "cat", ",", "sat", "on", "the", "mat", "."}},
                        {"attn_weights", nested(c.at("attn_weights"))}};
  const std::string path = temp_path("attn.json");
  write_file(path, request.dump());
  const std::string text = request.dump();
  for (const CliRun& run : {run_mha({"patterns", path}), run_mha({"patterns"}, &text)}) {
    const json out = parse_stdout(run);
    EXPECT_EQ(out.at("format"), "json");
    EXPECT_EQ(out.at("shape"), json({5, 8, 8}));
    ASSERT_EQ(out.at("layers").size(), 1u);
    expect_matches_golden(out.at("layers")[0], c);
    EXPECT_EQ(out.at("layers")[0].at("heads")[2].at("stripe_token"), "The");
    EXPECT_EQ(out.at("layers")[0].at("heads")[0].at("labels"), json({"previous-token"}));
    EXPECT_EQ(out.at("thresholds").at("margin"), 0.15);
  }
  std::remove(path.c_str());
}

TEST(CliPatterns, NpyWithTokensFileAndLayers) {
  // (L=2, h=1, n=3, n=3): previous-token, then uniform.
  std::vector<float> data = {1, 0, 0, 1, 0, 0, 0, 1, 0};
  for (int i = 0; i < 9; ++i) data.push_back(1.0f / 3.0f);
  const std::string path = temp_path("attn.npy"), tokens = temp_path("tokens.txt");
  write_file(path, npy({2, 1, 3, 3}, data));
  write_file(tokens, "a\nb\nc\n");
  const json out = parse_stdout(run_mha({"patterns", path, "--tokens", tokens}));
  EXPECT_EQ(out.at("format"), ".npy");
  EXPECT_EQ(out.at("tokens"), json({"a", "b", "c"}));
  ASSERT_EQ(out.at("layers").size(), 2u);
  EXPECT_EQ(out.at("layers")[0].at("heads")[0].at("scores").at("previous_token"), 1.0);
  EXPECT_EQ(out.at("layers")[0].at("heads")[0].at("labels"), json({"previous-token"}));
  EXPECT_TRUE(out.at("layers")[1].at("heads")[0].at("labels").empty());
  write_file(tokens, "[\"a\", \"b\"]");
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--tokens", tokens}),
                         {"has 2 tokens, the attention has 3 keys (shape (2, 1, 3, 3))"}));
  std::remove(path.c_str());
  std::remove(tokens.c_str());
}

TEST(CliPatterns, FormatTable) {
  // (L=2, h=1, n=3): a previous-token head, then a uniform one; the table prints the JSON's
  // scores with 3 decimals, a line per head.
  std::vector<float> data = {1, 0, 0, 1, 0, 0, 0, 1, 0};
  for (int i = 0; i < 9; ++i) data.push_back(1.0f / 3.0f);
  const std::string path = temp_path("table.npy"), tokens = temp_path("table_tokens.txt");
  write_file(path, npy({2, 1, 3, 3}, data));
  write_file(tokens, "a\nb\nc\n");
  const CliRun run = run_mha({"patterns", path, "--tokens", tokens, "--format", "table"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("layer 0: 1 heads, n = 3, m = 3\n", 0), 0u) << run.out;
  // head 0: previous_token 1, diagonal 0, local band 1 (rows 1 and 2 look at i-1; row 0 at 0).
  EXPECT_NE(run.out.find("0    previous-token 1.000   0.333   1.000   "), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("layer 1: 1 heads, n = 3, m = 3\n"), std::string::npos) << run.out;
  // The uniform head: no label, entropy log2(3) = 1.585 bits, max weight 1/3.
  EXPECT_NE(run.out.find("0    -      0.333   0.333   0.778   "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1.585   0.333"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Jensen-Shannon distance between heads:\n    0.000"), std::string::npos);
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--format", "csv"}),
                         {"--format must be json or table, got \"csv\""}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", "--input", "x", "--format", "table"}),
                         {"--format table is for exported weights"}));
  std::remove(path.c_str());
  std::remove(tokens.c_str());
}

/// The golden token case named `name` in patterns.json.
json token_case(const std::string& name) {
  const json doc = fixture("patterns.json");
  for (const auto& c : doc.at("token_cases")) {
    if (c.at("name").get<std::string>() == name) return c;
  }
  throw std::runtime_error("no token case \"" + name + "\" in patterns.json");
}

void expect_token_scores(const json& layer, const json& golden) {
  for (std::size_t k = 0; k < golden.at("heads").size(); ++k) {
    const json& a = layer.at("heads")[k];
    const json& e = golden.at("heads")[k];
    EXPECT_EQ(a.at("labels"), e.at("labels")) << k;
    for (const char* group : {"scores", "uniform_baseline"}) {
      for (const char* key : {"duplicate_token", "induction", "punctuation"}) {
        const json& want = e.at(group).at(key);
        if (want.is_null()) {
          EXPECT_TRUE(a.at(group).at(key).is_null()) << k << " " << group << " " << key;
        } else {
          EXPECT_NEAR(a.at(group).at(key).get<double>(), want.get<double>(), 1e-9)
              << k << " " << group << " " << key;
        }
      }
    }
  }
}

TEST(CliPatterns, TokenScoresFromJsonAndFromTokenFiles) {
  // Self-attention: tokens in the JSON input.
  const json self = token_case("<bos> + 7 random tokens repeated twice, causal h=3");
  const std::string text =
      json{{"tokens", self.at("tokens")}, {"attn_weights", nested(self.at("attn_weights"))}}.dump();
  const json out = parse_stdout(run_mha({"patterns"}, &text));
  expect_token_scores(out.at("layers")[0], self);
  EXPECT_EQ(out.at("layers")[0].at("heads")[0].at("labels"), json({"induction"}));
  EXPECT_EQ(out.at("thresholds").at("induction"), 0.5);
  // Cross-attention from .npy: key tokens alone leave duplicate_token and induction null;
  // --query-tokens adds them.
  const json keys_only = token_case("cross h=2 n=4 m=6, key tokens only");
  const json both = token_case("cross h=2 n=4 m=6, key and query tokens");
  const auto shape = both.at("attn_weights").at("shape").get<std::vector<std::size_t>>();
  const std::string path = temp_path("cross.npy"), keys = temp_path("keys.json"),
                    queries = temp_path("queries.txt");
  write_file(path, npy(shape, both.at("attn_weights").at("data").get<std::vector<float>>()));
  write_file(keys, both.at("tokens").dump());
  std::string lines;
  for (const auto& q : both.at("query_tokens")) lines += q.get<std::string>() + "\n";
  write_file(queries, lines);
  expect_token_scores(parse_stdout(run_mha({"patterns", path, "--tokens", keys})).at("layers")[0],
                      keys_only);
  const json out2 =
      parse_stdout(run_mha({"patterns", path, "--tokens", keys, "--query-tokens", queries}));
  expect_token_scores(out2.at("layers")[0], both);
  EXPECT_EQ(out2.at("query_tokens"), both.at("query_tokens"));
  // Without tokens every token score is null.
  const json none = parse_stdout(run_mha({"patterns", path}));
  EXPECT_TRUE(none.at("layers")[0].at("heads")[0].at("scores").at("punctuation").is_null());
  write_file(queries, "a\nb\n");
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--tokens", keys, "--query-tokens", queries}),
                         {"query_tokens has 2 tokens, the attention has 4 queries"}));
  for (const auto& f : {path, keys, queries}) std::remove(f.c_str());
}

TEST(CliPatterns, SafetensorsNamedTensor) {
  // Two tensors: "attn" (1, 2, 2) F32 and "other".
  const std::vector<float> attn = {1, 0, 0.5f, 0.5f};
  const std::string header =
      R"({"attn":{"dtype":"F32","shape":[1,2,2],"data_offsets":[0,16]},"other":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})";
  std::string file(8, '\0');
  for (int b = 0; b < 8; ++b)
    file[static_cast<std::size_t>(b)] = static_cast<char>(header.size() >> (8 * b));
  file += header;
  file.append(reinterpret_cast<const char*>(attn.data()), 16);
  const float one = 1.0f;
  file.append(reinterpret_cast<const char*>(&one), 4);
  const std::string path = temp_path("attn.safetensors");
  write_file(path, file);
  const json out = parse_stdout(run_mha({"patterns", path, "--tensor", "attn"}));
  EXPECT_EQ(out.at("format"), "safetensors");
  EXPECT_EQ(out.at("layers")[0].at("heads")[0].at("scores").at("first_token"), 0.5);
  EXPECT_TRUE(fails_with(run_mha({"patterns", path}),
                         {"holds 2 tensors (attn, other); name the attention tensor"}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", path, "--tensor", "nope"}), {"no tensor \"nope\""}));
  std::remove(path.c_str());
}

TEST(CliPatterns, DateModel) {
  const json out = parse_stdout(run_mha({"patterns", "--input", "Nov 30, 2026"}));
  EXPECT_EQ(out.at("output"), "2026-11-30");
  EXPECT_EQ(out.at("source_tokens").size(), 12u);
  // 2 encoder self + 2 decoder self + 2 cross layers, 4 heads each.
  ASSERT_EQ(out.at("layers").size(), 6u);
  EXPECT_EQ(out.at("layers")[5].at("kind"), "cross");
  EXPECT_EQ(out.at("layers")[5].at("n"), 11);
  EXPECT_EQ(out.at("layers")[5].at("m"), 12);
  EXPECT_TRUE(out.at("layers")[2].at("heads")[0].at("causal").get<bool>());
  // The date model's tokens give the token scores: ", " is punctuation for the encoder; the
  // decoder's queries name the cross layers' rows.
  for (const json& layer : out.at("layers")) {
    const json& scores = layer.at("heads")[0].at("scores");
    EXPECT_TRUE(scores.at("punctuation").is_number()) << layer.at("name");
    EXPECT_TRUE(scores.at("duplicate_token").is_number()) << layer.at("name");
  }
  const json mean = parse_stdout(
      run_mha({"patterns", "--heldout", std::string(MHA_FIXTURES_DIR) + "/date_heldout.json",
               "--limit", "20"}));
  EXPECT_EQ(mean.at("inputs"), 20);
  EXPECT_EQ(mean.at("heads").size(), 24u);
  EXPECT_TRUE(mean.at("heads")[0].at("mean_scores").at("punctuation").is_number());
}

TEST(CliPatterns, BadInputIsOneLine) {
  const auto run_text = [](const std::string& text) { return run_mha({"patterns", "-"}, &text); };
  EXPECT_TRUE(fails_with(run_text("[1, 2]"), {"must be an object"}));
  EXPECT_TRUE(
      fails_with(run_text(R"({"attn_weights": [[[0.5, 0.4]]]})"), {"head 0, row 0 sums to 0.9"}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[[1, 0], [1]]]})"),
                         {"attn_weights[0][1] must be an array of 2 entries"}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[[1, "x"]]]})"),
                         {"attn_weights[0][0][1] must be a number"}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[1, 0]]})"),
                         {"has shape (1, 2); expected (heads, n, m)"}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[[1]]], "tokens": ["a", "b"]})"),
                         {"tokens has 2 tokens, the attention has 1 keys"}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[[1]]], "colour": 1})"),
                         {"unknown key \"colour\""}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[[-1, 2]]]})"), {"key 0 holds -1"}));
  EXPECT_TRUE(fails_with(run_text(std::string("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4',", 24)),
                         {"truncated .npy file"}));
  EXPECT_TRUE(
      fails_with(run_text(npy({1, 2, 2}, {1, 0, 1})), {"the data is 12 bytes", "needs 16"}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", "/nonexistent/attn.npy"}),
                         {"cannot open \"/nonexistent/attn.npy\""}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", "a", "b"}), {"at most one FILE"}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", "--input", "x", "--tokens", "t"}),
                         {"take no FILE, --tokens, --query-tokens or --tensor"}));
  EXPECT_TRUE(fails_with(run_text(R"({"attn_weights": [[[1, 0], [0, 1]]], "tokens": ["a", "b"],
                                      "query_tokens": ["a"]})"),
                         {"query_tokens has 1 tokens, the attention has 2 queries"}));
  EXPECT_TRUE(fails_with(run_mha({"patterns", "--limit", "3"}), {"--limit needs --heldout"}));
  EXPECT_EQ(parse_stdout(run_text(R"({"attn_weights": [[[1]]]})")).at("layers").size(), 1u);
}

}  // namespace
