// libFuzzer target: bytes -> mha::read_npy (the .npy header's dict literal, dtype, shape, data
// length, values) -> attention_layers -> score_heads, js_distance_matrix and attention_rollout
// on every layer. Seeds: corpus/fuzz_npy/ (tests/fuzz/make_npy_corpus.py).
//
// Expected outcomes: a typed mha::error naming the problem, or scores inside their documented
// ranges (patterns.hpp). Findings: a crash, a sanitizer report, an exception that is not an
// mha::error, a NaN, or a score outside its range (mha_fuzz::finding).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "fuzz_common.hpp"
#include "mha/npy.hpp"
#include "mha/patterns.hpp"

namespace {

void in_range(const std::optional<double>& x, double lo, double hi, const char* what) {
  if (!x) return;
  // 1e-9: rounding of averages of values that are exactly in range.
  if (!std::isfinite(*x) || *x < lo - 1e-9 || *x > hi + 1e-9) mha_fuzz::finding(what, *x, hi);
}

void check_scores(const mha::HeadStack& layer) {
  const double n = double(layer.rows()), m = double(layer.cols());
  for (const mha::HeadScores& hs : mha::score_heads(layer)) {
    for (const auto* s : {&hs.scores, &hs.uniform_baseline}) {
      in_range(s->previous_token, 0, 1, "previous_token outside [0, 1]");
      in_range(s->diagonal, 0, 1, "diagonal outside [0, 1]");
      in_range(s->local_band, 0, 1, "local_band outside [0, 1]");
      in_range(s->vertical_stripe, 0, 1, "vertical_stripe outside [0, 1]");
      in_range(s->first_token, 0, 1, "first_token outside [0, 1]");
      in_range(s->mean_distance, 0, std::max(n, m) - 1, "mean_distance outside [0, max(n, m) - 1]");
      in_range(s->mean_distance_normalized, 0, 1, "mean_distance_normalized outside [0, 1]");
      in_range(s->entropy_bits, 0, std::log2(m), "entropy outside [0, log2 m]");
      in_range(s->entropy_normalized, 0, 1, "entropy_normalized outside [0, 1]");
      in_range(s->max_weight, 0, 1, "max_weight outside [0, 1]");
    }
  }
  const mha::RowMatrixXd d = mha::js_distance_matrix(layer);
  for (mha::Index i = 0; i < d.size(); ++i) {
    if (!(d.data()[i] >= 0.0 && d.data()[i] <= 1.0))
      mha_fuzz::finding("JS distance outside [0, 1]", d.data()[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const mha::FloatTensor t = mha::read_npy(data, size, "fuzz.npy");
    std::size_t count = 1;
    for (const auto dim : t.shape) count *= static_cast<std::size_t>(dim);
    if (count != t.data.size()) mha_fuzz::finding("data size differs from the shape's product");
    for (const float x : t.data) {
      if (!std::isfinite(x)) mha_fuzz::finding("a non-finite value was accepted", x);
    }
    if (t.data.size() > (1u << 16)) return 0;  // keep each execution cheap
    const std::vector<mha::HeadStack> layers = mha::attention_layers(t, "fuzz.npy");
    for (const auto& layer : layers) check_scores(layer);
    if (layers[0].rows() == layers[0].cols()) {
      const mha::RowMatrixXd r = mha::attention_rollout(layers);
      for (mha::Index i = 0; i < r.rows(); ++i) {
        if (std::abs(r.row(i).sum() - 1.0) > 1e-9)
          mha_fuzz::finding("a rollout row does not sum to 1", r.row(i).sum());
      }
    }
  } catch (const mha::error&) {
    // A file the reader refuses, or weights that are not attention weights: expected.
  }
  return 0;
}
