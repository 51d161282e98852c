// JSON requests and responses for the mha core (nlohmann-json): `mha forward`'s request and
// response, and the generic writers (float32 values, matrices, weight stacks) through which the
// layers above write their own results (the experiment: cpp/numpy/mha/experiment_json.hpp); the
// core stays free of I/O.
//
// Shape legend (as attention.hpp): n = query tokens, m = key/value tokens, d = d_model,
// kdim / vdim = widths of the key / value inputs, h = num_heads, d_head = d / h.
// Every matrix in JSON is row-major nested arrays: an (R, C) matrix is R arrays of C numbers;
// an (h, n, m) stack is h arrays of n arrays of m numbers.
//
// The request format (keys use PyTorch's names) is documented in docs/cli.md; in short:
//   num_heads (int, required); query (n, d) required; key (m, kdim) and value (m, vdim) together
//   or neither (then both are query); in_proj_weight (3d, d) or q_proj_weight (d, d) +
//   k_proj_weight (d, kdim) + v_proj_weight (d, vdim); in_proj_bias (3d) optional;
//   out_proj_weight (d, d); out_proj_bias (d) optional; attn_mask (n, m), (1, n, m) or (h, n, m)
//   of booleans (true = may NOT attend) or of numbers / "-inf" (additive); key_padding_mask (m)
//   of booleans (true = ignore that key); is_causal (bool); kdim, vdim (ints, checked only).
//   An optional key whose value is null counts as absent. Any other key is rejected.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "mha/attention.hpp"

namespace mha {

/// One parsed and fully validated `mha forward` request, ready for the core.
struct ForwardRequest {
  AttentionConfig config;    ///< d_model = query width, num_heads, kdim/vdim = key/value widths
  AttentionWeights weights;  ///< fused (in_proj_weight) or separate (q/k/v_proj_weight) form
  RowMatrixXf query;         ///< (n, d)
  /// (m, kdim) and (m, vdim); both empty when the request gave neither (self-attention: the
  /// core then sees query three times, so the fused projection runs as one product).
  RowMatrixXf key, value;
  AttentionMasks masks;      ///< attn_mask (1 or h, n, m), key_padding_mask (m), is_causal

  bool self_attention() const { return key.size() == 0; }
  /// Number of parameters the request holds: d*d + d*kdim + d*vdim + d*d + len(in_proj_bias) +
  /// len(out_proj_bias). Equals PyTorch's sum(p.numel() for p in mha.parameters()) when the
  /// request holds both biases or neither, as nn.MultiheadAttention always does.
  Index parameter_count() const;
};

/// Parses JSON text strictly: one value, nothing after it but whitespace, no duplicate keys in
/// any object (nlohmann would silently keep the last one).
/// Throws: mha::parse_error on malformed text (message "malformed JSON: parse error at line L,
///   column C: ..."), on a number that overflows a double (e.g. 1e999), and on a duplicate key
///   ("duplicate key \"query\" in a JSON object").
nlohmann::json parse_json_text(std::string_view text);

/// Converts and validates a request object (see the format above and docs/cli.md).
/// Checks, in order: the request is an object with known keys only; num_heads is an integer;
/// every array is rectangular and non-empty; sizes are within mha::limits (before any matrix is
/// built); every shape agrees with (h, n, m, d, kdim, vdim); every number is finite in float32;
/// then mha::validate_forward_inputs (the core's own checks).
/// Throws (the message names the key path and the values, e.g. "query[2] has 7 values,
/// expected 8"):
///   parse_error  — not an object, unknown or missing key, wrong JSON type, ragged array,
///                  mixed booleans and numbers in attn_mask, an unknown string in attn_mask,
///                  key without value (or the reverse), both or neither weight forms;
///   shape_error  — an empty array, or a shape that disagrees (in_proj_weight not (3d, d), ...);
///   config_error — num_heads <= 0, d % h != 0;
///   value_error  — a number that is not finite or does not fit float32 (|x| > 3.4028235e38),
///                  "inf"/"+inf"/"nan" (or any non-finite other than -inf) in attn_mask;
///   limit_error  — n, m > limits::max_tokens, d, kdim, vdim > limits::max_d_model,
///                  h > limits::max_num_heads, or h*n*m > limits::max_weight_entries.
ForwardRequest parse_forward_request(const nlohmann::json& request);

/// Runs the request through mha::multi_head_attention_forward (Eigen fast path, no
/// intermediates unless `options` asks). Throws what the core throws (the request was already
/// validated, so in practice nothing on bad input).
AttentionResult run_forward(const ForwardRequest& request, const ForwardOptions& options = {false});

/// A float32 value as a JSON number that reads back (text -> double -> float32, as numpy and JS
/// readers do) as the same float32, in at most 9 significant digits and almost always the
/// fewest (0.1f -> 0.1, not 0.10000000149011612): Grisu2's round-trip decimal for the float,
/// stored as the nearest double. Non-finite input is stored as JSON null (never produced by the
/// core's outputs).
nlohmann::json float_to_json(float x);
/// (R, C) matrix -> R arrays of C numbers (float32 values via float_to_json; float64 exactly).
nlohmann::json matrix_to_json(const RowMatrixXf& matrix);
nlohmann::json matrix_to_json(const RowMatrixXd& matrix);
/// (heads, rows, cols) stack -> heads arrays of rows arrays of cols numbers.
nlohmann::json head_stack_to_json(const HeadStack& stack);

/// The `mha forward` response (docs/cli.md):
///   {"output": (n, d), "attn_weights": (h, n, m) per head, never averaged,
///    "fully_masked_rows": [[head, row], ...] (every key of that row masked; its weights are all
///    0), "num_heads", "d_model", "d_head", "kdim", "vdim", "n", "m", "parameter_count"}.
/// `config` must be validated (d_head = d / h is taken from it).
nlohmann::json response_to_json(const AttentionResult& result, const AttentionConfig& config,
                                Index parameter_count);

}  // namespace mha
