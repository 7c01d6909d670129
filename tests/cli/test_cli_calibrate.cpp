// End-to-end: `fabricsim calibrate` and measured logs beside the simulated sweep.
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

TEST_CASE("calibrate: every log in tests/data parses and fits, or is refused at its line") {
  // Exit 0 (fitted) or 2 (a log that is not a complete run, e.g. a hang without rows, or one
  // with too few sizes to fit: the 4 GB300 logs have 2, or the GB200 2-rack log, whose device
  // line is from a 144-rank run and its rows from a 128-rank one), never an internal error; the
  // report lists each file.
  int ok = 0, refused = 0;
  for (const char* dir : {"perftest", "nccl"}) {
    for (const auto& e :
         fs::directory_iterator(fs::path(FABRICSIM_SOURCE_DIR) / "tests/data" / dir)) {
      const std::string flag = std::string(dir) == "perftest" ? "--perftest " : "--nccl-tests ";
      const fs::path out = scratch("cal_all") / "cal.yaml";
      const Result r =
          fabricsim("calibrate " + flag + e.path().string() + " --out " + out.string());
      INFO(e.path().filename().string() << "\n" << r.err);
      CHECK((r.exit_code == 0 || r.exit_code == 2));
      if (r.exit_code == 2) {
        ++refused;
        CHECK(r.err.find(e.path().filename().string() + ":") != std::string::npos);  // path:line
        if (e.path().filename().string().find("-efa-") != std::string::npos) {
          CHECK(r.err.find("AWS EFA (SRD) through aws-ofi-nccl (libfabric), is not modelled") !=
                std::string::npos);
        }
      } else {
        ++ok;
        const auto j = nlohmann::json::parse(slurp(scratch("cal_all") / "cal.report.json"));
        CHECK(j["inputs"].size() == 1);
        CHECK(j["heldout_median_abs_pct_error"].is_null());
        // Without --scenario an nccl-tests log (or a latency log) fits no scenario key: said
        // on stdout and in the fragment, not left as a fragment of comments.
        const bool empty = j["fragment"].empty();
        if (std::string(dir) == "nccl") CHECK(empty);
        const std::string note = "no scenario key fitted (the fits are in the report)";
        CHECK((r.out.find("# fragment   : " + note) != std::string::npos) == empty);
        CHECK((slurp(out).find("# " + note) != std::string::npos) == empty);
      }
    }
  }
  // Refused: the 7 above and the 7 EFA logs (their transport is not modelled, so not fitted).
  CHECK(ok >= 32);
  CHECK(refused <= 14);
}

TEST_CASE("calibrate: the fragment fitted through a scenario reproduces the log it was fitted on") {
  // The H200 2x1 all_reduce log (2 GPUs on 2 RoCE nodes) through the quickstart fabric with 2
  // ranks, simulated up to 64 MiB (kept small for the sanitizer build): link.host_rate is
  // fitted at the largest simulated size (64 MiB, 2250.8 us in the log: busbw 29.82 GB/s) and
  // nccl.launch_latency at the smallest (1 KiB, 35.59 us in the log).
  const std::string log =
      "tests/data/nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt";
  const fs::path out = scratch("cal_h200") / "cal.yaml";
  const Result r = fabricsim(
      "calibrate --scenario scenarios/quickstart.yaml --max-sim-size 64MiB "
      "--nccl-tests " +
      log + " --out " + out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(slurp(scratch("cal_h200") / "cal.report.json"));
  const auto& frag = report["fragment"];
  REQUIRE(frag.contains("link.host_rate"));
  REQUIRE(frag.contains("nccl.launch_latency"));
  std::string sets;
  for (const auto& [k, v] : frag.items()) sets += " --set " + k + "=" + v.get<std::string>();
  const fs::path d = scratch("cal_h200_run");
  const Result run = fabricsim("run scenarios/quickstart.yaml" + sets +
                               " --set workload.ngpus=2 --set workload.minbytes=1KiB"
                               " --set workload.maxbytes=64MiB --out " +
                               d.string());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto rows = nlohmann::json::parse(slurp(d / "results.json"))["collectives"];
  CHECK(rows.front()["size_bytes"] == 1024);
  CHECK(rows.front()["time_us"].get<double>() == Approx(35.59).epsilon(0.02));
  CHECK(rows.back()["size_bytes"] == 67108864);
  CHECK(rows.back()["busbw_GBps"].get<double>() ==
        Approx(67108864 / 2250.8e-6 / 1e9).epsilon(0.02));
  // The plot: a gnuplot script always, and the SVG where gnuplot is installed (setup.sh
  // installs gnuplot-nox).
  CHECK(fs::exists(scratch("cal_h200") / "cal.plot.gp"));
  // Its size ticks read as nccl-tests sizes (the log's 1 KiB first row, its 256 MiB row), not
  // gnuplot's default "1.04858x10^6".
  const std::string gp = slurp(scratch("cal_h200") / "cal.plot.gp");
  CHECK(gp.find("set xtics (\"1K\" 1024, ") != std::string::npos);
  CHECK(gp.find(", \"256M\" 268435456") != std::string::npos);
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    CHECK(slurp(scratch("cal_h200") / "cal-0.svg").find("<svg") != std::string::npos);
  }
  // Held out from 16 MiB, the same fit is judged on sizes it did not see.
  const Result held = fabricsim(
      "calibrate --scenario scenarios/quickstart.yaml --max-sim-size 64MiB --nccl-tests " + log +
      " --holdout above=16MiB --out " + out.string());
  REQUIRE(held.exit_code == 0);
  CHECK(held.out.find("held out: busbw error median") != std::string::npos);
  const auto hr = nlohmann::json::parse(slurp(scratch("cal_h200") / "cal.report.json"));
  CHECK(hr["heldout_median_abs_pct_error"].is_number());
  CHECK(hr["heldout_max_abs_pct_error"].get<double>() >=
        hr["heldout_median_abs_pct_error"].get<double>());
}

