// The report builders and the experiment request reader that the front ends (the `mha` CLI, the
// Python package, the JS API) call: mha::patterns_report_to_json (analysis), mha::
// parse_date_examples / date_evaluation_to_json / date_translation_to_json (models),
// mha::read_experiment_request and mha::experiment_to_json (numpy). Scores are compared with the
// golden values of tests/fixtures/patterns.json (numpy), the experiment's draws with
// tests/fixtures/numpy_mha.json.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixture_util.hpp"
#include "mha/date_report.hpp"
#include "mha/experiment_json.hpp"
#include "mha/experiment_request.hpp"
#include "mha/json_io.hpp"
#include "mha/patterns_io.hpp"

namespace {

using json = nlohmann::json;
using mha::Index;

// ------------------------------------------------------------------------------------------------
// Patterns over layers

TEST(PatternsReport, TwoLayersMatchTheGoldenScores) {
  const json doc = mha_test::load_fixture("patterns.json");
  const json& c = doc.at("cases")[0];
  const mha::HeadStack w = mha_test::stack_f(c.at("attn_weights"));
  mha::PatternsInput in;
  in.layers = {w, w};
  in.shape = {2, w.heads(), w.rows(), w.cols()};
  const json out = mha::patterns_report_to_json(in);
  EXPECT_EQ(out.at("shape"), json({2, w.heads(), w.rows(), w.cols()}));
  EXPECT_EQ(out.at("tokens"), json::array());
  EXPECT_FALSE(out.contains("query_tokens"));
  EXPECT_EQ(out.at("thresholds"), doc.at("thresholds"));
  ASSERT_EQ(out.at("layers").size(), 2u);
  for (std::size_t l = 0; l < 2; ++l) {
    const json& layer = out.at("layers")[l];
    EXPECT_EQ(layer.at("layer"), l);
    EXPECT_EQ(layer.at("name"), "layer " + std::to_string(l));
    ASSERT_EQ(layer.at("heads").size(), c.at("heads").size());
    for (std::size_t k = 0; k < c.at("heads").size(); ++k) {
      const json& got = layer.at("heads")[k];
      const json& want = c.at("heads")[k];
      EXPECT_EQ(got.at("labels"), want.at("labels")) << k;
      EXPECT_EQ(got.at("rows_scored"), want.at("rows_scored")) << k;
      for (const auto& [name, value] : want.at("scores").items()) {
        if (value.is_number_float()) {
          EXPECT_NEAR(got.at("scores").at(name).get<double>(), value.get<double>(), 1e-9) << name;
        }
      }
    }
    for (std::size_t a = 0; a < c.at("js_distance").size(); ++a) {
      for (std::size_t b = 0; b < c.at("js_distance").size(); ++b) {
        EXPECT_NEAR(layer.at("js_distance")[a][b].get<double>(),
                    c.at("js_distance")[a][b].get<double>(), 1e-9);
      }
    }
  }
}

TEST(PatternsReport, TokensAreCheckedAndNamed) {
  const json doc = mha_test::load_fixture("patterns.json");
  const json& c = doc.at("token_cases")[0];
  mha::PatternsInput in;
  in.layers = {mha_test::stack_f(c.at("attn_weights"))};
  in.tokens = c.at("tokens").get<std::vector<std::string>>();
  const json out = mha::patterns_report_to_json(in);
  EXPECT_EQ(out.at("tokens"), c.at("tokens"));
  for (std::size_t k = 0; k < c.at("heads").size(); ++k) {
    const json& want = c.at("heads")[k].at("scores");
    const json& got = out.at("layers")[0].at("heads")[k].at("scores");
    for (const char* name : {"duplicate_token", "induction", "punctuation"}) {
      if (want.contains(name) && want.at(name).is_number()) {
        EXPECT_NEAR(got.at(name).get<double>(), want.at(name).get<double>(), 1e-12) << name;
      }
    }
  }
  in.tokens.pop_back();
  try {
    mha::patterns_report_to_json(in, "--tokens \"t.txt\"");
    FAIL() << "expected shape_error";
  } catch (const mha::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("--tokens \"t.txt\" has"), std::string::npos) << e.what();
  }
}

