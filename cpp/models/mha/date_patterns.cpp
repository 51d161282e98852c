// Head patterns of the date model (date_patterns.hpp).
#include "mha/date_patterns.hpp"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "mha/patterns_io.hpp"

namespace mha {
namespace {

using json = nlohmann::json;

struct Stacks {
  std::string kind;
  const std::vector<HeadStack>* layers;
  HeadTokens tokens;  ///< key tokens, and query tokens for cross-attention
};

/// Why positional scores of cross-attention need care (docs/patterns.md).
const char* const kCrossNote =
    "cross-attention: queries are decoder positions and keys are input characters, so the "
    "positional scores (previous_token, diagonal, local_band, mean_distance) and their labels "
    "compare indices of two different sequences, and duplicate_token and induction compare "
    "decoder tokens with input characters at earlier indices";

/// `tokens` when they name every query (`rows`) or every key of `layers`, else none (the token
/// scores are then null rather than an error).
std::vector<std::string> if_fits(const std::vector<std::string>& tokens,
                                 const std::vector<HeadStack>& layers, bool rows) {
  if (layers.empty()) return {};
  const Index count = rows ? layers[0].rows() : layers[0].cols();
  return static_cast<Index>(tokens.size()) == count ? tokens : std::vector<std::string>{};
}

std::vector<Stacks> stacks_of(const DateTranslation& t, const std::vector<std::string>& decoder) {
  const auto& tr = t.trace;
  return {
      {"encoder_self", &tr.encoder_self, {if_fits(t.source_tokens, tr.encoder_self, false), {}}},
      {"decoder_self", &tr.decoder_self, {if_fits(decoder, tr.decoder_self, false), {}}},
      {"cross",
       &tr.cross,
       {if_fits(t.source_tokens, tr.cross, false), if_fits(decoder, tr.cross, true)}}};
}

std::vector<std::string> decoder_tokens(const DateTranslation& t) {
  std::vector<std::string> out = {"<bos>"};
  const Index steps = t.trace.decoder_self.empty() ? 0 : t.trace.decoder_self[0].rows();
  for (Index i = 1; i < steps && static_cast<std::size_t>(i - 1) < t.output_tokens.size(); ++i) {
    out.push_back(t.output_tokens[static_cast<std::size_t>(i - 1)]);
  }
  return out;
}

}  // namespace

json date_model_patterns(const DateModel& model, const std::string& text) {
  const DateTranslation t = model.translate(text);
  const std::vector<std::string> dec = decoder_tokens(t);
  json layers = json::array();
  for (const Stacks& s : stacks_of(t, dec)) {
    for (std::size_t l = 0; l < s.layers->size(); ++l) {
      json j =
          layer_patterns_to_json((*s.layers)[l], s.kind + " layer " + std::to_string(l), s.tokens);
      j["kind"] = s.kind;
      j["layer"] = l;
      if (s.kind == "cross") j["note"] = kCrossNote;
      layers.push_back(std::move(j));
    }
  }
  return {{"input", t.input},
          {"output", t.output},
          {"source_tokens", t.source_tokens},
          {"decoder_tokens", dec},
          {"thresholds", thresholds_to_json({})},
          {"layers", layers}};
}

json date_model_patterns_mean(const DateModel& model, const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw value_error("date_model_patterns_mean needs at least one input");
  // (kind, layer, head) -> sums
  struct Acc {
    std::vector<double> sum, base;
    std::vector<Index> count, base_count;
    std::map<std::string, Index> labels;
  };
  const auto fields = score_fields();
  std::map<std::tuple<int, std::size_t, Index>, Acc> acc;
  std::vector<std::string> kinds;
  for (const std::string& text : inputs) {
    DateTranslation t;
    try {
      t = model.translate(text);
    } catch (const error& e) {
      throw value_error("input \"" + text + "\": " + e.what());
    }
    const std::vector<std::string> dec = decoder_tokens(t);
    const auto stacks = stacks_of(t, dec);
    for (std::size_t k = 0; k < stacks.size(); ++k) {
      for (std::size_t l = 0; l < stacks[k].layers->size(); ++l) {
        for (const HeadScores& hs : score_heads((*stacks[k].layers)[l], stacks[k].tokens)) {
          Acc& a = acc[{static_cast<int>(k), l, hs.head}];
          a.sum.resize(fields.size());
          a.base.resize(fields.size());
          a.count.resize(fields.size());
          a.base_count.resize(fields.size());
          for (std::size_t f = 0; f < fields.size(); ++f) {
            if (const auto& v = hs.scores.*fields[f]) {
              a.sum[f] += *v;
              ++a.count[f];
            }
            if (const auto& v = hs.uniform_baseline.*fields[f]) {
              a.base[f] += *v;
              ++a.base_count[f];
            }
          }
          for (const auto& label : hs.labels) ++a.labels[label];
        }
      }
    }
  }
  static const char* kind_names[] = {"encoder_self", "decoder_self", "cross"};
  json heads = json::array();
  for (const auto& [id, a] : acc) {
    HeadScoreValues mean, base;
    for (std::size_t f = 0; f < fields.size(); ++f) {
      if (a.count[f] > 0) mean.*fields[f] = a.sum[f] / double(a.count[f]);
      if (a.base_count[f] > 0) base.*fields[f] = a.base[f] / double(a.base_count[f]);
    }
    json share = json::object();
    for (const auto& [label, count] : a.labels)
      share[label] = double(count) / double(inputs.size());
    json mean_json = scores_to_json(mean);
    json base_json = scores_to_json(base);
    mean_json.erase("stripe_key");
    base_json.erase("stripe_key");
    json head = {{"kind", kind_names[std::get<0>(id)]},
                 {"layer", std::get<1>(id)},
                 {"head", std::get<2>(id)},
                 {"labels", head_labels(mean, base)},
                 {"label_share", share},
                 {"mean_scores", mean_json},
                 {"mean_uniform_baseline", base_json}};
    if (std::get<0>(id) == 2) head["note"] = kCrossNote;
    heads.push_back(std::move(head));
  }
  return {{"inputs", inputs.size()}, {"thresholds", thresholds_to_json({})}, {"heads", heads}};
}

}  // namespace mha