TEST_CASE("measured.nccl_tests: the real log beside the simulated sweep, with its error") {
  const fs::path d = scratch("measured");
  const Result r = fabricsim(
      "run scenarios/roce_h200_a3ultra.yaml --set workload.maxbytes=1MiB --out " + d.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# measured   : ../tests/data/nccl/"  // as the scenario writes it
                   "nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt") !=
        std::string::npos);
  const auto m = nlohmann::json::parse(slurp(d / "results.json"))["measured"];
  REQUIRE(m["points"].size() == 11);  // 1 KiB .. 1 MiB, all in the log
  // The log's 1 KiB row: 35.59 us; 2 ranks, busbw factor 1.
  CHECK(m["points"][0]["size_bytes"] == 1024);
  CHECK(m["points"][0]["measured_busbw_GBps"].get<double>() ==
        Approx(1024 / 35.59e-6 / 1e9).epsilon(1e-9));
  std::vector<double> errors;
  for (const auto& p : m["points"]) {
    const double meas = p["measured_busbw_GBps"], simu = p["simulated_busbw_GBps"];
    CHECK(p["error_pct"].get<double>() == Approx((simu - meas) / meas * 100));
    errors.push_back(std::abs(simu - meas) / meas * 100);
  }
  std::sort(errors.begin(), errors.end());
  CHECK(m["median_abs_pct_error"].get<double>() == Approx(errors[errors.size() / 2]));
  CHECK(m["max_abs_pct_error"].get<double>() == Approx(errors.back()));

  // The log's "## fabric: RoCEv2 400G …" line: a transport the model has, nothing to warn of.
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  CHECK(j["measured"]["network_transport"]["support"] == "modelled");
  CHECK(j["measured"]["network_transport"]["name"] == "NET/IB (RoCE)");
  CHECK(j["limits"].empty());
  CHECK(r.out.find("# warning") == std::string::npos);

  const Result other =
      fabricsim("validate scenarios/roce_h200_a3ultra.yaml --set workload.ngpus=4");
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("measured.nccl_tests: ") != std::string::npos);
  CHECK(other.err.find("ran all_reduce on 2 ranks, the workload runs all_reduce on 4") !=
        std::string::npos);
  const Result missing =
      fabricsim("validate scenarios/roce_h200_a3ultra.yaml --set measured.nccl_tests=nope.txt");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("nope.txt:0: cannot open log file: No such file or directory") !=
        std::string::npos);
}

