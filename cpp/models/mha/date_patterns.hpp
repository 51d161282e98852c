// Head-pattern reports of the date model: every head of every layer (encoder self, decoder
// self, cross) scored as analysis/patterns_io scores exported weights (docs/patterns.md).
//
// Shape legend: L = layers, h = num_heads, n = query tokens, m = key tokens.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mha/date_model.hpp"

namespace mha {

/// Scores of every head of the date model (encoder self, decoder self, cross; every layer) for
/// one input: {"input", "output", "source_tokens", "decoder_tokens", "layers": [...]}.
nlohmann::json date_model_patterns(const DateModel& model, const std::string& text);

/// The same averaged over `inputs`: per head the mean of each score (over the inputs where it is
/// defined) and of its uniform baseline, "labels" from those means (head_labels), and
/// "label_share": the fraction of inputs on which the head earned each label.
/// Throws as DateModel::translate (naming the input).
nlohmann::json date_model_patterns_mean(const DateModel& model,
                                        const std::vector<std::string>& inputs);

}  // namespace mha
