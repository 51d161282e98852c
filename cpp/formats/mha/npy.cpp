// .npy and safetensors tensors: attention weights and nn.MultiheadAttention state_dicts (npy.hpp).
#include "mha/npy.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "mha/detail/half.hpp"
#include "mha/weights_check.hpp"

namespace mha {
namespace {

std::string dims_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

enum class Encoding { f16, bf16, f32, f64 };

std::size_t width(Encoding e) {
  switch (e) {
    case Encoding::f16:
    case Encoding::bf16:
      return 2;
    case Encoding::f32:
      return 4;
    case Encoding::f64:
      return 8;
  }
  return 0;
}

/// Product of `shape`, or limit_error when it (or a dimension) exceeds max_weight_entries.
std::size_t element_count(const std::vector<std::int64_t>& shape, const std::string& what) {
  constexpr std::int64_t limit = limits::max_weight_entries;
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim > limit || (dim > 0 && count > limit / dim)) {
      throw limit_error(what + " has shape " + dims_str(shape) + ", more than the limit of " +
                        std::to_string(limit) + " values");
    }
    count *= dim;
  }
  return static_cast<std::size_t>(count);
}

/// Little-endian values of `count` elements at p, widened to float; every value finite and within
/// float32's range.
std::vector<float> decode(const std::uint8_t* p, std::size_t count, Encoding e,
                          const std::string& what) {
  std::vector<float> out(count);
  const std::size_t w = width(e);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = 0;
    for (std::size_t b = w; b-- > 0;) bits = (bits << 8) | p[i * w + b];
    double x = 0.0;
    switch (e) {
      case Encoding::f16:
        x = detail::half_bits_to_float(static_cast<std::uint16_t>(bits));
        break;
      case Encoding::bf16: {
        const auto wide = static_cast<std::uint32_t>(bits << 16);
        float f;
        std::memcpy(&f, &wide, sizeof f);
        x = f;
        break;
      }
      case Encoding::f32: {
        const auto narrow = static_cast<std::uint32_t>(bits);
        float f;
        std::memcpy(&f, &narrow, sizeof f);
        x = f;
        break;
      }
      case Encoding::f64:
        std::memcpy(&x, &bits, sizeof x);
        break;
    }
    if (!std::isfinite(x)) {
      throw value_error(what + ": value at flat index " + std::to_string(i) + " is " +
                        (std::isnan(x) ? "NaN"
                         : x > 0       ? "+inf"
                                       : "-inf") +
                        "; every value must be finite");
    }
    if (std::abs(x) > double(std::numeric_limits<float>::max())) {
      throw value_error(what + ": value at flat index " + std::to_string(i) + " (" +
                        std::to_string(x) + ") does not fit float32, the core's precision");
    }
    out[i] = static_cast<float>(x);
  }
  return out;
}

// ----------------------------------------------------------------------------------------------
// The .npy header: a Python dict literal with the keys descr, fortran_order and shape.

struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::int64_t>> shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string what) : s_(text), what_(std::move(what)) {}

  NpyHeader parse() {
    NpyHeader h;
    std::set<std::string> seen;
    skip_ws();
    expect('{', "the header to start with '{' (a dict literal)");
    skip_ws();
    while (peek() != '}') {
      const std::string key = string_literal("a quoted key");
      if (!seen.insert(key).second) fail("duplicate key " + quoted(key));
      skip_ws();
      expect(':', "':' after the key " + quoted(key));
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') fail("structured dtypes (a list in 'descr') are not supported");
        h.descr = string_literal("a quoted dtype string for 'descr'");
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        fail("unknown key " + quoted(key) +
             " (a .npy header holds 'descr', 'fortran_order' and "
             "'shape')");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        fail("expected ',' or '}'");
      }
    }
    ++pos_;  // '}'
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
    if (pos_ != s_.size()) fail("unexpected text after the dict");
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      if (!seen.count(key)) throw parse_error(what_ + ": the header lacks the key " + quoted(key));
    }
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw parse_error(what_ + ": the .npy header is not what numpy.save writes: " + why +
                      " at character " + std::to_string(pos_));
  }
  char peek() const {
    if (pos_ >= s_.size()) fail("the header ends early");
    return s_[pos_];
  }
  void expect(char c, const std::string& meaning) {
    if (peek() != c) fail("expected " + meaning);
    ++pos_;
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n')) ++pos_;
  }
  std::string string_literal(const std::string& meaning) {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected " + meaning);
    const std::size_t start = ++pos_;
    while (peek() != q) {
      if (s_[pos_] == '\\') fail("escape sequences are not supported in header strings");
      ++pos_;
    }
    const std::string out(s_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }
  bool boolean() {
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::size_t len = std::strlen(word);
      if (s_.substr(pos_, len) == word) {
        pos_ += len;
        return value;
      }
    }
    fail("expected True or False for 'fortran_order'");
  }
  std::vector<std::int64_t> tuple() {
    expect('(', "a tuple of integers for 'shape', e.g. (2, 5, 5)");
    std::vector<std::int64_t> dims;
    bool trailing_comma = false;
    skip_ws();
    while (peek() != ')') {
      if (peek() < '0' || peek() > '9') fail("expected a non-negative integer in 'shape'");
      std::int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
          throw limit_error(what_ + ": a dimension of 'shape' is too large");
        }
        v = v * 10 + (s_[pos_++] - '0');
      }
      dims.push_back(v);
      if (dims.size() > 32) fail("more than 32 dimensions in 'shape'");
      skip_ws();
      trailing_comma = false;
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
        skip_ws();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in 'shape'");
      }
    }
    if (dims.size() == 1 && !trailing_comma) fail("a 1-element shape is written (n,), not (n)");
    ++pos_;
    return dims;
  }

  std::string_view s_;
  std::string what_;
  std::size_t pos_ = 0;
};

