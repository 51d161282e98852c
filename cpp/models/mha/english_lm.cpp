// The English language model: loading (docs/english-lm-format.md), tokens and the forward pass
// (english_lm.hpp). Shape legend: n = tokens, d = d_model, h = num_heads, F = dim_feedforward,
// V = vocab_size, L = num_layers.
#include "mha/english_lm.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <utility>

#include "mha/model_file.hpp"

namespace mha {

namespace {

using json = nlohmann::json;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

constexpr const char* config_keys[] = {"d_model",         "num_heads",     "num_layers",
                                       "dim_feedforward", "vocab_size",    "max_len",
                                       "layer_norm_eps",  "relative_bias", "shortformer_positions"};

/// An optional boolean config key: `fallback` when absent.
bool optional_boolean(const json& cfg, const char* key, bool fallback) {
  return cfg.contains(key) ? config_fields::boolean(cfg, key) : fallback;
}

EnglishLMConfig read_config(const json& cfg) {
  if (!cfg.is_object()) throw parse_error("metadata \"config\" must be a JSON object");
  for (const auto& item : cfg.items()) {
    const bool known = std::any_of(std::begin(config_keys), std::end(config_keys),
                                   [&](const char* k) { return item.key() == k; });
    if (!known) {
      throw parse_error("config has an unknown key " + in_quotes(item.key()) +
                        "; an English model's config has d_model, num_heads, num_layers, "
                        "dim_feedforward, vocab_size, max_len, layer_norm_eps, relative_bias, "
                        "shortformer_positions");
    }
  }
  using config_fields::integer;
  EnglishLMConfig c;
  c.d_model = integer(cfg, "d_model", 1, limits::max_d_model);
  c.num_heads = integer(cfg, "num_heads", 1, limits::max_num_heads);
  c.num_layers = integer(cfg, "num_layers", 1, 64);
  c.dim_feedforward = integer(cfg, "dim_feedforward", 0, 65536);
  c.vocab_size = integer(cfg, "vocab_size", 2, 1 << 20);
  c.max_len = integer(cfg, "max_len", 1, limits::max_tokens);
  c.layer_norm_eps = config_fields::positive_number(cfg, "layer_norm_eps");
  c.relative_bias = optional_boolean(cfg, "relative_bias", false);
  c.shortformer_positions = optional_boolean(cfg, "shortformer_positions", true);
  AttentionConfig ac;
  ac.d_model = c.d_model;
  ac.num_heads = c.num_heads;
  ac.validate();  // config_error "d_model=.. is not divisible by num_heads=.."
  check_weight_entries(c.num_heads, c.max_len, c.max_len);
  return c;
}

std::vector<std::string> read_vocab(const json& vocab, Index vocab_size) {
  if (!vocab.is_array()) throw parse_error("metadata \"vocab\" must be a JSON list of strings");
  if (static_cast<Index>(vocab.size()) != vocab_size) {
    throw parse_error("vocab has " + std::to_string(vocab.size()) +
                      " entries, config vocab_size is " + std::to_string(vocab_size));
  }
  std::vector<std::string> words;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    if (!vocab[i].is_string()) {
      throw parse_error("vocab[" + std::to_string(i) + "] must be a string, got " +
                        vocab[i].dump());
    }
    words.push_back(vocab[i].get<std::string>());
    if (!seen.insert(words.back()).second) {
      throw parse_error("vocab has " + in_quotes(words.back()) + " twice");
    }
  }
  const char* specials[] = {"<unk>", "<bos>"};
  for (std::size_t i = 0; i < 2; ++i) {
    if (words[i] != specials[i]) {
      throw parse_error("vocab[" + std::to_string(i) + "] is " + in_quotes(words[i]) +
                        ", expected " + in_quotes(specials[i]));
    }
  }
  return words;
}

/// The additive attn_mask of one layer with relative bias: M_h(i, j) = bias(h, i - j) for
/// j <= i, 0 above the diagonal (is_causal masks those). (h, n, n).
HeadStack relative_bias_mask(const RowMatrixXf& bias, Index n) {
  const Index h = bias.rows();
  HeadStack m(h, n, n, 0.0f);
  for (Index k = 0; k < h; ++k) {
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j <= i; ++j) m(k, i, j) = bias(k, i - j);
    }
  }
  return m;
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// Loading

