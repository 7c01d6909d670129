// Conservative parallel runs over MPI: the same model run sequentially and with
// `mpirun -np 2` must give the same bytes. The model is PHOLD (sim/parallel/phold_main.cpp):
// every LP's output is a hash chain over the events it executed, in order, so one event out of
// place on one LP, a tie at the same picosecond included, changes the file.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../cli/cli_support.hpp"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// `mpirun` with the options every test uses, on `ranks` ranks. Each test process gives OpenMPI
/// a session directory of its own: two mpiruns sharing /tmp/ompi.HOST.UID race (the one that
/// ends removes the shared top directory while the other creates its own below it, and the
/// second fails in orte_init with "A call to mkdir was unable to create the desired
/// directory"), which ctest -j2 makes possible whenever two of these tests overlap.
std::string mpiexec(int ranks) {
  // Made on first use, removed when the test process ends.
  static const struct Session {
    fs::path dir =
        fs::temp_directory_path() / ("fabricsim_test_mpi_session_" + std::to_string(::getpid()));
    Session() { fs::create_directories(dir); }
    ~Session() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } session;
  return std::string(FABRICSIM_MPIEXEC) + " --oversubscribe --allow-run-as-root --mca " +
         "orte_tmpdir_base " + session.dir.string() + " -np " + std::to_string(ranks) + " ";
}

/// Runs fabricsim-phold with `args` on `ranks` MPI ranks (1: without mpirun, the plain
/// sequential Simulator); returns the exit code. OpenMPI leaks at MPI_Finalize, so leak
/// detection is off for these processes under the sanitizers.
int phold(int ranks, const std::string& args, const fs::path& err) {
  std::string cmd = "env ASAN_OPTIONS=detect_leaks=0 ";
  if (ranks > 1) {
    cmd += mpiexec(ranks);
  }
  cmd += std::string(FABRICSIM_PHOLD) + " " + args + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// This process's folders, TMPDIR/fabricsim_test_mpi_<pid>/NAME: two runs of the suite at once
// on one machine (a CI run beside a developer's) each removed and refilled the other's
// fixed-name folder, and a test read the other run's log.
constexpr const char* kScratchPrefix = "fabricsim_test_mpi_";

/// Where scratch(name) put its files (not emptied).
fs::path scratch_path(const std::string& name) {
  return fs::temp_directory_path() / (kScratchPrefix + std::to_string(::getpid())) / name;
}

fs::path scratch(const std::string& name) {
  return cli_testing::scratch_dir(kScratchPrefix, name);
}

}  // namespace

TEST_CASE("MPI: PHOLD on 2 and 3 ranks writes the same bytes as the sequential run") {
  const fs::path d = scratch("phold");
  // 256 LPs x 4 tokens over 20 us. On a 1 ns grid, with 40 possible extra delays, many tokens
  // reach an LP at the same picosecond: their order is the key's (time, source LP, source
  // sequence), which a rank must reproduce for events that came from another rank.
  const std::string args =
      "--lps 256 --tokens 4 --end 20us --lookahead 100ns --mean 20ns --grid 1ns";
  REQUIRE(phold(1, args + " --seed 7 --out " + (d / "seq.txt").string(), d / "seq.err") == 0);
  REQUIRE(phold(2, args + " --seed 7 --out " + (d / "np2.txt").string(), d / "np2.err") == 0);
  REQUIRE(phold(3, args + " --seed 7 --out " + (d / "np3.txt").string(), d / "np3.err") == 0);
  const std::string seq = slurp(d / "seq.txt");
  INFO(slurp(d / "np2.err"));
  // Every token is one event per hop; with hops >= 100 ns, 1024 tokens make at most
  // 1024 x (20 us / 100 ns + 1) = 206,848 events and at least 1024 (each starts before 100 ns).
  const auto at = seq.rfind("# events ");
  REQUIRE(at != std::string::npos);
  const long long events = std::stoll(seq.substr(at + 9));
  CHECK(events >= 1024);
  CHECK(events <= 1024LL * 201);
  CHECK(seq == slurp(d / "np2.txt"));
  CHECK(seq == slurp(d / "np3.txt"));
  // Remote events really crossed: each rank sent and received some.
  const std::string err = slurp(d / "np2.err");
  CHECK(err.find("rank 0:") != std::string::npos);
  CHECK(err.find(" 0 sent to other ranks") == std::string::npos);

  // A different seed gives a different history (the comparison can fail).
  REQUIRE(phold(1, args + " --seed 8 --out " + (d / "seq8.txt").string(), d / "seq8.err") == 0);
  CHECK(seq != slurp(d / "seq8.txt"));
}

