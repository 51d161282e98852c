// `mha lm` (docs/cli.md, docs/english-lm-format.md): read the arguments, the model file and the
// text, run the English model (mha_models), print the tokens, the next-token prediction and the
// perplexity, or all of it with every attention weight as JSON.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "mha/english_lm.hpp"
#include "mha/json_io.hpp"

namespace mha_cli {

namespace {

std::string english_lm_path(const std::optional<std::string>& model) {
#ifdef MHA_DEFAULT_ENGLISH_LM
  return model_path(model, MHA_DEFAULT_ENGLISH_LM);
#else
  return model_path(model, nullptr);
#endif
}

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

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string text_report(const mha::EnglishLMRun& r, const mha::EnglishLM& model) {
  const mha::EnglishTokens& t = r.tokens;
  std::string out = "tokens:";
  std::size_t unknown = 0;
  for (std::size_t i = 0; i < t.words.size(); ++i) {
    out += " " + t.words[i] + (t.unknown[i] ? "*" : "");
    unknown += t.unknown[i] ? 1 : 0;
  }
  out += "\n";
  if (unknown > 0) out += "  (* " + std::to_string(unknown) + " not in the vocabulary: <unk>)\n";
  if (t.truncated_tokens > 0) {
    out += "truncated: " + std::to_string(t.truncated_tokens) +
           " tokens beyond the model's max_len=" + std::to_string(model.config().max_len) +
           " were dropped\n";
  }
  out += "next token:\n";
  for (const auto& p : r.next_token) out += "  " + fixed(p.probability, 4) + "  " + p.token + "\n";
  out += std::isnan(r.perplexity) ? std::string("perplexity: none (no text token to score)\n")
                                  : "perplexity: " + fixed(r.perplexity, 2) + "\n";
  return out;
}

}  // namespace

int cmd_lm(const std::vector<std::string>& args) {
  const Options o = parse_options(args, {"--model", "--top", "--ablate"}, {"--json"}, "lm");
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
  const mha::EnglishLM model = load_model<mha::EnglishLM>(english_lm_path(single(o, "--model")), "English model");
  const std::string text = o.positional[0] == "-" ? read_input("-") : o.positional[0];
  const mha::EnglishLMRun r = model.run(text, top, ablated);

  if (!has_flag(o, "--json")) {
    const std::string report = text_report(r, model);
    const bool ok = std::fwrite(report.data(), 1, report.size(), stdout) == report.size();
    return ok && std::fflush(stdout) == 0 ? exit_ok : exit_internal;
  }
  nlohmann::json next = nlohmann::json::array();
  for (const auto& p : r.next_token)
    next.push_back({{"token", p.token}, {"probability", p.probability}});
  nlohmann::json weights = nlohmann::json::array();
  for (const auto& s : r.attn_weights) weights.push_back(mha::head_stack_to_json(s));
  std::set<std::pair<mha::Index, mha::Index>> off;
  for (const auto& h : ablated) off.insert({h.layer, h.head});
  nlohmann::json ablated_json = nlohmann::json::array();
  for (const auto& [layer, head] : off) ablated_json.push_back({layer, head});
  const nlohmann::json out = {
      {"tokens", r.tokens.tokens},
      {"words", r.tokens.words},
      {"unknown", r.tokens.unknown},
      {"ids", r.tokens.ids},
      {"truncated_tokens", r.tokens.truncated_tokens},
      {"next_token", next},
      {"next_token_logprob", r.next_token_logprob},
      {"perplexity", std::isnan(r.perplexity)   ? nlohmann::json(nullptr)
                     : std::isinf(r.perplexity) ? nlohmann::json("inf")  // JSON has no infinity
                                                : nlohmann::json(r.perplexity)},
      {"layers", model.config().num_layers},
      {"num_heads", model.config().num_heads},
      {"attn_weights", weights},
      {"ablated", ablated_json}};
  return write_response(out) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
