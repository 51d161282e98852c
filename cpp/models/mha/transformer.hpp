// An encoder-decoder Transformer (Vaswani et al. 2017, §3) built from mha::MultiheadAttention: the
// same attention code path as every other part of mha-lab, with every head's weights kept.
//
// Semantics as PyTorch 1.13 nn.TransformerEncoderLayer / nn.TransformerDecoderLayer
// (batch_first=True, batch of 1, dropout off, activation relu), both norm_first settings, with
// the optional final encoder.norm / decoder.norm of nn.Transformer.
//
// Shape legend (every comment in this file and transformer.cpp):
//   S = source tokens (characters), T = decoder steps (decoder input positions: <bos> + the
//   tokens generated so far), V = vocabulary size, d = d_model, F = dim_feedforward,
//   h = num_heads, L = number of layers (of the encoder or of the decoder).
// Attention weights of one layer are a HeadStack (h, queries, keys):
//   encoder self (h, S, S), decoder self (h, T, T) with zeros above the diagonal, cross (h, T, S).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mha/attention.hpp"

namespace mha {

/// LayerNorm over the last dimension, as torch.nn.LayerNorm(d, eps): per row,
/// y = (x - mean) / sqrt(var + eps) * weight + bias, var the biased variance (divide by d).
struct LayerNorm {
  VectorXf weight;  ///< (d)
  VectorXf bias;    ///< (d)
  double eps = 1e-5;

  /// x (rows, d) -> (rows, d). Statistics in double, like the reference code; output float.
  RowMatrixXf forward(const MatrixRef& x) const;
};

/// FF(x) = linear2(relu(linear1(x))) (Vaswani et al. §3.3). linear1 (F, d) + (F), linear2 (d, F) +
/// (d).
struct FeedForward {
  RowMatrixXf linear1_weight;
  VectorXf linear1_bias;
  RowMatrixXf linear2_weight;
  VectorXf linear2_bias;

  /// x (rows, d) -> (rows, d).
  RowMatrixXf forward(const MatrixRef& x) const;
};

/// nn.TransformerEncoderLayer: post-norm x = norm1(x + SA(x)); x = norm2(x + FF(x));
/// pre-norm (norm_first) x = x + SA(norm1(x)); x = x + FF(norm2(x)).
struct EncoderLayer {
  MultiheadAttention self_attn;
  FeedForward ff;
  LayerNorm norm1, norm2;
};

/// nn.TransformerDecoderLayer: post-norm x = norm1(x + SA(x, causal)); x = norm2(x + CA(x,
/// memory)); x = norm3(x + FF(x)); pre-norm x = x + SA(norm1(x)); x = x + CA(norm2(x), memory); x =
/// x + FF(norm3(x)).
struct DecoderLayer {
  MultiheadAttention self_attn;
  MultiheadAttention cross_attn;  ///< PyTorch's multihead_attn
  FeedForward ff;
  LayerNorm norm1, norm2, norm3;
};

/// Which attention of the model: encoder self-attention, decoder (causal) self-attention, or
/// decoder cross-attention (queries from the decoder, keys and values from the encoder output).
enum class AttentionKind { encoder_self, decoder_self, cross };

/// "encoder_self", "decoder_self", "cross".
const char* attention_kind_name(AttentionKind kind);
/// Inverse of attention_kind_name; throws parse_error naming the accepted names.
AttentionKind parse_attention_kind(const std::string& name);

/// One head of the model.
struct HeadId {
  AttentionKind kind = AttentionKind::encoder_self;
  Index layer = 0;
  Index head = 0;
};

/// Heads to switch off (ForwardOptions::ablated_heads: the head's output is zeroed before
/// out_proj; its weights are still computed and returned).
using Ablation = std::vector<HeadId>;

/// Everything a model forward pass shows, per layer and head.
struct Seq2SeqTrace {
  std::vector<HeadStack> encoder_self;  ///< L_enc stacks of (h, S, S)
  std::vector<HeadStack> decoder_self;  ///< L_dec stacks of (h, T, T), zeros above the diagonal
  std::vector<HeadStack> cross;         ///< L_dec stacks of (h, T, S)
  RowMatrixXf logits;                   ///< (T, V): row t predicts the token after position t
};

/// The result of greedy decoding.
struct GreedyResult {
  std::vector<int> output_ids;  ///< generated ids, ending with eos_id when it was produced
  bool produced_eos = false;
  Seq2SeqTrace trace;  ///< T = 1 + number of generated non-eos ids (the decoder inputs)
};

/// Sizes and switches of the model (the date model file's config, docs/date-model-format.md).
struct Seq2SeqConfig {
  Index d_model = 0, num_heads = 0, num_encoder_layers = 0, num_decoder_layers = 0;
  Index dim_feedforward = 0, vocab_size = 0;
  bool norm_first = false;
  double layer_norm_eps = 1e-5;
  float embed_scale = 1.0f;
  bool final_norm = true;
  Index max_target_len = 0;  ///< greedy decoding generates at most this many tokens before eos
  Index max_source_len = 0;  ///< positions whose encoding is computed once (0: none cached)
};

/// Token embedding (shared by source and target) + sinusoidal positions, an encoder stack, a
/// decoder stack and a linear generator (V, d) + (V). Weights are validated by the parts'
/// constructors (MultiheadAttention) and by the loader.
class Seq2SeqTransformer {
 public:
  /// Throws config_error when the layer counts disagree with the config, shape_error when the
  /// embedding, generator or a norm/feed-forward weight has the wrong shape.
  Seq2SeqTransformer(Seq2SeqConfig config, RowMatrixXf embedding, std::vector<EncoderLayer> encoder,
                     std::vector<DecoderLayer> decoder, LayerNorm encoder_norm,
                     LayerNorm decoder_norm, RowMatrixXf generator_weight, VectorXf generator_bias);

