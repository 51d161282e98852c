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
#include "model_convert.hpp"

namespace {

using namespace mha_js;  // js_convert.hpp, model_convert.hpp: guarded(), readers and writers

const std::vector<std::string> kTranslateOptions = {"ablated", "logits"};

/// One Float32Array per stack (L of them), copies of the stacks.
val stacks_to_js(const std::vector<mha::HeadStack>& stacks) {
  val out = val::array();
  for (std::size_t l = 0; l < stacks.size(); ++l) {
    out.set(l, float32_copy(stacks[l].data(), stacks[l].size()));
  }
  return out;
}

/// options.ablated: [{kind: 'encoder_self' | 'decoder_self' | 'cross', layer, head}, ...].
mha::Ablation read_ablation(const val& options) {
  return read_head_list<mha::HeadId>(
      options, "ablated", "{kind, layer, head}", [](const val& item, const std::string& where) {
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
        id.layer = head_field(item, "layer", where);
        id.head = head_field(item, "head", where);
        return id;
      });
}

/// The date model kept in wasm memory: new mod.DateModel(bytes), then translate() per keystroke.
class JsDateModel : public JsModelBase<mha::DateModel> {
 public:
  static constexpr const char* kName = "DateModel";
  using JsModelBase::JsModelBase;

  val config() const {
    return guarded([&] { return val::global("JSON").call<val>("parse", model_.config_json()); });
  }
  double max_source_length() const { return static_cast<double>(model_.max_source_len()); }

  val translate(val text, val options) const {
    return guarded([&] {
      const std::string input = text_argument(text, "translate(text)");
      const bool given = options_given(options, "translate(text, options)", kTranslateOptions);
      const mha::Ablation ablation = given ? read_ablation(options) : mha::Ablation{};
      const bool logits = given && boolean_or(options, "logits", false);
      const mha::DateTranslation t = model_.translate(input, ablation, logits);
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
      const val encoder_self = stacks_to_js(t.trace.encoder_self);
      const val decoder_self = stacks_to_js(t.trace.decoder_self);
      const val cross = stacks_to_js(t.trace.cross);
      out.set("encoder_self", encoder_self);
      out.set("decoder_self", decoder_self);
      out.set("cross", cross);
      val attention = val::array();
      append_attention(attention, "encoder_self", t.trace.encoder_self, encoder_self);
      append_attention(attention, "decoder_self", t.trace.decoder_self, decoder_self);
      append_attention(attention, "cross", t.trace.cross, cross);
      out.set("attention", attention);
      if (logits) out.set("logits", float32_copy(t.trace.logits.data(), t.trace.logits.size()));
      return out;
    });
  }
};

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab_date_model) {
  model_class<JsDateModel, &JsDateModel::translate>("translate")
      .property("maxSourceLength", &JsDateModel::max_source_length);
}
