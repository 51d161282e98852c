// Encoder-decoder Transformer from mha::MultiheadAttention: see transformer.hpp (shape legend:
// S = source tokens, T = decoder steps, V = vocab, d = d_model, F = dim_feedforward,
// h = num_heads, L = layers).
#include "mha/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "mha/detail/format.hpp"

namespace mha {

using detail::shape_str;

RowMatrixXf LayerNorm::forward(const MatrixRef& x) const {
  const Index rows = x.rows(), d = x.cols();
  RowMatrixXf y(rows, d);
  for (Index r = 0; r < rows; ++r) {
    const auto row = x.row(r).cast<double>();
    const double mean = row.mean();
    const double var = (row.array() - mean).square().mean();  // biased, as PyTorch
    const double inv = 1.0 / std::sqrt(var + eps);
    for (Index c = 0; c < d; ++c) {
      y(r, c) = static_cast<float>((row(c) - mean) * inv * weight[c] + bias[c]);
    }
  }
  return y;
}

RowMatrixXf FeedForward::forward(const MatrixRef& x) const {
  RowMatrixXf hidden = x * linear1_weight.transpose();  // (rows, F)
  hidden.rowwise() += linear1_bias.transpose();
  hidden = hidden.cwiseMax(0.0f);                       // relu
  RowMatrixXf y = hidden * linear2_weight.transpose();  // (rows, d)
  y.rowwise() += linear2_bias.transpose();
  return y;
}

const char* attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::encoder_self:
      return "encoder_self";
    case AttentionKind::decoder_self:
      return "decoder_self";
    case AttentionKind::cross:
      return "cross";
  }
  return "?";
}

AttentionKind parse_attention_kind(const std::string& name) {
  for (const auto kind :
       {AttentionKind::encoder_self, AttentionKind::decoder_self, AttentionKind::cross}) {
    if (name == attention_kind_name(kind)) return kind;
  }
  throw parse_error("attention kind \"" + name +
                    "\" is not one of \"encoder_self\", \"decoder_self\", \"cross\"");
}

namespace {

void expect_vector(const char* what, const VectorXf& v, Index n) {
  if (v.size() != n) {
    throw shape_error(std::string(what) + " has " + std::to_string(v.size()) +
                      " values, expected " + std::to_string(n));
  }
}

void expect_matrix(const char* what, const RowMatrixXf& m, Index rows, Index cols) {
  if (m.rows() != rows || m.cols() != cols) {
    throw shape_error(std::string(what) + " is " + shape_str(m.rows(), m.cols()) + ", expected " +
                      shape_str(rows, cols));
  }
}

void check_norm(const char* what, const LayerNorm& n, Index d) {
  expect_vector(what, n.weight, d);
  expect_vector(what, n.bias, d);
}

void check_ff(const FeedForward& ff, Index d, Index f) {
  expect_matrix("linear1.weight", ff.linear1_weight, f, d);
  expect_vector("linear1.bias", ff.linear1_bias, f);
  expect_matrix("linear2.weight", ff.linear2_weight, d, f);
  expect_vector("linear2.bias", ff.linear2_bias, d);
}

/// Lowest index of the largest entry (PyTorch's argmax on a CPU tensor picks the first).
int argmax_lowest(const Eigen::Ref<const RowMatrixXf>& row) {
  int best = 0;
  for (Index j = 1; j < row.cols(); ++j) {
    if (row(0, j) > row(0, best)) best = static_cast<int>(j);
  }
  return best;
}

}  // namespace

