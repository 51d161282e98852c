// mha: the command-line face of the mha core. Contract: docs/cli.md.
//
//   mha forward [FILE|-]        one JSON request (FILE, or stdin) -> one JSON response on stdout
//   mha numpy-experiment --seed S --tokens N --d-model D --num-heads H [--causal] [--positional]
//   mha --help | mha help
//
// Exit status: 0 success; 2 bad input or usage ("mha: error: ..." on stderr, nothing on stdout);
// 1 an unexpected internal failure (or stdout could not be written).
// This file only handles arguments, I/O and exit codes; parsing and serialising live in mha_io.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "mha/experiment.hpp"
#include "mha/json_io.hpp"

namespace {

constexpr int exit_ok = 0;
constexpr int exit_internal = 1;
constexpr int exit_bad_input = 2;

const char* const usage_line =
    "usage: mha forward [FILE|-] | mha numpy-experiment --seed S --tokens N --d-model D "
    "--num-heads H [--causal] [--positional] | mha --help";

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
    "  mha numpy-experiment --seed S --tokens N --d-model D --num-heads H [--causal] [--positional]\n"
    "      Module 08's seeded numpy program: np.random.seed(S); X = randn(N, D);\n"
    "      Wq, Wk, Wv, Wo = randn(D, D) x 4; X @ W convention, no bias. Prints the forward\n"
    "      response plus seed, X, Wq, Wk, Wv, Wo (numpy's float64 draws). S in [0, 4294967295].\n"
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
    report(e.message);
    std::fprintf(stderr, "%s\n", usage_line);
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
