// perftest as a workload (perftest/perftest.hpp) on the packet model with the NIC's message
// rate and latencies (nic.message_rate, nic.tx_latency, nic.rx_latency): closed forms, and the
// simulated perftest tables, parsed by calibration/perftest's parser, against real perftest logs
// (tests/data/perftest/). Each NIC value a log check uses was fitted elsewhere (said per test).
#include <sys/wait.h>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "calibration/perftest.hpp"
#include "perftest/perftest.hpp"
#include "sim/config/loader_detail.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {
namespace {

const std::string kSource = FABRICSIM_SOURCE_DIR;

/// Runs `scenario` (in scenarios/) with `sets` and parses the perftest table it prints.
PerftestLog simulate(const std::string& scenario, std::vector<std::string> sets) {
  RunOptions opts;
  opts.scenario_path = kSource + "/scenarios/" + scenario;
  opts.sets = std::move(sets);
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);
  const RunReport rep = simulate(sc, prepared, nullptr, false);
  REQUIRE(rep.complete);
  return parse_perftest(rep.perftest, scenario);
}

PerftestLog measured(const std::string& log) {
  return parse_perftest_file(kSource + "/tests/data/perftest/" + log);
}

std::map<int64_t, const PerftestBwRow*> by_size(const PerftestLog& log) {
  std::map<int64_t, const PerftestBwRow*> rows;
  for (const PerftestBwRow& r : log.bw_rows) rows[r.bytes] = &r;
  return rows;
}

}  // namespace

TEST_CASE("perftest tests the loader accepts are the ones the workload simulates") {
  std::vector<std::string> simulated;
  for (const PerftestTest& t : perftest_tests()) simulated.emplace_back(t.name);
  CHECK(config_detail::perftest_test_names().available == simulated);
}

TEST_CASE("ib_write_bw of small messages runs at the NIC's message rate") {
  // 1000 messages of 64 B, 128 outstanding: the NIC starts one every 1 / message_rate, far
  // longer than a 64 B frame's 12 ns at 100 Gb/s, so MsgRate = message_rate (within the run's
  // start and end, one frame and a completion: < 0.5 %).
  const PerftestLog log =
      simulate("perftest_ib_write_bw_roce100g.yaml",
               {"perftest.all=false", "perftest.size=64B", "nic.message_rate=2e6"});
  REQUIRE(log.bw_rows.size() == 1);
  CHECK(log.bw_rows[0].msg_rate_Mpps == Approx(2.0).epsilon(0.005));
  CHECK(log.tool == "ib_write_bw");
  CHECK(log.link_type == "Ethernet");
  CHECK(log.mtu_bytes == 1024);
}

TEST_CASE("ib_write_lat is the send latency plus the wire plus the receive latency") {
  // One way, 2 B over IB at 32 Gb/s, host - cut-through switch - host: the 28-byte frame
  // (2 + 26 B of headers) serialized at the host port, its first bit forwarded 100 ns after it
  // reached the switch towards an equally fast port, two 25 ns cables: 7 ns + 100 ns + 50 ns;
  // the receiver's PCIe copy of 2 B at 63 Gb/s is 0.25 ns.
  const PerftestLog log = simulate("perftest_ib_write_lat_ib_qdr.yaml",
                                   {"perftest.all=false", "nic.tx_latency=300ns",
                                    "nic.rx_latency=200ns", "perftest.iterations=10"});
  REQUIRE(log.lat_rows.size() == 1);
  const double wire_us = (28 * 8 / 32e9 + 100e-9 + 50e-9) * 1e6;
  CHECK(log.lat_rows[0].t_typical_us == Approx(0.3 + 0.2 + wire_us).margin(0.006));
  CHECK(log.lat_rows[0].t_min_us == log.lat_rows[0].t_max_us);
}

TEST_CASE("ib_write_bw on RoCE 100G ConnectX-6 Dx against a real log") {
  // message_rate fitted on perftest-ib_write_bw-roce-cx6dx-52g-k8s-nvidia-cns-01.txt (the same
  // NIC model, perftest build and guide at another link rate), checked here on another run.
  const PerftestLog sim = simulate("perftest_ib_write_bw_roce100g.yaml", {});
  const PerftestLog real = measured("perftest-ib_write_bw-roce100g-a100pcie-egx-nvidia-cns-01.txt");
  const auto s = by_size(sim), r = by_size(real);
  REQUIRE(s.size() == 23);
  REQUIRE(r.size() == 23);
  // Within 5 % where the message rate limits (64 B .. 1 KiB, 128 B excepted: the log's 128 B
  // and 256 B rows run 4 % faster than its others); from 2 KiB the NIC is line-rate bound in the
  // model (92.6 Gb/s of RDMA payload at MTU 1024) while this host reached 88 Gb/s, and 83.7 from
  // 256 KiB (the log's header: a PCIe / host limit the model does not have): +5 % to +11 %.
  for (const int64_t bytes : {64, 256, 512, 1024}) {
    INFO(bytes << " B: simulated " << s.at(bytes)->bw_avg_Bps << " B/s, measured "
               << r.at(bytes)->bw_avg_Bps);
    CHECK(s.at(bytes)->bw_avg_Bps / r.at(bytes)->bw_avg_Bps == Approx(1).margin(0.05));
  }
  CHECK(s.at(128)->bw_avg_Bps / r.at(128)->bw_avg_Bps == Approx(1).margin(0.06));
  for (const int64_t bytes : {8192, 16384, 32768, 65536, 131072}) {
    INFO(bytes << " B");
    CHECK(s.at(bytes)->bw_avg_Bps / r.at(bytes)->bw_avg_Bps == Approx(1.055).margin(0.01));
  }
}

