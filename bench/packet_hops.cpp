// The packet engine's speed on three fixed workloads: events/s and packet-hops/s.
//
// A packet-hop is one frame serialized on one link (NetTotals::packet_hops); the network
// schedules two events per hop (end of serialization, arrival) plus the NICs' and timers'
// events, so events/s measures the engine and packet-hops/s what a user gets from it.
//
// Each case builds its Scenario in code (as tests/support.hpp does), runs once, and is timed
// from the first send to the end of the workload with std::chrono::steady_clock (fabric and
// route construction are not timed). Each case runs in a forked child, so getrusage's
// ru_maxrss is that case's own peak RSS rather than the largest of the cases so far.
//
// The cases are fixed (`bench/ns3_compare.sh` runs the permutation in ns-3 too), and they are
// small: the whole run takes under a second in Release, and the permutation and incast cases only
// tens of milliseconds of wall time, so their rates are noisier than the ring's.
//
// Usage: bench_packet_hops        (no options)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include "../tests/support.hpp"
#include "collectives/replay.hpp"
#include "collectives/transfer_dag.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/simulator.hpp"
#include "sim/net/network.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace {

using fabricsim::CompletionSink;
using fabricsim::NetTotals;
using fabricsim::Network;
using fabricsim::Scenario;
using fabricsim::Simulator;
using fabricsim::StopReason;

constexpr int64_t kGbps = 1'000'000'000;
constexpr int64_t kNs = 1'000;  // picoseconds
constexpr int64_t kUs = 1'000'000;

using fabricsim::testing::Bed;

/// The tests' 1:1 spine-leaf (every link at `rate_bps`, RoCEv2, static buffers).
Scenario spine_leaf(int leaves, int spines, int hosts_per_leaf, int64_t rate_bps, int64_t prop_ps,
                    int64_t switch_latency_ps, int64_t buffer_per_port_bytes, int64_t mtu_bytes) {
  return fabricsim::testing::spine_leaf(leaves, spines, hosts_per_leaf, rate_bps, prop_ps,
                                        switch_latency_ps, buffer_per_port_bytes, mtu_bytes);
}

/// Stops the simulator when `expected` messages have completed, so the simulated time is the
/// workload's (idle RTO timers left in the queue would otherwise run on).
struct StopAfter : CompletionSink {
  StopAfter(Simulator& s, uint64_t n) : sim(s), expected(n) {}
  void on_message_complete(uint64_t) override {
    if (++completed == expected) sim.request_stop();
  }
  Simulator& sim;
  uint64_t expected;
  uint64_t completed = 0;
};

struct Measured {
  int64_t simulated_ps = 0;
  double wall_s = 0.0;
  uint64_t events = 0;
  NetTotals totals;
};

using Clock = std::chrono::steady_clock;

/// Runs the simulator to the end of the workload; throws if it stops for another reason or
/// the network breaks byte conservation.
Measured finish(Bed& bed, Clock::time_point start) {
  const StopReason why = bed.sim.run();
  Measured m;
  m.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (why != StopReason::kWorkloadDone) {
    throw std::runtime_error(std::string("workload did not complete: ") +
                             fabricsim::to_string(why) + " " + bed.net->failure());
  }
  if (!bed.net->failure().empty()) throw std::runtime_error(bed.net->failure());
  bed.net->check_conservation();
  m.simulated_ps = bed.sim.now_ps();
  m.events = bed.sim.events_executed();
  m.totals = bed.net->totals();
  return m;
}

/// Case 1: 8 leaves x 8 hosts, 8 spines, 100G, 1 us links, 500 ns switches, 1 MiB per port,
/// MTU 4096; host j of leaf l sends 1 MB to host j of leaf (l+1) mod 8, all 64 flows at once.
Measured permutation() {
  constexpr int kLeaves = 8, kHosts = 8;
  Bed bed(spine_leaf(kLeaves, 8, kHosts, 100 * kGbps, 1 * kUs, 500 * kNs, int64_t{1} << 20, 4096));
  StopAfter sink(bed.sim, kLeaves * kHosts);
  bed.net->set_sink(&sink);
  const auto start = Clock::now();
  for (int l = 0; l < kLeaves; ++l) {
    for (int j = 0; j < kHosts; ++j) {
      const int src = l * kHosts + j, dst = ((l + 1) % kLeaves) * kHosts + j;
      bed.net->send(src, dst, 1'000'000, 0, static_cast<uint64_t>(src));
    }
  }
  Measured m = finish(bed, start);
  if (sink.completed != sink.expected) throw std::runtime_error("permutation: flows missing");
  return m;
}

