// The `perftest:` section's parameters: a perftest run (linux-rdma/perftest: ib_write_bw,
// ib_write_lat, …) between two hosts of the fabric, with perftest's own options. The
// defaults are perftest's (src/perftest_parameters.h: DEF_SIZE_BW 65536, DEF_SIZE_LAT 2,
// DEF_TX_BW 128, DEF_TX_LAT 1, DEF_NUM_QPS 1, MAX_SIZE 8388608) except the iterations: perftest
// runs 5000 (DEF_ITERS_WB, ib_write_bw only) or 1000 (DEF_ITERS, the others); a simulated run has
// no jitter to average away, so 1000 and at most `max_bytes_per_size` per size, said in the
// output's header.
#pragma once

#include <cstdint>
#include <string>

namespace fabricsim {

struct PerftestConfig {
  bool enabled = false;              ///< the scenario has a perftest: section
  std::string test = "ib_write_bw";  ///< ib_write_bw | ib_read_bw | ib_send_bw | *_lat
  int client = 0;                    ///< host index of the client (the side that posts)
  int server = 1;                    ///< host index of the server
  int64_t size_bytes = 0;            ///< -s; 0 = perftest's default (65536 bw, 2 lat)
  bool all_sizes = false;            ///< -a: 2 B, 4 B, … 8 MiB
  int64_t iterations = 1000;         ///< -n: messages per QP (bw) or round trips (lat)
  int qps = 1;                       ///< -q (bw)
  int tx_depth = 0;                  ///< -t: outstanding messages per QP; 0 = 128 (bw), 1 (lat)
  bool bidirectional = false;        ///< -b (bw): both hosts send at once; the sum is reported
  bool report_gbits = false;         ///< --report_gbits: Gb/sec instead of MB/sec (2^20 B/s)
  /// -I: messages of at most this many bytes are posted inline (the NIC reads no payload from
  /// host memory); -1 = perftest's choice: 220 (ib_write_lat, DEF_INLINE_WRITE), 236
  /// (ib_send_lat, DEF_INLINE_SEND_RC_UC), 0 for the bw tests ("Max inline data : 0[B]").
  int64_t inline_size = -1;
  /// Iterations of a size are cut to keep its bytes at most this (at least 2 x tx_depth x qps);
  /// the row's #iterations says how many ran.
  int64_t max_bytes_per_size = int64_t{64} << 20;
};

}  // namespace fabricsim