EnglishLM EnglishLM::load(std::vector<std::uint8_t> bytes) {
  const ModelFile mf = open_model_file(std::move(bytes), format_name, format_version,
                                       "format, format_version, xxh64, config, vocab, tokenizer",
                                       ChecksumScope::content);
  const Safetensors& st = mf.file;
  EnglishLM model;
  model.config_ = read_config(metadata_json(st, "config"));
  const EnglishLMConfig& c = model.config_;
  model.vocab_ = read_vocab(metadata_json(st, "vocab"), c.vocab_size);
  model.tokenizer_.emplace(SubwordTokenizer::from_json(st.metadata("tokenizer")));
  const SubwordTokenizerSpec& tok = model.tokenizer_->spec();
  if (tok.pieces != model.vocab_) {
    throw parse_error("the tokenizer's " + std::to_string(tok.pieces.size()) +
                      " pieces are not the vocab's " + std::to_string(model.vocab_.size()) +
                      " entries in the same order");
  }
  if (tok.types[unk_id] != PieceType::unknown || tok.types[bos_id] != PieceType::control) {
    throw parse_error(
        "the tokenizer's pieces 0 and 1 must be <unk> of type unknown and <bos> of "
        "type control");
  }
  for (std::size_t id = 0; id < tok.types.size(); ++id) {
    if (tok.types[id] == PieceType::unknown || tok.types[id] == PieceType::control)
      model.never_predicted_.push_back(static_cast<int>(id));
  }

  const F16Weights w(st);
  const Index d = c.d_model, f = c.dim_feedforward, v = c.vocab_size;
  const double eps = c.layer_norm_eps;
  std::set<std::string> expected;  // every tensor the config calls for
  const auto name = [&](std::string n) {
    expected.insert(n);
    return n;
  };
  const auto norm = [&](const std::string& prefix) {
    name(prefix + ".weight");
    name(prefix + ".bias");
    return w.norm(prefix, d, eps);
  };
  AttentionConfig ac;
  ac.d_model = d;
  ac.num_heads = c.num_heads;
  model.embedding_ = w.matrix(name("embedding.weight"), v, d);
  for (Index l = 0; l < c.num_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    for (const char* t : {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}) {
      name(p + "self_attn." + t);
    }
    EnglishLMLayer layer{norm(p + "norm1"), w.attention(p + "self_attn", ac), RowMatrixXf(),
                         LayerNorm{}, FeedForward{}};
    if (c.relative_bias) {
      layer.relative_bias = w.matrix(name(p + "self_attn.relative_bias"), c.num_heads, c.max_len);
    }
    if (f > 0) {
      layer.norm2 = norm(p + "norm2");
      for (const char* t : {"linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"}) {
        name(p + t);
      }
      layer.ff = w.ff(p.substr(0, p.size() - 1), d, f);
    }
    model.layers_.push_back(std::move(layer));
  }
  model.norm_ = norm("norm");
  model.generator_bias_ = w.vector(name("generator.bias"), v);
  for (const auto& [tensor, info] : st.tensors()) {
    if (expected.count(tensor) == 0) {
      throw parse_error("unexpected tensor " + in_quotes(tensor) + ": the config (num_layers=" +
                        std::to_string(c.num_layers) + ", dim_feedforward=" + std::to_string(f) +
                        ", relative_bias=" + (c.relative_bias ? "true" : "false") +
                        ") does not call for it");
    }
  }
  model.positions_ = sinusoidal_positional_encoding(c.max_len, d);
  model.config_json_ = st.metadata("config");
  const auto training = st.metadata().find("training");
  if (training != st.metadata().end()) model.training_json_ = training->second;
  model.checksum_ = mf.checksum;
  return model;
}

// ------------------------------------------------------------------------------------------------
// Tokens and the forward pass

EnglishTokens EnglishLM::encode(const std::string& text) const {
  const SubwordEncoding e = tokenizer_->encode(text);
  const auto keep = std::min(e.ids.size(), static_cast<std::size_t>(config_.max_len - 1));
  EnglishTokens t;
  t.truncated_tokens = static_cast<Index>(e.ids.size() - keep);
  t.tokens.reserve(keep + 1);
  t.tokens.push_back(vocab_[bos_id]);
  t.ids.push_back(bos_id);
  t.word_index.push_back(0);
  t.words.push_back("<bos>");
  for (std::size_t i = 0; i < keep; ++i) {
    t.tokens.push_back(e.pieces[i]);
    t.ids.push_back(e.ids[i]);
    t.word_index.push_back(e.word_index[i] + 1);
  }
  // The words of the kept tokens: word indices rise from 0 with the tokens.
  const int last_word = keep > 0 ? e.word_index[keep - 1] : -1;
  for (int w = 0; w <= last_word; ++w) t.words.push_back(e.words[static_cast<std::size_t>(w)]);
  t.unknown.assign(t.ids.size(), false);
  return t;
}

