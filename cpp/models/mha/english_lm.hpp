// The English language model: a decoder-only, pre-norm, causal Transformer over subword pieces
// (a SentencePiece BPE tokenizer with byte fallback, mha::SubwordTokenizer), run through
// mha::MultiheadAttention. PyTorch definition: scripts/training/english_lm_model.py;
// file contract, tensors and formula: docs/english-lm-format.md.
//
// Shape legend: n = tokens (<bos> + text tokens, at most max_len), d = d_model, h = num_heads,
// d_head = d / h, F = dim_feedforward, V = vocab_size, L = num_layers.
//
// Forward (Vaswani et al. 2017 §3; pre-norm; positions on queries and keys only, Press et al.
// 2021 "Shortformer", arXiv:2012.15832; relative bias as Shaw et al. 2018 / Raffel et al. 2020,
// one learned scalar per head and distance, no buckets):
//   x = embedding[ids]                                                    (n, d)
//   per layer l:
//     a = norm1(x)                                                        (n, d)
//     p = a + PE[0:n]  (shortformer_positions) or a                       (n, d)
//     x = x + MHA(query = p, key = p, value = a, is_causal,
//                 attn_mask M_h(i, j) = relative_bias[h][i - j] for j <= i (when relative_bias))
//     x = x + linear2(relu(linear1(norm2(x))))   (when dim_feedforward > 0)
//   logits = norm(x) embedding^T + generator.bias                         (n, V)
//   logits[:, id] = -inf for the tokenizer's unknown and control pieces (<unk>, <bos>): never
//   predicted
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mha/attention.hpp"
#include "mha/subword_tokenizer.hpp"
#include "mha/transformer.hpp"

namespace mha {

/// The file's config (docs/english-lm-format.md).
struct EnglishLMConfig {
  Index d_model = 0, num_heads = 0, num_layers = 0;
  Index dim_feedforward = 0;  ///< 0: no feed-forward block
  Index vocab_size = 0, max_len = 0;
  double layer_norm_eps = 1e-5;
  bool relative_bias = false;
  bool shortformer_positions = true;
};

/// One layer's weights.
struct EnglishLMLayer {
  LayerNorm norm1;
  MultiheadAttention self_attn;
  RowMatrixXf relative_bias;  ///< (h, max_len), or empty without relative_bias
  LayerNorm norm2;            ///< only with dim_feedforward > 0
  FeedForward ff;             ///< only with dim_feedforward > 0
};

/// A text as the model reads it: n tokens, <bos> first, and the W + 1 words they make up.
struct EnglishTokens {
  std::vector<std::string> tokens;  ///< (n) pieces as the vocabulary writes them ("▁the", "<0xF0>")
  std::vector<int> ids;             ///< (n) vocabulary ids, 1 (<bos>) first
  /// (n) the word each token belongs to, an index into words: 0 for <bos>, then the text's words
  /// in order (SubwordEncoding::word_index + 1).
  std::vector<int> word_index;
  /// (W + 1) "<bos>", then the text's words by the page's token rule (english_tokenize), as
  /// written; only words with at least one kept token.
  std::vector<std::string> words;
  std::vector<bool> unknown;   ///< (n) all false: byte fallback gives every text known pieces
  Index truncated_tokens = 0;  ///< text tokens dropped beyond max_len (counting <bos>)
};

/// A head to switch off: ForwardOptions::ablated_heads of that layer (its output zeroed before
/// out_proj; its weights are still computed and returned).
struct LMHead {
  Index layer = 0;
  Index head = 0;
};

/// One next-token candidate.
struct TokenProbability {
  std::string token;
  double probability = 0.0;
};

/// Everything one run shows.
struct EnglishLMRun {
  EnglishTokens tokens;
  RowMatrixXf logits;                   ///< (n, V): row i scores the token after position i
  std::vector<HeadStack> attn_weights;  ///< L stacks of (h, n, n), zeros above the diagonal
  /// (n - 1): log_softmax(logits[i])[ids[i + 1]] (natural log), in double.
  std::vector<double> next_token_logprob;
  /// exp(-mean(next_token_logprob)); NaN when n == 1 (no prediction to score); +inf when the
  /// mean is below about -709 (beyond double's range: a model that gives the text almost no
  /// probability).
  double perplexity = std::numeric_limits<double>::quiet_NaN();
  /// The top K of softmax(logits[n - 1]), most probable first (ties: lowest id); never <unk> or
  /// <bos> (their probability is 0, so K is at most V minus those).
  std::vector<TokenProbability> next_token;
};

/// The loaded model: checksum, config, vocabulary and every tensor verified, weights widened
/// from fp16.
class EnglishLM {
 public:
  static constexpr const char* format_name = "mha-lab-english-lm";
  /// Version 3: subword pieces, the tokenizer in the metadata; "xxh64" covers the data section,
  /// the tensor entries and the other metadata (safetensors_content_xxh64). Word models
  /// (versions 1 and 2) are refused.
  static constexpr const char* format_version = "3";
  static constexpr int unk_id = 0, bos_id = 1;

