// A CollectiveTransport without a network, shared by the collectives tests: every transfer
// completes kAlpha + bytes x 8 / kRate after its post, with no contention, so a replay's times
// can be worked out by hand.
#pragma once

#include <cstdint>

#include "collectives/replay.hpp"
#include "sim/core/simulator.hpp"

namespace fabricsim::testing {

inline constexpr int64_t kAlpha = 1'000'000;       // 1 us per transfer
inline constexpr int64_t kRate = 100'000'000'000;  // 100 Gb/s: 80 ps per byte
/// A transfer's time on the ideal transport, picoseconds.
constexpr int64_t wire(int64_t bytes) {
  return kAlpha + bytes * 80;
}

/// Each transfer completes kAlpha + bytes × 8 / kRate after its post; no contention.
class IdealTransport final : public CollectiveTransport {
 public:
  explicit IdealTransport(Simulator& sim) : sim_(sim) {}
  void attach(DagReplayer* r) { replayer_ = r; }
  void send(int, int, int64_t bytes, uint32_t, uint64_t tag, int64_t) override {
    sim_.after<&IdealTransport::on_done>(SimTime(kAlpha + serialization_ps(bytes, kRate)), LpId(0),
                                         this, tag);
  }
  void post_after(int64_t delay_ps, uint64_t tag, int /*src_rank*/) override {
    sim_.after<&IdealTransport::on_post>(SimTime(delay_ps), LpId(0), this, tag);
  }
  SimTime now() const override { return sim_.now(); }

 private:
  void on_done(uint64_t tag) {
    replayer_->complete(tag);
    if (replayer_->done()) sim_.request_stop();
  }
  void on_post(uint64_t tag) {
    replayer_->post(tag);
    if (replayer_->done()) sim_.request_stop();
  }
  Simulator& sim_;
  DagReplayer* replayer_ = nullptr;
};

}  // namespace fabricsim::testing
