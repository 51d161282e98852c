// Conversions between JS values and the core's types, shared by the Embind adapter's files
// (bindings.cpp: forward, layers, the experiment; explain_bindings.cpp: head patterns and cell
// explanations; load_bindings.cpp: .npy and safetensors files; bindings_date.cpp and
// bindings_english.cpp, through model_convert.hpp: the trained models). The layers below know
// nothing of Emscripten. API reference: docs/js-api.md.
//
// Shape legend: n = query tokens, m = key tokens, d = d_model, h = num_heads, d_head = d / h.
// Arrays are flat and row-major: query (n*d), key (m*kdim), value (m*vdim), attn_mask (n*m or
// h*n*m), attn_weights (h*n*m).
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/request_schema.hpp"

namespace mha_js {

using emscripten::val;
using mha::Index;

// ---------------------------------------------------------------------------------------------
// Errors: run `body`, and turn any C++ exception into a thrown JS Error. The JS throw happens
// outside the catch and after every C++ object of this frame is gone: the C++ exception is
// finished and its message freed before the JS Error unwinds the callers' frames.

template <typename Body>
auto guarded(Body&& body) -> decltype(body()) {
  val js_error = val::undefined();
  {
    std::string message;
    try {
      return body();
    } catch (const mha::error& e) {
      message = e.what();
    } catch (const std::bad_alloc&) {
      message = "out of memory: the input is too large for this browser's WebAssembly memory";
    } catch (const std::exception& e) {
      message = std::string("internal error: ") + e.what();
    }
    js_error = val::global("Error").new_(val(message));
  }
  js_error.throw_();
}

/// The shortest decimal that reads back as `x` (2.0000001 stays 2.0000001, 1e10 is 10000000000):
/// printf's %g at the first precision from 6 that reads back as x; the read-back asks JS's
/// Number(), which keeps iostreams and strtod out of the wasm modules (size). NaN and ±Infinity
/// as JavaScript writes them.
inline std::string number_str(double x) {
  // JavaScript's own spellings (printf's are nan, inf, -inf).
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (!std::isfinite(x) || val::global("Number")(std::string(buf)).as<double>() == x) break;
  }
  return buf;
}

