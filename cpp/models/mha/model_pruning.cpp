// The trained models' heads as experiments (model_pruning.hpp).
#include "mha/model_pruning.hpp"

#include <cmath>
#include <limits>

#include "mha/utf8.hpp"

namespace mha {

namespace {

Index code_points(const std::string& s) {
  Index n = 0;
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    const std::size_t len = utf8_decode(s, i, &cp);
    i += len == 0 ? 1 : len;
  }
  return n;
}

/// Items of `all` in half `half`: even indices choose, odd ones measure.
template <class T>
std::vector<T> half_of(const std::vector<T>& all, PruneHalf half) {
  std::vector<T> out;
  for (std::size_t k = half == PruneHalf::selection ? 0 : 1; k < all.size(); k += 2) {
    out.push_back(all[k]);
  }
  return out;
}

template <class Head>
std::vector<Head> pick(const std::vector<Head>& heads, const std::vector<Index>& off) {
  std::vector<Head> out;
  out.reserve(off.size());
  for (const Index k : off) out.push_back(heads[static_cast<std::size_t>(k)]);
  return out;
}

std::optional<Index> json_index(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<Index>();
}

/// Runs read(); a value_error or limit_error it throws (bad text, too long an input) is thrown
/// again, of the same type, with `item` ("text 3", "example 7") before its message.
template <class Read>
auto naming(const std::string& item, Read&& read) {
  try {
    return read();
  } catch (const value_error& e) {
    throw value_error(item + ": " + e.what());
  } catch (const limit_error& e) {
    throw limit_error(item + ": " + e.what());
  }
}

}  // namespace

double EnglishLoss::per_character() const {
  return characters == 0 ? std::numeric_limits<double>::quiet_NaN()
                         : nats / static_cast<double>(characters);
}

std::vector<LMHead> english_lm_heads(const EnglishLM& model) {
  std::vector<LMHead> heads;
  for (Index l = 0; l < model.config().num_layers; ++l) {
    for (Index h = 0; h < model.config().num_heads; ++h) heads.push_back(LMHead{l, h});
  }
  return heads;
}

std::string head_name(const LMHead& head) {
  return "L" + std::to_string(head.layer) + " H" + std::to_string(head.head);
}

std::string head_name(const HeadId& head) {
  return std::string(attention_kind_name(head.kind)) + " L" + std::to_string(head.layer) + " H" +
         std::to_string(head.head);
}

EnglishLoss english_heldout_loss(const EnglishLM& model, const std::vector<std::string>& texts,
                                 const std::vector<LMHead>& ablated) {
  EnglishLoss loss;
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const std::string& text = texts[k];
    const EnglishTokens t = naming("text " + std::to_string(k), [&] { return model.encode(text); });
    if (t.truncated_tokens > 0 || t.ids.size() < 2) {
      loss.skipped += 1;
      continue;
    }
    const std::vector<double> lp =
        EnglishLM::next_token_logprobs(model.forward(t.ids, ablated), t.ids);
    for (const double x : lp) loss.nats -= x;
    loss.tokens += static_cast<Index>(lp.size());
    loss.characters += code_points(text);
    loss.texts += 1;
  }
  return loss;
}

double date_exact_match(const DateModel& model, const std::vector<DateExample>& examples,
                        const Ablation& ablation) {
  if (examples.empty()) return 0.0;
  Index correct = 0;
  for (const DateExample& ex : examples) {
    correct += model.reproduces(ex.input, ex.target, ablation) ? 1 : 0;
  }
  return static_cast<double>(correct) / static_cast<double>(examples.size());
}

PruneCurve prune_english_lm(const EnglishLM& model, const std::vector<std::string>& texts) {
  // Every text read once first, so that an error names its index in `texts`, not in its half.
  for (std::size_t k = 0; k < texts.size(); ++k) {
    naming("text " + std::to_string(k), [&] { return model.encode(texts[k]); });
  }
  const std::vector<LMHead> heads = english_lm_heads(model);
  const std::vector<std::string> halves[2] = {half_of(texts, PruneHalf::selection),
                                              half_of(texts, PruneHalf::measurement)};
  PruneCurve curve;
  curve.metric = "loss_per_character";
  curve.lower_is_better = true;
  for (const LMHead& h : heads) curve.heads.push_back(head_name(h));
  const EnglishLoss all_on[2] = {english_heldout_loss(model, halves[0]),
                                 english_heldout_loss(model, halves[1])};
  if (all_on[0].texts == 0 || all_on[1].texts == 0) {
    throw value_error("pruning the English model needs at least one text that fits " +
                      std::to_string(model.config().max_len) + " tokens in each half (" +
                      std::to_string(all_on[0].texts) + " and " + std::to_string(all_on[1].texts) +
                      " of " + std::to_string(texts.size()) + " texts)");
  }
  curve.selection_items = all_on[0].texts;
  curve.measurement_items = all_on[1].texts;
  curve.steps = greedy_prune(
      static_cast<Index>(heads.size()),
      [&](const std::vector<Index>& off, PruneHalf half) {
        const auto k = static_cast<std::size_t>(half == PruneHalf::selection ? 0 : 1);
        if (off.empty()) return all_on[k].per_character();
        return english_heldout_loss(model, halves[k], pick(heads, off)).per_character();
      },
      true);
  return curve;
}

