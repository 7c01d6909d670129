// What the CLI tests share: a clean NCCL environment, results of a run, files read whole, a
// scratch folder per test process, CSV tables of fabricsim's outputs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace cli_testing {

/// fabricsim reads NCCL_* variables; a developer's shell must not change these tests' results.
inline const bool kNcclEnvironmentCleared = [] {
  for (const char* v :
       {"NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE",
        "NCCL_NCHANNELS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS",
        "NCCL_MAX_NRINGS", "NCCL_NET_GDR_LEVEL", "NCCL_IB_DISABLE", "NCCL_NET"}) {
    ::unsetenv(v);
  }
  return true;
}();

/// One fabricsim invocation: exit code, stdout, stderr.
struct Result {
  int exit_code;
  std::string out, err;
};

/// A file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

#ifdef FABRICSIM_BINARY
/// Runs `ENV fabricsim ARGS` from the source directory (ENV: e.g. "env PATH=/nonexistent"),
/// stdout and stderr through IO_DIR/out and IO_DIR/err, and returns them with the exit code
/// (-1 when fabricsim did not exit, e.g. was killed).
inline Result run_fabricsim(const std::filesystem::path& io_dir, const std::string& args,
                            const std::string& env = "") {
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && " + env +
                          (env.empty() ? "" : " ") + FABRICSIM_BINARY + " " + args + " >" +
                          (io_dir / "out").string() + " 2>" + (io_dir / "err").string();
  const int status = std::system(cmd.c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io_dir / "out"),
                slurp(io_dir / "err")};
}

/// Runs `fabricsim ARGS` from the source tree in the background (stdout to DIR/out, stderr to
/// DIR/err); once the shell condition `until` holds (checked every 50 ms, for at most 60 s),
/// runs the shell command `then`, in which $pid is fabricsim's process, and waits for fabricsim.
/// Returns std::system's wait status: fabricsim's exit code is WEXITSTATUS of it.
inline int fabricsim_then(const std::string& args, const std::filesystem::path& dir,
                          const std::string& until, const std::string& then) {
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && (" + FABRICSIM_BINARY +
                          " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string() + " & pid=$!; i=0; while ! { " + until +
                          "; } 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; " +
                          then + "; wait $pid)";
  return std::system(cmd.c_str());
}
#endif

/// Removes TMPDIR/PREFIX<pid> of every process that has ended: each test process writes its
/// own (ctest runs one per test case), and a developer's runs of the suite would otherwise pile
/// them up (tens of GB over some hundred runs). A live process's folder is kept, so parallel
/// ctest jobs do not lose theirs.
inline void remove_finished_scratch(const std::string& prefix) {
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = n.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::filesystem::remove_all(e.path(), ec);
    }
  }
}

/// TMPDIR/PREFIX<pid>/NAME, created, and emptied the first time this process asks for it: a
/// folder an earlier process with the same pid left (another run of the suite on the same
/// machine) must not be read as this run's output. Later calls with the same NAME return it
/// as it is (a test writes there, then reads). The first call for a PREFIX also removes the
/// folders of finished processes (remove_finished_scratch).
inline std::filesystem::path scratch_dir(const std::string& prefix, const std::string& name) {
  (void)kNcclEnvironmentCleared;  // every fabricsim call goes through here first
  static std::set<std::string> cleaned;
  if (cleaned.insert(prefix).second) remove_finished_scratch(prefix);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid())) / name;
  static std::set<std::filesystem::path> fresh;
  if (fresh.insert(dir).second) std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A CSV file as rows of cells, header included, with RFC 4180 quoting ("[3,4]" is one cell).
inline std::vector<std::vector<std::string>> csv_table(const std::filesystem::path& p) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(slurp(p));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char ch = line[i];
      if (quoted && ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = !quoted;
      } else if (ch == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += ch;
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

/// The cell of `row` under header `column` of a csv_table.
inline const std::string& cell(const std::vector<std::vector<std::string>>& t, size_t row,
                               const std::string& column) {
  const auto& h = t.at(0);
  const auto it = std::find(h.begin(), h.end(), column);
  REQUIRE(it != h.end());
  return t.at(row).at(static_cast<size_t>(it - h.begin()));
}

}  // namespace cli_testing
