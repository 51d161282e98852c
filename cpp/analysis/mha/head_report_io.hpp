// The head report card as JSON and as a text table (`mha patterns --report`, mha_lab.head_report,
// mod.headReport; docs/patterns.md "Head report card").
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "mha/head_report.hpp"

namespace mha {

/// {"by_word", "examples", "layers", "num_heads", "probes", "nearer_name" (null without probes),
///  "kinds": [score names], "heads": [{"layer", "head", "labels", "scores": [{"name",
///  "protocol", "figure" (null when none), "value", "chance", "count", "offset"?}]}],
///  "best": [{"kind", "layer", "head", "value", "chance", "offset"?}]}; a value without rows is null.
nlohmann::json head_report_to_json(const HeadReportCard& card);

/// The card as a table: one line per head (value and, in parentheses, chance, 3 decimals; "-"
/// without rows), the best head of each kind with its protocol and the paper's figure.
std::string head_report_table(const HeadReportCard& card);

}  // namespace mha