Seq2SeqTransformer::Seq2SeqTransformer(Seq2SeqConfig config, RowMatrixXf embedding,
                                       std::vector<EncoderLayer> encoder,
                                       std::vector<DecoderLayer> decoder, LayerNorm encoder_norm,
                                       LayerNorm decoder_norm, RowMatrixXf generator_weight,
                                       VectorXf generator_bias)
    : config_(config),
      embedding_(std::move(embedding)),
      encoder_(std::move(encoder)),
      decoder_(std::move(decoder)),
      encoder_norm_(std::move(encoder_norm)),
      decoder_norm_(std::move(decoder_norm)),
      generator_weight_(std::move(generator_weight)),
      generator_bias_(std::move(generator_bias)) {
  const Index d = config_.d_model, v = config_.vocab_size, f = config_.dim_feedforward;
  if (static_cast<Index>(encoder_.size()) != config_.num_encoder_layers ||
      static_cast<Index>(decoder_.size()) != config_.num_decoder_layers) {
    throw config_error("the model has " + std::to_string(encoder_.size()) + " encoder and " +
                       std::to_string(decoder_.size()) + " decoder layers, the config says " +
                       std::to_string(config_.num_encoder_layers) + " and " +
                       std::to_string(config_.num_decoder_layers));
  }
  expect_matrix("embedding.weight", embedding_, v, d);
  expect_matrix("generator.weight", generator_weight_, v, d);
  expect_vector("generator.bias", generator_bias_, v);
  for (const auto& layer : encoder_) {
    check_ff(layer.ff, d, f);
    check_norm("encoder norm1", layer.norm1, d);
    check_norm("encoder norm2", layer.norm2, d);
  }
  for (const auto& layer : decoder_) {
    check_ff(layer.ff, d, f);
    check_norm("decoder norm1", layer.norm1, d);
    check_norm("decoder norm2", layer.norm2, d);
    check_norm("decoder norm3", layer.norm3, d);
  }
  if (config_.final_norm) {
    check_norm("encoder.norm", encoder_norm_, d);
    check_norm("decoder.norm", decoder_norm_, d);
  }
  const Index cached = std::max(config_.max_source_len, config_.max_target_len + 1);
  if (cached > 0) positions_ = sinusoidal_positional_encoding(cached, d);
}

RowMatrixXf Seq2SeqTransformer::positional_encoding(Index n) const {
  if (n <= positions_.rows()) return positions_.topRows(n);
  return sinusoidal_positional_encoding(n, config_.d_model);
}

RowMatrixXf Seq2SeqTransformer::embed(const std::vector<int>& ids) const {
  const auto n = static_cast<Index>(ids.size());
  if (n == 0) throw shape_error("an empty token sequence cannot be embedded");
  RowMatrixXf x = positional_encoding(n);  // (n, d)
  for (Index i = 0; i < n; ++i) {
    const int id = ids[static_cast<std::size_t>(i)];
    if (id < 0 || id >= config_.vocab_size) {
      throw value_error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(config_.vocab_size) + ")");
    }
    x.row(i) += embedding_.row(id) * config_.embed_scale;
  }
  return x;
}

void Seq2SeqTransformer::check_ablation(const Ablation& ablation) const {
  for (const HeadId& a : ablation) {
    const Index layers = a.kind == AttentionKind::encoder_self ? config_.num_encoder_layers
                                                               : config_.num_decoder_layers;
    if (a.layer < 0 || a.layer >= layers) {
      throw value_error(std::string("ablated head: layer ") + std::to_string(a.layer) + " of " +
                        attention_kind_name(a.kind) + " is outside [0, " + std::to_string(layers) +
                        ")");
    }
    if (a.head < 0 || a.head >= config_.num_heads) {
      throw value_error("ablated head: head " + std::to_string(a.head) + " is outside [0, " +
                        std::to_string(config_.num_heads) + ")");
    }
  }
}

ForwardOptions Seq2SeqTransformer::options_for(const Ablation& ablation, AttentionKind kind,
                                               Index layer) const {
  ForwardOptions options(false);
  for (const HeadId& a : ablation) {
    if (a.kind != kind || a.layer != layer) continue;
    if (options.ablated_heads.empty()) {
      options.ablated_heads.assign(static_cast<std::size_t>(config_.num_heads), 0);
    }
    options.ablated_heads[static_cast<std::size_t>(a.head)] = 1;
  }
  return options;
}

