// Module 08's experiment as JSON: the `mha numpy-experiment` response, written through the
// formats layer's generic writers (json_io.hpp: response_to_json, matrix_to_json). Format:
// docs/cli.md "numpy-experiment".
//
// Shape legend: n = tokens, d = d_model, h = num_heads.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "mha/experiment.hpp"

namespace mha {

/// Options of `mha numpy-experiment` beyond the experiment's own sizes.
struct ExperimentOptions {
  bool causal = false;      ///< causal mask: token i attends to tokens j <= i only
  bool positional = false;  ///< add sinusoidal_positional_encoding(n, d) to X before attention
};

/// Runs module 08's experiment in float64 as numpy does (mha::numpy_experiment_forward): X
/// (+ positional encoding) through the experiment's weights, no bias. Shapes: X (n, d) with
/// n = tokens; output (n, d), weights (h, n, n) (float32 copies of the float64 results).
/// Throws what make_numpy_experiment / the core throw (config_error, shape_error, limit_error).
AttentionResult run_numpy_experiment(const NumpyExperiment& experiment,
                                     const ExperimentOptions& options);

/// response_to_json of the experiment's result (json_io.hpp: "output" (n, d), "attn_weights"
/// (h, n, n), "fully_masked_rows", the sizes, "parameter_count" 4 d²), plus "seed", "causal",
/// "positional", and the experiment's float64 draws exactly as numpy holds them: "X" (n, d) —
/// before any positional encoding — and "Wq", "Wk", "Wv", "Wo" (d, d each, `X @ W` convention);
/// plus "positional_encoding" (n, d) when options.positional. Throws nothing of its own.
nlohmann::json experiment_to_json(std::uint32_t seed, const NumpyExperiment& experiment,
                                  const ExperimentOptions& options, const AttentionResult& result);

/// The same for a request and its run (run_experiment off the grids' road, float64: the draws
/// are kept): experiment_to_json(request.seed, run.experiment, {request.masks.is_causal,
/// request.positional}, run.result).
nlohmann::json experiment_to_json(const ExperimentRequest& request, const ExperimentRun& run);

}  // namespace mha
