// What the trained models' Embind adapters share (bindings_date.cpp: DateModel;
// bindings_english.cpp: EnglishModel): one class shape (a constructor from the file's bytes;
// config, vocab and checksum as properties), the checks of a call's arguments (the text, the
// options object, the list of heads to switch off) and the run result's `attention` list. Only in
// the full module (mha_wasm.js). API reference: docs/js-api.md "The trained models".
//
// Shape legend: h = num_heads, q = queries, k = keys of one attention stack; weights are flat
// row-major Float32Arrays of h*q*k floats.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "js_convert.hpp"

namespace mha_js {

/// `text` as UTF-8. `call` names the call in the errors ("run(text)"). Throws parse_error when
/// text is not a string ("<call>: text must be a string, got a number") and value_error when it
/// holds a lone surrogate ("text is not valid Unicode: a lone surrogate at index I", I in UTF-16
/// code units).
inline std::string text_argument(const val& text, const char* call) {
  if (text.typeOf().as<std::string>() != "string") {
    throw mha::parse_error(std::string(call) + ": text must be a string, got a " +
                           text.typeOf().as<std::string>());
  }
  // Embind's UTF-8 conversion pairs a lone surrogate with whatever follows it, so it is refused
  // here, while it is still visible.
  const int at = text.call<int>("search", val::global("RegExp").new_(val("\\p{Cs}"), val("u")));
  if (at >= 0) {
    throw mha::value_error("text is not valid Unicode: a lone surrogate at index " +
                           std::to_string(at));
  }
  return text.as<std::string>();
}

/// Whether a call's optional `options` argument was given (neither undefined nor null). Throws
/// parse_error when it is not a plain object ("<what> must be an object of named fields, got a
/// string") or has a key outside `keys` ("unknown key 'x' in <what> (known keys: ...)").
inline bool options_given(const val& options, const std::string& what,
                          const std::vector<std::string>& keys) {
  if (options.isUndefined() || options.isNull()) return false;
  expect_request(options, what, {&keys});
  return true;
}

/// obj[key] as a layer or head index in [0, 2^20]; the core checks it against the model. Errors
/// as integer()'s, prefixed with `where` ("ablate[1]: head must be a number, got a string").
inline Index head_field(const val& obj, const char* key, const std::string& where) {
  try {
    return static_cast<Index>(integer(obj, key, 0, 1 << 20));
  } catch (const mha::error& e) {
    throw mha::parse_error(where + ": " + e.what());
  }
}

/// options[key], the heads to switch off: empty when absent; else an Array whose entry i
/// `read_one(entry, where)` reads into a Head, with where = "<key>[i]" for its errors. Throws
/// parse_error "<key> must be an array of <entry_words>" for anything but an Array.
template <class Head, class ReadOne>
std::vector<Head> read_head_list(const val& options, const char* key, const char* entry_words,
                                 ReadOne read_one) {
  std::vector<Head> heads;
  if (!has(options, key)) return heads;
  const val list = options[key];
  if (!list.isArray()) {
    throw mha::parse_error(std::string(key) + " must be an array of " + entry_words);
  }
  const auto count = list["length"].as<std::size_t>();
  for (std::size_t i = 0; i < count; ++i) {
    heads.push_back(read_one(list[i], std::string(key) + "[" + std::to_string(i) + "]"));
  }
  return heads;
}

/// One entry of a run result's `attention` list: {kind, layer, num_heads, queries, keys,
/// weights}, with the sizes of `stack` (h, q, k) and `weights` the Float32Array of h*q*k floats
/// the result already holds for it (the same object or a view of it: no second copy).
inline val attention_entry(const char* kind, std::size_t layer, const mha::HeadStack& stack,
                           const val& weights) {
  val entry = val::object();
  entry.set("kind", val(kind));
  entry.set("layer", static_cast<double>(layer));
  entry.set("num_heads", static_cast<double>(stack.heads()));
  entry.set("queries", static_cast<double>(stack.rows()));
  entry.set("keys", static_cast<double>(stack.cols()));
  entry.set("weights", weights);
  return entry;
}

/// Appends to `attention` one attention_entry per layer of `stacks`: layer l's weights are
/// arrays[l] (a JS array of Float32Arrays, one per stack).
inline void append_attention(val& attention, const char* kind,
                             const std::vector<mha::HeadStack>& stacks, const val& arrays) {
  for (std::size_t l = 0; l < stacks.size(); ++l) {
    attention.call<void>("push", attention_entry(kind, l, stacks[l], arrays[l]));
  }
}

/// What every trained model's JS class holds: the model, kept in wasm memory, and its `vocab` and
/// `checksum` (model_class makes them properties). A model's class derives from it and adds
/// kName (the JS class's name), config() and its run call.
template <class M>
class JsModelBase {
 public:
  using Model = M;
  explicit JsModelBase(M model) : model_(std::move(model)) {}
  val vocab() const { return string_array(model_.vocab()); }
  std::string checksum() const { return model_.checksum(); }

 protected:
  M model_;
};

/// A model kept in wasm memory, new JsModel(JsModel::Model::load(bytes)): bytes is a Uint8Array
/// (or ArrayBuffer) of the .safetensors file; JsModel::kName, the JS class's name, is in the
/// errors. Throws (as a JS Error) what Model::load throws: a truncated file, a checksum mismatch,
/// another model's file.
template <class JsModel>
JsModel* load_js_model(val bytes) {
  return guarded([&] {
    return new JsModel(JsModel::Model::load(
        byte_vector(bytes, std::string(JsModel::kName) + " (the .safetensors file)")));
  });
}

/// A model's run call with its options left out: (model.*Run)(text, undefined).
template <class JsModel, val (JsModel::*Run)(val, val) const>
val run_without_options(const JsModel& model, val text) {
  return (model.*Run)(text, val::undefined());
}

/// Registers the JS class JsModel::kName with what every trained model's class has: the
/// constructor (from the file's bytes, load_js_model), `config`, `vocab` and `checksum` as
/// properties, and its run call `run` (text, options), callable as run(text) too. The caller adds
/// the model's own members to the class it returns.
template <class JsModel, val (JsModel::*Run)(val, val) const>
emscripten::class_<JsModel> model_class(const char* run) {
  return emscripten::class_<JsModel>(JsModel::kName)
      .constructor(&load_js_model<JsModel>, emscripten::allow_raw_pointers())
      .property("config", &JsModel::config)
      .property("vocab", &JsModel::vocab)
      .property("checksum", &JsModel::checksum)
      .function(run, Run)
      .function(run, &run_without_options<JsModel, Run>);
}

}  // namespace mha_js
