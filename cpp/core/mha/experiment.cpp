// Module 08's seeded numpy experiment. See experiment.hpp.
#include "mha/experiment.hpp"

#include <string>

#include "mha/detail/format.hpp"
#include "mha/detail/reference_impl.hpp"
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

RowMatrixXd numpy_experiment_input(const NumpyExperiment& experiment, bool positional) {
  if (!positional) return experiment.x_f64;
  return experiment.x_f64 +
         sinusoidal_positional_encoding_f64(experiment.x_f64.rows(), experiment.x_f64.cols());
}

AttentionResult numpy_experiment_forward(const NumpyExperiment& experiment, const RowMatrixXd& x,
                                         const AttentionMasks& masks,
                                         const ForwardOptions& options) {
  const AttentionConfig& c = experiment.config;
  c.validate();
  if (x.rows() == 0 || x.cols() != c.d_model) {
    throw shape_error("X is " + detail::shape_str(x.rows(), x.cols()) +
                      ", expected (n, d_model) with d_model = " + std::to_string(c.d_model));
  }
  detail::expect_finite("X", x);
  masks.validate(c.num_heads, x.rows(), x.rows());
  if (!options.ablated_heads.empty() &&
      static_cast<Index>(options.ablated_heads.size()) != c.num_heads) {
    throw shape_error(
        "ablated_heads has " + std::to_string(options.ablated_heads.size()) +
        " entries, expected one per head, num_heads = " + std::to_string(c.num_heads));
  }
  // numpy's own products (BLAS dgemm), in double: Q, K, V = X @ Wq, X @ Wk, X @ Wv.
  const RowMatrixXd Q = x * experiment.Wq, K = x * experiment.Wk, V = x * experiment.Wv;
  RowMatrixXd Y;
  AttentionResult result = detail::reference_heads(c, Q, K, V, masks, options, Y);
  result.output = (Y * experiment.Wo).cast<float>();  // mha_out = concat(heads) @ Wo
  detail::expect_no_overflow("the output projection", result.output);
  return result;
}

}  // namespace mha
