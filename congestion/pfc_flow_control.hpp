// Priority flow control as a state machine (IEEE 802.1Qbb-2011; the formulas in pfc.hpp): the
// switches' ingress accounting per port and priority with XOFF/XON decisions and headroom, and
// every port's egress pause state (paused, stormed by the PFC watchdog, pause timers, paused
// time). The network asks it and acts on the answers: it schedules the events (pause expiry,
// XOFF refresh), builds and sends the PFC frames, kicks ports and tells the observer; the
// component schedules nothing and calls nothing back except in recheck_xon() (a template, so
// bound at compile time). Nothing here is virtual or allocates per packet.
//
// State per port (as a switch ingress: XOFF in force, PFC frame pending, thresholds, lossless
// bytes held; as an egress: paused, stormed, timers), per port and priority (bytes held, XOFF
// level, pause end and start, the watchdog's times) and per switch (settings, ingress pairs in
// XOFF, headroom pool, an XON waiting for the shared pool), plus the finished pause intervals
// of the hosts' NIC ports in the data class (a NIC's pause duration counter).
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "congestion/buffer_mmu.hpp"
#include "congestion/pfc.hpp"

namespace fabricsim {

/// A PFC setting that cannot work on this fabric, found by PfcFlowControl::setup: `key` is the
/// scenario key to blame at switch `switch_name` (the network reports it as a device error).
struct PfcSetupError : std::invalid_argument {
  PfcSetupError(std::string switch_name_, std::string key_, const std::string& message)
      : std::invalid_argument(message),
        switch_name(std::move(switch_name_)),
        key(std::move(key_)) {}
  std::string switch_name;
  std::string key;
};

class PfcFlowControl {
 public:
  static constexpr int kClasses = 8;

  /// One direction of a link as setup() needs it.
  struct PortInfo {
    uint32_t node = 0, peer_node = 0, peer_port = 0;
    uint16_t index = 0;
    int64_t rate_bps = 0, delay_ps = 0;
    bool nic = false;  ///< a host's network port (not its NVLink): counted in host_paused_ps
  };
  /// What setup() reads: the fabric's nodes and ports and the switches' buffers and settings.
  struct Setup {
    std::vector<std::string> node_names;      ///< per node (error messages)
    std::vector<uint8_t> is_switch;           ///< per node
    std::vector<int32_t> host_of_node;        ///< per node: host id, or -1
    std::vector<uint32_t> host_node;          ///< per host: its node
    std::vector<uint32_t> first_port;         ///< per node + 1: global id of its port 0
    std::vector<PortInfo> ports;              ///< by global port id
    std::vector<PfcSwitchSettings> settings;  ///< per node (switches: the fabric's or override)
    const std::vector<BufferMmu>* mmus = nullptr;  ///< per node (switches)
    int64_t host_response_ps = -1;                 ///< hosts' PFC response delay (-1 = 802.3 bound)
    bool static_buffer = true;                     ///< switch.buffer_model static (else shared)
    int64_t buffer_per_port_bytes = 0, shared_buffer_bytes = 0;
    int64_t switch_latency_ps = 0;
    bool cut_through = false;
    int64_t mtu_frame_bytes = 0;  ///< largest frame on the wire
    int data_tc = 0;              ///< the data traffic class (host_paused_ps)
    bool credits = false;         ///< InfiniBand: ingress bytes are counted, PFC never fires
  };
  /// Sizes the state and derives each switch ingress's headroom, XOFF threshold and each
  /// port's response delay (pfc.hpp formulas). Throws PfcSetupError for a pause shorter than
  /// two MTU and PFC frames, or a threshold not above the XON offset or beyond the buffer.
  void setup(const Setup& s);

