#include "mha/english_report.hpp"

#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include "mha/json_io.hpp"

namespace mha {

namespace {

/// A piece as the text report shows it: "▁" (U+2581, a space) dropped where it starts the
/// piece, "▁" alone shown as "▁".
std::string readable_piece(const std::string& piece) {
  static const std::string space = "\xE2\x96\x81";
  if (piece.size() > space.size() && piece.compare(0, space.size(), space) == 0)
    return piece.substr(space.size());
  return piece;
}

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

}  // namespace

std::string english_lm_run_to_text(const EnglishLM& model, const EnglishLMRun& r) {
  const EnglishTokens& t = r.tokens;
  // The pieces, a word's pieces joined by "|" and words apart: "<bos> the c|at sat ."
  std::string out = "tokens:";
  for (std::size_t i = 0; i < t.tokens.size(); ++i) {
    const bool same_word = i > 0 && t.word_index[i] == t.word_index[i - 1];
    out += (same_word ? "|" : " ") + readable_piece(t.tokens[i]);
  }
  const auto count = [](std::size_t k, const char* one, const char* many) {
    return std::to_string(k) + " " + (k == 1 ? one : many);
  };
  out += "\n(" + count(t.tokens.size(), "token", "tokens") + ", " +
         count(t.words.size(), "word", "words") + ", <bos> included)\n";
  if (t.truncated_tokens > 0) {
    out += "truncated: " + std::to_string(t.truncated_tokens) +
           " tokens beyond the model's max_len=" + std::to_string(model.config().max_len) +
           " were dropped\n";
  }
  out += "next token:\n";
  for (const auto& p : r.next_token) {
    out += "  " + fixed(p.probability, 4) + "  " + readable_piece(p.token) + "\n";
  }
  out += std::isnan(r.perplexity) ? std::string("perplexity: none (no text token to score)\n")
                                  : "perplexity: " + fixed(r.perplexity, 2) + "\n";
  return out;
}

nlohmann::json english_lm_run_to_json(const EnglishLM& model, const EnglishLMRun& r,
                                      const std::vector<LMHead>& ablated) {
  nlohmann::json next = nlohmann::json::array();
  for (const auto& p : r.next_token)
    next.push_back({{"token", p.token}, {"probability", p.probability}});
  nlohmann::json weights = nlohmann::json::array();
  for (const auto& s : r.attn_weights) weights.push_back(head_stack_to_json(s));
  std::set<std::pair<Index, Index>> off;
  for (const auto& h : ablated) off.insert({h.layer, h.head});
  nlohmann::json ablated_json = nlohmann::json::array();
  for (const auto& [layer, head] : off) ablated_json.push_back({layer, head});
  return {{"tokens", r.tokens.tokens},
          {"word_index", r.tokens.word_index},
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
}

}  // namespace mha