Encoding npy_encoding(const std::string& descr, const std::string& what) {
  if (descr == "<f4") return Encoding::f32;
  if (descr == "<f8") return Encoding::f64;
  if (descr == "<f2") return Encoding::f16;
  const std::string d = quoted(descr);
  if (descr.find('O') != std::string::npos) {
    throw parse_error(what + ": dtype " + d +
                      " holds Python objects (a pickle), which are never loaded; save a float "
                      "array");
  }
  if (descr.size() >= 2 && descr[0] == '>') {
    throw parse_error(what + ": dtype " + d + " is big-endian; save arr.astype('<f4')");
  }
  if (descr.size() >= 2 && (descr[1] == 'f') && (descr[0] == '=' || descr[0] == '|')) {
    throw parse_error(what + ": dtype " + d +
                      " does not state its byte order; save "
                      "arr.astype('<f4')");
  }
  if (descr.size() >= 2 && descr[1] != 'f') {
    throw parse_error(what + ": dtype " + d +
                      " is not a float type; expected '<f4', '<f8' or '<f2'");
  }
  throw parse_error(what + ": dtype " + d + " is not supported; expected '<f4', '<f8' or '<f2'");
}

}  // namespace

std::string FloatTensor::shape_str() const { return dims_str(shape); }

FloatTensor read_npy(const std::uint8_t* data, std::size_t size, const std::string& what) {
  static const char magic[] = "\x93NUMPY";
  if (size < 8 || std::memcmp(data, magic, 6) != 0) {
    throw parse_error(what + ": not a .npy file (it does not start with \\x93NUMPY; " +
                      std::to_string(size) + " bytes)");
  }
  const int major = data[6], minor = data[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0)) {
    throw parse_error(what + ": unsupported .npy format version " + std::to_string(major) + "." +
                      std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (size < 8 + len_bytes) {
    throw parse_error(what + ": truncated .npy file: it ends inside the header length (" +
                      std::to_string(size) + " bytes)");
  }
  std::size_t header_len = 0;
  for (std::size_t b = len_bytes; b-- > 0;) header_len = (header_len << 8) | data[8 + b];
  const std::size_t preamble = 8 + len_bytes;
  if (header_len > max_npy_header_bytes) {
    throw parse_error(what + ": the .npy header length " + std::to_string(header_len) +
                      " is above the limit of " + std::to_string(max_npy_header_bytes) + " bytes");
  }
  if (header_len > size - preamble) {
    throw parse_error(what + ": truncated .npy file: the header length says " +
                      std::to_string(header_len) + " bytes, the file has " +
                      std::to_string(size - preamble) + " after the preamble");
  }
  const std::string_view header(reinterpret_cast<const char*>(data) + preamble, header_len);
  for (const char c : header) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || (u >= 0x80 && major < 3)) {
      throw parse_error(what + ": the .npy header holds a byte " + std::to_string(u) +
                        " that is not printable ASCII");
    }
  }
  const NpyHeader h = HeaderParser(header, what).parse();
  if (*h.fortran_order) {
    throw parse_error(what +
                      ": fortran_order is True (column-major data); save "
                      "np.ascontiguousarray(arr) instead");
  }
  const Encoding enc = npy_encoding(*h.descr, what);
  FloatTensor t;
  t.shape = *h.shape;
  t.dtype = *h.descr;
  const std::size_t count = element_count(t.shape, what);
  const std::size_t need = count * width(enc);
  const std::size_t have = size - preamble - header_len;
  if (have != need) {
    throw parse_error(what + ": the data is " + std::to_string(have) + " bytes, shape " +
                      t.shape_str() + " of " + *h.descr + " needs " + std::to_string(need) +
                      (have < need ? " (truncated file)" : " (trailing bytes)"));
  }
  t.data = decode(data + preamble + header_len, count, enc, what);
  return t;
}

