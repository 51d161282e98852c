// Embind adapter for the date model (docs/js-api.md "The date model"): only in the full
// module (mha_wasm.js), not in the page's core module (mha_wasm_core.js). Shape legend: S = source
// characters, T = decoder steps (<bos> + generated characters), V = vocab, h = num_heads,
// L = layers. Weight stacks are flat row-major Float32Arrays, one per layer.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "js_convert.hpp"
#include "mha/date_model.hpp"

namespace {

using namespace mha_js;  // js_convert.hpp: guarded(), readers and writers of JS values

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
    return new JsDateModel(
        mha::DateModel::load(byte_vector(bytes, "DateModel (the .safetensors file)")));
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
