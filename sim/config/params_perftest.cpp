// The `perftest:` section (PerftestConfig, perftest/perftest_params.hpp): a perftest run
// between two hosts with perftest's own options (linux-rdma/perftest, README and
// src/perftest_parameters.h for the defaults), as a workload of its own.
#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

constexpr auto kPerftest = &Scenario::perftest;
using P = PerftestConfig;

// perftest's -s: 1 B to MAX_SIZE 8 MiB (src/perftest_parameters.h).
const QuantitySpec kPerftestSize{"size",           "65536B",
                                 parse_size_bytes, 1,
                                 int64_t{8} << 20, "a size from 1B to 8MiB (perftest's MAX_SIZE)"};
// perftest's -I: the device caps it (perftest refuses more than the NIC allows); 4 KiB, one
// page, is beyond any ConnectX.
const QuantitySpec kPerftestInline{"size", "220B", parse_size_bytes,
                                   0,      4096,   "a size from 0B to 4096B"};
const QuantitySpec kPerftestCap{"size", "64MiB",           parse_size_bytes,
                                1,      int64_t{64} << 30, "a size from 1B to 64GiB"};

}  // namespace

const Choices& perftest_test_names() {
  // The tests perftest/perftest.cpp simulates (tests/perftest/test_perftest_workload.cpp checks
  // that the two lists agree: sim/config does not depend on perftest/).
  static const Choices tests{
      "perftest test",
      {"ib_write_bw", "ib_read_bw", "ib_send_bw", "ib_write_lat", "ib_read_lat", "ib_send_lat"},
      {},
      {},
      "perftest.test"};
  return tests;
}

// clang-format off
std::span<const Field> perftest_params() {
  static const Field rows[] = {
  {"perftest", "test", false, Choice(perftest_test_names()), at<kPerftest, &P::test>,
   "the perftest program: ib_write_bw | ib_read_bw | ib_send_bw | ib_write_lat | ib_read_lat | ib_send_lat"},
  {"perftest", "client", false, Int(0, 1 << 30), at<kPerftest, &P::client>,
   "host index of the client (the side that posts); default 0"},
  {"perftest", "server", false, Int(0, 1 << 30), at<kPerftest, &P::server>,
   "host index of the server; default 1"},
  {"perftest", "size", false, Quantity(kPerftestSize), at<kPerftest, &P::size_bytes>,
   "-s: message size; absent = perftest's default, 65536 B (bw) or 2 B (lat)"},
  {"perftest", "all", false, Bool(), at<kPerftest, &P::all_sizes>,
   "-a: every size from 2 B to 8 MiB, powers of two"},
  {"perftest", "iterations", false, Int(1, 100'000'000), at<kPerftest, &P::iterations>,
   "-n: messages per QP (bw), round trips (lat); perftest runs 5000 (ib_write_bw) or 1000 (the others)"},
  {"perftest", "qps", false, Int(1, 65536), at<kPerftest, &P::qps>,
   "-q: queue pairs (bw); perftest's default 1"},
  {"perftest", "tx_depth", false, Int(1, 15000), at<kPerftest, &P::tx_depth>,
   "-t: outstanding messages per QP; absent = perftest's 128 (bw) or 1 (lat)"},
  {"perftest", "bidirectional", false, Bool(), at<kPerftest, &P::bidirectional>,
   "-b: both hosts send at once (bw); the sum of both directions is reported"},
  {"perftest", "report_gbits", false, Bool(), at<kPerftest, &P::report_gbits>,
   "--report_gbits: the table in Gb/sec rather than MB/sec (2^20 B/s)"},
  {"perftest", "inline_size", false, Quantity(kPerftestInline), at<kPerftest, &P::inline_size>,
   "-I: post messages up to this size inline; absent = perftest's 220 B (write_lat), 236 B (send_lat), else 0"},
  {"perftest", "max_bytes_per_size", false, Quantity(kPerftestCap), at<kPerftest, &P::max_bytes_per_size>,
   "fewer iterations for a size above this many bytes (at least 2 x tx_depth x qps)"},
  };
  return rows;
}
// clang-format on

void check_perftest(const std::map<std::string, Value>& found, Scenario& s) {
  s.perftest.enabled = found.count("perftest") > 0;
  if (!s.perftest.enabled) return;
  if (s.perftest.client == s.perftest.server) {
    const char* key = found.count("perftest.server") ? "perftest.server" : "perftest.client";
    const auto it = found.find(key);
    const std::string what = "the client and the server are the same host (" +
                             std::to_string(s.perftest.client) + "): expected two hosts";
    if (it == found.end()) found.at("perftest").fail(what);
    it->second.fail(what);
  }
  // perftest refuses these on its latency programs (src/perftest_parameters.c: "Bidirectional
  // is only available in BW test", "Multiple QPs only available on bw tests"); they were
  // accepted and ignored.
  const bool latency = s.perftest.test.size() > 4 &&
                       s.perftest.test.compare(s.perftest.test.size() - 4, 4, "_lat") == 0;
  if (latency) {
    if (const auto b = found.find("perftest.bidirectional");
        b != found.end() && s.perftest.bidirectional) {
      b->second.fail("-b is for the bw tests: perftest's " + s.perftest.test +
                     " refuses it (\"Bidirectional is only available in BW test\")");
    }
    if (const auto q = found.find("perftest.qps"); q != found.end() && s.perftest.qps != 1) {
      q->second.fail("-q is for the bw tests: perftest's " + s.perftest.test +
                     " runs one queue pair and refuses more (\"Multiple QPs only available on "
                     "bw tests\")");
    }
  }
}

}  // namespace fabricsim::config_detail
