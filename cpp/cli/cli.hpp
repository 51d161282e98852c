// What the `mha` front end's files share: exit codes, the errors it reports, reading input,
// writing the response, option parsing, and the subcommands.
#pragma once

#include <nlohmann/json.hpp>

#include "mha/date_model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mha_cli {

constexpr int exit_ok = 0;
constexpr int exit_internal = 1;
constexpr int exit_bad_input = 2;

/// Bad command-line usage: reported with the usage line.
struct usage_error {
  std::string message;
};

/// Bad input that is not an mha::error (an unreadable file).
struct input_error {
  std::string message;
};

/// One line, no control characters, so stderr carries exactly one line per error.
std::string one_line(std::string text);

std::string in_quotes(const std::string& s);

/// The whole of `file` ("-" = stdin). Throws input_error naming the file and the system's reason
/// (missing file, permission, a directory, a read error).
std::string read_input(const std::string& file);

/// Writes the response and a newline; false when stdout could not take it (closed pipe, full disk).
bool write_response(const nlohmann::json& response);

/// Writes `text` as it is; false when stdout could not take it (no message: the caller's exit
/// status 1 says so).
bool write_text(const std::string& text);

/// A non-negative decimal integer with no sign, spaces or suffix, at most `max`.
std::optional<std::uint64_t> parse_unsigned(const std::string& s, std::uint64_t max);

/// Options of the form --name VALUE or --name=VALUE; flags without a value.
struct Options {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> flags;
};

/// Splits `args` into positional arguments, `valued` options (--name VALUE or --name=VALUE) and
/// `flags`. Throws usage_error for an unknown option (naming `command`) or a missing value.
Options parse_options(const std::vector<std::string>& args, const std::vector<std::string>& valued,
                      const std::vector<std::string>& flags, const std::string& command);

/// The value of option `name`, or nullopt; throws usage_error when it was given twice.
std::optional<std::string> single(const Options& o, const std::string& name);

bool has_flag(const Options& o, const std::string& name);

// The trained models' files (every model command: cli_common.cpp).

/// The repository's files that the build names (cpp/cli/CMakeLists.txt): the shipped models and
/// the date model's held-out examples, the English model's held-out text and the folder of the
/// shipped models (web/).
enum class BuiltInFile { date_model, english_lm, date_heldout, english_heldout, model_dir };

/// The path of `file` in this repository, or nullptr in a build that names none.
const char* built_in_file(BuiltInFile file);

/// A model's file: `model` (--model FILE), or the repository's copy `built_in`. Throws usage_error
/// when neither is there.
std::string model_path(const std::optional<std::string>& model, BuiltInFile built_in);

/// The bytes of the model file `file`, read whole. Throws input_error naming the file when it
/// cannot be read.
std::vector<std::uint8_t> read_model_bytes(const std::string& file);

/// The model of `file` as Model::load(bytes) reads it (mha::DateModel, mha::EnglishLM, ...).
/// Throws input_error "cannot load the <what> "<file>": <reason>" when it cannot be read or is not
/// such a model.
template <class Model>
Model load_model(const std::string& file, const std::string& what) {
  std::vector<std::uint8_t> bytes = read_model_bytes(file);
  try {
    return Model::load(bytes);
  } catch (const mha::error& e) {
    throw input_error{"cannot load the " + what + " " + in_quotes(file) + ": " + e.what()};
  }
}

// The date model's commands (cli_date_model.cpp).

/// The date model of `file` (load_model). Throws input_error naming the file when it cannot be
/// read or is not a date model.
mha::DateModel load_date_model(const std::string& file);

/// The held-out examples of `file` (mha::parse_date_examples). Throws input_error when it cannot
/// be read, parse_error when it holds no examples.
std::vector<mha::DateExample> read_heldout(const std::string& file);

/// --limit N: a positive integer of at most 4294967295. Throws usage_error naming `limit`.
std::size_t parse_limit(const std::string& limit);

// The subcommands (docs/cli.md): each returns the exit status.
int cmd_forward(const std::vector<std::string>& args);
int cmd_numpy_experiment(const std::vector<std::string>& args);
int cmd_translate(const std::vector<std::string>& args);
int cmd_date_eval(const std::vector<std::string>& args);
int cmd_patterns(const std::vector<std::string>& args);
int cmd_lm(const std::vector<std::string>& args);
int cmd_probes(const std::vector<std::string>& args);
int cmd_prune(const std::vector<std::string>& args);
int cmd_models(const std::vector<std::string>& args);

}  // namespace mha_cli
