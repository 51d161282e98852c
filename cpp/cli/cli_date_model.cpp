// What the date-model commands (`mha translate`, `mha date-eval`, `mha patterns --input` /
// `--heldout`) share: loading the model, the held-out examples and --limit (the model's file:
// model_path, cli_common.cpp).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/date_report.hpp"

namespace mha_cli {

mha::DateModel load_date_model(const std::string& file) {
  return load_model<mha::DateModel>(file, "date model");
}

std::vector<mha::DateExample> read_heldout(const std::string& file) {
  return mha::parse_date_examples(read_input(file), in_quotes(file));
}

std::size_t parse_limit(const std::string& limit) {
  const auto n = parse_unsigned(limit, std::numeric_limits<std::uint32_t>::max());
  if (!n || *n == 0) throw usage_error{"--limit must be a positive integer, got " + limit};
  return static_cast<std::size_t>(*n);
}

}  // namespace mha_cli