TEST_CASE("measured.nccl_tests: an EFA log is compared with a warning that EFA is not modelled") {
  // The 2 x 1 T4 log on g4dn.metal ran over AWS EFA (line 24: "NET/OFI Selected Provider is
  // efa"): the quickstart's 2 ranks are compared with it, and both the comparison and
  // results.json say that the comparison is no prediction of EFA.
  const std::string log = std::string(FABRICSIM_SOURCE_DIR) +
                          "/tests/data/nccl/nccl-allreduce-t4-2node-aws-g4dn-metal-efa-01.txt";
  const fs::path d = scratch("measured_efa");
  const Result r = fabricsim(
      "run scenarios/quickstart.yaml --set workload.ngpus=2 --set workload.maxbytes=1MiB --set "
      "measured.nccl_tests=" +
      log + " --out " + d.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("# warning    : the log ran on AWS EFA (SRD) through aws-ofi-nccl (libfabric) "
                   "(line 24: `node01:21:21 [0] NCCL INFO NET/OFI Selected Provider is efa (found "
                   "1 nics)`), which fabricsim does not model") != std::string::npos);
  CHECK(r.out.find("this comparison is not a prediction of that hardware") != std::string::npos);
  CHECK(r.out.find("# not modelled: the measured log's network transport, AWS EFA (SRD)") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(slurp(d / "results.json"));
  const auto& t = j["measured"]["network_transport"];
  CHECK(t["support"] == "not_modelled");
  CHECK(t["name"] == "AWS EFA (SRD) through aws-ofi-nccl (libfabric)");
  CHECK(t["line"] == 24);
  REQUIRE(j["limits"].size() == 1);
  CHECK(j["limits"][0]["what"] ==
        "the measured log's network transport, AWS EFA (SRD) through aws-ofi-nccl (libfabric)");
  CHECK(j["limits"][0]["why"].get<std::string>().find(
            "so the comparison is not a prediction of that hardware") != std::string::npos);
  CHECK_FALSE(j["measured"]["points"].empty());  // still compared, size by size
}

TEST_CASE("calibrate: an EFA log is parsed but not fitted, and the report says why") {
  // Beside a RoCE log that is fitted: the p3dn 2 x 1 log's "Using network AWS Libfabric" (line
  // 19) and "NET/OFI Selected Provider is efa" (line 17) lines.
  const std::string efa = "tests/data/nccl/nccl-allreduce-v100-2x1-aws-p3dn-efa-01.txt";
  const std::string roce =
      "tests/data/nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt";
  const fs::path out = scratch("cal_efa") / "cal.yaml";
  const Result r = fabricsim(
      "calibrate --scenario scenarios/quickstart.yaml --max-sim-size 1MiB "
      "--nccl-tests " +
      efa + " --nccl-tests " + roce + " --out " + out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("fabricsim: warning: " + efa +
                   ":17: AWS EFA (SRD) through aws-ofi-nccl (libfabric) is not modelled: the log "
                   "is not fitted") != std::string::npos);
  CHECK(r.out.find("# nccl-tests " + efa + ": not fitted (its network transport, AWS EFA") !=
        std::string::npos);
  const auto rep = nlohmann::json::parse(slurp(scratch("cal_efa") / "cal.report.json"));
  const auto& in = rep["inputs"][0];
  CHECK(in["path"] == efa);
  CHECK(in["transport"] == "AWS Libfabric");  // as NCCL printed it
  CHECK(in["network_transport"]["support"] == "not_modelled");
  CHECK(in["network_transport"]["line"] == 17);
  CHECK(in["fit"].is_null());
  CHECK(in["not_fitted"].get<std::string>().find(
            "its network transport, AWS EFA (SRD) through aws-ofi-nccl (libfabric), is not "
            "modelled (line 17: `node01:14:14 [0] NCCL INFO NET/OFI Selected Provider is efa`)") ==
        0);
  CHECK(rep["inputs"][1]["network_transport"]["support"] == "modelled");
  CHECK(rep["inputs"][1]["fit"].is_object());
  // Not simulated either; the RoCE log is, and the fragment comes from it.
  CHECK(rep["simulated"][0]["path"] == efa);
  CHECK(rep["simulated"][0]["skipped"].get<std::string>().rfind("not fitted: its network", 0) == 0);
  CHECK(rep["simulated"][1]["path"] == roce);
  CHECK(rep["fragment"].contains("link.host_rate"));
  // The EFA log's GPUDirect state is not a hint about this cluster's NICs: no hint names it.
  for (const auto& h : rep["hints"]) CHECK(h["path"] != efa);
}

TEST_CASE("calibrate: a simulated log's rate, launch and step latency are recovered") {
  // fabricsim's own table, from known parameters, is a log with a known truth.
  const Result sim = fabricsim(
      "run scenarios/quickstart.yaml --set workload.ngpus=2 --set workload.minbytes=1KiB --set "
      "workload.maxbytes=64MiB --set nccl.step_latency=10us --set nccl.launch_latency=15us --set "
      "link.host_rate=200Gbps --set link.fabric_rate=200Gbps");
  REQUIRE(sim.exit_code == 0);
  const fs::path log = scratch("cal_synth") / "synth.txt";
  std::ofstream(log) << sim.out;
  const fs::path out = scratch("cal_synth") / "cal.yaml";
  SECTION("the fit recovers what the log was made with") {
    const Result r = fabricsim("calibrate --scenario scenarios/quickstart.yaml --nccl-tests " +
                               log.string() + " --out " + out.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto rep = nlohmann::json::parse(slurp(scratch("cal_synth") / "cal.report.json"));
    const auto& in = rep["inputs"][0];
    CHECK(in["collective"] == "all_reduce");  // from "# fabricsim quickstart: all_reduce, …"
    CHECK(in["nranks"] == 2);                 // from "# nccl : 2 ranks on 2 servers …"
    CHECK(in["nodes"] == 2);
    const auto& s = rep["simulated"][0];
    CHECK(s["host_rate_bps"].get<double>() == Approx(200e9).epsilon(0.01));
    CHECK(s["launch_latency_ps"].get<double>() == Approx(15e6).epsilon(0.10));
    CHECK(s["step_latency_ps"].get<double>() == Approx(10e6).epsilon(0.10));
    CHECK(s["fitted_median_abs_pct_error"].get<double>() < 1.0);
  }

  SECTION(
      "a log with ranks but no collective is skipped, not an internal error (was exit 1); "
      "alone, nothing is calibrated: bad input (exit 2)") {
    std::string text = sim.out;
    text.erase(0, text.find('\n') + 1);  // drop "# fabricsim quickstart: all_reduce, …"
    const fs::path nocoll = scratch("cal_synth") / "nocoll.txt";
    std::ofstream(nocoll) << text;
    const Result n = fabricsim("calibrate --scenario scenarios/quickstart.yaml --nccl-tests " +
                               nocoll.string() + " --out " + out.string());
    INFO(n.out << n.err);
    CHECK(n.exit_code == 2);
    CHECK(n.out.find("skipped (the log names no collective") != std::string::npos);
    CHECK(n.err.find("no log could be fitted, nothing written") != std::string::npos);
  }
}

TEST_CASE("calibrate: by file, an all_gather fit predicts the same machines' all_reduce") {
  // Two logs of 2 x 1 H200 on GCP A3 Ultra (400G RoCE): fitted on all_gather, all_reduce held
  // out. At 256 MiB the NIC rate fitted on one collective predicts the other's measured busbw
  // (31.09 GB/s in the log) within 7.5 %; the mid sizes are off more (NCCL 2.2x keeps LL128 up
  // to 32 MiB there, where the model's NCCL 2.20 cost model picks Simple).
  const std::string ag = "tests/data/nccl/nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.txt";
  const std::string ar =
      "tests/data/nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt";
  const fs::path out = scratch("cal_byfile") / "cal.yaml";
  const Result r =
      fabricsim("calibrate --scenario scenarios/quickstart.yaml --nccl-tests " + ag +
                " --nccl-tests " + ar + " --holdout file=" + ar + " --out " + out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto rep = nlohmann::json::parse(slurp(scratch("cal_byfile") / "cal.report.json"));
  REQUIRE(rep["simulated"].size() == 2);
  const auto& fit = rep["simulated"][0];
  const auto& pred = rep["simulated"][1];
  CHECK(fit["path"] == ag);
  CHECK(fit["heldout_median_abs_pct_error"].is_null());
  CHECK(pred["path"] == ar);
  CHECK(pred["host_rate_bps"] == fit["host_rate_bps"]);
  bool seen = false;
  for (const auto& p : pred["points"]) {
    CHECK(p["heldout"] == true);
    if (p["bytes"] == 268435456) {
      seen = true;
      CHECK(p["measured_busbw_GBps"].get<double>() == Approx(31.09).epsilon(0.005));
      CHECK(p["simulated_busbw_GBps"].get<double>() == Approx(31.09).epsilon(0.075));
    }
  }
  CHECK(seen);
  CHECK(rep["heldout_median_abs_pct_error"] == pred["heldout_median_abs_pct_error"]);
  CHECK(r.out.find("held out: busbw error median") != std::string::npos);
}

TEST_CASE("calibrate: an N x 1 log runs one rank per server of an 8-GPU scenario") {
  // 2 x 1 B200 (GCP A4, ConnectX-7 400G RoCE): on a rail fabric of 8-GPU servers the two ranks
  // go to two servers (ranks_per_server 1), so the fit is of the NIC, not of NVLink: no layout
  // note, and a rate below the 400G port (the header's) but above half of it.
  const fs::path out = scratch("cal_nx1") / "cal.yaml";
  const Result r = fabricsim(
      "calibrate --scenario scenarios/rail_optimized_h100_su.yaml --set topology.servers_per_su=4 "
      "--set transport=roce --max-sim-size 16MiB --nccl-tests "
      "tests/data/nccl/nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt --out " +
      out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("note:") == std::string::npos);
  CHECK(r.out.find("not used for the fragment") == std::string::npos);
  const auto rep = nlohmann::json::parse(slurp(scratch("cal_nx1") / "cal.report.json"));
  const double rate = rep["simulated"][0]["host_rate_bps"].get<double>();
  CHECK(rate < 400e9);
  CHECK(rate > 200e9);
  CHECK(rep["fragment"]["link.host_rate"].get<std::string>() ==
        std::to_string(static_cast<int64_t>(rate)) + "bps");
}

TEST_CASE("calibrate: Ctrl-C during the simulations writes what was fitted, exit 130") {
  // A perftest sweep's NIC keys come from its closed-form fit; the 128-rank log's fit through
  // the k=8 fat-tree takes many minutes, so the signal arrives during its simulation. It used to
  // end the command with nothing written, the perftest fit lost with it.
  const fs::path d = scratch("cal_sigint");
  const fs::path out = d / "cal.yaml";
  const std::string perftest =
      "tests/data/perftest/perftest-ib_write_bw-bidir-roce-rocm-gpu-amd-docs-01.txt";
  const int status = fabricsim_then(
      "calibrate --scenario scenarios/fat_tree_k8.yaml --perftest " + perftest +
          " --nccl-tests tests/data/nccl/nccl-allreduce-a100-16node-ib-hdr-coreweave-2022-01.txt"
          " --out " +
          out.string(),
      d, "grep -q '^# simulating' " + (d / "out").string(), "sleep 0.2; kill -INT $pid");
  INFO(slurp(d / "err"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(slurp(d / "err").find("calibrate interrupted during the simulation of tests/data/nccl/"
                              "nccl-allreduce-a100-16node-ib-hdr-coreweave-2022-01.txt: wrote "
                              "what was fitted before it") != std::string::npos);
  // The fragment holds the perftest rate, and says it was interrupted.
  const auto rep = nlohmann::json::parse(slurp(d / "cal.report.json"));
  CHECK(rep["interrupted"] == true);
  REQUIRE(rep["simulated"].size() == 1);
  CHECK(rep["simulated"][0]["skipped"] ==
        "interrupted during its simulation by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)");
  // The same NIC keys as the perftest log calibrated alone on that scenario: the AMD GPU run's
  // 102 Gb/s a direction is far below the scenario's 400 Gb/s port, so it is the host's PCIe
  // path (nic.pcie_rate), not the link's rate.
  const fs::path alone = scratch("cal_sigint_alone") / "cal.yaml";
  const Result a = fabricsim("calibrate --scenario scenarios/fat_tree_k8.yaml --perftest " +
                             perftest + " --out " + alone.string());
  REQUIRE(a.exit_code == 0);
  const auto rep_alone = nlohmann::json::parse(slurp(alone.parent_path() / "cal.report.json"));
  REQUIRE(rep["fragment"].contains("nic.pcie_rate"));
  CHECK(rep["fragment"]["nic.pcie_rate"] == rep_alone["fragment"]["nic.pcie_rate"]);
  CHECK(rep["fragment"]["nic.message_rate"] == rep_alone["fragment"]["nic.message_rate"]);
  CHECK_FALSE(rep["fragment"].contains("link.host_rate"));
  const std::string yaml = slurp(out);
  CHECK(yaml.find("pcie_rate: " + rep["fragment"]["nic.pcie_rate"].get<std::string>()) !=
        std::string::npos);
  CHECK(yaml.find("# interrupted during the simulation of") != std::string::npos);

  // Without the perftest log nothing was fitted before the signal: said so, rather than
  // "add --scenario" (before: the scenario was given).
  const fs::path d2 = scratch("cal_sigint_nothing");
  const int status2 = fabricsim_then(
      "calibrate --scenario scenarios/fat_tree_k8.yaml"
      " --nccl-tests tests/data/nccl/nccl-allreduce-a100-16node-ib-hdr-coreweave-2022-01.txt"
      " --out " +
          (d2 / "cal.yaml").string(),
      d2, "grep -q '^# simulating' " + (d2 / "out").string(), "sleep 0.2; kill -INT $pid");
  INFO(slurp(d2 / "err"));
  REQUIRE(WIFEXITED(status2));
  CHECK(WEXITSTATUS(status2) == 130);
  const std::string note = "no scenario key fitted: interrupted before a log was fitted";
  CHECK(slurp(d2 / "out").find("# fragment   : " + note) != std::string::npos);
  CHECK(slurp(d2 / "cal.yaml").find("# " + note) != std::string::npos);
}

TEST_CASE("calibrate: bad input is exit 2 with where and what") {
  const fs::path out = scratch("cal_bad") / "cal.yaml";
  const std::string nccl = "tests/data/nccl/nccl-allreduce-h100-2node-8hca-01.txt";
  struct Case {
    std::string args, text;
  };
  const Case cases[] = {
      {"--out " + out.string(), "at least one --perftest or --nccl-tests"},
      {"--nccl-tests " + nccl, "--out"},
      {"--perftest " + nccl + " --out " + out.string(),
       "this looks like an nccl-tests log: fabricsim calibrate takes it with --nccl-tests"},
      {"--nccl-tests tests/data/perftest/perftest-ib_write_bw-ib-qdr40g-cx3-docker-01.txt --out " +
           out.string(),
       "fabricsim calibrate takes it with --perftest"},
      {"--nccl-tests tests/data --out " + out.string(),
       "tests/data:0: cannot read log file: Is a directory"},
      {"--nccl-tests " + nccl + " --holdout below=1MiB --out " + out.string(), "above=SIZE"},
      {"--nccl-tests " + nccl + " --holdout file=other.txt --out " + out.string(),
       "one of the --nccl-tests logs"},
      {"--nccl-tests no_such_log.txt --out " + out.string(), "no_such_log.txt:0:"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Result r = fabricsim("calibrate " + c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.text) != std::string::npos);
  }
}

TEST_CASE("calibrate: absurd rows, NVLink logs and fits that cannot be trusted") {
  const fs::path dir = scratch("cal_fresh2");
  const fs::path out = dir / "cal.yaml";
  const std::string qdr = slurp(fs::path(FABRICSIM_SOURCE_DIR) /
                                "tests/data/perftest/"
                                "perftest-ib_write_bw-ib-qdr40g-"
                                "cx3-docker-01.txt");
  SECTION("an absurd bandwidth row is bad input at its line (was exit 1 in the fit)") {
    std::string text = qdr;
    const size_t at = text.find("\n 1048576 ");
    REQUIRE(at != std::string::npos);
    const size_t eol = text.find('\n', at + 1);
    const std::string row = text.substr(at + 1, eol - at - 1);
    // Replace the row's last two numbers' first one (BW peak) with a huge value.
    std::istringstream cells(row);
    std::vector<std::string> c;
    for (std::string w; cells >> w;) c.push_back(w);
    REQUIRE(c.size() >= 4);
    text.replace(
        at + 1, eol - at - 1,
        " " + c[0] + " " + c[1] + " 99999999999999 " + c[3] + (c.size() > 4 ? " " + c[4] : ""));
    const fs::path f = dir / "huge.txt";
    std::ofstream(f) << text;
    const Result r = fabricsim("calibrate --perftest " + f.string() + " --out " + out.string());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("beyond any NIC") != std::string::npos);
    CHECK_FALSE(fs::exists(out));  // nothing written, not even an empty fragment
  }
  SECTION("a one-node (NVLink) log is not fitted as a NIC rate (was 6 Tb/s in the fragment)") {
    const Result r = fabricsim(
        "calibrate --scenario scenarios/quickstart.yaml --nccl-tests "
        "tests/data/nccl/nccl-allgather-b200-1node-2gpu-nvlink-gcp-a4-01.txt --out " +
        out.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("skipped (the log ran on one node") != std::string::npos);
    CHECK(r.out.find("link.host_rate=") == std::string::npos);
  }
  SECTION("a fitted rate far above the scenario's NICs stays out of the fragment") {
    // A log made at 1.6 Tb/s per NIC, calibrated on the 400G quickstart: the fit needs 4x the
    // scenario's NIC (before: 4.59 Tb/s written for an 8-GPU EFA log). Up to 64 MiB, so the
    // largest size runs Simple at the NIC's rate: at 4 MiB (LL128, paced at 0.7 of the NIC with
    // one GPU a node) 744 Gb/s with Simple gives the same busbw as 1.6 Tb/s with LL128.
    const Result sim = fabricsim(
        "run scenarios/quickstart.yaml --set workload.ngpus=2 --set workload.minbytes=1KiB --set "
        "workload.maxbytes=64MiB --set link.host_rate=1600Gbps --set link.fabric_rate=1600Gbps");
    REQUIRE(sim.exit_code == 0);
    const fs::path f = dir / "fast.txt";
    std::ofstream(f) << sim.out;
    const Result r = fabricsim("calibrate --scenario scenarios/quickstart.yaml --nccl-tests " +
                               f.string() + " --out " + out.string());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("more than twice the scenario's link.host_rate (400 Gb/s)") !=
          std::string::npos);
    CHECK(r.out.find("link.host_rate=") == std::string::npos);
    const auto rep = nlohmann::json::parse(slurp(dir / "cal.report.json"));
    CHECK_FALSE(rep["fragment"].contains("link.host_rate"));
  }
  SECTION("a negative time in an nccl-tests row is bad input at its line (was dropped)") {
    std::string text = slurp(fs::path(FABRICSIM_SOURCE_DIR) /
                             "tests/data/nccl/nccl-allreduce-h100-2node-8hca-01.txt");
    const size_t at = text.find("1291.8");
    REQUIRE(at != std::string::npos);
    text.replace(at, 6, "-1291.8");
    const fs::path f = dir / "negative.txt";
    std::ofstream(f) << text;
    const Result r = fabricsim("calibrate --nccl-tests " + f.string() + " --out " + out.string());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("out-of-place time -1291.8 us; expected a positive time in microseconds") !=
          std::string::npos);
  }
  SECTION("two sizes left to fit are not fitted (was a negative bandwidth), and say so (exit 2)") {
    const Result r = fabricsim(
        "calibrate --nccl-tests tests/data/nccl/nccl-allreduce-h100-2node-8hca-01.txt --holdout "
        "largest=4 --out " +
        out.string());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("fewer than 3 sizes with a time to fit") != std::string::npos);
    CHECK(r.err.find("no log could be fitted, nothing written") != std::string::npos);
  }
}

TEST_CASE("calibrate: busbw 0.00 rows, repeated tables, deadlocking scenarios, useless options") {
  const fs::path out = scratch("cal_fresh") / "cal.yaml";
  SECTION("logs whose small rows print busbw 0.00 calibrate through a scenario (was exit 1)") {
    // The 2-node DGX H100 log prints busbw 0.00 up to 1 KiB; the comparison uses the time column.
    const Result r = fabricsim(
        "calibrate --scenario scenarios/quickstart.yaml --max-sim-size 1MiB --nccl-tests "
        "tests/data/nccl/nccl-allreduce-h100-2node-dgx-midsize-anomaly-01.txt --out " +
        out.string());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("fitted sizes: busbw error median") != std::string::npos);
    // 16 ranks on 2 nodes in the log, on 16 one-GPU servers in the quickstart: said.
    CHECK(r.out.find("ran on 2 nodes, the scenario has 16 servers of 1 GPU, so the ranks fill 16 "
                     "of them") != std::string::npos);
  }
  SECTION("a perftest table pasted twice fits the first run (was exit 1)") {
    const std::string log = slurp(fs::path(FABRICSIM_SOURCE_DIR) /
                                  "tests/data/perftest/"
                                  "perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01.txt");
    const fs::path twice = scratch("cal_fresh") / "twice.txt";
    std::ofstream(twice) << log << log;
    const Result r = fabricsim("calibrate --perftest " + twice.string() + " --out " + out.string());
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("B = 81.") != std::string::npos);  // the log's plateau, 80.96 Gb/s
  }
  SECTION("a scenario that deadlocks is reported, and nothing is claimed fitted") {
    const Result r = fabricsim(
        "calibrate --scenario scenarios/pfc-deadlock-ring.yaml --nccl-tests "
        "tests/data/nccl/nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt --out " +
        out.string());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("skipped (the simulation did not finish") != std::string::npos);
    CHECK(slurp(out).find("fitted through the simulator") == std::string::npos);
  }
  SECTION("a scenario beside perftest logs alone says what it is used for, not asked for") {
    // The scenario was checked and then ignored without a word, and the fragment's note asked
    // for the --scenario just given. Its fabric is slower than the QDR log's at 2 B (1.00 us
    // without NIC latencies against the log's 0.98): no NIC latency is fitted.
    const Result r = fabricsim(
        "calibrate --scenario scenarios/quickstart.yaml --perftest "
        "tests/data/perftest/perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.txt --out " +
        out.string());
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("# scenario   : scenarios/quickstart.yaml: its link.host_rate is the port a "
                     "perftest plateau is held against (nic.pcie_rate)") != std::string::npos);
    CHECK(r.out.find("nic.tx_latency not fitted: the log's t_typical at 2 B (0.98 us) is not "
                     "above the model's") != std::string::npos);
    CHECK(r.out.find("add --scenario") == std::string::npos);
    CHECK(r.out.find("add an nccl-tests log (--nccl-tests)") != std::string::npos);
  }
  SECTION("options that cannot take effect are bad input") {
    const std::string nccl = "tests/data/nccl/nccl-allreduce-h100-2node-8hca-01.txt";
    const Result set = fabricsim("calibrate --nccl-tests " + nccl +
                                 " --set link.host_rate=100Gbps --out " + out.string());
    CHECK(set.exit_code == 2);
    CHECK(set.err.find("--set changes the --scenario") != std::string::npos);
    const Result file = fabricsim("calibrate --nccl-tests " + nccl +
                                  " --nccl-tests "
                                  "tests/data/nccl/nccl-allreduce-h100-2node-aws-p5-efa-01.txt "
                                  "--holdout file=./" +
                                  nccl + " --out " + out.string());
    CHECK(file.exit_code == 2);
    CHECK(file.err.find("needs --scenario") != std::string::npos);  // and ./path is the same file
  }
}

