// `mha probes induction|pronoun [--seed N] [--count N]` (docs/cli.md, docs/patterns.md "Head
// report card"): writes the head report card's probes as JSON (mha::induction_probe,
// mha::pronoun_probe), to be run through any model and scored by `mha patterns --report --probes`.
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/probes.hpp"

namespace mha_cli {

int cmd_probes(const std::vector<std::string>& args) {
  const Options o = parse_options(args, {"--seed", "--count"}, {}, "probes");
  if (o.positional.size() != 1 ||
      (o.positional[0] != "induction" && o.positional[0] != "pronoun")) {
    throw usage_error{"probes needs one kind: induction or pronoun"};
  }
  const bool induction = o.positional[0] == "induction";
  std::uint32_t seed = 0;
  if (const auto s = single(o, "--seed")) {
    const auto v = parse_unsigned(*s, 4294967295u);
    if (!v) throw usage_error{"--seed must be a whole number in [0, 4294967295], got " + in_quotes(*s)};
    seed = static_cast<std::uint32_t>(*v);
  }
  int count = induction ? 10 : 40;
  if (const auto c = single(o, "--count")) {
    const auto v = parse_unsigned(*c, 10000);
    if (!v || *v == 0) throw usage_error{"--count must be a whole number in [1, 10000], got " + in_quotes(*c)};
    count = static_cast<int>(*v);
  }
  const nlohmann::json out =
      induction ? mha::induction_probe(seed, count) : mha::pronoun_probe(seed, count);
  return write_response(out) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
