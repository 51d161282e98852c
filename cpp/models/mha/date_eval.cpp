// The date model's evaluation and head analysis: exact-match accuracy, what each head attends
// to, and the accuracy with each head ablated (date_model.hpp "Evaluation and head analysis").
// Shape legend: S = source characters, T = decoder steps, h = num_heads, L = layers.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "mha/date_model.hpp"

namespace mha {

// ------------------------------------------------------------------------------------------------
// Evaluation

namespace {

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

/// Output group of ISO position t: 0 year (0-3), 1 month (5-6), 2 day (8-9), -1 otherwise.
int output_group(Index t) {
  if (t >= 0 && t <= 3) return 0;
  if (t == 5 || t == 6) return 1;
  if (t == 8 || t == 9) return 2;
  return -1;
}

int role_index(char r) {
  switch (r) {
    case 'Y':
      return 0;
    case 'M':
      return 1;
    case 'D':
      return 2;
    case 'W':
      return 3;
    default:
      return 4;
  }
}

std::string percent(double share) {
  return std::to_string(static_cast<int>(std::lround(100.0 * share))) + "%";
}

/// Running sums for one head.
struct HeadSums {
  RoleMass role_mass{};
  std::array<double, 3> role_rows{};  ///< queries counted per group
  std::array<double, 6> offset_mass{};
  double offset_rows = 0;
  std::array<double, 5> key_role_mass{};
  /// Regression sums of attention centre (y) on field centre (x), per group and [3] all groups.
  struct Fit {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    void add(double x, double y) {
      n += 1;
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    /// The least-squares slope, or empty when x has (almost) no variance.
    std::optional<double> slope() const {
      if (n < 2) return std::nullopt;
      const double var = sxx - sx * sx / n;
      if (var <= 1e-9 * n) return std::nullopt;
      return (sxy - sx * sy / n) / var;
    }
  };
  std::array<Fit, 4> tracking{};
};

void add_key_roles(HeadSums& s, const HeadStack& w, Index head, const std::string& roles) {
  for (Index i = 0; i < w.rows(); ++i) {
    for (Index j = 0; j < w.cols(); ++j) {
      s.key_role_mass[static_cast<std::size_t>(role_index(roles[static_cast<std::size_t>(j)]))] +=
          w(head, i, j);
    }
  }
}

void add_self(HeadSums& s, const HeadStack& w, Index head, bool decoder) {
  for (Index i = 0; i < w.rows(); ++i) {
    for (Index k = -2; k <= 2; ++k) {
      const Index j = i + k;
      if (j >= 0 && j < w.cols()) s.offset_mass[static_cast<std::size_t>(k + 2)] += w(head, i, j);
    }
    if (decoder) s.offset_mass[5] += w(head, i, 0);
    s.offset_rows += 1;
  }
}

void add_cross(HeadSums& s, const HeadStack& w, Index head, const std::string& roles) {
  // Centre (mean character index) of each field's input characters; -1 when absent.
  std::array<double, 3> centre{-1, -1, -1};
  for (std::size_t g = 0; g < 3; ++g) {
    double sum = 0, count = 0;
    for (std::size_t j = 0; j < roles.size(); ++j) {
      if (role_index(roles[j]) == static_cast<int>(g)) {
        sum += double(j);
        count += 1;
      }
    }
    if (count > 0) centre[g] = sum / count;
  }
  for (Index t = 0; t < w.rows(); ++t) {
    const int g = output_group(t);
    if (g < 0) continue;
    std::array<double, 5> mass{};
    double at = 0, total = 0;  // attention centre of row t
    for (Index j = 0; j < w.cols(); ++j) {
      mass[static_cast<std::size_t>(role_index(roles[static_cast<std::size_t>(j)]))] +=
          w(head, t, j);
      at += double(j) * w(head, t, j);
      total += w(head, t, j);
    }
    const auto gi = static_cast<std::size_t>(g);
    if (centre[gi] >= 0 && total > 0) {
      s.tracking[gi].add(centre[gi], at / total);
      s.tracking[3].add(centre[gi], at / total);
    }
    for (std::size_t r = 0; r < 5; ++r) s.role_mass[static_cast<std::size_t>(g)][r] += mass[r];
    s.role_rows[static_cast<std::size_t>(g)] += 1;
  }
}

std::string self_label(const std::array<double, 6>& m, bool decoder) {
  static const char* names[] = {"two characters back", "the previous character", "itself",
                                "the next character",  "two characters ahead",   "<bos>"};
  std::size_t best = 0;
  for (std::size_t k = 1; k < (decoder ? 6u : 5u); ++k) {
    if (m[k] > m[best]) best = k;
  }
  if (decoder && best == 3) best = 1;  // never happens (causal), keeps the label honest
  const std::string head = m[best] >= 0.5 ? "attends to " : "spread out; most on ";
  return head + names[best] + ": " + percent(m[best]);
}

std::string cross_label(const RoleMass& m) {
  // The fields (year, month, day) whose writing rows put at least kReadsField of their attention
  // on that field's input characters; the label says what the percentage is a share of.
  static const char* groups[] = {"year", "month", "day"};
  std::vector<std::size_t> strong;
  std::size_t best = 0;
  for (std::size_t g = 0; g < 3; ++g) {
    if (m[g][g] >= kReadsField) strong.push_back(g);
    if (m[g][g] > m[best][best]) best = g;
  }
  const auto share = [&](std::size_t g) {
    return percent(m[g][g]) + " of the attention of the rows writing the " + groups[g] +
           " falls on the input's " + groups[g];
  };
  if (strong.empty()) return std::string("spread out; at most ") + share(best);
  if (strong.size() == 1)
    return std::string("reads the ") + groups[strong[0]] + ": " + share(strong[0]);
  std::string label = "reads the field being written: of the attention of the rows writing each ";
  if (strong.size() == 2) {
    label = std::string("reads the ") + groups[strong[0]] + " and the " + groups[strong[1]] +
            ": of the attention of the rows writing each ";
  }
  label += "field, ";
  for (std::size_t k = 0; k < strong.size(); ++k) {
    const std::string g = groups[strong[k]];
    label += k == 0 ? percent(m[strong[k]][strong[k]]) + " falls on the input's " + g
                    : ", " + percent(m[strong[k]][strong[k]]) + " on its " + g;
  }
  return label;
}

}  // namespace

std::vector<HeadId> date_model_heads(const DateModel& model) {
  const Seq2SeqConfig& c = model.transformer().config();
  std::vector<HeadId> heads;
  for (const auto kind :
       {AttentionKind::encoder_self, AttentionKind::decoder_self, AttentionKind::cross}) {
    const Index layers =
        kind == AttentionKind::encoder_self ? c.num_encoder_layers : c.num_decoder_layers;
    for (Index l = 0; l < layers; ++l) {
      for (Index i = 0; i < c.num_heads; ++i) heads.push_back(HeadId{kind, l, i});
    }
  }
  return heads;
}

DateEvaluation evaluate_date_model(const DateModel& model, const std::vector<DateExample>& examples,
                                   bool ablate) {
  const std::vector<HeadId> heads = date_model_heads(model);
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const auto chars = DateModel::characters(examples[e].input).size();
    if (chars != examples[e].roles.size()) {
      throw value_error("example " + std::to_string(e) + " (" + in_quotes(examples[e].input) +
                        ") has " + std::to_string(chars) + " characters but " +
                        std::to_string(examples[e].roles.size()) + " roles");
    }
  }

