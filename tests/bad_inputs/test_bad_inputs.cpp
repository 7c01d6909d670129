// The bad-input catalogue (tests/bad_inputs/): every NNN_name.expect runs the fabricsim binary
// on its input (NNN_name.yaml / .txt beside it, or none) and checks the exit code and the
// messages a user must see. An .expect file reads
//   # what the entry checks, in one line
//   command: validate {file}       ({file}: the entry's input; {tmp}: a scratch folder)
//   exit: 2
//   stderr: FILE:LINE:COL: key.path: ...   (each stderr: / stdout: line a substring that must
//   stdout: ...                             appear; as many as needed)
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../cli/cli_support.hpp"

namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string name;     ///< NNN_short_name
  fs::path input;       ///< the entry's input file; empty when it has none
  std::string command;  ///< fabricsim's arguments, {file} and {tmp} not yet replaced
  int exit_code = -1;
  std::vector<std::string> stderr_parts, stdout_parts;
  std::vector<std::string> problems;  ///< what is wrong with the .expect file itself
};

const fs::path kDir = fs::path(FABRICSIM_SOURCE_DIR) / "tests" / "bad_inputs";

/// Every "s" replaced by "by" in `text`.
std::string replace_all(std::string text, const std::string& s, const std::string& by) {
  for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + by.size())) {
    text.replace(at, s.size(), by);
  }
  return text;
}

std::vector<Entry> load_entries() {
  std::vector<fs::path> expects;
  std::map<std::string, fs::path> inputs;  // stem -> input file
  for (const auto& f : fs::directory_iterator(kDir)) {
    if (!f.is_regular_file()) continue;
    const fs::path& p = f.path();
    if (p.extension() == ".expect") {
      expects.push_back(p);
    } else if (p.extension() != ".cpp") {
      inputs[p.stem().string()] = p;
    }
  }
  std::sort(expects.begin(), expects.end());
  std::vector<Entry> entries;
  for (const fs::path& p : expects) {
    Entry e;
    e.name = p.stem().string();
    if (const auto it = inputs.find(e.name); it != inputs.end()) {
      e.input = fs::relative(it->second, FABRICSIM_SOURCE_DIR);
      inputs.erase(it);
    }
    std::istringstream in(cli_testing::slurp(p));
    bool described = false;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      if (line[0] == '#') {
        described = true;
        continue;
      }
      const size_t colon = line.find(": ");
      const std::string key = line.substr(0, colon);
      const std::string value = colon == std::string::npos ? "" : line.substr(colon + 2);
      if (key == "command") {
        e.command = value;
      } else if (key == "exit") {
        e.exit_code = std::stoi(value);
      } else if (key == "stderr") {
        e.stderr_parts.push_back(value);
      } else if (key == "stdout") {
        e.stdout_parts.push_back(value);
      } else {
        e.problems.push_back("unknown line '" + line + "'");
      }
    }
    if (!described) e.problems.emplace_back("no '# what it checks' line");
    if (e.command.empty()) e.problems.emplace_back("no command:");
    if (e.exit_code < 0) e.problems.emplace_back("no exit:");
    if (e.stderr_parts.empty() && e.stdout_parts.empty()) {
      e.problems.emplace_back("no stderr: or stdout: line to check");
    }
    if (e.command.find("{file}") != std::string::npos && e.input.empty()) {
      e.problems.emplace_back("the command takes {file} but the entry has no input file");
    }
    entries.push_back(std::move(e));
  }
  for (const auto& [stem, path] : inputs) {
    Entry orphan;
    orphan.name = stem;
    orphan.problems.push_back("input " + path.filename().string() + " has no .expect file");
    entries.push_back(std::move(orphan));
  }
  return entries;
}

/// Runs `fabricsim ARGS` from the source directory.
cli_testing::Result run(const std::string& args, const fs::path& io) {
  const std::string cmd = std::string("cd '") + FABRICSIM_SOURCE_DIR + "' && '" + FABRICSIM_BINARY +
                          "' " + args + " </dev/null >'" + (io / "out").string() + "' 2>'" +
                          (io / "err").string() + "'";
  const int status = std::system(cmd.c_str());
  int code = -1;
  if (status != -1 && WIFEXITED(status)) code = WEXITSTATUS(status);
  // The shell reports a child killed by signal N as 128 + N.
  if (status != -1 && WIFSIGNALED(status)) code = 128 + WTERMSIG(status);
  return cli_testing::Result{code, cli_testing::slurp(io / "out"), cli_testing::slurp(io / "err")};
}

}  // namespace

TEST_CASE("bad-input catalogue: each entry exits as expected with the message it expects") {
  const std::vector<Entry> entries = load_entries();
  CHECK(entries.size() >= 50);
  for (const Entry& e : entries) {
    INFO("entry " << e.name << " (tests/bad_inputs/" << e.name << ".expect)");
    for (const std::string& p : e.problems) {
      INFO(p);
      CHECK(false);
    }
    if (!e.problems.empty()) continue;
    const fs::path tmp = cli_testing::scratch_dir("fabricsim_test_bad_inputs_", e.name);
    const fs::path io = cli_testing::scratch_dir("fabricsim_test_bad_inputs_", e.name + ".io");
    const std::string args =
        replace_all(replace_all(e.command, "{file}", e.input.string()), "{tmp}", tmp.string());
    const cli_testing::Result r = run(args, io);
    INFO("fabricsim " << args << "\nexit " << r.exit_code << "\nstderr:\n"
                      << r.err << "stdout (first 2000 bytes):\n"
                      << r.out.substr(0, 2000));
    // A crash (a signal: 128 + N), an internal error (1) or any other code than the expected.
    CHECK(r.exit_code == e.exit_code);
    CHECK(r.err.find("fabricsim: internal error") == std::string::npos);
    for (const std::string& part : e.stderr_parts) {
      INFO("expected on stderr: " << part);
      CHECK(r.err.find(part) != std::string::npos);
    }
    for (const std::string& part : e.stdout_parts) {
      INFO("expected on stdout: " << part);
      CHECK(r.out.find(part) != std::string::npos);
    }
  }
}
