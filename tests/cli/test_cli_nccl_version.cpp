// End-to-end: which NCCL release line's tuning a run uses (nccl.version, a measured log's
// "NCCL version" line, else the newest), as `fabricsim run` prints it and results.json records it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

namespace {

struct Run {
  Result result;
  nlohmann::json nccl;  ///< results.json's "nccl"
};

Run run(const std::string& name, const std::string& scenario, const std::string& args) {
  const fs::path out = scratch(name);
  Run r{fabricsim("run " + scenario + " " + args + " --out " + out.string()), {}};
  INFO(r.result.out << r.result.err);
  REQUIRE(r.result.exit_code == 0);
  r.nccl = nlohmann::json::parse(slurp(out / "results.json"))["nccl"];
  return r;
}

}  // namespace

TEST_CASE(
    "nccl.version: a measured log's NCCL version picks the tuning unless the scenario sets one") {
  // The A3 Ultra log's nccl-tests run printed "NCCL version 2.25.1+cuda12.8" (line 26).
  const std::string scenario =
      "bench/validation/nccl/nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.yaml";
  const Run from_log = run("version_log", scenario, "--set workload.maxbytes=64KiB");
  CHECK(from_log.nccl["tuning"] == "2.25-2.27");
  CHECK(from_log.nccl["version"] == "2.25.1+cuda12.8");
  CHECK(from_log.nccl["version_source"] == "measured log");
  CHECK(from_log.result.out.find("tuning of NCCL 2.25-2.27 (the measured log's NCCL 2.25.1") !=
        std::string::npos);
  const Run set =
      run("version_set", scenario, "--set workload.maxbytes=64KiB --set nccl.version=2.20");
  CHECK(set.nccl["tuning"] == "2.19-2.20");
  CHECK(set.nccl["version_source"] == "scenario");
  const Run plain =
      run("version_default", "scenarios/quickstart.yaml", "--set workload.maxbytes=64KiB");
  CHECK(plain.nccl["tuning"] == "2.28");
  CHECK(plain.nccl["version"].is_null());
  CHECK(plain.nccl["version_source"] == "default");
}

TEST_CASE("nccl.version: a log's version older than the tables takes the oldest, and says so") {
  // "NCCL version 2.16.2+cuda11.6" (the gcm fixture's line 22): no table covers 2.16.
  const Run old =
      run("version_old",
          "bench/validation/nccl/nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.yaml",
          "--set workload.minbytes=1MiB --set workload.maxbytes=1MiB");
  CHECK(old.nccl["tuning"] == "2.18");
  CHECK(old.result.err.find("NCCL 2.16.2+cuda11.6's tuning is not modelled (2.18 to 2.28); its "
                            "oldest table, 2.18, stands in") != std::string::npos);
}