TEST_CASE("calibrate: two logs that fit one NIC key apart are named in a hint") {
  // Two ConnectX-6 Dx hosts of NVIDIA's guide on one 100 Gb/s scenario: plateaus of 52.5 and
  // 83.7 Gb/s of payload (the logs' own BW averages), 59 % apart. The fragment keeps the first
  // log's value, and says so rather than passing the second log's host off as calibrated.
  const fs::path out = scratch("cal_nic_conflict") / "cal.yaml";
  const std::string dir = "tests/data/perftest/";
  const Result r = fabricsim(
      "calibrate --perftest " + dir + "perftest-ib_write_bw-roce-cx6dx-52g-k8s-nvidia-cns-01.txt" +
      " --perftest " + dir + "perftest-ib_write_bw-roce100g-a100pcie-egx-nvidia-cns-01.txt" +
      " --scenario bench/validation/perftest/"
      "perftest-ib_write_bw-roce100g-a100pcie-egx-nvidia-cns-01.yaml --out " +
      out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("its nic.pcie_rate (837") != std::string::npos);
  CHECK(r.out.find("the fragment takes the first") != std::string::npos);
  const auto rep = nlohmann::json::parse(slurp(out.parent_path() / "cal.report.json"));
  CHECK(rep["fragment"]["nic.pcie_rate"].get<std::string>().rfind("525", 0) == 0);
}

