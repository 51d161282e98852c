// The English model's reports (docs/cli.md "lm", docs/english-lm-format.md): one run as text and
// as JSON with every attention weight.
//
// Shape legend: n = tokens (<bos> first), h = num_heads, L = num_layers.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mha/english_lm.hpp"

namespace mha {

/// One run as `mha lm` prints it: the pieces (a word's pieces joined by "|", words apart by a
/// space, a piece's leading "▁" dropped), the counts of tokens and words, the tokens dropped
/// beyond max_len, the most probable next tokens (probability to 4 decimals) and the
/// perplexity (2 decimals; "none" when no text token was scored). Lines end with "\n".
std::string english_lm_run_to_text(const EnglishLM& model, const EnglishLMRun& r);

/// One run as `mha lm --json` prints it: {"tokens" (n pieces), "word_index" (n: each token's
/// word, 0 = <bos>), "words" (the words, "<bos>" first), "unknown" (n, all false), "ids",
/// "truncated_tokens", "next_token": [{"token", "probability"}], "next_token_logprob" (n - 1),
/// "perplexity" (null when not scored, "inf" when it overflows), "layers", "num_heads",
/// "attn_weights" (L, h, n, n), "ablated": the distinct [layer, head] pairs of `ablated`, sorted}.
/// Throws nothing of its own.
nlohmann::json english_lm_run_to_json(const EnglishLM& model, const EnglishLMRun& r,
                                      const std::vector<LMHead>& ablated);

}  // namespace mha
