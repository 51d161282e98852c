// The date-translation model: "Nov 30, 2026" -> "2026-11-30", a character-level
// encoder-decoder Transformer (transformer.hpp) loaded from web/date_model.safetensors.
// File contract: docs/date-model-format.md. What the heads learn: docs/date-model.md.
//
// Shape legend: S = source characters, T = decoder steps (<bos> + generated characters),
// V = vocabulary size, d = d_model, h = num_heads, L = layers (encoder or decoder).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mha/safetensors.hpp"
#include "mha/transformer.hpp"

namespace mha {

/// One translation, with every attention weight of every layer, kind and head.
struct DateTranslation {
  std::string input;
  /// The generated characters, without the final <eos> (e.g. "2026-11-30"). A special token
  /// generated mid-way (very unlikely) appears as its name, e.g. "<unk>".
  std::string output;
  std::vector<std::string> source_tokens;  ///< (S) one per input character (UTF-8 code point)
  std::vector<std::string> output_tokens;  ///< generated tokens, then "<eos>" when produced
  bool produced_eos = false;
  /// encoder_self L x (h, S, S); decoder_self L x (h, T, T); cross L x (h, T, S); logits (T, V)
  /// only when asked for. Query t of the decoder is input position t (<bos> for t = 0) and
  /// predicts output token t.
  Seq2SeqTrace trace;
};

/// The loaded model: checksum, config and vocabulary verified, weights widened from fp16.
class DateModel {
 public:
  static constexpr const char* format_name = "mha-lab-date-model";
  static constexpr const char* format_version = "1";

  /// Loads a whole .safetensors file's bytes (docs/date-model-format.md). Checks, in order: the
  /// safetensors container (Safetensors::parse), metadata keys format, format_version, xxh64,
  /// config and vocab; format and version; the XXH64 of the data section; config fields and
  /// types; the vocabulary; every tensor's presence, dtype (F16), shape and finiteness.
  /// Throws parse_error (container, JSON, missing metadata or tensor, wrong format/version,
  /// checksum mismatch naming both hashes, wrong dtype, bad config/vocab), shape_error (a tensor
  /// of the wrong shape), value_error (a non-finite weight), config_error / limit_error (a config
  /// the core cannot run: d_model % num_heads != 0, sizes beyond mha::limits).
  static DateModel load(std::vector<std::uint8_t> bytes);

  const Seq2SeqTransformer& transformer() const { return transformer_; }
  const std::string& config_json() const { return config_json_; }      ///< the metadata text
  const std::string& training_json() const { return training_json_; }  ///< "" when absent
  const std::vector<std::string>& vocab() const { return vocab_; }
  const std::string& checksum() const { return checksum_; }  ///< xxh64, 16 lowercase hex digits
  Index max_source_len() const { return max_source_len_; }
  Index max_target_len() const { return transformer_.config().max_target_len; }

  /// The input's characters (UTF-8 code points; an invalid byte counts as one character, shown
  /// as U+FFFD).
  static std::vector<std::string> characters(const std::string& text);
  /// One id per character; a character outside the vocabulary is <unk>.
  /// Throws value_error for an empty input, limit_error "input has 52 characters, the model reads
  /// at most 40" beyond max_source_len.
  std::vector<int> source_ids(const std::string& text) const;

  /// Greedy translation (transformer.hpp Seq2SeqTransformer::greedy), optionally with heads
  /// ablated. Any text runs, date or not, within max_source_len. Throws as source_ids, and
  /// value_error for an ablated head outside the model.
  DateTranslation translate(const std::string& text, const Ablation& ablation = {},
                            bool keep_logits = false) const;

  /// Whether translate(text, ablation).output == target, decided in one teacher-forced decoder
  /// pass instead of max_target_len + 1 greedy steps: greedy decoding reproduces `target` exactly
  /// when, fed <bos> + target, the argmax at every position t < len(target) is target[t] and (for
  /// a target shorter than max_target_len) the argmax after it is <eos> — each greedy step then
  /// sees the same prefix as the teacher-forced pass. `memory` (S, d): the encoder output for
  /// this text and ablation, or empty to compute it. Throws as translate.
  bool reproduces(const std::string& text, const std::string& target, const Ablation& ablation = {},
                  const RowMatrixXf& memory = {}) const;

  static constexpr int pad_id = 0, bos_id = 1, eos_id = 2, unk_id = 3;

 private:
  explicit DateModel(Seq2SeqTransformer transformer) : transformer_(std::move(transformer)) {}

