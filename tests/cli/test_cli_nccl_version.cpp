// End-to-end: which NCCL release line's tuning a run uses (nccl.version, a measured log's
// "NCCL version" line, else the newest), as `fabricsim run` prints it and results.json records it.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
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
  CHECK(set.result.err.find("nccl.version 2.20 is used, not the measured log's NCCL "
                            "2.25.1+cuda12.8 (line 26)") != std::string::npos);
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

TEST_CASE("nccl.version: PAT runs where the release line's model picks it") {
  // The quickstart's 16 one-GPU servers, 2 channels of 25 GB/s, NCCL 2.28, AllGather. PAT:
  // 8 + log2(16) × 14 / 3.5 + 16 × 2.8 = 68.8 µs + S / 37.5 GB/s. Ring LL: 6.6 + 15 × 5.0 =
  // 81.6 µs + S / (20.4 × 16/15); Ring LL128: 14 + 15 × 8.5 = 141.5 µs + S / (46 × 16/15).
  // At 8 KiB PAT 69.0 against LL 82.0; at 8 MiB 292.5 against LL128 312.4; at 16 MiB 516.2
  // against LL128 483.4: PAT from 8 KiB to 8 MiB.
  const fs::path out = scratch("version_pat");
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.collective=all_gather --set "
      "workload.maxbytes=32MiB --out " +
      out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = nlohmann::json::parse(slurp(out / "results.json"));
  for (const auto& c : results["collectives"]) {
    const int64_t size = c["size_bytes"];
    INFO(size);
    CHECK(c["algorithm"] == (size <= (int64_t{8} << 20) ? "pat" : "ring"));
    if (c["algorithm"] == "pat") CHECK(c["protocol"] == "simple");
  }
  // At 8 KiB the run is latency: NCCL's model 69.0 µs; the simulation adds each dimension's
  // network crossing to the launch and step latencies NCCL's tables give (within 15 %).
  const auto& first = results["collectives"][0];
  CHECK(first["nccl_model_time_us"].get<double>() == Approx(69.0).epsilon(0.001));
  CHECK(first["time_us"].get<double>() == Approx(69.0).epsilon(0.15));
  CHECK(results["limits"].empty());
  // Before 2.23 NCCL has no PAT; an AllReduce has none; PAT runs Simple only, so NCCL_PROTO=LL
  // leaves it out; NCCL_ALGO=PAT forces it where NCCL's model would not pick it.
  const auto algorithms = [](const std::string& args) {
    const Result run =
        fabricsim("run scenarios/quickstart.yaml --set workload.maxbytes=1MiB " + args);
    INFO(run.out << run.err);
    REQUIRE(run.exit_code == 0);
    return run.out;
  };
  CHECK(algorithms("--set workload.collective=all_gather --set nccl.version=2.22").find(" pat ") ==
        std::string::npos);
  CHECK(algorithms("").find(" pat ") == std::string::npos);
  CHECK(algorithms("--set workload.collective=all_gather --set nccl.proto=LL").find(" pat ") ==
        std::string::npos);
  const std::string forced = algorithms(
      "--set workload.collective=reduce_scatter --set workload.minbytes=1MiB --set "
      "nccl.algo=PAT");
  CHECK(forced.find(" pat   simple") != std::string::npos);
}

TEST_CASE("mode flow: where NCCL's model picks PAT the run says it runs the next choice") {
  const Run r = run("version_pat_flow", "scenarios/quickstart.yaml",
                    "--set mode=flow --set workload.collective=all_gather --set "
                    "workload.maxbytes=32MiB");
  const std::string said =
      "NCCL 2.28's model picks PAT (AllGather and ReduceScatter on one GPU "
      "a server, NCCL 2.23+) for all_gather from 8 KiB to 8 MiB here; the flow mode has no PAT";
  CHECK(r.result.out.find("# not modelled: NCCL's PAT algorithm (" + said) != std::string::npos);
  CHECK(slurp(scratch("version_pat_flow") / "results.json").find(said) != std::string::npos);
}

TEST_CASE("measured: the log's channel count beside the model's") {
  // The T4 log's "Channel 00/02 :" lines (line 39): NCCL opened 2 channels on one NIC a node;
  // the model opens 2 per NIC (NCCL's ring search duplicates the channels it finds).
  const fs::path out = scratch("channels_log");
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.ngpus=2 --set workload.minbytes=1MiB "
      "--set workload.maxbytes=1MiB --set "
      "measured.nccl_tests=../tests/data/nccl/nccl-allreduce-t4-2node-aws-g4dn-metal-efa-01.txt "
      "--out " +
      out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("channels: the log's NCCL opened 2, the model 2") != std::string::npos);
  const auto measured = nlohmann::json::parse(slurp(out / "results.json"))["measured"];
  CHECK(measured["channels"]["log"] == 2);
  CHECK(measured["channels"]["model"] == 2);
  CHECK(measured["nccl_choices"]["compared"] == 0);  // the log prints no choice lines
}

TEST_CASE("measured: NCCL's printed choice per size beside the run's") {
  // No log in tests/data prints NCCL's choices, so this one is made here: the quickstart's own
  // nccl-tests table (fabricsim's output reads as a log) after two lines in the format of
  // enqueue.cc's "%ld Bytes -> Algo %d proto %d time %f", saying Ring/LL (1, 0) at 8 KiB and
  // Tree/LL (0, 0) at 16 KiB. The quickstart runs Tree/LL at both (NCCL's cost model on 16
  // one-GPU nodes; README.md), so one of the two is the same.
  const fs::path dir = scratch("choices_log");
  const Result table = fabricsim("run scenarios/quickstart.yaml --set workload.maxbytes=16KiB");
  REQUIRE(table.exit_code == 0);
  const fs::path log = dir / "choices.txt";
  {
    std::ofstream f(log);
    f << "node01:1:1 [0] NCCL INFO 8192 Bytes -> Algo 1 proto 0 time 30.1\n"
      << "node01:1:1 [0] NCCL INFO 16384 Bytes -> Algo 0 proto 0 time 31.2\n"
      << table.out;
  }
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.maxbytes=16KiB --set "
      "measured.nccl_tests=" +
      fs::absolute(log).string() + " --out " + dir.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("NCCL's choice (the log's \"Bytes -> Algo\" lines) at 2 sizes: the run used "
                   "the same algorithm and protocol at 1; not at 8 KiB (NCCL ring/ll, run "
                   "tree/ll)") != std::string::npos);
  const auto measured = nlohmann::json::parse(slurp(dir / "results.json"))["measured"];
  CHECK(measured["nccl_choices"]["compared"] == 2);
  CHECK(measured["nccl_choices"]["same"] == 1);
  CHECK(measured["points"][0]["nccl_choice"]["algorithm"] == "ring");
  CHECK(measured["points"][0]["nccl_choice"]["same_as_run"] == false);
}
