// The real `mha` binary (MHA_CLI_PATH), run as a child process with posix_spawn; requests are
// written to temporary files or fed on stdin. Checks the contract of docs/cli.md:
//   * every PyTorch case of tests/fixtures/torch_mha.json, turned into a request, matches the
//     fixture: attn_weights |a - e| <= 1e-5 (absolute; weights lie in [0, 1]) and output
//     |a - e| <= 1e-5 * max|e| + 1e-5 * |e| (relative to the output's scale: large_logits has
//     outputs ~90) — the tolerances of tests/core/torch_golden_test.cpp, since the CLI adds no
//     arithmetic, only text; fully_masked_rows exactly;
//   * the numbers on stdout read back (double -> float32) bit for bit as the in-process result;
//   * `numpy-experiment` reproduces module 08's printed weights and numpy_mha.json (X and W
//     exactly, weights within 2e-5, output within 2e-5 * max|e| + 1e-5 * |e|, as the core test);
//   * bad input: exit status 2, exactly one stderr line "mha: error: ..." naming the values,
//     nothing on stdout; usage errors too (pointing at mha --help).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mha/json_io.hpp"

#include "cli_util.hpp"

namespace {

using nlohmann::json;
using namespace mha_cli_test;

// ---------------------------------------------------------------------------------------------
// Fixtures (tests/fixtures/*.json, {"shape": [...], "data": [flat]} tensors)

json load_fixture(const std::string& name) {
  std::ifstream in(std::string(MHA_FIXTURES_DIR) + "/" + name);
  if (!in) throw std::runtime_error("cannot open fixture " + name);
  json doc = json::parse(in);
  if (doc.at("format") != "mha-lab-fixture" || doc.at("version") != 1)
    throw std::runtime_error(name + " is not a version-1 mha-lab fixture");
  return doc;
}

/// A flat fixture tensor as nested arrays; `boolean` turns 0/1 into false/true.
json nested(const json& t, bool boolean = false) {
  const json& data = t.at("data");
  std::vector<std::size_t> shape;
  for (const auto& s : t.at("shape")) shape.push_back(s.get<std::size_t>());
  auto leaf = [&](std::size_t i) { return boolean ? json(data[i].get<int>() != 0) : data[i]; };
  if (shape.size() == 1) {
    json out = json::array();
    for (std::size_t i = 0; i < shape[0]; ++i) out.push_back(leaf(i));
    return out;
  }
  const std::size_t rows = shape[shape.size() - 2], cols = shape.back();
  const std::size_t heads = shape.size() == 3 ? shape[0] : 1;
  json stack = json::array();
  for (std::size_t h = 0; h < heads; ++h) {
    json m = json::array();
    for (std::size_t r = 0; r < rows; ++r) {
      json row = json::array();
      for (std::size_t c = 0; c < cols; ++c) row.push_back(leaf((h * rows + r) * cols + c));
      m.push_back(row);
    }
    stack.push_back(m);
  }
  return shape.size() == 3 ? stack : stack[0];
}

std::vector<double> flat_numbers(const json& nested_array) {
  std::vector<double> out;
  if (nested_array.is_array()) {
    for (const auto& v : nested_array) {
      const auto sub = flat_numbers(v);
      out.insert(out.end(), sub.begin(), sub.end());
    }
  } else {
    out.push_back(nested_array.get<double>());
  }
  return out;
}

/// A torch_mha.json case as an `mha forward` request.
json torch_request(const json& c) {
  json r = {{"num_heads", c.at("num_heads")}, {"query", nested(c.at("query"))}};
  if (!c.at("self_attention").get<bool>()) {
    r["key"] = nested(c.at("key"));
    r["value"] = nested(c.at("value"));
  }
  for (const auto& item : c.at("weights").items()) r[item.key()] = nested(item.value());
  const json& am = c.at("attn_mask");
  if (!am.is_null()) r["attn_mask"] = nested(am, am.at("kind") == "bool");
  const json& kpm = c.at("key_padding_mask");
  if (kpm.is_object()) {  // float: numbers and "-inf", as the request takes them
    r["key_padding_mask"] = kpm.at("data");
  } else if (!kpm.is_null()) {
    r["key_padding_mask"] = json::array();
    for (const auto& v : kpm) r["key_padding_mask"].push_back(v.get<int>() != 0);
  }
  if (c.at("is_causal").get<bool>()) r["is_causal"] = true;
  return r;
}

/// Max over i of |a_i - e_i| - (atol + rtol |e_i|): <= 0 means every element is within tolerance.
double excess(const std::vector<double>& a, const std::vector<double>& e, double atol, double rtol) {
  EXPECT_EQ(a.size(), e.size());
  double worst = -1.0;
  for (std::size_t i = 0; i < std::min(a.size(), e.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - e[i]) - (atol + rtol * std::abs(e[i])));
  return worst;
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// ---------------------------------------------------------------------------------------------
// forward: golden PyTorch cases

TEST(CliForward, MatchesEveryTorchFixtureCase) {
  const json doc = load_fixture("torch_mha.json");
  ASSERT_GE(doc.at("cases").size(), 1u);
  for (const json& c : doc.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    const json res = parse_stdout(run_forward_file(torch_request(c).dump()));
    ASSERT_TRUE(res.is_object()) << name;
    const json& exp = c.at("expected");
    const auto d = c.at("d_model").get<long>(), kdim = c.at("kdim").get<long>(),
               vdim = c.at("vdim").get<long>(), h = c.at("num_heads").get<long>();
    EXPECT_EQ(res.at("num_heads"), h) << name;
    EXPECT_EQ(res.at("d_model"), d) << name;
    EXPECT_EQ(res.at("d_head"), d / h) << name;
    EXPECT_EQ(res.at("kdim"), kdim) << name;
    EXPECT_EQ(res.at("vdim"), vdim) << name;
    EXPECT_EQ(res.at("n"), c.at("n")) << name;
    EXPECT_EQ(res.at("m"), c.at("m")) << name;
    EXPECT_EQ(res.at("parameter_count"),
              2 * d * d + d * kdim + d * vdim + (c.at("bias").get<bool>() ? 4 * d : 0))
        << name;

    const auto w_exp = flat_numbers(nested(exp.at("attn_weights")));
    const auto w_got = flat_numbers(res.at("attn_weights"));
    EXPECT_LE(excess(w_got, w_exp, 1e-5, 0.0), 0.0) << name << " attn_weights";
    const auto out_exp = flat_numbers(nested(exp.at("output")));
    const auto out_got = flat_numbers(res.at("output"));
    EXPECT_LE(excess(out_got, out_exp, 1e-5 * max_abs(out_exp), 1e-5), 0.0) << name << " output";
    EXPECT_EQ(res.at("output").size(), static_cast<std::size_t>(c.at("n").get<long>())) << name;
    EXPECT_EQ(res.at("attn_weights").size(), static_cast<std::size_t>(h)) << name;

    json fully = json::array();
    const auto fm = flat_numbers(nested(exp.at("fully_masked_rows")));
    const long n = c.at("n").get<long>();
    for (long i = 0; i < static_cast<long>(fm.size()); ++i)
      if (fm[static_cast<std::size_t>(i)] != 0.0) fully.push_back({i / n, i % n});
    EXPECT_EQ(res.at("fully_masked_rows"), fully) << name;
  }
}

TEST(CliForward, FullyMaskedRowIsReported) {
  const json doc = load_fixture("torch_mha.json");
  for (const json& c : doc.at("cases")) {
    if (c.at("name") != "fully_masked_row") continue;
    const json res = parse_stdout(run_forward_file(torch_request(c).dump()));
    EXPECT_EQ(res.at("fully_masked_rows"), json({{0, 2}, {1, 2}}));
    EXPECT_EQ(res.at("attn_weights")[0][2], json({0.0, 0.0, 0.0, 0.0, 0.0}));
    return;
  }
  FAIL() << "torch_mha.json has no fully_masked_row case";
}

TEST(CliForward, StdoutNumbersAreTheCoreFloatsBitForBit) {
  const json doc = load_fixture("torch_mha.json");
  const json request = torch_request(doc.at("cases")[0]);
  const json res = parse_stdout(run_forward_file(request.dump()));
  const mha::ForwardRequest req = mha::parse_forward_request(request);
  const mha::AttentionResult r = mha::run_forward(req);
  for (mha::Index i = 0; i < r.output.rows(); ++i)
    for (mha::Index c = 0; c < r.output.cols(); ++c)
      ASSERT_EQ(static_cast<float>(res["output"][static_cast<std::size_t>(i)][static_cast<std::size_t>(c)].get<double>()),
                r.output(i, c));
  for (mha::Index hh = 0; hh < r.attn_weights.heads(); ++hh)
    for (mha::Index i = 0; i < r.attn_weights.rows(); ++i)
      for (mha::Index j = 0; j < r.attn_weights.cols(); ++j)
        ASSERT_EQ(static_cast<float>(res["attn_weights"][static_cast<std::size_t>(hh)][static_cast<std::size_t>(i)]
                                         [static_cast<std::size_t>(j)].get<double>()),
                  r.attn_weights(hh, i, j));
}

// Hand-checked (see json_io_test.cpp): d = 2, h = 2, identity projections.
const char* const kIdentityRequest =
    R"({"num_heads": 2, "query": [[1, 0], [0, 1]],
        "in_proj_weight": [[1, 0], [0, 1], [1, 0], [0, 1], [1, 0], [0, 1]],
        "out_proj_weight": [[1, 0], [0, 1]]})";

