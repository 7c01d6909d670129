// End-to-end: output files that cannot be written (a full disk, a file too large, a directory
// where a file goes) and signals (SIGHUP, SIGQUIT, SIGTERM at any moment). A full disk is
// simulated without root: RLIMIT_FSIZE set in a forked child before it runs fabricsim (SIGXFSZ
// ignored, so a write past the limit fails with EFBIG: "File too large"), /dev/full, or a
// directory or file put where fabricsim writes.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace fs = std::filesystem;
using cli_testing::cell;
using cli_testing::csv_table;
using cli_testing::fabricsim_then;
using cli_testing::Result;
using cli_testing::slurp;

namespace {

fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir("fabricsim_test_outputs_", name);
}

/// Runs `fabricsim ARGS` from the source directory; with `max_file_bytes` > 0, no file it writes
/// may grow beyond that (RLIMIT_FSIZE, SIGXFSZ ignored: the write fails with EFBIG).
Result fabricsim(const std::string& args, rlim_t max_file_bytes = 0) {
  const fs::path dir = scratch("io");
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && exec " +
                          FABRICSIM_BINARY + " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (max_file_bytes > 0) {
      const rlimit limit{max_file_bytes, max_file_bytes};
      if (std::signal(SIGXFSZ, SIG_IGN) == SIG_ERR || ::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
        ::_exit(99);
      }
    }
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(98);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"),
                slurp(dir / "err")};
}

/// Leftovers of a file written through a temporary name (NAME.tmp-PID) in `dir` and below.
std::vector<std::string> temporary_files(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp-") != std::string::npos)
      found.push_back(e.path().string());
  }
  return found;
}

/// results.json without `files_not_written`: what a run whose files were all written has.
nlohmann::json without_unwritten(nlohmann::json j) {
  j.erase("files_not_written");
  return j;
}

const std::string kFileTooLarge = std::strerror(EFBIG);  // "File too large"

/// A shell condition: fabricsim ($pid) has installed its handler for signal `sig` (its
/// SigCgt mask in /proc), busy-polled so the signal follows within a few milliseconds.
std::string wait_for_handler(int sig) {
  const unsigned long long bit = 1ULL << (sig - 1);
  return "n=0; while [ $n -lt 20000 ]; do m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "
         "/proc/$pid/status 2>/dev/null); [ -n \"$m\" ] && [ $(( 0x$m & " +
         std::to_string(bit) + " )) -ne 0 ] && break; n=$((n+1)); done";
}

}  // namespace

TEST_CASE(
    "run on a full disk: the files that fit are written whole, results.json lists the "
    "rest, exit 74") {
  // 1 MiB all_reduce: results.json is about 36 KB, flows.csv about 230 KB and trace.json
  // about 11 MB; at most 100 KB a file, trace.json fails during the run and flows.csv after
  // results.json. It used to stop on trace.json as an "internal error" (exit 1) with no
  // results.json, and leave trace.json cut at the limit.
  const std::string run = "run scenarios/quickstart.yaml --set workload.maxbytes=1MiB --out ";
  const fs::path whole = scratch("full_reference"), d = scratch("full");
  REQUIRE(fabricsim(run + whole.string()).exit_code == 0);
  const Result r = fabricsim(run + d.string(), 100'000);
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK(r.err.find("fabricsim: cannot write " + (d / "trace.json").string() + ": " +
                   kFileTooLarge) != std::string::npos);
  CHECK(r.err.find("fabricsim: cannot write " + (d / "flows.csv").string() + ": " +
                   kFileTooLarge) != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.out.find("# wrote      : " + (d / "results.json").string() +
                   ", perf.json, ports.csv, queues.csv; not written: trace.json, flows.csv") !=
        std::string::npos);
  // Nothing half-written: the files that fit are those of the run without a limit.
  CHECK_FALSE(fs::exists(d / "trace.json"));
  CHECK_FALSE(fs::exists(d / "flows.csv"));
  CHECK(temporary_files(d).empty());
  for (const char* f : {"ports.csv", "queues.csv"}) CHECK(slurp(d / f) == slurp(whole / f));
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["files_not_written"] ==
        nlohmann::json::parse(R"([{"file": "trace.json", "error": ")" + kFileTooLarge +
                              R"("}, {"file": "flows.csv", "error": ")" + kFileTooLarge +
                              R"("}])"));
  CHECK(without_unwritten(j) == nlohmann::json::parse(slurp(whole / "results.json")));
  CHECK(j["run"]["complete"] == true);  // the run itself was whole
  // A run whose files were all written has no files_not_written at all.
  CHECK_FALSE(nlohmann::json::parse(slurp(whole / "results.json")).contains("files_not_written"));
}

