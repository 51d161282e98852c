// `mha translate`, `mha date-eval` and `mha patterns` (docs/cli.md, docs/date-model.md,
// docs/patterns.md): read the arguments and files, call the models and analysis layers, print
// the JSON report.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "mha/date_model.hpp"
#include "mha/date_patterns.hpp"
#include "mha/json_io.hpp"
#include "mha/patterns_io.hpp"

namespace mha_cli {

namespace {

// -----------------------------------------------------------------------------------------------
// The date model (docs/date-model.md)

std::string date_model_path(const std::optional<std::string>& model) {
#ifdef MHA_DEFAULT_DATE_MODEL
  return model.value_or(MHA_DEFAULT_DATE_MODEL);
#else
  if (!model) throw usage_error{"--model FILE is required (this build has no default model)"};
  return *model;
#endif
}

mha::DateModel load_date_model(const std::string& file) {
  const std::string text = read_input(file);
  try {
    return mha::DateModel::load(std::vector<std::uint8_t>(text.begin(), text.end()));
  } catch (const mha::error& e) {
    throw input_error{"cannot load the date model " + in_quotes(file) + ": " + e.what()};
  }
}

/// "KIND:LAYER:HEAD", e.g. "cross:1:3".
mha::HeadId parse_head(const std::string& text) {
  const auto a = text.find(':');
  const auto b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) {
    throw usage_error{"--ablate takes KIND:LAYER:HEAD (e.g. cross:1:3), got " + in_quotes(text)};
  }
  mha::HeadId id;
  id.kind = mha::parse_attention_kind(text.substr(0, a));
  const auto layer = parse_unsigned(text.substr(a + 1, b - a - 1), 1u << 20);
  const auto head = parse_unsigned(text.substr(b + 1), 1u << 20);
  if (!layer || !head) {
    throw usage_error{"--ablate takes KIND:LAYER:HEAD with integers, got " + in_quotes(text)};
  }
  id.layer = static_cast<mha::Index>(*layer);
  id.head = static_cast<mha::Index>(*head);
  return id;
}

/// L stacks of (h, rows, cols) -> nested arrays (L, h, rows, cols).
nlohmann::json stacks_to_json(const std::vector<mha::HeadStack>& stacks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : stacks) out.push_back(mha::head_stack_to_json(s));
  return out;
}

}  // namespace

int cmd_translate(const std::vector<std::string>& args) {
  const Options o =
      parse_options(args, {"--model", "--ablate"}, {"--json", "--logits"}, "translate");
  if (o.positional.size() != 1) {
    throw usage_error{"translate takes one TEXT (quote it), got " +
                      std::to_string(o.positional.size())};
  }
  const bool json = has_flag(o, "--json");
  const bool logits = has_flag(o, "--logits");
  if (logits && !json) throw usage_error{"--logits needs --json"};
  mha::Ablation ablation;
  for (const auto& [key, value] : o.values) {
    if (key == "--ablate") ablation.push_back(parse_head(value));
  }
  const mha::DateModel model = load_date_model(date_model_path(single(o, "--model")));
  const mha::DateTranslation t = model.translate(o.positional[0], ablation, logits);
  if (!json) {
    const std::string line = t.output + "\n";
    const bool ok = std::fwrite(line.data(), 1, line.size(), stdout) == line.size();
    return ok && std::fflush(stdout) == 0 ? exit_ok : exit_internal;
  }
  const mha::Seq2SeqConfig& c = model.transformer().config();
  nlohmann::json out = {{"input", t.input},
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
  if (logits) out["logits"] = mha::matrix_to_json(t.trace.logits);
  return write_response(out) ? exit_ok : exit_internal;
}

namespace {

/// The held-out file: an array of {input, target, format, roles}, or an object holding one
/// such array under "examples".
std::vector<mha::DateExample> read_heldout(const std::string& file) {
  const nlohmann::json doc = mha::parse_json_text(read_input(file));
  const nlohmann::json* list = &doc;
  if (doc.is_object() && doc.contains("examples")) list = &doc.at("examples");
  if (!list->is_array()) {
    throw input_error{in_quotes(file) +
                      " must hold an array of {input, target, format, roles} (or {\"examples\": "
                      "[...]})"};
  }
  std::vector<mha::DateExample> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& e = (*list)[i];
    mha::DateExample ex;
    for (const auto& [key, target] :
         {std::pair{"input", &ex.input}, std::pair{"target", &ex.target},
          std::pair{"format", &ex.format}, std::pair{"roles", &ex.roles}}) {
      if (!e.is_object() || !e.contains(key) || !e.at(key).is_string()) {
        throw input_error{in_quotes(file) + ": example " + std::to_string(i) + " needs a string " +
                          in_quotes(key)};
      }
      *target = e.at(key).get<std::string>();
    }
    out.push_back(std::move(ex));
  }
  return out;
}

nlohmann::json rounded(double x, int digits = 6) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

}  // namespace

