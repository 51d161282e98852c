// `mha patterns` input and output (patterns_io.hpp).
#include "mha/patterns_io.hpp"

#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "mha/json_io.hpp"
#include "mha/npy.hpp"
#include "mha/safetensors.hpp"

namespace mha {
namespace {

using json = nlohmann::json;

std::string dims(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

/// A nested JSON array of numbers -> shape and flat float values (C order). Rectangular, at most
/// 5 levels, at most limits::max_weight_entries values; every number finite in float32.
FloatTensor nested_to_tensor(const json& value, const std::string& key) {
  FloatTensor t;
  const json* v = &value;
  while (v->is_array()) {
    if (v->empty())
      throw shape_error(key + " has an empty array at depth " + std::to_string(t.shape.size()));
    t.shape.push_back(static_cast<std::int64_t>(v->size()));
    if (t.shape.size() > 5) throw shape_error(key + " is nested more than 5 levels deep");
    v = &v->front();
  }
  std::int64_t count = 1;
  for (const auto d : t.shape) {
    count *= d;
    if (count > limits::max_weight_entries) {
      throw limit_error(key + " has more than the limit of " +
                        std::to_string(limits::max_weight_entries) + " values");
    }
  }
  t.data.reserve(static_cast<std::size_t>(count));
  t.dtype = "json";
  // Walk again, checking every array's length against the shape.
  std::vector<std::size_t> index;
  const auto walk = [&](const auto& self, const json& node, std::size_t depth) -> void {
    if (depth == t.shape.size()) {
      if (!node.is_number()) {
        std::string where;
        for (const auto i : index) where += "[" + std::to_string(i) + "]";
        throw parse_error(key + where + " must be a number, got " + std::string(node.type_name()));
      }
      const double x = node.get<double>();
      if (!std::isfinite(x) || std::abs(x) > 3.4028234663852886e38) {
        throw value_error(key + ": a value is not finite in float32");
      }
      t.data.push_back(static_cast<float>(x));
      return;
    }
    if (!node.is_array() || static_cast<std::int64_t>(node.size()) != t.shape[depth]) {
      std::string where;
      for (const auto i : index) where += "[" + std::to_string(i) + "]";
      throw parse_error(key + where + " must be an array of " + std::to_string(t.shape[depth]) +
                        " entries (the shape of its first entries, " + dims(t.shape) +
                        "); ragged arrays are not a tensor");
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      index.push_back(i);
      self(self, node[i], depth + 1);
      index.pop_back();
    }
  };
  walk(walk, value, 0);
  return t;
}

std::vector<std::string> string_list(const json& v, const std::string& key) {
  if (!v.is_array()) throw parse_error(key + " must be an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      throw parse_error(key + "[" + std::to_string(i) + "] must be a string, got " +
                        std::string(v[i].type_name()));
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

}  // namespace

namespace {
json optional_json(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

}  // namespace

json scores_to_json(const HeadScoreValues& s) {
  return {{"previous_token", optional_json(s.previous_token)},
          {"diagonal", optional_json(s.diagonal)},
          {"local_band", optional_json(s.local_band)},
          {"vertical_stripe", optional_json(s.vertical_stripe)},
          {"stripe_key", s.stripe_key},
          {"first_token", optional_json(s.first_token)},
          {"mean_distance", optional_json(s.mean_distance)},
          {"mean_distance_normalized", optional_json(s.mean_distance_normalized)},
          {"entropy_bits", optional_json(s.entropy_bits)},
          {"entropy_normalized", optional_json(s.entropy_normalized)},
          {"max_weight", optional_json(s.max_weight)},
          {"duplicate_token", optional_json(s.duplicate_token)},
          {"induction", optional_json(s.induction)},
          {"punctuation", optional_json(s.punctuation)}};
}

std::vector<std::optional<double> HeadScoreValues::*> score_fields() {
  return {&HeadScoreValues::previous_token,
          &HeadScoreValues::diagonal,
          &HeadScoreValues::local_band,
          &HeadScoreValues::vertical_stripe,
          &HeadScoreValues::first_token,
          &HeadScoreValues::mean_distance,
          &HeadScoreValues::mean_distance_normalized,
          &HeadScoreValues::entropy_bits,
          &HeadScoreValues::entropy_normalized,
          &HeadScoreValues::max_weight,
          &HeadScoreValues::duplicate_token,
          &HeadScoreValues::induction,
          &HeadScoreValues::punctuation};
}

std::string sniff_attention_format(std::string_view b) {
  if (b.size() >= 6 && std::memcmp(b.data(), "\x93NUMPY", 6) == 0) return ".npy";
  if (b.size() >= 9) {
    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
      n = (n << 8) | static_cast<unsigned char>(b[static_cast<std::size_t>(i)]);
    if (n >= 1 && n <= b.size() - 8 && b[8] == '{') return "safetensors";
  }
  return "json";
}

PatternsInput read_attention_input(std::string_view bytes, const std::string& tensor) {
  const std::string format = sniff_attention_format(bytes);
  if (!tensor.empty() && format != "safetensors") {
    throw parse_error("--tensor names a safetensors tensor, but the input is " + format);
  }
  PatternsInput in;
  FloatTensor t;
  if (format == ".npy") {
    t = read_npy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                 "the .npy input");
  } else if (format == "safetensors") {
    t = safetensors_attention(
        Safetensors::parse(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
        tensor);
  } else {
    const json doc = parse_json_text(bytes);
    if (!doc.is_object()) {
      throw parse_error(
          "the JSON input must be an object {\"tokens\": [...], \"attn_weights\": "
          "[...]}, got " +
          std::string(doc.type_name()));
    }
    for (const auto& [key, value] : doc.items()) {
      if (key != "tokens" && key != "attn_weights" && key != "query_tokens") {
        throw parse_error("unknown key \"" + key +
                          "\" in the JSON input (known keys: tokens, attn_weights, query_tokens)");
      }
    }
    if (!doc.contains("attn_weights")) throw parse_error("the JSON input has no \"attn_weights\"");
    t = nested_to_tensor(doc.at("attn_weights"), "attn_weights");
    if (doc.contains("tokens")) in.tokens = string_list(doc.at("tokens"), "tokens");
    if (doc.contains("query_tokens"))
      in.query_tokens = string_list(doc.at("query_tokens"), "query_tokens");
  }
  in.shape = t.shape;
  in.layers = attention_layers(t, "attn_weights");
  return in;
}

std::vector<HeadStack> attention_layers_from_json(const json& value, const std::string& key) {
  return attention_layers(nested_to_tensor(value, key), key);
}

std::vector<std::string> parse_tokens_text(std::string_view text) {
  std::size_t first = 0;
  while (first < text.size() && std::isspace(static_cast<unsigned char>(text[first]))) ++first;
  if (first < text.size() && text[first] == '[') {
    return string_list(parse_json_text(text), "the tokens file");
  }
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

void check_tokens(const PatternsInput& in, const std::string& what) {
  const HeadStack& l = in.layers.front();
  const std::string shape = " (shape " + dims(in.shape) + ")";
  if (!in.tokens.empty() && static_cast<Index>(in.tokens.size()) != l.cols()) {
    throw shape_error(what + " has " + std::to_string(in.tokens.size()) +
                      " tokens, the attention has " + std::to_string(l.cols()) + " keys" + shape);
  }
  if (!in.query_tokens.empty() && static_cast<Index>(in.query_tokens.size()) != l.rows()) {
    throw shape_error("query_tokens has " + std::to_string(in.query_tokens.size()) +
                      " tokens, the attention has " + std::to_string(l.rows()) + " queries" +
                      shape);
  }
}

json thresholds_to_json(const HeadScoreThresholds& t) {
  return {{"previous_token", t.previous_token},   {"local_band", t.local_band},
          {"vertical_stripe", t.vertical_stripe}, {"long_range", t.long_range},
          {"duplicate_token", t.duplicate_token}, {"induction", t.induction},
          {"punctuation", t.punctuation},         {"margin", t.margin}};
}

json layer_patterns_to_json(const HeadStack& layer, const std::string& name,
                            const HeadTokens& tokens, const HeadScoreThresholds& t) {
  const std::vector<std::string>& keys = tokens.keys;
  json heads = json::array();
  for (const HeadScores& hs : score_heads(layer, tokens, t, name)) {
    json h = {{"head", hs.head},
              {"labels", hs.labels},
              {"scores", scores_to_json(hs.scores)},
              {"uniform_baseline", scores_to_json(hs.uniform_baseline)},
              {"rows_scored", hs.rows_scored},
              {"causal", hs.causal}};
    if (hs.scores.stripe_key >= 0 && static_cast<std::size_t>(hs.scores.stripe_key) < keys.size()) {
      h["stripe_token"] = keys[static_cast<std::size_t>(hs.scores.stripe_key)];
    }
    heads.push_back(std::move(h));
  }
  return {{"name", name},
          {"n", layer.rows()},
          {"m", layer.cols()},
          {"heads", heads},
          {"js_distance", matrix_to_json(js_distance_matrix(layer, name))}};
}

json patterns_report_to_json(const PatternsInput& input, const std::string& tokens_what) {
  check_tokens(input, tokens_what);
  json layers = json::array();
  for (std::size_t l = 0; l < input.layers.size(); ++l) {
    json j = layer_patterns_to_json(input.layers[l], "layer " + std::to_string(l),
                                    HeadTokens{input.tokens, input.query_tokens});
    j["layer"] = l;
    layers.push_back(std::move(j));
  }
  json out = {{"shape", input.shape},
              {"tokens", input.tokens},
              {"thresholds", thresholds_to_json({})},
              {"layers", layers}};
  if (!input.query_tokens.empty()) out["query_tokens"] = input.query_tokens;
  return out;
}

}  // namespace mha