TEST_CASE("run --trace-events 0 on a full disk: flows.csv is not cut, nor an earlier run's kept") {
  // flows.csv was cut at the limit (row 202 on a 64 KiB tmpfs) while results.json said
  // nothing of it. An earlier run's flows.csv in the folder must not pass for this run's.
  const fs::path d = scratch("full_no_trace");
  std::ofstream(d / "flows.csv") << "id,src\n1,0\n";
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.maxbytes=1MiB --trace-events 0 --out " +
          d.string(),
      100'000);
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK_FALSE(fs::exists(d / "flows.csv"));
  CHECK(temporary_files(d).empty());
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  REQUIRE(j["files_not_written"].size() == 1);
  CHECK(j["files_not_written"][0]["file"] == "flows.csv");
  CHECK(j["files_not_written"][0]["error"] == kFileTooLarge);
}

TEST_CASE("a deadlocked run whose trace.json cannot be written exits 74, the deadlock reported") {
  // Precedence (docs/commands.md): an output not written (74) wins over the run's outcome
  // (3 here), which results.json and stderr still give.
  const fs::path d = scratch("full_deadlock");
  const Result r = fabricsim("run scenarios/pfc-deadlock-ring.yaml --out " + d.string(), 100'000);
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK(r.err.find("PFC deadlock") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK_FALSE(j["deadlock"].is_null());
  CHECK(j["files_not_written"][0]["file"] == "trace.json");
  CHECK_FALSE(fs::exists(d / "trace.json"));
}

TEST_CASE("run --out: a folder where results.json cannot be written is refused before the run") {
  // A directory named results.json: the run went through and then failed to write it.
  const fs::path d = scratch("results_is_dir");
  fs::create_directories(d / "results.json");
  const Result r = fabricsim("run scenarios/quickstart.yaml --out " + d.string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--out " + d.string() + ": cannot write " + (d / "results.json").string() +
                   ": " + std::strerror(EISDIR)) != std::string::npos);
  CHECK(r.out.find("# Avg bus bandwidth") == std::string::npos);  // nothing was run
  CHECK(temporary_files(d).empty());
}

TEST_CASE("sweep: a point folder that cannot be made does not stop the sweep or its tables") {
  // A file named like point 1's folder: its files cannot be written. The sweep used to stop
  // there as an internal error (exit 1) with no sweep.csv.
  const fs::path d = scratch("sweep_point_file");
  std::ofstream(d / "point-001") << "not a folder\n";
  const Result r = fabricsim(
      "sweep scenarios/quickstart.yaml --vary workload.maxbytes=16KiB,32KiB --jobs 1 --out " +
      d.string());
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK(r.err.find("fabricsim sweep: point 1/2 (workload.maxbytes=16KiB): cannot write " +
                   (d / "point-001").string() + ": ") != std::string::npos);
  CHECK(slurp(d / "point-001") == "not a folder\n");  // left as it was
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);
  CHECK(cell(t, 1, "status") == "complete");  // the point ran; only its files are missing
  CHECK(cell(t, 2, "status") == "complete");
  CHECK(fs::exists(d / "point-002" / "results.json"));
  CHECK(fs::exists(d / "sweep.md"));
}

