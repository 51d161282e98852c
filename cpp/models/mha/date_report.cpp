// The date model's JSON reports (date_report.hpp).
#include "mha/date_report.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mha/json_io.hpp"

namespace mha {
namespace {

using json = nlohmann::json;

/// L stacks of (h, rows, cols) -> nested arrays (L, h, rows, cols).
json stacks_to_json(const std::vector<HeadStack>& stacks) {
  json out = json::array();
  for (const auto& s : stacks) out.push_back(head_stack_to_json(s));
  return out;
}

json rounded(double x, int digits = 6) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

/// "cross layer 1 head 3".
std::string head_name(const HeadId& id) {
  return std::string(attention_kind_name(id.kind)) + " layer " + std::to_string(id.layer) +
         " head " + std::to_string(id.head);
}

/// The prunable head's mark, e.g. "prunable: the least useful head; switching it off costs 0.1
/// points of exact match" (`drop` a fraction).
std::string points_label(double drop) {
  char buf[128];
  const double points = std::round(drop * 1000.0) / 10.0;
  std::snprintf(buf, sizeof buf,
                "prunable: the least useful head; switching it off costs %g point%s of exact match",
                points, points == 1.0 ? "" : "s");
  return buf;
}

const char* const kGroups[] = {"year", "month", "day"};
const char* const kRoles[] = {"Y", "M", "D", "W", "."};
const char* const kOffsets[] = {"-2", "-1", "0", "+1", "+2", "bos"};

/// A cross head's role mass, field shares and tracking, added to `j`.
void add_cross_measures(const HeadReport& h, json& j) {
  json mass = json::object();
  for (std::size_t g = 0; g < 3; ++g) {
    for (std::size_t r = 0; r < 5; ++r) mass[kGroups[g]][kRoles[r]] = rounded(h.role_mass[g][r]);
  }
  j["role_mass"] = mass;
  j["year_share"] = rounded(h.role_mass[0][0]);
  j["month_share"] = rounded(h.role_mass[1][1]);
  j["day_share"] = rounded(h.role_mass[2][2]);
  json tracking = json::object();
  static const char* const fields[] = {"year", "month", "day", "all"};
  for (std::size_t g = 0; g < 4; ++g) {
    tracking[fields[g]] = h.tracking[g] ? json(rounded(*h.tracking[g])) : json();
  }
  j["tracking"] = tracking;
}

/// A self head's offset mass (and, encoder self, key role mass), added to `j`.
void add_self_measures(const HeadReport& h, json& j) {
  json mass = json::object();
  const std::size_t count = h.id.kind == AttentionKind::decoder_self ? 6 : 5;
  for (std::size_t k = 0; k < count; ++k) mass[kOffsets[k]] = rounded(h.offset_mass[k]);
  j["offset_mass"] = mass;
  if (h.id.kind == AttentionKind::encoder_self) {
    json keys = json::object();
    for (std::size_t r = 0; r < 5; ++r) keys[kRoles[r]] = rounded(h.key_role_mass[r]);
    j["key_role_mass"] = keys;
  }
}

json head_to_json(const HeadReport& h, double accuracy) {
  json j = {{"kind", attention_kind_name(h.id.kind)},
            {"layer", h.id.layer},
            {"head", h.id.head},
            {"label", h.label}};
  if (!h.type.empty()) {
    j["type"] = h.type;
    j["type_label"] = h.type_label;
  }
  if (h.id.kind == AttentionKind::cross) {
    add_cross_measures(h, j);
  } else {
    add_self_measures(h, j);
  }
  if (h.ablated_accuracy >= 0.0) {
    j["ablated_accuracy"] = rounded(h.ablated_accuracy);
    j["accuracy_drop"] = rounded(accuracy - h.ablated_accuracy);
  }
  return j;
}

/// "year_head": the cross head with the largest year share; "least_useful_head": the ablated
/// head whose removal costs least (the first of equals, in ev.heads order).
json checks_to_json(const DateEvaluation& ev) {
  const HeadReport* year_head = nullptr;
  const HeadReport* least_useful = nullptr;
  for (const HeadReport& h : ev.heads) {
    if (h.id.kind == AttentionKind::cross &&
        (year_head == nullptr || h.role_mass[0][0] > year_head->role_mass[0][0])) {
      year_head = &h;
    }
    if (h.ablated_accuracy >= 0.0 &&
        (least_useful == nullptr || h.ablated_accuracy > least_useful->ablated_accuracy)) {
      least_useful = &h;
    }
  }
  json checks = json::object();
  if (year_head != nullptr) {
    checks["year_head"] = {{"head", head_name(year_head->id)},
                           {"kind", attention_kind_name(year_head->id.kind)},
                           {"layer", year_head->id.layer},
                           {"index", year_head->id.head},
                           {"year_share", rounded(year_head->role_mass[0][0])},
                           {"at_least_80_percent", year_head->role_mass[0][0] >= 0.8}};
  }
  if (least_useful != nullptr) {
    const double drop = ev.accuracy() - least_useful->ablated_accuracy;
    checks["least_useful_head"] = {{"head", head_name(least_useful->id)},
                                   {"kind", attention_kind_name(least_useful->id.kind)},
                                   {"layer", least_useful->id.layer},
                                   {"index", least_useful->id.head},
                                   {"ablated_accuracy", rounded(least_useful->ablated_accuracy)},
                                   {"accuracy_drop", rounded(drop)},
                                   {"prunable", drop <= kPrunableDrop},
                                   {"prunable_label", points_label(drop)},
                                   {"prunable_max_drop", kPrunableDrop}};
  }
  return checks;
}

/// Claim `k` (0-based, date_head_claims' order) with its verdict in words.
json claim_to_json(const DateClaim& c, std::size_t k) {
  json j = {{"claim", c.claim},
            {"measure", c.measure},
            {"measured", c.measured},
            {"holds", c.holds},
            {"threshold", c.threshold}};
  std::string verdict = !c.measured ? "not measured (run without --no-ablation)"
                        : c.holds   ? "true"
                                    : "false";
  if (c.head) {
    j["head"] = head_name(*c.head);
    j["kind"] = attention_kind_name(c.head->kind);
    j["layer"] = c.head->layer;
    j["index"] = c.head->head;
    j["value"] = rounded(c.value);
    char numbers[96];
    if (k == 2) {
      std::snprintf(numbers, sizeof numbers, "switching it off costs %g points, at most %g allowed",
                    std::round(c.value * 1000.0) / 10.0, 100.0 * c.threshold);
    } else {
      std::snprintf(numbers, sizeof numbers,
                    k == 0 ? "day tracking %.2f, the claim needs below %.1f"
                           : "year tracking %.2f, the claim needs at least %.1f",
                    c.value, c.threshold);
    }
    verdict += " (" + head_name(*c.head) + ": " + numbers + ")";
  } else if (c.measured) {
    verdict += " (no head qualifies)";
  }
  j["statement"] = "Claim " + std::to_string(k + 1) + ", " + c.claim + ": " + verdict +
                   ". Measured: " + c.measure + ".";
  return j;
}

/// The wrong translations with their example's target and format.
json failures_to_json(const DateEvaluation& ev, const std::vector<DateExample>& examples) {
  json failures = json::array();
  for (const auto& f : ev.failures) {
    for (const auto& ex : examples) {
      if (ex.input == f.input) {
        failures.push_back(
            {{"input", f.input}, {"target", ex.target}, {"output", f.output}, {"format", ex.format}});
        break;
      }
    }
  }
  return failures;
}

}  // namespace

json date_translation_to_json(const DateModel& model, const DateTranslation& t, bool logits) {
  const Seq2SeqConfig& c = model.transformer().config();
  json out = {{"input", t.input},
              {"output", t.output},
              {"source_tokens", t.source_tokens},
              {"output_tokens", t.output_tokens},
              {"produced_eos", t.produced_eos},
              {"num_heads", c.num_heads},
              {"num_encoder_layers", c.num_encoder_layers},
              {"num_decoder_layers", c.num_decoder_layers},
              {"encoder_self", stacks_to_json(t.trace.encoder_self)},
              {"decoder_self", stacks_to_json(t.trace.decoder_self)},
              {"cross", stacks_to_json(t.trace.cross)}};
  if (logits) out["logits"] = matrix_to_json(t.trace.logits);
  return out;
}

std::vector<DateExample> parse_date_examples(std::string_view text, const std::string& name) {
  const json doc = parse_json_text(text);
  const json* list = &doc;
  if (doc.is_object() && doc.contains("examples")) list = &doc.at("examples");
  if (!list->is_array()) {
    throw parse_error(name +
                      " must hold an array of {input, target, format, roles} (or {\"examples\": "
                      "[...]})");
  }
  std::vector<DateExample> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& e = (*list)[i];
    DateExample ex;
    for (const auto& [key, target] :
         {std::pair{"input", &ex.input}, std::pair{"target", &ex.target},
          std::pair{"format", &ex.format}, std::pair{"roles", &ex.roles}}) {
      if (!e.is_object() || !e.contains(key) || !e.at(key).is_string()) {
        throw parse_error(name + ": example " + std::to_string(i) + " needs a string \"" + key +
                          "\"");
      }
      *target = e.at(key).get<std::string>();
    }
    out.push_back(std::move(ex));
  }
  return out;
}

