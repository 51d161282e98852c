// Embind adapter for the English model's subword tokenizer (mha::SubwordTokenizer; docs/js-api.md
// "The subword tokenizer"): only in the full module (mha_wasm.js). Shape legend: p = pieces of
// one text, w = its words. Offsets given to JS count UTF-16 code units, as JS strings do.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "js_convert.hpp"
#include "mha/subword_tokenizer.hpp"
#include "model_convert.hpp"

namespace {

using namespace mha_js;  // js_convert.hpp, model_convert.hpp: guarded(), readers and writers

val int32_copy(const std::vector<std::int32_t>& data) {
  return val::global("Int32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

/// Spans as flat [begin0, end0, begin1, end1, ...] in UTF-16 code units of text.
val utf16_spans(const std::vector<std::size_t>& units, const std::vector<mha::ByteSpan>& spans) {
  std::vector<std::int32_t> flat;
  flat.reserve(2 * spans.size());
  for (const mha::ByteSpan& s : spans) {
    flat.push_back(static_cast<std::int32_t>(units[s.begin]));
    flat.push_back(static_cast<std::int32_t>(units[s.end]));
  }
  return int32_copy(flat);
}

/// new mod.SubwordTokenizer(description): description is the JSON text of the tokenizer (the
/// model file's "tokenizer" metadata) or that object itself.
class JsSubwordTokenizer {
 public:
  explicit JsSubwordTokenizer(mha::SubwordTokenizer t) : t_(std::move(t)) {}

  val encode(val text) const {
    return guarded([&] {
      const std::string t = text_argument(text, "encode(text)");
      const mha::SubwordEncoding e = t_.encode(t);
      const std::vector<std::size_t> units = mha::text_unit_offsets(t, mha::TextUnit::utf16);
      val out = val::object();
      out.set("ids", int32_copy(std::vector<std::int32_t>(e.ids.begin(), e.ids.end())));
      out.set("pieces", string_array(e.pieces));
      out.set("spans", utf16_spans(units, e.spans));
      out.set("word_index",
              int32_copy(std::vector<std::int32_t>(e.word_index.begin(), e.word_index.end())));
      out.set("words", string_array(e.words));
      out.set("word_spans", utf16_spans(units, e.word_spans));
      return out;
    });
  }
  double vocab_size() const { return static_cast<double>(t_.vocab_size()); }
  val pieces() const { return string_array(t_.spec().pieces); }

 private:
  mha::SubwordTokenizer t_;
};

JsSubwordTokenizer* make_subword_tokenizer(val description) {
  return guarded([&] {
    std::string text;
    if (description.typeOf().as<std::string>() == "string") {
      text = description.as<std::string>();
    } else if (description.typeOf().as<std::string>() == "object" && !description.isNull() &&
               !description.isArray()) {
      text = val::global("JSON").call<std::string>("stringify", description);
    } else {
      throw mha::parse_error(
          "SubwordTokenizer(description) needs the tokenizer's JSON text or object, got " +
          js_repr(description));
    }
    return new JsSubwordTokenizer(mha::SubwordTokenizer::from_json(text));
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(mha_lab_subword_tokenizer) {
  emscripten::class_<JsSubwordTokenizer>("SubwordTokenizer")
      .constructor(&make_subword_tokenizer, emscripten::allow_raw_pointers())
      .function("encode", &JsSubwordTokenizer::encode)
      .property("vocabSize", &JsSubwordTokenizer::vocab_size)
      .property("pieces", &JsSubwordTokenizer::pieces);
}
