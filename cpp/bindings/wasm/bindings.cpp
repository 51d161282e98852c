// Embind adapter: JS objects and typed arrays in, JS objects with Float32Array copies out.
// The C++ layers know nothing of this file. Every C++ error becomes a JS Error carrying its
// message; the module keeps working afterwards. API reference: docs/js-api.md.
//
// Shape legend: n = query tokens, m = key tokens, d = d_model, h = num_heads, d_head = d / h.
// Arrays are flat and row-major: query (n*d), key (m*kdim), value (m*vdim), attn_mask (n*m or
// h*n*m), attn_weights (h*n*m).
#include <emscripten/bind.h>
#include <emscripten/em_macros.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/experiment_request.hpp"
#include "mha/kernels.hpp"
#include "mha/numpy_random.hpp"
#include "mha/masks.hpp"
#include "js_convert.hpp"

namespace {

using emscripten::val;
using mha::Index;

using namespace mha_js;  // js_convert.hpp: guarded(), readers and writers of JS values

// ---------------------------------------------------------------------------------------------
// Exported API

/// The inputs, masks and options of `request` (n, query, m?, key?, value?, attn_mask?,
/// key_padding_mask?, is_causal?, keep_intermediates?, weights_only?, ablated_heads?) through
/// `layer`: the result object of forward() (docs/js-api.md). Throws what the readers and the
/// layer throw (parse_error, shape_error, ...).
val forward_inputs(const mha::MultiheadAttention& layer, const val& request) {
  const mha::AttentionConfig& c = layer.config();
  const Inputs in = read_inputs(request, c);
  const Index m = in.self ? in.query.rows() : in.key.rows();
  const mha::AttentionMasks masks = read_masks(request, c.num_heads, in.query.rows(), m);
  const mha::AttentionResult r =
      in.self ? layer.forward(in.query, masks, read_options(request))
              : layer.forward(in.query, in.key, in.value, masks, read_options(request));
  return result_to_js(r, c);
}

/// One layer kept in wasm memory: weights validated once, forward() as often as needed.
class JsMultiheadAttention {
 public:
  explicit JsMultiheadAttention(mha::MultiheadAttention layer) : layer_(std::move(layer)) {}

  /// request: {n, query, m?, key?, value?, attn_mask?, key_padding_mask?, is_causal?,
  ///           keep_intermediates?}. Returns the result object (docs/js-api.md).
  val forward(val request) const {
    return guarded([&] {
      expect_request(request, "the layer's forward request", {&kInputKeys});
      return forward_inputs(layer_, request);
    });
  }

  /// Zero-copy forward (docs/js-api.md "Zero-copy forward"): request as forward() without
  /// keep_intermediates; each input is written once into a buffer this layer keeps, and output,
  /// attn_weights and fully_masked_rows come back as views into this layer's last result, valid
  /// until the next call into the module (which may grow or reuse wasm memory) or delete().
  val forward_views(val request) {
    return guarded([&] {
      static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const auto& key : kInputKeys) {
          if (key != "keep_intermediates") k.push_back(key);
        }
        return k;
      }();
      expect_request(request, "the layer's forwardViews request", {&keys});
      const mha::AttentionConfig& c = layer_.config();
      const Index n = static_cast<Index>(integer(request, "n", 1, mha::limits::max_tokens));
      matrix_into(request, "query", n, c.d_model, "n*d_model", query_);
      const bool self = !has(request, "key") && !has(request, "value");
      Index m = n;
      if (!self) {
        m = static_cast<Index>(integer(request, "m", 1, mha::limits::max_tokens));
        matrix_into(request, "key", m, c.key_dim(), "m*kdim", key_);
        matrix_into(request, "value", m, c.value_dim(), "m*vdim", value_);
      }
      const mha::AttentionMasks masks = read_masks(request, c.num_heads, n, m);
      mha::ForwardOptions options = read_options(request);
      options.keep_intermediates = false;
      last_ = mha::AttentionResult();  // free the previous result before the new one is made
      last_ = self ? layer_.forward(query_, masks, options)
                   : layer_.forward(query_, key_, value_, masks, options);
      val out = val::object();
      out.set("n", static_cast<double>(n));
      out.set("m", static_cast<double>(m));
      out.set("d_model", static_cast<double>(c.d_model));
      out.set("num_heads", static_cast<double>(c.num_heads));
      out.set("d_head", static_cast<double>(c.d_head()));
      if (last_.output.size() > 0) {  // absent with weights_only
        out.set("output", val(emscripten::typed_memory_view(
                              static_cast<std::size_t>(last_.output.size()), last_.output.data())));
      }
      out.set("attn_weights", val(emscripten::typed_memory_view(
                                  static_cast<std::size_t>(last_.attn_weights.size()),
                                  last_.attn_weights.data())));
      out.set("fully_masked_rows",
              val(emscripten::typed_memory_view(last_.fully_masked_rows.size(),
                                                last_.fully_masked_rows.data())));
      return out;
    });
  }

  double parameter_count() const {
    return static_cast<double>(mha::parameter_count(layer_.config(), layer_.has_bias()));
  }
  double d_model() const { return static_cast<double>(layer_.config().d_model); }
  double num_heads() const { return static_cast<double>(layer_.config().num_heads); }

 private:
  mha::MultiheadAttention layer_;
  mha::RowMatrixXf query_, key_, value_;  // forwardViews' inputs, reused between calls
  mha::AttentionResult last_;             // forwardViews' result, viewed by JS
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
    return forward_inputs(mha::MultiheadAttention(c, read_weights(request, c)), request);
  });
}

