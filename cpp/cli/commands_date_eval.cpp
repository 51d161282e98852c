// `mha date-eval` (docs/cli.md, docs/date-model.md "What heads learn"): read the arguments, the
// model and the held-out examples, evaluate (mha::evaluate_date_model), print the report
// (mha::date_evaluation_to_json).
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/date_report.hpp"

namespace mha_cli {

int cmd_date_eval(const std::vector<std::string>& args) {
  const Options o =
      parse_options(args, {"--model", "--heldout", "--limit"}, {"--no-ablation"}, "date-eval");
  if (!o.positional.empty()) {
    throw usage_error{"date-eval takes no positional argument, got " + in_quotes(o.positional[0])};
  }
  const std::string model_file = model_path(single(o, "--model"), BuiltInFile::date_model);
  const char* built_in_heldout = built_in_file(BuiltInFile::date_heldout);
  const std::string heldout_file =
      single(o, "--heldout")
          .value_or(built_in_heldout ? built_in_heldout : "tests/fixtures/date_heldout.json");
  const mha::DateModel model = load_date_model(model_file);
  std::vector<mha::DateExample> examples = read_heldout(heldout_file);
  if (const auto limit = single(o, "--limit")) {
    const std::size_t n = parse_limit(*limit);
    if (n < examples.size()) examples.resize(n);
  }
  const bool ablate = !has_flag(o, "--no-ablation");
  const mha::DateEvaluation ev = mha::evaluate_date_model(model, examples, ablate);
  const mha::DateEvaluationSource source{model, model_file, heldout_file, examples};
  return write_response(mha::date_evaluation_to_json(ev, source)) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
