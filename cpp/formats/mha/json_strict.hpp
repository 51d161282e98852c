// Strict JSON parsing for outside data (requests, safetensors headers, model metadata), with
// nlohmann-json: one document, nothing trailing, and no duplicate keys (nlohmann would keep the
// last of two equal keys silently, which could hide a second value from every check).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "mha/errors.hpp"

namespace mha {

/// Parses `text` as one JSON document. `what` names it in messages ("the request",
/// "safetensors header", ...). Throws parse_error "<what> is malformed JSON: <nlohmann's reason,
/// with line and column>" or "<what> has a duplicate key \"<key>\"".
nlohmann::json parse_json_strict(std::string_view text, const std::string& what);

}  // namespace mha
