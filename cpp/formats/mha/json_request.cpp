// `mha forward` requests: strict JSON text to a validated ForwardRequest, and running it.
// Format and errors: json_io.hpp and docs/cli.md.
// Shape legend: n = query tokens, m = key tokens, d = d_model, h = num_heads.
#include "mha/json_io.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mha/json_strict.hpp"
#include "mha/request_schema.hpp"

namespace mha {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------------------------
// Messages

/// A short description of a JSON value for an error message: `string "abc"`, `number 2.5`,
/// `array`, `object`, ... (long scalars are cut).
std::string describe(const json& v) {
  if (v.is_array()) return v.empty() ? "an empty array" : "an array";
  if (v.is_object()) return "an object";
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  if (v.is_string()) return "the string " + text;
  if (v.is_boolean()) return text;
  if (v.is_null()) return "null";
  return "the number " + text;
}

std::string index_path(const std::string& name, std::initializer_list<std::size_t> indices) {
  std::string path = name;
  for (std::size_t i : indices) path += "[" + std::to_string(i) + "]";
  return path;
}

std::string shape_text(const std::vector<Index>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string number_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Nested arrays

/// Checks that `v` is a rectangular nested array of `max_sizes.size()` levels, every level
/// non-empty and at most max_sizes[level] long; returns its shape. `what` describes the
/// expected shape for messages, e.g. "(n, d_model)".
/// Throws parse_error (not an array, ragged), shape_error (empty), limit_error (too long).
std::vector<Index> array_shape(const json& v, const std::string& name, const std::string& what,
                               const std::vector<Index>& max_sizes,
                               const std::vector<const char*>& limit_names) {
  const std::size_t rank = max_sizes.size();
  std::vector<Index> shape(rank, 0);
  // Walk down the first elements to learn the shape, then check every sub-array against it.
  const json* cur = &v;
  std::string path = name;
  for (std::size_t level = 0; level < rank; ++level) {
    if (!cur->is_array()) {
      if (level == 0) {
        throw parse_error(name + " must be " + std::to_string(rank) + "-level nested arrays " +
                          what + ", got " + describe(*cur));
      }
      throw parse_error(path + " must be an array, got " + describe(*cur) + " (" + name + " is " +
                        what + ")");
    }
    if (cur->empty()) {
      throw shape_error(path + " is empty; " + name + " must be " + what +
                        " with every size at least 1");
    }
    const Index size = static_cast<Index>(cur->size());
    if (size > max_sizes[level]) {
      throw limit_error(path + " has " + std::to_string(size) + " entries, above the limit of " +
                        std::to_string(max_sizes[level]) + " (mha::limits::" + limit_names[level] +
                        ")");
    }
    shape[level] = size;
    cur = &(*cur)[0];
    path += "[0]";
  }
  // Every sub-array must be an array of the same length (leaves are checked on conversion).
  struct Walker {
    const std::vector<Index>& shape;
    const std::string& name;
    const std::string& what;
    void check(const json& a, std::size_t level, const std::string& path) const {
      if (level + 1 >= shape.size()) return;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const json& sub = a[i];
        const std::string sub_path = path + "[" + std::to_string(i) + "]";
        if (!sub.is_array() || static_cast<Index>(sub.size()) != shape[level + 1]) {
          if (!sub.is_array()) {
            throw parse_error(sub_path + " must be an array, got " + describe(sub) + " (" + name +
                              " is " + what + ")");
          }
          throw parse_error(sub_path + " has " + std::to_string(sub.size()) + " values, expected " +
                            std::to_string(shape[level + 1]) + " like " + path + "[0]" +
                            " (arrays must be rectangular)");
        }
        check(sub, level + 1, sub_path);
      }
    }
  };
  Walker{shape, name, what}.check(v, 0, name);
  return shape;
}

/// A JSON number as a finite float32. `path` is built only on error.
template <class PathFn>
float to_float(const json& v, PathFn path) {
  if (!v.is_number()) {
    throw parse_error(path() + " must be a number, got " + describe(v));
  }
  const double x = v.get<double>();
  if (!std::isfinite(x)) {
    throw value_error(path() + " is " + number_text(x) + "; every number must be finite");
  }
  const float f = static_cast<float>(x);
  if (!std::isfinite(f)) {
    throw value_error(path() + " = " + number_text(x) +
                      " does not fit float32 (largest magnitude 3.40282347e+38)");
  }
  return f;
}

RowMatrixXf to_matrix(const json& v, const std::string& name, const std::string& what,
                      Index max_rows, const char* rows_limit, Index max_cols,
                      const char* cols_limit) {
  const auto shape = array_shape(v, name, what, {max_rows, max_cols}, {rows_limit, cols_limit});
  RowMatrixXf out(shape[0], shape[1]);
  for (Index r = 0; r < shape[0]; ++r) {
    const json& row = v[static_cast<std::size_t>(r)];
    for (Index c = 0; c < shape[1]; ++c) {
      out(r, c) = to_float(row[static_cast<std::size_t>(c)], [&] {
        return index_path(name, {static_cast<std::size_t>(r), static_cast<std::size_t>(c)});
      });
    }
  }
  return out;
}

VectorXf to_vector(const json& v, const std::string& name, const std::string& what, Index max_size,
                   const char* size_limit) {
  const auto shape = array_shape(v, name, what, {max_size}, {size_limit});
  VectorXf out(shape[0]);
  for (Index i = 0; i < shape[0]; ++i) {
    out(i) = to_float(v[static_cast<std::size_t>(i)],
                      [&] { return index_path(name, {static_cast<std::size_t>(i)}); });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Request keys

/// The keys `mha forward` reads (request_schema.hpp), sorted as its messages list them.
const std::set<std::string>& known_keys() {
  static const std::set<std::string> keys = request_keys_sorted(RequestFront::json);
  return keys;
}

std::string known_keys_text() {
  std::string s;
  for (const auto& k : known_keys()) s += (s.empty() ? "" : ", ") + k;
  return s;
}

/// The value of an optional key, or nullptr when absent or null.
const json* find_key(const json& request, const char* key) {
  const auto it = request.find(key);
  if (it == request.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& require_key(const json& request, const char* key, const char* what) {
  const json* v = find_key(request, key);
  if (v == nullptr) {
    throw parse_error(std::string("missing key \"") + key + "\" (" + what + ")");
  }
  return *v;
}

/// An integer-valued key (JSON integer literal; 2.0 is rejected).
Index to_index(const json& v, const char* key) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) {
      throw limit_error(std::string(key) + "=" + v.dump() + " is far beyond any limit");
    }
    return static_cast<Index>(u);
  }
  if (v.is_number_integer()) return static_cast<Index>(v.get<std::int64_t>());
  throw parse_error(std::string(key) + " must be an integer, got " + describe(v));
}

bool to_bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) throw parse_error(path + " must be true or false, got " + describe(v));
  return v.get<bool>();
}

