// Module 08's seeded numpy experiment. See experiment.hpp.
#include "mha/experiment.hpp"

#include <string>

#include "mha/numpy_random.hpp"

namespace mha {

NumpyExperiment make_numpy_experiment(std::uint32_t seed, Index tokens, Index d_model,
                                      Index num_heads) {
  NumpyExperiment e;
  e.config.d_model = d_model;
  e.config.num_heads = num_heads;
  e.config.validate();
  if (tokens <= 0) {
    throw shape_error("tokens=" + std::to_string(tokens) + ": at least one token is needed");
  }
  if (tokens > limits::max_tokens) {
    throw limit_error("tokens=" + std::to_string(tokens) + " exceeds the limit of " +
                      std::to_string(limits::max_tokens));
  }
  NumpyRandomState rng(seed);
  e.x_f64 = rng.randn(tokens, d_model);  // X = np.random.randn(n, d_model)
  e.Wq = rng.randn(d_model, d_model);    // Wq, Wk, Wv, Wo = [np.random.randn(d_model, d_model)
  e.Wk = rng.randn(d_model, d_model);    //                   for _ in range(4)]
  e.Wv = rng.randn(d_model, d_model);
  e.Wo = rng.randn(d_model, d_model);
  e.x = e.x_f64.cast<float>();
  e.weights = AttentionWeights::from_numpy(e.Wq.cast<float>(), e.Wk.cast<float>(),
                                           e.Wv.cast<float>(), e.Wo.cast<float>());
  return e;
}

}  // namespace mha