RowMatrixXf Seq2SeqTransformer::encode(const std::vector<int>& source_ids, const Ablation& ablation,
                                       Seq2SeqTrace* trace) const {
  check_ablation(ablation);
  RowMatrixXf x = embed(source_ids);  // (S, d)
  if (trace != nullptr) trace->encoder_self.clear();
  for (std::size_t l = 0; l < encoder_.size(); ++l) {
    const EncoderLayer& layer = encoder_[l];
    const ForwardOptions options =
        options_for(ablation, AttentionKind::encoder_self, static_cast<Index>(l));
    AttentionResult sa;
    if (config_.norm_first) {
      const RowMatrixXf y = layer.norm1.forward(x);
      sa = layer.self_attn.forward(y, {}, options);
      x += sa.output;
      x += layer.ff.forward(layer.norm2.forward(x));
    } else {
      sa = layer.self_attn.forward(x, {}, options);
      x = layer.norm1.forward(x + sa.output);
      x = layer.norm2.forward(x + layer.ff.forward(x));
    }
    if (trace != nullptr) trace->encoder_self.push_back(std::move(sa.attn_weights));
  }
  return config_.final_norm ? encoder_norm_.forward(x) : x;
}

RowMatrixXf Seq2SeqTransformer::decode(const RowMatrixXf& memory,
                                       const std::vector<int>& target_ids, const Ablation& ablation,
                                       Seq2SeqTrace* trace) const {
  check_ablation(ablation);
  RowMatrixXf x = embed(target_ids);  // (T, d)
  AttentionMasks causal;
  causal.is_causal = true;
  if (trace != nullptr) {
    trace->decoder_self.clear();
    trace->cross.clear();
  }
  for (std::size_t l = 0; l < decoder_.size(); ++l) {
    const DecoderLayer& layer = decoder_[l];
    const auto li = static_cast<Index>(l);
    const ForwardOptions self_options = options_for(ablation, AttentionKind::decoder_self, li);
    const ForwardOptions cross_options = options_for(ablation, AttentionKind::cross, li);
    AttentionResult sa, ca;
    if (config_.norm_first) {
      const RowMatrixXf y1 = layer.norm1.forward(x);
      sa = layer.self_attn.forward(y1, causal, self_options);
      x += sa.output;
      const RowMatrixXf y2 = layer.norm2.forward(x);
      ca = layer.cross_attn.forward(y2, memory, memory, {}, cross_options);
      x += ca.output;
      x += layer.ff.forward(layer.norm3.forward(x));
    } else {
      sa = layer.self_attn.forward(x, causal, self_options);
      x = layer.norm1.forward(x + sa.output);
      ca = layer.cross_attn.forward(x, memory, memory, {}, cross_options);
      x = layer.norm2.forward(x + ca.output);
      x = layer.norm3.forward(x + layer.ff.forward(x));
    }
    if (trace != nullptr) {
      trace->decoder_self.push_back(std::move(sa.attn_weights));
      trace->cross.push_back(std::move(ca.attn_weights));
    }
  }
  if (config_.final_norm) x = decoder_norm_.forward(x);
  RowMatrixXf logits = x * generator_weight_.transpose();  // (T, V)
  logits.rowwise() += generator_bias_.transpose();
  if (trace != nullptr) trace->logits = logits;
  return logits;
}