RowMatrixXf EnglishLM::forward(const std::vector<int>& ids, const std::vector<LMHead>& ablated,
                               std::vector<HeadStack>* attn_weights) const {
  const auto n = static_cast<Index>(ids.size());
  const Index d = config_.d_model, h = config_.num_heads;
  if (n == 0) throw shape_error("forward needs at least one token id (<bos>)");
  if (n > config_.max_len) {
    throw shape_error(std::to_string(n) +
                      " token ids exceed the model's max_len=" + std::to_string(config_.max_len));
  }
  std::vector<ForwardOptions> options(layers_.size(), ForwardOptions(false));
  for (const LMHead& head : ablated) {
    if (head.layer < 0 || head.layer >= config_.num_layers || head.head < 0 || head.head >= h) {
      throw value_error("cannot ablate layer " + std::to_string(head.layer) + " head " +
                        std::to_string(head.head) + ": the model has " +
                        std::to_string(config_.num_layers) + " layers of " + std::to_string(h) +
                        " heads");
    }
    auto& off = options[static_cast<std::size_t>(head.layer)].ablated_heads;
    off.resize(static_cast<std::size_t>(h), 0);
    off[static_cast<std::size_t>(head.head)] = 1;
  }
  RowMatrixXf x(n, d);  // embedding[ids], no positions in the residual stream
  for (Index i = 0; i < n; ++i) {
    const int id = ids[static_cast<std::size_t>(i)];
    if (id < 0 || id >= config_.vocab_size) {
      throw value_error("token id " + std::to_string(id) + " at position " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(config_.vocab_size) +
                        ")");
    }
    x.row(i) = embedding_.row(id);
  }
  if (attn_weights) attn_weights->clear();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const EnglishLMLayer& layer = layers_[l];
    const RowMatrixXf a = layer.norm1.forward(x);  // (n, d)
    RowMatrixXf p = a;                             // queries and keys (n, d)
    if (config_.shortformer_positions) p += positions_.topRows(n);
    AttentionMasks masks;
    masks.is_causal = true;
    if (layer.relative_bias.size() > 0) {
      masks.attn_mask_kind = AttentionMasks::Kind::additive;
      masks.attn_mask = relative_bias_mask(layer.relative_bias, n);
    }
    AttentionResult r = layer.self_attn.forward(p, p, a, masks, options[l]);
    x += r.output;
    if (config_.dim_feedforward > 0) x += layer.ff.forward(layer.norm2.forward(x));
    if (attn_weights) attn_weights->push_back(std::move(r.attn_weights));
  }
  RowMatrixXf logits = norm_.forward(x) * embedding_.transpose();  // (n, V), tied embedding
  logits.rowwise() += generator_bias_.transpose();
  for (const int id : never_predicted_) {
    logits.col(id).setConstant(-std::numeric_limits<float>::infinity());
  }
  return logits;
}

namespace {

/// log(sum(exp(logits[i]))) in double, shifted by the row's maximum.
double log_normaliser(const RowMatrixXf& logits, Index i) {
  const double m = logits.row(i).maxCoeff();
  double sum = 0.0;
  for (Index j = 0; j < logits.cols(); ++j) sum += std::exp(double(logits(i, j)) - m);
  return m + std::log(sum);
}

}  // namespace

std::vector<double> EnglishLM::next_token_logprobs(const RowMatrixXf& logits,
                                                   const std::vector<int>& ids) {
  if (logits.rows() != static_cast<Index>(ids.size())) {
    throw shape_error("next_token_logprobs: logits have " + std::to_string(logits.rows()) +
                      " rows for " + std::to_string(ids.size()) + " ids");
  }
  std::vector<double> out;
  for (Index i = 0; i + 1 < logits.rows(); ++i) {
    const int next = ids[static_cast<std::size_t>(i + 1)];
    out.push_back(double(logits(i, next)) - log_normaliser(logits, i));
  }
  return out;
}

EnglishLMRun EnglishLM::run(const std::string& text, Index top_k,
                            const std::vector<LMHead>& ablated) const {
  const Index v = config_.vocab_size;
  const Index predictable = v - static_cast<Index>(never_predicted_.size());
  if (top_k < 1 || top_k > predictable) {
    throw value_error("top_k=" + std::to_string(top_k) +
                      " must be between 1 and the number of pieces the model predicts, " +
                      std::to_string(predictable));
  }
  EnglishLMRun out;
  out.tokens = encode(text);
  out.logits = forward(out.tokens.ids, ablated, &out.attn_weights);
  const Index n = out.logits.rows();
  out.next_token_logprob = next_token_logprobs(out.logits, out.tokens.ids);
  double total = 0.0;
  for (const double lp : out.next_token_logprob) total += lp;
  if (n > 1) out.perplexity = std::exp(-total / double(n - 1));
  const double z = log_normaliser(out.logits, n - 1);
  std::vector<int> order(static_cast<std::size_t>(v));
  std::iota(order.begin(), order.end(), 0);
  const auto k = static_cast<std::size_t>(top_k);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](int a, int b) {
                      const float la = out.logits(n - 1, a), lb = out.logits(n - 1, b);
                      return la > lb || (la == lb && a < b);
                    });
  for (std::size_t i = 0; i < k; ++i) {
    const int id = order[i];
    out.next_token.push_back(
        {vocab_[static_cast<std::size_t>(id)], std::exp(double(out.logits(n - 1, id)) - z)});
  }
  return out;
}

}  // namespace mha
