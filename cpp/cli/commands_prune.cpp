// `mha prune` and `mha models` (docs/cli.md, docs/head-experiments.md): read the arguments and the
// model file, run the models layer's pruning curve (mha::prune_english_lm, mha::prune_date_model)
// or describe the shipped model files (mha::describe_model_file), print the result.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mha/model_pruning.hpp"

namespace mha_cli {

namespace {

/// One text a line, blank lines skipped.
std::vector<std::string> read_lines(const std::string& file) {
  const std::string text = read_input(file);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// The curve as a table: heads left, the value, its change from step 0, the head removed.
std::string curve_text(const nlohmann::json& c) {
  const bool loss = c.at("lower_is_better").get<bool>();
  const double scale = loss ? 1.0 : 100.0;
  const int digits = loss ? 4 : 2;
  std::string out = c.at("model").get<std::string>() + ": greedy pruning, " +
                    c.at("metric").get<std::string>() + (loss ? "" : " (%)") + " on " +
                    std::to_string(c.at("measurement_items").get<long>()) +
                    " held-out items (heads chosen on " +
                    std::to_string(c.at("selection_items").get<long>()) + " others)\n";
  out += "heads_left  value     change    removed\n";
  const double first = c.at("steps").at(0).at("value").get<double>();
  for (const auto& s : c.at("steps")) {
    const double v = s.at("value").get<double>();
    std::string line = std::to_string(s.at("heads_left").get<long>());
    line.resize(12, ' ');
    std::string value = fixed(scale * v, digits);
    value.resize(10, ' ');
    std::string change = (v >= first ? "+" : "") + fixed(scale * (v - first), digits);
    change.resize(10, ' ');
    const auto& removed = s.at("removed");
    out += line + value + change + (removed.is_null() ? "-" : removed.get<std::string>()) + "\n";
  }
  return out;
}

}  // namespace

int cmd_prune(const std::vector<std::string>& args) {
  const Options o =
      parse_options(args, {"--model", "--text", "--heldout", "--limit"}, {"--json"}, "prune");
  if (!o.positional.empty()) {
    throw usage_error{"prune takes no positional argument, got " + in_quotes(o.positional[0])};
  }
  const std::string file = model_path(single(o, "--model"), BuiltInFile::english_lm);
  const std::vector<std::uint8_t> bytes = read_model_bytes(file);
  std::string kind;
  try {
    kind = mha::model_file_kind(bytes);
  } catch (const mha::parse_error& e) {
    throw input_error{"cannot read the model " + in_quotes(file) + ": " + e.what()};
  }
  std::size_t limit = 0;
  if (const auto l = single(o, "--limit")) limit = parse_limit(*l);
  const auto cut = [limit](auto& items) {
    if (limit > 0 && limit < items.size()) items.resize(limit);
  };
  std::optional<std::vector<std::string>> texts;
  std::optional<std::vector<mha::DateExample>> examples;
  if (kind == "english") {
    if (single(o, "--heldout")) throw usage_error{"--heldout is the date model's; use --text"};
    const char* built_in = built_in_file(BuiltInFile::english_heldout);
    const auto text_file = single(o, "--text");
    if (!text_file && !built_in)
      throw usage_error{"--text FILE is required (this build names none)"};
    texts = read_lines(text_file ? *text_file : built_in);
    cut(*texts);
  } else {
    if (single(o, "--text")) throw usage_error{"--text is the English model's; use --heldout"};
    const char* built_in = built_in_file(BuiltInFile::date_heldout);
    const auto heldout = single(o, "--heldout");
    if (!heldout && !built_in)
      throw usage_error{"--heldout FILE is required (this build names none)"};
    examples = read_heldout(heldout ? *heldout : built_in);
    cut(*examples);
  }
  const std::string name = std::filesystem::path(file).filename().string();
  nlohmann::json curve;
  try {
    curve = mha::prune_model_file(bytes, name, texts, examples);
  } catch (const mha::parse_error& e) {
    throw input_error{"cannot load the model " + in_quotes(file) + ": " + e.what()};
  }
  if (has_flag(o, "--json")) return write_response(curve) ? exit_ok : exit_internal;
  return write_text(curve_text(curve)) ? exit_ok : exit_internal;
}

int cmd_models(const std::vector<std::string>& args) {
  const Options o = parse_options(args, {"--dir"}, {"--json"}, "models");
  if (!o.positional.empty()) {
    throw usage_error{"models takes no positional argument, got " + in_quotes(o.positional[0])};
  }
  const char* built_in = built_in_file(BuiltInFile::model_dir);
  const auto dir_option = single(o, "--dir");
  if (!dir_option && !built_in) throw usage_error{"--dir DIR is required (this build names none)"};
  const std::filesystem::path dir = dir_option ? *dir_option : built_in;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".safetensors") {
      files.push_back(it->path());
    }
  }
  if (ec) throw input_error{"cannot list " + in_quotes(dir.string()) + ": " + ec.message()};
  std::sort(files.begin(), files.end());
  nlohmann::json models = nlohmann::json::array();
  std::string text;
  for (const auto& path : files) {
    mha::ModelSummary s;
    try {
      s = mha::describe_model_file(read_model_bytes(path.string()));
    } catch (const mha::error& e) {
      throw input_error{"cannot load the model " + in_quotes(path.string()) + ": " + e.what()};
    }
    const std::string rel = std::filesystem::relative(path, dir).generic_string();
    nlohmann::json entry = {{"name", path.stem().string()}, {"file", rel}};
    entry.update(mha::model_summary_to_json(s));
    models.push_back(entry);
    text += rel + "  " + s.kind + "  " + std::to_string(s.heads) + " heads (" +
            std::to_string(s.num_heads) + " an attention, " + std::to_string(s.num_layers) +
            " layers), d_model " + std::to_string(s.d_model) + ", " + std::to_string(s.parameters) +
            " parameters (attention " + std::to_string(s.attention_parameters) + ")" +
            (s.step ? ", step " + std::to_string(*s.step) : std::string()) + ", xxh64 " +
            s.checksum + "\n";
  }
  if (files.empty()) text = "no model file (*.safetensors) under " + dir.string() + "\n";
  if (has_flag(o, "--json")) {
    return write_response(nlohmann::json{{"models", models}}) ? exit_ok : exit_internal;
  }
  return write_text(text) ? exit_ok : exit_internal;
}

}  // namespace mha_cli