// ---------------------------------------------------------------------------------------------
// Masks

bool equals_ignore_case(const std::string& a, const char* b) {
  std::size_t i = 0;
  for (; i < a.size() && b[i] != '\0'; ++i) {
    const char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (x != b[i]) return false;
  }
  return i == a.size() && b[i] == '\0';
}

/// One entry of an additive (float) mask named `mask` (attn_mask, key_padding_mask): a finite
/// number, -inf as a number (only possible for JSON built in-process), or the string "-inf" /
/// "-Infinity".
template <class PathFn>
float additive_mask_entry(const json& v, PathFn path, const std::string& mask) {
  constexpr float neg_inf = -std::numeric_limits<float>::infinity();
  if (v.is_number()) {
    const double x = v.get<double>();
    if (x == -std::numeric_limits<double>::infinity()) return neg_inf;
    if (std::isnan(x) || std::isinf(x)) {
      throw value_error(path() + " is " + number_text(x) +
                        "; a float " + mask + " may hold finite numbers or -inf, never +inf or NaN");
    }
    const float f = static_cast<float>(x);
    if (!std::isfinite(f)) {
      throw value_error(path() + " = " + number_text(x) +
                        " does not fit float32; write \"-inf\" to mask a position");
    }
    return f;
  }
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "-inf" || s == "-Infinity") return neg_inf;
    for (const char* bad : {"inf", "+inf", "infinity", "+infinity", "nan", "+nan", "-nan"}) {
      if (equals_ignore_case(s, bad)) {
        throw value_error(path() + " is \"" + s +
                          "\"; a float " + mask + " may hold finite numbers or \"-inf\", never "
                          "+inf or NaN");
      }
    }
    throw parse_error(path() + " is " + describe(v) +
                      "; the only string allowed in a float " + mask + " is \"-inf\"");
  }
  if (v.is_boolean()) {
    throw parse_error(path() + " is " + describe(v) +
                      " but the first entry is a number: " + mask + " holds only booleans or only "
                      "numbers");
  }
  throw parse_error(path() + " must be a number or \"-inf\", got " + describe(v));
}