// ------------------------------------------------------------------------------------------------
// The date model's reports

const std::string kRepo = std::string(MHA_FIXTURES_DIR) + "/../..";

const mha::DateModel& date_model() {
  static const mha::DateModel m = [] {
    std::ifstream in(kRepo + "/web/date_model.safetensors", std::ios::binary);
    if (!in) throw std::runtime_error("cannot open the date model");
    return mha::DateModel::load(
        {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
  }();
  return m;
}

TEST(DateReport, ParsesExamplesAndNamesTheFile) {
  const auto ex = mha::parse_date_examples(
      R"({"examples": [{"input": "30/11/2026", "target": "2026-11-30", "format": "dmy",
          "roles": "DD.MM.YYYY", "extra": 1}]})",
      "\"h.json\"");
  ASSERT_EQ(ex.size(), 1u);
  EXPECT_EQ(ex[0].input, "30/11/2026");
  EXPECT_EQ(ex[0].target, "2026-11-30");
  EXPECT_EQ(ex[0].format, "dmy");
  EXPECT_EQ(ex[0].roles, "DD.MM.YYYY");
  EXPECT_EQ(mha::parse_date_examples("[]", "x").size(), 0u);
  try {
    mha::parse_date_examples(R"({"tokens": []})", "\"h.json\"");
    FAIL();
  } catch (const mha::parse_error& e) {
    EXPECT_STREQ(e.what(),
                 "\"h.json\" must hold an array of {input, target, format, roles} (or "
                 "{\"examples\": [...]})");
  }
  try {
    mha::parse_date_examples(R"([{"input": "a", "target": "b", "format": "c"}])", "\"h.json\"");
    FAIL();
  } catch (const mha::parse_error& e) {
    EXPECT_STREQ(e.what(), "\"h.json\": example 0 needs a string \"roles\"");
  }
  EXPECT_THROW(mha::parse_date_examples("[", "x"), mha::parse_error);
}

TEST(DateReport, EvaluationReportHoldsTheEvaluation) {
  std::ifstream in(std::string(MHA_FIXTURES_DIR) + "/date_heldout.json");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<mha::DateExample> examples = mha::parse_date_examples(text, "heldout");
  ASSERT_GE(examples.size(), 12u);
  examples.resize(12);
  const mha::DateEvaluation ev = mha::evaluate_date_model(date_model(), examples, false);
  const json out = mha::date_evaluation_to_json(
      ev, mha::DateEvaluationSource{date_model(), "m.safetensors", "h.json", examples});
  EXPECT_EQ(out.at("model").at("file"), "m.safetensors");
  EXPECT_EQ(out.at("model").at("xxh64"), date_model().checksum());
  EXPECT_EQ(out.at("heldout"), "h.json");
  EXPECT_EQ(out.at("examples"), 12);
  EXPECT_EQ(out.at("correct"), ev.correct);
  EXPECT_NEAR(out.at("accuracy").get<double>(), ev.accuracy(), 1e-6);
  Index per_format_examples = 0;
  for (const auto& [format, counts] : out.at("per_format").items()) {
    per_format_examples += counts.at("examples").get<Index>();
  }
  EXPECT_EQ(per_format_examples, 12);
  EXPECT_EQ(out.at("failures").size(), static_cast<std::size_t>(12 - ev.correct));
  ASSERT_EQ(out.at("heads").size(), ev.heads.size());
  for (const json& h : out.at("heads")) {
    EXPECT_FALSE(h.contains("ablated_accuracy"));  // no ablation was run
    EXPECT_EQ(h.contains("role_mass"), h.at("kind") == "cross");
    EXPECT_EQ(h.contains("key_role_mass"), h.at("kind") == "encoder_self");
  }
  EXPECT_FALSE(out.at("checks").contains("least_useful_head"));
  ASSERT_TRUE(out.at("checks").contains("year_head"));
  ASSERT_EQ(out.at("claims").size(), 3u);
  EXPECT_EQ(out.at("claims")[2].at("measured"), false);
  EXPECT_EQ(out.at("claims")[2].at("statement").get<std::string>().rfind("Claim 3, ", 0), 0u);
  EXPECT_NE(out.at("claims")[2].at("statement").get<std::string>().find(
                "not measured (run without --no-ablation)"),
            std::string::npos);
}

