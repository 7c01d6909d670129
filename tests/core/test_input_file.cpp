// read_input_file (sim/core/input_file.hpp): regular files only, bounded, and never blocking.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/core/input_file.hpp"

using namespace fabricsim;
namespace fs = std::filesystem;

namespace {

/// An empty scratch folder for this test process.
fs::path scratch() {
  const fs::path dir =
      fs::temp_directory_path() / ("fabricsim_test_input_file_" + std::to_string(::getpid()));
  static const bool fresh = [&] {
    fs::remove_all(dir);
    return true;
  }();
  (void)fresh;
  fs::create_directories(dir);
  return dir;
}

/// The kind and message read_input_file throws for `path`; fails the test if it returns.
InputFileError::Kind refusal(const std::string& path, int64_t max_bytes, std::string& message) {
  try {
    read_input_file(path, "test file", max_bytes, "why");
  } catch (const InputFileError& e) {
    message = e.what();
    return e.kind;
  }
  FAIL("read_input_file returned for " << path);
  return InputFileError::Kind::cannot_read;
}

}  // namespace

TEST_CASE("read_input_file returns a regular file's bytes as they are") {
  const fs::path p = scratch() / "a.txt";
  const std::string bytes("line 1\r\nline\0 2\n\xff", 17);
  std::ofstream(p, std::ios::binary) << bytes;
  CHECK(read_input_file(p.string(), "test file", 17) == bytes);
  // Through a symbolic link too: it names a regular file.
  const fs::path link = scratch() / "link.txt";
  fs::remove(link);
  fs::create_symlink(p, link);
  CHECK(read_input_file(link.string(), "test file", 17) == bytes);
}

TEST_CASE("read_input_file refuses what is not a regular file, naming what it is") {
  std::string m;
  SECTION("a missing file") {
    CHECK(refusal((scratch() / "none.txt").string(), 100, m) == InputFileError::Kind::cannot_open);
    CHECK(m == "cannot open test file: No such file or directory");
  }
  SECTION("a directory") {
    CHECK(refusal(scratch().string(), 100, m) == InputFileError::Kind::not_regular);
    CHECK(m == "cannot read test file: Is a directory");
  }
  SECTION("character devices, which never end or never hold text") {
    for (const char* dev : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
      INFO(dev);
      CHECK(refusal(dev, 100, m) == InputFileError::Kind::not_regular);
      CHECK(m.rfind("cannot read test file: it is a character device, not a regular file", 0) == 0);
    }
  }
  SECTION("a FIFO without a writer: refused at once, the open does not wait for one") {
    const fs::path fifo = scratch() / "fifo";
    fs::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto start = std::chrono::steady_clock::now();
    CHECK(refusal(fifo.string(), 100, m) == InputFileError::Kind::not_regular);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    CHECK(m.rfind("cannot read test file: it is a pipe or FIFO, not a regular file; save the "
                  "output to a file first",
                  0) == 0);
  }
}

TEST_CASE("read_input_file refuses a file above the cap, with the cap in the message") {
  std::string m;
  const fs::path p = scratch() / "big.txt";
  SECTION("one byte more than the cap (a sparse file: no disk needed)") {
    std::ofstream(p, std::ios::binary).close();
    fs::resize_file(p, (int64_t{16} << 20) + 1);
    CHECK(refusal(p.string(), int64_t{16} << 20, m) == InputFileError::Kind::too_large);
    CHECK(m == "not a test file: larger than 16 MiB (why)");
  }
  SECTION("exactly the cap is fine") {
    std::ofstream(p, std::ios::binary) << std::string(1000, 'x');
    CHECK(read_input_file(p.string(), "test file", 1000).size() == 1000);
    CHECK(refusal(p.string(), 999, m) == InputFileError::Kind::too_large);
    CHECK(m == "not a test file: larger than 999 B (why)");
  }
  SECTION("the read loop stops at the cap whatever the size says") {
    // Files in /proc are regular and say 0 bytes, then read as more: only the loop sees it.
    struct stat st {};
    REQUIRE(::stat("/proc/self/maps", &st) == 0);
    REQUIRE(st.st_size == 0);
    CHECK(refusal("/proc/self/maps", 10, m) == InputFileError::Kind::too_large);
    CHECK(read_input_file("/proc/self/maps", "test file", 1 << 20).size() > 10);
  }
}
