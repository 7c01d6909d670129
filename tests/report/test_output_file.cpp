// Output files written whole or not at all (sim/report/output_file.hpp) and trace.json on a
// disk that fills up. A full disk is simulated without root: RLIMIT_FSIZE in a forked child
// (SIGXFSZ ignored, so a write past the limit fails with EFBIG, "File too large"), /dev/full
// (every write fails with ENOSPC), a directory where a file is expected, a missing folder.
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
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report/output_file.hpp"
#include "sim/report/trace.hpp"

namespace fs = std::filesystem;
using fabricsim::ChromeTrace;
using fabricsim::OutputError;
using fabricsim::OutputFile;

namespace {

/// A fresh directory for one test case, removed when the case ends.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("fabricsim_test_output_file_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

/// The names in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Runs `body` in a child process whose files may grow to `limit_bytes` at most (RLIMIT_FSIZE,
/// SIGXFSZ ignored). `body` returns "" when its checks hold, else what failed; returns that.
std::string with_file_size_limit(rlim_t limit_bytes, const std::function<std::string()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::cout.flush();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string failed;
    const rlimit limit{limit_bytes, limit_bytes};
    if (std::signal(SIGXFSZ, SIG_IGN) == SIG_ERR || ::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
      failed = "cannot set RLIMIT_FSIZE";
    } else {
      try {
        failed = body();
      } catch (const std::exception& e) {
        failed = std::string("unexpected exception: ") + e.what();
      }
    }
    if (!failed.empty() && ::write(fds[1], failed.data(), failed.size()) < 0) ::_exit(2);
    ::_exit(failed.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) message.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return "the child died: status " + std::to_string(status);
  return message;
}

}  // namespace