void parse_attn_mask(const json& v, Index h, Index n, Index m, AttentionMasks& masks) {
  const std::string what = "(n, m) = (" + std::to_string(n) + ", " + std::to_string(m) +
                           ") or (num_heads, n, m) = (" + std::to_string(h) + ", " +
                           std::to_string(n) + ", " + std::to_string(m) + ")";
  // Rank: 3 when attn_mask[0][0] is itself an array.
  std::size_t rank = 2;
  if (v.is_array() && !v.empty() && v[0].is_array() && !v[0].empty() && v[0][0].is_array()) {
    rank = 3;
  }
  const auto shape =
      rank == 2 ? array_shape(v, "attn_mask", what, {limits::max_tokens, limits::max_tokens},
                              {"max_tokens", "max_tokens"})
                : array_shape(v, "attn_mask", what,
                              {limits::max_num_heads, limits::max_tokens, limits::max_tokens},
                              {"max_num_heads", "max_tokens", "max_tokens"});
  const Index heads = rank == 2 ? 1 : shape[0];
  const Index rows = shape[rank - 2];
  const Index cols = shape[rank - 1];
  if ((heads != 1 && heads != h) || rows != n || cols != m) {
    throw shape_error("attn_mask is " + shape_text(shape) + ", expected " + what +
                      (rank == 3 ? " or (1, n, m)" : ""));
  }
  const json& first = rank == 2 ? v[0][0] : v[0][0][0];
  const bool boolean = first.is_boolean();
  masks.attn_mask_kind = boolean ? AttentionMasks::Kind::boolean : AttentionMasks::Kind::additive;
  masks.attn_mask = HeadStack(heads, n, m);
  for (Index hh = 0; hh < heads; ++hh) {
    const json& head = rank == 2 ? v : v[static_cast<std::size_t>(hh)];
    for (Index i = 0; i < n; ++i) {
      const json& row = head[static_cast<std::size_t>(i)];
      for (Index j = 0; j < m; ++j) {
        const json& e = row[static_cast<std::size_t>(j)];
        auto path = [&] {
          const auto si = static_cast<std::size_t>(i), sj = static_cast<std::size_t>(j);
          return rank == 2 ? index_path("attn_mask", {si, sj})
                           : index_path("attn_mask", {static_cast<std::size_t>(hh), si, sj});
        };
        if (boolean) {
          if (!e.is_boolean()) {
            throw parse_error(path() + " is " + describe(e) +
                              " but the first entry is a boolean: attn_mask holds only booleans "
                              "or only numbers");
          }
          masks.attn_mask(hh, i, j) = e.get<bool>() ? 1.0f : 0.0f;
        } else {
          masks.attn_mask(hh, i, j) = additive_mask_entry(e, path, "attn_mask");
        }
      }
    }
  }
}

