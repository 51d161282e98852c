// The date model's JSON reports (docs/date-model.md, docs/cli.md "translate" and "date-eval"):
// one translation with its attention, the held-out examples read from JSON, and the evaluation
// report (accuracy, per format, failures, every head, the checks and module 03's claims).
//
// Shape legend: L = layers, h = num_heads, S = source characters, T = output tokens,
// V = output vocabulary.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "mha/date_model.hpp"

namespace mha {

/// One translation as `mha translate --json` prints it: {"input", "output", "source_tokens",
/// "output_tokens", "produced_eos", "num_heads", "num_encoder_layers", "num_decoder_layers",
/// "encoder_self" (L, h, S, S), "decoder_self" (L, h, T, T), "cross" (L, h, T, S)}, plus "logits"
/// (T, V) when `logits` (the translation must then hold them: DateModel::translate with logits).
/// Throws nothing of its own.
nlohmann::json date_translation_to_json(const DateModel& model, const DateTranslation& t,
                                        bool logits);

/// The held-out examples of `text`: a JSON array of {"input", "target", "format", "roles"} (all
/// strings; other keys ignored), or an object holding such an array under "examples".
/// `name` names the source in messages, e.g. "\"heldout.json\"".
/// Throws parse_error for malformed JSON (parse_json_text), for a document that holds no such
/// array ("\"h.json\" must hold an array of {input, target, format, roles} (or {\"examples\":
/// [...]})") and for an example without one of the four strings ("\"h.json\": example 3 needs a
/// string \"roles\"").
std::vector<DateExample> parse_date_examples(std::string_view text, const std::string& name);

/// Where an evaluation's model and examples came from, as its report names them.
struct DateEvaluationSource {
  const DateModel& model;                   ///< the evaluated model (checksum and config)
  std::string model_file;                   ///< its file, as given
  std::string heldout_file;                 ///< the examples' file, as given
  const std::vector<DateExample>& examples; ///< the examples evaluate_date_model was given
};

/// The report of `mha date-eval` (docs/date-model.md "What heads learn"): {"model": {"file",
/// "xxh64", "config"}, "heldout", "examples", "correct", "accuracy", "per_format": {format:
/// {"examples", "correct", "accuracy"}}, "failures": [{"input", "target", "output", "format"}],
/// "heads": [per head its kind, layer, head, label and measurements], "checks": {"year_head"?,
/// "least_useful_head"?}, "claims": [module 03's three claims, date_head_claims, with a
/// "statement" each], "seconds": {"translate_all", "ablation_all_heads"}}. Fractions are rounded
/// to 6 decimals, seconds to 3. Throws nothing of its own.
nlohmann::json date_evaluation_to_json(const DateEvaluation& ev, const DateEvaluationSource& source);

}  // namespace mha
