// `mha prune` and `mha models` (docs/cli.md): the JSON equals the models layer's in-process result
// (mha::prune_model_file, mha::describe_model_file) for both kinds of model, the text table has a
// line per step, and every bad input is exit status 2 with one stderr line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "mha/date_report.hpp"
#include "mha/model_pruning.hpp"

namespace {

using namespace mha_cli_test;

const std::string fixtures = MHA_FIXTURES_DIR;
const std::string repo = fixtures + "/../..";
const std::string tiny = fixtures + "/english_lm_tiny_relbias_mlp.safetensors";
const std::string date_model = repo + "/web/date_model.safetensors";

std::vector<std::uint8_t> bytes_of(const std::string& path) {
  const std::string s = slurp(path);
  return {s.begin(), s.end()};
}

TEST(CliPrune, EnglishJsonIsTheCoresCurve) {
  const std::string texts = temp_path("texts.txt");
  write_file(texts, "the cat sat\n\na dog ran home\r\non the mat .\nshe said hello\nextra line\n");
  const json out =
      parse_stdout(run_mha({"prune", "--model", tiny, "--text", texts, "--limit", "4", "--json"}));
  const json core = mha::prune_model_file(
      bytes_of(tiny), "english_lm_tiny_relbias_mlp.safetensors",
      std::vector<std::string>{"the cat sat", "a dog ran home", "on the mat .", "she said hello"},
      std::nullopt);
  EXPECT_EQ(out, core);
  EXPECT_EQ(out.at("steps").at(0).at("removed"), nullptr);
  // The text table: a title, a header and one line per step.
  const CliRun text = run_mha({"prune", "--model", tiny, "--text", texts, "--limit", "4"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(std::count(text.out.begin(), text.out.end(), '\n'),
            2 + static_cast<long>(core.at("steps").size()));
  EXPECT_NE(text.out.find("loss_per_character on 2 held-out items (heads chosen on 2 others)"),
            std::string::npos);
  std::remove(texts.c_str());
}

TEST(CliPrune, DateJsonIsTheCoresCurve) {
  const std::string heldout = fixtures + "/date_heldout.json";
  const json out = parse_stdout(
      run_mha({"prune", "--model", date_model, "--heldout", heldout, "--limit", "6", "--json"}));
  std::vector<mha::DateExample> ex = mha::parse_date_examples(slurp(heldout), "heldout");
  ex.resize(6);
  EXPECT_EQ(
      out, mha::prune_model_file(bytes_of(date_model), "date_model.safetensors", std::nullopt, ex));
  EXPECT_EQ(out.at("metric"), "exact_match");
  EXPECT_EQ(out.at("steps").size(), 25u);
}

TEST(CliPrune, BadInputIsExitStatus2) {
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", date_model, "--text", "x.txt"}),
                         {"--text is the English model's; use --heldout"}));
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", tiny, "--heldout", "x.json"}),
                         {"--heldout is the date model's; use --text"}));
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", tiny, "--limit", "0"}), {"--limit"}));
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", repo + "/no-such.safetensors"}),
                         {"no-such.safetensors"}));
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", fixtures + "/torch_mha_layer.safetensors"}),
                         {"cannot read the model", "not a model of mha-lab"}));
  EXPECT_TRUE(fails_with(run_mha({"prune", "extra"}), {"prune takes no positional argument"}));
  const std::string one = temp_path("one.txt");
  write_file(one, "the cat\n");
  EXPECT_TRUE(
      fails_with(run_mha({"prune", "--model", tiny, "--text", one}), {"at least one text"}));
  const std::string bad = temp_path("bad.txt");
  write_file(bad, "the cat\nthe \xff dog\n");
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", tiny, "--text", bad}),
                         {"text 1: text is not valid UTF-8"}));
  std::remove(bad.c_str());
  const std::string dates = temp_path("dates.json");
  write_file(dates,
             R"({"examples": [{"input": "Nov 30, 2026", "target": "2026-11-30", "format": "f",
    "roles": "MMM.DD..YYYY"}, {"input": "0123456789012345678901234567890123456789", "target": "x",
    "format": "f", "roles": "........................................"}]})");
  EXPECT_TRUE(fails_with(run_mha({"prune", "--model", date_model, "--heldout", dates}),
                         {"example 1: input has 40 characters"}));
  std::remove(dates.c_str());
  std::remove(one.c_str());
}

TEST(CliModels, EveryShippedModelVerified) {
  const json out = parse_stdout(run_mha({"models", "--json"}));
  bool english = false, date = false;
  for (const auto& m : out.at("models")) {
    const std::string file = m.at("file").get<std::string>();
    SCOPED_TRACE(file);
    json expected =
        mha::model_summary_to_json(mha::describe_model_file(bytes_of(repo + "/web/" + file)));
    expected["file"] = file;
    expected["name"] = file.substr(file.rfind('/') + 1, file.rfind('.') - file.rfind('/') - 1);
    EXPECT_EQ(m, expected);
    english |= file == "english_lm.safetensors";
    date |= file == "date_model.safetensors";
  }
  EXPECT_TRUE(english && date);
  const CliRun text = run_mha({"models"});
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("english_lm.safetensors  english  24 heads (8 an attention, 3 layers), "
                          "d_model 128"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("date_model.safetensors  date  24 heads (4 an attention, 4 layers)"),
            std::string::npos)
      << text.out;
  const std::string empty = temp_path("empty_dir");
  std::filesystem::create_directory(empty);
  const CliRun none = run_mha({"models", "--dir", empty});
  EXPECT_EQ(none.status, 0);
  EXPECT_EQ(none.out, "no model file (*.safetensors) under " + empty + "\n");
  EXPECT_EQ(parse_stdout(run_mha({"models", "--dir", empty, "--json"})),
            json::parse(R"({"models": []})"));
  std::filesystem::remove(empty);
  EXPECT_TRUE(fails_with(run_mha({"models", "--dir", fixtures}),
                         {"torch_mha_layer.safetensors", "not a model of mha-lab"}));
  EXPECT_TRUE(fails_with(run_mha({"models", "--dir", repo + "/no-such-dir"}), {"cannot list"}));
}

}  // namespace
