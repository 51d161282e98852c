// Embind adapter: JS objects and typed arrays in, JS objects with Float32Array copies out.
// The core (cpp/core) knows nothing of this file. Every C++ error becomes a JS Error carrying its
// message; the module keeps working afterwards. API reference: docs/js-api.md.
//
// Shape legend: n = query tokens, m = key tokens, d = d_model, h = num_heads, d_head = d / h.
// Arrays are flat and row-major: query (n*d), key (m*kdim), value (m*vdim), attn_mask (n*m or
// h*n*m), attn_weights (h*n*m).
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <iomanip>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/date_model.hpp"
#include "mha/experiment.hpp"
#include "mha/numpy_random.hpp"

namespace {

using emscripten::val;
using mha::Index;

// ---------------------------------------------------------------------------------------------
// Errors: run `body`, and turn any C++ exception into a thrown JS Error. The JS throw unwinds
// the wasm stack without running C++ destructors, so it happens outside the catch and after every
// C++ object of this frame is gone (no leaked exception or string).

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

/// The shortest decimal that reads back as `x` (2.0000001 stays 2.0000001, 1e10 is 10000000000).
std::string number_str(double x) {
  for (int precision = 6; precision <= 17; ++precision) {
    std::ostringstream s;
    s << std::setprecision(precision) << x;
    if (!std::isfinite(x) || std::stod(s.str()) == x) return s.str();
  }
  std::ostringstream s;
  s << std::setprecision(17) << x;
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Reading JS values

bool has(const val& obj, const char* key) {
  const val v = obj[key];
  return !v.isUndefined() && !v.isNull();
}

/// An integer field: a JS number with no fraction, in [min, max] (64-bit: Index is 32-bit here).
std::int64_t integer(const val& obj, const char* key, std::int64_t min, std::int64_t max) {
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
Index size_field(const val& obj, const char* key, Index limit) {
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

bool boolean_or(const val& obj, const char* key, bool fallback) {
  if (!has(obj, key)) return fallback;
  const val v = obj[key];
  if (v.typeOf().as<std::string>() != "boolean") {
    throw mha::parse_error(std::string(key) + " must be true or false");
  }
  return v.as<bool>();
}

/// Length of an array-like field (typed array or Array), checked against `expected` (one of
/// `expected_alt` when given).
std::size_t array_length(const val& v, const char* key) {
  const bool array_like = v.isArray() || v.instanceof (val::global("Float32Array")) || v.instanceof
      (val::global("Float64Array")) || v.instanceof (val::global("Uint8Array")) || v.instanceof
      (val::global("Int8Array")) || v.instanceof (val::global("Int32Array"));
  if (!array_like) {
    throw mha::parse_error(std::string(key) + " must be a Float32Array, Float64Array or Array");
  }
  return v["length"].as<std::size_t>();
}

/// A flat float array field of exactly `rows * cols` values, as a row-major matrix.
mha::RowMatrixXf matrix(const val& obj, const char* key, Index rows, Index cols,
                        const std::string& shape_meaning) {
  if (!has(obj, key)) throw mha::parse_error(std::string(key) + " is required");
  const val v = obj[key];
  const std::size_t length = array_length(v, key);
  if (static_cast<Index>(length) != rows * cols) {
    throw mha::shape_error(std::string(key) + " has " + std::to_string(length) +
                           " values, expected " + shape_meaning + " = " + std::to_string(rows) +
                           "*" + std::to_string(cols) + " = " + std::to_string(rows * cols));
  }
  mha::RowMatrixXf out(rows, cols);
  const std::vector<float> data = emscripten::convertJSArrayToNumberVector<float>(v);
  std::copy(data.begin(), data.end(), out.data());
  return out;
}

mha::VectorXf vector_or_empty(const val& obj, const char* key, Index length,
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

val float32_copy(const float* data, Index size) {
  return val::global("Float32Array")
      .new_(emscripten::typed_memory_view(static_cast<std::size_t>(size), data));
}

val uint8_copy(const std::vector<std::uint8_t>& data) {
  return val::global("Uint8Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

val result_to_js(const mha::AttentionResult& r, const mha::AttentionConfig& c) {
  val out = val::object();
  const Index n = r.output.rows();
  out.set("n", static_cast<double>(n));
  out.set("m", static_cast<double>(r.attn_weights.cols()));
  out.set("d_model", static_cast<double>(c.d_model));
  out.set("num_heads", static_cast<double>(c.num_heads));
  out.set("d_head", static_cast<double>(c.d_head()));
  out.set("output", float32_copy(r.output.data(), r.output.size()));
  out.set("attn_weights", float32_copy(r.attn_weights.data(), r.attn_weights.size()));
  out.set("fully_masked_rows", uint8_copy(r.fully_masked_rows));
  if (!r.scores.empty()) {
    out.set("q", float32_copy(r.q.data(), r.q.size()));
    out.set("k", float32_copy(r.k.data(), r.k.size()));
    out.set("v", float32_copy(r.v.data(), r.v.size()));
    out.set("scores", float32_copy(r.scores.data(), r.scores.size()));
    out.set("head_outputs", float32_copy(r.head_outputs.data(), r.head_outputs.size()));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Requests

// Request keys. A misspelt key (attn_mak) must not be silently ignored: every entry point
// checks its request's keys against these lists first, as the CLI does.
const std::vector<std::string> kConfigKeys = {"d_model", "num_heads", "kdim", "vdim"};
const std::vector<std::string> kWeightKeys = {"in_proj_weight", "q_proj_weight", "k_proj_weight",
                                              "v_proj_weight",  "in_proj_bias",  "out_proj_weight",
                                              "out_proj_bias"};
const std::vector<std::string> kInputKeys = {"n",
                                             "m",
                                             "query",
                                             "key",
                                             "value",
                                             "attn_mask",
                                             "key_padding_mask",
                                             "is_causal",
                                             "keep_intermediates",
                                             "ablated_heads"};

/// Throws parse_error unless `req` is a plain object whose every key is in one of `allowed`.
void expect_request(const val& req, const std::string& what,
                    std::initializer_list<const std::vector<std::string>*> allowed) {
  const std::string type = req.typeOf().as<std::string>();
  if (type != "object" || req.isNull() || req.isArray()) {
    throw mha::parse_error(what + " must be an object of named fields, got " +
                           (req.isNull()    ? std::string("null")
                            : req.isArray() ? std::string("an array")
                                            : type));
  }
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

mha::AttentionConfig read_config(const val& req) {
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

mha::AttentionWeights read_weights(const val& req, const mha::AttentionConfig& c) {
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

mha::AttentionMasks read_masks(const val& req, Index h, Index n, Index m) {
  mha::AttentionMasks masks;
  masks.is_causal = boolean_or(req, "is_causal", false);
  if (has(req, "attn_mask")) {
    const val v = req["attn_mask"];
    const std::size_t length = array_length(v, "attn_mask");
    bool is_bool = v.instanceof (val::global("Uint8Array")) || v.instanceof
        (val::global("Int8Array"));
    if (v.isArray() && length > 0) is_bool = v[0].typeOf().as<std::string>() == "boolean";
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
    const std::vector<float> data = emscripten::convertJSArrayToNumberVector<float>(v);
    masks.key_padding_mask.resize(length);
    for (std::size_t j = 0; j < length; ++j) masks.key_padding_mask[j] = data[j] != 0.0f ? 1 : 0;
  }
  return masks;
}

mha::ForwardOptions read_options(const val& req) {
  mha::ForwardOptions options;
  options.keep_intermediates = boolean_or(req, "keep_intermediates", true);
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

Inputs read_inputs(const val& req, const mha::AttentionConfig& c) {
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

// ---------------------------------------------------------------------------------------------
// Exported API

/// One layer kept in wasm memory: weights validated once, forward() as often as needed.
class JsMultiheadAttention {
 public:
  explicit JsMultiheadAttention(mha::MultiheadAttention layer) : layer_(std::move(layer)) {}

  /// request: {n, query, m?, key?, value?, attn_mask?, key_padding_mask?, is_causal?,
  ///           keep_intermediates?}. Returns the result object (docs/js-api.md).
  val forward(val request) const {
    return guarded([&] {
      expect_request(request, "the layer's forward request", {&kInputKeys});
      const mha::AttentionConfig& c = layer_.config();
      const Inputs in = read_inputs(request, c);
      const Index m = in.self ? in.query.rows() : in.key.rows();
      const mha::AttentionMasks masks = read_masks(request, c.num_heads, in.query.rows(), m);
      const mha::AttentionResult r =
          in.self ? layer_.forward(in.query, masks, read_options(request))
                  : layer_.forward(in.query, in.key, in.value, masks, read_options(request));
      return result_to_js(r, c);
    });
  }

  double parameter_count() const {
    return static_cast<double>(mha::parameter_count(layer_.config(), layer_.has_bias()));
  }
  double d_model() const { return static_cast<double>(layer_.config().d_model); }
  double num_heads() const { return static_cast<double>(layer_.config().num_heads); }

 private:
  mha::MultiheadAttention layer_;
};

JsMultiheadAttention* make_layer(val spec) {
  return guarded([&] {
    expect_request(spec, "the MultiheadAttention spec", {&kConfigKeys, &kWeightKeys});
    const mha::AttentionConfig c = read_config(spec);
    return new JsMultiheadAttention(mha::MultiheadAttention(c, read_weights(spec, c)));
  });
}

/// One-shot forward: config, weights and inputs in one request (docs/js-api.md).
val forward(val request) {
  return guarded([&] {
    expect_request(request, "the forward request", {&kConfigKeys, &kWeightKeys, &kInputKeys});
    const mha::AttentionConfig c = read_config(request);
    const mha::MultiheadAttention layer(c, read_weights(request, c));
    const Inputs in = read_inputs(request, c);
    const Index m = in.self ? in.query.rows() : in.key.rows();
    const mha::AttentionMasks masks = read_masks(request, c.num_heads, in.query.rows(), m);
    const mha::AttentionResult r =
        in.self ? layer.forward(in.query, masks, read_options(request))
                : layer.forward(in.query, in.key, in.value, masks, read_options(request));
    return result_to_js(r, c);
  });
}

std::uint32_t read_seed(const val& req) {
  return static_cast<std::uint32_t>(integer(req, "seed", 0, 0xffffffffLL));
}

/// Module 08's program: {seed, tokens, d_model, num_heads, positional?, is_causal?, attn_mask?,
/// key_padding_mask?, keep_intermediates?, ablated_heads?}.
val numpy_experiment(val request) {
  return guarded([&] {
    static const std::vector<std::string> keys = {"seed",
                                                  "tokens",
                                                  "d_model",
                                                  "num_heads",
                                                  "positional",
                                                  "is_causal",
                                                  "attn_mask",
                                                  "key_padding_mask",
                                                  "keep_intermediates",
                                                  "ablated_heads"};
    expect_request(request, "the numpyExperiment request", {&keys});
    const std::uint32_t seed = read_seed(request);
    const mha::AttentionConfig c = read_config(request);
    const Index tokens = static_cast<Index>(integer(request, "tokens", 1, mha::limits::max_tokens));
    const mha::NumpyExperiment e = mha::make_numpy_experiment(seed, tokens, c.d_model, c.num_heads);
    const mha::RowMatrixXd x =
        mha::numpy_experiment_input(e, boolean_or(request, "positional", false));
    // is_causal, attn_mask ((n, n) or (h, n, n)), key_padding_mask (n): as forward's.
    const mha::AttentionMasks masks = read_masks(request, c.num_heads, tokens, tokens);
    // float64 throughout, as the course's numpy code: its printed roundings are reproduced.
    val out =
        result_to_js(mha::numpy_experiment_forward(e, x, masks, read_options(request)), e.config);
    const mha::RowMatrixXf x32 = x.cast<float>();
    out.set("x", float32_copy(x32.data(), x32.size()));
    out.set("in_proj_weight",
            float32_copy(e.weights.in_proj_weight.data(), e.weights.in_proj_weight.size()));
    out.set("out_proj_weight",
            float32_copy(e.weights.out_proj_weight.data(), e.weights.out_proj_weight.size()));
    out.set("parameter_count", static_cast<double>(mha::parameter_count(e.config, false)));
    return out;
  });
}

/// {d_model, num_heads, kdim?, vdim?, bias?} -> PyTorch's parameter count.
double parameter_count(val request) {
  return guarded([&] {
    static const std::vector<std::string> bias = {"bias"};
    expect_request(request, "the parameterCount request", {&kConfigKeys, &bias});
    const mha::AttentionConfig c = read_config(request);
    return static_cast<double>(mha::parameter_count(c, boolean_or(request, "bias", false)));
  });
}

/// np.random.seed(seed); np.random.randn(count) as a Float64Array.
val randn(val seed, val count) {
  return guarded([&] {
    val req = val::object();
    req.set("seed", seed);
    req.set("count", count);
    mha::NumpyRandomState rng(read_seed(req));
    const Index length =
        static_cast<Index>(integer(req, "count", 0, mha::limits::max_weight_entries));
    const mha::RowMatrixXd draws = rng.randn(1, length);
    return val::global("Float64Array")
        .new_(emscripten::typed_memory_view(static_cast<std::size_t>(length), draws.data()));
  });
}

/// Sinusoidal positional encoding (n, d) as a Float32Array of n*d.
val positional_encoding(val n, val d) {
  return guarded([&] {
    val req = val::object();
    req.set("n", n);
    req.set("d_model", d);
    const mha::RowMatrixXf pe = mha::sinusoidal_positional_encoding(
        static_cast<Index>(integer(req, "n", 1, mha::limits::max_tokens)),
        static_cast<Index>(integer(req, "d_model", 1, mha::limits::max_d_model)));
    return float32_copy(pe.data(), pe.size());
  });
}

/// Memory use, for leak tests and the page's diagnostics: bytes held by malloc right now and the
/// size of wasm linear memory (which only grows).
val memory_stats() {
  const struct mallinfo info = mallinfo();
  val out = val::object();
  out.set("malloc_in_use_bytes", static_cast<double>(info.uordblks));
  out.set("wasm_memory_bytes", val::module_property("HEAP8")["length"]);
  return out;
}

struct JsLimits {
  double max_tokens, max_d_model, max_num_heads, max_weight_entries;
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab) {
  using namespace emscripten;
  value_object<JsLimits>("Limits")
      .field("max_tokens", &JsLimits::max_tokens)
      .field("max_d_model", &JsLimits::max_d_model)
      .field("max_num_heads", &JsLimits::max_num_heads)
      .field("max_weight_entries", &JsLimits::max_weight_entries);
  constant("limits", JsLimits{static_cast<double>(mha::limits::max_tokens),
                              static_cast<double>(mha::limits::max_d_model),
                              static_cast<double>(mha::limits::max_num_heads),
                              static_cast<double>(mha::limits::max_weight_entries)});
  constant("version", std::string(MHA_VERSION));

  function("forward", &forward);
  function("numpyExperiment", &numpy_experiment);
  function("parameterCount", &parameter_count);
  function("randn", &randn);
  function("sinusoidalPositionalEncoding", &positional_encoding);
  function("memoryStats", &memory_stats);

  class_<JsMultiheadAttention>("MultiheadAttention")
      .constructor(&make_layer, allow_raw_pointers())
      .function("forward", &JsMultiheadAttention::forward)
      .function("parameterCount", &JsMultiheadAttention::parameter_count)
      .property("d_model", &JsMultiheadAttention::d_model)
      .property("num_heads", &JsMultiheadAttention::num_heads);
}

// ---------------------------------------------------------------------------------------------
// The date model (issue 3; docs/js-api.md "The date model"). Shape legend: S = source
// characters, T = decoder steps (<bos> + generated characters), V = vocab, h = num_heads,
// L = layers. Weight stacks are flat row-major Float32Arrays, one per layer.

namespace {

val string_array(const std::vector<std::string>& items) {
  val out = val::array();
  for (std::size_t i = 0; i < items.size(); ++i) out.set(i, val(items[i]));
  return out;
}

val stacks_to_js(const std::vector<mha::HeadStack>& stacks) {
  val out = val::array();
  for (std::size_t l = 0; l < stacks.size(); ++l) {
    out.set(l, float32_copy(stacks[l].data(), stacks[l].size()));
  }
  return out;
}

/// options.ablated: [{kind: 'encoder_self' | 'decoder_self' | 'cross', layer, head}, ...].
mha::Ablation read_ablation(const val& options) {
  mha::Ablation ablation;
  if (!has(options, "ablated")) return ablation;
  const val list = options["ablated"];
  if (!list.isArray()) throw mha::parse_error("ablated must be an array of {kind, layer, head}");
  const auto count = list["length"].as<std::size_t>();
  for (std::size_t i = 0; i < count; ++i) {
    const val item = list[i];
    const std::string where = "ablated[" + std::to_string(i) + "]";
    if (item.typeOf().as<std::string>() != "object" || item.isNull()) {
      throw mha::parse_error(where + " must be an object {kind, layer, head}");
    }
    if (!has(item, "kind") || item["kind"].typeOf().as<std::string>() != "string") {
      throw mha::parse_error(where + ".kind must be 'encoder_self', 'decoder_self' or 'cross'");
    }
    mha::HeadId id;
    try {
      id.kind = mha::parse_attention_kind(item["kind"].as<std::string>());
    } catch (const mha::parse_error& e) {
      throw mha::parse_error(where + ": " + e.what());
    }
    id.layer = static_cast<Index>(integer(item, "layer", 0, 1 << 20));
    id.head = static_cast<Index>(integer(item, "head", 0, 1 << 20));
    ablation.push_back(id);
  }
  return ablation;
}

/// The date model kept in wasm memory: new mod.DateModel(bytes), then translate() per keystroke.
class JsDateModel {
 public:
  explicit JsDateModel(mha::DateModel model) : model_(std::move(model)) {}

  val config() const {
    return guarded([&] { return val::global("JSON").call<val>("parse", model_.config_json()); });
  }
  val vocab() const { return string_array(model_.vocab()); }
  double max_source_length() const { return static_cast<double>(model_.max_source_len()); }
  std::string checksum() const { return model_.checksum(); }

  val translate(val text, val options) const {
    return guarded([&] {
      if (text.typeOf().as<std::string>() != "string") {
        throw mha::parse_error("translate(text): text must be a string, got a " +
                               text.typeOf().as<std::string>());
      }
      const bool options_given = !options.isUndefined() && !options.isNull();
      if (options_given && options.typeOf().as<std::string>() != "object") {
        throw mha::parse_error("translate(text, options): options must be an object");
      }
      const mha::Ablation ablation = options_given ? read_ablation(options) : mha::Ablation{};
      const bool logits = options_given && boolean_or(options, "logits", false);
      const mha::DateTranslation t = model_.translate(text.as<std::string>(), ablation, logits);
      const mha::Seq2SeqConfig& c = model_.transformer().config();
      val out = val::object();
      out.set("input", val(t.input));
      out.set("output", val(t.output));
      out.set("source_tokens", string_array(t.source_tokens));
      out.set("output_tokens", string_array(t.output_tokens));
      out.set("produced_eos", val(t.produced_eos));
      out.set("num_heads", static_cast<double>(c.num_heads));
      out.set("num_encoder_layers", static_cast<double>(c.num_encoder_layers));
      out.set("num_decoder_layers", static_cast<double>(c.num_decoder_layers));
      out.set("source_length", static_cast<double>(t.source_tokens.size()));
      out.set("steps", static_cast<double>(
                           t.trace.decoder_self.empty() ? 0 : t.trace.decoder_self[0].rows()));
      out.set("encoder_self", stacks_to_js(t.trace.encoder_self));
      out.set("decoder_self", stacks_to_js(t.trace.decoder_self));
      out.set("cross", stacks_to_js(t.trace.cross));
      if (logits) out.set("logits", float32_copy(t.trace.logits.data(), t.trace.logits.size()));
      return out;
    });
  }
  val translate_plain(val text) const { return translate(text, val::undefined()); }

 private:
  mha::DateModel model_;
};

/// new mod.DateModel(bytes): bytes is a Uint8Array (or ArrayBuffer) of the .safetensors file.
JsDateModel* make_date_model(val bytes) {
  return guarded([&] {
    val view = bytes;
    if (bytes.instanceof (val::global("ArrayBuffer"))) {
      view = val::global("Uint8Array").new_(bytes);
    } else if (!bytes.instanceof (val::global("Uint8Array"))) {
      throw mha::parse_error(
          "DateModel needs the .safetensors file's bytes as a Uint8Array or ArrayBuffer");
    }
    const auto size = view["length"].as<std::size_t>();
    std::vector<std::uint8_t> data(size);
    if (size > 0) {  // one bulk copy from JS into wasm memory
      val(emscripten::typed_memory_view(size, data.data())).call<void>("set", view);
    }
    return new JsDateModel(mha::DateModel::load(std::move(data)));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab_date_model) {
  using namespace emscripten;
  class_<JsDateModel>("DateModel")
      .constructor(&make_date_model, allow_raw_pointers())
      .function("translate", &JsDateModel::translate)
      .function("translate", &JsDateModel::translate_plain)
      .property("config", &JsDateModel::config)
      .property("vocab", &JsDateModel::vocab)
      .property("maxSourceLength", &JsDateModel::max_source_length)
      .property("checksum", &JsDateModel::checksum);
}
