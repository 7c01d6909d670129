// perftest as a workload: a perftest run (linux-rdma/perftest) replayed on the packet model
// between two hosts, one message size at a time, and perftest's own output table for it, so a
// simulated run diffs against a real one (calibration/perftest.hpp parses both).
//
// What is modelled, per test (perftest's src/write_bw.c, read_bw.c, send_bw.c, *_lat.c):
//  - *_bw: the client keeps tx_depth messages outstanding on each of its qps queue pairs and
//    posts the next one when one completes, until each QP has sent its iterations (-b: the
//    server does the same towards the client). BW average = bytes moved / (last completion -
//    first post); BW peak = the same over the second half of the messages (a simulated run
//    has no jitter for perftest's best-interval peak to find); MsgRate = BW average / size.
//    ib_read_bw: each message is a read request (a header-only packet) to the server, which
//    answers with the data; ib_send_bw moves data as ib_write_bw does.
//  - *_lat: one message at a time, a ping-pong: the client writes (sends) to the server, which
//    answers in kind as soon as it completes; perftest reports half the round trip (rtt_factor
//    2). ib_read_lat: a read request and its data, the whole round trip (rtt_factor 1).
// A message completes at its receiver (the last packet in, plus nic.rx_latency): the sender's
// completion, a returning ACK, is not waited for; with tx_depth messages in flight that moves
// only the end of the run, by one ACK's flight.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perftest/perftest_params.hpp"
#include "sim/core/simulator.hpp"
#include "sim/net/net_observer.hpp"

namespace fabricsim {

class Network;

/// A test perftest knows: its name, whether it times latency, whether it reads.
struct PerftestTest {
  const char* name;
  const char* title;  ///< perftest's report title, e.g. "RDMA_Write BW Test"
  bool latency;
  bool read;
};
/// The tests simulated, ib_write_bw first.
const std::vector<PerftestTest>& perftest_tests();
/// The test named `name`, or nullptr.
const PerftestTest* find_perftest(const std::string& name);

/// The sizes of a run: -a's 2 B … 8 MiB (powers of two), or the one size (-s or the default).
std::vector<int64_t> perftest_sizes(const PerftestConfig& c);
/// The iterations simulated for `bytes` (c.iterations, cut to c.max_bytes_per_size).
int64_t perftest_iterations(const PerftestConfig& c, int64_t bytes);
/// tx_depth as perftest sets it: -t, or 128 (bw) / 1 (lat).
int perftest_tx_depth(const PerftestConfig& c);
/// The inline size as perftest sets it: -I, or 220 (ib_write_lat) / 236 (ib_send_lat) / 0.
int64_t perftest_inline_size(const PerftestConfig& c);

/// One size's result, in perftest's terms.
struct PerftestResult {
  int64_t bytes = 0;
  int64_t iterations = 0;  ///< as perftest prints it: per QP x QPs (bw), round trips (lat)
  double bw_peak_Bps = 0, bw_avg_Bps = 0, msg_rate_Mpps = 0;  ///< bw
  /// lat: microseconds, perftest's columns.
  double t_min_us = 0, t_max_us = 0, t_typical_us = 0, t_avg_us = 0, t_stdev_us = 0;
  double p99_us = 0, p99_9_us = 0;
};

/// Runs one size of a perftest on a network: start() posts, the network's completions (it is
/// the network's sink while it runs) drive the rest; the simulator is asked to stop when done.
/// One virtual call per message (the sink), none per packet.
class PerftestPlayer final : public CompletionSink {
 public:
  /// Opens the test's queue pairs (client -> server, and back). Throws std::invalid_argument
  /// for an unknown test or bad hosts (Network::open_qp's checks).
  PerftestPlayer(Simulator& sim, Network& net, const PerftestConfig& c);
  /// Starts size `bytes` now (the previous size must be done); makes this the network's sink.
  void start(int64_t bytes);
  void on_message_complete(uint64_t tag) override;
  bool done() const { return done_; }
  /// Messages (bw) or round trips (lat) completed in this size, and of them in all.
  size_t completed() const { return completed_; }
  size_t total() const { return total_; }
  int64_t finish_time_ps() const { return finish_ps_; }
  /// The size's row (after done()).
  PerftestResult result() const;

 private:
  void post(int dir, int qp);  ///< the next message (bw) on QP `qp` in direction `dir`
  void post_data(int dir, int qp);
  Simulator& sim_;
  Network& net_;
  PerftestConfig c_;
  const PerftestTest* test_;
  int tx_depth_;
  int64_t inline_size_;
  int64_t bytes_ = 0, iterations_ = 0;
  size_t completed_ = 0, total_ = 0;
  bool done_ = true;
  int64_t start_ps_ = 0, finish_ps_ = -1, half_ps_ = -1;
  std::vector<int64_t> posted_;     ///< per (direction, QP): messages posted
  std::vector<int64_t> rtt_start_;  ///< lat: when the current round trip began
  std::vector<double> samples_us_;  ///< lat: one per round trip
};

/// perftest's report for `results` (one per size) of a run of `c` on a NIC of `mtu_bytes` over
/// `link_type` ("IB" or "Ethernet"): its info block, the table in its column layout and units,
/// and "## simulated:" lines first saying what differs from a real run (iterations).
std::string format_perftest(const PerftestConfig& c, int mtu_bytes, const std::string& link_type,
                            const std::vector<PerftestResult>& results);

}  // namespace fabricsim