TEST_CASE("ib_write_bw at 64 KiB on RoCE 100G ConnectX-5 against a real log") {
  // perftest-ib_write_bw-roce100g-cx5-k8s-sriov-01.txt: default size, MTU 1024, 100 GbE; line
  // rate bound, so the message rate (fitted on the ConnectX-6 Dx log) does not enter.
  const PerftestLog sim = simulate("perftest_ib_write_bw_roce100g.yaml",
                                   {"perftest.all=false", "perftest.report_gbits=false"});
  const PerftestLog real = measured("perftest-ib_write_bw-roce100g-cx5-k8s-sriov-01.txt");
  REQUIRE(sim.bw_rows.size() == 1);
  REQUIRE(real.bw_rows.size() == 1);
  CHECK(sim.bw_rows[0].bytes == real.bw_rows[0].bytes);
  CHECK(sim.bw_rows[0].bw_avg_Bps / real.bw_rows[0].bw_avg_Bps == Approx(1).margin(0.01));
}

TEST_CASE("ib_write_lat on InfiniBand QDR ConnectX-3 against a real log") {
  // tx_latency + rx_latency fitted on this log's 2 B row (the only ib_write_lat log); the DMA
  // read latency and PCIe rate are not fitted (a public PCIe round trip measurement, the NIC's
  // PCIe 3.0 x8): the other 22 sizes check the model. Within 10 % but at 128 B (16 % fast: 128 B
  // still goes inline, yet the log's latency grows by 0.13 us from 64 B, the cost of writing a
  // larger WQE to the NIC, which the model lacks) and 2 KiB (10.1 % fast).
  const PerftestLog sim = simulate("perftest_ib_write_lat_ib_qdr.yaml", {});
  const PerftestLog real = measured("perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.txt");
  REQUIRE(sim.lat_rows.size() == real.lat_rows.size());
  for (size_t i = 0; i < sim.lat_rows.size(); ++i) {
    const int64_t bytes = sim.lat_rows[i].bytes;
    REQUIRE(bytes == real.lat_rows[i].bytes);
    const double ratio = sim.lat_rows[i].t_typical_us / real.lat_rows[i].t_typical_us;
    INFO(bytes << " B: simulated " << sim.lat_rows[i].t_typical_us << " us, measured "
               << real.lat_rows[i].t_typical_us);
    if (bytes == 128) {
      CHECK(ratio == Approx(0.84).margin(0.01));
    } else if (bytes == 2048) {
      CHECK(ratio == Approx(0.9).margin(0.01));
    } else {
      CHECK(ratio == Approx(1).margin(0.10));
    }
  }
}

TEST_CASE("a payload not sent inline waits for its DMA read and both PCIe copies") {
  // 4 KiB, two 2 KiB packets, inline off: tx_latency + DMA read + the first packet over PCIe
  // (2048 B at 63 Gb/s) + the wire (both 2074-byte frames back to back at 32 Gb/s, the switch
  // cut-through: 100 ns, two 25 ns cables) + the last packet over PCIe + rx_latency.
  const PerftestLog log =
      simulate("perftest_ib_write_lat_ib_qdr.yaml",
               {"perftest.all=false", "perftest.size=4096B", "perftest.iterations=4"});
  const double pcie_us = 2048 * 8 / 63e9 * 1e6;
  const double wire_us = (2 * 2074 * 8 / 32e9 + 100e-9 + 50e-9) * 1e6;
  CHECK(log.lat_rows.at(0).t_typical_us ==
        Approx(0.41 + 0.85 + pcie_us + wire_us + pcie_us + 0.41).margin(0.006));
  // 200 B goes inline (perftest's 220 B for ib_write_lat): no DMA read, no copy at the sender.
  const PerftestLog small =
      simulate("perftest_ib_write_lat_ib_qdr.yaml",
               {"perftest.all=false", "perftest.size=200B", "perftest.iterations=4"});
  const double small_wire_us = (226 * 8 / 32e9 + 100e-9 + 50e-9) * 1e6;
  CHECK(small.lat_rows.at(0).t_typical_us ==
        Approx(0.41 + small_wire_us + 200 * 8 / 63e9 * 1e6 + 0.41).margin(0.006));
}

