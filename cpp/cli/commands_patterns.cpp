// `mha patterns` (docs/cli.md, docs/patterns.md): read the arguments and the weights (a file, or
// the date model's inputs), print the scores of every head (mha::patterns_report_to_json,
// mha::date_model_patterns) as JSON or as a table; with --report, the head report card
// (mha::head_report) of the file and of scored probes (--probes).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "mha/date_patterns.hpp"
#include "mha/date_report.hpp"
#include "mha/head_report_io.hpp"
#include "mha/json_strict.hpp"
#include "mha/json_io.hpp"
#include "mha/patterns_io.hpp"
#include "mha/probes.hpp"

namespace mha_cli {

namespace {

/// A score as the table prints it: 3 decimals, "-" when the score has no value (null).
std::string table_score(const nlohmann::json& v) {
  if (!v.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v.get<double>());
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s + " ";
}

/// One layer of the table: its heads, one line each, then their Jensen-Shannon distances.
std::string layer_table(const nlohmann::json& layer) {
  static const std::vector<std::pair<const char*, const char*>> columns = {
      {"previous_token", "prev"},       {"diagonal", "diag"},
      {"local_band", "band"},           {"vertical_stripe", "stripe"},
      {"first_token", "first"},         {"mean_distance", "dist"},
      {"entropy_bits", "entropy"},      {"max_weight", "max"},
      {"duplicate_token", "dup"},       {"induction", "induct"},
      {"punctuation", "punct"}};
  const auto& heads = layer.at("heads");
  std::string text = layer.at("name").get<std::string>() + ": " + std::to_string(heads.size()) +
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
    std::string stripe =
        sk.is_number() && sk.get<long long>() >= 0 ? std::to_string(sk.get<long long>()) : "-";
    if (h.contains("stripe_token")) stripe += " \"" + h.at("stripe_token").get<std::string>() + "\"";
    text += stripe + "\n";
  }
  text += "Jensen-Shannon distance between heads:\n";
  for (const auto& row : layer.at("js_distance")) {
    text += "    ";
    for (const auto& v : row) text += pad(table_score(v), 6);
    text += "\n";
  }
  return text;
}

/// `mha patterns --format table`: per layer, one line per head with its labels and scores (the
/// JSON's layers, same numbers, 3 decimals), then the heads' Jensen-Shannon distances.
std::string patterns_table(const nlohmann::json& out) {
  std::string text;
  for (const auto& layer : out.at("layers")) text += layer_table(layer);
  return text;
}

/// The date model's options of `mha patterns`.
struct DateOptions {
  std::vector<std::string> inputs;  ///< every --input
  std::optional<std::string> heldout, limit, model;
};

/// `mha patterns --input TEXT... | --heldout FILE [--limit N] [--date-model FILE]`.
int date_model_patterns(const Options& o, DateOptions d, bool table) {
  std::vector<std::string>& inputs = d.inputs;
  const auto& heldout = d.heldout;
  const auto& limit = d.limit;
  if (!o.positional.empty() || single(o, "--tokens") || single(o, "--query-tokens") ||
      single(o, "--tensor")) {
    throw usage_error{
        "patterns of the date model (--input, --heldout, --date-model) take no "
        "FILE, --tokens, --query-tokens or --tensor"};
  }
  if (inputs.empty() == !heldout) {
    throw usage_error{"patterns of the date model need --input TEXT (repeatable) or --heldout FILE"};
  }
  if (limit && !heldout) throw usage_error{"--limit needs --heldout"};
  if (table) {
    throw usage_error{"--format table is for exported weights (FILE); the date model's "
                      "patterns are JSON"};
  }
  const mha::DateModel model = load_date_model(model_path(d.model, BuiltInFile::date_model));
  if (heldout) {
    for (const auto& ex : read_heldout(*heldout)) inputs.push_back(ex.input);
    if (limit) {
      const std::size_t n = parse_limit(*limit);
      if (n < inputs.size()) inputs.resize(n);
    }
  }
  const nlohmann::json out = inputs.size() == 1 && !heldout
                                 ? mha::date_model_patterns(model, inputs[0])
                                 : mha::date_model_patterns_mean(model, inputs);
  return write_response(out) ? exit_ok : exit_internal;
}

/// --word-index FILE: a JSON array of integers, or one integer per line.
std::vector<mha::Index> read_word_index(const std::string& file) {
  const std::string text = read_input(file);
  const std::string what = "--word-index " + in_quotes(file);
  std::vector<std::string> items;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    const nlohmann::json j = mha::parse_json_strict(text, what);
    if (!j.is_array()) throw input_error{what + " must be a JSON array of whole numbers"};
    for (const auto& v : j) {
      if (!v.is_number_integer()) {
        throw input_error{what + ": " + v.dump() + " is not a word index (a whole number from 0)"};
      }
      items.push_back(v.dump());
    }
  } else {
    items = mha::parse_tokens_text(text);
  }
  std::vector<mha::Index> out;
  for (const std::string& t : items) {
    const auto v = parse_unsigned(t, static_cast<std::uint64_t>(mha::limits::max_tokens));
    if (!v) {
      throw input_error{what + ": " + in_quotes(t) + " is not a word index (a whole number from 0)"};
    }
    out.push_back(static_cast<mha::Index>(*v));
  }
  return out;
}

