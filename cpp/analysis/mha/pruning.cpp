// Greedy head pruning (pruning.hpp).
#include "mha/pruning.hpp"

#include <cmath>
#include <string>

namespace mha {

namespace {

double checked(double value, const std::vector<Index>& off, PruneHalf half) {
  if (std::isfinite(value)) return value;
  std::string heads;
  for (const Index h : off) heads += (heads.empty() ? "" : ", ") + std::to_string(h);
  throw value_error(std::string("pruning: the metric on the ") +
                    (half == PruneHalf::selection ? "selection" : "measurement") +
                    " half is not finite with heads [" + heads + "] off");
}

}  // namespace

std::vector<PruneStep> greedy_prune(Index num_heads, const PruneMetric& metric,
                                    bool lower_is_better) {
  if (num_heads < 1) {
    throw value_error("pruning needs at least 1 head, got " + std::to_string(num_heads));
  }
  std::vector<Index> off;
  std::vector<bool> is_off(static_cast<std::size_t>(num_heads), false);
  std::vector<PruneStep> steps;
  PruneStep first;
  first.heads_left = num_heads;
  first.selection_value = checked(metric(off, PruneHalf::selection), off, PruneHalf::selection);
  first.value = checked(metric(off, PruneHalf::measurement), off, PruneHalf::measurement);
  steps.push_back(first);
  for (Index left = num_heads; left > 0; --left) {
    Index best = -1;
    double best_value = 0.0;
    for (Index h = 0; h < num_heads; ++h) {
      if (is_off[static_cast<std::size_t>(h)]) continue;
      std::vector<Index> trial = off;
      trial.push_back(h);
      const double v = checked(metric(trial, PruneHalf::selection), trial, PruneHalf::selection);
      if (best < 0 || (lower_is_better ? v < best_value : v > best_value)) {
        best = h;
        best_value = v;
      }
    }
    off.push_back(best);
    is_off[static_cast<std::size_t>(best)] = true;
    PruneStep s;
    s.heads_left = left - 1;
    s.removed = best;
    s.selection_value = best_value;
    s.value = checked(metric(off, PruneHalf::measurement), off, PruneHalf::measurement);
    steps.push_back(s);
  }
  return steps;
}

}  // namespace mha
