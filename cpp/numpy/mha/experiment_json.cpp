// Module 08's experiment as JSON (experiment_json.hpp), through the formats layer's writers.
#include "mha/experiment_json.hpp"

#include "mha/json_io.hpp"

namespace mha {

using nlohmann::json;

AttentionResult run_numpy_experiment(const NumpyExperiment& experiment,
                                     const ExperimentOptions& options) {
  AttentionMasks masks;
  masks.is_causal = options.causal;
  // float64 throughout, as the course's numpy code: its 3-decimal printouts are reproduced.
  return numpy_experiment_forward(experiment,
                                  numpy_experiment_input(experiment, options.positional), masks);
}

json experiment_to_json(std::uint32_t seed, const NumpyExperiment& experiment,
                        const ExperimentOptions& options, const AttentionResult& result) {
  json response =
      response_to_json(result, experiment.config, parameter_count(experiment.config, false));
  response["seed"] = seed;
  response["causal"] = options.causal;
  response["positional"] = options.positional;
  response["X"] = matrix_to_json(experiment.x_f64);
  if (options.positional) {
    response["positional_encoding"] =
        matrix_to_json(sinusoidal_positional_encoding(experiment.x.rows(), experiment.x.cols()));
  }
  response["Wq"] = matrix_to_json(experiment.Wq);
  response["Wk"] = matrix_to_json(experiment.Wk);
  response["Wv"] = matrix_to_json(experiment.Wv);
  response["Wo"] = matrix_to_json(experiment.Wo);
  return response;
}

json experiment_to_json(const ExperimentRequest& request, const ExperimentRun& run) {
  return experiment_to_json(request.seed, run.experiment,
                            ExperimentOptions{request.masks.is_causal, request.positional},
                            run.result);
}

}  // namespace mha