/// Case 2: scenarios/quickstart.yaml's fabric (4 leaves x 4 hosts, 4 spines, 400G, 250 ns
/// links, 500 ns switches, 2 MB per port), one ring AllReduce of 256 MiB of floats (about 2 s of
/// wall time: the one case long enough to time).
Measured ring_allreduce() {
  Bed bed(spine_leaf(4, 4, 4, 400 * kGbps, 250 * kNs, 500 * kNs, 2'000'000, 4096));
  fabricsim::PacketTransport transport(bed.sim, *bed.net);
  const fabricsim::TransferDag dag = fabricsim::ring_allreduce(16, (int64_t{256} << 20) / 4, 4);
  fabricsim::DagReplayer replayer(dag, transport);
  transport.attach(&replayer);
  const auto start = Clock::now();
  replayer.start();
  Measured m = finish(bed, start);
  if (!replayer.done()) throw std::runtime_error("ring allreduce: transfers missing");
  return m;
}

/// Case 3: one leaf, 9 hosts at 100G (1 us links, 500 ns switch), 200 KB per port, MTU 4096;
/// hosts 0..7 each send 4 MB to host 8. The leaf's port to host 8 tail-drops; the senders go
/// back N on every NAK (and on the RTO when a tail is lost).
Measured incast() {
  constexpr int kSenders = 8;
  Bed bed(spine_leaf(1, 1, kSenders + 1, 100 * kGbps, 1 * kUs, 500 * kNs, 200'000, 4096));
  StopAfter sink(bed.sim, kSenders);
  bed.net->set_sink(&sink);
  const auto start = Clock::now();
  for (int h = 0; h < kSenders; ++h) {
    bed.net->send(h, kSenders, 4'000'000, 0, static_cast<uint64_t>(h));
  }
  Measured m = finish(bed, start);
  if (sink.completed != sink.expected) throw std::runtime_error("incast: flows missing");
  return m;
}

struct Case {
  const char* name;
  Measured (*run)();
};

constexpr Case kCases[] = {
    {"permutation", permutation},
    {"ring allreduce", ring_allreduce},
    {"incast 8:1", incast},
};

int64_t peak_rss_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

/// Runs one case and prints its row; returns the exit status.
int run_case(const Case& c) {
  try {
    const Measured m = c.run();
    const NetTotals& t = m.totals;
    std::printf(
        "%-15s %12.3f %8.3f %12llu %7.2f %11lld %8.2f %10lld %7lld %8lld %8.1f\n", c.name,
        static_cast<double>(m.simulated_ps) / 1e6, m.wall_s,
        static_cast<unsigned long long>(m.events), static_cast<double>(m.events) / m.wall_s / 1e6,
        static_cast<long long>(t.packet_hops), static_cast<double>(t.packet_hops) / m.wall_s / 1e6,
        static_cast<long long>(t.packets_delivered), static_cast<long long>(t.drops),
        static_cast<long long>(t.retransmits), static_cast<double>(peak_rss_bytes()) / (1 << 20));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s: %s\n", c.name, e.what());
    return 1;
  }
}

/// Runs the case in a child process so its ru_maxrss is its own.
int run_isolated(const Case& c) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fork");
    return 1;
  }
  if (pid == 0) {
    const int rc = run_case(c);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    std::perror("waitpid");
    return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::fprintf(stderr, "error: %s: killed by signal %d\n", c.name, WTERMSIG(status));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s   (no options)\n", argv[0]);
    return 2;
  }
  std::printf(
      "packet engine: each case runs once in its own process; RoCEv2, MTU 4096, static "
      "per-port buffers, store-and-forward\n"
      "  permutation:    8 leaves x 8 hosts, 8 spines, 100G, 1 us links, 500 ns switches, "
      "1 MiB/port; host j of leaf l -> host j of leaf l+1 mod 8, 1 MB each, 64 flows at once\n"
      "  ring allreduce: ring AllReduce of 256 MiB floats, 16 GPUs, 4x4 spine-leaf (4 spines) "
      "at 400G, 250 ns links, 500 ns switches, 2 MB/port (quickstart)\n"
      "  incast 8:1:     one leaf, 9 hosts at 100G, 1 us links, 500 ns switch, 200 KB/port; "
      "hosts 0..7 send 4 MB each to host 8: tail drops, go-back-N\n"
      "wall = first send to end of workload (steady_clock); hops = frames serialized on any "
      "link; RSS = the case's peak (ru_maxrss); a Packet is %zu B\n"
      "numbers vary run to run: about +-10%% for ring allreduce, more for the two cases that "
      "last only milliseconds of wall time\n\n",
      sizeof(fabricsim::Packet));
  std::printf("%-15s %12s %8s %12s %7s %11s %8s %10s %7s %8s %8s\n", "case", "sim (us)", "wall (s)",
              "events", "Mev/s", "pkt-hops", "Mhops/s", "delivered", "drops", "rexmits", "RSS MiB");
  int rc = 0;
  for (const Case& c : kCases) {
    if (run_isolated(c) != 0) rc = 1;
  }
  return rc;
}
