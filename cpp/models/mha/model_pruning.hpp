// The trained models' heads as experiments (docs/head-experiments.md, docs/cli.md): the held-out
// metric of each model with heads switched off, the greedy pruning curve (analysis layer,
// pruning.hpp) over it, and what a model file holds (kind, sizes, parameter counts, training step).
//
// Metrics. English model: loss per character, the summed negative log-likelihood (nats) of every
// token after <bos> of each held-out text over the texts' characters (Unicode code points), texts
// whose tokens do not fit max_len skipped (scripts/training/evaluate_english_lm.py
// sentence_losses, the reference). Date model: exact match of the greedy translation against the
// target (DateModel::reproduces, the same verdict as mha date-eval).
// Halves: item k of the held-out list is in the selection half when k is even, in the
// measurement half when k is odd.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mha/date_model.hpp"
#include "mha/english_lm.hpp"
#include "mha/pruning.hpp"

namespace mha {

/// The English model's held-out loss over some texts.
struct EnglishLoss {
  double nats = 0.0;     ///< summed -log p(token) of every scored token (natural log)
  Index characters = 0;  ///< code points of the scored texts
  Index tokens = 0;      ///< tokens scored (every token after <bos>)
  Index texts = 0;       ///< texts scored
  Index skipped = 0;     ///< texts whose tokens do not fit max_len (or that have no token)
  /// nats / characters; NaN when no text was scored.
  double per_character() const;
};

/// Every head of the English model, layer by layer: (L * h) entries.
std::vector<LMHead> english_lm_heads(const EnglishLM& model);
/// "L0 H1" (English model) and "encoder_self L0 H1" (date model).
std::string head_name(const LMHead& head);
std::string head_name(const HeadId& head);

/// The English model's loss on `texts` with `ablated` heads off (EnglishLM::encode, forward and
/// next_token_logprobs, as EnglishLM::run scores a text). Throws as EnglishLM::encode, naming the
/// text's index ("text 3: text is not valid UTF-8: ..."), and as forward (an ablated head outside
/// the model).
EnglishLoss english_heldout_loss(const EnglishLM& model, const std::vector<std::string>& texts,
                                 const std::vector<LMHead>& ablated = {});

/// The date model's exact match on `examples` with `ablation` heads off, a fraction in [0, 1]
/// (0 for no example). Throws as DateModel::reproduces.
double date_exact_match(const DateModel& model, const std::vector<DateExample>& examples,
                        const Ablation& ablation = {});

/// A pruning curve and what it was measured on.
struct PruneCurve {
  std::string metric;  ///< "loss_per_character" or "exact_match"
  bool lower_is_better = true;
  std::vector<std::string> heads;  ///< every head's name (head_name), by index
  Index selection_items = 0;       ///< held-out texts or examples that choose the heads
  Index measurement_items = 0;     ///< those the values are measured on
  std::vector<PruneStep> steps;    ///< greedy_prune: heads + 1 steps
};

/// The English model's greedy curve of loss per character over `texts` (held-out, split in
/// halves). Throws value_error when either half has no text that fits, and as
/// english_heldout_loss.
PruneCurve prune_english_lm(const EnglishLM& model, const std::vector<std::string>& texts);

/// The date model's greedy curve of exact match over `examples` (held-out, split in halves).
/// Throws value_error for fewer than 2 examples; value_error / limit_error naming the example's
/// index for an input the model cannot read (DateModel::source_ids); as date_exact_match.
PruneCurve prune_date_model(const DateModel& model, const std::vector<DateExample>& examples);

/// {"model": model_name, "checksum": the model's xxh64, "kind", "metric", "lower_is_better",
/// "heads": [names],
///  "selection_items", "measurement_items", "protocol": text,
///  "steps": [{"heads_left", "removed": name or null, "value", "selection_value"}]}
/// (docs/cli.md "mha prune").
nlohmann::json prune_curve_to_json(const PruneCurve& curve, const std::string& model_name,
                                   const std::string& checksum, const std::string& kind);

/// The curve of the model in `bytes` (model_file_kind picks the loader) as prune_curve_to_json:
/// an English model on `texts`, a date model on `examples`.
/// Throws value_error when the model's kind of held-out items is not given, and as the loaders and
/// prune_english_lm / prune_date_model.
nlohmann::json prune_model_file(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                const std::optional<std::vector<std::string>>& texts,
                                const std::optional<std::vector<DateExample>>& examples);

/// What a model file holds (docs/cli.md "mha models").
struct ModelSummary {
  std::string kind;      ///< "english" or "date"
  Index num_layers = 0;  ///< English: layers; date: encoder + decoder layers
  Index num_heads = 0;   ///< heads per attention
  Index d_model = 0;
  Index heads = 0;       ///< every head of the model (num_heads * attentions)
  Index parameters = 0;  ///< every stored weight (the tied embedding once)
  /// in_proj and out_proj weights and biases of every attention: 4 d^2 + 4 d each, whatever
  /// num_heads is.
  Index attention_parameters = 0;
  /// The English model's learned position bias, one scalar per head and distance (h * max_len a
  /// layer): part of parameters, not of attention_parameters.
  Index position_bias_parameters = 0;
  std::optional<Index> step;  ///< the training step ("step" of a checkpoint, else "steps")
  std::string checksum;       ///< the verified xxh64
};

/// Loads `bytes` with the loader of its kind (its metadata's "format": EnglishLM::load or
/// DateModel::load, every check included) and counts its parameters.
/// Throws parse_error "not a model of mha-lab: format \"x\"" for another format, and as the
/// loaders.
ModelSummary describe_model_file(const std::vector<std::uint8_t>& bytes);

/// {"kind", "num_layers", "num_heads", "d_model", "heads", "parameters", "attention_parameters",
///  "position_bias_parameters", "step" (null when unknown), "checksum"}.
nlohmann::json model_summary_to_json(const ModelSummary& s);

/// "english" or "date" by the metadata's "format" (the file is not verified).
/// Throws as Safetensors::parse, and parse_error for a file of another format.
std::string model_file_kind(const std::vector<std::uint8_t>& bytes);

}  // namespace mha
