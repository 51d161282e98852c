// libFuzzer target: bytes -> mha::DateModel::load (the safetensors container, metadata, checksum,
// config, vocabulary and every tensor) -> a translation with every attention weight kept.
//
// Byte 0 is flags, the rest is the file. Flag bit 0 re-stamps the checksum: the XXH64 of the
// data section is written over the metadata's "xxh64" value when there is one, so mutated files
// get past the checksum and reach the config, vocabulary and tensor checks (a random mutation
// almost never keeps a valid hash).
//
// Expected outcomes: a typed mha::error naming the problem, or a model that translates with
// finite attention weights whose rows sum to 1. Findings: a crash, a sanitizer report, an
// exception that is not an mha::error, or a violated invariant (mha_fuzz::finding).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "mha/date_model.hpp"
#include "mha/safetensors.hpp"

namespace {

void check_stacks(const std::vector<mha::HeadStack>& stacks) {
  for (const auto& s : stacks) {
    for (mha::Index h = 0; h < s.heads(); ++h) {
      for (mha::Index r = 0; r < s.rows(); ++r) {
        double sum = 0.0;
        for (mha::Index c = 0; c < s.cols(); ++c) {
          const float w = s(h, r, c);
          if (!std::isfinite(w) || w < 0.0f || w > 1.0f)
            mha_fuzz::finding("weight outside [0, 1]", w);
          sum += w;
        }
        // A causal decoder row or a cross row always has a key to attend to: sums are 1, within
        // the float32 rounding of a sum of s.cols() terms and one division.
        if (std::abs(sum - 1.0) > 1e-5 * static_cast<double>(s.cols() + 1)) {
          mha_fuzz::finding("a row of weights does not sum to 1", sum);
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<std::uint8_t> file(data + 1, data + size);
  if ((data[0] & 1) != 0) mha_fuzz::restamp_checksum(file);
  try {
    const mha::DateModel model = mha::DateModel::load(std::move(file));
    // Keep each execution cheap: big (but valid) configurations are loaded, not run.
    const auto& c = model.transformer().config();
    if (static_cast<double>(c.d_model) * c.d_model * (c.num_encoder_layers + c.num_decoder_layers) >
        1e6) {
      return 0;
    }
    const mha::DateTranslation t = model.translate("12-a 0");
    check_stacks(t.trace.encoder_self);
    check_stacks(t.trace.decoder_self);
    check_stacks(t.trace.cross);
    if (t.output_tokens.size() > static_cast<std::size_t>(model.max_target_len()) + 1) {
      mha_fuzz::finding("more output tokens than max_target_len + <eos>");
    }
  } catch (const mha::error&) {
    // A file the loader refuses, or an input it cannot translate: the expected outcome.
  }
  return 0;
}
