// `mha lm` (docs/cli.md): the JSON output against PyTorch's golden data for the tiny models
// (tests/fixtures/english_lm_golden_tiny.json: ids and tokens exactly, attention weights within
// 1e-4 absolute, next_token_logprob within 1e-3 absolute, perplexity within 1e-3 relative), the
// text report, standard input, and every bad input as exit status 2 with one stderr line.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "mha/safetensors.hpp"

namespace {

using namespace mha_cli_test;

const std::string fixtures = MHA_FIXTURES_DIR;
const std::string tiny = fixtures + "/english_lm_tiny_relbias_mlp.safetensors";

json golden() {
  std::ifstream in(fixtures + "/english_lm_golden_tiny.json");
  return json::parse(in);
}

/// Flat values of a nested JSON array.
void flatten(const json& v, std::vector<double>& out) {
  if (v.is_array()) {
    for (const auto& x : v) flatten(x, out);
  } else {
    out.push_back(v.get<double>());
  }
}

TEST(CliLm, JsonMatchesPyTorchOnTheTinyModels) {
  const json doc = golden();
  for (const auto& c : doc.at("cases")) {
    const std::string text = c.at("text").get<std::string>();
    SCOPED_TRACE(text);
    const json& model = doc.at("models").at(c.at("model").get<std::string>());
    std::vector<std::string> args = {"lm", "--json", "--model",
                                     fixtures + "/../../" + model.at("file").get<std::string>()};
    std::string ablate;
    for (const auto& a : c.at("ablate")) {
      ablate += (ablate.empty() ? "" : ",") + std::to_string(a.at(0).get<int>()) + "." +
                std::to_string(a.at(1).get<int>());
    }
    if (!ablate.empty()) args.insert(args.end(), {"--ablate", ablate});
    args.push_back(text);
    const json out = parse_stdout(run_mha(args));
    EXPECT_EQ(out.at("ids"), c.at("ids"));
    EXPECT_EQ(out.at("tokens"), c.at("tokens"));
    EXPECT_EQ(out.at("words"), c.at("words"));
    EXPECT_EQ(out.at("word_index"), c.at("word_index"));
    EXPECT_EQ(out.at("unknown"), c.at("unknown"));
    EXPECT_EQ(out.at("truncated_tokens"), c.at("truncated_tokens"));
    EXPECT_EQ(out.at("layers"), model.at("config").at("num_layers"));
    EXPECT_EQ(out.at("num_heads"), model.at("config").at("num_heads"));
    EXPECT_EQ(out.at("ablated"), c.at("ablate"));
    std::vector<double> ours, theirs;
    flatten(out.at("attn_weights"), ours);
    theirs = c.at("attn_weights").at("data").get<std::vector<double>>();
    ASSERT_EQ(ours.size(), theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_NEAR(ours[i], theirs[i], 1e-4) << i;
    const auto lp = out.at("next_token_logprob").get<std::vector<double>>();
    const auto lp_ref = c.at("next_token_logprob").get<std::vector<double>>();
    ASSERT_EQ(lp.size(), lp_ref.size());
    for (std::size_t i = 0; i < lp.size(); ++i) EXPECT_NEAR(lp[i], lp_ref[i], 1e-3);
    if (c.at("perplexity").is_null()) {
      EXPECT_TRUE(out.at("perplexity").is_null());
    } else {
      const double p = c.at("perplexity").get<double>();
      EXPECT_NEAR(out.at("perplexity").get<double>(), p, 1e-3 * p);
    }
    ASSERT_EQ(out.at("next_token").size(), 5u);
    EXPECT_EQ(out.at("next_token")[0].at("token"), c.at("next_token")[0].at("token"));
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_NEAR(out.at("next_token")[i].at("probability").get<double>(),
                  c.at("next_token")[i].at("probability").get<double>(), 1e-4);
    }
  }
}

TEST(CliLm, TextReportTopAndStandardInput) {
  const CliRun run = run_mha({"lm", "--model", tiny, "--top", "2", "Zebras ate the ball!"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  // A word's pieces joined by "|", a piece's leading U+2581 dropped (the tiny tokenizer has no
  // "z" or "!": they are spelt in bytes).
  EXPECT_EQ(run.out.rfind("tokens: <bos> \u2581|<0x7A>|e|b|r|a|s a|t|e the b|a|l|l <0x21>\n"
                          "(17 tokens, 6 words, <bos> included)\n",
                          0),
            0u)
      << run.out;
  EXPECT_NE(run.out.find("perplexity: "), std::string::npos);
  const std::string text = "The cat sat on the mat.";
  const json from_stdin = parse_stdout(run_mha({"lm", "--json", "--model", tiny, "-"}, &text));
  const json from_arg = parse_stdout(run_mha({"lm", "--json", "--model", tiny, text}));
  EXPECT_EQ(from_stdin, from_arg);
  const json top1 = parse_stdout(run_mha({"lm", "--json", "--top=1", "--model", tiny, text}));
  EXPECT_EQ(top1.at("next_token").size(), 1u);
  const CliRun empty = run_mha({"lm", "--model", tiny, ""});
  EXPECT_EQ(empty.status, 0) << empty.err;
  EXPECT_NE(empty.out.find("perplexity: none"), std::string::npos);
}

// A generator bias of fp16's largest value on the last token makes every other token's
// log-probability about -65504: the perplexity overflows, written "inf" (JSON has no infinity).
TEST(CliLm, PerplexityOverflowIsTheStringInf) {
  std::string bytes = slurp(tiny);
  bytes[bytes.size() - 2] = '\xFF';  // generator.bias[V - 1] = 0x7BFF, the file's last tensor
  bytes[bytes.size() - 1] = '\x7B';
  const std::string hash = mha::safetensors_content_xxh64(
      mha::Safetensors::parse(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
      "xxh64");
  bytes.replace(bytes.find("\"xxh64\":\"") + 9, 16, hash);
  const std::string path = temp_path("overflow.safetensors");
  write_file(path, bytes);
  const json out = parse_stdout(run_mha({"lm", "--json", "--model", path, "the cat the cat"}));
  EXPECT_EQ(out.at("perplexity"), "inf");
  const CliRun text = run_mha({"lm", "--model", path, "the cat"});
  EXPECT_NE(text.out.find("perplexity: inf"), std::string::npos) << text.out;
  std::remove(path.c_str());
}

TEST(CliLm, BadInputIsStatusTwoAndOneLine) {
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", fixtures + "/no_such.safetensors", "hi"}),
                         {"cannot open", "no_such.safetensors"}));
  // A copy with one data byte flipped.
  std::string bytes = slurp(tiny);
  bytes[bytes.size() - 5] = static_cast<char>(bytes[bytes.size() - 5] ^ 0x10);
  const std::string broken = temp_path("broken.safetensors");
  write_file(broken, bytes);
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", broken, "hi"}),
                         {"cannot load the English model", "checksum mismatch", "hash to"}));
  std::remove(broken.c_str());
  // A copy whose vocabulary has "<0x41>" and "<0x42>" swapped (same length, so the header length
  // holds).
  std::string swapped = slurp(tiny);
  const std::string pieces = "\\\"<0x41>\\\",\\\"<0x42>\\\",";  // as the header's JSON has them
  const std::size_t at = swapped.find(pieces);
  ASSERT_NE(at, std::string::npos);
  swapped.replace(at, pieces.size(), "\\\"<0x42>\\\",\\\"<0x41>\\\",");
  const std::string tampered = temp_path("vocabswap.safetensors");
  write_file(tampered, swapped);
  EXPECT_TRUE(
      fails_with(run_mha({"lm", "--model", tampered, "the dog sat on the"}),
                 {"cannot load the English model", "checksum mismatch", "metadata hash to"}));
  std::remove(tampered.c_str());
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--top", "0", "hi"}), {"--top"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--top", "x", "hi"}), {"--top"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--top", "299", "hi"}), {"top_k=299"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--ablate", "9.9", "hi"}),
                         {"cannot ablate layer 9 head 9", "2 layers of 4 heads"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--ablate", "x", "hi"}),
                         {"--ablate takes LAYER.HEAD"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--ablate", "0.1,", "hi"}),
                         {"--ablate takes LAYER.HEAD"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "ab\xFF"}),
                         {"not valid UTF-8", "0xFF at offset 2"}));
  const std::string bad = "\xC0\xAF";
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "-"}, &bad), {"not valid UTF-8"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny, "--temperature", "2", "hi"}),
                         {"unknown option \"--temperature\" for lm"}));
  EXPECT_TRUE(fails_with(run_mha({"lm", "--model", tiny}), {"lm takes one TEXT"}));
}

}  // namespace