  const Seq2SeqConfig& config() const { return config_; }

  /// x = embedding[ids] * embed_scale + PE(positions 0..n-1)   (n, d)  (Vaswani et al. §3.4-3.5).
  /// Throws value_error for an id outside [0, V), shape_error for an empty sequence.
  RowMatrixXf embed(const std::vector<int>& ids) const;

  /// Encoder: source ids (S) -> memory (S, d) (after encoder.norm when final_norm); the
  /// self-attention weights of every layer go to trace->encoder_self when trace is given.
  RowMatrixXf encode(const std::vector<int>& source_ids, const Ablation& ablation = {},
                     Seq2SeqTrace* trace = nullptr) const;

  /// Teacher-forced decoder over all T positions at once (causal self-attention), as PyTorch's
  /// nn.TransformerDecoder with tgt_mask = causal: target input ids (T) and memory (S, d) ->
  /// logits (T, V); decoder_self, cross and logits go to `trace` (encoder_self is left alone).
  RowMatrixXf decode(const RowMatrixXf& memory, const std::vector<int>& target_ids,
                     const Ablation& ablation = {}, Seq2SeqTrace* trace = nullptr) const;

  /// Greedy decoding from `bos_id`: at each step the argmax of the last position's logits (ties:
  /// lowest id) is appended, until `eos_id` or config().max_target_len tokens (a step that would
  /// produce a token beyond that is run, and its non-eos argmax dropped). Decodes one position
  /// per step (causal attention makes earlier positions independent of later ones), so the
  /// result equals decode() on the final target ids. trace.logits (T, V) only when keep_logits.
  GreedyResult greedy(const std::vector<int>& source_ids, int bos_id, int eos_id,
                      const Ablation& ablation = {}, bool keep_logits = true) const;

 private:
  ForwardOptions options_for(const Ablation& ablation, AttentionKind kind, Index layer) const;
  void check_ablation(const Ablation& ablation) const;

  Seq2SeqConfig config_;
  RowMatrixXf embedding_;  ///< (V, d)
  std::vector<EncoderLayer> encoder_;
  std::vector<DecoderLayer> decoder_;
  LayerNorm encoder_norm_, decoder_norm_;  ///< used only when config_.final_norm
  RowMatrixXf generator_weight_;           ///< (V, d)
  VectorXf generator_bias_;                ///< (V)
  /// sinusoidal_positional_encoding(max(max_source_len, max_target_len + 1), d), computed once.
  RowMatrixXf positions_;
  /// PE rows 0..n-1 (n, d), from the cache when it is long enough.
  RowMatrixXf positional_encoding(Index n) const;
};

}  // namespace mha