TEST(CliForward, HandCheckedIdentityCase) {
  const json res = parse_stdout(run_forward_file(kIdentityRequest));
  const double s = 1.0 / (1.0 + std::exp(-1.0));  // 0.7310586
  EXPECT_NEAR(res["attn_weights"][0][0][0].get<double>(), s, 1e-6);
  EXPECT_NEAR(res["attn_weights"][0][1][1].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(res["attn_weights"][1][1][1].get<double>(), s, 1e-6);
  EXPECT_NEAR(res["output"][0][0].get<double>(), s, 1e-6);
  EXPECT_NEAR(res["output"][0][1].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(res.at("parameter_count"), 16);
}

TEST(CliForward, ReadsStdin) {
  const std::string text = kIdentityRequest;
  const CliRun from_file = run_forward_file(text);
  const CliRun no_arg = run_mha({"forward"}, &text);
  const CliRun dash = run_mha({"forward", "-"}, &text);
  EXPECT_EQ(from_file.status, 0);
  EXPECT_EQ(no_arg.status, 0) << no_arg.err;
  EXPECT_EQ(dash.status, 0) << dash.err;
  EXPECT_EQ(no_arg.out, from_file.out);
  EXPECT_EQ(dash.out, from_file.out);
  EXPECT_EQ(parse_stdout(no_arg).at("d_head"), 1);
  // Bad input on stdin is reported like bad input in a file.
  const std::string bad = "{\"num_heads\": 2, \"query\": [[1, 0], [0]]}";
  EXPECT_TRUE(fails_with(run_mha({"forward"}, &bad), {"query[1] has 1 values, expected 2"}));
}

// ---------------------------------------------------------------------------------------------
// forward: bad input

TEST(CliForwardErrors, MalformedJson) {
  EXPECT_TRUE(fails_with(run_forward_file("{\"num_heads\": 2,"), {"malformed JSON", "line 1"}));
  EXPECT_TRUE(fails_with(run_forward_file(""), {"malformed JSON"}));
  EXPECT_TRUE(fails_with(run_forward_file("{\"query\": [[1e999]]}"), {"1e999"}));
  EXPECT_TRUE(fails_with(run_forward_file("{\"num_heads\": 1, \"num_heads\": 2}"),
                         {"duplicate key \"num_heads\""}));
}

TEST(CliForwardErrors, NamesKeysAndValues) {
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": 3, "query": [[0,1,2,3,4,5,6,7,8,9]],
      "in_proj_weight": [[0]], "out_proj_weight": [[0]]})"),
                         {"d_model=10 is not divisible by num_heads=3"}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": 2, "query": [[1, 0]], "bias": true})"),
                         {"unknown key \"bias\""}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"query": [[1, 0]]})"), {"missing key \"num_heads\""}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": "2", "query": [[1, 0]]})"),
                         {"num_heads must be an integer", "\"2\""}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": 1, "query": []})"), {"query is empty"}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": 1, "query": [[1, 2], [3, 4, 5]]})"),
                         {"query[1] has 3 values, expected 2"}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": 1, "query": [[1, "2"]]})"),
                         {"query[0][1] must be a number", "\"2\""}));
  EXPECT_TRUE(fails_with(run_forward_file(R"({"num_heads": 1, "query": [[1, 1e39]]})"),
                         {"query[0][1] = 1e+39", "float32"}));
  json r = json::parse(kIdentityRequest);
  r["in_proj_weight"].erase(r["in_proj_weight"].begin());
  EXPECT_TRUE(fails_with(run_forward_file(r.dump()), {"in_proj_weight is (5, 2)", "(6, 2)"}));
  r = json::parse(kIdentityRequest);
  r["attn_mask"] = {{0, "inf"}, {0, 0}};
  EXPECT_TRUE(fails_with(run_forward_file(r.dump()), {"attn_mask[0][1] is \"inf\""}));
  r["attn_mask"] = {{0, "NaN"}, {0, 0}};
  EXPECT_TRUE(fails_with(run_forward_file(r.dump()), {"attn_mask[0][1] is \"NaN\""}));
  r["attn_mask"] = {{false, true, false}, {false, false, false}};
  EXPECT_TRUE(fails_with(run_forward_file(r.dump()), {"attn_mask is (2, 3)", "(2, 2)"}));
  r.erase("attn_mask");
  r["key_padding_mask"] = {true, false, false};
  EXPECT_TRUE(fails_with(run_forward_file(r.dump()), {"key_padding_mask has 3 values", "m = 2"}));
  r.erase("key_padding_mask");
  r["num_heads"] = 1000;
  EXPECT_TRUE(fails_with(run_forward_file(r.dump()), {"num_heads=1000", "256"}));
  // A valid "-inf" mask passes.
  r = json::parse(kIdentityRequest);
  r["attn_mask"] = {{0, "-inf"}, {0, 0}};
  const json res = parse_stdout(run_forward_file(r.dump()));
  EXPECT_EQ(res["attn_weights"][0][0], json({1.0, 0.0}));
}

