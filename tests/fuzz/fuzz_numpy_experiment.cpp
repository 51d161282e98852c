// libFuzzer target: bytes -> (seed, tokens, d_model, num_heads, causal, positional) ->
// mha::make_numpy_experiment -> mha::run_numpy_experiment -> mha::experiment_to_json, the path
// of `mha numpy-experiment` and of the page's preset. Sizes are bounded (tokens and d_model up
// to 40, heads up to 10, including 0 and negative values) so every execution is fast; the size
// limits themselves are tested in tests/core.
//
// Expected outcomes: a typed mha::error, or a result that obeys the contract
// (mha_fuzz::check_result) and serialises with no null. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "mha/experiment_json.hpp"
#include "mha/json_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::uint8_t b[8] = {};
  for (std::size_t i = 0; i < sizeof b && i < size; ++i) b[i] = data[i];
  const std::uint32_t seed = static_cast<std::uint32_t>(b[0]) | (std::uint32_t{b[1]} << 8) |
                             (std::uint32_t{b[2]} << 16) | (std::uint32_t{b[3]} << 24);
  const mha::Index tokens = static_cast<mha::Index>(b[4] % 42) - 1;   // -1 .. 40
  const mha::Index d_model = static_cast<mha::Index>(b[5] % 42) - 1;  // -1 .. 40
  const mha::Index heads = static_cast<mha::Index>(b[6] % 12) - 1;    // -1 .. 10
  mha::ExperimentOptions options;
  options.causal = (b[7] & 1) != 0;
  options.positional = (b[7] & 2) != 0;
  try {
    const mha::NumpyExperiment ex = mha::make_numpy_experiment(seed, tokens, d_model, heads);
    const mha::AttentionResult r = mha::run_numpy_experiment(ex, options);
    mha_fuzz::check_result(r, heads, tokens, tokens, d_model);
    if (options.causal) {
      for (mha::Index i = 0; i < heads; ++i) {
        for (mha::Index row = 0; row < tokens; ++row) {
          for (mha::Index j = row + 1; j < tokens; ++j) {
            if (r.attn_weights(i, row, j) != 0.0f) mha_fuzz::finding("causal weight above 0");
          }
        }
      }
    }
    const std::string out = mha::experiment_to_json(seed, ex, options, r).dump();
    if (out.find("null") != std::string::npos) mha_fuzz::finding("the response holds null");
  } catch (const mha::error&) {
    // Bad sizes, answered with a typed error.
  }
  return 0;
}
