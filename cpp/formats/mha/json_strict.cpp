// Strict JSON parsing. See json_strict.hpp.
#include "mha/json_strict.hpp"

#include <set>
#include <vector>

namespace mha {

nlohmann::json parse_json_strict(std::string_view text, const std::string& what) {
  using json = nlohmann::json;
  // One set of seen keys per open object.
  std::vector<std::set<std::string>> open_objects;
  json::parser_callback_t reject_duplicates = [&](int /*depth*/, json::parse_event_t event,
                                                  json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second) {
        throw parse_error(what + " has a duplicate key \"" + key + "\"");
      }
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), reject_duplicates);
  } catch (const json::exception& e) {
    // nlohmann's text starts with "[json.exception.parse_error.101] "; keep what follows.
    std::string msg = e.what();
    const auto close = msg.find("] ");
    if (msg.rfind("[json.exception.", 0) == 0 && close != std::string::npos) {
      msg = msg.substr(close + 2);
    }
    throw parse_error(what + " is malformed JSON: " + msg);
  }
}

}  // namespace mha
