// What the models' file loaders share (the date model, docs/date-model-format.md; the English
// model, docs/english-lm-format.md): a safetensors file whose __metadata__ names its format and
// version and holds an XXH64 checksum ("xxh64") and a JSON config, and whose tensors are F16. The
// date model's checksum covers the data section; the English model's covers the data section,
// the tensor entries and every other metadata value (safetensors_content_xxh64).
//
// Shape legend: d = d_model, F = dim_feedforward, h = num_heads.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "mha/attention.hpp"
#include "mha/safetensors.hpp"
#include "mha/transformer.hpp"

namespace mha {

/// What a model file's "xxh64" covers.
enum class ChecksumScope {
  data_section,  ///< the data section alone (the date model)
  content,       ///< safetensors_content_xxh64 with "xxh64" left out (the English model)
};

/// A model file whose container, format, version and checksum have been checked.
struct ModelFile {
  Safetensors file;
  std::string checksum;  ///< the verified "xxh64", 16 lowercase hex digits
};

/// Parses `bytes` as safetensors (Safetensors::parse) and checks, in order: that __metadata__
/// exists (`metadata_keys` lists the keys the format needs, for the message), its "format" equals
/// `format_name`, its "format_version" equals `format_version`, and its "xxh64" equals the XXH64
/// (seed 0) of what `scope` names.
/// Throws parse_error: as Safetensors::parse; "missing metadata: ..."; "wrong format \"x\":
/// expected \"y\""; "unsupported format_version \"2\": this build reads version 1"; "checksum
/// mismatch: the metadata says xxh64 <a>, the data section hashes to <b>" (data_section) or
/// "checksum mismatch: the metadata says xxh64 <a>, the file's data, tensor entries and metadata
/// hash to <b>" (content).
ModelFile open_model_file(std::vector<std::uint8_t> bytes, const char* format_name,
                          const char* format_version, const char* metadata_keys,
                          ChecksumScope scope = ChecksumScope::data_section);

/// The metadata string `key` parsed as strict JSON (duplicate keys, NaN refused).
/// Throws parse_error naming the key.
nlohmann::json metadata_json(const Safetensors& file, const std::string& key);

/// Readers of one config field (a JSON object). Each throws parse_error "config has no \"key\""
/// when it is absent.
namespace config_fields {
/// An integer (a JSON integer, or a float with no fraction) in [min, max].
/// Throws parse_error (not an integer), config_error (below min), limit_error (above max).
Index integer(const nlohmann::json& config, const char* key, Index min, Index max);
/// true or false; throws parse_error for any other JSON value.
bool boolean(const nlohmann::json& config, const char* key);
/// A finite number > 0; throws parse_error otherwise.
double positive_number(const nlohmann::json& config, const char* key);
}  // namespace config_fields

/// The F16 tensors of a model file, each checked for presence, dtype F16, shape and finiteness
/// before it is widened to float.
/// Every function throws parse_error ("missing tensor \"name\"", "\"name\" has dtype F32,
/// expected F16"), shape_error ("name has shape (3, 4), expected (4, 4)") and value_error (a
/// non-finite weight).
class F16Weights {
 public:
  explicit F16Weights(const Safetensors& file) : file_(file) {}

  RowMatrixXf matrix(const std::string& name, Index rows, Index cols) const;
  VectorXf vector(const std::string& name, Index length) const;
  /// prefix.weight (d), prefix.bias (d).
  LayerNorm norm(const std::string& prefix, Index d, double eps) const;
  /// prefix.linear1.weight (F, d), .linear1.bias (F), .linear2.weight (d, F), .linear2.bias (d).
  FeedForward ff(const std::string& prefix, Index d, Index f) const;
  /// nn.MultiheadAttention's fused weights: prefix.in_proj_weight (3d, d), .in_proj_bias (3d),
  /// .out_proj.weight (d, d), .out_proj.bias (d). Throws config_error as MultiheadAttention too.
  MultiheadAttention attention(const std::string& prefix, const AttentionConfig& config) const;

 private:
  void check_dtype(const std::string& name) const;
  const Safetensors& file_;
};

}  // namespace mha
