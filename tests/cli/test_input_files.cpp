// Every file fabricsim reads goes through one bounded reader (sim/core/input_file.hpp): a FIFO, a
// pipe or a device named as a scenario, switch profile, cost file, measured log or calibration
// log is refused at once with exit 2, never waited on. Each command runs under `timeout` so that
// a reader that blocks fails the test instead of hanging the suite.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_support.hpp"

namespace fs = std::filesystem;
using cli_testing::Result;

namespace {

fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir("fabricsim_test_input_files_", name);
}

/// Runs the shell command `command` (in which `fabricsim` is the binary under test) from the
/// source directory under a 20 s limit: a reader that blocks ends in exit 137, not a hang.
Result shell(const std::string& command) {
  const fs::path dir = scratch("io");
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && fabricsim() { timeout " +
                          "-s KILL 20 " + FABRICSIM_BINARY + " \"$@\"; }; " + command + " >" +
                          (dir / "out").string() + " 2>" + (dir / "err").string();
  const int status = std::system(("bash -c '" + cmd + "'").c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, cli_testing::slurp(dir / "out"),
                cli_testing::slurp(dir / "err")};
}

/// A FIFO no one writes to, created afresh.
std::string fifo() {
  const fs::path p = scratch("fifo") / "p";
  fs::remove(p);
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  return p.string();
}

}  // namespace

TEST_CASE("a FIFO named as any input file is refused at once with exit 2") {
  const std::string p = fifo();
  const std::string out = (scratch("cal") / "cal.yaml").string();
  struct Case {
    std::string args, text;
  };
  const Case cases[] = {
      {"validate " + p,
       p + ": cannot read scenario file: it is a pipe or FIFO, not a regular file"},
      {"calibrate --perftest " + p + " --out " + out,
       p + ":0: cannot read log file: it is a pipe or FIFO, not a regular file; save the output "
           "to a file first"},
      {"calibrate --nccl-tests " + p + " --out " + out,
       p + ":0: cannot read log file: it is a pipe or FIFO"},
      {"validate scenarios/quickstart.yaml --set switch.profile=" + p,
       "switch.profile: cannot read switch profile '" + p + "': it is a pipe or FIFO"},
      {"validate scenarios/roce_h200_a3ultra.yaml --set measured.nccl_tests=" + p,
       "measured.nccl_tests: " + p + ":0: cannot read log file: it is a pipe or FIFO"},
      {"validate scenarios/quickstart.yaml --set cost_model=" + p,
       p + ": cannot read cost file: it is a pipe or FIFO"},
  };
  for (const Case& c : cases) {
    INFO("fabricsim " << c.args);
    const Result r = shell("fabricsim " + c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.text) != std::string::npos);
  }
}

TEST_CASE("/dev/stdin and <(...) fed by a pipe are refused, /dev/stdin from a file is read") {
  const std::string save = "it is a pipe or FIFO, not a regular file; save the output to a file";
  const Result piped = shell("cat scenarios/quickstart.yaml | fabricsim validate /dev/stdin");
  INFO(piped.err);
  CHECK(piped.exit_code == 2);
  CHECK(piped.err.find("/dev/stdin: cannot read scenario file: " + save) != std::string::npos);

  const Result substituted = shell(
      "fabricsim calibrate --nccl-tests "
      "<(cat tests/data/nccl/nccl-allreduce-h100-2node-8hca-01.txt) "
      "--out " +
      (scratch("cal") / "cal.yaml").string());
  INFO(substituted.err);
  CHECK(substituted.exit_code == 2);
  CHECK(substituted.err.find(":0: cannot read log file: " + save) != std::string::npos);

  // A redirect from a file makes /dev/stdin that file: a regular file, read as any other (a
  // scenario without relative paths: they resolve against the file's folder, here /dev).
  const Result redirected = shell("fabricsim validate /dev/stdin < tests/data/config/minimal.yaml");
  INFO(redirected.err);
  CHECK(redirected.exit_code == 0);
}
