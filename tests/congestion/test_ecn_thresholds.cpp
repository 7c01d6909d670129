// What the ECN thresholds do under DCQCN: the notification point sends at most one CNP per flow
// per cnp_interval (Zhu et al., SIGCOMM 2015, §3.1), so the marks a RED ramp adds beyond that
// change nothing at the sender. Raising Kmin with Kmax fixed steepens the ramp (Pmax over a
// shorter range) and lets the queue sit higher: more packets are marked, while the CNPs, bounded
// by the coalescing, barely move. docs/congestion-experiments.md has the 128-host sweep.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "../support.hpp"

namespace fabricsim {
namespace {

using testing::Bed;
using testing::Recorder;

struct EcnRun {
  NetTotals totals;
  int64_t simulated_ps = 0;
};

/// Two long DCQCN flows (ConnectX defaults) into one 100 Gb/s port for 5 ms, RED from kmin to
/// 800 KB at Pmax 0.2, PFC on.
EcnRun two_to_one(int64_t kmin_bytes) {
  Scenario sc = testing::one_leaf(3, 100'000'000'000, 500'000, 500'000, 16 << 20, 1024);
  sc.pfc.enabled = true;
  sc.ecn.enabled = true;
  sc.ecn.kmin_bytes = kmin_bytes;
  sc.ecn.kmax_bytes = 800'000;
  sc.ecn.pmax = 0.2;
  sc.dcqcn = dcqcn_preset("connectx");
  sc.dcqcn.enabled = true;
  Bed bed(sc);
  Recorder rec(bed.sim);
  bed.net->set_sink(&rec);
  for (int i = 0; i < 1000; ++i) {  // 64 MiB each: longer than the run
    bed.net->send(0, 2, 64 << 10, 0, static_cast<uint64_t>(i));
    bed.net->send(1, 2, 64 << 10, 0, 1'000'000 + static_cast<uint64_t>(i));
  }
  const int64_t end = 5'000'000'000;
  bed.sim.run(SimTime(end));
  return {bed.net->totals(), end};
}

TEST_CASE(
    "DCQCN: a higher Kmin marks more packets, while the CNPs stay within one per flow per "
    "interval") {
  const int64_t interval = dcqcn_preset("connectx").cnp_interval_ps;
  REQUIRE(interval > 0);
  std::vector<EcnRun> runs;
  for (const int64_t kmin : {20'000, 200'000, 400'000}) runs.push_back(two_to_one(kmin));
  for (size_t i = 0; i < runs.size(); ++i) {
    const NetTotals& t = runs[i].totals;
    INFO("run " << i << ": marks " << t.ecn_marked << ", CNPs " << t.cnp_tx << ", max queue "
                << t.max_queue_bytes << " B");
    // The notification point's bound: 2 flows x (5 ms / interval + 1).
    CHECK(t.cnp_tx <= 2 * (runs[i].simulated_ps / interval + 1));
    CHECK(t.cnp_tx > 0);
    CHECK(t.drops == 0);
    if (i > 0) {
      const NetTotals& lower = runs[i - 1].totals;
      CHECK(t.max_queue_bytes > lower.max_queue_bytes);  // the queue sits higher on the ramp
      CHECK(t.ecn_marked > lower.ecn_marked);            // and more of it is marked
      // The marks grow faster than the CNPs: the extra marks fall inside an interval that has
      // had its CNP.
      CHECK(static_cast<double>(t.ecn_marked) / lower.ecn_marked >
            static_cast<double>(t.cnp_tx) / lower.cnp_tx);
    }
  }
}

}  // namespace
}  // namespace fabricsim