PruneCurve prune_date_model(const DateModel& model, const std::vector<DateExample>& examples) {
  if (examples.size() < 2) {
    throw value_error("pruning the date model needs at least 2 examples (one a half), got " +
                      std::to_string(examples.size()));
  }
  for (std::size_t k = 0; k < examples.size(); ++k) {
    naming("example " + std::to_string(k), [&] { return model.source_ids(examples[k].input); });
  }
  const std::vector<HeadId> heads = date_model_heads(model);
  const std::vector<DateExample> halves[2] = {half_of(examples, PruneHalf::selection),
                                              half_of(examples, PruneHalf::measurement)};
  PruneCurve curve;
  curve.metric = "exact_match";
  curve.lower_is_better = false;
  for (const HeadId& h : heads) curve.heads.push_back(head_name(h));
  curve.selection_items = static_cast<Index>(halves[0].size());
  curve.measurement_items = static_cast<Index>(halves[1].size());
  curve.steps = greedy_prune(
      static_cast<Index>(heads.size()),
      [&](const std::vector<Index>& off, PruneHalf half) {
        const auto k = static_cast<std::size_t>(half == PruneHalf::selection ? 0 : 1);
        return date_exact_match(model, halves[k], pick(heads, off));
      },
      false);
  return curve;
}

nlohmann::json prune_curve_to_json(const PruneCurve& curve, const std::string& model_name,
                                   const std::string& checksum, const std::string& kind) {
  nlohmann::json steps = nlohmann::json::array();
  for (const PruneStep& s : curve.steps) {
    steps.push_back(
        {{"heads_left", s.heads_left},
         {"removed", s.removed ? nlohmann::json(curve.heads[static_cast<std::size_t>(*s.removed)])
                               : nlohmann::json(nullptr)},
         {"value", s.value},
         {"selection_value", s.selection_value}});
  }
  return {{"model", model_name},
          {"checksum", checksum},
          {"kind", kind},
          {"metric", curve.metric},
          {"lower_is_better", curve.lower_is_better},
          {"heads", curve.heads},
          {"selection_items", curve.selection_items},
          {"measurement_items", curve.measurement_items},
          {"protocol",
           "greedy: at each step the head whose removal leaves the best " + curve.metric +
               " on the selection half (held-out items 0, 2, 4, ...) is removed; the value is "
               "measured on the measurement half (items 1, 3, 5, ...)"},
          {"steps", steps}};
}

nlohmann::json prune_model_file(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                const std::optional<std::vector<std::string>>& texts,
                                const std::optional<std::vector<DateExample>>& examples) {
  const std::string kind = model_file_kind(bytes);
  if (kind == "english") {
    if (!texts) throw value_error(name + " is an English model: it is pruned on held-out texts");
    const EnglishLM m = EnglishLM::load(bytes);
    return prune_curve_to_json(prune_english_lm(m, *texts), name, m.checksum(), kind);
  }
  if (!examples) throw value_error(name + " is a date model: it is pruned on held-out examples");
  const DateModel m = DateModel::load(bytes);
  return prune_curve_to_json(prune_date_model(m, *examples), name, m.checksum(), kind);
}

nlohmann::json model_summary_to_json(const ModelSummary& s) {
  return {{"kind", s.kind},
          {"num_layers", s.num_layers},
          {"num_heads", s.num_heads},
          {"d_model", s.d_model},
          {"heads", s.heads},
          {"parameters", s.parameters},
          {"attention_parameters", s.attention_parameters},
          {"position_bias_parameters", s.position_bias_parameters},
          {"step", s.step ? nlohmann::json(*s.step) : nlohmann::json(nullptr)},
          {"checksum", s.checksum}};
}

std::string model_file_kind(const std::vector<std::uint8_t>& bytes) {
  const Safetensors st = Safetensors::parse(bytes.data(), bytes.size());
  const auto it = st.metadata().find("format");
  const std::string format = it == st.metadata().end() ? "" : it->second;
  if (format == EnglishLM::format_name) return "english";
  if (format == DateModel::format_name) return "date";
  const auto quoted = [](const std::string& x) { return nlohmann::json(x).dump(); };
  throw parse_error("not a model of mha-lab: format " + quoted(format) + " (expected " +
                    quoted(EnglishLM::format_name) + " or " + quoted(DateModel::format_name) + ")");
}

ModelSummary describe_model_file(const std::vector<std::uint8_t>& bytes) {
  ModelSummary s;
  s.kind = model_file_kind(bytes);
  std::string training;
  if (s.kind == "english") {
    const EnglishLM m = EnglishLM::load(bytes);
    const EnglishLMConfig& c = m.config();
    s.num_layers = c.num_layers;
    s.num_heads = c.num_heads;
    s.d_model = c.d_model;
    s.heads = c.num_layers * c.num_heads;
    s.checksum = m.checksum();
    training = m.training_json();
  } else {
    const DateModel m = DateModel::load(bytes);
    const Seq2SeqConfig& c = m.transformer().config();
    s.num_layers = c.num_encoder_layers + c.num_decoder_layers;
    s.num_heads = c.num_heads;
    s.d_model = c.d_model;
    s.heads = (c.num_encoder_layers + 2 * c.num_decoder_layers) * c.num_heads;
    s.checksum = m.checksum();
    training = m.training_json();
  }
  const Safetensors st = Safetensors::parse(bytes.data(), bytes.size());
  for (const auto& [name, info] : st.tensors()) {
    const auto n = static_cast<Index>(info.elements());
    s.parameters += n;
    if (name.find("in_proj_") != std::string::npos || name.find("out_proj.") != std::string::npos) {
      s.attention_parameters += n;
    }
    if (name.find("relative_bias") != std::string::npos) s.position_bias_parameters += n;
  }
  if (!training.empty()) {
    const nlohmann::json t = nlohmann::json::parse(training, nullptr, false);
    if (t.is_object())
      s.step = json_index(t, "step") ? json_index(t, "step") : json_index(t, "steps");
  }
  return s;
}

}  // namespace mha