// --report adds the head report card of the text (mha::head_report): by token, or by word.
TEST(CliLm, ReportIsTheCardOfTheText) {
  const std::string text = "The cat sat on the mat. The cat sat on the mat.";
  const json by_token = parse_stdout(run_mha({"lm", "--json", "--report", "--model", tiny, text}));
  const json& card = by_token.at("report");
  EXPECT_EQ(card.at("by_word"), false);
  EXPECT_EQ(card.at("layers"), 2);
  EXPECT_EQ(card.at("num_heads"), 4);
  ASSERT_EQ(card.at("heads").size(), 8u);
  // Every score has a value and the chance of a uniform row on the same rows.
  for (const auto& s : card.at("heads")[0].at("scores")) {
    if (s.at("name") == "coreference") continue;  // no probe in one text
    EXPECT_TRUE(s.at("value").is_number()) << s;
    EXPECT_TRUE(s.at("chance").is_number()) << s;
  }
  const json by_word =
      parse_stdout(run_mha({"lm", "--json", "--report", "--by-word", "--model", tiny, text}));
  EXPECT_EQ(by_word.at("report").at("by_word"), true);
  const CliRun table = run_mha({"lm", "--report", "--model", tiny, text});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("head report card: 1 example, 2 layers x 4 heads, scored by token"),
            std::string::npos)
      << table.out;
  EXPECT_TRUE(fails_with(run_mha({"lm", "--by-word", "--model", tiny, text}),
                         {"--by-word is an option of --report"}));
}