json date_evaluation_to_json(const DateEvaluation& ev, const DateEvaluationSource& source) {
  json per_format = json::object();
  for (const auto& [format, counts] : ev.per_format) {
    per_format[format] = {{"examples", counts.first},
                          {"correct", counts.second},
                          {"accuracy", rounded(double(counts.second) / double(counts.first))}};
  }
  json heads = json::array();
  for (const HeadReport& h : ev.heads) heads.push_back(head_to_json(h, ev.accuracy()));
  json claims = json::array();
  const std::vector<DateClaim> measured = date_head_claims(ev);
  for (std::size_t k = 0; k < measured.size(); ++k) claims.push_back(claim_to_json(measured[k], k));
  return {{"model",
           {{"file", source.model_file},
            {"xxh64", source.model.checksum()},
            {"config", json::parse(source.model.config_json())}}},
          {"heldout", source.heldout_file},
          {"examples", ev.examples},
          {"correct", ev.correct},
          {"accuracy", rounded(ev.accuracy())},
          {"per_format", per_format},
          {"failures", failures_to_json(ev, source.examples)},
          {"heads", heads},
          {"checks", checks_to_json(ev)},
          {"claims", claims},
          {"seconds",
           {{"translate_all", rounded(ev.seconds, 3)},
            {"ablation_all_heads", rounded(ev.ablation_seconds, 3)}}}};
}

}  // namespace mha