std::uint32_t read_seed(const val& req) {
  return static_cast<std::uint32_t>(integer(req, "seed", 0, 0xffffffffLL));
}

/// The draws of the last seed asked for, kept between calls (one stream per module instance:
/// the page's and its worker's each have their own). Changing the token count or the number of
/// heads slices it again; a new seed replaces it.
std::unique_ptr<mha::NumpyNormalStream> kept_stream;

mha::NumpyNormalStream& normal_stream(std::uint32_t seed) {
  if (!kept_stream || kept_stream->seed() != seed) {
    kept_stream = std::make_unique<mha::NumpyNormalStream>(seed);
  }
  return *kept_stream;
}

/// A numpyExperiment request as mha::read_experiment_request reads it: each field converted from
/// its JS value (js_convert.hpp).
class JsExperimentSource final : public mha::ExperimentSource {
 public:
  explicit JsExperimentSource(const val& request) : req_(request) {}
  std::string what() const override { return "the numpyExperiment request"; }
  std::vector<std::string> keys() const override {
    expect_object(req_, what());
    const val keys = val::global("Object").call<val>("keys", req_);
    std::vector<std::string> out;
    const auto count = keys["length"].as<std::size_t>();
    for (std::size_t i = 0; i < count; ++i) out.push_back(keys[i].as<std::string>());
    return out;
  }
  bool has(const char* key) const override { return mha_js::has(req_, key); }
  std::int64_t integer(const char* key, std::int64_t min, std::int64_t max) const override {
    return mha_js::integer(req_, key, min, max);
  }
  bool boolean_or(const char* key, bool fallback) const override {
    return mha_js::boolean_or(req_, key, fallback);
  }
  std::optional<std::string> text(const char* key) const override {
    const val v = req_[key];
    if (v.typeOf().as<std::string>() != "string") return std::nullopt;
    return v.as<std::string>();
  }
  std::string repr(const char* key) const override { return js_repr(req_[key]); }
  mha::AttentionConfig config() const override { return read_config(req_); }
  mha::AttentionMasks masks(Index h, Index n, Index m) const override {
    return read_masks(req_, h, n, m);
  }
  mha::ForwardOptions options() const override { return read_options(req_); }

 private:
  const val& req_;
};

