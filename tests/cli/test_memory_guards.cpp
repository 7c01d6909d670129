// What would not fit in memory is refused before it is built, with an estimate, and an
// allocation that fails anyway is said as out of memory with what was being built, never as an
// internal error (sim/core/memory_budget.hpp). The budget comes from FABRICSIM_MAX_MEMORY or
// from the process's limit (`ulimit -v`), so these tests set one or the other; the catalogue
// (tests/bad_inputs/) cannot.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_support.hpp"

namespace fs = std::filesystem;
using cli_testing::Result;
using cli_testing::slurp;

namespace {

fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir("fabricsim_test_memory_", name);
}

/// Runs `fabricsim ARGS` from the source directory after the shell commands `before` (e.g.
/// "ulimit -v 300000; export FABRICSIM_MAX_MEMORY=1GiB;"), in a subshell so that they end with it.
Result fabricsim(const std::string& args, const std::string& before = "") {
  const fs::path dir = scratch("io");
  const std::string cmd = std::string("cd ") + FABRICSIM_SOURCE_DIR + " && (" + before + " " +
                          FABRICSIM_BINARY + " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string() + ")";
  const int status = std::system(cmd.c_str());
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out"),
                slurp(dir / "err")};
}

/// pfc-victim-flow.yaml's fabric with `flows` traffic flows of 1 KiB from host1 to host4, all
/// but the first written as a YAML alias of the first ("- *a": 7 bytes a flow). Returns its path.
fs::path alias_flows(int flows) {
  const fs::path path = scratch("flows") / ("flows" + std::to_string(flows) + ".yaml");
  if (fs::exists(path)) return path;
  std::ofstream out(path);
  out << "topology: {kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 4}\n"
         "link: {host_rate: 100Gbps, fabric_rate: 400Gbps, propagation_delay: 100ns}\n"
         "switch: {latency: 300ns, buffer_per_port: 200KB}\n"
         "nic: {mtu: 1000B}\n"
         "traffic:\n"
         "  - &a {src: host1, dst: host4, size: 1KiB}\n";
  for (int i = 1; i < flows; ++i) out << "  - *a\n";
  return path;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;  // ASan reserves terabytes: `ulimit -v` stops it
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

}  // namespace

