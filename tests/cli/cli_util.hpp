// Running the real `mha` binary (MHA_CLI_PATH) as a child process with posix_spawn, for the CLI
// tests (cli_test.cpp, cli_patterns_test.cpp): stdin from a string, stdout and stderr captured,
// and the error contract of docs/cli.md (exit status 2, one "mha: error: ..." line).
#pragma once

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace mha_cli_test {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Running the binary

struct CliRun {
  int status = -1;  ///< exit status, or -1 when the child did not exit normally
  std::string out, err;
};

inline std::string temp_path(const std::string& stem) {
  static int counter = 0;
  return ::testing::TempDir() + "mha_cli_test_" + std::to_string(::getpid()) + "_" +
         std::to_string(counter++) + "_" + stem;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// Runs `mha args...` with stdin from `stdin_text` (or /dev/null when null).
inline CliRun run_mha(const std::vector<std::string>& args,
                      const std::string* stdin_text = nullptr) {
  const std::string in_path = stdin_text ? temp_path("stdin") : std::string("/dev/null");
  if (stdin_text) write_file(in_path, *stdin_text);
  const std::string out_path = temp_path("stdout"), err_path = temp_path("stderr");

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  std::vector<std::string> argv_s = {MHA_CLI_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  CliRun run;
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, MHA_CLI_PATH, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "posix_spawn " << MHA_CLI_PATH << " failed: " << rc;
    return run;
  }
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) == pid && WIFEXITED(wstatus)) run.status = WEXITSTATUS(wstatus);
  run.out = slurp(out_path);
  run.err = slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  if (stdin_text) std::remove(in_path.c_str());
  return run;
}

/// Runs `mha forward FILE` on a request written to a temporary file.
inline CliRun run_forward_file(const std::string& request_text) {
  const std::string path = temp_path("request.json");
  write_file(path, request_text);
  CliRun run = run_mha({"forward", path});
  std::remove(path.c_str());
  return run;
}

/// Exit status 2, nothing on stdout, exactly `lines` stderr lines, the first "mha: error: ..."
/// containing every part.
inline ::testing::AssertionResult fails_with(const CliRun& run,
                                             std::initializer_list<const char*> parts,
                                             int lines = 1) {
  if (run.status != 2)
    return ::testing::AssertionFailure() << "exit status " << run.status << ", stderr: " << run.err;
  if (!run.out.empty()) return ::testing::AssertionFailure() << "stdout not empty: " << run.out;
  if (std::count(run.err.begin(), run.err.end(), '\n') != lines || run.err.back() != '\n')
    return ::testing::AssertionFailure() << "stderr is not " << lines << " line(s): " << run.err;
  if (run.err.rfind("mha: error: ", 0) != 0)
    return ::testing::AssertionFailure()
           << "stderr does not start with \"mha: error: \": " << run.err;
  const std::string first = run.err.substr(0, run.err.find('\n'));
  for (const char* part : parts)
    if (first.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "\"" << first << "\" lacks \"" << part << "\"";
  return ::testing::AssertionSuccess();
}

inline json parse_stdout(const CliRun& run) {
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_FALSE(run.out.empty());
  EXPECT_EQ(run.out.back(), '\n');
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << "one JSON line";
  return json::parse(run.out);
}

}  // namespace mha_cli_test