TEST(CliForwardErrors, FileAndUsage) {
  EXPECT_TRUE(fails_with(run_mha({"forward", "/nonexistent/request.json"}),
                         {"cannot open \"/nonexistent/request.json\"", "No such file"}));
  EXPECT_TRUE(fails_with(run_mha({"forward", "/"}), {"cannot read \"/\"", "Is a directory"}));
  EXPECT_TRUE(fails_with(run_mha({"forward", "a.json", "b.json"}), {"at most one FILE"}));
  EXPECT_TRUE(fails_with(run_mha({"forward", "--pretty"}), {"unknown option \"--pretty\""}));
}

// ---------------------------------------------------------------------------------------------
// numpy-experiment

TEST(CliNumpyExperiment, Module08VerifiedOutput) {
  const json res = parse_stdout(
      run_mha({"numpy-experiment", "--seed", "7", "--tokens", "5", "--d-model", "8", "--num-heads", "2"}));
  auto rounded = [](const json& row) {
    std::vector<double> out;
    for (const auto& v : row) out.push_back(std::round(v.get<double>() * 1000.0) / 1000.0);
    return out;
  };
  EXPECT_EQ(rounded(res.at("attn_weights")[0][0]), (std::vector<double>{0, 0, 0.424, 0.576, 0}));
  EXPECT_EQ(rounded(res.at("attn_weights")[1][0]), (std::vector<double>{0, 0, 0, 0, 1}));
  EXPECT_EQ(res.at("parameter_count"), 256);  // module 08: 256 for any head count
  EXPECT_EQ(res.at("d_head"), 4);
  EXPECT_EQ(res.at("seed"), 7);
  EXPECT_EQ(res.at("X").size(), 5u);
  EXPECT_EQ(res.at("Wq").size(), 8u);
  EXPECT_EQ(res.at("fully_masked_rows"), json::array());
  EXPECT_FALSE(res.contains("positional_encoding"));
}

