// `mha patterns`: reading exported attention (JSON, .npy + tokens, safetensors) and writing the
// head-pattern scores as JSON (docs/cli.md "patterns", docs/patterns.md).
//
// Shape legend: L = layers, h = num_heads, n = query tokens, m = key tokens.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mha/patterns.hpp"

namespace mha {

/// Attention weights to score, with the tokens that name their rows and columns.
struct PatternsInput {
  std::vector<HeadStack> layers;          ///< L stacks of (h, n, m), validated
  std::vector<std::string> tokens;        ///< (m) key tokens, or empty when not given
  std::vector<std::string> query_tokens;  ///< (n) when n != m and given; else empty
  std::vector<std::int64_t> shape;        ///< the shape as found in the input
};

/// What a file's bytes hold: ".npy" (magic \x93NUMPY), "safetensors" (an 8-byte length whose
/// header starts with '{'), else "json".
std::string sniff_attention_format(std::string_view bytes);

/// Parses bytes of any of the three formats into layers (attention_layers: (h, n, m),
/// (L, h, n, m) or (L, 1, h, n, m)). JSON: {"tokens": [m strings], "attn_weights": nested
/// numbers, "query_tokens": [n strings] (optional, cross-attention)}, no other key.
/// `tensor`: the safetensors tensor (empty: the only one); an error for other formats.
/// Throws parse_error (format problems, unknown keys, ragged arrays, a non-number), shape_error,
/// value_error, limit_error as read_npy / attention_layers.
PatternsInput read_attention_input(std::string_view bytes, const std::string& tensor = "");

/// A nested JSON array of numbers, (h, n, m), (L, h, n, m) or (L, 1, h, n, m), as L stacks
/// (attention_layers); `key` names it in messages. Throws as read_attention_input.
std::vector<HeadStack> attention_layers_from_json(const nlohmann::json& value,
                                                  const std::string& key);

/// Tokens from a file: a JSON array of strings, or else one token per line (a final newline
/// does not add a token; "\r\n" endings are accepted). Throws parse_error for a JSON value that
/// is not an array of strings.
std::vector<std::string> parse_tokens_text(std::string_view text);

/// Checks tokens against the layers: tokens must have m entries (and n when n == m);
/// query_tokens n entries. Throws shape_error "--tokens has 5 tokens, the attention has 6 keys
/// (shape (2, 6, 6))".
void check_tokens(const PatternsInput& input, const std::string& what = "tokens");

/// The scores of one layer as JSON: {"name", "n", "m", "heads": [{"head", "labels", "scores",
/// "uniform_baseline", "rows_scored", "causal", "stripe_token"?}], "js_distance": (h, h)}.
/// tokens.keys (m or empty) name the stripe key and, with tokens.queries (n or empty: HeadTokens),
/// give the token scores (duplicate_token, induction, punctuation; null without tokens).
/// Throws as score_heads.
nlohmann::json layer_patterns_to_json(const HeadStack& layer, const std::string& name,
                                      const HeadTokens& tokens,
                                      const HeadScoreThresholds& thresholds = {});

/// The scores of every layer of `input` as `mha patterns` and mha_lab.head_patterns report them
/// (docs/patterns.md): {"shape": input.shape, "tokens": (m) or [], "thresholds":
/// thresholds_to_json({}), "layers": [layer_patterns_to_json of layer l named "layer l", plus
/// "layer": l], "query_tokens": (n), only when given}. input.layers holds L stacks of (h, n, m).
/// The tokens are checked first (check_tokens(input, tokens_what): `tokens_what` names where they
/// came from in the message, e.g. "--tokens \"t.txt\"").
/// Throws shape_error as check_tokens (tokens that do not fit the layers), and what score_heads
/// throws.
nlohmann::json patterns_report_to_json(const PatternsInput& input,
                                       const std::string& tokens_what = "tokens");

/// The thresholds as JSON, {"previous_token": 0.5, ..., "duplicate_token", "induction",
/// "punctuation", "margin"}.
nlohmann::json thresholds_to_json(const HeadScoreThresholds& thresholds);

/// One head's scores as JSON: {"previous_token", "diagonal", "local_band", "vertical_stripe",
/// "stripe_key", "first_token", "mean_distance", "mean_distance_normalized", "entropy_bits",
/// "entropy_normalized", "max_weight", "duplicate_token", "induction", "punctuation"}; a score
/// without a value is null.
nlohmann::json scores_to_json(const HeadScoreValues& scores);

/// Every optional score of HeadScoreValues (as members), for averaging over inputs.
std::vector<std::optional<double> HeadScoreValues::*> score_fields();

}  // namespace mha