int cmd_date_eval(const std::vector<std::string>& args) {
  const Options o =
      parse_options(args, {"--model", "--heldout", "--limit"}, {"--no-ablation"}, "date-eval");
  if (!o.positional.empty()) {
    throw usage_error{"date-eval takes no positional argument, got " + in_quotes(o.positional[0])};
  }
  const std::string model_file = date_model_path(single(o, "--model"));
#ifdef MHA_DEFAULT_DATE_HELDOUT
  const std::string heldout_file = single(o, "--heldout").value_or(MHA_DEFAULT_DATE_HELDOUT);
#else
  const std::string heldout_file =
      single(o, "--heldout").value_or("tests/fixtures/date_heldout.json");
#endif
  const mha::DateModel model = load_date_model(model_file);
  std::vector<mha::DateExample> examples = read_heldout(heldout_file);
  if (const auto limit = single(o, "--limit")) {
    const auto n = parse_unsigned(*limit, std::numeric_limits<std::uint32_t>::max());
    if (!n || *n == 0) throw usage_error{"--limit must be a positive integer, got " + *limit};
    if (*n < examples.size()) examples.resize(static_cast<std::size_t>(*n));
  }
  const bool ablate = !has_flag(o, "--no-ablation");
  const mha::DateEvaluation ev = mha::evaluate_date_model(model, examples, ablate);

  nlohmann::json per_format = nlohmann::json::object();
  for (const auto& [format, counts] : ev.per_format) {
    per_format[format] = {{"examples", counts.first},
                          {"correct", counts.second},
                          {"accuracy", rounded(double(counts.second) / double(counts.first))}};
  }
  static const char* groups[] = {"year", "month", "day"};
  static const char* roles[] = {"Y", "M", "D", "W", "."};
  static const char* offsets[] = {"-2", "-1", "0", "+1", "+2", "bos"};
  nlohmann::json heads = nlohmann::json::array();
  const mha::HeadReport* year_head = nullptr;
  const mha::HeadReport* least_useful = nullptr;
  for (const mha::HeadReport& h : ev.heads) {
    nlohmann::json j = {{"kind", mha::attention_kind_name(h.id.kind)},
                        {"layer", h.id.layer},
                        {"head", h.id.head},
                        {"label", h.label}};
    if (h.id.kind == mha::AttentionKind::cross) {
      nlohmann::json mass = nlohmann::json::object();
      for (std::size_t g = 0; g < 3; ++g) {
        for (std::size_t r = 0; r < 5; ++r) mass[groups[g]][roles[r]] = rounded(h.role_mass[g][r]);
      }
      j["role_mass"] = mass;
      j["year_share"] = rounded(h.role_mass[0][0]);
      j["month_share"] = rounded(h.role_mass[1][1]);
      j["day_share"] = rounded(h.role_mass[2][2]);
      if (year_head == nullptr || h.role_mass[0][0] > year_head->role_mass[0][0]) year_head = &h;
    } else {
      nlohmann::json mass = nlohmann::json::object();
      const std::size_t count = h.id.kind == mha::AttentionKind::decoder_self ? 6 : 5;
      for (std::size_t k = 0; k < count; ++k) mass[offsets[k]] = rounded(h.offset_mass[k]);
      j["offset_mass"] = mass;
      if (h.id.kind == mha::AttentionKind::encoder_self) {
        nlohmann::json keys = nlohmann::json::object();
        for (std::size_t r = 0; r < 5; ++r) keys[roles[r]] = rounded(h.key_role_mass[r]);
        j["key_role_mass"] = keys;
      }
    }
    if (h.ablated_accuracy >= 0.0) {
      j["ablated_accuracy"] = rounded(h.ablated_accuracy);
      j["accuracy_drop"] = rounded(ev.accuracy() - h.ablated_accuracy);
      if (least_useful == nullptr || h.ablated_accuracy > least_useful->ablated_accuracy) {
        least_useful = &h;
      }
    }
    heads.push_back(j);
  }
  const auto head_name = [](const mha::HeadReport& h) {
    return std::string(mha::attention_kind_name(h.id.kind)) + " layer " +
           std::to_string(h.id.layer) + " head " + std::to_string(h.id.head);
  };
  nlohmann::json checks = nlohmann::json::object();
  if (year_head != nullptr) {
    checks["year_head"] = {{"head", head_name(*year_head)},
                           {"kind", mha::attention_kind_name(year_head->id.kind)},
                           {"layer", year_head->id.layer},
                           {"index", year_head->id.head},
                           {"year_share", rounded(year_head->role_mass[0][0])},
                           {"at_least_80_percent", year_head->role_mass[0][0] >= 0.8}};
  }
  if (least_useful != nullptr) {
    checks["least_useful_head"] = {
        {"head", head_name(*least_useful)},
        {"kind", mha::attention_kind_name(least_useful->id.kind)},
        {"layer", least_useful->id.layer},
        {"index", least_useful->id.head},
        {"ablated_accuracy", rounded(least_useful->ablated_accuracy)},
        {"accuracy_drop", rounded(ev.accuracy() - least_useful->ablated_accuracy)}};
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : ev.failures) {
    for (const auto& ex : examples) {
      if (ex.input == f.input) {
        failures.push_back({{"input", f.input},
                            {"target", ex.target},
                            {"output", f.output},
                            {"format", ex.format}});
        break;
      }
    }
  }
  const nlohmann::json out = {{"model",
                               {{"file", model_file},
                                {"xxh64", model.checksum()},
                                {"config", nlohmann::json::parse(model.config_json())}}},
                              {"heldout", heldout_file},
                              {"examples", ev.examples},
                              {"correct", ev.correct},
                              {"accuracy", rounded(ev.accuracy())},
                              {"per_format", per_format},
                              {"failures", failures},
                              {"heads", heads},
                              {"checks", checks},
                              {"seconds",
                               {{"translate_all", rounded(ev.seconds, 3)},
                                {"ablation_all_heads", rounded(ev.ablation_seconds, 3)}}}};
  return write_response(out) ? exit_ok : exit_internal;
}