  using steady = std::chrono::steady_clock;
  const auto since = [](steady::time_point start) {
    return std::chrono::duration<double>(steady::now() - start).count();
  };
  DateEvaluation ev;
  std::vector<HeadSums> sums(heads.size());
  std::vector<RowMatrixXf> memories;  // (S, d) per example, reused by decoder-side ablations
  const auto start = steady::now();
  for (const DateExample& ex : examples) {
    DateTranslation t = model.translate(ex.input);
    if (ablate) memories.push_back(model.transformer().encode(model.source_ids(ex.input)));
    const bool ok = t.output == ex.target;
    ev.examples += 1;
    ev.correct += ok ? 1 : 0;
    auto& fmt = ev.per_format[ex.format];
    fmt.first += 1;
    fmt.second += ok ? 1 : 0;
    for (std::size_t k = 0; k < heads.size(); ++k) {
      const HeadId& id = heads[k];
      const auto l = static_cast<std::size_t>(id.layer);
      switch (id.kind) {
        case AttentionKind::encoder_self:
          add_self(sums[k], t.trace.encoder_self[l], id.head, false);
          add_key_roles(sums[k], t.trace.encoder_self[l], id.head, ex.roles);
          break;
        case AttentionKind::decoder_self:
          add_self(sums[k], t.trace.decoder_self[l], id.head, true);
          break;
        case AttentionKind::cross:
          add_cross(sums[k], t.trace.cross[l], id.head, ex.roles);
          break;
      }
    }
    if (!ok) {
      t.trace = {};
      ev.failures.push_back(std::move(t));
    }
  }

