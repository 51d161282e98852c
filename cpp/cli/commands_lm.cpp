// `mha lm` (docs/cli.md, docs/english-lm-format.md): read the arguments, the model file and the
// text, run the English model (mha_models), print its report: the tokens, the next-token
// prediction and the perplexity (mha::english_lm_run_to_text), or all of it with every attention
// weight as JSON (mha::english_lm_run_to_json); with --report, the head report card of the text
// (mha::head_report, by token or with --by-word by word) after it, or as "report" in the JSON.
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/english_lm.hpp"
#include "mha/english_report.hpp"
#include "mha/head_report.hpp"
#include "mha/head_report_io.hpp"

namespace mha_cli {

namespace {

/// "L.H[,L.H...]", e.g. "0.1,1.3".
std::vector<mha::LMHead> parse_heads(const std::string& text) {
  const usage_error bad{"--ablate takes LAYER.HEAD[,LAYER.HEAD...] (e.g. 0.1,1.3), got " +
                        in_quotes(text)};
  std::vector<mha::LMHead> heads;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const std::size_t dot = item.find('.');
    if (dot == std::string::npos) throw bad;
    const auto layer = parse_unsigned(item.substr(0, dot), 1u << 20);
    const auto head = parse_unsigned(item.substr(dot + 1), 1u << 20);
    if (!layer || !head) throw bad;
    heads.push_back({static_cast<mha::Index>(*layer), static_cast<mha::Index>(*head)});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return heads;
}

}  // namespace

int cmd_lm(const std::vector<std::string>& args) {
  const Options o =
      parse_options(args, {"--model", "--top", "--ablate"}, {"--json", "--report", "--by-word"}, "lm");
  const bool report = has_flag(o, "--report");
  if (has_flag(o, "--by-word") && !report) throw usage_error{"--by-word is an option of --report"};
  if (o.positional.size() != 1) {
    throw usage_error{"lm takes one TEXT (quote it, or - for standard input), got " +
                      std::to_string(o.positional.size())};
  }
  mha::Index top = 5;
  if (const auto k = single(o, "--top")) {
    const auto v = parse_unsigned(*k, 1u << 20);
    if (!v || *v == 0) throw usage_error{"--top takes a whole number from 1, got " + in_quotes(*k)};
    top = static_cast<mha::Index>(*v);
  }
  std::vector<mha::LMHead> ablated;
  for (const auto& [key, value] : o.values) {
    if (key != "--ablate") continue;
    for (const auto& h : parse_heads(value)) ablated.push_back(h);
  }
  const mha::EnglishLM model = load_model<mha::EnglishLM>(
      model_path(single(o, "--model"), BuiltInFile::english_lm), "English model");
  const std::string text = o.positional[0] == "-" ? read_input("-") : o.positional[0];
  const mha::EnglishLMRun r = model.run(text, top, ablated);
  std::optional<mha::HeadReportCard> card;
  if (report) {
    mha::ReportExample example;
    example.layers = r.attn_weights;
    example.tokens = r.tokens.tokens;
    if (has_flag(o, "--by-word")) {
      example.word_index.assign(r.tokens.word_index.begin(), r.tokens.word_index.end());
    }
    card = mha::head_report({example});
  }

  if (!has_flag(o, "--json")) {
    std::string out = mha::english_lm_run_to_text(model, r);
    if (card) out += "\n" + mha::head_report_table(*card);
    return write_text(out) ? exit_ok : exit_internal;
  }
  nlohmann::json out = mha::english_lm_run_to_json(model, r, ablated);
  if (card) out["report"] = mha::head_report_to_json(*card);
  return write_response(out) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
