// mha: the command-line face of the mha core. Contract: docs/cli.md.
//
//   mha forward [FILE|-]        one JSON request (FILE, or stdin) -> one JSON response on stdout
//   mha numpy-experiment --seed S --tokens N --d-model D --num-heads H [--causal] [--positional]
//   mha translate TEXT [--model FILE] [--json] [--logits] [--ablate KIND:LAYER:HEAD]...
//   mha date-eval [--model FILE] [--heldout FILE] [--no-ablation] [--limit N]
//   mha patterns [FILE|-] [--tokens FILE] [--tensor NAME]
//   mha patterns --input TEXT [--input TEXT]... | --heldout FILE [--limit N]  [--date-model FILE]
//   mha --help | mha help
//
// Exit status: 0 success; 2 bad input or usage ("mha: error: ..." on stderr, nothing on stdout);
// 1 an unexpected internal failure (or stdout could not be written).
// This file only handles arguments, I/O and exit codes; parsing and serialising live in mha_io.
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "mha/date_model.hpp"
#include "mha/experiment.hpp"
#include "mha/json_io.hpp"
#include "mha/patterns_io.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_internal = 1;
constexpr int exit_bad_input = 2;

const char* const help_text =
    "mha - multi-head attention (PyTorch nn.MultiheadAttention semantics, batch of 1, no dropout)\n"
    "\n"
    "usage:\n"
    "  mha forward [FILE|-]\n"
    "      Read one JSON request from FILE (or stdin when FILE is absent or \"-\") and print one\n"
    "      JSON response on stdout. Request keys (PyTorch names): num_heads, query, key, value,\n"
    "      in_proj_weight | q_proj_weight k_proj_weight v_proj_weight, in_proj_bias,\n"
    "      out_proj_weight, out_proj_bias, attn_mask, key_padding_mask, is_causal, kdim, vdim.\n"
    "      Response: output (n, d), attn_weights (h, n, m) per head, fully_masked_rows,\n"
    "      num_heads, d_model, d_head, kdim, vdim, n, m, parameter_count.\n"
    "  mha numpy-experiment --seed S --tokens N --d-model D --num-heads H [--causal] "
    "[--positional]\n"
    "      Module 08's seeded numpy program: np.random.seed(S); X = randn(N, D);\n"
    "      Wq, Wk, Wv, Wo = randn(D, D) x 4; X @ W convention, no bias. Prints the forward\n"
    "      response plus seed, X, Wq, Wk, Wv, Wo (numpy's float64 draws). S in [0, 4294967295].\n"
    "  mha translate TEXT [--model FILE] [--json] [--logits] [--ablate KIND:LAYER:HEAD]...\n"
    "      Translate a date with the trained model (default: the repository's\n"
    "      web/date_model.safetensors) and print the ISO date, e.g. 2026-11-30. --json prints\n"
    "      {input, output, source_tokens, output_tokens, produced_eos, num_heads,\n"
    "      num_encoder_layers, num_decoder_layers, encoder_self (L, h, S, S), decoder_self\n"
    "      (L, h, T, T), cross (L, h, T, S)}; --logits adds logits (T, V). --ablate switches a\n"
    "      head off (KIND = encoder_self | decoder_self | cross), repeatable.\n"
    "  mha date-eval [--model FILE] [--heldout FILE] [--no-ablation] [--limit N]\n"
    "      Exact-match accuracy on held-out dates (default tests/fixtures/date_heldout.json),\n"
    "      overall and per format, and what every head does: role mass of cross-attention\n"
    "      heads, offsets of self-attention heads, accuracy with each head ablated. JSON.\n"
    "  mha patterns [FILE|-] [--tokens FILE] [--tensor NAME]\n"
    "      Score every head of exported attention weights (docs/patterns.md): FILE (or stdin)\n"
    "      is JSON {\"tokens\": [...], \"attn_weights\": h x n x n or L x h x n x n}, a .npy of\n"
    "      shape (h, n, m), (L, h, n, m) or (L, 1, h, n, m) (tokens from --tokens FILE: a JSON\n"
    "      array or one token per line), or a safetensors file (--tensor NAME, or its only\n"
    "      tensor). Prints per layer and head every score, its uniform baseline and the labels\n"
    "      it earns, and the Jensen-Shannon distance matrix of the heads.\n"
    "  mha patterns --input TEXT [--input TEXT]... | --heldout FILE [--limit N]\n"
    "               [--date-model FILE]\n"
    "      The same for every head of the date model (encoder self, decoder self, cross): one\n"
    "      input in full, or several / a held-out file averaged per head.\n"
    "  mha --help | mha help\n"
    "\n"
    "exit status: 0 success; 2 bad input or usage (one line \"mha: error: ...\" on stderr,\n"
    "nothing on stdout); 1 internal failure. Full contract: docs/cli.md.\n";

