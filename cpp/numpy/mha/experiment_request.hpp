// Reading module 08's experiment request (mha::ExperimentRequest, experiment.hpp): the one reader
// that `mha numpy-experiment`, the JS API's numpyExperiment and mha_lab.numpy_experiment call.
// Each front end only converts its native values (flags, JS values, Python arguments) through an
// ExperimentSource; which keys exist (request_schema.hpp kExperimentKeys), the order they are
// read in, their defaults, the precision names and the head range are decided here.
//
// Shape legend: n = tokens, d = d_model, h = num_heads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mha/experiment.hpp"

namespace mha {

/// A front end's request values, read by key (kExperimentKeys' names). Each method converts the
/// front end's native value and throws, in the front end's words, when it cannot (a JS string
/// where a number belongs, say).
class ExperimentSource {
 public:
  virtual ~ExperimentSource() = default;
  /// The request as messages name it, e.g. "the numpyExperiment request".
  virtual std::string what() const = 0;
  /// The keys the request holds, in its order (checked against kExperimentKeys).
  virtual std::vector<std::string> keys() const = 0;
  /// Whether `key` holds a value (absent and null count as absent).
  virtual bool has(const char* key) const = 0;
  /// `key`'s whole number. [min, max] is the range the request allows: a source of untyped values
  /// (JS) checks it while converting; a source of C++ integers hands its value on unchanged and
  /// leaves the range to the experiment's own checks (make_numpy_experiment, run_experiment).
  virtual std::int64_t integer(const char* key, std::int64_t min, std::int64_t max) const = 0;
  /// `key`'s boolean, or `fallback` when absent.
  virtual bool boolean_or(const char* key, bool fallback) const = 0;
  /// `key`'s string, or nullopt when it holds something else.
  virtual std::optional<std::string> text(const char* key) const = 0;
  /// `key`'s value as the front end's language writes it, for messages ("\"fast\"", "32").
  virtual std::string repr(const char* key) const = 0;
  /// d_model and num_heads (kdim = vdim = d_model).
  virtual AttentionConfig config() const = 0;
  /// is_causal, attn_mask and key_padding_mask for (h, n, m) (here m = n).
  virtual AttentionMasks masks(Index h, Index n, Index m) const = 0;
  /// keep_intermediates, weights_only, ablated_heads.
  virtual ForwardOptions options() const = 0;
};

/// Reads `source` in this order (the first failure is reported): unknown keys (parse_error
/// "unknown key 'x' in <what> (known keys: seed, tokens, ...)"), seed in [0, 4294967295],
/// config, tokens in [1, limits::max_tokens], precision ("float64", the default; "float32";
/// "auto": auto_experiment_precision; else parse_error "precision must be \"float64\",
/// \"float32\" or \"auto\", not <repr>"), positional (false), return_parameters (true), options,
/// first_head in [0, h - 1] and head_count in [1, h - first_head] (both give head_range; absent:
/// 0 and h - first_head), ExperimentRequest::check_head_range, masks for (h, n, n).
/// Throws what the source throws, and parse_error as above.
ExperimentRequest read_experiment_request(const ExperimentSource& source);

/// The values `mha numpy-experiment` and mha_lab.numpy_experiment take, as C++ integers: the
/// native keys of kExperimentKeys. Everything else takes its default (float64, every
/// intermediate, the parameters).
struct ExperimentArguments {
  std::uint32_t seed = 0;
  Index tokens = 0;     ///< n
  Index d_model = 0;    ///< d
  Index num_heads = 0;  ///< h
  bool is_causal = false;
  bool positional = false;
};

/// read_experiment_request over `arguments` (values handed on unchanged: a size the experiment
/// cannot take is refused by run_experiment in the core's words, e.g. "d_model=10 is not
/// divisible by num_heads=3 ...").
ExperimentRequest read_experiment_request(const ExperimentArguments& arguments);

/// "float64" or "float32".
const char* experiment_precision_name(ExperimentPrecision precision);

}  // namespace mha