FloatTensor safetensors_tensor(const Safetensors& file, const std::string& name) {
  if (!file.contains(name)) {
    std::string names;
    for (const auto& [key, info] : file.tensors()) names += (names.empty() ? "" : ", ") + key;
    throw parse_error("the safetensors file has no tensor \"" + name +
                      "\" (it holds: " + (names.empty() ? std::string("nothing") : names) + ")");
  }
  const SafetensorInfo& info = file.info(name);
  const std::string what = "tensor \"" + name + "\"";
  Encoding enc;
  if (info.dtype == "F32") {
    enc = Encoding::f32;
  } else if (info.dtype == "F64") {
    enc = Encoding::f64;
  } else if (info.dtype == "F16") {
    enc = Encoding::f16;
  } else if (info.dtype == "BF16") {
    enc = Encoding::bf16;
  } else {
    throw parse_error(what + " has dtype " + info.dtype + ", expected F32, F64, F16 or BF16");
  }
  FloatTensor t;
  t.shape = info.shape;
  t.dtype = info.dtype;
  const std::size_t count = element_count(t.shape, what);
  // Safetensors::parse checked that [begin, end) lies in the data section and matches the shape.
  t.data = decode(file.data_section() + info.begin, count, enc, what);
  return t;
}

FloatTensor safetensors_attention(const Safetensors& file, const std::string& name) {
  if (!name.empty()) return safetensors_tensor(file, name);
  if (file.tensors().size() != 1) {
    std::string names;
    for (const auto& [key, info] : file.tensors()) names += (names.empty() ? "" : ", ") + key;
    throw parse_error("the safetensors file holds " + std::to_string(file.tensors().size()) +
                      " tensors (" + (names.empty() ? std::string("none") : names) +
                      "); name the attention tensor");
  }
  return safetensors_tensor(file, file.tensors().begin()->first);
}

std::vector<HeadStack> attention_layers(const FloatTensor& t, const std::string& what) {
  std::vector<std::int64_t> s = t.shape;
  const auto bad = [&](const std::string& why) {
    return shape_error(what + " has shape " + t.shape_str() + "; " + why);
  };
  if (s.size() == 5) {
    if (s[1] != 1) throw bad("a 5-D tensor is read as (layers, batch, heads, n, m) with batch 1");
    s.erase(s.begin() + 1);
  }
  if (s.size() == 3) s.insert(s.begin(), 1);
  if (s.size() != 4) {
    throw bad("expected (heads, n, m), (layers, heads, n, m) or (layers, 1, heads, n, m)");
  }
  for (const auto dim : s) {
    if (dim < 1) throw bad("every dimension must be at least 1");
  }
  if (s[2] > limits::max_tokens || s[3] > limits::max_tokens || s[1] > limits::max_num_heads) {
    throw limit_error(what + " has shape " + t.shape_str() + ", beyond the limits of " +
                      std::to_string(limits::max_num_heads) + " heads and " +
                      std::to_string(limits::max_tokens) + " tokens");
  }
  const auto h = static_cast<Index>(s[1]), n = static_cast<Index>(s[2]),
             m = static_cast<Index>(s[3]);
  std::vector<HeadStack> layers;
  for (std::int64_t l = 0; l < s[0]; ++l) {
    HeadStack stack(h, n, m);
    std::memcpy(stack.data(),
                t.data.data() + static_cast<std::size_t>(l) * std::size_t(stack.size()),
                sizeof(float) * static_cast<std::size_t>(stack.size()));
    validate_attention_weights(stack, what + " layer " + std::to_string(l));
    layers.push_back(std::move(stack));
  }
  return layers;
}

RowMatrixXf tensor_matrix(const FloatTensor& t, const std::string& what) {
  std::vector<std::int64_t> s = t.shape;
  if (s.size() == 3 && s[0] == 1) s.erase(s.begin());
  if (s.size() != 2 || s[0] < 1 || s[1] < 1) {
    throw shape_error(what + " has shape " + t.shape_str() + "; expected (n, d) or (1, n, d)");
  }
  if (s[0] > limits::max_tokens || s[1] > limits::max_d_model) {
    throw limit_error(what + " has shape " + t.shape_str() + ", beyond the limits of " +
                      std::to_string(limits::max_tokens) + " tokens and d_model " +
                      std::to_string(limits::max_d_model));
  }
  return Eigen::Map<const RowMatrixXf>(t.data.data(), static_cast<Index>(s[0]),
                                       static_cast<Index>(s[1]));
}