  /// Loads a whole .safetensors file's bytes (docs/english-lm-format.md). Checks, in order: the
  /// container (Safetensors::parse); metadata format, format_version and xxh64 (the XXH64 of
  /// the data section, tensor entries and other metadata values, safetensors_content_xxh64,
  /// so an edited config or vocabulary is refused like an edited weight); the config (known
  /// keys only, types, ranges, d_model % num_heads == 0, max_len within mha::limits::max_tokens);
  /// the vocabulary (a JSON list of vocab_size distinct strings, "<unk>" and "<bos>" first); the
  /// tokenizer (SubwordTokenizer's description: its pieces the vocabulary, <unk> of type unknown
  /// and <bos> of type control); every
  /// tensor's presence, dtype (F16), shape and finiteness; no tensor the config does not call for.
  /// Throws parse_error (container, JSON, missing metadata or tensor, wrong format/version,
  /// checksum mismatch naming both hashes, unknown config key, wrong dtype, bad vocab, an
  /// unexpected tensor), shape_error (a tensor of the wrong shape), value_error (a non-finite
  /// weight), config_error / limit_error (a config the core cannot run).
  static EnglishLM load(std::vector<std::uint8_t> bytes);

  const EnglishLMConfig& config() const { return config_; }
  const std::string& config_json() const { return config_json_; }      ///< the metadata text
  const std::string& training_json() const { return training_json_; }  ///< "" when absent
  const std::vector<std::string>& vocab() const { return vocab_; }
  const SubwordTokenizer& tokenizer() const { return *tokenizer_; }
  /// The verified xxh64 (data, tensor entries and metadata), 16 lowercase hex digits.
  const std::string& checksum() const { return checksum_; }

  /// <bos> + the text's pieces (tokenizer().encode) and the words they belong to; the first
  /// max_len tokens are kept, the rest counted in truncated_tokens. Empty text gives <bos> alone.
  /// Throws value_error for invalid UTF-8, limit_error for a text beyond the tokenizer's limit.
  EnglishTokens encode(const std::string& text) const;

  /// The forward pass over ids (n), 1 <= n <= max_len: logits (n, V), -inf in the columns of
  /// the pieces the model never predicts (<unk>, <bos>); every layer's attention
  /// weights (h, n, n) go to *attn_weights when given.
  /// Throws shape_error for no ids or more than max_len, value_error for an id outside [0, V) or
  /// an ablated head outside the model (naming layer and head and the model's sizes).
  RowMatrixXf forward(const std::vector<int>& ids, const std::vector<LMHead>& ablated = {},
                      std::vector<HeadStack>* attn_weights = nullptr) const;

  /// (n - 1): log_softmax(logits[i])[ids[i + 1]] (natural log, in double) for logits (n, V) of
  /// ids (n). Throws shape_error when the rows are not one per id.
  static std::vector<double> next_token_logprobs(const RowMatrixXf& logits,
                                                 const std::vector<int>& ids);

  /// encode(text), forward, and the scores of EnglishLMRun. top_k in [1, V].
  /// Throws as encode and forward; value_error for top_k outside [1, V].
  EnglishLMRun run(const std::string& text, Index top_k = 5,
                   const std::vector<LMHead>& ablated = {}) const;

 private:
  EnglishLM() = default;

  EnglishLMConfig config_;
  RowMatrixXf embedding_;  ///< (V, d), also the output projection (tied)
  std::vector<EnglishLMLayer> layers_;
  LayerNorm norm_;
  VectorXf generator_bias_;  ///< (V)
  RowMatrixXf positions_;    ///< PE (max_len, d)
  std::string config_json_, training_json_, checksum_;
  std::vector<std::string> vocab_;
  std::optional<SubwordTokenizer> tokenizer_;  ///< set by load
  std::vector<int> never_predicted_;  ///< ids of unknown and control pieces
};

}  // namespace mha