/// Module 08's program: {seed, tokens, d_model, num_heads, precision?, positional?, is_causal?,
/// attn_mask?, key_padding_mask?, keep_intermediates?, weights_only?, ablated_heads?,
/// return_parameters?, first_head?, head_count?, attn_weights_into?} (the keys:
/// request_schema.hpp kExperimentKeys; read by mha::read_experiment_request). weights_only acts on
/// the float32 path only (float64 always computes everything); return_parameters: false leaves
/// out x, in_proj_weight and out_proj_weight; first_head / head_count return those heads' weights
/// only (the grids' path: float32, weights_only, no intermediates, no parameters);
/// attn_weights_into: a Float32Array of exactly as many floats as the weights returned, written
/// into and returned instead of a new array (a compute worker's spare buffer:
/// web/src/compute/compute_worker.js).
val numpy_experiment(val request) {
  return guarded([&] {
    const mha::ExperimentRequest e = mha::read_experiment_request(JsExperimentSource(request));
    const mha::AttentionConfig& c = e.config;
    // Where the weights go (a worker's spare buffer), checked before any work is done.
    const val weights_into = read_weights_into(request, e.head_range ? "head_count" : "num_heads",
                                               e.heads_returned(), e.tokens);
    const mha::ExperimentRun run = mha::run_experiment(normal_stream(e.seed), e);
    val out = result_to_js(run.result, c, weights_into);
    // X and the weights as float32 (4·d² + n·d values: 4 MiB at d_model 512), for views that
    // run the layer again on them; the grids alone do without.
    if (!e.grids() && e.return_parameters) {
      const mha::AttentionWeights& weights = run.weights();
      const mha::RowMatrixXf x32 = run.x.cast<float>();
      out.set("x", float32_copy(x32.data(), x32.size()));
      out.set("in_proj_weight",
              float32_copy(weights.in_proj_weight.data(), weights.in_proj_weight.size()));
      out.set("out_proj_weight",
              float32_copy(weights.out_proj_weight.data(), weights.out_proj_weight.size()));
    }
    out.set("precision", mha::experiment_precision_name(e.precision));
    if (e.head_range) {
      out.set("first_head", static_cast<double>(e.first_head));
      out.set("head_count", static_cast<double>(e.head_count));
    }
    out.set("parameter_count", static_cast<double>(mha::parameter_count(c, false)));
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

/// experimentWork({tokens, d_model}): multiply-adds of one numpyExperiment forward,
/// n * d * (4 * d + 2 * n) (mha::numpy_experiment_work). Precision "auto" computes in float64 up
/// to experimentFloat64MaxWork of them; the page also sizes its work with it.
val experiment_work(val request) {
  return guarded([&] {
    static const std::vector<std::string> keys = {"tokens", "d_model"};
    expect_request(request, "the experimentWork request", {&keys});
    const Index tokens = static_cast<Index>(integer(request, "tokens", 1, mha::limits::max_tokens));
    const Index d_model =
        static_cast<Index>(integer(request, "d_model", 1, mha::limits::max_d_model));
    return val(mha::numpy_experiment_work(tokens, d_model));
  });
}

/// windowMask({n, m?, window, is_causal?}): the sliding-window attn_mask (js_convert.hpp).
val window_mask(val request) { return sliding_window_mask_js(request, "the windowMask request"); }

/// Memory use, for leak tests and the page's diagnostics: bytes held by malloc right now (of which
/// numpy_draws_bytes are numpyExperiment's kept draws: 8 bytes per draw, n*d + 4*d*d for the
/// largest request of the current seed) and the size of wasm linear memory (which only grows).
val memory_stats() {
  const struct mallinfo info = mallinfo();
  val out = val::object();
  out.set("malloc_in_use_bytes", static_cast<double>(info.uordblks));
  out.set("numpy_draws_bytes",
          kept_stream ? static_cast<double>(kept_stream->drawn() * sizeof(double)) : 0.0);
  out.set("wasm_memory_bytes", val::module_property("HEAP8")["length"]);
  return out;
}

struct JsLimits {
  double max_tokens, max_d_model, max_num_heads, max_weight_entries;
};

}  // namespace

namespace mha_js {

val sliding_window_mask_js(val request, const char* what) {
  return guarded([&] {
    static const std::vector<std::string> keys = {"n", "m", "window", "is_causal"};
    expect_request(request, what, {&keys});
    const Index n = static_cast<Index>(integer(request, "n", 1, mha::limits::max_tokens));
    const Index m = has(request, "m")
                        ? static_cast<Index>(integer(request, "m", 1, mha::limits::max_tokens))
                        : n;
    const Index w = static_cast<Index>(integer(request, "window", 0, mha::limits::max_tokens));
    const mha::HeadStack mask =
        mha::sliding_window_mask(n, m, w, boolean_or(request, "is_causal", false));
    std::vector<std::uint8_t> bytes(mask.data(), mask.data() + mask.size());
    return uint8_copy(bytes);
  });
}

}  // namespace mha_js

/// The function-table slot of the GEMM's 6-row micro-kernel (mha::kernels::tile6_sums), for
/// relaxed_simd.js, which puts the relaxed-SIMD kernel there when the engine validates it.
extern "C" EMSCRIPTEN_KEEPALIVE std::int32_t mha_tile6_slot() {
  return static_cast<std::int32_t>(reinterpret_cast<std::intptr_t>(mha::kernels::tile6_sums));
}

/// Called by relaxed_simd.js once the fused kernel is in that slot: the GEMM then runs all its
/// tiles as 6 x 8 through it (mha::kernels::tile6_fused).
extern "C" EMSCRIPTEN_KEEPALIVE void mha_tile6_fused() { mha::kernels::tile6_fused = true; }

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
  function("experimentWork", &experiment_work);
  constant("experimentFloat64MaxWork", mha::kExperimentFloat64MaxWork);
  function("windowMask", &window_mask);

  class_<JsMultiheadAttention>("MultiheadAttention")
      .constructor(&make_layer, allow_raw_pointers())
      .function("forward", &JsMultiheadAttention::forward)
      .function("forwardViews", &JsMultiheadAttention::forward_views)
      .function("parameterCount", &JsMultiheadAttention::parameter_count)
      .property("d_model", &JsMultiheadAttention::d_model)
      .property("num_heads", &JsMultiheadAttention::num_heads);
}