  Seq2SeqTransformer transformer_;
  std::string config_json_, training_json_, checksum_;
  std::vector<std::string> vocab_;
  std::map<std::string, int> ids_;
  Index max_source_len_ = 0;
};

// ------------------------------------------------------------------------------------------------
// Evaluation and head analysis (docs/date-model.md, "What heads learn")

/// One held-out example: roles has one letter per input character: 'Y' year, 'M' month, 'D' day,
/// 'W' weekday, '.' anything else.
struct DateExample {
  std::string input, target, format, roles;
};

/// Share of attention mass that the queries predicting output group g (year = ISO output positions
/// 0-3, month = 5-6, day = 8-9) put on source characters of role r, averaged over those queries
/// and the examples. Index [g][r] with g in {year, month, day}, r in {Y, M, D, W, '.'}.
using RoleMass = std::array<std::array<double, 5>, 3>;

/// Measurements of one head.
struct HeadReport {
  HeadId id;
  double ablated_accuracy = -1.0;  ///< exact match with this head's output zeroed (-1: not run)
  /// Cross heads: RoleMass. Self heads: zeros.
  RoleMass role_mass{};
  /// Self heads: mean mass on key offset (key - query) = -2, -1, 0, +1, +2, and (decoder self)
  /// on position 0 (<bos>) in [5]. Cross heads: zeros.
  std::array<double, 6> offset_mass{};
  /// Encoder self heads: mean mass on keys of role Y, M, D, W, '.' (over every query). Else zeros.
  std::array<double, 5> key_role_mass{};
  std::string label;  ///< e.g. "reads the year: 91% of ...", "attends to the previous character: 80%"
  /// Cross heads: how far the head's attention follows the field being written when that field
  /// sits elsewhere in the input (the formats put it at different character positions): the
  /// least-squares slope of the attention's centre (weighted mean input index of a row) on the
  /// centre of the field's input characters, over the rows writing [0] the year, [1] the month,
  /// [2] the day and [3] all three. 1: the attention moves with the field (content); 0: it stays
  /// at the same input positions whatever is there (positional). Empty when the field never
  /// moves (no variance) or never occurs. Self heads: empty.
  std::array<std::optional<double>, 4> tracking{};
  /// Cross heads: "content" when tracking[3] >= kContentTracking, else "positional"
  /// (docs/date-model.md, "Positional and content heads"). Self heads: empty (their labels name
  /// the relative offset or the field their mass lands on).
  std::string type;
  /// Cross heads: the type in words with its tracking, e.g. "content head: its attention moves
  /// with the field when the format puts it elsewhere (tracking 0.97)". Self heads: empty.
  std::string type_label;
};

/// The tracking slope at and above which a cross head is a content head.
inline constexpr double kContentTracking = 0.5;
/// The share of a field's rows' attention on that field at and above which a head "reads" it.
inline constexpr double kReadsField = 0.5;
/// The largest drop in exact match (a fraction: 0.01 = one point) for which a head counts as
/// prunable (module 03: removing heads "costs less than one point").
inline constexpr double kPrunableDrop = 0.01;

struct DateEvaluation {
  Index examples = 0, correct = 0;
  std::map<std::string, std::pair<Index, Index>> per_format;  ///< format -> (examples, correct)
  std::vector<DateTranslation> failures;                      ///< the wrong translations
  std::vector<HeadReport> heads;  ///< every head: encoder self, decoder self, cross; by layer
  double seconds = 0.0;           ///< wall time of the plain pass over the examples
  double ablation_seconds = 0.0;  ///< wall time of every ablated pass together
  double accuracy() const { return examples == 0 ? 0.0 : double(correct) / double(examples); }
};

/// One of module 03's claims about what heads learn, checked on a DateEvaluation.
struct DateClaim {
  std::string claim;      ///< the claim as module 03 states it
  std::string measure;    ///< what was measured and against which threshold, in words
  bool measured = false;  ///< false when the evaluation lacks what the check needs (ablation)
  bool holds = false;     ///< the verdict (false when not measured)
  std::optional<HeadId> head;  ///< the head that decides it (the best candidate)
  double value = 0.0;          ///< its measured value
  double threshold = 0.0;      ///< the threshold the value is compared with
};

/// Module 03's three claims ("a positional head that reads the day, a content head that copies
/// the year, and a mostly redundant head that could probably be pruned") checked on `ev`:
/// 1. some cross head reads the day (day share >= kReadsField) and is positional (day tracking
///    < kContentTracking); the candidate is the day reader with the lowest day tracking;
/// 2. some cross head reads the year (year share >= kReadsField) and is content (year tracking
///    >= kContentTracking); the candidate is the year reader with the highest year tracking;
/// 3. switching off some head costs at most kPrunableDrop of exact match (needs ablation); the
///    candidate is the head with the smallest drop.
std::vector<DateClaim> date_head_claims(const DateEvaluation& ev);

/// Every head of the model: encoder self, decoder self, cross, each layer by layer (the order of
/// DateEvaluation::heads).
std::vector<HeadId> date_model_heads(const DateModel& model);

/// Runs every example (exact match of the greedy output against target), measures each head's
/// attention (role mass for cross heads, offsets for self heads) and, when `ablate`, the exact
/// match with each head ablated in turn.
/// Throws value_error naming the example when its roles string is not one letter per character.
DateEvaluation evaluate_date_model(const DateModel& model, const std::vector<DateExample>& examples,
                                   bool ablate = true);

}  // namespace mha