/// `mha patterns [FILE|-] [--tokens FILE] [--word-index FILE] --report [--probes FILE]`: the head
/// report card of FILE (one example) and of every scored probe of --probes.
int report_patterns(const Options& o, bool table) {
  const auto probes = single(o, "--probes");
  if (single(o, "--query-tokens")) throw usage_error{"--report scores self-attention: drop --query-tokens"};
  std::vector<mha::ReportExample> examples;
  if (!o.positional.empty() || !probes) {
    const std::string file = o.positional.empty() ? "-" : o.positional[0];
    const std::string bytes = read_input(file);
    mha::PatternsInput in = mha::read_attention_input(bytes, single(o, "--tensor").value_or(""));
    if (const auto tokens_file = single(o, "--tokens")) {
      if (!in.tokens.empty()) throw usage_error{"the JSON input has \"tokens\" already; drop --tokens"};
      in.tokens = mha::parse_tokens_text(read_input(*tokens_file));
    }
    if (in.tokens.empty()) throw usage_error{"--report needs the tokens (--tokens FILE, or \"tokens\" in the JSON)"};
    mha::ReportExample ex;
    ex.layers = std::move(in.layers);
    ex.tokens = std::move(in.tokens);
    if (const auto w = single(o, "--word-index")) ex.word_index = read_word_index(*w);
    examples.push_back(std::move(ex));
  } else if (single(o, "--tokens") || single(o, "--word-index") || single(o, "--tensor")) {
    throw usage_error{"--tokens, --word-index and --tensor describe FILE; the probes carry their own"};
  }
  if (probes) {
    const std::vector<mha::ReportExample> scored =
        mha::read_scored_probes(mha::parse_json_text(read_input(*probes)), "--probes " + in_quotes(*probes));
    examples.insert(examples.end(), scored.begin(), scored.end());
  }
  const mha::HeadReportCard card = mha::head_report(examples);
  if (table) return write_text(mha::head_report_table(card)) ? exit_ok : exit_internal;
  return write_response(mha::head_report_to_json(card)) ? exit_ok : exit_internal;
}

/// `mha patterns [FILE|-] [--tokens FILE] [--query-tokens FILE] [--tensor NAME]`.
int file_patterns(const Options& o, bool table) {
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
  const auto tokens_file = single(o, "--tokens");
  if (tokens_file) {
    if (!in.tokens.empty()) throw usage_error{"the JSON input has \"tokens\" already; drop --tokens"};
    in.tokens = mha::parse_tokens_text(read_input(*tokens_file));
  }
  if (const auto query_file = single(o, "--query-tokens")) {
    if (!in.query_tokens.empty()) {
      throw usage_error{"the JSON input has \"query_tokens\" already; drop --query-tokens"};
    }
    in.query_tokens = mha::parse_tokens_text(read_input(*query_file));
  }
  nlohmann::json out = mha::patterns_report_to_json(
      in, tokens_file ? "--tokens " + in_quotes(*tokens_file) : std::string("tokens"));
  out["source"] = file == "-" ? "standard input" : file;
  out["format"] = format;
  if (table) return write_text(patterns_table(out)) ? exit_ok : exit_internal;
  return write_response(out) ? exit_ok : exit_internal;
}

}  // namespace

int cmd_patterns(const std::vector<std::string>& args) {
  const Options o = parse_options(
      args,
      {"--tokens", "--query-tokens", "--tensor", "--date-model", "--input", "--heldout", "--limit",
       "--format", "--probes", "--word-index"},
      {"--report"}, "patterns");
  const std::string format_option = single(o, "--format").value_or("json");
  if (format_option != "json" && format_option != "table") {
    throw usage_error{"--format must be json or table, got " + in_quotes(format_option)};
  }
  DateOptions d;
  for (const auto& [key, value] : o.values) {
    if (key == "--input") d.inputs.push_back(value);
  }
  d.heldout = single(o, "--heldout");
  d.limit = single(o, "--limit");
  d.model = single(o, "--date-model");
  if (!d.inputs.empty() || d.heldout || d.model) {
    if (has_flag(o, "--report") || single(o, "--probes")) {
      throw usage_error{"--report scores exported weights (FILE or --probes), not the date model"};
    }
    return date_model_patterns(o, std::move(d), format_option == "table");
  }
  if (d.limit) throw usage_error{"--limit needs --heldout"};
  if (o.positional.size() > 1) {
    throw usage_error{"patterns takes at most one FILE, got " + std::to_string(o.positional.size())};
  }
  if (has_flag(o, "--report")) return report_patterns(o, format_option == "table");
  if (single(o, "--probes") || single(o, "--word-index")) {
    throw usage_error{"--probes and --word-index are options of --report"};
  }
  return file_patterns(o, format_option == "table");
}

}  // namespace mha_cli