TEST_CASE("calibrate: a sweep that stops before its plateau prints no negative bandwidth") {
  // The t9k A100 sweep cut after its 2 KiB row: still overhead-bound, its fitted slope is
  // negative, which used to print "B = -728.71 Gb/s"; a bandwidth is then undetermined.
  const fs::path dir = scratch("cal_cut_sweep");
  std::ifstream in(
      fs::path(FABRICSIM_SOURCE_DIR) /
      "tests/data/perftest/perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01.txt");
  std::ofstream cut(dir / "cut.txt");
  for (std::string line; std::getline(in, line);) {
    cut << line << "\n";
    if (line.rfind(" 2048 ", 0) == 0) break;
  }
  cut.close();
  const Result r = fabricsim("calibrate --perftest " + (dir / "cut.txt").string() + " --out " +
                             (dir / "cal.yaml").string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("B undetermined (the sizes do not reach the bandwidth plateau)") !=
        std::string::npos);
  CHECK(r.out.find("B = -") == std::string::npos);
}

TEST_CASE("calibrate: a GPU-memory sweep without a scenario gives no link rate") {
  // Buffers in GPU memory (the t9k A100 log, 81 Gb/s on a 100 Gb/s port): its plateau may be
  // the GPU's PCIe path, and without --scenario there is no port to tell. It used to become
  // link.host_rate (81.6 Gb/s), a link slower than the cable.
  const fs::path out = scratch("cal_gpu_no_scenario") / "cal.yaml";
  const Result r = fabricsim(
      "calibrate --perftest "
      "tests/data/perftest/perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01.txt --out " +
      out.string());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("link.host_rate not taken from this log: its buffers are in GPU memory") !=
        std::string::npos);
  const auto rep = nlohmann::json::parse(slurp(out.parent_path() / "cal.report.json"));
  CHECK_FALSE(rep["fragment"].contains("link.host_rate"));
  CHECK(slurp(out).find("host_rate") == std::string::npos);
}