MultiheadAttention load_multihead_attention(const Safetensors& file, Index num_heads,
                                            const std::string& prefix) {
  static const std::set<std::string> known = {"in_proj_weight", "q_proj_weight", "k_proj_weight",
                                              "v_proj_weight",  "in_proj_bias",  "out_proj.weight",
                                              "out_proj.bias"};
  std::string found;
  for (const auto& [name, info] : file.tensors()) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string local = name.substr(prefix.size());
    found += (found.empty() ? "" : ", ") + name;
    if (local == "bias_k" || local == "bias_v") {
      throw parse_error("\"" + name + "\": add_bias_kv=True is not supported by the mha core");
    }
    if (local.find('.') == std::string::npos || local.rfind("out_proj.", 0) == 0) {
      if (!known.count(local)) {
        throw parse_error("unknown tensor \"" + name +
                          "\" in an nn.MultiheadAttention state_dict (expected in_proj_weight, "
                          "q/k/v_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias)");
      }
    }
  }
  const auto name = [&](const char* local) { return prefix + local; };
  if (!file.contains(name("out_proj.weight"))) {
    throw parse_error("missing tensor \"" + name("out_proj.weight") + "\" (nn.MultiheadAttention " +
                      "weights under the prefix \"" + prefix +
                      "\"; found: " + (found.empty() ? std::string("nothing") : found) + ")");
  }
  const auto get = [&](const char* local) { return safetensors_tensor(file, name(local)); };
  const auto matrix = [&](const char* local) {
    return tensor_matrix(get(local), "\"" + name(local) + "\"");
  };
  const auto vector = [&](const char* local, Index length) -> VectorXf {
    if (!file.contains(name(local))) return {};
    const FloatTensor t = get(local);
    if (t.shape.size() != 1 || t.shape[0] != length) {
      throw shape_error("\"" + name(local) + "\" has shape " + t.shape_str() + ", expected (" +
                        std::to_string(length) + ")");
    }
    return Eigen::Map<const VectorXf>(t.data.data(), length);
  };

  if (num_heads == 0) {
    const auto it = file.metadata().find("num_heads");
    if (it == file.metadata().end()) {
      throw parse_error(
          "num_heads is not part of a state_dict: give it, or store it in the "
          "file's __metadata__ as \"num_heads\"");
    }
    const std::string& text = it->second;
    if (text.empty() || text.size() > 6 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
      throw parse_error("__metadata__ num_heads must be a positive integer, got \"" + text + "\"");
    }
    num_heads = static_cast<Index>(std::stol(text));
  }
  RowMatrixXf out_w = matrix("out_proj.weight");
  AttentionConfig c;
  c.d_model = out_w.rows();
  c.num_heads = num_heads;
  const Index d = c.d_model;
  VectorXf in_b = vector("in_proj_bias", 3 * d);
  VectorXf out_b = vector("out_proj.bias", d);
  if (file.contains(name("in_proj_weight"))) {
    for (const char* sep : {"q_proj_weight", "k_proj_weight", "v_proj_weight"}) {
      if (file.contains(name(sep))) {
        throw parse_error("both \"" + name("in_proj_weight") + "\" and \"" + name(sep) +
                          "\" are present: a state_dict holds one form");
      }
    }
    c.validate();
    return MultiheadAttention(c, AttentionWeights::fused(matrix("in_proj_weight"), std::move(in_b),
                                                         std::move(out_w), std::move(out_b)));
  }
  for (const char* sep : {"q_proj_weight", "k_proj_weight", "v_proj_weight"}) {
    if (!file.contains(name(sep))) {
      throw parse_error("missing tensor \"" + name("in_proj_weight") + "\" (or \"" + name(sep) +
                        "\" of the separate form); found: " + found);
    }
  }
  RowMatrixXf qw = matrix("q_proj_weight"), kw = matrix("k_proj_weight"),
              vw = matrix("v_proj_weight");
  c.kdim = kw.cols();
  c.vdim = vw.cols();
  c.validate();
  return MultiheadAttention(
      c, AttentionWeights::separate(std::move(qw), std::move(kw), std::move(vw), std::move(in_b),
                                    std::move(out_w), std::move(out_b)));
}

}  // namespace mha
