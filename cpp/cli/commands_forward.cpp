// `mha forward` (docs/cli.md): read the argument and the request, call the formats layer
// (parse_forward_request, run_forward, response_to_json), print the response.
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/json_io.hpp"

namespace mha_cli {

int cmd_forward(const std::vector<std::string>& args) {
  std::string file = "-";
  if (args.size() > 1) {
    throw usage_error{"forward takes at most one FILE, got " + std::to_string(args.size()) +
                      " arguments"};
  }
  if (args.size() == 1) {
    file = args[0];
    if (file.size() > 1 && file[0] == '-') {
      throw usage_error{"unknown option " + in_quotes(file) + " for forward"};
    }
  }
  const nlohmann::json request = mha::parse_json_text(read_input(file));
  const mha::ForwardRequest parsed = mha::parse_forward_request(request);
  const mha::AttentionResult result = mha::run_forward(parsed);
  return write_response(mha::response_to_json(result, parsed.config, parsed.parameter_count()))
             ? exit_ok
             : exit_internal;
}

}  // namespace mha_cli
