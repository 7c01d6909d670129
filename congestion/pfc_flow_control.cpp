#include "congestion/pfc_flow_control.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

namespace fabricsim {

void PfcFlowControl::setup(const Setup& s) {
  const size_t n = s.is_switch.size();
  ports_.assign(s.ports.size(), PortState{});
  hot_.assign(s.ports.size(), Hot{});
  queues_.assign(s.ports.size() * kClasses, QueueState{});
  settings_ = s.settings;
  first_port_ = s.first_port;
  xoff_count_.assign(n, 0);
  headroom_pool_.assign(n, 0);
  xon_waits_for_pool_.assign(n, 0);
  credits_ = s.credits;
  data_tc_ = s.data_tc;
  host_of_node_ = s.host_of_node;
  host_node_ = s.host_node;
  host_pauses_.assign(s.host_node.size(), {});
  pause_host_.assign(s.ports.size(), -1);
  const int64_t mtu_frame = s.mtu_frame_bytes;
  xon_offset_default_bytes_ = 2 * mtu_frame;
  for (uint32_t pid = 0; pid < s.ports.size(); ++pid) {
    const PortInfo& p = s.ports[pid];
    ports_[pid].node = p.node;
    if (p.nic) pause_host_[pid] = s.host_of_node[p.node];
    const int64_t r = s.is_switch[p.node] ? settings_[p.node].response_ps : s.host_response_ps;
    ports_[pid].response_ps = r >= 0 ? r : pfc_response_bound_ps(p.rate_bps);
  }
  for (uint32_t v = 0; v < n; ++v) {
    if (!s.is_switch[v] || !settings_[v].enabled) continue;
    const PfcSwitchSettings& c = settings_[v];
    const std::string& name = s.node_names[v];
    const BufferMmu& mmu = (*s.mmus)[v];
    // The XOFF refresh goes out half a pause after the last PFC frame and may wait behind one
    // MTU frame: a pause shorter than two (MTU frame + PFC frame) times could lapse first.
    const int64_t min_quanta =
        (2 * (mtu_frame + kPfcFrameWireBytes) * 8 + kPauseQuantumBits - 1) / kPauseQuantumBits;
    if (c.pause_quanta < min_quanta) {
      throw PfcSetupError(
          name, "pfc.pause_quanta",
          "PFC at " + name + ": a pause of " + std::to_string(c.pause_quanta) +
              " quanta is shorter than two MTU frames plus PFC frames (" +
              std::to_string(2 * (mtu_frame + kPfcFrameWireBytes)) +
              " B): the refresh, sent at half the pause time behind up to one frame, could "
              "arrive after the pause expired; at least " +
              std::to_string(min_quanta) + " quanta at this MTU");
    }
    const int64_t nports = s.first_port[v + 1] - s.first_port[v];
    const int64_t share = s.static_buffer ? s.buffer_per_port_bytes
                                          : s.shared_buffer_bytes / std::max<int64_t>(1, nports);
    for (uint32_t pid = s.first_port[v]; pid < s.first_port[v + 1]; ++pid) {
      const PortInfo& info = s.ports[pid];
      PortState& p = ports_[pid];
      HeadroomInputs in;
      in.rate_bps = info.rate_bps;
      in.propagation_ps = info.delay_ps;
      in.mtu_frame_bytes = mtu_frame;
      in.switch_latency_ps = s.switch_latency_ps;
      in.response_ps = ports_[info.peer_port].response_ps;
      // Cut-through counts a frame from its head only towards egresses no faster than this
      // port; a frame stored for a faster egress counts at its tail, like store-and-forward.
      int64_t fastest = 0;
      for (uint32_t q = s.first_port[v]; q < s.first_port[v + 1]; ++q)
        fastest = std::max(fastest, s.ports[q].rate_bps);
      in.cut_through = s.cut_through && fastest <= info.rate_bps;
      p.headroom_bytes = c.headroom_bytes > 0 ? c.headroom_bytes : pfc_headroom_bytes(in);
      // A static port buffer holds all its lossless priorities: each gets an equal part of it
      // for its XOFF threshold and headroom (a priority group's share, as switch ASICs carve
      // their ingress buffers). A shared buffer's headroom is memory of its own.
      const int64_t classes = std::max(1, std::popcount(c.lossless_mask));
      const int64_t pg_share = s.static_buffer ? share / classes : share;
      p.xoff_bytes = c.xoff_bytes > 0 ? c.xoff_bytes : pg_share - p.headroom_bytes;
      const int64_t xon_offset = c.xon_offset_bytes > 0 ? c.xon_offset_bytes : 2 * mtu_frame;
      const std::string where = "PFC at " + name + " port " + std::to_string(info.index) + " (to " +
                                s.node_names[info.peer_node] + "): ";
      const std::string buffer_key =
          s.static_buffer ? "switch.buffer_per_port" : "switch.shared_buffer";
      const std::string share_text =
          std::to_string(pg_share) + " B" +
          (!s.static_buffer ? " (shared buffer / ports)"
           : classes > 1
               ? " (buffer_per_port / " + std::to_string(classes) + " lossless priorities)"
               : "");
      const std::string headroom_text =
          std::to_string(p.headroom_bytes) + " B" +
          (c.headroom_bytes > 0 ? "" : " (802.1Qbb formula: rate, cable, MTU, response time)");
      if (!c.dynamic && c.xoff_bytes <= 0 && p.xoff_bytes <= xon_offset) {
        throw PfcSetupError(
            name, c.headroom_bytes > 0 ? "pfc.headroom" : buffer_key,
            where + "the port's buffer " + share_text + " minus the headroom " + headroom_text +
                " leaves an XOFF threshold of " + std::to_string(p.xoff_bytes) +
                " B, not above the XON offset (" + std::to_string(xon_offset) +
                " B); give more buffer, a smaller pfc.headroom or an explicit pfc.xoff");
      }
      if (!c.dynamic && c.xoff_bytes > 0 && p.xoff_bytes <= xon_offset) {
        throw PfcSetupError(name, "pfc.xoff",
                            where + "xoff (" + std::to_string(p.xoff_bytes) +
                                " B) must be above the XON offset (" + std::to_string(xon_offset) +
                                " B)");
      }
      headroom_pool_[v] += p.headroom_bytes * classes;
      // (xoff > share - headroom: the sum could overflow for an xoff near 2^63.)
      if (!c.dynamic && c.xoff_bytes > 0 && s.static_buffer &&
          p.xoff_bytes > pg_share - p.headroom_bytes) {
        throw PfcSetupError(
            name, "pfc.xoff",
            where + "xoff (" + std::to_string(p.xoff_bytes) + " B) plus the headroom " +
                headroom_text + " exceed the port's buffer" +
                (classes > 1
                     ? " for each of its " + std::to_string(classes) + " lossless priorities ("
                     : " (") +
                share_text + ", switch.buffer_per_port): lossless frames could overrun it; " +
                "at most " + std::to_string(std::max<int64_t>(0, pg_share - p.headroom_bytes)) +
                " B");
      }
      if (!c.dynamic && c.xoff_bytes > 0 && !s.static_buffer && p.xoff_bytes > mmu.limit_bytes()) {
        throw PfcSetupError(
            name, "pfc.xoff",
            where + "xoff (" + std::to_string(p.xoff_bytes) + " B) is more than the switch's " +
                "whole shared pool (" + std::to_string(mmu.limit_bytes()) +
                " B: switch.shared_buffer minus the queues' reservations): one port could "
                "never reach it; at most " +
                std::to_string(mmu.limit_bytes()) +
                " B (XOFF also comes when the pool "
                "runs out)");
      }
    }
  }
}

bool PfcFlowControl::try_xon(uint32_t in_pid, int tc, const BufferMmu& mmu) {
  PortState& port = ports_[in_pid];
  const PfcSwitchSettings& s = settings_[port.node];
  const QueueState& q = queue(in_pid, tc);
  const int64_t offset = s.xon_offset_bytes > 0 ? s.xon_offset_bytes : xon_offset_default_bytes_;
  if (q.ingress_bytes > std::max<int64_t>(0, xoff_threshold(in_pid, mmu) - offset)) return false;
  if (!s.dynamic && mmu.model() == BufferModel::kShared && mmu.pool_free_bytes() < offset) {
    // A static threshold in a shared buffer: XOFF also came from the pool running out, and XON
    // waits until the pool has the XON offset free again (a dynamic threshold has its own).
    xon_waits_for_pool_[port.node] = 1;
    return false;
  }
  port.xoff &= static_cast<uint8_t>(~(1u << tc));  // XON: resume it
  --xoff_count_[port.node];
  port.pending |= static_cast<uint8_t>(1u << tc);
  sync(in_pid);
  return true;
}

bool PfcFlowControl::resume(uint32_t pid, int tc, int64_t now_ps, int64_t& counted_ps) {
  PortState& port = ports_[pid];
  if (!(port.paused >> tc & 1)) return false;
  QueueState& q = queue(pid, tc);
  port.paused &= static_cast<uint8_t>(~(1u << tc));
  sync(pid);
  counted_ps = -1;
  if (q.paused_since_ps >= 0) {  // (not counted while the watchdog ignores the pause)
    counted_ps = now_ps - q.paused_since_ps;
    if (const int32_t host = pause_host_[pid]; host >= 0 && tc == data_tc_) {
      host_pauses_[static_cast<size_t>(host)].emplace_back(q.paused_since_ps, now_ps);
    }
  }
  q.paused_since_ps = -1;
  q.stuck_since_ps = -1;
  return true;
}

int64_t PfcFlowControl::host_paused_ps(int host, int64_t from_ps, int64_t to_ps,
                                       int64_t now_ps) const {
  std::vector<std::pair<int64_t, int64_t>> spans;
  const auto clip = [&](int64_t a, int64_t b) {
    a = std::max(a, from_ps);
    b = std::min(b, to_ps);
    if (a < b) spans.emplace_back(a, b);
  };
  for (const auto& [a, b] : host_pauses_.at(static_cast<size_t>(host))) clip(a, b);
  // Pauses still running: each NIC port of the host in the data class.
  const uint32_t v = host_node_[static_cast<size_t>(host)];
  for (uint32_t id = first_port_[v]; id < first_port_[v + 1]; ++id) {
    const QueueState& q = queue(id, data_tc_);
    if (pause_host_[id] >= 0 && (ports_[id].paused >> data_tc_ & 1) && q.paused_since_ps >= 0) {
      clip(q.paused_since_ps, now_ps);
    }
  }
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, end = std::numeric_limits<int64_t>::min();
  for (const auto& [a, b] : spans) {  // the union's length
    if (b <= end) continue;
    total += b - std::max(a, end);
    end = b;
  }
  return total;
}

namespace {

template <class T>
void put(std::vector<std::byte>& out, const T& v) {
  static_assert(std::is_arithmetic_v<T>);
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

template <class T>
void get(std::span<const std::byte> in, size_t& at, T& v) {
  static_assert(std::is_arithmetic_v<T>);
  if (in.size() - at < sizeof(T)) throw std::runtime_error("PfcFlowControl: short state blob");
  std::memcpy(&v, in.data() + at, sizeof(T));
  at += sizeof(T);
}

}  // namespace

void PfcFlowControl::export_node(uint32_t v, std::vector<std::byte>& out) const {
  const auto w = [&](const auto& x) { put(out, x); };
  for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
    const PortState& p = ports_[pid];
    w(p.paused), w(p.storm), w(p.xoff), w(p.pending), w(p.pause_timer), w(p.refresh_timer);
    w(p.xoff_bytes), w(p.headroom_bytes), w(p.lossless_in_bytes), w(p.peak_lossless_in_bytes);
    w(p.response_ps);
    for (int tc = 0; tc < kClasses; ++tc) {
      const QueueState& q = queue(pid, tc);
      w(q.ingress_bytes), w(q.xoff_level_bytes), w(q.paused_until_ps), w(q.paused_since_ps);
      w(q.last_pfc_rx_ps), w(q.stuck_since_ps);
    }
  }
  w(xoff_count_[v]);
  if (const int32_t host = host_of_node_[v]; host >= 0) {
    const auto& pauses = host_pauses_[static_cast<size_t>(host)];
    w(static_cast<uint64_t>(pauses.size()));
    for (const auto& [a, b] : pauses) w(a), w(b);
  }
}

void PfcFlowControl::import_node(uint32_t v, std::span<const std::byte> in) {
  size_t at = 0;
  const auto r = [&](auto& x) { get(in, at, x); };
  for (uint32_t pid = first_port_[v]; pid < first_port_[v + 1]; ++pid) {
    PortState& p = ports_[pid];
    r(p.paused), r(p.storm), r(p.xoff), r(p.pending), r(p.pause_timer), r(p.refresh_timer);
    r(p.xoff_bytes), r(p.headroom_bytes), r(p.lossless_in_bytes), r(p.peak_lossless_in_bytes);
    r(p.response_ps);
    sync(pid);
    for (int tc = 0; tc < kClasses; ++tc) {
      QueueState& q = queue(pid, tc);
      r(q.ingress_bytes), r(q.xoff_level_bytes), r(q.paused_until_ps), r(q.paused_since_ps);
      r(q.last_pfc_rx_ps), r(q.stuck_since_ps);
    }
  }
  r(xoff_count_[v]);
  if (const int32_t host = host_of_node_[v]; host >= 0) {
    uint64_t count = 0;
    r(count);
    auto& pauses = host_pauses_[static_cast<size_t>(host)];
    if (count > (in.size() - at) / (2 * sizeof(int64_t))) {
      throw std::runtime_error("PfcFlowControl: short state blob");
    }
    pauses.assign(count, {});
    for (auto& [a, b] : pauses) r(a), r(b);
  }
  if (at != in.size()) throw std::runtime_error("PfcFlowControl: state blob of another fabric");
}

}  // namespace fabricsim
