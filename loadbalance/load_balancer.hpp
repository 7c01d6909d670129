// How a switch picks among the equal-cost next hops its routes give (`routing.load_balancing`):
// per flow by a hash (ECMP), per packet by a hash (spraying), or by its own egress queue depth,
// per packet (adaptive) or per flowlet (flowlet). The network asks once per forwarded frame;
// the built-ins are a switch on a small enum into inline code.
//
// Adaptive routing here is local: the switch reads the occupancy of its own candidate ports
// (bytes queued plus the frame being serialized, all classes), as InfiniBand adaptive routing
// and Spectrum-X choose an output port by its queue depth and load; no remote congestion
// feedback (CONGA-style) is modelled.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fabricsim {

/// The load-balancing policies. kPerFlow and kPerPacket pick by hash alone.
enum class LbKind : uint8_t { kPerFlow, kPerPacket, kAdaptive, kFlowlet };

/// One policy's name (the `routing.load_balancing` value) and one line on what it does.
struct LbDef {
  const char* name;
  const char* doc;
  LbKind kind;
};

/// The policies in table order: per_flow, per_packet, adaptive, flowlet.
std::span<const LbDef> load_balancers();
/// The policy named `name`; throws std::invalid_argument naming the valid ones for another.
LbKind load_balancer_kind(const std::string& name);

/// What a LoadBalancer is built with (from the scenario's `routing:` section).
struct LbSettings {
  LbKind kind = LbKind::kPerFlow;
  /// flowlet: a flow idle at a switch for longer than this starts a new flowlet, which may
  /// take another port; ps. Default 16 us: the flowlet inactivity interval of Junos adaptive
  /// load balancing ("fabric-load-balance flowlet inactivity-interval", default 16 us), which
  /// its documentation says must exceed the largest latency skew between the paths.
  int64_t flowlet_gap_ps = 16'000'000;
  /// adaptive and flowlet: the hashed (ECMP) port is kept unless another candidate's occupancy
  /// is lower by more than this, bytes (hysteresis; 0 = always the least occupied).
  int64_t threshold_bytes = 0;
};

/// One network's load balancer: its settings and, for flowlets, a table per switch.
class LoadBalancer {
 public:
  /// Flowlet tables of kFlowletSlots entries per switch, indexed by flow hash (a flow that
  /// shares a slot with another restarts its flowlet when the other passes). The size is an
  /// assumption: no switch's table size is known here. An AllToAll over 8 leaves of 16 GPUs
  /// sends some 4,000 flows and their ACKs through a leaf, so there slots are shared.
  static constexpr uint32_t kFlowletSlots = 4096;

  LoadBalancer() = default;
  /// For `nodes` nodes. Throws std::invalid_argument for a flowlet_gap_ps <= 0 or a negative
  /// threshold_bytes.
  LoadBalancer(const LbSettings& settings, size_t nodes);

  LbKind kind() const { return s_.kind; }
  /// Whether the choice reads the switch's queues (adaptive, flowlet).
  bool adaptive() const { return s_.kind == LbKind::kAdaptive || s_.kind == LbKind::kFlowlet; }

  /// The index in `choices` (size > 1) a frame takes at `node` at `now_ps`. `hashed` is the
  /// index ECMP picks for it (its flow's hash, or its packet's when spraying); `flow_hash`
  /// names its flow for the flowlet table; `load(i)` is the occupancy of choice i, bytes.
  template <class Load>
  size_t choose(size_t n, size_t hashed, uint32_t node, uint32_t flow_hash, int64_t now_ps,
                const Load& load) {
    if (s_.kind == LbKind::kFlowlet) {
      Flowlet& f = flowlet_slot(node, flow_hash);
      const bool same =
          f.flow == flow_hash && f.choice < n && now_ps - f.last_ps <= s_.flowlet_gap_ps;
      f.last_ps = now_ps;
      if (same) return f.choice;
      f.flow = flow_hash;
      f.choice = static_cast<uint16_t>(least_loaded(n, hashed, load));
      return f.choice;
    }
    return least_loaded(n, hashed, load);
  }

 private:
  struct Flowlet {
    uint32_t flow = 0;
    uint16_t choice = UINT16_MAX;
    int64_t last_ps = 0;
  };
  Flowlet& flowlet_slot(uint32_t node, uint32_t flow_hash);

  /// The hashed choice unless another is lower by more than the threshold; then the least
  /// occupied, the first in order after the hashed one on a tie (so ties spread by hash).
  template <class Load>
  size_t least_loaded(size_t n, size_t hashed, const Load& load) const {
    const int64_t hashed_bytes = load(hashed);
    size_t best = hashed;
    int64_t best_bytes = hashed_bytes;
    for (size_t k = 1; k < n; ++k) {
      const size_t i = hashed + k < n ? hashed + k : hashed + k - n;
      const int64_t b = load(i);
      if (b < best_bytes) {
        best = i;
        best_bytes = b;
      }
    }
    return hashed_bytes - best_bytes > s_.threshold_bytes ? best : hashed;
  }

  LbSettings s_;
  std::vector<std::vector<Flowlet>> tables_;  ///< per node, allocated at its first flowlet
};

}  // namespace fabricsim