TEST_CASE("sweep: a table that cannot be written leaves the others, and is not claimed") {
  const fs::path d = scratch("sweep_table_dir");
  fs::create_directories(d / "sweep.csv");  // a folder where sweep.csv goes
  const Result r = fabricsim(
      "sweep scenarios/quickstart.yaml --vary workload.maxbytes=16KiB,32KiB --jobs 2 "
      "--out " +
      d.string());
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK(r.err.find("fabricsim sweep: cannot write " + (d / "sweep.csv").string() + ": " +
                   std::strerror(EISDIR)) != std::string::npos);
  const size_t at = r.out.find("# wrote      : ");
  REQUIRE(at != std::string::npos);
  const std::string wrote = r.out.substr(at, r.out.find('\n', at) - at);
  CHECK(wrote.rfind("# wrote      : " + (d / "sweep.md").string() +
                        ", sweep_perf.csv and 2 point directories",
                    0) == 0);
  CHECK(wrote.find("; not written: sweep.csv, see stderr") != std::string::npos);
  CHECK(slurp(d / "sweep.md").find("| complete |") != std::string::npos);
  CHECK(fs::exists(d / "point-001" / "results.json"));
  CHECK(fs::is_directory(d / "sweep.csv"));  // what was there is left alone
  CHECK(temporary_files(d).empty());
}

TEST_CASE("calibrate --out must be a regular file: /dev/full and /dev/null are refused, exit 2") {
  // They were taken (exit 0), and the report and plots written beside them, into /dev.
  const std::string perftest =
      "tests/data/perftest/perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt";
  for (const char* device : {"/dev/full", "/dev/null"}) {
    INFO(device);
    const Result r = fabricsim("calibrate --perftest " + perftest + " --out " + device);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(std::string("--out ") + device + ": is a character device, not a file") !=
          std::string::npos);
    CHECK(r.out.empty());  // refused before any log was read
    for (const char* side : {".report.json", ".plot.dat", ".plot.gp"})
      CHECK_FALSE(fs::exists(std::string(device) + side));
  }
}

TEST_CASE(
    "calibrate on a full disk: no empty or half file, the fragment says the report is "
    "missing, exit 74") {
  // At most 1 KiB a file: the fragment (about 300 B) fits, the report (about 5 KB) and the
  // plot data do not. They were left empty or cut, and the command said "internal error".
  const fs::path d = scratch("cal_full");
  const Result r = fabricsim(
      "calibrate --perftest "
      "tests/data/perftest/perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt"
      " --out " +
          (d / "cal.yaml").string(),
      1024);
  INFO(r.err);
  CHECK(r.exit_code == 74);
  CHECK(r.err.find("fabricsim: cannot write " + (d / "cal.report.json").string() + ": " +
                   kFileTooLarge) != std::string::npos);
  CHECK_FALSE(fs::exists(d / "cal.report.json"));
  const std::string yaml = slurp(d / "cal.yaml");
  CHECK(yaml.find("# report: " + (d / "cal.report.json").string() + " could not be written (" +
                  kFileTooLarge + ")") != std::string::npos);
  CHECK(yaml.find("host_rate: ") != std::string::npos);
  for (const auto& e : fs::directory_iterator(d)) {
    INFO(e.path());
    CHECK(fs::file_size(e.path()) > 0);
  }
  CHECK(temporary_files(d).empty());
}

TEST_CASE("run: SIGHUP and SIGQUIT stop it as Ctrl-C does, every file whole") {
  // They killed the run with trace.json cut and no results.json.
  for (const int sig : {SIGHUP, SIGQUIT}) {
    const std::string name = sig == SIGHUP ? "HUP" : "QUIT";
    INFO(name);
    const fs::path d = scratch("sig" + name);
    // 8 GiB takes minutes; the signal comes once the simulation runs (trace.json is open).
    const int status = fabricsim_then(
        "run scenarios/quickstart.yaml --set workload.maxbytes=8GiB --trace-events 1000 --out " +
            (d / "files").string(),
        d, "ls " + (d / "files").string() + "/trace.json.tmp-*",
        "sleep 0.2; kill -" + name + " $pid");
    INFO(slurp(d / "err"));
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    const auto j = nlohmann::json::parse(slurp(d / "files" / "results.json"));
    CHECK(j["run"]["complete"] == false);
    CHECK(j["run"]["stop_reason"].get<std::string>().rfind("interrupted during size ", 0) == 0);
    CHECK(nlohmann::json::parse(slurp(d / "files" / "trace.json")).is_array());  // whole JSON
    CHECK(temporary_files(d / "files").empty());
  }
}