  // ---- switch ingress: accounting and XOFF/XON ----
  /// Whether priority `tc` of switch `node` is lossless by PFC.
  bool lossless(uint32_t node, int tc) const {
    const PfcSwitchSettings& s = settings_[node];
    return s.enabled && (s.lossless_mask >> tc & 1);
  }
  enum class Ingress : uint8_t { kNone, kXoff, kMaybeXon };
  /// `bytes` of priority `tc` came in (> 0) or left (< 0) on switch ingress `in_pid` (`mmu`:
  /// its switch's buffer): kXoff when the count reached the threshold with no XOFF in force
  /// (call assert_xoff), kMaybeXon when bytes left a pair in XOFF (call try_xon).
  Ingress account(uint32_t in_pid, int tc, int64_t bytes, const BufferMmu& mmu) {
    QueueState& q = queue(in_pid, tc);
    q.ingress_bytes += bytes;
    PortState& port = ports_[in_pid];
    port.lossless_in_bytes += bytes;
    port.peak_lossless_in_bytes = std::max(port.peak_lossless_in_bytes, port.lossless_in_bytes);
    if (credits_) return Ingress::kNone;
    const uint8_t bit = static_cast<uint8_t>(1u << tc);
    if (bytes > 0 && !(port.xoff & bit) && q.ingress_bytes >= xoff_threshold(in_pid, mmu)) {
      return Ingress::kXoff;
    } else if (bytes < 0 && (port.xoff & bit)) {
      return Ingress::kMaybeXon;
    }
    return Ingress::kNone;
  }
  /// Admission of a lossless frame of `wire_bytes` for (in_pid, tc) at switch `node` whose
  /// egress queue holds `queue_bytes`: true if a full shared pool pauses the ingress at once,
  /// whatever its threshold (call assert_xoff before headroom_overflow).
  bool pool_xoff(uint32_t in_pid, int tc, int64_t queue_bytes, int64_t wire_bytes,
                 const BufferMmu& mmu) const {
    return !(ports_[in_pid].xoff >> tc & 1) && !mmu.pool_fits(queue_bytes, wire_bytes);
  }
  /// Whether the frame must be refused (a headroom drop): beyond the headroom of a pair in
  /// XOFF, or beyond the buffer itself (a port's own with static buffers; the shared buffer and
  /// the headroom pool beside it).
  bool headroom_overflow(uint32_t in_pid, int tc, int64_t wire_bytes, const BufferMmu& mmu) const {
    const PortState& in_port = ports_[in_pid];
    const QueueState& in = queue(in_pid, tc);
    const bool beyond_buffer =
        mmu.model() == BufferModel::kStatic
            ? in_port.lossless_in_bytes + wire_bytes > mmu.limit_bytes()
            : mmu.total_bytes() + wire_bytes > mmu.buffer_bytes() + headroom_pool_[in_port.node];
    return beyond_buffer ||
           ((in_port.xoff >> tc & 1) &&
            in.ingress_bytes + wire_bytes > in.xoff_level_bytes + in_port.headroom_bytes);
  }
  /// XOFF for (in_pid, tc) now, its headroom counted from the bytes it holds; a PFC frame is
  /// pending on the port. Returns those bytes.
  int64_t assert_xoff(uint32_t in_pid, int tc) {
    PortState& port = ports_[in_pid];
    QueueState& q = queue(in_pid, tc);
    const uint8_t bit = static_cast<uint8_t>(1u << tc);
    port.xoff |= bit;  // XOFF: pause the upstream port for this priority
    ++xoff_count_[port.node];
    q.xoff_level_bytes = q.ingress_bytes;
    port.pending |= bit;
    sync(in_pid);
    return q.ingress_bytes;
  }
  /// XON for (in_pid, tc) in XOFF if its count is at or below the XON level now (a PFC frame
  /// is then pending); true if it went out of XOFF.
  bool try_xon(uint32_t in_pid, int tc, const BufferMmu& mmu);
  /// Bytes held by (in_pid, tc) (the count PFC thresholds apply to).
  int64_t ingress_bytes(uint32_t in_pid, int tc) const { return queue(in_pid, tc).ingress_bytes; }
  /// Whether XON decisions at `node` must be rechecked as any frame leaves (dynamic
  /// thresholds, or an XON waiting for the shared pool).
  bool xon_recheck_due(uint32_t node) const {
    return xoff_count_[node] > 0 && (settings_[node].dynamic || xon_waits_for_pool_[node]);
  }
  /// try_xon for every ingress pair of `node` in XOFF, calling on_xon(in_pid, tc, bytes) at
  /// once for each that went out of XOFF (a dynamic threshold rises whenever the shared buffer
  /// frees up, whoever's bytes left).
  template <class OnXon>
  void recheck_xon(uint32_t node, const BufferMmu& mmu, OnXon&& on_xon) {
    xon_waits_for_pool_[node] = 0;  // set again by try_xon for an XON still waiting
    for (uint32_t pid = first_port_[node]; pid < first_port_[node + 1] && xoff_count_[node] > 0;
         ++pid) {
      for (uint32_t m = ports_[pid].xoff; m != 0; m &= m - 1) {
        const int tc = std::countr_zero(m);
        if (try_xon(pid, tc, mmu)) on_xon(pid, tc, queue(pid, tc).ingress_bytes);
      }
    }
  }
  /// Priorities of switch ingress `pid` in XOFF (bit p).
  uint8_t xoff_mask(uint32_t pid) const { return ports_[pid].xoff; }
  /// Whether a PFC frame waits to go out of port `pid`.
  bool frame_pending(uint32_t pid) const { return hot_[pid].pending != 0; }
  /// The PFC frame port `pid` sends now: priorities it names (`enable`), those it pauses
  /// (`xoff`) and for how long; nothing is pending after.
  struct Frame {
    uint8_t enable, xoff;
    int quanta;
  };
  Frame take_frame(uint32_t pid) {
    PortState& port = ports_[pid];
    const Frame f{port.pending, static_cast<uint8_t>(port.xoff & port.pending),
                  settings_[port.node].pause_quanta};
    port.pending = 0;
    sync(pid);
    return f;
  }
  /// After a frame with `xoff` != 0: true if the XOFF refresh must be armed (none pending).
  bool arm_refresh(uint32_t pid, uint8_t xoff) {
    PortState& port = ports_[pid];
    if (xoff == 0 || port.refresh_timer) return false;
    port.refresh_timer = true;
    return true;
  }
  /// The XOFF refresh of `pid` fired: true if XOFF lasts (a frame is pending again).
  bool refresh(uint32_t pid) {
    PortState& port = ports_[pid];
    port.refresh_timer = false;
    if (port.xoff == 0) return false;
    port.pending |= port.xoff;
    sync(pid);
    return true;
  }