/// Bad command-line usage: reported with the usage line.
struct usage_error {
  std::string message;
};

/// Bad input that is not an mha::error (an unreadable file).
struct input_error {
  std::string message;
};

/// One line, no control characters, so stderr carries exactly one line per error.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

/// The whole of `file` ("-" = stdin). Throws input_error naming the file and the system's reason
/// (missing file, permission, a directory, a read error).
std::string read_input(const std::string& file) {
  const bool is_stdin = file == "-";
  const std::string what = is_stdin ? std::string("standard input") : in_quotes(file);
  std::FILE* f = is_stdin ? stdin : std::fopen(file.c_str(), "rb");
  if (f == nullptr) throw input_error{"cannot open " + what + ": " + std::strerror(errno)};
  std::string text;
  char buf[1 << 16];
  std::size_t got = 0;
  errno = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  if (!is_stdin) std::fclose(f);
  if (failed) {
    throw input_error{"cannot read " + what + ": " + (err != 0 ? std::strerror(err) : "read error")};
  }
  return text;
}

/// Writes the response and a newline; false when stdout could not take it (closed pipe, full disk).
bool write_response(const nlohmann::json& response) {
  const std::string text = response.dump() + "\n";
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  if (std::fflush(stdout) == 0 && ok) return true;
  std::fprintf(stderr, "mha: internal error: cannot write the response to stdout: %s\n",
               std::strerror(errno));
  return false;
}

/// A non-negative decimal integer with no sign, spaces or suffix, at most `max`.
std::optional<std::uint64_t> parse_unsigned(const std::string& s, std::uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

int cmd_forward(const std::vector<std::string>& args) {
  std::string file = "-";
  if (args.size() > 1) {
    throw usage_error{"forward takes at most one FILE, got " + std::to_string(args.size()) +
                      " arguments"};
  }
  if (args.size() == 1) {
    file = args[0];
    if (file.size() > 1 && file[0] == '-') {
      throw usage_error{"unknown option " + in_quotes(file) + " for forward"};
    }
  }
  const nlohmann::json request = mha::parse_json_text(read_input(file));
  const mha::ForwardRequest parsed = mha::parse_forward_request(request);
  const mha::AttentionResult result = mha::run_forward(parsed);
  return write_response(mha::response_to_json(result, parsed.config, parsed.parameter_count()))
             ? exit_ok
             : exit_internal;
}

int cmd_numpy_experiment(const std::vector<std::string>& args) {
  std::optional<std::uint64_t> seed, tokens, d_model, num_heads;
  mha::ExperimentOptions options;
  constexpr std::uint64_t max_seed = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint64_t max_size = static_cast<std::uint64_t>(std::numeric_limits<int>::max());

  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (name == "--causal" || name == "--positional") {
      if (inline_value) throw usage_error{name + " takes no value"};
      (name == "--causal" ? options.causal : options.positional) = true;
      continue;
    }
    std::optional<std::uint64_t>* target = nullptr;
    std::uint64_t max = max_size;
    const char* meaning = "a positive integer (at most 2147483647)";
    if (name == "--seed") {
      target = &seed;
      max = max_seed;
      meaning = "an integer in [0, 4294967295]";
    } else if (name == "--tokens") {
      target = &tokens;
    } else if (name == "--d-model") {
      target = &d_model;
    } else if (name == "--num-heads") {
      target = &num_heads;
    } else {
      throw usage_error{"unknown option " + in_quotes(args[i]) + " for numpy-experiment"};
    }
    std::string text;
    if (inline_value) {
      text = *inline_value;
    } else if (i + 1 < args.size()) {
      text = args[++i];
    } else {
      throw usage_error{name + " needs a value (" + meaning + ")"};
    }
    const auto value = parse_unsigned(text, max);
    if (!value || (target != &seed && *value == 0)) {
      throw usage_error{name + " must be " + meaning + ", got " + in_quotes(text)};
    }
    if (target->has_value()) throw usage_error{name + " given twice"};
    *target = value;
  }
  for (const auto& [name, value] : {std::pair{"--seed", &seed}, std::pair{"--tokens", &tokens},
                                    std::pair{"--d-model", &d_model},
                                    std::pair{"--num-heads", &num_heads}}) {
    if (!value->has_value()) throw usage_error{std::string("numpy-experiment needs ") + name};
  }

  const auto s = static_cast<std::uint32_t>(*seed);
  const mha::NumpyExperiment experiment = mha::make_numpy_experiment(
      s, static_cast<mha::Index>(*tokens), static_cast<mha::Index>(*d_model),
      static_cast<mha::Index>(*num_heads));
  const mha::AttentionResult result = mha::run_numpy_experiment(experiment, options);
  return write_response(mha::experiment_to_json(s, experiment, options, result)) ? exit_ok
                                                                                  : exit_internal;
}

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

