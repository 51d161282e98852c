// Embind exports that read files exported from other models (mha/npy.hpp): .npy arrays,
// attention tensors in .npy or safetensors, and nn.MultiheadAttention weights saved as
// safetensors. Parsers of outside bytes, needed only when a user brings a file, so they belong in
// the lazily loaded full module (explain_bindings.cpp holds the page's small pure helpers).
// Reference: docs/js-api.md "Bring your own attention and weights".
//
// Shape legend: L = layers, h = num_heads, n = query tokens, m = key tokens, d = d_model.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "js_convert.hpp"
#include "mha/npy.hpp"
#include "mha/safetensors.hpp"

namespace {

using namespace mha_js;

val shape_to_js(const std::vector<std::int64_t>& shape) {
  val out = val::array();
  for (std::size_t i = 0; i < shape.size(); ++i) out.set(i, static_cast<double>(shape[i]));
  return out;
}

bool is_npy(const std::vector<std::uint8_t>& b) {
  return b.size() >= 6 && std::memcmp(b.data(), "\x93NUMPY", 6) == 0;
}

/// mod.loadNpy(bytes) -> {shape, dtype, data: Float32Array}.
val load_npy(val bytes) {
  return guarded([&] {
    const std::vector<std::uint8_t> b = byte_vector(bytes, "loadNpy(bytes)");
    const mha::FloatTensor t = mha::read_npy(b.data(), b.size(), "the .npy file");
    val o = val::object();
    o.set("shape", shape_to_js(t.shape));
    o.set("dtype", val(t.dtype));
    o.set("data", float32_copy(t.data.data(), static_cast<Index>(t.data.size())));
    return o;
  });
}

/// mod.loadAttention(bytes, {tensor?}) -> {layers: [Float32Array(h*n*m)], num_layers, num_heads,
/// n, m, shape, dtype}. bytes: a .npy file (recognised by its magic) or a safetensors file.
val load_attention(val bytes, val options) {
  return guarded([&] {
    std::string tensor;
    if (!options.isUndefined() && !options.isNull()) {
      static const std::vector<std::string> keys = {"tensor"};
      expect_request(options, "loadAttention's options", {&keys});
      if (has(options, "tensor")) {
        if (options["tensor"].typeOf().as<std::string>() != "string") {
          throw mha::parse_error("options.tensor must be a tensor name (a string)");
        }
        tensor = options["tensor"].as<std::string>();
      }
    }
    std::vector<std::uint8_t> b = byte_vector(bytes, "loadAttention(bytes)");
    mha::FloatTensor t;
    if (is_npy(b)) {
      if (!tensor.empty())
        throw mha::parse_error("options.tensor names a safetensors tensor; this is a .npy file");
      t = mha::read_npy(b.data(), b.size(), "the .npy file");
    } else {
      t = mha::safetensors_attention(mha::Safetensors::parse(std::move(b)), tensor);
    }
    const std::vector<mha::HeadStack> layers = mha::attention_layers(t, "the attention tensor");
    val list = val::array();
    for (std::size_t l = 0; l < layers.size(); ++l) {
      list.set(l, float32_copy(layers[l].data(), layers[l].size()));
    }
    val o = val::object();
    o.set("layers", list);
    o.set("num_layers", static_cast<double>(layers.size()));
    o.set("num_heads", static_cast<double>(layers[0].heads()));
    o.set("n", static_cast<double>(layers[0].rows()));
    o.set("m", static_cast<double>(layers[0].cols()));
    o.set("shape", shape_to_js(t.shape));
    o.set("dtype", val(t.dtype));
    return o;
  });
}

void set_matrix(val& o, const char* key, const Eigen::Ref<const mha::RowMatrixXf>& x) {
  if (x.size() > 0) o.set(key, float32_copy(x.data(), x.size()));
}

/// mod.loadMultiheadAttention(bytes, {num_heads?, prefix?}) -> a spec for new
/// mod.MultiheadAttention(spec): {d_model, num_heads, kdim, vdim, in_proj_weight |
/// q/k/v_proj_weight, in_proj_bias?, out_proj_weight, out_proj_bias?} (validated here).
val load_multihead_attention(val bytes, val options) {
  return guarded([&] {
    Index num_heads = 0;
    std::string prefix;
    if (!options.isUndefined() && !options.isNull()) {
      static const std::vector<std::string> keys = {"num_heads", "prefix"};
      expect_request(options, "loadMultiheadAttention's options", {&keys});
      if (has(options, "num_heads")) {
        num_heads =
            static_cast<Index>(integer(options, "num_heads", 1, mha::limits::max_num_heads));
      }
      if (has(options, "prefix")) {
        if (options["prefix"].typeOf().as<std::string>() != "string") {
          throw mha::parse_error(
              "options.prefix must be a string, e.g. \"encoder.layers.0.self_attn.\"");
        }
        prefix = options["prefix"].as<std::string>();
      }
    }
    const mha::Safetensors file =
        mha::Safetensors::parse(byte_vector(bytes, "loadMultiheadAttention(bytes)"));
    const mha::MultiheadAttention layer = mha::load_multihead_attention(file, num_heads, prefix);
    const mha::AttentionConfig& c = layer.config();
    const mha::AttentionWeights& w = layer.weights();
    val o = val::object();
    o.set("d_model", static_cast<double>(c.d_model));
    o.set("num_heads", static_cast<double>(c.num_heads));
    o.set("kdim", static_cast<double>(c.key_dim()));
    o.set("vdim", static_cast<double>(c.value_dim()));
    set_matrix(o, "in_proj_weight", w.in_proj_weight);
    set_matrix(o, "q_proj_weight", w.q_proj_weight);
    set_matrix(o, "k_proj_weight", w.k_proj_weight);
    set_matrix(o, "v_proj_weight", w.v_proj_weight);
    if (w.in_proj_bias.size() > 0)
      o.set("in_proj_bias", float32_copy(w.in_proj_bias.data(), w.in_proj_bias.size()));
    set_matrix(o, "out_proj_weight", w.out_proj_weight);
    if (w.out_proj_bias.size() > 0)
      o.set("out_proj_bias", float32_copy(w.out_proj_bias.data(), w.out_proj_bias.size()));
    return o;
  });
}

val load_attention_plain(val bytes) { return load_attention(bytes, val::undefined()); }
val load_multihead_attention_plain(val bytes) {
  return load_multihead_attention(bytes, val::undefined());
}

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab_load) {
  using namespace emscripten;
  function("loadNpy", &load_npy);
  function("loadAttention", &load_attention);
  function("loadAttention", &load_attention_plain);
  function("loadMultiheadAttention", &load_multihead_attention);
  function("loadMultiheadAttention", &load_multihead_attention_plain);
}
