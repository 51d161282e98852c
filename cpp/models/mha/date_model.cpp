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

#include "mha/model_file.hpp"
#include "mha/utf8.hpp"

namespace mha {

namespace {

using json = nlohmann::json;
using config_fields::boolean;
using config_fields::integer;
using config_fields::positive_number;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

const json& field(const json& config, const char* key) {
  if (!config.contains(key)) throw parse_error(std::string("config has no ") + in_quotes(key));
  return config.at(key);
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Loading

DateModel DateModel::load(std::vector<std::uint8_t> bytes) {
  const ModelFile mf = open_model_file(std::move(bytes), format_name, format_version,
                                       "format, format_version, xxh64, config, vocab");
  const Safetensors& st = mf.file;
  const std::string& actual = mf.checksum;

  // Config.
  const std::string& config_text = st.metadata("config");
  const json cfg = metadata_json(st, "config");
  if (!cfg.is_object()) throw parse_error("metadata \"config\" must be a JSON object");
  Seq2SeqConfig c;
  c.d_model = integer(cfg, "d_model", 1, limits::max_d_model);
  c.num_heads = integer(cfg, "num_heads", 1, limits::max_num_heads);
  c.num_encoder_layers = integer(cfg, "num_encoder_layers", 1, 64);
  c.num_decoder_layers = integer(cfg, "num_decoder_layers", 1, 64);
  c.dim_feedforward = integer(cfg, "dim_feedforward", 1, 65536);
  const json& activation = field(cfg, "activation");
  if (!activation.is_string() || activation.get<std::string>() != "relu") {
    throw config_error("config activation " + activation.dump() + " is not supported (\"relu\")");
  }
  c.norm_first = boolean(cfg, "norm_first");
  c.layer_norm_eps = positive_number(cfg, "layer_norm_eps");
  const Index max_source_len = integer(cfg, "max_source_len", 1, limits::max_tokens);
  c.max_target_len = integer(cfg, "max_target_len", 1, limits::max_tokens - 1);
  c.max_source_len = max_source_len;
  c.embed_scale = static_cast<float>(positive_number(cfg, "embed_scale"));
  const bool tie = boolean(cfg, "tie_embeddings");
  c.final_norm = boolean(cfg, "final_norm");
  AttentionConfig ac;
  ac.d_model = c.d_model;
  ac.num_heads = c.num_heads;
  ac.validate();  // config_error "d_model=.. is not divisible by num_heads=.."

  // Vocabulary.
  const json vocab = metadata_json(st, "vocab");
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
  const F16Weights w(st);
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
    std::uint32_t cp = 0;
    const std::size_t n = utf8_decode(text, i, &cp);
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