TEST_CASE("calibrate: the NIC keys fitted from perftest logs go to the fragment and the report") {
  // A GPU-memory sweep on its scenario (a 100 Gb/s port): its message rate and its plateau
  // (81 Gb/s, below the port's 99.37 Gb/s of payload) as nic.pcie_rate, not as the link's
  // rate; a latency log on its scenario: nic.tx_latency and nic.rx_latency (0.41 us each, the
  // split scenarios/perftest_ib_write_lat_ib_qdr.yaml makes by hand).
  const fs::path out = scratch("cal_nic") / "cal.yaml";
  const std::string t9k = "perftest-ib_write_bw-ib-100g-a100-gpudirect-k8s-t9k-01";
  const Result bw =
      fabricsim("calibrate --scenario bench/validation/perftest/" + t9k +
                ".yaml --perftest tests/data/perftest/" + t9k + ".txt --out " + out.string());
  INFO(bw.out << bw.err);
  REQUIRE(bw.exit_code == 0);
  // The median of the log's MsgRate column over its 2 B .. 512 B rows (under a quarter of its
  // top BW): 3.712094 3.774170 3.810117 3.921990 3.953929 4.003723 4.015258 4.029406 4.034568.
  CHECK(bw.out.find("#   nic.message_rate = 3.954e6 messages/s: median MsgRate 3.954 Mpps of the "
                    "9 message-bound rows 2 B .. 512 B") != std::string::npos);
  CHECK(bw.out.find("#   nic.pcie_rate = 81.") != std::string::npos);
  CHECK(bw.out.find("# nic keys   : fitted nic.message_rate, nic.pcie_rate") != std::string::npos);
  const auto rep = nlohmann::json::parse(slurp(out.parent_path() / "cal.report.json"));
  CHECK(rep["fragment"]["nic.message_rate"] == "3.954e6");
  const std::string pcie = rep["fragment"]["nic.pcie_rate"].get<std::string>();
  CHECK(std::stod(pcie) == Approx(80.96e9).epsilon(0.005));  // the log's 512 KiB .. 8 MiB rows
  CHECK_FALSE(rep["fragment"].contains("link.host_rate"));
  REQUIRE(rep["nic_keys"]["fitted"].size() == 2);
  CHECK(rep["nic_keys"]["fitted"][1]["key"] == "nic.pcie_rate");
  CHECK(rep["nic_keys"]["fitted"][1]["unit"] == "Gb/s");
  CHECK(rep["nic_keys"]["fitted"][1]["scenario_value"] == pcie);
  CHECK(rep["nic_keys"]["not_fitted"].empty());
  CHECK(rep["inputs"][0]["nic"].size() == 2);
  const std::string yaml = slurp(out);
  CHECK(yaml.find("nic:\n  message_rate: 3.954e6   # ") != std::string::npos);
  CHECK(yaml.find("\n  pcie_rate: " + pcie + "   # ") != std::string::npos);
  CHECK(bw.out.find("--set nic.message_rate=3.954e6 --set nic.pcie_rate=" + pcie) !=
        std::string::npos);

  const std::string lat = "tests/data/perftest/perftest-ib_write_lat-ib-qdr40g-cx3-docker-01.txt";
  const Result with = fabricsim(
      "calibrate --scenario scenarios/perftest_ib_write_lat_ib_qdr.yaml "
      "--perftest " +
      lat + " --out " + out.string());
  INFO(with.out << with.err);
  REQUIRE(with.exit_code == 0);
  const auto lrep = nlohmann::json::parse(slurp(out.parent_path() / "cal.report.json"));
  CHECK(lrep["fragment"]["nic.tx_latency"] == "410000ps");
  CHECK(lrep["fragment"]["nic.rx_latency"] == "410000ps");
  CHECK(lrep["inputs"][0]["nic"][0]["key"] == "nic.tx_latency");
  // Without a scenario nothing says what the model adds to the NICs: not fitted, and why.
  const Result without = fabricsim("calibrate --perftest " + lat + " --out " + out.string());
  REQUIRE(without.exit_code == 0);
  const auto nrep = nlohmann::json::parse(slurp(out.parent_path() / "cal.report.json"));
  CHECK(nrep["fragment"].empty());
  REQUIRE(nrep["nic_keys"]["not_fitted"].size() == 2);
  CHECK(nrep["nic_keys"]["not_fitted"][0]["not_fitted"].get<std::string>().rfind("needs --scenario",
                                                                                 0) == 0);
}