TEST_CASE("write_output_file replaces the file whole and leaves no temporary file") {
  TempDir d("whole");
  const fs::path f = d.path / "results.json";
  spit(f, "an earlier, longer version of the file\n");
  fs::permissions(f, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fabricsim::write_output_file(f.string(), "{}\n");
  CHECK(slurp(f) == "{}\n");
  CHECK(names_in(d.path) == std::vector<std::string>{"results.json"});
  // Its permissions are kept, as rewriting it in place would keep them.
  CHECK((fs::status(f).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));

  // Through a stream, in pieces larger and smaller than any buffer.
  const std::string big(300'000, 'x');
  {
    OutputFile out((d.path / "flows.csv").string());
    out.stream() << "id,src\n" << big;
    out.write("\nend\n");
    CHECK_FALSE(fs::exists(d.path / "flows.csv"));  // not before commit()
    out.commit();
  }
  CHECK(slurp(d.path / "flows.csv") == "id,src\n" + big + "\nend\n");

  // Not committed: the file is as it was and the temporary one is gone.
  {
    OutputFile out(f.string());
    out.write("half of a new vers");
  }
  CHECK(slurp(f) == "{}\n");
  CHECK(names_in(d.path) == (std::vector<std::string>{"flows.csv", "results.json"}));
}

TEST_CASE("a symbolic link to an output file stays a link, the file it names is replaced") {
  TempDir d("link");
  spit(d.path / "real.json", "old\n");
  fs::create_symlink(d.path / "real.json", d.path / "link.json");
  fabricsim::write_output_file((d.path / "link.json").string(), "new\n");
  CHECK(fs::is_symlink(d.path / "link.json"));
  CHECK(slurp(d.path / "real.json") == "new\n");
  CHECK(names_in(d.path) == (std::vector<std::string>{"link.json", "real.json"}));
}

TEST_CASE("a file that cannot be written throws OutputError with its path and the reason") {
  TempDir d("errors");
  // A directory where the file is expected.
  fs::create_directories(d.path / "results.json");
  try {
    fabricsim::write_output_file((d.path / "results.json").string(), "{}\n");
    FAIL("no OutputError");
  } catch (const OutputError& e) {
    CHECK(e.path() == (d.path / "results.json").string());
    CHECK(e.error_number() == EISDIR);
    CHECK(e.reason() == std::strerror(EISDIR));
    CHECK(std::string(e.what()) ==
          "cannot write " + (d.path / "results.json").string() + ": " + std::strerror(EISDIR));
  }
  // A folder that does not exist.
  try {
    fabricsim::write_output_file((d.path / "no_such_dir" / "a.csv").string(), "x\n");
    FAIL("no OutputError");
  } catch (const OutputError& e) {
    CHECK(e.error_number() == ENOENT);
  }
  CHECK_THROWS_AS(fabricsim::check_output_file((d.path / "no_such_dir" / "a.csv").string()),
                  OutputError);
  fabricsim::check_output_file((d.path / "a.csv").string());  // can be written: nothing left
  CHECK(names_in(d.path) == std::vector<std::string>{"results.json"});
}

TEST_CASE("a device is written in place: /dev/full reports ENOSPC, no space left on device") {
  struct stat before {};
  REQUIRE(::stat("/dev/full", &before) == 0);
  try {
    fabricsim::write_output_file("/dev/full", "digraph fabric {}\n");
    FAIL("no OutputError");
  } catch (const OutputError& e) {
    CHECK(e.path() == "/dev/full");
    CHECK(e.error_number() == ENOSPC);
    CHECK(e.reason() == "No space left on device");
  }
  struct stat after {};
  REQUIRE(::stat("/dev/full", &after) == 0);
  CHECK(S_ISCHR(after.st_mode));  // not replaced by a regular file
  CHECK(after.st_rdev == before.st_rdev);
  CHECK_FALSE(fs::exists("/dev/full.tmp-" + std::to_string(::getpid())));
  // Checking a device does not open it (a pipe's reader would see its end).
  fabricsim::check_output_file("/dev/full");
}

TEST_CASE("a file larger than the disk allows is not left half-written, and says why") {
  TempDir d("fsize");
  const fs::path f = d.path / "flows.csv";
  spit(f, "an earlier run's flows\n");
  const std::string failed = with_file_size_limit(4096, [&]() -> std::string {
    try {
      OutputFile out(f.string());
      for (int i = 0; i < 1000; ++i) out.stream() << "row " << i << ",0123456789\n";  // ~17 KB
      out.commit();
      return "commit() did not throw";
    } catch (const OutputError& e) {
      if (e.error_number() != EFBIG) return "errno " + std::to_string(e.error_number());
      if (e.reason() != std::strerror(EFBIG)) return "reason " + e.reason();
      if (e.path() != f.string()) return "path " + e.path();
    }
    return "";
  });
  CHECK(failed == "");
  CHECK(slurp(f) == "an earlier run's flows\n");  // as it was: never half of the new one
  CHECK(names_in(d.path) == std::vector<std::string>{"flows.csv"});
}

TEST_CASE("rewrite_output_file_in_place amends a file where a second copy does not fit") {
  TempDir d("in_place");
  const fs::path f = d.path / "results.json";
  const std::string old_text = std::string(3000, 'a') + "\n}\n";
  const std::string new_text = std::string(3000, 'a') + ",\n \"files_not_written\": []\n}\n";
  spit(f, old_text);
  fabricsim::rewrite_output_file_in_place(f.string(), old_text, new_text);
  CHECK(slurp(f) == new_text);

  // The new text does not fit either (the limit falls inside it): the old one is put back.
  spit(f, old_text);
  const std::string longer = std::string(3000, 'a') + std::string(2000, 'b');
  const std::string failed = with_file_size_limit(4096, [&]() -> std::string {
    try {
      fabricsim::rewrite_output_file_in_place(f.string(), old_text, longer);
      return "no OutputError";
    } catch (const OutputError& e) {
      return e.error_number() == EFBIG ? "" : "errno " + std::to_string(e.error_number());
    }
  });
  CHECK(failed == "");
  CHECK(slurp(f) == old_text);
}

TEST_CASE("trace.json on a full disk: the run goes on, nothing is left, close() says why") {
  TempDir d("trace");
  const fs::path f = d.path / "trace.json";
  const std::string failed = with_file_size_limit(64 * 1024, [&]() -> std::string {
    ChromeTrace t(f.string(), 1'000'000);
    t.process_name(2, "switch egress queues (bytes)");
    int64_t offered = 0;
    for (; offered < 100'000 && t.recording(); ++offered)
      t.counter(2, "leaf0->host3 tc3", offered * 1000, offered);
    // About 70 bytes an event: the 64 KiB limit stops it after about a thousand, not 100,000.
    if (offered >= 100'000) return "the trace kept recording past the limit";
    if (!t.failed()) return "failed() is false";
    t.counter(2, "after the failure", 0, 0);  // ignored, no throw
    try {
      t.close();
      return "close() did not throw";
    } catch (const OutputError& e) {
      if (e.error_number() != EFBIG) return "errno " + std::to_string(e.error_number());
      if (e.path() != f.string()) return "path " + e.path();
    }
    t.close();  // once only
    return "";
  });
  CHECK(failed == "");
  CHECK(names_in(d.path).empty());  // neither trace.json nor its temporary file

  // Without a limit, the same trace is whole JSON.
  {
    ChromeTrace t(f.string(), 1'000'000);
    for (int64_t i = 0; i < 2000; ++i) t.counter(2, "leaf0->host3 tc3", i * 1000, i);
    t.close();
    CHECK_FALSE(t.failed());
  }
  CHECK(nlohmann::json::parse(slurp(f)).size() == 2000);
}
