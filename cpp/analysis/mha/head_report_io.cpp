// The head report card as JSON and as a table (head_report_io.hpp).
#include "mha/head_report_io.hpp"

#include <algorithm>
#include <cstdio>

namespace mha {
namespace {

using json = nlohmann::json;

json optional_json(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

std::string fixed(const std::optional<double>& x) {
  if (!x) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", *x);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s + " ";
}

/// Short column names of the table, in the order of head_report_kinds().
const char* const kColumns[] = {"prev argmax", "prev mean", "band",      "offset",     "punct",
                                "first",       "induction", "same tok",  "coref"};

}  // namespace

json head_report_to_json(const HeadReportCard& card) {
  json heads = json::array();
  for (const HeadCard& h : card.heads) {
    json scores = json::array();
    for (const CardScore& s : h.scores) {
      json o = {{"name", s.name},
                {"protocol", s.protocol},
                {"figure", s.figure.empty() ? json(nullptr) : json(s.figure)},
                {"value", optional_json(s.value)},
                {"chance", optional_json(s.chance)},
                {"count", s.count}};
      if (s.offset) o["offset"] = *s.offset;
      scores.push_back(std::move(o));
    }
    heads.push_back({{"layer", h.layer}, {"head", h.head}, {"labels", h.labels}, {"scores", scores}});
  }
  json best = json::array();
  for (const BestHead& b : card.best) {
    json o = {{"kind", b.kind},
              {"layer", b.layer},
              {"head", b.head},
              {"value", b.value},
              {"chance", optional_json(b.chance)}};
    if (b.offset) o["offset"] = *b.offset;
    best.push_back(std::move(o));
  }
  return {{"by_word", card.by_word},   {"examples", card.examples},
          {"layers", card.num_layers}, {"num_heads", card.num_heads},
          {"probes", card.probes},     {"nearer_name", optional_json(card.nearer_name)},
          {"kinds", head_report_kinds()}, {"heads", heads},
          {"best", best}};
}

std::string head_report_table(const HeadReportCard& card) {
  std::string text = "head report card: " + std::to_string(card.examples) + " example" +
                     (card.examples == 1 ? "" : "s") + ", " + std::to_string(card.num_layers) +
                     " layers x " + std::to_string(card.num_heads) + " heads, scored " +
                     (card.by_word ? "by word" : "by token");
  if (card.probes > 0) {
    text += ", " + std::to_string(card.probes) + " pronoun probes (the nearer name is the "
            "antecedent in " + fixed(card.nearer_name) + ")";
  }
  text += "\nvalue (chance on the same rows)\n";
  const std::size_t width = 17;
  text += pad("head", 5);
  for (const char* c : kColumns) text += pad(c, width);
  text += "labels\n";
  for (const HeadCard& h : card.heads) {
    text += pad(std::to_string(h.layer) + "." + std::to_string(h.head), 5);
    for (const CardScore& s : h.scores) {
      std::string cell = fixed(s.value);
      if (s.value) cell += " (" + fixed(s.chance) + ")";
      if (s.offset) cell = (*s.offset >= 0 ? "+" : "") + std::to_string(*s.offset) + ":" + cell;
      text += pad(cell, width);
    }
    std::string labels;
    for (const auto& l : h.labels) labels += (labels.empty() ? "" : ",") + l;
    text += (labels.empty() ? "-" : labels) + "\n";
  }
  text += "best head of each kind:\n";
  for (const BestHead& b : card.best) {
    const CardScore* s = nullptr;
    for (const CardScore& x : card.heads.front().scores) {
      if (x.name == b.kind) s = &x;
    }
    text += "  " + pad(b.kind, 22) + pad(std::to_string(b.layer) + "." + std::to_string(b.head), 5) +
            fixed(b.value) + " (chance " + fixed(b.chance) + ")" +
            (b.offset ? ", offset " + std::to_string(*b.offset) : std::string()) + "\n";
    if (s) {
      text += "      protocol: " + s->protocol + "\n";
      if (!s->figure.empty()) text += "      paper: " + s->figure + "\n";
    }
  }
  return text;
}

}  // namespace mha