TEST_CASE("a receiving NIC whose PCIe is slower than its port caps ib_write_bw at nic.pcie_rate") {
  // 1 MiB writes at 100 GbE, MTU 1024: the port carries 1024 B of payload per 1106-byte frame
  // (82 B of RoCEv2 headers), 92.6 Gb/s; the receiver writes each packet's payload over PCIe
  // one after another, so a 50 Gb/s link caps the payload at 50 Gb/s, and a 200 Gb/s one at the
  // port's rate.
  const std::vector<std::string> sets = {"perftest.all=false", "perftest.size=1MiB",
                                         "perftest.iterations=200"};
  auto with = [&](const std::string& pcie) {
    std::vector<std::string> s = sets;
    s.push_back("nic.pcie_rate=" + pcie);
    const PerftestLog log = simulate("perftest_ib_write_bw_roce100g.yaml", s);
    REQUIRE(log.bw_rows.size() == 1);
    return log.bw_rows[0].bw_avg_Bps * 8 / 1e9;
  };
  CHECK(with("50Gbps") == Approx(50).epsilon(0.01));
  CHECK(with("200Gbps") == Approx(100.0 * 1024 / 1106).epsilon(0.01));
}

TEST_CASE("with no NIC latency a one-way write is the wire alone") {
  // 2 B inline; the receiver's PCIe copy of 2 B at 63 Gb/s is 0.25 ns.
  const PerftestLog log = simulate(
      "perftest_ib_write_lat_ib_qdr.yaml",
      {"perftest.all=false", "nic.tx_latency=0ns", "nic.rx_latency=0ns", "perftest.iterations=4"});
  const double wire_us = (28 * 8 / 32e9 + 100e-9 + 50e-9) * 1e6;
  CHECK(log.lat_rows.at(0).t_typical_us == Approx(wire_us).margin(0.006));
}

TEST_CASE("run --out writes perftest.txt which the perftest log parser reads as a real log") {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / "fabricsim_test_perftest_txt";
  std::filesystem::remove_all(out);
  const std::string cmd =
      "cd " + kSource + " && " + FABRICSIM_BINARY +
      " run scenarios/perftest_ib_write_bw_roce100g.yaml --set perftest.all=false"
      " --set perftest.test=ib_read_bw --out " +
      out.string() + " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const PerftestLog log = parse_perftest_file((out / "perftest.txt").string());
  CHECK(log.tool == "ib_read_bw");
  REQUIRE(log.bw_rows.size() == 1);
  CHECK(log.bw_rows[0].bytes == 65536);
  CHECK(log.bw_rows[0].iterations == 1000);
  CHECK(log.meta.count("simulated") == 1);
  std::filesystem::remove_all(out);
}

TEST_CASE("the simulated header states the iteration floor that large sizes run") {
  // 64 MiB a size would give an 8 MiB write 8 iterations; a run never goes under 2 x TX depth
  // x QPs (perftest's ib_write_bw default TX depth 128, one QP: 256), so 8 MiB runs 256, 2 GiB.
  // The header says both bounds.
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / "fabricsim_test_perftest_floor";
  std::filesystem::remove_all(out);
  const std::string cmd =
      "cd " + kSource + " && " + FABRICSIM_BINARY +
      " run scenarios/perftest_ib_write_bw_roce100g.yaml --set perftest.all=false"
      " --set perftest.size=8MiB --out " +
      out.string() + " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const PerftestLog log = parse_perftest_file((out / "perftest.txt").string());
  REQUIRE(log.bw_rows.size() == 1);
  CHECK(log.bw_rows[0].iterations == 256);
  CHECK(log.meta.at("simulated").find("and at least 256 iterations (2 x TX depth x QPs") !=
        std::string::npos);
  std::filesystem::remove_all(out);
}

TEST_CASE("a perftest.txt of a run stopped early says so after its last row") {
  // The 4.59 Mpps message rate gives 2 B .. 4 KiB within the first 200 000 events; the table
  // used to end there like a shorter sweep, with nothing to say that 8 KiB .. 8 MiB never ran.
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / "fabricsim_test_perftest_stopped";
  std::filesystem::remove_all(out);
  const std::string cmd = "cd " + kSource + " && " + FABRICSIM_BINARY +
                          " run scenarios/perftest_ib_write_bw_roce100g.yaml --max-events 200000"
                          " --out " +
                          out.string() + " >/dev/null";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 124);  // --max-events reached, as timeout(1)
  std::ifstream in(out / "perftest.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("# incomplete: stopped at --max-events 200000 during ib_write_bw") !=
        std::string::npos);
  // Still a perftest log: the rows that ran parse, and stop before 8 MiB.
  const PerftestLog log = parse_perftest_file((out / "perftest.txt").string());
  REQUIRE(!log.bw_rows.empty());
  CHECK(log.bw_rows.back().bytes < (int64_t{8} << 20));
  std::filesystem::remove_all(out);
}

}  // namespace fabricsim