  ev.seconds = since(start);
  const auto ablation_start = steady::now();
  for (std::size_t k = 0; k < heads.size(); ++k) {
    HeadReport report;
    report.id = heads[k];
    HeadSums& s = sums[k];
    if (heads[k].kind == AttentionKind::cross) {
      for (std::size_t g = 0; g < 3; ++g) {
        for (std::size_t r = 0; r < 5; ++r) {
          report.role_mass[g][r] = s.role_rows[g] > 0 ? s.role_mass[g][r] / s.role_rows[g] : 0.0;
        }
      }
      report.label = cross_label(report.role_mass);
      for (std::size_t g = 0; g < 4; ++g) report.tracking[g] = s.tracking[g].slope();
      report.type = report.tracking[3].value_or(0.0) >= kContentTracking ? "content" : "positional";
      report.type_label =
          report.type == "content"
              ? "content head: its attention moves with the field when the format puts it elsewhere"
              : "positional head: its attention stays on the same input positions whatever field "
                "is there";
      if (report.tracking[3]) {
        char slope[40];
        std::snprintf(slope, sizeof slope, " (tracking %.2f)", *report.tracking[3]);
        report.type_label += slope;
      }
    } else {
      for (std::size_t r = 0; r < 6; ++r) {
        report.offset_mass[r] = s.offset_rows > 0 ? s.offset_mass[r] / s.offset_rows : 0.0;
      }
      for (std::size_t r = 0; r < 5; ++r) {
        report.key_role_mass[r] = s.offset_rows > 0 ? s.key_role_mass[r] / s.offset_rows : 0.0;
      }
      report.label = self_label(report.offset_mass, heads[k].kind == AttentionKind::decoder_self);
      if (heads[k].kind == AttentionKind::encoder_self) {
        // A content head: more of its mass on one role (year, month, day, weekday) than on any
        // one relative position.
        static const char* role_names[] = {"the year", "the month", "the day", "the weekday"};
        std::size_t best_role = 0;
        for (std::size_t r = 1; r < 4; ++r) {
          if (report.key_role_mass[r] > report.key_role_mass[best_role]) best_role = r;
        }
        const double best_offset =
            *std::max_element(report.offset_mass.begin(), report.offset_mass.begin() + 5);
        if (report.key_role_mass[best_role] > best_offset) {
          report.label = std::string("looks at ") + role_names[best_role] + ": " +
                         percent(report.key_role_mass[best_role]);
        }
      }
    }
    if (ablate && !examples.empty()) {
      // Exact match through DateModel::reproduces (one teacher-forced pass per example, the
      // same verdict as greedy decoding); the encoder output is reused unless the head is in it.
      const Ablation ablation{heads[k]};
      const bool in_encoder = heads[k].kind == AttentionKind::encoder_self;
      Index correct = 0;
      for (std::size_t e = 0; e < examples.size(); ++e) {
        correct += model.reproduces(examples[e].input, examples[e].target, ablation,
                                    in_encoder ? RowMatrixXf() : memories[e])
                       ? 1
                       : 0;
      }
      report.ablated_accuracy = double(correct) / double(examples.size());
    }
    ev.heads.push_back(std::move(report));
  }
  ev.ablation_seconds = since(ablation_start);
  return ev;
}

// ------------------------------------------------------------------------------------------------
// Module 03's claims

std::vector<DateClaim> date_head_claims(const DateEvaluation& ev) {
  std::vector<DateClaim> out(3);
  DateClaim& day = out[0];
  day.claim = "a positional head that reads the day";
  day.threshold = kContentTracking;
  day.measure =
      "a cross head whose rows writing the day put at least 50% of their attention on the "
      "input's day, with a day tracking slope below 0.5 (its attention stays at the same input "
      "positions when the day moves)";
  DateClaim& year = out[1];
  year.claim = "a content head that copies the year";
  year.threshold = kContentTracking;
  year.measure =
      "a cross head whose rows writing the year put at least 50% of their attention on the "
      "input's year, with a year tracking slope of at least 0.5 (its attention moves with the "
      "year)";
  DateClaim& prune = out[2];
  prune.claim = "a mostly redundant head that could be pruned";
  prune.threshold = kPrunableDrop;
  prune.measure =
      "a head whose switching off lowers exact match on the held-out dates by at most 1 point";
  for (const HeadReport& h : ev.heads) {
    if (h.id.kind == AttentionKind::cross) {
      if (h.role_mass[2][2] >= kReadsField && h.tracking[2] &&
          (!day.head || *h.tracking[2] < day.value)) {
        day.head = h.id;
        day.value = *h.tracking[2];
      }
      if (h.role_mass[0][0] >= kReadsField && h.tracking[0] &&
          (!year.head || *h.tracking[0] > year.value)) {
        year.head = h.id;
        year.value = *h.tracking[0];
      }
    }
    if (h.ablated_accuracy >= 0.0) {
      const double drop = ev.accuracy() - h.ablated_accuracy;
      if (!prune.head || drop < prune.value) {
        prune.head = h.id;
        prune.value = drop;
      }
    }
  }
  day.measured = year.measured = true;
  day.holds = day.head && day.value < kContentTracking;
  year.holds = year.head && year.value >= kContentTracking;
  prune.measured = prune.head.has_value();
  prune.holds = prune.measured && prune.value <= kPrunableDrop;
  return out;
}

}  // namespace mha