namespace {

/// A score as the table prints it: 3 decimals, "-" when the score has no value (null).
std::string table_score(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v.get<double>());
  return buf;
}

/// `mha patterns --format table`: per layer, one line per head with its labels and scores (the
/// JSON's layers, same numbers, 3 decimals), then the heads' Jensen-Shannon distances.
std::string patterns_table(const nlohmann::json& out) {
  static const std::vector<std::pair<const char*, const char*>> columns = {
      {"previous_token", "prev"},       {"diagonal", "diag"},
      {"local_band", "band"},           {"vertical_stripe", "stripe"},
      {"first_token", "first"},         {"mean_distance", "dist"},
      {"entropy_bits", "entropy"},      {"max_weight", "max"},
      {"duplicate_token", "dup"},       {"induction", "induct"},
      {"punctuation", "punct"}};
  std::string text;
  auto pad = [](std::string s, std::size_t width) {
    if (s.size() < width) s.append(width - s.size(), ' ');
    return s + " ";
  };
  for (const auto& layer : out.at("layers")) {
    const auto& heads = layer.at("heads");
    text += layer.at("name").get<std::string>() + ": " + std::to_string(heads.size()) +
            " heads, n = " + std::to_string(layer.at("n").get<long long>()) +
            ", m = " + std::to_string(layer.at("m").get<long long>()) + "\n";
    std::size_t label_width = 6;
    std::vector<std::string> labels;
    for (const auto& h : heads) {
      std::string l;
      for (const auto& x : h.at("labels")) l += (l.empty() ? "" : ",") + x.get<std::string>();
      if (l.empty()) l = "-";
      label_width = std::max(label_width, l.size());
      labels.push_back(l);
    }
    text += pad("head", 4) + pad("labels", label_width);
    for (const auto& [key, name] : columns) text += pad(name, 7);
    text += "stripe key\n";
    for (std::size_t i = 0; i < heads.size(); ++i) {
      const auto& h = heads[i];
      text += pad(std::to_string(h.at("head").get<long long>()), 4) + pad(labels[i], label_width);
      for (const auto& [key, name] : columns) text += pad(table_score(h.at("scores").at(key)), 7);
      const auto& sk = h.at("scores").at("stripe_key");
      std::string stripe = sk.is_number() && sk.get<long long>() >= 0 ? std::to_string(sk.get<long long>()) : "-";
      if (h.contains("stripe_token")) stripe += " \"" + h.at("stripe_token").get<std::string>() + "\"";
      text += stripe + "\n";
    }
    text += "Jensen-Shannon distance between heads:\n";
    for (const auto& row : layer.at("js_distance")) {
      text += "    ";
      for (const auto& v : row) text += pad(table_score(v), 6);
      text += "\n";
    }
  }
  return text;
}

}  // namespace