/// Options of the form --name VALUE or --name=VALUE; flags without a value.
struct Options {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> flags;
};

Options parse_options(const std::vector<std::string>& args, const std::vector<std::string>& valued,
                      const std::vector<std::string>& flags, const std::string& command) {
  Options out;
  const auto known = [](const std::vector<std::string>& list, const std::string& name) {
    for (const auto& x : list) {
      if (x == name) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    if (name.size() < 2 || name.rfind("--", 0) != 0) {
      out.positional.push_back(name);
      continue;
    }
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (known(flags, name)) {
      if (value) throw usage_error{name + " takes no value"};
      out.flags.push_back(name);
    } else if (known(valued, name)) {
      if (!value) {
        if (i + 1 >= args.size()) throw usage_error{name + " needs a value"};
        value = args[++i];
      }
      out.values.emplace_back(name, *value);
    } else {
      throw usage_error{"unknown option " + in_quotes(args[i]) + " for " + command};
    }
  }
  return out;
}

std::optional<std::string> single(const Options& o, const std::string& name) {
  std::optional<std::string> v;
  for (const auto& [key, value] : o.values) {
    if (key != name) continue;
    if (v) throw usage_error{name + " given twice"};
    v = value;
  }
  return v;
}

bool has_flag(const Options& o, const std::string& name) {
  for (const auto& f : o.flags) {
    if (f == name) return true;
  }
  return false;
}

/// L stacks of (h, rows, cols) -> nested arrays (L, h, rows, cols).
nlohmann::json stacks_to_json(const std::vector<mha::HeadStack>& stacks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : stacks) out.push_back(mha::head_stack_to_json(s));
  return out;
}

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

int cmd_patterns(const std::vector<std::string>& args) {
  const Options o = parse_options(
      args, {"--tokens", "--tensor", "--date-model", "--input", "--heldout", "--limit"}, {},
      "patterns");
  std::vector<std::string> inputs;
  for (const auto& [key, value] : o.values) {
    if (key == "--input") inputs.push_back(value);
  }
  const auto heldout = single(o, "--heldout");
  const auto limit = single(o, "--limit");
  const auto date_model = single(o, "--date-model");
  if (!inputs.empty() || heldout || date_model) {
    if (!o.positional.empty() || single(o, "--tokens") || single(o, "--tensor")) {
      throw usage_error{
          "patterns of the date model (--input, --heldout, --date-model) take no "
          "FILE, --tokens or --tensor"};
    }
    if (inputs.empty() == !heldout) {
      throw usage_error{
          "patterns of the date model need --input TEXT (repeatable) or --heldout "
          "FILE"};
    }
    if (limit && !heldout) throw usage_error{"--limit needs --heldout"};
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
    mha::check_tokens(in, "--tokens " + in_quotes(*tokens_file));
  } else {
    mha::check_tokens(in, "tokens");
  }
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t l = 0; l < in.layers.size(); ++l) {
    nlohmann::json j =
        mha::layer_patterns_to_json(in.layers[l], "layer " + std::to_string(l), in.tokens);
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
  return write_response(out) ? exit_ok : exit_internal;
}

int run(const std::vector<std::string>& argv) {
  if (argv.empty()) throw usage_error{"missing subcommand"};
  for (const auto& a : argv) {
    if (a == "--help" || a == "-h") {
      std::fputs(help_text, stdout);
      return exit_ok;
    }
  }
  const std::string& command = argv[0];
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (command == "help") {
    std::fputs(help_text, stdout);
    return exit_ok;
  }
  if (command == "forward") return cmd_forward(rest);
  if (command == "numpy-experiment") return cmd_numpy_experiment(rest);
  if (command == "translate") return cmd_translate(rest);
  if (command == "date-eval") return cmd_date_eval(rest);
  if (command == "patterns") return cmd_patterns(rest);
  throw usage_error{"unknown subcommand " + in_quotes(command)};
}

void report(const std::string& message) {
  std::fprintf(stderr, "mha: error: %s\n", one_line(message).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return run(args);
  } catch (const usage_error& e) {
    // Still one line, as for any bad input: scripts read exactly one line of stderr.
    report(e.message + " (see: mha --help)");
    return exit_bad_input;
  } catch (const input_error& e) {
    report(e.message);
    return exit_bad_input;
  } catch (const mha::error& e) {
    report(e.what());
    return exit_bad_input;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "mha: internal error: out of memory\n");
    return exit_internal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mha: internal error: %s\n", one_line(e.what()).c_str());
    return exit_internal;
  }
}
