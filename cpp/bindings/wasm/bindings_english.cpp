// Embind adapter for the English language model (docs/js-api.md "The English model"): only in
// the full module (mha_wasm.js). Shape legend: n = tokens (<bos> first), h = num_heads,
// L = num_layers, V = vocab_size. attnWeights is one flat row-major Float32Array (L, h, n, n).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "js_convert.hpp"
#include "mha/english_lm.hpp"
#include "mha/english_tokenizer.hpp"
#include "mha/model_pruning.hpp"
#include "model_convert.hpp"

namespace {

using namespace mha_js;  // js_convert.hpp, model_convert.hpp: guarded(), readers and writers

const std::vector<std::string> kRunOptions = {"top", "ablate"};
const std::vector<std::string> kLossOptions = {"ablate"};

/// options.ablate: [[layer, head], ...].
std::vector<mha::LMHead> read_ablate(const val& options) {
  return read_head_list<mha::LMHead>(
      options, "ablate", "[layer, head] pairs", [](const val& item, const std::string& where) {
        if (!item.isArray() || item["length"].as<std::size_t>() != 2) {
          throw mha::parse_error(where + " must be a [layer, head] pair, got " + js_repr(item));
        }
        val pair = val::object();
        pair.set("layer", item[0]);
        pair.set("head", item[1]);
        return mha::LMHead{head_field(pair, "layer", where), head_field(pair, "head", where)};
      });
}

val float64_copy(const std::vector<double>& data) {
  return val::global("Float64Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

val bool_array(const std::vector<bool>& items) {
  val out = val::array();
  for (std::size_t i = 0; i < items.size(); ++i) out.set(i, val(static_cast<bool>(items[i])));
  return out;
}

/// The English model kept in wasm memory: new mod.EnglishModel(bytes), then run() per text.
class JsEnglishModel : public JsModelBase<mha::EnglishLM> {
 public:
  static constexpr const char* kName = "EnglishModel";
  using JsModelBase::JsModelBase;

  val config() const {
    const mha::EnglishLMConfig& c = model_.config();
    val out = val::object();
    out.set("d_model", static_cast<double>(c.d_model));
    out.set("num_heads", static_cast<double>(c.num_heads));
    out.set("num_layers", static_cast<double>(c.num_layers));
    out.set("dim_feedforward", static_cast<double>(c.dim_feedforward));
    out.set("vocab_size", static_cast<double>(c.vocab_size));
    out.set("max_len", static_cast<double>(c.max_len));
    out.set("layer_norm_eps", c.layer_norm_eps);
    out.set("relative_bias", c.relative_bias);
    out.set("shortformer_positions", c.shortformer_positions);
    return out;
  }
  val run(val text, val options) const {
    return guarded([&] {
      const std::string t = text_argument(text, "run(text)");
      const bool given = options_given(options, "run(text, options)", kRunOptions);
      const Index top = given && has(options, "top")
                            ? static_cast<Index>(integer(options, "top", 1, 1 << 20))
                            : 5;
      const std::vector<mha::LMHead> ablate =
          given ? read_ablate(options) : std::vector<mha::LMHead>{};
      const mha::EnglishLMRun r = model_.run(t, top, ablate);
      const auto n = static_cast<Index>(r.tokens.ids.size());
      val out = val::object();
      out.set("tokens", string_array(r.tokens.tokens));
      out.set("words", string_array(r.tokens.words));
      out.set("wordIndex", val::global("Int32Array")
                               .new_(emscripten::typed_memory_view(r.tokens.word_index.size(),
                                                                   r.tokens.word_index.data())));
      out.set("unknown", bool_array(r.tokens.unknown));
      val ids = val::array();
      for (std::size_t i = 0; i < r.tokens.ids.size(); ++i) ids.set(i, r.tokens.ids[i]);
      out.set("ids", ids);
      out.set("truncatedTokens", static_cast<double>(r.tokens.truncated_tokens));
      val next = val::array();
      for (std::size_t i = 0; i < r.next_token.size(); ++i) {
        val p = val::object();
        p.set("token", r.next_token[i].token);
        p.set("probability", r.next_token[i].probability);
        next.set(i, p);
      }
      out.set("nextToken", next);
      out.set("nextTokenLogprob", float64_copy(r.next_token_logprob));
      out.set("perplexity", n > 1 ? val(r.perplexity) : val::null());
      out.set("layers", static_cast<double>(model_.config().num_layers));
      out.set("heads", static_cast<double>(model_.config().num_heads));
      out.set("n", static_cast<double>(n));
      // attnWeights (L, h, n, n) in one Float32Array, written layer by layer; attention[l].weights
      // is layer l's (h, n, n) part of it, a view (subarray).
      std::size_t total = 0;
      for (const auto& s : r.attn_weights) total += static_cast<std::size_t>(s.size());
      const val attn_weights = val::global("Float32Array").new_(static_cast<double>(total));
      val layers = val::array();
      std::size_t begin = 0;
      for (std::size_t l = 0; l < r.attn_weights.size(); ++l) {
        const mha::HeadStack& s = r.attn_weights[l];
        const auto size = static_cast<std::size_t>(s.size());
        const val part = attn_weights.call<val>("subarray", static_cast<double>(begin),
                                                static_cast<double>(begin + size));
        part.call<void>("set", val(emscripten::typed_memory_view(size, s.data())));
        layers.set(l, part);
        begin += size;
      }
      out.set("attnWeights", attn_weights);
      val attention = val::array();
      append_attention(attention, "self", r.attn_weights, layers);
      out.set("attention", attention);
      return out;
    });
  }
  /// heldoutLoss(texts, {ablate}): mha::english_heldout_loss over an array of strings:
  /// {nats, characters, tokens, texts, skipped, perCharacter (null when no text was scored)}.
  val heldout_loss(val texts, val options) const {
    return guarded([&] {
      if (!texts.isArray()) {
        throw mha::parse_error("heldoutLoss(texts): texts must be an array of strings, got " +
                               js_repr(texts));
      }
      std::vector<std::string> items;
      const auto count = texts["length"].as<std::size_t>();
      for (std::size_t i = 0; i < count; ++i) {
        const std::string call = "heldoutLoss(texts): texts[" + std::to_string(i) + "]";
        items.push_back(text_argument(texts[i], call.c_str()));
      }
      const bool given = options_given(options, "heldoutLoss(texts, options)", kLossOptions);
      const mha::EnglishLoss loss = mha::english_heldout_loss(
          model_, items, given ? read_ablate(options) : std::vector<mha::LMHead>{});
      val out = val::object();
      out.set("nats", loss.nats);
      out.set("characters", static_cast<double>(loss.characters));
      out.set("tokens", static_cast<double>(loss.tokens));
      out.set("texts", static_cast<double>(loss.texts));
      out.set("skipped", static_cast<double>(loss.skipped));
      out.set("perCharacter", loss.texts > 0 ? val(loss.per_character()) : val::null());
      return out;
    });
  }
};

/// mod.englishTokenize(text): the page's tokens of text, as the English model splits it.
val english_tokenize_js(val text) {
  return guarded([&] {
    return string_array(mha::english_tokenize(text_argument(text, "englishTokenize(text)")));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab_english_model) {
  model_class<JsEnglishModel, &JsEnglishModel::run>("run")
      .function("heldoutLoss", &JsEnglishModel::heldout_loss)
      .function("heldoutLoss", &run_without_options<JsEnglishModel, &JsEnglishModel::heldout_loss>);
  emscripten::function("englishTokenize", &english_tokenize_js);
}
