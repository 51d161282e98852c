// Pruning heads one at a time (docs/head-experiments.md): the greedy curve of a metric against the number
// of heads removed, for any model whose heads can be switched off. The models layer supplies the
// metric (cpp/models/mha/model_pruning.hpp: held-out loss per character of the English model,
// exact match of the date model).
//
// Protocol. At each step every head still on is tried off, on the *selection* half of the held-out
// data; the head whose removal leaves the best selection value is removed for good (ties: the
// lowest head index). The curve's value at each step is measured on the other half, the
// *measurement* half, so the choice of head never sees the data the curve reports. Greedy removal
// re-measured after each step, as Michel et al. 2019 ("Are Sixteen Heads Really Better than
// One?", §4, Figure 3) do with their importance score; here the score is the metric itself.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "mha/attention.hpp"

namespace mha {

/// Which half of the held-out data a metric is computed on.
enum class PruneHalf { selection, measurement };

/// One point of the curve: after removing `removed` (none at step 0), `heads_left` remain.
struct PruneStep {
  Index heads_left = 0;
  std::optional<Index> removed;  ///< the head index removed at this step (0 <= removed < heads)
  double value = 0.0;            ///< the metric on the measurement half
  /// The metric on the selection half: what chose the head (at step 0: nothing removed).
  double selection_value = 0.0;
};

/// The metric with the heads `off` switched off (indices into the model's head list, in the order
/// removed), on `half`.
using PruneMetric = std::function<double(const std::vector<Index>& off, PruneHalf half)>;

/// The greedy curve over `num_heads` heads: num_heads + 1 steps, the first with nothing removed,
/// the last with every head removed. lower_is_better: the metric is a loss (true) or an accuracy
/// (false). Calls metric 1 + num_heads (num_heads + 1) / 2 times on the selection half and
/// num_heads + 1 times on the measurement half.
/// Throws value_error when num_heads < 1 or the metric returns a non-finite value (naming the
/// heads off).
std::vector<PruneStep> greedy_prune(Index num_heads, const PruneMetric& metric,
                                    bool lower_is_better);

}  // namespace mha
