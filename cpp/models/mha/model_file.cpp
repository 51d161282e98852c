// Model files: metadata, checksum, config fields and F16 weights (model_file.hpp).
#include "mha/model_file.hpp"

#include <cmath>
#include <utility>

#include "mha/json_strict.hpp"

namespace mha {

namespace {

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

const nlohmann::json& field(const nlohmann::json& config, const char* key) {
  if (!config.contains(key)) throw parse_error(std::string("config has no ") + in_quotes(key));
  return config.at(key);
}

}  // namespace

ModelFile open_model_file(std::vector<std::uint8_t> bytes, const char* format_name,
                          const char* format_version, const char* metadata_keys,
                          ChecksumScope scope) {
  Safetensors st = Safetensors::parse(std::move(bytes));
  if (st.metadata().empty()) {
    throw parse_error(std::string("missing metadata: the file has no __metadata__ (") +
                      metadata_keys + ")");
  }
  const std::string& format = st.metadata("format");
  if (format != format_name) {
    throw parse_error("wrong format " + in_quotes(format) + ": expected " + in_quotes(format_name));
  }
  const std::string& version = st.metadata("format_version");
  if (version != format_version) {
    throw parse_error("unsupported format_version " + in_quotes(version) +
                      ": this build reads version " + format_version);
  }
  const std::string& expected = st.metadata("xxh64");
  const bool content = scope == ChecksumScope::content;
  std::string actual = content ? safetensors_content_xxh64(st, "xxh64")
                               : xxh64_hex(st.data_section(), st.data_section_size());
  if (expected != actual) {
    throw parse_error("checksum mismatch: the metadata says xxh64 " + expected +
                      (content ? ", the file's data, tensor entries and metadata hash to "
                               : ", the data section hashes to ") +
                      actual);
  }
  return ModelFile{std::move(st), std::move(actual)};
}

nlohmann::json metadata_json(const Safetensors& file, const std::string& key) {
  return parse_json_strict(file.metadata(key), "metadata " + in_quotes(key));
}

namespace config_fields {

Index integer(const nlohmann::json& config, const char* key, Index min, Index max) {
  const nlohmann::json& v = field(config, key);
  const bool integral =
      v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                v.get<double>() == std::floor(v.get<double>()));
  if (!integral) {
    throw parse_error(std::string("config ") + in_quotes(key) + " must be an integer, got " +
                      v.dump());
  }
  const double x = v.get<double>();
  if (x < static_cast<double>(min)) {
    throw config_error(std::string("config ") + key + "=" + v.dump() + " must be at least " +
                       std::to_string(min));
  }
  if (x > static_cast<double>(max)) {
    throw limit_error(std::string("config ") + key + "=" + v.dump() + " exceeds the limit of " +
                      std::to_string(max));
  }
  return static_cast<Index>(x);
}

bool boolean(const nlohmann::json& config, const char* key) {
  const nlohmann::json& v = field(config, key);
  if (!v.is_boolean()) {
    throw parse_error(std::string("config ") + in_quotes(key) + " must be true or false, got " +
                      v.dump());
  }
  return v.get<bool>();
}

double positive_number(const nlohmann::json& config, const char* key) {
  const nlohmann::json& v = field(config, key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0) {
    throw parse_error(std::string("config ") + in_quotes(key) + " must be a positive number, got " +
                      v.dump());
  }
  return v.get<double>();
}

}  // namespace config_fields

void F16Weights::check_dtype(const std::string& name) const {
  const SafetensorInfo& info = file_.info(name);  // parse_error "missing tensor ..."
  if (info.dtype != "F16") {
    throw parse_error(in_quotes(name) + " has dtype " + info.dtype + ", expected F16");
  }
}

RowMatrixXf F16Weights::matrix(const std::string& name, Index rows, Index cols) const {
  check_dtype(name);
  return file_.matrix(name, rows, cols);
}

VectorXf F16Weights::vector(const std::string& name, Index length) const {
  check_dtype(name);
  return file_.vector(name, length);
}

LayerNorm F16Weights::norm(const std::string& prefix, Index d, double eps) const {
  return LayerNorm{vector(prefix + ".weight", d), vector(prefix + ".bias", d), eps};
}

FeedForward F16Weights::ff(const std::string& prefix, Index d, Index f) const {
  return FeedForward{matrix(prefix + ".linear1.weight", f, d), vector(prefix + ".linear1.bias", f),
                     matrix(prefix + ".linear2.weight", d, f), vector(prefix + ".linear2.bias", d)};
}

MultiheadAttention F16Weights::attention(const std::string& prefix,
                                         const AttentionConfig& config) const {
  const Index d = config.d_model;
  return MultiheadAttention(config,
                            AttentionWeights::fused(matrix(prefix + ".in_proj_weight", 3 * d, d),
                                                    vector(prefix + ".in_proj_bias", 3 * d),
                                                    matrix(prefix + ".out_proj.weight", d, d),
                                                    vector(prefix + ".out_proj.bias", d)));
}

}  // namespace mha
