// Shared pieces of the `mha` front end (cli.hpp).
#include "cli.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mha_cli {

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

bool write_text(const std::string& text) {
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  return std::fflush(stdout) == 0 && ok;
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
const char* built_in_file(BuiltInFile file) {
#if defined(MHA_DEFAULT_DATE_MODEL) && defined(MHA_DEFAULT_ENGLISH_LM) && \
    defined(MHA_DEFAULT_DATE_HELDOUT) && defined(MHA_DEFAULT_ENGLISH_HELDOUT) && \
    defined(MHA_MODEL_DIR)
  switch (file) {
    case BuiltInFile::date_model:
      return MHA_DEFAULT_DATE_MODEL;
    case BuiltInFile::english_lm:
      return MHA_DEFAULT_ENGLISH_LM;
    case BuiltInFile::date_heldout:
      return MHA_DEFAULT_DATE_HELDOUT;
    case BuiltInFile::english_heldout:
      return MHA_DEFAULT_ENGLISH_HELDOUT;
    case BuiltInFile::model_dir:
      return MHA_MODEL_DIR;
  }
#endif
  (void)file;
  return nullptr;
}

std::string model_path(const std::optional<std::string>& model, BuiltInFile built_in) {
  if (model) return *model;
  const char* path = built_in_file(built_in);
  if (!path) throw usage_error{"--model FILE is required (this build has no default model)"};
  return path;
}

std::vector<std::uint8_t> read_model_bytes(const std::string& file) {
  const std::string text = read_input(file);
  return std::vector<std::uint8_t>(text.begin(), text.end());
}

}  // namespace mha_cli