/// A JS value as an error message shows it: a string in quotes, anything else as String() gives
/// it (64, true, [object Object]), at most 40 characters.
inline std::string js_repr(const val& v) {
  std::string s = v.typeOf().as<std::string>() == "string"
                      ? "\"" + v.as<std::string>() + "\""
                      : val::global("String")(v).as<std::string>();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// ---------------------------------------------------------------------------------------------
// Reading JS values

inline bool has(const val& obj, const char* key) {
  const val v = obj[key];
  return !v.isUndefined() && !v.isNull();
}

/// An integer field: a JS number with no fraction, in [min, max] (64-bit: Index is 32-bit here).
inline std::int64_t integer(const val& obj, const char* key, std::int64_t min, std::int64_t max) {
  if (!has(obj, key)) throw mha::parse_error(std::string(key) + " is required");
  const val v = obj[key];
  if (v.typeOf().as<std::string>() != "number") {
    throw mha::parse_error(std::string(key) + " must be a number, got a " +
                           v.typeOf().as<std::string>());
  }
  const double x = v.as<double>();
  if (!std::isfinite(x) || x != std::floor(x)) {
    throw mha::config_error(std::string(key) + "=" + number_str(x) + " must be an integer");
  }
  if (x < static_cast<double>(min) || x > static_cast<double>(max)) {
    std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (min > 0 && x <= 0) {
      throw mha::config_error(std::string(key) + "=" + number_str(x) +
                              " must be a positive integer");
    }
    throw mha::limit_error(std::string(key) + "=" + number_str(x) + " is outside " + range);
  }
  return static_cast<std::int64_t>(x);
}

/// A configuration size. The core checks the range itself (AttentionConfig::validate); only a value
/// that does not fit Index is answered here, in the core's words ("... exceeds the limit of N").
inline Index size_field(const val& obj, const char* key, Index limit) {
  constexpr std::int64_t big = std::numeric_limits<Index>::max();
  constexpr std::int64_t exact = std::int64_t{1} << 53;  // every integer double up to here
  const double x = has(obj, key) && obj[key].typeOf().as<std::string>() == "number"
                       ? obj[key].as<double>()
                       : 0.0;
  if (std::isfinite(x) && x == std::floor(x) && (x > big || x < -big)) {
    if (x < 0)
      throw mha::config_error(std::string(key) + "=" + number_str(x) +
                              " must be a positive integer");
    throw mha::limit_error(std::string(key) + "=" + number_str(x) + " exceeds the limit of " +
                           std::to_string(limit));
  }
  return static_cast<Index>(integer(obj, key, -exact, exact));
}

inline bool boolean_or(const val& obj, const char* key, bool fallback) {
  if (!has(obj, key)) return fallback;
  const val v = obj[key];
  if (v.typeOf().as<std::string>() != "boolean") {
    throw mha::parse_error(std::string(key) + " must be true or false, not " + js_repr(v));
  }
  return v.as<bool>();
}

/// Length of an array-like field (typed array or Array), checked against `expected` (one of
/// `expected_alt` when given).
inline std::size_t array_length(const val& v, const char* key) {
  const bool array_like = v.isArray() || v.instanceof (val::global("Float32Array")) || v.instanceof
      (val::global("Float64Array")) || v.instanceof (val::global("Uint8Array")) || v.instanceof
      (val::global("Int8Array")) || v.instanceof (val::global("Int32Array"));
  if (!array_like) {
    throw mha::parse_error(std::string(key) + " must be a Float32Array, Float64Array or Array");
  }
  return v["length"].as<std::size_t>();
}

/// One bulk write of an array-like (Float32Array: a plain copy; Float64Array/Array: converted to
/// float32 on the way) into `length` floats of wasm memory at `dst`.
inline void copy_into(const val& v, float* dst, std::size_t length) {
  if (length > 0) val(emscripten::typed_memory_view(length, dst)).call<void>("set", v);
}

/// A flat float array field of exactly `rows * cols` values, read into `out` as a row-major
/// matrix (one bulk write; `out` keeps its allocation when it already has that size).
inline void matrix_into(const val& obj, const char* key, Index rows, Index cols,
                        const std::string& shape_meaning, mha::RowMatrixXf& out) {
  if (!has(obj, key)) throw mha::parse_error(std::string(key) + " is required");
  const val v = obj[key];
  const std::size_t length = array_length(v, key);
  if (static_cast<Index>(length) != rows * cols) {
    throw mha::shape_error(std::string(key) + " has " + std::to_string(length) +
                           " values, expected " + shape_meaning + " = " + std::to_string(rows) +
                           "*" + std::to_string(cols) + " = " + std::to_string(rows * cols));
  }
  out.resize(rows, cols);
  copy_into(v, out.data(), length);
}

/// A flat float array field of exactly `rows * cols` values, as a row-major matrix.
inline mha::RowMatrixXf matrix(const val& obj, const char* key, Index rows, Index cols,
                               const std::string& shape_meaning) {
  mha::RowMatrixXf out;
  matrix_into(obj, key, rows, cols, shape_meaning, out);
  return out;
}

inline mha::VectorXf vector_or_empty(const val& obj, const char* key, Index length,
                                     const std::string& meaning) {
  if (!has(obj, key)) return {};
  const val v = obj[key];
  const std::size_t got = array_length(v, key);
  if (static_cast<Index>(got) != length) {
    throw mha::shape_error(std::string(key) + " has " + std::to_string(got) + " values, expected " +
                           meaning + " = " + std::to_string(length));
  }
  const std::vector<float> data = emscripten::convertJSArrayToNumberVector<float>(v);
  return Eigen::Map<const mha::VectorXf>(data.data(), length);
}

// ---------------------------------------------------------------------------------------------
// Writing JS values (copies: they stay valid when wasm memory grows later)

inline val float32_copy(const float* data, Index size) {
  return val::global("Float32Array")
      .new_(emscripten::typed_memory_view(static_cast<std::size_t>(size), data));
}

inline val uint8_copy(const std::vector<std::uint8_t>& data) {
  return val::global("Uint8Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

/// `weights_into`: undefined (attn_weights is then a new Float32Array), or a Float32Array of
/// exactly h*n*m floats (read_weights_into) that takes the weights and is returned as attn_weights:
/// memory used before, no new array.
inline val result_to_js(const mha::AttentionResult& r, const mha::AttentionConfig& c,
                        const val& weights_into = val::undefined()) {
  val out = val::object();
  const Index n = r.attn_weights.rows();
  out.set("n", static_cast<double>(n));
  out.set("m", static_cast<double>(r.attn_weights.cols()));
  out.set("d_model", static_cast<double>(c.d_model));
  out.set("num_heads", static_cast<double>(c.num_heads));
  out.set("d_head", static_cast<double>(c.d_head()));
  // weights_only leaves output, v and head_outputs empty: those keys are then absent.
  if (r.output.size() > 0) out.set("output", float32_copy(r.output.data(), r.output.size()));
  if (weights_into.isUndefined()) {
    out.set("attn_weights", float32_copy(r.attn_weights.data(), r.attn_weights.size()));
  } else {
    weights_into.call<void>("set", val(emscripten::typed_memory_view(
                                       static_cast<std::size_t>(r.attn_weights.size()),
                                       r.attn_weights.data())));
    out.set("attn_weights", weights_into);
  }
  out.set("fully_masked_rows", uint8_copy(r.fully_masked_rows));
  if (!r.scores.empty()) {
    out.set("q", float32_copy(r.q.data(), r.q.size()));
    out.set("k", float32_copy(r.k.data(), r.k.size()));
    if (r.v.size() > 0) out.set("v", float32_copy(r.v.data(), r.v.size()));
    out.set("scores", float32_copy(r.scores.data(), r.scores.size()));
    if (r.head_outputs.size() > 0) {
      out.set("head_outputs", float32_copy(r.head_outputs.data(), r.head_outputs.size()));
    }
  }
  return out;
}

/// The optional `attn_weights_into` field: undefined when absent, else a Float32Array of exactly
/// heads*n*n floats (the weights the call returns; `heads_name` says which count `heads` is),
/// which result_to_js writes them into. Throws parse_error for another type and shape_error for
/// another length (an array on a detached buffer has length 0), naming the values.
inline val read_weights_into(const val& req, const char* heads_name, Index heads, Index n) {
  if (!has(req, "attn_weights_into")) return val::undefined();
  const val v = req["attn_weights_into"];
  if (!v.instanceof (val::global("Float32Array"))) {
    throw mha::parse_error("attn_weights_into must be a Float32Array");
  }
  const auto length = v["length"].as<std::size_t>();
  if (length != static_cast<std::size_t>(heads * n * n)) {
    throw mha::shape_error("attn_weights_into has " + std::to_string(length) + " values, expected " +
                           std::to_string(heads * n * n) + " (" + heads_name + "*tokens*tokens)");
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Requests

// Request keys (mha/request_schema.hpp, the table `mha forward` reads too). A misspelt key
// (attn_mak) must not be silently ignored: every entry point checks its request's keys against
// these lists first, as the CLI does.
inline const std::vector<std::string> kConfigKeys =
    mha::request_key_names(mha::RequestGroup::config, mha::RequestFront::js);
inline const std::vector<std::string> kWeightKeys =
    mha::request_key_names(mha::RequestGroup::weights, mha::RequestFront::js);
inline const std::vector<std::string> kInputKeys =
    mha::request_key_names(mha::RequestGroup::inputs, mha::RequestFront::js);

/// Throws parse_error unless `req` is a plain object whose every key is in one of `allowed`.
/// Throws parse_error ("<what> must be an object of named fields, got an array") unless `req`
/// is a plain JS object.
inline void expect_object(const val& req, const std::string& what) {
  const std::string type = req.typeOf().as<std::string>();
  if (type != "object" || req.isNull() || req.isArray()) {
    throw mha::parse_error(what + " must be an object of named fields, got " +
                           (req.isNull()    ? std::string("null")
                            : req.isArray() ? std::string("an array")
                                            : type));
  }
}

inline void expect_request(const val& req, const std::string& what,
                           std::initializer_list<const std::vector<std::string>*> allowed) {
  expect_object(req, what);
  const val keys = val::global("Object").call<val>("keys", req);
  const auto count = keys["length"].as<std::size_t>();
  for (std::size_t i = 0; i < count; ++i) {
    const std::string key = keys[i].as<std::string>();
    bool known = false;
    std::string list;
    for (const auto* names : allowed) {
      for (const auto& name : *names) {
        known = known || name == key;
        list += (list.empty() ? "" : ", ") + name;
      }
    }
    if (!known) {
      throw mha::parse_error("unknown key '" + key + "' in " + what + " (known keys: " + list +
                             ")");
    }
  }
}

inline mha::AttentionConfig read_config(const val& req) {
  mha::AttentionConfig c;
  // Range checks beyond "is an integer" are the core's (AttentionConfig::validate), so the
  // messages are the same natively and here.
  c.d_model = size_field(req, "d_model", mha::limits::max_d_model);
  c.num_heads = size_field(req, "num_heads", mha::limits::max_num_heads);
  c.kdim = has(req, "kdim") ? size_field(req, "kdim", mha::limits::max_d_model) : 0;
  c.vdim = has(req, "vdim") ? size_field(req, "vdim", mha::limits::max_d_model) : 0;
  c.validate();
  return c;
}

inline mha::AttentionWeights read_weights(const val& req, const mha::AttentionConfig& c) {
  const Index d = c.d_model;
  mha::VectorXf in_bias = vector_or_empty(req, "in_proj_bias", 3 * d, "3*d_model");
  mha::VectorXf out_bias = vector_or_empty(req, "out_proj_bias", d, "d_model");
  mha::RowMatrixXf out_w = matrix(req, "out_proj_weight", d, d, "d_model*d_model");
  if (has(req, "in_proj_weight")) {
    if (has(req, "q_proj_weight") || has(req, "k_proj_weight") || has(req, "v_proj_weight")) {
      throw mha::shape_error("both in_proj_weight and q/k/v_proj_weight were given: give one form");
    }
    if (!c.same_embed_dim()) {
      throw mha::shape_error("kdim=" + std::to_string(c.key_dim()) +
                             " and vdim=" + std::to_string(c.value_dim()) +
                             " differ from d_model=" + std::to_string(d) +
                             ": give q_proj_weight, k_proj_weight, v_proj_weight instead of "
                             "in_proj_weight");
    }
    return mha::AttentionWeights::fused(
        matrix(req, "in_proj_weight", 3 * d, d, "3*d_model*d_model"), std::move(in_bias),
        std::move(out_w), std::move(out_bias));
  }
  return mha::AttentionWeights::separate(
      matrix(req, "q_proj_weight", d, d, "d_model*d_model"),
      matrix(req, "k_proj_weight", d, c.key_dim(), "d_model*kdim"),
      matrix(req, "v_proj_weight", d, c.value_dim(), "d_model*vdim"), std::move(in_bias),
      std::move(out_w), std::move(out_bias));
}

/// Whether mask `v` (of `length` values) is boolean: a Uint8Array, an Int8Array or an array whose
/// first entry is a boolean; any other array of numbers is an additive (float) mask.
inline bool is_boolean_mask(const val& v, std::size_t length) {
  if (v.isArray() && length > 0) return v[0].typeOf().as<std::string>() == "boolean";
  return v.instanceof (val::global("Uint8Array")) || v.instanceof (val::global("Int8Array"));
}

inline mha::AttentionMasks read_masks(const val& req, Index h, Index n, Index m) {
  mha::AttentionMasks masks;
  masks.is_causal = boolean_or(req, "is_causal", false);
  if (has(req, "attn_mask")) {
    const val v = req["attn_mask"];
    const std::size_t length = array_length(v, "attn_mask");
    const bool is_bool = is_boolean_mask(v, length);
    // 64-bit: h * n * m reaches 2^32 within the limits and Index is 32-bit under wasm32.
    const std::int64_t per_head = std::int64_t{n} * m;
    const std::int64_t all_heads = per_head * h;
    const auto count = static_cast<std::int64_t>(length);
    const Index heads = count == per_head ? 1 : count == all_heads ? h : -1;
    if (heads < 0) {
      throw mha::shape_error("attn_mask has " + std::to_string(length) +
                             " values, expected n*m = " + std::to_string(per_head) +
                             " or num_heads*n*m = " + std::to_string(all_heads));
    }
    masks.attn_mask_kind =
        is_bool ? mha::AttentionMasks::Kind::boolean : mha::AttentionMasks::Kind::additive;
    masks.attn_mask = mha::HeadStack(heads, n, m);
    const std::vector<float> data = emscripten::convertJSArrayToNumberVector<float>(v);
    std::copy(data.begin(), data.end(), masks.attn_mask.data());
  }
  if (has(req, "key_padding_mask")) {
    const val v = req["key_padding_mask"];
    const std::size_t length = array_length(v, "key_padding_mask");
    if (static_cast<Index>(length) != m) {
      throw mha::shape_error("key_padding_mask has " + std::to_string(length) +
                             " values, expected one per key token, m = " + std::to_string(m));
    }
    // Boolean as attn_mask (non-zero = ignore the key), else added to the scores (a float
    // key_padding_mask, as nn.MultiheadAttention adds one).
    masks.key_padding_mask_kind = is_boolean_mask(v, length) ? mha::AttentionMasks::Kind::boolean
                                                             : mha::AttentionMasks::Kind::additive;
    masks.key_padding_mask = emscripten::convertJSArrayToNumberVector<float>(v);
  }
  return masks;
}

inline mha::ForwardOptions read_options(const val& req) {
  mha::ForwardOptions options;
  options.keep_intermediates = boolean_or(req, "keep_intermediates", true);
  options.weights_only = boolean_or(req, "weights_only", false);
  if (has(req, "ablated_heads")) {  // one entry per head; the core checks the count
    const val v = req["ablated_heads"];
    array_length(v, "ablated_heads");
    for (const float a : emscripten::convertJSArrayToNumberVector<float>(v)) {
      options.ablated_heads.push_back(a != 0.0f ? 1 : 0);
    }
  }
  return options;
}

struct Inputs {
  mha::RowMatrixXf query, key, value;
  bool self = true;
};

inline Inputs read_inputs(const val& req, const mha::AttentionConfig& c) {
  Inputs in;
  const Index n = static_cast<Index>(integer(req, "n", 1, mha::limits::max_tokens));
  in.query = matrix(req, "query", n, c.d_model, "n*d_model");
  if (has(req, "key") || has(req, "value")) {
    const Index m = static_cast<Index>(integer(req, "m", 1, mha::limits::max_tokens));
    in.key = matrix(req, "key", m, c.key_dim(), "m*kdim");
    in.value = matrix(req, "value", m, c.value_dim(), "m*vdim");
    in.self = false;
  }
  return in;
}

inline val string_array(const std::vector<std::string>& items) {
  val out = val::array();
  for (std::size_t i = 0; i < items.size(); ++i) out.set(i, val(items[i]));
  return out;
}

/// A whole file's bytes from a Uint8Array or an ArrayBuffer, copied into wasm memory in one bulk
/// copy. `what` names the call in the error: "<what> needs the file's bytes as a Uint8Array or
/// ArrayBuffer".
inline std::vector<std::uint8_t> byte_vector(const val& bytes, const std::string& what) {
  val view = bytes;
  if (bytes.instanceof (val::global("ArrayBuffer"))) {
    view = val::global("Uint8Array").new_(bytes);
  } else if (!bytes.instanceof (val::global("Uint8Array"))) {
    throw mha::parse_error(what + " needs the file's bytes as a Uint8Array or ArrayBuffer");
  }
  const auto size = view["length"].as<std::size_t>();
  std::vector<std::uint8_t> data(size);
  if (size > 0) val(emscripten::typed_memory_view(size, data.data())).call<void>("set", view);
  return data;
}

/// The sliding-window attn_mask of mha::sliding_window_mask as JS:
/// {n, m?, window, is_causal?} -> Uint8Array(n*m), row-major, 1 = query i may not attend to key j
/// (|i - j| > window, or j > i with is_causal). `what` names the request in its errors.
/// Defined in bindings.cpp: the core module exports it as windowMask, the full module also as
/// slidingWindowMask.
val sliding_window_mask_js(val request, const char* what);

}  // namespace mha_js