void parse_key_padding_mask(const json& v, Index m, AttentionMasks& masks) {
  const auto shape = array_shape(v, "key_padding_mask", "(m,) booleans or numbers",
                                 {limits::max_tokens}, {"max_tokens"});
  if (shape[0] != m) {
    throw shape_error("key_padding_mask has " + std::to_string(shape[0]) +
                      " values, expected one per key token, m = " + std::to_string(m));
  }
  // The first entry decides the form, as for attn_mask: booleans (true = ignore the key) or
  // numbers (added to the scores, as nn.MultiheadAttention adds a float key_padding_mask).
  const auto count = static_cast<std::size_t>(m);
  if (v[0].is_boolean()) {
    masks.key_padding_mask.resize(count);
    for (std::size_t j = 0; j < count; ++j) {
      if (!v[j].is_boolean()) {
        throw parse_error(index_path("key_padding_mask", {j}) + " is " + describe(v[j]) +
                          " but the first entry is a boolean: key_padding_mask holds only "
                          "booleans or only numbers");
      }
      masks.key_padding_mask[j] = v[j].get<bool>() ? 1 : 0;
    }
  } else {
    masks.key_padding_mask_kind = AttentionMasks::Kind::additive;
    masks.key_padding_mask.resize(count);
    for (std::size_t j = 0; j < count; ++j) {
      masks.key_padding_mask[j] = additive_mask_entry(
          v[j], [&] { return index_path("key_padding_mask", {j}); }, "key_padding_mask");
    }
  }
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Parsing

json parse_json_text(std::string_view text) { return parse_json_strict(text, "the request"); }

Index ForwardRequest::parameter_count() const {
  return mha::parameter_count(config, false) + weights.in_proj_bias.size() +
         weights.out_proj_bias.size();
}

ForwardRequest parse_forward_request(const json& request) {
  if (!request.is_object()) {
    throw parse_error("the request must be a JSON object, got " + describe(request));
  }
  for (const auto& item : request.items()) {
    if (known_keys().count(item.key()) == 0) {
      throw parse_error("unknown key \"" + item.key() +
                        "\" in the request (known keys: " + known_keys_text() + ")");
    }
  }

  ForwardRequest req;
  AttentionConfig& config = req.config;
  config.num_heads = to_index(require_key(request, "num_heads", "a positive integer"), "num_heads");
  if (config.num_heads <= 0) {
    throw config_error("num_heads=" + std::to_string(config.num_heads) +
                       " must be a positive integer");
  }
  if (config.num_heads > limits::max_num_heads) {
    throw limit_error("num_heads=" + std::to_string(config.num_heads) + " exceeds the limit of " +
                      std::to_string(limits::max_num_heads));
  }
  const Index h = config.num_heads;

  // Inputs: query (n, d); key (m, kdim) and value (m, vdim) together or not at all.
  req.query = to_matrix(require_key(request, "query", "(n, d_model) nested arrays of numbers"),
                        "query", "(n, d_model)", limits::max_tokens, "max_tokens",
                        limits::max_d_model, "max_d_model");
  const Index n = req.query.rows();
  const Index d = req.query.cols();
  config.d_model = d;
  const json* key = find_key(request, "key");
  const json* value = find_key(request, "value");
  if ((key == nullptr) != (value == nullptr)) {
    throw parse_error(
        std::string(key ? "\"key\" given without \"value\"" : "\"value\" given without \"key\"") +
        ": give both, or neither (then both are the query)");
  }
  Index m = n;
  if (key != nullptr) {
    req.key = to_matrix(*key, "key", "(m, kdim)", limits::max_tokens, "max_tokens",
                        limits::max_d_model, "max_d_model");
    req.value = to_matrix(*value, "value", "(m, vdim)", limits::max_tokens, "max_tokens",
                          limits::max_d_model, "max_d_model");
    m = req.key.rows();
    if (req.value.rows() != m) {
      throw shape_error("key has m=" + std::to_string(m) + " rows but value has " +
                        std::to_string(req.value.rows()) + "; they must match");
    }
    config.kdim = req.key.cols();
    config.vdim = req.value.cols();
  }
  for (const auto& [name, actual] :
       {std::pair{"kdim", config.key_dim()}, std::pair{"vdim", config.value_dim()}}) {
    if (const json* given = find_key(request, name)) {
      const Index want = to_index(*given, name);
      if (want != actual) {
        throw shape_error(std::string(name) + "=" + std::to_string(want) + " but " +
                          (key ? (std::string(name) == "kdim" ? "key" : "value") : "query") +
                          " has " + std::to_string(actual) + " columns");
      }
    }
  }
  config.validate();  // d % h, d/kdim/vdim limits
  if (h * n * m > limits::max_weight_entries) {
    throw limit_error("num_heads * n * m = " + std::to_string(h) + " * " + std::to_string(n) +
                      " * " + std::to_string(m) + " attention weights exceed the limit of " +
                      std::to_string(limits::max_weight_entries));
  }

  // Weights: in_proj_weight, or q/k/v_proj_weight.
  const json* in_proj = find_key(request, "in_proj_weight");
  const json* separate[3] = {find_key(request, "q_proj_weight"), find_key(request, "k_proj_weight"),
                             find_key(request, "v_proj_weight")};
  const char* separate_names[3] = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
  const bool any_separate = separate[0] || separate[1] || separate[2];
  if (in_proj != nullptr && any_separate) {
    throw parse_error(
        "give either in_proj_weight or q_proj_weight, k_proj_weight and v_proj_weight, not both");
  }
  if (in_proj == nullptr && !any_separate) {
    throw parse_error(
        "missing key \"in_proj_weight\" ((3*d_model, d_model)), or give q_proj_weight, "
        "k_proj_weight and v_proj_weight");
  }
  if (any_separate) {
    for (int i = 0; i < 3; ++i) {
      if (separate[i] == nullptr) {
        throw parse_error(std::string("missing key \"") + separate_names[i] +
                          "\": q_proj_weight, k_proj_weight and v_proj_weight go together");
      }
    }
  }
  VectorXf in_bias;
  if (const json* b = find_key(request, "in_proj_bias")) {
    in_bias = to_vector(*b, "in_proj_bias", "(3*d_model,)", 3 * limits::max_d_model,
                        "max_d_model (times 3)");
  }
  RowMatrixXf out_w = to_matrix(require_key(request, "out_proj_weight", "(d_model, d_model)"),
                                "out_proj_weight", "(d_model, d_model)", limits::max_d_model,
                                "max_d_model", limits::max_d_model, "max_d_model");
  VectorXf out_bias;
  if (const json* b = find_key(request, "out_proj_bias")) {
    out_bias = to_vector(*b, "out_proj_bias", "(d_model,)", limits::max_d_model, "max_d_model");
  }
  if (in_proj != nullptr) {
    RowMatrixXf w =
        to_matrix(*in_proj, "in_proj_weight", "(3*d_model, d_model)", 3 * limits::max_d_model,
                  "max_d_model (times 3)", limits::max_d_model, "max_d_model");
    req.weights = AttentionWeights::fused(std::move(w), std::move(in_bias), std::move(out_w),
                                          std::move(out_bias));
  } else {
    RowMatrixXf wq =
        to_matrix(*separate[0], "q_proj_weight", "(d_model, d_model)", limits::max_d_model,
                  "max_d_model", limits::max_d_model, "max_d_model");
    RowMatrixXf wk =
        to_matrix(*separate[1], "k_proj_weight", "(d_model, kdim)", limits::max_d_model,
                  "max_d_model", limits::max_d_model, "max_d_model");
    RowMatrixXf wv =
        to_matrix(*separate[2], "v_proj_weight", "(d_model, vdim)", limits::max_d_model,
                  "max_d_model", limits::max_d_model, "max_d_model");
    req.weights =
        AttentionWeights::separate(std::move(wq), std::move(wk), std::move(wv), std::move(in_bias),
                                   std::move(out_w), std::move(out_bias));
  }

  // Masks.
  if (const json* mask = find_key(request, "attn_mask")) {
    parse_attn_mask(*mask, h, n, m, req.masks);
  }
  if (const json* kpm = find_key(request, "key_padding_mask")) {
    parse_key_padding_mask(*kpm, m, req.masks);
  }
  if (const json* causal = find_key(request, "is_causal")) {
    req.masks.is_causal = to_bool(*causal, "is_causal");
  }

  // The core's own checks (weight shapes against the config, finiteness, masks).
  const MatrixRef q = req.query;
  validate_forward_inputs(config, req.weights, q, req.self_attention() ? q : MatrixRef(req.key),
                          req.self_attention() ? q : MatrixRef(req.value), req.masks);
  return req;
}

AttentionResult run_forward(const ForwardRequest& request, const ForwardOptions& options) {
  if (request.self_attention()) {
    // The same matrix three times: the core fuses the q/k/v projections into one product.
    return multi_head_attention_forward(request.config, request.weights, request.query,
                                        request.query, request.query, request.masks, options);
  }
  return multi_head_attention_forward(request.config, request.weights, request.query, request.key,
                                      request.value, request.masks, options);
}

}  // namespace mha
