// libFuzzer target: the English model's word rule and loader (cpp/models/mha/english_*), and a
// run of a loaded model (its subword tokenizer has a target of its own, fuzz_subword_tokenizer).
//
// Byte 0 is flags, the rest is the input:
//   bit 1 set:   the rest is text for mha::english_tokenize;
//   bit 1 clear: the rest is a model file for mha::EnglishLM::load, then a run on a fixed text
//                with every attention weight kept; bit 0 re-stamps the checksum
//                (mha_fuzz::restamp_content_checksum) so mutated files reach the config,
//                vocabulary and tensor checks.
//
// Expected outcomes: a typed mha::error naming the problem (invalid UTF-8, a refused file), or
// tokens that are non-empty, in order, and joined by only spaces and format characters; or a
// model whose run gives finite logits (-inf exactly in the columns of <unk> and <bos>, never
// predicted), causal weights whose rows sum to 1, at most max_len tokens, one word index per
// token rising by 0 or 1 from <bos>'s 0 to the last word, no unknown token, and a perplexity >= 1
// (+inf when it overflows). Findings: a crash, a sanitizer report, an
// exception that is not an mha::error, or a violated invariant (mha_fuzz::finding).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "mha/english_lm.hpp"
#include "mha/english_tokenizer.hpp"

namespace {

void check_tokens(const std::string& text) {
  const std::vector<std::string> tokens = mha::english_tokenize(text);
  std::size_t at = 0;
  for (const auto& t : tokens) {
    if (t.empty()) mha_fuzz::finding("an empty token");
    const std::size_t found = text.find(t, at);
    if (found == std::string::npos) mha_fuzz::finding("a token that is not in the text, in order");
    at = found + t.size();
    const std::string form = mha::english_lookup_form(t);
    if (form.size() > t.size()) mha_fuzz::finding("a lookup form longer than its token");
  }
}

void check_run(const mha::EnglishLM& model) {
  const mha::EnglishLMRun r = model.run("The cat, don't 42 ümlaut! \xE2\x80\x99s", 3, {{0, 0}});
  const auto n = static_cast<mha::Index>(r.tokens.ids.size());
  if (n < 1 || n > model.config().max_len)
    mha_fuzz::finding("token count outside [1, max_len]", double(n));
  for (mha::Index j = 0; j < r.logits.cols(); ++j) {
    const bool never = j == mha::EnglishLM::unk_id || j == mha::EnglishLM::bos_id;
    for (mha::Index i = 0; i < r.logits.rows(); ++i) {
      const float x = r.logits(i, j);
      if (never ? !(std::isinf(x) && x < 0) : !std::isfinite(x))
        mha_fuzz::finding("a logit that is not finite (or not -inf for <unk>, <bos>)", x);
    }
  }
  const auto& wi = r.tokens.word_index;
  if (static_cast<mha::Index>(wi.size()) != n || wi[0] != 0)
    mha_fuzz::finding("word_index is not one per token from <bos>'s 0", double(wi.size()));
  for (std::size_t i = 1; i < wi.size(); ++i) {
    if (wi[i] - wi[i - 1] != 0 && wi[i] - wi[i - 1] != 1)
      mha_fuzz::finding("word_index does not rise by 0 or 1", double(i));
  }
  if (static_cast<std::size_t>(wi.back()) + 1 != r.tokens.words.size())
    mha_fuzz::finding("words and word_index disagree", double(r.tokens.words.size()));
  for (const bool u : r.tokens.unknown) {
    if (u) mha_fuzz::finding("an unknown token");
  }
  for (const auto& s : r.attn_weights) {
    for (mha::Index h = 0; h < s.heads(); ++h) {
      for (mha::Index i = 0; i < n; ++i) {
        double sum = 0.0;
        for (mha::Index j = 0; j < n; ++j) {
          const float w = s(h, i, j);
          if (!(w >= 0.0f && w <= 1.0f)) mha_fuzz::finding("weight outside [0, 1]", w);
          if (j > i && w != 0.0f) mha_fuzz::finding("a weight above the diagonal", w);
          sum += w;
        }
        if (std::abs(sum - 1.0) > 1e-5 * static_cast<double>(n + 1)) {
          mha_fuzz::finding("a row of weights does not sum to 1", sum);
        }
      }
    }
  }
  // Perplexity is +inf when the mean log-probability is below -709 (exp overflows in double): a
  // model with huge weights can get there; NaN or a value below 1 is a finding.
  if (n > 1 && !(r.perplexity >= 1.0 - 1e-9)) {
    mha_fuzz::finding("perplexity NaN or below 1", r.perplexity);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  try {
    if ((data[0] & 2) != 0) {
      check_tokens(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
      return 0;
    }
    std::vector<std::uint8_t> file(data + 1, data + size);
    if ((data[0] & 1) != 0) mha_fuzz::restamp_content_checksum(file);
    const mha::EnglishLM model = mha::EnglishLM::load(std::move(file));
    // Keep each execution cheap: big (but valid) configurations are loaded, not run.
    const auto& c = model.config();
    if (static_cast<double>(c.d_model) * double(c.d_model + c.dim_feedforward) *
                double(c.num_layers) +
            double(c.vocab_size) * double(c.d_model) >
        1e6) {
      return 0;
    }
    check_run(model);
  } catch (const mha::error&) {
    // Invalid UTF-8, or a file the loader refuses: the expected outcome.
  }
  return 0;
}