  // ---- egress: pause state ----
  /// Classes of `pid` a PFC pause holds back (paused, not stormed by the watchdog).
  uint8_t held(uint32_t pid) const { return hot_[pid].held; }
  uint8_t paused_mask(uint32_t pid) const { return ports_[pid].paused; }
  uint8_t storm_mask(uint32_t pid) const { return hot_[pid].storm; }
  /// The egress's PFC response delay, ps.
  int64_t response_ps(uint32_t pid) const { return ports_[pid].response_ps; }
  /// A PFC frame pausing (pid, tc) came in at `now_ps`.
  void note_pfc_rx(uint32_t pid, int tc, int64_t now_ps) { queue(pid, tc).last_pfc_rx_ps = now_ps; }
  struct Paused {
    bool started;    ///< it was not paused (the observer hears of it)
    bool arm_timer;  ///< no expiry event is pending: schedule one at `until_ps`
  };
  /// Pauses (pid, tc) until `until_ps`.
  Paused pause(uint32_t pid, int tc, int64_t until_ps, int64_t now_ps) {
    PortState& port = ports_[pid];
    QueueState& q = queue(pid, tc);
    q.paused_until_ps = until_ps;
    Paused r{false, false};
    if (!(port.paused >> tc & 1)) {
      port.paused |= static_cast<uint8_t>(1u << tc);
      sync(pid);
      // Paused time is not counted while the watchdog has the queue ignore PAUSE.
      q.paused_since_ps = (port.storm >> tc & 1) ? -1 : now_ps;
      r.started = true;
    }
    if (!port.pause_timer) {
      port.pause_timer = true;
      r.arm_timer = true;
    }
    return r;
  }
  /// Resumes (pid, tc) at `now_ps`: false if it was not paused. Else `counted_ps` is the paused
  /// time to add to the queue's counter (-1: not counted, the watchdog ignored the pause); a
  /// host's NIC port in the data class records the interval.
  bool resume(uint32_t pid, int tc, int64_t now_ps, int64_t& counted_ps);
  /// The pause-expiry event of `pid` fired.
  void expiry_fired(uint32_t pid) { ports_[pid].pause_timer = false; }
  /// When the pause of (pid, tc) ends, ps.
  int64_t paused_until_ps(uint32_t pid, int tc) const { return queue(pid, tc).paused_until_ps; }
  /// True if an expiry event must be scheduled for `pid` (none pending); marks it pending.
  bool arm_pause_timer(uint32_t pid) {
    if (ports_[pid].pause_timer) return false;
    ports_[pid].pause_timer = true;
    return true;
  }
  /// Closes the open pause interval of (pid, tc) at `now_ps` (a new one starts): the paused
  /// time to add to its counter (0 when not paused).
  int64_t settle(uint32_t pid, int tc, int64_t now_ps) {
    QueueState& q = queue(pid, tc);
    if (q.paused_since_ps < 0) return 0;
    const int64_t d = now_ps - q.paused_since_ps;
    q.paused_since_ps = now_ps;
    return d;
  }
  /// Picoseconds within [from_ps, to_ps) during which PFC held at least one NIC port of host
  /// `host` in the data class: the union of its ports' pause intervals, a pause still running
  /// counted up to `now_ps`. Throws std::out_of_range for a bad host.
  int64_t host_paused_ps(int host, int64_t from_ps, int64_t to_ps, int64_t now_ps) const;