TEST_CASE(
    "memory: a traffic list beyond half of FABRICSIM_MAX_MEMORY is refused with its estimate") {
  // 300000 flows at about 3500 bytes each (read and run) are 1.05 GB, more than half of 1 GiB
  // (1.07 GB). validate said ok here, and run took 0.98 GB.
  const fs::path f = alias_flows(300'000);
  const Result r = fabricsim("validate " + f.string(), "export FABRICSIM_MAX_MEMORY=1GiB;");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(f.string() + ":6:3: traffic: 300000 flows would take about 1.1 GB to read and "
                                "run") != std::string::npos);
  CHECK(r.err.find("more than half of this machine's 1.1 GB (FABRICSIM_MAX_MEMORY)") !=
        std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("memory: a YAML tree beyond half of FABRICSIM_MAX_MEMORY is refused before it is built") {
  // 20000 flows written out are over 220000 YAML values (a map and five keys with their values
  // each), about 110 MB at 500 bytes a value: more than half of 64 MiB.
  const fs::path f = scratch("tree") / "written_out.yaml";
  {
    std::ofstream out(f);
    out << "topology: {kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 4}\n"
           "link: {host_rate: 100Gbps, propagation_delay: 100ns}\n"
           "switch: {latency: 300ns, buffer_per_port: 200KB}\n"
           "traffic:\n";
    for (int i = 0; i < 20'000; ++i) out << "  - {src: 0, dst: 1, size: 1KiB, flow: " << i << "}\n";
  }
  const Result r = fabricsim("validate " + f.string(), "export FABRICSIM_MAX_MEMORY=64MiB;");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(f.string() + ": its ") == 0);
  CHECK(r.err.find("YAML values would take about 0.1 GB to read (about 500 bytes each), more "
                   "than half of this machine's 0.1 GB (FABRICSIM_MAX_MEMORY)") !=
        std::string::npos);
}

TEST_CASE("memory: a process limit (ulimit -v) below the machine's memory is the budget") {
  if (kAddressSanitizer) {
    WARN("not run: AddressSanitizer cannot start under ulimit -v");
    return;
  }
  // 1000000 aliased flows under a 1.6 GB limit ended in "internal error:
  // std::bad_alloc" after gigabytes; 1000000 x 3500 bytes = 3.5 GB is over half of 1.6 GB.
  const fs::path f = alias_flows(1'000'000);
  const Result r = fabricsim("run " + f.string(), "unset FABRICSIM_MAX_MEMORY; ulimit -v 1600000;");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("traffic: 1000000 flows would take about 3.5 GB to read and run") !=
        std::string::npos);
  CHECK(r.err.find("more than half of this process's 1.6 GB limit (ulimit -v)") !=
        std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
}

TEST_CASE("memory: an allocation failing while the scenario is read is out of memory, exit 2") {
  if (kAddressSanitizer) {
    WARN("not run: AddressSanitizer cannot start under ulimit -v");
    return;
  }
  // FABRICSIM_MAX_MEMORY says 100 GiB, so no estimate refuses; the 200 MB limit makes reading
  // 300000 flows (about 0.26 GB) fail.
  const fs::path f = alias_flows(300'000);
  const Result r =
      fabricsim("validate " + f.string(), "export FABRICSIM_MAX_MEMORY=100GiB; ulimit -v 200000;");
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("fabricsim: out of memory while building 300000 traffic flows (" + f.string() +
                   ": traffic): the scenario is too large for the memory this process may use") ==
        0);
  CHECK(r.err.find("internal error") == std::string::npos);
  CHECK(r.err.find("bad_alloc") == std::string::npos);
}

TEST_CASE("memory: an allocation failing while simulating is out of memory, exit 1, incomplete") {
  if (kAddressSanitizer) {
    WARN("not run: AddressSanitizer cannot start under ulimit -v");
    return;
  }
  // 100000 flows read in about 90 MB; running them takes about 0.3 GB, over the 300 MB limit.
  const fs::path f = alias_flows(100'000);
  const Result r =
      fabricsim("run " + f.string(), "export FABRICSIM_MAX_MEMORY=100GiB; ulimit -v 300000;");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("fabricsim: out of memory while building the simulation's state") == 0);
  CHECK(r.err.find("the run is incomplete") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);
}

TEST_CASE("memory: FABRICSIM_MAX_MEMORY that is not a size is bad input") {
  const Result r =
      fabricsim("validate scenarios/quickstart.yaml", "export FABRICSIM_MAX_MEMORY=lots;");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("FABRICSIM_MAX_MEMORY=lots: expected a size such as 16GiB") !=
        std::string::npos);
}

TEST_CASE("memory: routing tables that cannot fit are refused before the fabric is built") {
  // 249999 leaves x 4 hosts: about 1 million GPUs, whose routing tables (2 bytes per host pair
  // alone: 2 TB) cannot fit in 1 GiB. The estimate needs only the counts, so the fabric (1.2
  // million nodes, and a max-flow for the bisection of an odd leaf count) is not built first:
  // that took 4 s and 1.1 GB, and half a minute under the sanitizers.
  const auto start = std::chrono::steady_clock::now();
  const Result r = fabricsim("validate scenarios/pfc-victim-flow.yaml --set topology.leaves=249999",
                             "export FABRICSIM_MAX_MEMORY=1GiB;");
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("scenarios/pfc-victim-flow.yaml:16:3: topology: 999996 GPUs and 1249996 nodes "
                   "need about") == 0);
  CHECK(wall_s < 1.0);
}
