// End-to-end: the training step model through `fabricsim run` and `sweep`.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli_end_to_end;

namespace {
/// A 2-GPU, one-switch fabric at 100 Gb/s with `tail` appended (a training or workload
/// section), written to scratch/NAME.yaml.
fs::path two_gpu_scenario(const std::string& name, const std::string& tail) {
  const fs::path p = scratch("training") / (name + ".yaml");
  std::ofstream(p) << "name: " << name << "\nseed: 1\ntransport: roce\n"
                   << "topology: {kind: spine-leaf, leaves: 1, spines: 1, hosts_per_leaf: 2, "
                      "oversubscription: 1}\n"
                   << "link: {host_rate: 100Gbps, propagation_delay: 0ns}\n"
                   << "switch: {latency: 0ns, buffer_per_port: 4MiB}\n"
                   << "nic: {mtu: 4096B}\npfc: {enabled: true}\n"
                   << tail;
  return p;
}

nlohmann::json training_of(const fs::path& scenario) {
  const fs::path d = scratch("training") / (scenario.stem().string() + "_out");
  const Result r = fabricsim("run " + scenario.string() + " --out " + d.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(slurp(d / "results.json"))["training"];
}
}  // namespace

TEST_CASE("training: the step's exposed communication, checked by hand") {
  // The AllReduce of a 10 MiB bucket between the 2 GPUs, timed alone by the collective sweep.
  const fs::path ar = two_gpu_scenario(
      "ar", "workload: {collective: all_reduce, minbytes: 10MiB, maxbytes: 10MiB}\n");
  const Result sweep =
      fabricsim("run " + ar.string() + " --out " + (scratch("training") / "ar_out").string());
  REQUIRE(sweep.exit_code == 0);
  const double allreduce_ps =
      nlohmann::json::parse(
          slurp(scratch("training") / "ar_out" / "results.json"))["collectives"][0]["time_us"]
          .get<double>() *
      1e6;
  // Closed form: each GPU sends 10 MiB in a 2-rank ring, at 100 Gb/s at best; with 4 KiB
  // packets' headers (< 3 %) and NCCL's launch and step latencies (< 60 us) at worst.
  const double line_ps = 10.0 * (1 << 20) * 8 / 100e9 * 1e12;
  CHECK(allreduce_ps >= line_ps);
  CHECK(allreduce_ps <= 1.03 * line_ps + 60e6);
  const std::string common =
      "training:\n  dp: 2\n  optimizer_time: 1ms\n  bucket_cap: 64MiB\n  first_bucket_cap: "
      "64MiB\n  layers:\n";
  SECTION("one bucket, ready at the end of the backward pass: all of its AllReduce is exposed") {
    const auto t = training_of(two_gpu_scenario(
        "one", common + "    - {name: fc, fwd_time: 1ms, bwd_time: 2ms, params: 10MiB}\n"));
    CHECK(t["buckets"] == 1);
    CHECK(t["compute_ps"] == 4'000'000'000);  // fwd + bwd + optimizer
    CHECK(t["exposed_comm_ps"].get<double>() == Approx(allreduce_ps).epsilon(0.001));
    CHECK(t["step_ps"].get<double>() == Approx(4e9 + allreduce_ps).epsilon(0.001));
    CHECK(t["gpu_utilization"].get<double>() ==
          Approx(4e9 / t["step_ps"].get<double>()).epsilon(1e-9));
    const auto& cp = t["critical_path"];
    CHECK(cp["compute_ps"].get<int64_t>() + cp["software_ps"].get<int64_t>() +
              cp["link_transfer_ps"].get<int64_t>() +
              cp["queueing_pause_other_ps"].get<int64_t>() ==
          t["step_ps"].get<int64_t>());
  }
  SECTION("two buckets: the last layer's AllReduce hides behind the first layer's backward") {
    // Buckets fill in reverse layer order: layer 1's 10 MiB is reduced during layer 0's 5 ms
    // backward; only layer 0's (10 MiB too) is exposed.
    const auto t = training_of(two_gpu_scenario(
        "two",
        "training:\n  dp: 2\n  bucket_cap: 10MiB\n  first_bucket_cap: 10MiB\n  layers:\n"
        "    - {name: a, fwd_time: 1ms, bwd_time: 5ms, params: 10MiB}\n"
        "    - {name: b, fwd_time: 1ms, bwd_time: 1ms, params: 10MiB}\n"));
    CHECK(t["buckets"] == 2);
    CHECK(t["compute_ps"] == 8'000'000'000);
    CHECK(t["exposed_comm_ps"].get<double>() == Approx(allreduce_ps).epsilon(0.001));
  }
  SECTION("bad training input is exit 2 at its key") {
    struct Case {
      std::string tail, text;
    };
    const Case cases[] = {
        {common + "    - {name: fc, fwd_time: 1ms}\n  bucket_capp: 1MiB\n",
         "training.bucket_capp: unknown key 'bucket_capp'; did you mean 'bucket_cap'?"},
        {"training:\n  dp: 4\n  layers: [{fwd_time: 1ms}]\n",
         "training.dp: dp x tp x pp = 4 x 1 x 1 = 4 GPUs, but the fabric has 2"},
        {"training:\n  layers: [{fwd_flops: 1e12}]\n",
         "needs training.gpu_peak_flops and training.efficiency"},
        {"training:\n  layers: [{bwd_time: 1ms}]\n", "a layer needs fwd_time (or fwd_flops)"},
        {"training:\n  dp: 2\n  layers: [{fwd_time: 1ms, fwd_flops: 1e9}]\n",
         "give fwd_time or fwd_flops, not both"},
    };
    for (const Case& c : cases) {
      const Result r = fabricsim("validate " + two_gpu_scenario("bad", c.tail).string());
      INFO(c.tail << "\n" << r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find(c.text) != std::string::npos);
    }
  }
  SECTION("layers in FLOPs: time = FLOPs / (peak x efficiency), backward twice the forward") {
    const auto t = training_of(two_gpu_scenario(
        "flops",
        "training:\n  dp: 2\n  gpu_peak_flops: 1e12\n  efficiency: 0.5\n  layers:\n"
        "    - {fwd_flops: 1e9, params: 0B}\n"));
    // 1e9 / (1e12 x 0.5) = 2 ms forward, 4 ms backward; no parameters, no communication.
    CHECK(t["compute_ps"] == 6'000'000'000);
    CHECK(t["step_ps"] == 6'000'000'000);
    CHECK(t["exposed_comm_ps"] == 0);
  }
}

TEST_CASE("training: PFC pause on the critical path is the senders' NIC pause, within queueing") {
  // DP AllReduce rings on 8 GPUs behind two leaves, beside a 3:1 incast into host4 that
  // fills 200 KB port buffers: PFC pauses reach the NICs. The critical path's pause share is
  // bounded by the NICs' own pause counters (queues.csv paused_us, summed on another path),
  // and it is part of the time beyond link transfer, never more.
  const std::string tail =
      "traffic:\n"
      "  - {src: host1, dst: host4, size: 4MiB}\n"
      "  - {src: host2, dst: host4, size: 4MiB}\n"
      "  - {src: host5, dst: host4, size: 4MiB}\n"
      "training: {dp: 8, optimizer_time: 0.1ms, layers: [{count: 2, fwd_time: 0.1ms, params: "
      "4MB}]}\n";
  const auto run = [&](const std::string& name, const std::string& pfc) {
    const fs::path p = scratch("training") / (name + ".yaml");
    std::ofstream(p) << "name: " << name << "\nseed: 1\ntransport: roce\n"
                     << "topology: {kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 4}\n"
                     << "link: {host_rate: 100Gbps, fabric_rate: 400Gbps, propagation_delay: "
                        "100ns}\n"
                     << "switch: {latency: 300ns, buffer_per_port: 200KB}\nnic: {mtu: 1000B}\n"
                     << "pfc: {enabled: " << pfc << "}\n"
                     << tail;
    const fs::path d = scratch("training") / (name + "_out");
    const Result r = fabricsim("run " + p.string() + " --out " + d.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    double nic_paused_ps = 0;
    for (const auto& row : csv_rows(d / "queues.csv")) {
      if (row.at(0).rfind("host", 0) == 0) nic_paused_ps += std::stod(row.at(12)) * 1e6;
    }
    return std::make_pair(nlohmann::json::parse(slurp(d / "results.json"))["training"],
                          nic_paused_ps);
  };
  const auto [t, nic_paused_ps] = run("pfc_cp", "true");
  const auto& cp = t["critical_path"];
  const int64_t pause = cp["pfc_pause_ps"].get<int64_t>();
  INFO(cp.dump());
  CHECK(pause > 0);
  CHECK(static_cast<double>(pause) <= nic_paused_ps + 1);  // paused_us has 6 decimals
  CHECK(pause + cp["queueing_other_ps"].get<int64_t>() ==
        cp["queueing_pause_other_ps"].get<int64_t>());
  CHECK(cp["queueing_other_ps"].get<int64_t>() >= 0);
  // Before: pauses of a GPU's NVLink port (an incast inside a server) counted as
  // its NIC's. Here only the hostN -> nvswitchN queues are paused, never a NIC's.
  {
    const fs::path p = scratch("training") / "nvlink_pause.yaml";
    std::ofstream(p) << "name: nvlink_pause\nseed: 1\ntransport: roce\n"
                     << "topology: {kind: spine-leaf, leaves: 2, spines: 1, hosts_per_leaf: 4, "
                        "gpus_per_server: 4}\n"
                     << "link: {host_rate: 100Gbps, fabric_rate: 400Gbps, propagation_delay: "
                        "100ns, nvlink_rate: 100Gbps}\n"
                     << "switch: {latency: 300ns, buffer_per_port: 200KB}\nnic: {mtu: 1000B}\n"
                     << "pfc: {enabled: true}\ntraffic:\n";
    for (const char* f : {"host1, dst: host0", "host2, dst: host0", "host3, dst: host0",
                          "host5, dst: host4", "host6, dst: host4", "host7, dst: host4"}) {
      std::ofstream(p, std::ios::app) << "  - {src: " << f << ", size: 8MiB}\n";
    }
    std::ofstream(p, std::ios::app)
        << "training: {dp: 8, bucket_cap: 4MiB, optimizer_time: 0.1ms, layers: [{count: 4, "
           "fwd_time: 0.1ms, params: 4MiB}]}\n";
    const fs::path d = scratch("training") / "nvlink_pause_out";
    const Result r = fabricsim("run " + p.string() + " --out " + d.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    double nvlink_paused = 0, nic_paused = 0;
    for (const auto& row : csv_rows(d / "queues.csv")) {
      if (row.at(0).rfind("host", 0) != 0) continue;
      (row.at(2).rfind("nvswitch", 0) == 0 ? nvlink_paused : nic_paused) += std::stod(row.at(12));
    }
    CHECK(nvlink_paused > 0);
    CHECK(nic_paused == 0);
    CHECK(nlohmann::json::parse(
              slurp(d / "results.json"))["training"]["critical_path"]["pfc_pause_ps"] == 0);
  }
  // Without PFC nothing pauses a NIC (the incast drops and retransmits instead).
  const auto [lossy, lossy_paused_ps] = run("pfc_off", "false");
  CHECK(lossy_paused_ps == 0);
  CHECK(lossy["critical_path"]["pfc_pause_ps"] == 0);
}

TEST_CASE("training: a sweep varies training keys and tabulates the step time") {
  const fs::path sc =
      two_gpu_scenario("sweep_step",
                       "training:\n  dp: 2\n  layers:\n"
                       "    - {name: fc, fwd_time: 1ms, bwd_time: 2ms, params: 1MiB}\n");
  const fs::path d = scratch("training") / "sweep_step_out";
  const Result r =
      fabricsim("sweep " + sc.string() + " --vary training.optimizer_time=1ms,3ms --jobs 1 --out " +
                d.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto t = csv_table(d / "sweep.csv");
  REQUIRE(t.size() == 3);
  double step_ms[2];
  for (size_t p = 1; p <= 2; ++p) {
    const auto j = nlohmann::json::parse(
        slurp(d / ("point-00" + std::to_string(p)) / "results.json"))["training"];
    step_ms[p - 1] = std::stod(cell(t, p, "step_ms"));
    CHECK(step_ms[p - 1] == Approx(j["step_ps"].get<double>() / 1e9).epsilon(1e-12));
    CHECK(std::stod(cell(t, p, "exposed_comm_ms")) ==
          Approx(j["exposed_comm_ps"].get<double>() / 1e9).epsilon(1e-12));
  }
  // The optimizer runs last on every GPU: 2 ms more of it is 2 ms more step.
  CHECK(step_ms[1] - step_ms[0] == Approx(2.0).epsilon(1e-9));
  // A training step alone has no collective sizes: no busbw plots (there were empty ones).
  CHECK(!fs::exists(d / "busbw.gp"));
  CHECK(!fs::exists(d / "vs-training.optimizer_time.dat"));
  // step-vs-KEY.dat plots the same step times against the varied key (x in us, as it says).
  const std::string dat_text = slurp(d / "step-vs-training.optimizer_time.dat");
  CHECK(dat_text.find("# x = training.optimizer_time in us;") != std::string::npos);
  std::istringstream dat(dat_text);
  std::vector<std::pair<double, double>> plotted;
  for (std::string line; std::getline(dat, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream row(line);
    double x = 0, y = 0;
    row >> x >> y;
    plotted.emplace_back(x, y);
  }
  REQUIRE(plotted.size() == 2);
  CHECK(plotted[0].first == Approx(1000));
  CHECK(plotted[1].first == Approx(3000));
  CHECK(plotted[0].second == Approx(step_ms[0]).epsilon(1e-12));
  CHECK(plotted[1].second == Approx(step_ms[1]).epsilon(1e-12));
  // Regressions: a non-map training value read past an empty key list (a crash),
  // and a step whose compute overflows int64 picoseconds was accepted.
  const Result scalar = fabricsim("validate " + sc.string() + " --set training=4");
  CHECK(scalar.exit_code == 2);
  CHECK(scalar.err.find("set one of its keys, e.g. training.dp") != std::string::npos);
  const Result huge = fabricsim("validate " + sc.string() +
                                " --set 'training={microbatches: 4096, layers: [{fwd_time: "
                                "3600s}]}'");
  CHECK(huge.exit_code == 2);
  CHECK(huge.err.find("expected at most a day") != std::string::npos);
  const Result typo = fabricsim("validate " + sc.string() + " --set training.dpp=1");
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("training.dpp: unknown key; did you mean 'training.dp'?") !=
        std::string::npos);
}