TEST(CliNumpyExperiment, MatchesNumpyFixture) {
  const json doc = load_fixture("numpy_mha.json");
  for (const json& c : doc.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    const CliRun run = run_mha({"numpy-experiment", "--seed", c.at("seed").dump(), "--tokens",
                             c.at("n").dump(), "--d-model", c.at("d_model").dump(),
                             "--num-heads", c.at("num_heads").dump()});
    const json res = parse_stdout(run);
    ASSERT_TRUE(res.is_object()) << name;
    for (const char* key : {"X", "Wq", "Wk", "Wv", "Wo"})  // numpy's float64 draws, exactly
      EXPECT_EQ(flat_numbers(res.at(key)), flat_numbers(nested(c.at(key)))) << name << " " << key;
    const json& exp = c.at("expected");
    EXPECT_LE(excess(flat_numbers(res.at("attn_weights")), flat_numbers(nested(exp.at("attn_weights"))),
                     2e-5, 0.0), 0.0) << name;
    const auto out_exp = flat_numbers(nested(exp.at("output")));
    EXPECT_LE(excess(flat_numbers(res.at("output")), out_exp, 2e-5 * max_abs(out_exp), 1e-5), 0.0)
        << name;
  }
}

TEST(CliNumpyExperiment, CausalAndPositional) {
  const json plain = parse_stdout(run_mha({"numpy-experiment", "--seed=3", "--tokens=4",
                                           "--d-model=8", "--num-heads=2"}));
  const json causal = parse_stdout(run_mha({"numpy-experiment", "--seed", "3", "--tokens", "4",
                                            "--d-model", "8", "--num-heads", "2", "--causal"}));
  EXPECT_EQ(causal.at("causal"), true);
  for (std::size_t h = 0; h < 2; ++h) {
    for (std::size_t i = 0; i < 4; ++i) {
      double sum = 0.0;
      for (std::size_t j = 0; j < 4; ++j) {
        const double w = causal["attn_weights"][h][i][j].get<double>();
        if (j > i) {
          EXPECT_EQ(w, 0.0) << h << " " << i << " " << j;  // exactly 0, printed as 0.0
        }
        sum += w;
      }
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
    EXPECT_EQ(causal["attn_weights"][h][0][0], 1.0);
  }
  EXPECT_EQ(causal.at("X"), plain.at("X"));

  const json pos = parse_stdout(run_mha({"numpy-experiment", "--seed", "3", "--tokens", "4",
                                         "--d-model", "8", "--num-heads", "2", "--positional"}));
  EXPECT_EQ(pos.at("positional"), true);
  EXPECT_EQ(pos.at("X"), plain.at("X"));  // X stays numpy's draw; the encoding is printed apart
  const json& pe = pos.at("positional_encoding");
  EXPECT_EQ(pe[0], json({0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0}));  // sin 0, cos 0
  EXPECT_NEAR(pe[1][0].get<double>(), std::sin(1.0), 1e-6);
  EXPECT_NEAR(pe[1][1].get<double>(), std::cos(1.0), 1e-6);
  EXPECT_NE(pos.at("output"), plain.at("output"));
}

TEST(CliNumpyExperimentErrors, UsageAndValues) {
  const std::vector<std::string> ok = {"numpy-experiment", "--seed", "7", "--tokens", "5",
                                       "--d-model", "8", "--num-heads", "2"};
  auto with = [&](std::size_t index, const std::string& value) {
    auto args = ok;
    args[index] = value;
    return args;
  };
  EXPECT_TRUE(fails_with(run_mha(with(2, "-1")), {"--seed must be an integer in [0, 4294967295]", "\"-1\""}));
  EXPECT_TRUE(fails_with(run_mha(with(2, "4294967296")), {"--seed", "\"4294967296\""}));
  EXPECT_TRUE(fails_with(run_mha(with(2, "7.5")), {"--seed", "\"7.5\""}));
  EXPECT_TRUE(fails_with(run_mha(with(2, "seven")), {"--seed", "\"seven\""}));
  EXPECT_TRUE(fails_with(run_mha(with(4, "0")), {"--tokens must be a positive integer", "\"0\""}));
  EXPECT_TRUE(fails_with(run_mha(with(4, "99999999999")), {"--tokens", "at most 2147483647", "\"99999999999\""}));
  EXPECT_TRUE(fails_with(run_mha(with(6, "")), {"--d-model must be a positive integer", "\"\""}));
  EXPECT_TRUE(fails_with(run_mha({"numpy-experiment", "--tokens", "5", "--d-model", "8", "--num-heads", "2"}),
                         {"needs --seed"}));
  EXPECT_TRUE(fails_with(run_mha({"numpy-experiment", "--seed"}), {"--seed needs a value"}));
  auto extra = ok;
  extra.push_back("--bias");
  EXPECT_TRUE(fails_with(run_mha(extra), {"unknown option \"--bias\""}));
  // Valid flags, invalid sizes: the core's errors, one line.
  auto bad_split = with(6, "10");
  bad_split[8] = "3";
  EXPECT_TRUE(fails_with(run_mha(bad_split), {"d_model=10 is not divisible by num_heads=3"}));
  EXPECT_TRUE(fails_with(run_mha(with(4, "5000")), {"5000", "4096"}));
  // The largest seed is accepted.
  EXPECT_EQ(run_mha(with(2, "4294967295")).status, 0);
}

// ---------------------------------------------------------------------------------------------
// help and usage

TEST(CliUsage, HelpAndUnknownSubcommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"help"}, {"-h"}, {"forward", "--help"}}) {
    const CliRun run = run_mha(args);
    EXPECT_EQ(run.status, 0) << args[0];
    EXPECT_EQ(run.err, "");
    EXPECT_NE(run.out.find("usage:"), std::string::npos);
    EXPECT_NE(run.out.find("numpy-experiment"), std::string::npos);
  }
  EXPECT_TRUE(fails_with(run_mha({"backward"}), {"unknown subcommand \"backward\""}));
  EXPECT_TRUE(fails_with(run_mha({}), {"missing subcommand"}));
  // Usage errors are one stderr line too, pointing at --help.
  const CliRun run = run_mha({"backward"});
  EXPECT_EQ(run.err, "mha: error: unknown subcommand \"backward\" (see: mha --help)\n");
  EXPECT_EQ(run.out, "");
}

// The date model from the command line (docs/date-model.md): the ISO date on one stdout line;
// input beyond the model's 32 characters is bad input (exit 2, one stderr line naming both sizes).
TEST(CliTranslate, PrintsTheIsoDateAndRefusesTooLongInput) {
  const CliRun ok = run_mha({"translate", "Nov 30, 2026"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "2026-11-30\n");
  EXPECT_EQ(ok.err, "");
  const CliRun json_run = run_mha({"translate", "30.11.26", "--json"});
  EXPECT_EQ(json_run.status, 0) << json_run.err;
  const auto doc = nlohmann::json::parse(json_run.out);
  EXPECT_EQ(doc.at("output").get<std::string>(), "2026-11-30");
  const std::string long_text(40, '1');
  EXPECT_TRUE(fails_with(run_mha({"translate", long_text}), {"40 characters", "at most 32"}));
}

}  // namespace