// ---- `mpirun -np N fabricsim run`: the packet model partitioned over ranks -----------------

namespace {

/// Runs `fabricsim run SCENARIO --out OUT ARGS` on `ranks` ranks (1: without mpirun) from the
/// source tree; returns the exit code. stdout and stderr go to OUT.log.
int fabricsim_run(int ranks, const std::string& scenario, const fs::path& out,
                  const std::string& args) {
  std::string cmd =
      "cd " + std::string(FABRICSIM_SOURCE_DIR) + " && env ASAN_OPTIONS=detect_leaks=0 ";
  if (ranks > 1) {
    cmd += mpiexec(ranks);
  }
  cmd += std::string(FABRICSIM_BIN) + " run " + scenario + " --out " + out.string() + " " + args +
         " >" + out.string() + ".log 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The files a run writes that must not depend on the number of ranks (perf.json holds wall
/// times). trace.json too: each rank records its share, rank 0 merges them.
const char* const kResultFiles[] = {"results.json", "ports.csv", "queues.csv", "flows.csv",
                                    "trace.json"};

/// Runs `scenario` sequentially and on `ranks` ranks; both must exit `code` and write the same
/// bytes. Returns the sequential results.json.
std::string same_bytes(const std::string& name, const std::string& scenario,
                       const std::string& args, int code, int ranks = 2) {
  const fs::path d = scratch(name);
  const int seq = fabricsim_run(1, scenario, d / "seq", args);
  INFO(slurp(d / "seq.log"));
  REQUIRE(seq == code);
  const int par = fabricsim_run(ranks, scenario, d / "par", args);
  INFO(slurp(d / "par.log"));
  REQUIRE(par == code);
  // The partitioned run says how it split the fabric (the flow mode says it did not).
  const std::string said = slurp(d / "par.log");
  CHECK((said.find("# mpi        : " + std::to_string(ranks) + " ranks") != std::string::npos ||
         said.find("rank 0 runs it alone") != std::string::npos));
  for (const char* f : kResultFiles) {
    INFO(f);
    const std::string a = slurp(d / "seq" / f), b = slurp(d / "par" / f);
    CHECK(!a.empty());
    CHECK(a == b);
  }
  return slurp(d / "seq" / "results.json");
}

}  // namespace

TEST_CASE("MPI run: the NIC's message rate and latencies keep the sequential run's bytes") {
  // The message rate's state is the sending NIC's, a message's receive latency an event on the
  // receiving host: both stay on their host's rank.
  same_bytes("nic-costs", "scenarios/quickstart.yaml",
             "--set workload.maxbytes=256KiB --set nic.message_rate=20e6 "
             "--set nic.tx_latency=700ns --set nic.rx_latency=400ns "
             "--set nic.dma_read_latency=500ns --set nic.pcie_rate=64Gbps",
             0);
}

TEST_CASE("MPI run: a Clos all_reduce sweep on 2 and 3 ranks writes the sequential run's bytes") {
  // quickstart: 4 leaves x 4 hosts, 4 spines; 2 ranks split by leaf (8 cut links of 250 ns).
  const std::string r =
      same_bytes("clos", "scenarios/quickstart.yaml", "--set workload.maxbytes=1MiB", 0);
  CHECK(r.find("\"complete\": true") != std::string::npos);
  same_bytes("clos3", "scenarios/quickstart.yaml", "--set workload.maxbytes=64KiB", 0, 3);
  // trace.json cut at its cap: the same events kept, the same first refused time and count of
  // dropped events in the truncation note, from records spread over 3 ranks.
  const std::string capped = same_bytes("clos3_cap", "scenarios/quickstart.yaml",
                                        "--set workload.maxbytes=256KiB --trace-events 1000", 0, 3);
  const std::string trace = slurp(scratch_path("clos3_cap") / "par" / "trace.json");
  CHECK(trace.find("\"max_events\":1000,\"dropped_events\":") != std::string::npos);
}

TEST_CASE("MPI run: rail-optimized (InfiniBand credits) and torus sweeps") {
  same_bytes("rail", "scenarios/rail_optimized_h100_su.yaml", "--set workload.maxbytes=1MiB", 0);
  same_bytes("torus", "scenarios/torus_4x4x4.yaml", "--set workload.maxbytes=1MiB", 0);
}

TEST_CASE("MPI run: NVLSTree across servers and PAT keep the sequential run's bytes") {
  // NVLSTree: NVSwitch loopbacks on every server and the heads' tree across the cut; PAT: every
  // rank sends to ranks 1, 2, 4 and 8 away, across the leaves the ranks split.
  const std::string tree =
      same_bytes("nvls_tree", "bench/validation/nccl/nccl-allreduce-h100-2node-8hca-01.yaml",
                 "--set workload.minbytes=16MiB --set workload.maxbytes=16MiB", 0);
  CHECK(tree.find("\"algorithm\": \"nvls_tree\"") != std::string::npos);
  const std::string pat =
      same_bytes("pat", "scenarios/quickstart.yaml",
                 "--set workload.collective=reduce_scatter --set workload.maxbytes=1MiB", 0);
  CHECK(pat.find("\"algorithm\": \"pat\"") != std::string::npos);
}

TEST_CASE(
    "MPI run: CollNet's NIC loopbacks and its join across servers keep the sequential bytes") {
  // Each head's loopback goes up to its rail leaf and back, the leaf perhaps on the other rank.
  // Three servers: the join after every server's loopback hands the other ranks' GPUs their
  // next sends one switch and one link later, no closer than the lookahead (a regression: with
  // no delay such a run stopped with an internal error once its servers sat on different ranks).
  for (const std::string algo : {"collnet_chain", "collnet_direct"}) {
    const std::string three = same_bytes(algo, "tests/data/cli/dgx_h100_3node_sharp.yaml",
                                         "--set workload.algorithm=" + algo, 0);
    CHECK(three.find("\"algorithm\": \"" + algo + "\"") != std::string::npos);
  }
}

TEST_CASE("MPI run: TIMELY's send stamps cross ranks with their packets (background flows)") {
  // The stamp is a side field of the packet (PacketPool::add_side): a frame crossing ranks
  // carries it after the Packet, and the ACK that echoes it may cross back.
  const std::string r =
      same_bytes("timely", "scenarios/background-websearch.yaml",
                 "--set nic.congestion_control=timely --set background.duration=500us", 0);
  CHECK(r.find("\"cnp_tx\": 0,") != std::string::npos);  // delay only: no CNPs
}

TEST_CASE("MPI run: HPCC's INT records cross ranks with their packets (background flows)") {
  // The records are a side field of the packet: each switch appends its hop on whichever rank
  // it runs, the frame carries them across the cut, and the ACK echoes them back.
  const std::string r =
      same_bytes("hpcc", "scenarios/background-websearch.yaml",
                 "--set nic.congestion_control=hpcc --set background.duration=500us", 0);
  CHECK(r.find("\"cnp_tx\": 0,") != std::string::npos);  // telemetry only: no CNPs
}

TEST_CASE("MPI run: adaptive routing and selective ACKs keep the sequential run's bytes") {
  // Each switch reads only its own queues and flowlet table; a selective ACK's PSN is a side
  // field of the packet, crossing ranks with it. Bit errors make the senders resend.
  for (const std::string lb : {"adaptive", "flowlet"}) {
    const std::string r = same_bytes(
        "ar-" + lb, "scenarios/quickstart.yaml",
        "--set routing.load_balancing=" + lb +
            " --set nic.loss_recovery=selective_repeat --set nic.reorder_threshold=3"
            " --set link.bit_error_rate=1e-7 --set nic.rto=20us --set workload.collective=alltoall"
            " --set workload.minbytes=256KiB --set workload.maxbytes=1MiB"
            " --set 'topology.degraded_links={leaf3-spine0: 100Gbps}'",
        0);
    CHECK(r.find("\"retransmits\": 0,") == std::string::npos);
  }
}

TEST_CASE("MPI run: links going down, flapping and slowing keep the sequential run's bytes") {
  // Each port's change is an event of the node owning it, each node's move to new routes its
  // own event: a link cut between ranks changes on both at the same picosecond. The longest
  // queue-pair stall is merged over the ranks.
  const std::string r = same_bytes(
      "link-events", "scenarios/quickstart.yaml",
      "--set 'topology.link_events=[{at: 300us, link: leaf0-spine1, state: down, down_for: 30us},"
      " {at: 310us, switch: spine2, state: down}, {at: 305us, link: leaf3-spine0, rate: 100Gbps}]'"
      " --set routing.reconvergence_delay=10us --set nic.rto=100us"
      " --set workload.minbytes=1MiB --set workload.maxbytes=4MiB",
      0);
  CHECK(r.find("\"lost_packets\": 0,") == std::string::npos);
}

TEST_CASE("MPI run: two jobs spread over the leaves, and each alone, keep the sequential bytes") {
  // The jobs' DAG splices both jobs' ranks (hosts on every rank of the split); each job alone
  // runs on an engine of its own after the run with both.
  const std::string r =
      same_bytes("jobs", "scenarios/two-jobs.yaml",
                 "--set jobs.placement=spread --set jobs.size=4MiB --set 'jobs[1].start=20us'", 0);
  CHECK(r.find("\"slowdown\": null") == std::string::npos);
}

TEST_CASE("MPI run: PFC pauses across ranks, and a PFC deadlock reported the same") {
  // pfc-victim-flow: an incast on one leaf pauses spine ports of other leaves' ranks.
  const std::string victim = same_bytes("victim", "scenarios/pfc-victim-flow.yaml", "", 0);
  CHECK(victim.find("\"pfc_pause_tx\": 0,") == std::string::npos);
  // The bounce deadlock's cycle runs through both tiers, so across the ranks' cut.
  const std::string dead = same_bytes("deadlock", "scenarios/pfc-deadlock-clos-bounce.yaml", "", 3);
  CHECK(dead.find("\"cycle\"") != std::string::npos);
  // A check interval longer than the queue pairs' retries: the checks the queue pairs ask for
  // at their last timeouts are agreed over the ranks like the periodic ones.
  const std::string late = same_bytes("deadlock_late", "scenarios/pfc-deadlock-ring.yaml",
                                      "--set pfc.deadlock_check_interval=1s", 3);
  CHECK(late.find("\"cycle\"") != std::string::npos);
}

TEST_CASE("MPI run: the PFC watchdog breaking a ring deadlock across ranks") {
  // The watchdog runs at the lossless check's barrier, outside any event: what it restarts
  // (stormed queues forwarding again) is keyed as the switch's own pushes, which its rank sends
  // to the next rank like any other (a regression: such pushes were once dropped).
  const std::string r = same_bytes("watchdog", "scenarios/pfc-deadlock-ring.yaml",
                                   "--set pfc.watchdog=true --set pfc.watchdog_action=forward", 0);
  CHECK(r.find("\"pfc_storms\": 0,") == std::string::npos);
  CHECK(r.find("\"broken_by_watchdog\": true") != std::string::npos);
  // The watchdog's resumptions are traced at the barrier, before the events at its time, port
  // by port: the merged trace has them in the sequential run's place.
  CHECK(slurp(scratch_path("watchdog") / "par" / "trace.json").find("\"name\":\"paused ") !=
        std::string::npos);
}

TEST_CASE("MPI run: a training step (DP all-reduce across ranks, TP inside servers)") {
  // training_step_h100 shrunk to 2 small layers: 2 servers per rank; the step's critical path
  // and exposed communication come from task times gathered from both ranks.
  const std::string r =
      same_bytes("training", "scenarios/training_step_h100.yaml",
                 "--set 'training.layers=[{name: block, count: 2, fwd_flops: 1.0e10, params: 4MB, "
                 "tp_comm: 1MiB}]' --set training.bucket_cap=2MiB",
                 0);
  CHECK(r.find("\"critical_path\"") != std::string::npos);
}

TEST_CASE("MPI run: the flow mode runs on rank 0 alone, with the sequential run's bytes") {
  same_bytes("flow", "scenarios/fat_tree_k8.yaml", "--mode flow --set workload.maxbytes=16MiB", 0);
}

TEST_CASE("MPI run: SIGUSR1 to mpirun stops every rank cleanly, the partial files written") {
  // OpenMPI does not pass Ctrl-C or SIGTERM on mpirun to the ranks (it kills them a second
  // later, before rank 0 writes); it forwards SIGUSR1, which stops a run as
  // SIGINT does. The sweep to 1 GiB takes about a minute on 2 idle cores (to 64 MiB only 4 s).
  // The signal comes 1 s after rank 0 writes its `# mpi` line, which it flushes once every
  // rank has joined and the fabric is split, so the ranks are simulating (under MPI the table
  // itself is printed when the run ends). Polled every 0.1 s, 600 times at most, and not once
  // mpirun has exited. A fixed 5 s wait held two cores for 5 s of the suite.
  const fs::path d = scratch("usr1");
  const std::string log = (d / "log").string();
  const std::string cmd =
      "cd " + std::string(FABRICSIM_SOURCE_DIR) + " && (env ASAN_OPTIONS=detect_leaks=0 " +
      mpiexec(2) + FABRICSIM_BIN +
      " run scenarios/fat_tree_k8.yaml --set workload.maxbytes=1GiB --out " + (d / "out").string() +
      " >" + log + " 2>&1 & pid=$!; i=0; while ! grep -q '^# mpi ' " + log +
      " 2>/dev/null && kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); "
      "done; sleep 1; kill -USR1 $pid; "
      "wait $pid)";
  const int status = std::system(cmd.c_str());
  INFO(slurp(d / "log"));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  const std::string r = slurp(d / "out" / "results.json");
  CHECK(r.find("\"complete\": false") != std::string::npos);
  CHECK(r.find("\"stop_reason\": \"interrupted") != std::string::npos);
  const std::string trace = slurp(d / "out" / "trace.json");
  REQUIRE(!trace.empty());
  CHECK(trace.substr(trace.find_last_not_of("\n"), 1) == "]");  // closed
}

TEST_CASE("MPI run: bad input under mpirun exits 2 with one message, from rank 0") {
  const fs::path d = scratch("bad");
  // quickstart has 8 separable groups (4 leaves with their hosts, 4 spines): 9 ranks cannot
  // each get one. Before: this was an internal error and an MPI_Abort.
  CHECK(fabricsim_run(9, "scenarios/quickstart.yaml", d / "nine", "") == 2);
  const std::string nine = slurp(d / "nine.log");
  CHECK(nine.find("mpirun -np 9: 9 parts, but the fabric has only 8 group(s)") !=
        std::string::npos);
  CHECK(nine.find("internal error") == std::string::npos);
  // An unknown key is said once, not once per rank.
  CHECK(fabricsim_run(3, "scenarios/quickstart.yaml", d / "key", "--set nic.mtuu=4096B") == 2);
  const std::string key = slurp(d / "key.log");
  const auto first = key.find("did you mean 'nic.mtu'");
  REQUIRE(first != std::string::npos);
  CHECK(key.find("did you mean 'nic.mtu'", first + 1) == std::string::npos);
}

TEST_CASE("MPI run: a perftest scenario under mpirun is refused once with exit 2") {
  const fs::path d = scratch("perftest");
  CHECK(fabricsim_run(2, "scenarios/perftest_ib_write_lat_ib_qdr.yaml", d / "lat",
                      "--set perftest.all=false") == 2);
  const std::string said = slurp(d / "lat.log");
  const auto first = said.find("a perftest run is not partitioned over MPI ranks");
  REQUIRE(first != std::string::npos);
  CHECK(said.find("a perftest run is not partitioned", first + 1) == std::string::npos);
}