TEST(DateReport, TranslationJsonHoldsTheTrace) {
  const mha::DateTranslation t = date_model().translate("Nov 30, 2026", {}, true);
  const json out = mha::date_translation_to_json(date_model(), t, true);
  EXPECT_EQ(out.at("output"), "2026-11-30");
  EXPECT_EQ(out.at("input"), "Nov 30, 2026");
  const auto& c = date_model().transformer().config();
  EXPECT_EQ(out.at("encoder_self").size(), static_cast<std::size_t>(c.num_encoder_layers));
  EXPECT_EQ(out.at("cross").size(), static_cast<std::size_t>(c.num_decoder_layers));
  EXPECT_EQ(out.at("cross")[0].size(), static_cast<std::size_t>(c.num_heads));
  EXPECT_EQ(out.at("logits").size(), static_cast<std::size_t>(t.trace.logits.rows()));
  EXPECT_FALSE(mha::date_translation_to_json(date_model(), t, false).contains("logits"));
}

// ------------------------------------------------------------------------------------------------
// The experiment request

/// A request of plain C++ values, as a front end of untyped values would hand it on.
class MapSource final : public mha::ExperimentSource {
 public:
  std::map<std::string, std::int64_t> ints;
  std::map<std::string, bool> bools;
  std::map<std::string, std::string> texts;
  std::string what() const override { return "the test request"; }
  std::vector<std::string> keys() const override {
    std::vector<std::string> k;
    for (const auto& [name, v] : ints) k.push_back(name);
    for (const auto& [name, v] : bools) k.push_back(name);
    for (const auto& [name, v] : texts) k.push_back(name);
    return k;
  }
  bool has(const char* key) const override {
    return ints.count(key) + bools.count(key) + texts.count(key) > 0;
  }
  std::int64_t integer(const char* key, std::int64_t min, std::int64_t max) const override {
    const std::int64_t v = ints.at(key);
    if (v < min || v > max) throw mha::limit_error(std::string(key) + " out of range");
    return v;
  }
  bool boolean_or(const char* key, bool fallback) const override {
    return bools.count(key) ? bools.at(key) : fallback;
  }
  std::optional<std::string> text(const char* key) const override {
    if (!texts.count(key)) return std::nullopt;
    return texts.at(key);
  }
  std::string repr(const char* key) const override { return "<" + texts.at(key) + ">"; }
  mha::AttentionConfig config() const override {
    return mha_test::config(ints.at("d_model"), ints.at("num_heads"));
  }
  mha::AttentionMasks masks(Index, Index, Index) const override {
    mha::AttentionMasks m;
    m.is_causal = boolean_or("is_causal", false);
    return m;
  }
  mha::ForwardOptions options() const override {
    mha::ForwardOptions o;
    o.keep_intermediates = boolean_or("keep_intermediates", true);
    o.weights_only = boolean_or("weights_only", false);
    return o;
  }
};

MapSource module08() {
  MapSource s;
  s.ints = {{"seed", 7}, {"tokens", 5}, {"d_model", 8}, {"num_heads", 2}};
  return s;
}

TEST(ExperimentRequestReader, ArgumentsTakeTheDefaults) {
  const mha::ExperimentRequest r =
      mha::read_experiment_request(mha::ExperimentArguments{7, 5, 8, 2, true, true});
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.tokens, 5);
  EXPECT_EQ(r.config.d_model, 8);
  EXPECT_EQ(r.config.num_heads, 2);
  EXPECT_TRUE(r.masks.is_causal);
  EXPECT_TRUE(r.positional);
  EXPECT_EQ(r.precision, mha::ExperimentPrecision::float64);
  EXPECT_TRUE(r.return_parameters);
  EXPECT_TRUE(r.options.keep_intermediates);
  EXPECT_FALSE(r.head_range);
  EXPECT_FALSE(r.grids());
  EXPECT_EQ(r.heads_returned(), 2);
  // Sizes are handed on: the experiment refuses them in the core's words.
  const mha::ExperimentRequest bad =
      mha::read_experiment_request(mha::ExperimentArguments{7, 5, 10, 3, false, false});
  mha::NumpyNormalStream stream(7);
  try {
    mha::run_experiment(stream, bad);
    FAIL();
  } catch (const mha::config_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("d_model=10 is not divisible by num_heads=3", 0), 0u);
  }
}