GreedyResult Seq2SeqTransformer::greedy(const std::vector<int>& source_ids, int bos_id, int eos_id,
                                        const Ablation& ablation, bool keep_logits) const {
  GreedyResult result;
  Seq2SeqTrace& trace = result.trace;
  const RowMatrixXf memory = encode(source_ids, ablation, &trace);  // (S, d)
  const Index S = memory.rows(), d = config_.d_model, h = config_.num_heads;
  const Index max_steps = config_.max_target_len + 1;
  const std::size_t layers = decoder_.size();
  const RowMatrixXf positions = positional_encoding(max_steps);  // (T_max, d)

  // Per decoder layer: the self-attention key/value inputs of every position so far (t+1, d),
  // and each step's weights, (h, 1, t+1) and (h, 1, S).
  std::vector<RowMatrixXf> keys(layers, RowMatrixXf(0, d));
  std::vector<std::vector<HeadStack>> self_rows(layers), cross_rows(layers);
  std::vector<std::vector<ForwardOptions>> options(layers);
  for (std::size_t l = 0; l < layers; ++l) {
    options[l] = {options_for(ablation, AttentionKind::decoder_self, static_cast<Index>(l)),
                  options_for(ablation, AttentionKind::cross, static_cast<Index>(l))};
  }
  std::vector<RowMatrixXf> logit_rows;
  int input = bos_id;
  for (Index step = 0; step < max_steps; ++step) {
    if (input < 0 || input >= config_.vocab_size) {
      throw value_error("token id " + std::to_string(input) + " is outside the vocabulary");
    }
    RowMatrixXf x = positions.row(step) + embedding_.row(input) * config_.embed_scale;  // (1, d)
    for (std::size_t l = 0; l < layers; ++l) {
      const DecoderLayer& layer = decoder_[l];
      RowMatrixXf& k = keys[l];
      AttentionResult sa, ca;
      // The newest position attends to every position so far: the last row of the causal mask.
      if (config_.norm_first) {
        const RowMatrixXf y1 = layer.norm1.forward(x);
        k.conservativeResize(k.rows() + 1, Eigen::NoChange);
        k.row(k.rows() - 1) = y1;
        sa = layer.self_attn.forward(y1, k, k, {}, options[l][0]);
        x += sa.output;
        const RowMatrixXf y2 = layer.norm2.forward(x);
        ca = layer.cross_attn.forward(y2, memory, memory, {}, options[l][1]);
        x += ca.output;
        x += layer.ff.forward(layer.norm3.forward(x));
      } else {
        k.conservativeResize(k.rows() + 1, Eigen::NoChange);
        k.row(k.rows() - 1) = x;
        sa = layer.self_attn.forward(x, k, k, {}, options[l][0]);
        x = layer.norm1.forward(x + sa.output);
        ca = layer.cross_attn.forward(x, memory, memory, {}, options[l][1]);
        x = layer.norm2.forward(x + ca.output);
        x = layer.norm3.forward(x + layer.ff.forward(x));
      }
      self_rows[l].push_back(std::move(sa.attn_weights));
      cross_rows[l].push_back(std::move(ca.attn_weights));
    }
    if (config_.final_norm) x = decoder_norm_.forward(x);
    RowMatrixXf logits = x * generator_weight_.transpose();  // (1, V)
    logits += generator_bias_.transpose();
    const int next = argmax_lowest(logits);
    if (keep_logits) logit_rows.push_back(std::move(logits));
    if (next == eos_id) {
      result.output_ids.push_back(next);
      result.produced_eos = true;
      break;
    }
    if (step + 1 == max_steps) break;  // max_target_len tokens already: drop this prediction
    result.output_ids.push_back(next);
    input = next;
  }

  // Assemble (h, T, T) and (h, T, S) stacks from the per-step rows.
  const auto T = static_cast<Index>(self_rows.empty() ? 0 : self_rows[0].size());
  trace.decoder_self.assign(layers, HeadStack(h, T, T));
  trace.cross.assign(layers, HeadStack(h, T, S));
  for (std::size_t l = 0; l < layers; ++l) {
    for (Index t = 0; t < T; ++t) {
      const HeadStack& srow = self_rows[l][static_cast<std::size_t>(t)];   // (h, 1, t+1)
      const HeadStack& crow = cross_rows[l][static_cast<std::size_t>(t)];  // (h, 1, S)
      for (Index i = 0; i < h; ++i) {
        for (Index j = 0; j <= t; ++j) trace.decoder_self[l](i, t, j) = srow(i, 0, j);
        for (Index j = 0; j < S; ++j) trace.cross[l](i, t, j) = crow(i, 0, j);
      }
    }
  }
  if (keep_logits) {
    trace.logits.resize(static_cast<Index>(logit_rows.size()), config_.vocab_size);
    for (std::size_t t = 0; t < logit_rows.size(); ++t) {
      trace.logits.row(static_cast<Index>(t)) = logit_rows[t];
    }
  }
  return result;
}

}  // namespace mha
