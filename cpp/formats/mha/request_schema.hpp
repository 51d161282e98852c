// The keys of a multi-head attention request and of module 08's experiment request: one table
// each for every front end. `mha forward` (json_io.hpp: nested JSON arrays) and the JS API
// (cpp/bindings/wasm/js_convert.hpp: flat typed arrays plus explicit sizes) take the forward's key
// names, and the unknown-key check, from kRequestKeys; mha::read_experiment_request
// (cpp/numpy/mha/experiment_request.hpp), which `mha numpy-experiment`, the JS API's
// numpyExperiment and mha_lab.numpy_experiment all call, takes the experiment's from
// kExperimentKeys. Header only and free of any JSON library, so the smallest wasm module uses it
// at no cost.
//
// Shape legend (as attention.hpp): n = query tokens, m = key/value tokens, d = d_model,
// kdim / vdim = widths of the key / value inputs, h = num_heads.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace mha {

/// What a key describes.
enum class RequestGroup {
  config,   ///< the layer's sizes
  weights,  ///< the layer's parameters (PyTorch's state_dict names)
  inputs,   ///< one call's inputs, masks and options
};

/// Which front end reads a key.
enum class RequestFront {
  json,  ///< `mha forward` JSON requests (sizes follow from the arrays)
  js,    ///< the JS API (flat arrays: sizes are given as d_model, n, m)
};

/// One request key. `shape` and `default_value` document it (docs/cli.md, docs/js-api.md);
/// the parsers check the shapes against the layer.
struct RequestKey {
  const char* name;
  RequestGroup group;
  const char* shape;          ///< e.g. "(n, d_model)"; "" for a scalar
  const char* default_value;  ///< "required", "absent", or the value taken when absent
  bool json;                  ///< read by `mha forward`
  bool js;                    ///< read by the JS API
};

// clang-format off
/// Every key, in the order the JS API lists them in its messages.
inline constexpr RequestKey kRequestKeys[] = {
    // name                group                   shape                       default          json   js
    {"d_model",          RequestGroup::config,  "",                         "required",      false, true},
    {"num_heads",        RequestGroup::config,  "",                         "required",      true,  true},
    {"kdim",             RequestGroup::config,  "",                         "d_model",       true,  true},
    {"vdim",             RequestGroup::config,  "",                         "d_model",       true,  true},
    {"in_proj_weight",   RequestGroup::weights, "(3*d_model, d_model)",     "absent",        true,  true},
    {"q_proj_weight",    RequestGroup::weights, "(d_model, d_model)",       "absent",        true,  true},
    {"k_proj_weight",    RequestGroup::weights, "(d_model, kdim)",          "absent",        true,  true},
    {"v_proj_weight",    RequestGroup::weights, "(d_model, vdim)",          "absent",        true,  true},
    {"in_proj_bias",     RequestGroup::weights, "(3*d_model)",              "no bias",       true,  true},
    {"out_proj_weight",  RequestGroup::weights, "(d_model, d_model)",       "required",      true,  true},
    {"out_proj_bias",    RequestGroup::weights, "(d_model)",                "no bias",       true,  true},
    {"n",                RequestGroup::inputs,  "",                         "required",      false, true},
    {"m",                RequestGroup::inputs,  "",                         "n",             false, true},
    {"query",            RequestGroup::inputs,  "(n, d_model)",             "required",      true,  true},
    {"key",              RequestGroup::inputs,  "(m, kdim)",                "query",         true,  true},
    {"value",            RequestGroup::inputs,  "(m, vdim)",                "query",         true,  true},
    {"attn_mask",        RequestGroup::inputs,  "(n, m) or (h, n, m)",      "absent",        true,  true},
    {"key_padding_mask", RequestGroup::inputs,  "(m)",                      "absent",        true,  true},
    {"is_causal",        RequestGroup::inputs,  "",                         "false",         true,  true},
    {"keep_intermediates", RequestGroup::inputs, "",                        "true",          false, true},
    {"weights_only",     RequestGroup::inputs,  "",                         "false",         false, true},
    {"ablated_heads",    RequestGroup::inputs,  "(h)",                      "no head off",   false, true},
};
// clang-format on

/// The names of `group`'s keys that `front` reads, in table order.
inline std::vector<std::string> request_key_names(RequestGroup group, RequestFront front) {
  std::vector<std::string> names;
  for (const RequestKey& k : kRequestKeys) {
    if (k.group == group && (front == RequestFront::json ? k.json : k.js)) names.emplace_back(k.name);
  }
  return names;
}

/// Every key that `front` reads, sorted (the `mha forward` unknown-key message lists them so).
inline std::set<std::string> request_keys_sorted(RequestFront front) {
  std::set<std::string> names;
  for (const RequestKey& k : kRequestKeys) {
    if (front == RequestFront::json ? k.json : k.js) names.emplace(k.name);
  }
  return names;
}

/// One key of module 08's experiment request (mha::read_experiment_request; docs/js-api.md
/// numpyExperiment, docs/cli.md numpy-experiment, docs/python.md numpy_experiment).
struct ExperimentKey {
  const char* name;
  const char* default_value;  ///< "required", "absent", or the value taken when absent
  bool native;  ///< also read by `mha numpy-experiment` (as a flag) and mha_lab.numpy_experiment
};

// clang-format off
/// Every key of the experiment request, in the order the JS API lists them in its messages.
inline constexpr ExperimentKey kExperimentKeys[] = {
    // name                default                    native
    {"seed",               "required",                true},
    {"tokens",             "required",                true},
    {"d_model",            "required",                true},
    {"num_heads",          "required",                true},
    {"precision",          "float64",                 false},
    {"positional",         "false",                   true},
    {"is_causal",          "false",                   true},
    {"attn_mask",          "absent",                  false},
    {"key_padding_mask",   "absent",                  false},
    {"keep_intermediates", "true",                    false},
    {"weights_only",       "false",                   false},
    {"ablated_heads",      "no head off",             false},
    {"return_parameters",  "true",                    false},
    {"first_head",         "0",                       false},
    {"head_count",         "num_heads - first_head",  false},
    {"attn_weights_into",  "a new Float32Array",      false},
};
// clang-format on

/// The experiment's key names, in table order; `native_only`: those the CLI and Python read.
inline std::vector<std::string> experiment_key_names(bool native_only = false) {
  std::vector<std::string> names;
  for (const ExperimentKey& k : kExperimentKeys) {
    if (k.native || !native_only) names.emplace_back(k.name);
  }
  return names;
}

}  // namespace mha