TEST(ExperimentRequestReader, RunsModule08AsNumpyDoes) {
  const json golden = mha_test::load_fixture("numpy_mha.json").at("cases")[0];
  const auto seed = golden.at("seed").get<std::uint32_t>();
  const Index n = golden.at("n").get<Index>();
  const Index d = golden.at("d_model").get<Index>();
  const Index h = golden.at("num_heads").get<Index>();
  const mha::ExperimentRequest r =
      mha::read_experiment_request(mha::ExperimentArguments{seed, n, d, h, false, false});
  mha::NumpyNormalStream stream(r.seed);
  const mha::ExperimentRun run = mha::run_experiment(stream, r);
  const json out = mha::experiment_to_json(r, run);
  EXPECT_EQ(out, mha::experiment_to_json(seed, run.experiment, mha::ExperimentOptions{},
                                         run.result));
  EXPECT_EQ(out.at("seed"), seed);
  EXPECT_EQ(out.at("causal"), false);
  EXPECT_EQ(out.at("parameter_count"), 4 * d * d);
  // numpy's float64 draws, bit for bit.
  for (const char* name : {"X", "Wq", "Wk", "Wv", "Wo"}) {
    const mha::RowMatrixXd want = mha_test::matrix_d(golden.at(name));
    EXPECT_EQ(out.at(name), mha::matrix_to_json(want)) << name;
  }
}

TEST(ExperimentRequestReader, PrecisionHeadRangeAndUnknownKeys) {
  MapSource s = module08();
  s.texts["precision"] = "auto";
  EXPECT_EQ(mha::read_experiment_request(s).precision, mha::ExperimentPrecision::float64);
  s.texts["precision"] = "float32";
  EXPECT_EQ(mha::read_experiment_request(s).precision, mha::ExperimentPrecision::float32);
  s.texts["precision"] = "fast";
  try {
    mha::read_experiment_request(s);
    FAIL();
  } catch (const mha::parse_error& e) {
    EXPECT_STREQ(e.what(), "precision must be \"float64\", \"float32\" or \"auto\", not <fast>");
  }
  // The grids' road with heads 1..1 of 2.
  s.texts["precision"] = "float32";
  s.bools = {{"weights_only", true}, {"keep_intermediates", false}, {"return_parameters", false}};
  s.ints["first_head"] = 1;
  const mha::ExperimentRequest g = mha::read_experiment_request(s);
  EXPECT_TRUE(g.grids());
  EXPECT_TRUE(g.head_range);
  EXPECT_EQ(g.first_head, 1);
  EXPECT_EQ(g.head_count, 1);
  EXPECT_EQ(g.heads_returned(), 1);
  s.ints["first_head"] = 2;  // outside [0, h - 1]: the source's range check
  EXPECT_THROW(mha::read_experiment_request(s), mha::limit_error);
  s.ints["first_head"] = 0;
  s.bools["return_parameters"] = true;  // off the grids' road: no head range
  EXPECT_THROW(mha::read_experiment_request(s), mha::parse_error);
  MapSource u = module08();
  u.bools["need_weights"] = true;
  try {
    mha::read_experiment_request(u);
    FAIL();
  } catch (const mha::parse_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown key 'need_weights' in the test request (known keys: seed, tokens, "
              "d_model, num_heads, precision, positional, is_causal, attn_mask, "
              "key_padding_mask, keep_intermediates, weights_only, ablated_heads, "
              "return_parameters, first_head, head_count, attn_weights_into)");
  }
}

}  // namespace