int cmd_patterns(const std::vector<std::string>& args) {
  const Options o = parse_options(
      args,
      {"--tokens", "--query-tokens", "--tensor", "--date-model", "--input", "--heldout", "--limit",
       "--format"},
      {}, "patterns");
  const std::string format_option = single(o, "--format").value_or("json");
  if (format_option != "json" && format_option != "table") {
    throw usage_error{"--format must be json or table, got " + in_quotes(format_option)};
  }
  std::vector<std::string> inputs;
  for (const auto& [key, value] : o.values) {
    if (key == "--input") inputs.push_back(value);
  }
  const auto heldout = single(o, "--heldout");
  const auto limit = single(o, "--limit");
  const auto date_model = single(o, "--date-model");
  if (!inputs.empty() || heldout || date_model) {
    if (!o.positional.empty() || single(o, "--tokens") || single(o, "--query-tokens") ||
        single(o, "--tensor")) {
      throw usage_error{
          "patterns of the date model (--input, --heldout, --date-model) take no "
          "FILE, --tokens, --query-tokens or --tensor"};
    }
    if (inputs.empty() == !heldout) {
      throw usage_error{
          "patterns of the date model need --input TEXT (repeatable) or --heldout "
          "FILE"};
    }
    if (limit && !heldout) throw usage_error{"--limit needs --heldout"};
    if (format_option == "table") {
      throw usage_error{"--format table is for exported weights (FILE); the date model's "
                        "patterns are JSON"};
    }
    const mha::DateModel model = load_date_model(date_model_path(date_model));
    if (heldout) {
      for (const auto& ex : read_heldout(*heldout)) inputs.push_back(ex.input);
      if (limit) {
        const auto n = parse_unsigned(*limit, std::numeric_limits<std::uint32_t>::max());
        if (!n || *n == 0) throw usage_error{"--limit must be a positive integer, got " + *limit};
        if (*n < inputs.size()) inputs.resize(static_cast<std::size_t>(*n));
      }
    }
    const nlohmann::json out = inputs.size() == 1 && !heldout
                                   ? mha::date_model_patterns(model, inputs[0])
                                   : mha::date_model_patterns_mean(model, inputs);
    return write_response(out) ? exit_ok : exit_internal;
  }
  if (limit) throw usage_error{"--limit needs --heldout"};
  if (o.positional.size() > 1) {
    throw usage_error{"patterns takes at most one FILE, got " +
                      std::to_string(o.positional.size())};
  }
  const std::string file = o.positional.empty() ? "-" : o.positional[0];
  if (file.size() > 1 && file[0] == '-') {
    throw usage_error{"unknown option " + in_quotes(file) + " for patterns"};
  }
  const std::string bytes = read_input(file);
  const std::string format = mha::sniff_attention_format(bytes);
  mha::PatternsInput in = mha::read_attention_input(bytes, single(o, "--tensor").value_or(""));
  if (const auto tokens_file = single(o, "--tokens")) {
    if (!in.tokens.empty()) {
      throw usage_error{"the JSON input has \"tokens\" already; drop --tokens"};
    }
    in.tokens = mha::parse_tokens_text(read_input(*tokens_file));
  }
  if (const auto query_file = single(o, "--query-tokens")) {
    if (!in.query_tokens.empty()) {
      throw usage_error{"the JSON input has \"query_tokens\" already; drop --query-tokens"};
    }
    in.query_tokens = mha::parse_tokens_text(read_input(*query_file));
  }
  if (const auto tokens_file = single(o, "--tokens")) {
    mha::check_tokens(in, "--tokens " + in_quotes(*tokens_file));
  } else {
    mha::check_tokens(in, "tokens");
  }
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t l = 0; l < in.layers.size(); ++l) {
    nlohmann::json j = mha::layer_patterns_to_json(in.layers[l], "layer " + std::to_string(l),
                                                   mha::HeadTokens{in.tokens, in.query_tokens});
    j["layer"] = l;
    layers.push_back(std::move(j));
  }
  nlohmann::json out = {{"source", file == "-" ? "standard input" : file},
                        {"format", format},
                        {"shape", in.shape},
                        {"tokens", in.tokens},
                        {"thresholds", mha::thresholds_to_json({})},
                        {"layers", layers}};
  if (!in.query_tokens.empty()) out["query_tokens"] = in.query_tokens;
  if (format_option == "table") {
    const std::string table = patterns_table(out);
    return std::fwrite(table.data(), 1, table.size(), stdout) == table.size() &&
                   std::fflush(stdout) == 0
               ? exit_ok
               : exit_internal;
  }
  return write_response(out) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