TEST_CASE("run: a signal before the options are read still leaves a results.json saying so") {
  // SIGTERM is pending when fabricsim starts (sent while the parent had it blocked; the mask
  // and the pending signal survive exec): its handlers, installed first and the signal then
  // unblocked, take it before any option is read. `run` reads the scenario, sees it, and stops
  // before building the fabric. The handlers used to be installed after the scenario was read
  // and the fabric built: SIGTERM killed the process and left no file.
  const fs::path d = scratch("sig_loading");
  const fs::path out = d / "files", log = d / "log";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (::sigprocmask(SIG_BLOCK, &term, nullptr) != 0 || ::raise(SIGTERM) != 0 || fd < 0 ||
        ::chdir(FABRICSIM_SOURCE_DIR) != 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0) {
      ::_exit(99);
    }
    ::execl(FABRICSIM_BINARY, FABRICSIM_BINARY, "run", "scenarios/quickstart.yaml", "--out",
            out.c_str(), static_cast<char*>(nullptr));
    ::_exit(98);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(slurp(log));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto j = nlohmann::json::parse(slurp(out / "results.json"));
  CHECK(j["scenario"] == "quickstart");
  CHECK(j["run"]["complete"] == false);
  CHECK(j["run"]["events"] == 0);
  CHECK(j["run"]["stop_reason"] ==
        "interrupted before the simulation started (the scenario was read; the fabric was not "
        "built)");
  CHECK(j["collectives"].empty());
  CHECK(j["fabric"]["kind"] == "spine-leaf");
  CHECK(slurp(log).find("fabricsim: run interrupted before the simulation started") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out / "trace.json"));
}

TEST_CASE(
    "run: SIGTERM in the first milliseconds, while the fabric is built, exit 130 with "
    "results.json") {
  // A k = 20 fat-tree takes about 0.4 s to build and route; SIGTERM comes within milliseconds
  // of the handlers' installation, long before the simulation. The handlers used to be
  // installed just before the simulation, so the run was stopped in it instead (or killed).
  const fs::path d = scratch("sig_building");
  const int status = fabricsim_then(
      "run scenarios/fat_tree_k8.yaml --set topology.k=20 --out " + (d / "files").string(), d,
      wait_for_handler(SIGTERM), "kill -TERM $pid");
  INFO(slurp(d / "err"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const auto j = nlohmann::json::parse(slurp(d / "files" / "results.json"));
  CHECK(j["run"]["complete"] == false);
  CHECK(j["run"]["events"] == 0);
  CHECK(j["run"]["stop_reason"].get<std::string>().rfind(
            "interrupted before the simulation started (the scenario was read", 0) == 0);
  CHECK(j["collectives"].empty());
}

TEST_CASE("test scratch folders: a finished process's is removed, a live process's kept") {
  // Each test process writes TMPDIR/PREFIX<pid>; the first scratch_dir call for a prefix
  // removes those of processes that have ended (a child that has exited and been reaped), and
  // keeps those of live ones (the parent running this test).
  const std::string prefix = "fabricsim_test_scratch_cleanup_";
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const fs::path tmp = fs::temp_directory_path();
  const fs::path dead = tmp / (prefix + std::to_string(child));
  const fs::path live = tmp / (prefix + std::to_string(::getppid()));
  fs::create_directories(dead / "left");
  fs::create_directories(live / "running");
  const fs::path mine = cli_testing::scratch_dir(prefix, "here");
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live / "running"));
  CHECK(fs::exists(mine));
  fs::remove_all(live);
  fs::remove_all(mine.parent_path());
}
