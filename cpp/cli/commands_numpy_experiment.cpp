// `mha numpy-experiment` (docs/cli.md): read the flags into mha::ExperimentArguments, read the
// request (mha::read_experiment_request), run it (mha::run_experiment), print the response
// (mha::experiment_to_json).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "mha/experiment_json.hpp"
#include "mha/experiment_request.hpp"

namespace mha_cli {

namespace {

/// The flags, each checked as docs/cli.md says (usage_error naming the flag and its value).
mha::ExperimentArguments parse_experiment_flags(const std::vector<std::string>& args) {
  std::optional<std::uint64_t> seed, tokens, d_model, num_heads;
  mha::ExperimentArguments out;
  constexpr std::uint64_t max_seed = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint64_t max_size = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "--causal" || name == "--positional") {
      if (inline_value) throw usage_error{name + " takes no value"};
      (name == "--causal" ? out.is_causal : out.positional) = true;
      continue;
    }
    std::optional<std::uint64_t>* target = nullptr;
    std::uint64_t max = max_size;
    const char* meaning = "a positive integer (at most 2147483647)";
    if (name == "--seed") {
      target = &seed;
      max = max_seed;
      meaning = "an integer in [0, 4294967295]";
    } else if (name == "--tokens") {
      target = &tokens;
    } else if (name == "--d-model") {
      target = &d_model;
    } else if (name == "--num-heads") {
      target = &num_heads;
    } else {
      throw usage_error{"unknown option " + in_quotes(args[i]) + " for numpy-experiment"};
    }
    std::string text;
    if (inline_value) {
      text = *inline_value;
    } else if (i + 1 < args.size()) {
      text = args[++i];
    } else {
      throw usage_error{name + " needs a value (" + meaning + ")"};
    }
    const auto value = parse_unsigned(text, max);
    if (!value || (target != &seed && *value == 0)) {
      throw usage_error{name + " must be " + meaning + ", got " + in_quotes(text)};
    }
    if (target->has_value()) throw usage_error{name + " given twice"};
    *target = value;
  }
  for (const auto& [name, value] : {std::pair{"--seed", &seed}, std::pair{"--tokens", &tokens},
                                    std::pair{"--d-model", &d_model},
                                    std::pair{"--num-heads", &num_heads}}) {
    if (!value->has_value()) throw usage_error{std::string("numpy-experiment needs ") + name};
  }
  out.seed = static_cast<std::uint32_t>(*seed);
  out.tokens = static_cast<mha::Index>(*tokens);
  out.d_model = static_cast<mha::Index>(*d_model);
  out.num_heads = static_cast<mha::Index>(*num_heads);
  return out;
}

}  // namespace

int cmd_numpy_experiment(const std::vector<std::string>& args) {
  // float64 throughout (the request's default precision), as the course's numpy code.
  const mha::ExperimentRequest request =
      mha::read_experiment_request(parse_experiment_flags(args));
  mha::NumpyNormalStream stream(request.seed);
  const mha::ExperimentRun run = mha::run_experiment(stream, request);
  return write_response(mha::experiment_to_json(request, run)) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
