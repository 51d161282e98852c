// The date model: loading (docs/date-model-format.md) and translation.
// Shape legend: S = source characters, T = decoder steps, V = vocab, d = d_model, h = num_heads,
// L = layers, F = dim_feedforward.
#include "mha/date_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <utility>

#include "mha/json_strict.hpp"

namespace mha {

namespace {

using json = nlohmann::json;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

json parse_metadata_json(const std::string& key, const std::string& text) {
  return parse_json_strict(text, "metadata " + in_quotes(key));
}

const json& field(const json& config, const char* key) {
  if (!config.contains(key)) throw parse_error(std::string("config has no ") + in_quotes(key));
  return config.at(key);
}

Index int_field(const json& config, const char* key, Index min, Index max) {
  const json& v = field(config, key);
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

bool bool_field(const json& config, const char* key) {
  const json& v = field(config, key);
  if (!v.is_boolean()) {
    throw parse_error(std::string("config ") + in_quotes(key) + " must be true or false, got " +
                      v.dump());
  }
  return v.get<bool>();
}

double positive_number(const json& config, const char* key) {
  const json& v = field(config, key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0.0) {
    throw parse_error(std::string("config ") + in_quotes(key) + " must be a positive number, got " +
                      v.dump());
  }
  return v.get<double>();
}

/// The weights of the file, each checked for presence, dtype F16, shape and finiteness.
class Weights {
 public:
  explicit Weights(const Safetensors& st) : st_(st) {}

  RowMatrixXf matrix(const std::string& name, Index rows, Index cols) const {
    check_dtype(name);
    return st_.matrix(name, rows, cols);
  }
  VectorXf vector(const std::string& name, Index length) const {
    check_dtype(name);
    return st_.vector(name, length);
  }
  LayerNorm norm(const std::string& prefix, Index d, double eps) const {
    return LayerNorm{vector(prefix + ".weight", d), vector(prefix + ".bias", d), eps};
  }
  FeedForward ff(const std::string& prefix, Index d, Index f) const {
    return FeedForward{
        matrix(prefix + ".linear1.weight", f, d), vector(prefix + ".linear1.bias", f),
        matrix(prefix + ".linear2.weight", d, f), vector(prefix + ".linear2.bias", d)};
  }
  MultiheadAttention attention(const std::string& prefix, const AttentionConfig& c) const {
    const Index d = c.d_model;
    return MultiheadAttention(c,
                              AttentionWeights::fused(matrix(prefix + ".in_proj_weight", 3 * d, d),
                                                      vector(prefix + ".in_proj_bias", 3 * d),
                                                      matrix(prefix + ".out_proj.weight", d, d),
                                                      vector(prefix + ".out_proj.bias", d)));
  }

 private:
  void check_dtype(const std::string& name) const {
    const SafetensorInfo& info = st_.info(name);  // parse_error "missing tensor ..."
    if (info.dtype != "F16") {
      throw parse_error(in_quotes(name) + " has dtype " + info.dtype + ", expected F16");
    }
  }
  const Safetensors& st_;
};

/// Decodes one UTF-8 code point at s[i]; returns its byte length, or 0 for an invalid sequence.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1Fu;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0Fu;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  const std::uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Loading

DateModel DateModel::load(std::vector<std::uint8_t> bytes) {
  const Safetensors st = Safetensors::parse(std::move(bytes));
  if (st.metadata().empty()) {
    throw parse_error(
        "missing metadata: the file has no __metadata__ (format, format_version, "
        "xxh64, config, vocab)");
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
  const std::string actual = xxh64_hex(st.data_section(), st.data_section_size());
  if (expected != actual) {
    throw parse_error("checksum mismatch: the metadata says xxh64 " + expected +
                      ", the data section hashes to " + actual);
  }

  // Config.
  const std::string& config_text = st.metadata("config");
  const json cfg = parse_metadata_json("config", config_text);
  if (!cfg.is_object()) throw parse_error("metadata \"config\" must be a JSON object");
  Seq2SeqConfig c;
  c.d_model = int_field(cfg, "d_model", 1, limits::max_d_model);
  c.num_heads = int_field(cfg, "num_heads", 1, limits::max_num_heads);
  c.num_encoder_layers = int_field(cfg, "num_encoder_layers", 1, 64);
  c.num_decoder_layers = int_field(cfg, "num_decoder_layers", 1, 64);
  c.dim_feedforward = int_field(cfg, "dim_feedforward", 1, 65536);
  const json& activation = field(cfg, "activation");
  if (!activation.is_string() || activation.get<std::string>() != "relu") {
    throw config_error("config activation " + activation.dump() + " is not supported (\"relu\")");
  }
  c.norm_first = bool_field(cfg, "norm_first");
  c.layer_norm_eps = positive_number(cfg, "layer_norm_eps");
  const Index max_source_len = int_field(cfg, "max_source_len", 1, limits::max_tokens);
  c.max_target_len = int_field(cfg, "max_target_len", 1, limits::max_tokens - 1);
  c.max_source_len = max_source_len;
  c.embed_scale = static_cast<float>(positive_number(cfg, "embed_scale"));
  const bool tie = bool_field(cfg, "tie_embeddings");
  c.final_norm = bool_field(cfg, "final_norm");
  AttentionConfig ac;
  ac.d_model = c.d_model;
  ac.num_heads = c.num_heads;
  ac.validate();  // config_error "d_model=.. is not divisible by num_heads=.."

  // Vocabulary.
  const json vocab = parse_metadata_json("vocab", st.metadata("vocab"));
  if (!vocab.is_array() || vocab.size() < 4) {
    throw parse_error("metadata \"vocab\" must be a JSON array of at least 4 token strings");
  }
  std::vector<std::string> tokens;
  std::map<std::string, int> ids;
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    if (!vocab[i].is_string()) {
      throw parse_error("vocab[" + std::to_string(i) + "] must be a string, got " +
                        vocab[i].dump());
    }
    tokens.push_back(vocab[i].get<std::string>());
    if (!ids.emplace(tokens.back(), static_cast<int>(i)).second) {
      throw parse_error("vocab has " + in_quotes(tokens.back()) + " twice");
    }
  }
  const char* specials[] = {"<pad>", "<bos>", "<eos>", "<unk>"};
  for (int i = 0; i < 4; ++i) {
    if (tokens[static_cast<std::size_t>(i)] != specials[i]) {
      throw parse_error("vocab[" + std::to_string(i) + "] is " +
                        in_quotes(tokens[static_cast<std::size_t>(i)]) + ", expected " +
                        in_quotes(specials[i]));
    }
  }
  c.vocab_size = static_cast<Index>(tokens.size());

  // Tensors.
  const Weights w(st);
  const Index d = c.d_model, f = c.dim_feedforward, v = c.vocab_size;
  const double eps = c.layer_norm_eps;
  RowMatrixXf embedding = w.matrix("embedding.weight", v, d);
  std::vector<EncoderLayer> encoder;
  for (Index i = 0; i < c.num_encoder_layers; ++i) {
    const std::string p = "encoder.layers." + std::to_string(i);
    encoder.push_back(EncoderLayer{w.attention(p + ".self_attn", ac), w.ff(p, d, f),
                                   w.norm(p + ".norm1", d, eps), w.norm(p + ".norm2", d, eps)});
  }
  std::vector<DecoderLayer> decoder;
  for (Index i = 0; i < c.num_decoder_layers; ++i) {
    const std::string p = "decoder.layers." + std::to_string(i);
    decoder.push_back(DecoderLayer{
        w.attention(p + ".self_attn", ac), w.attention(p + ".multihead_attn", ac), w.ff(p, d, f),
        w.norm(p + ".norm1", d, eps), w.norm(p + ".norm2", d, eps), w.norm(p + ".norm3", d, eps)});
  }
  LayerNorm encoder_norm, decoder_norm;
  if (c.final_norm) {
    encoder_norm = w.norm("encoder.norm", d, eps);
    decoder_norm = w.norm("decoder.norm", d, eps);
  }
  RowMatrixXf generator = tie ? embedding : w.matrix("generator.weight", v, d);
  VectorXf generator_bias = w.vector("generator.bias", v);

  DateModel model(Seq2SeqTransformer(
      c, std::move(embedding), std::move(encoder), std::move(decoder), std::move(encoder_norm),
      std::move(decoder_norm), std::move(generator), std::move(generator_bias)));
  model.config_json_ = config_text;
  const auto training = st.metadata().find("training");
  if (training != st.metadata().end()) model.training_json_ = training->second;
  model.checksum_ = actual;
  model.vocab_ = std::move(tokens);
  model.ids_ = std::move(ids);
  model.max_source_len_ = max_source_len;
  return model;
}

// ------------------------------------------------------------------------------------------------
// Translation

std::vector<std::string> DateModel::characters(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      out.emplace_back("\xEF\xBF\xBD");  // U+FFFD for a byte that is not valid UTF-8
      i += 1;
    } else {
      out.push_back(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::vector<int> DateModel::source_ids(const std::string& text) const {
  const std::vector<std::string> chars = characters(text);
  if (chars.empty()) throw value_error("input is empty: the model needs at least one character");
  if (static_cast<Index>(chars.size()) > max_source_len_) {
    throw limit_error("input has " + std::to_string(chars.size()) +
                      " characters, the model reads at most " + std::to_string(max_source_len_));
  }
  std::vector<int> ids;
  ids.reserve(chars.size());
  for (const auto& ch : chars) {
    const auto it = ids_.find(ch);
    ids.push_back(it == ids_.end() ? unk_id : it->second);
  }
  return ids;
}

DateTranslation DateModel::translate(const std::string& text, const Ablation& ablation,
                                     bool keep_logits) const {
  const std::vector<int> ids = source_ids(text);
  DateTranslation t;
  t.input = text;
  t.source_tokens = characters(text);
  GreedyResult r = transformer_.greedy(ids, bos_id, eos_id, ablation, keep_logits);
  for (const int id : r.output_ids) {
    const std::string& token = vocab_[static_cast<std::size_t>(id)];
    t.output_tokens.push_back(token);
    if (id != eos_id) t.output += token;
  }
  t.produced_eos = r.produced_eos;
  t.trace = std::move(r.trace);
  return t;
}

bool DateModel::reproduces(const std::string& text, const std::string& target,
                           const Ablation& ablation, const RowMatrixXf& memory) const {
  const std::vector<std::string> chars = characters(target);
  const auto n = static_cast<Index>(chars.size());
  if (n > max_target_len()) return false;  // greedy output has at most max_target_len tokens
  std::vector<int> decoder_input{bos_id};
  for (const auto& ch : chars) {
    const auto it = ids_.find(ch);
    if (it == ids_.end() || it->second < 4) return false;  // not a character the model writes
    decoder_input.push_back(it->second);
  }
  const RowMatrixXf own_memory =
      memory.size() == 0 ? transformer_.encode(source_ids(text), ablation) : RowMatrixXf();
  const RowMatrixXf logits = transformer_.decode(memory.size() == 0 ? own_memory : memory,
                                                 decoder_input, ablation);  // (n + 1, V)
  for (Index t = 0; t <= n; ++t) {
    if (t == n && n == max_target_len()) break;  // the step after max_target_len is dropped
    Index best = 0;
    for (Index j = 1; j < logits.cols(); ++j) {
      if (logits(t, j) > logits(t, best)) best = j;
    }
    const int expected = t < n ? decoder_input[static_cast<std::size_t>(t + 1)] : eos_id;
    if (best != expected) return false;
  }
  return true;
}

}  // namespace mha