  // ---- the PFC watchdog (congestion/lossless_monitor.hpp decides; this keeps the state) ----
  int64_t last_pfc_rx_ps(uint32_t pid, int tc) const { return queue(pid, tc).last_pfc_rx_ps; }
  int64_t paused_since_ps(uint32_t pid, int tc) const { return queue(pid, tc).paused_since_ps; }
  /// The watchdog's record of when (pid, tc) was first seen paused with frames (-1: not).
  int64_t& stuck_since_ps(uint32_t pid, int tc) { return queue(pid, tc).stuck_since_ps; }
  /// The watchdog declares (pid, tc) stormed at `now_ps`: PAUSE ignored from now and not
  /// counted as paused time. Returns the paused time to add to the queue's counter.
  int64_t storm(uint32_t pid, int tc, int64_t now_ps) {
    ports_[pid].storm |= static_cast<uint8_t>(1u << tc);
    sync(pid);
    QueueState& q = queue(pid, tc);
    const int64_t d = now_ps - q.paused_since_ps;
    q.paused_since_ps = -1;
    return d;
  }
  /// The watchdog restores (pid, tc): PAUSE honoured again.
  void restore(uint32_t pid, int tc) {
    ports_[pid].storm &= static_cast<uint8_t>(~(1u << tc));
    sync(pid);
  }
  /// After restore() and a resume of an expired pause: a pause still in force counts from now.
  void recount_pause(uint32_t pid, int tc, int64_t now_ps) {
    if (ports_[pid].paused >> tc & 1) queue(pid, tc).paused_since_ps = now_ps;
  }

  // ---- buffers (end-of-run checks, tests) ----
  /// Per switch ingress: its headroom per priority and static XOFF threshold, bytes.
  int64_t headroom_bytes(uint32_t pid) const { return ports_[pid].headroom_bytes; }
  int64_t xoff_bytes(uint32_t pid) const { return ports_[pid].xoff_bytes; }
  /// The most lossless wire bytes (all priorities) that came in on switch ingress `pid` and
  /// were in the switch at once.
  int64_t peak_lossless_in_bytes(uint32_t pid) const { return ports_[pid].peak_lossless_in_bytes; }
  /// A switch's headroom pool: the headroom of all its ingress ports and lossless priorities.
  int64_t headroom_pool_bytes(uint32_t node) const { return headroom_pool_[node]; }

  // ---- the partitioned run's state exchange ----
  /// Appends the state node `v` keeps (its ports' and their priorities', its XOFF count, its
  /// host's pause intervals), field by field.
  void export_node(uint32_t v, std::vector<std::byte>& out) const;
  /// Replaces node `v`'s state with an export_node() of it. Throws std::runtime_error for a
  /// blob of another size.
  void import_node(uint32_t v, std::span<const std::byte> in);

 private:
  /// What the transmitter and forwarding read per frame, 4 bytes a port so that a fabric's
  /// ports share a few cache lines: copies of PortState's masks (held = paused & ~storm),
  /// refreshed by sync() wherever those change.
  struct Hot {
    uint8_t held = 0, pending = 0, storm = 0, unused = 0;
  };
  void sync(uint32_t pid) {
    const PortState& p = ports_[pid];
    hot_[pid] = Hot{static_cast<uint8_t>(p.paused & ~p.storm), p.pending, p.storm, 0};
  }
  struct PortState {
    uint32_t node = 0;
    // As an egress: `paused` bit tc = paused by the peer; `storm` bit tc = the PFC watchdog
    // declared the queue stormed (PAUSE ignored). As a switch ingress: `xoff` bit tc = XOFF in
    // force towards the peer, `pending` = PFC frame to send for these priorities.
    uint8_t paused = 0;
    uint8_t storm = 0;
    uint8_t xoff = 0;
    uint8_t pending = 0;
    bool pause_timer = false;    ///< a pause-expiry event is pending
    bool refresh_timer = false;  ///< an XOFF refresh event is pending
    int64_t xoff_bytes = 0;      ///< as a switch ingress: static XOFF threshold
    int64_t headroom_bytes = 0;  ///< as a switch ingress: headroom
    /// As a switch ingress: wire bytes of lossless frames (all priorities) that came in here
    /// and are still in the switch, and the most there ever were (a static buffer's bound).
    int64_t lossless_in_bytes = 0;
    int64_t peak_lossless_in_bytes = 0;
    int64_t response_ps = 0;  ///< as an egress: PFC response delay
  };
  /// Per (port, priority): as an ingress (bytes held), as an egress (pause).
  struct QueueState {
    int64_t ingress_bytes = 0;
    int64_t xoff_level_bytes = 0;  ///< ingress_bytes when XOFF was sent (headroom base)
    int64_t paused_until_ps = 0;   ///< paused while now < this
    int64_t paused_since_ps = -1;  ///< start of the current continuous pause, -1 = running
    int64_t last_pfc_rx_ps = -1;   ///< last PFC frame pausing this queue (watchdog restore)
    int64_t stuck_since_ps = -1;   ///< watchdog: paused with frames queued since (-1 = not)
  };
  QueueState& queue(uint32_t pid, int tc) { return queues_[size_t{pid} * kClasses + tc]; }
  const QueueState& queue(uint32_t pid, int tc) const {
    return queues_[size_t{pid} * kClasses + tc];
  }
  /// The XOFF threshold of switch ingress `in_pid` now: static, or alpha x the free shared
  /// buffer (lossless bytes use the pool too).
  int64_t xoff_threshold(uint32_t in_pid, const BufferMmu& mmu) const {
    const PortState& port = ports_[in_pid];
    const PfcSwitchSettings& s = settings_[port.node];
    if (!s.dynamic) return port.xoff_bytes;
    const int64_t free_bytes = std::max<int64_t>(0, mmu.limit_bytes() - mmu.shared_used_bytes());
    return static_cast<int64_t>(s.alpha * static_cast<double>(free_bytes));
  }

  std::vector<PortState> ports_;
  std::vector<Hot> hot_;                     ///< per port, kept equal to ports_' masks by sync()
  std::vector<QueueState> queues_;           ///< port x priority
  std::vector<PfcSwitchSettings> settings_;  ///< per node
  std::vector<uint32_t> first_port_;         ///< per node + 1
  std::vector<int32_t> xoff_count_;          ///< per node: (ingress, priority) pairs in XOFF
  std::vector<int64_t> headroom_pool_;       ///< per switch with PFC (shared: beside the pool)
  /// Per switch: an XON waits for the shared pool to free (static XOFF in a shared buffer), so
  /// any frame leaving may allow it.
  std::vector<uint8_t> xon_waits_for_pool_;
  int64_t xon_offset_default_bytes_ = 0;  ///< 2 MTU frames
  bool credits_ = false;
  int data_tc_ = 0;
  std::vector<int32_t> host_of_node_;  ///< per node
  std::vector<uint32_t> host_node_;    ///< per host
  std::vector<int32_t> pause_host_;    ///< per port: host of a NIC port, else -1
  /// Per host: finished pause intervals [start, end) of its NIC ports in the data class.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> host_pauses_;
};

}  // namespace fabricsim
