#include "sim/flow/flow_network.hpp"
#include "topologies/family.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/core/rng.hpp"
#include "sim/net/network_hash.hpp"
#include "sim/net/nic_loop.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {
namespace {

constexpr size_t kMaxDownSetBytes = size_t{2} << 30;
constexpr int kMaxHops = 64;

}  // namespace

// ---- FlowRouter --------------------------------------------------------------------------

FlowRouter::FlowRouter(const Fabric& fabric, uint64_t seed)
    : fabric_(fabric), torus_(family_of(fabric).dimension_ordered) {
  if (fabric.hosts_forward) {
    throw std::invalid_argument(
        "the flow mode cannot route a rail-only fabric (its routes pass through GPUs); use the "
        "packet mode");
  }
  const FabricGraph& g = fabric.graph;
  const size_t n = boost::num_vertices(g);
  // The packet mode's ECMP salts, drawn in its order (Network::Network).
  RngStream ecmp_rng(seed, "ecmp");
  ecmp_salt_ = static_cast<uint32_t>(ecmp_rng.next());
  switch_salt_.resize(n);
  for (VertexId v = 0; v < n; ++v) switch_salt_[v] = static_cast<uint32_t>(ecmp_rng.next());
  first_port_.resize(n + 1);
  host_of_.assign(n, -1);
  for (size_t h = 0; h < fabric.hosts.size(); ++h) {
    host_of_[fabric.hosts[h]] = static_cast<int32_t>(h);
  }
  uint32_t ports = 0;
  for (VertexId v = 0; v < n; ++v) {
    first_port_[v] = ports;
    ports += static_cast<uint32_t>(boost::out_degree(v, g));
  }
  first_port_[n] = ports;
  if (torus_) return;

  // Down-sets, tier by tier from the bottom: a switch holds the hosts below its lower-tier
  // neighbours (links that are up only).
  words_ = (fabric.hosts.size() + 63) / 64;
  size_t switches = 0;
  int top = 0;
  for (VertexId v = 0; v < n; ++v) {
    if (g[v].kind == NodeKind::kSwitch) ++switches;
    top = std::max(top, g[v].tier);
  }
  if (static_cast<double>(n) * static_cast<double>(words_) * 8 > kMaxDownSetBytes) {
    throw std::invalid_argument("the flow mode's route sets for " +
                                std::to_string(fabric.hosts.size()) + " GPUs and " +
                                std::to_string(switches) + " switches exceed 2 GB");
  }
  down_.assign(n * words_, 0);
  for (int tier = 1; tier <= top; ++tier) {
    for (VertexId v = 0; v < n; ++v) {
      if (g[v].kind != NodeKind::kSwitch || g[v].tier != tier) continue;
      uint64_t* mine = &down_[v * words_];
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        if (g[*e].failed) continue;
        const VertexId u = boost::target(*e, g);
        if (g[u].tier >= tier) continue;
        if (host_of_[u] >= 0) {
          mine[static_cast<size_t>(host_of_[u]) / 64] |= uint64_t{1} << (host_of_[u] % 64);
        } else {
          const uint64_t* theirs = &down_[u * words_];
          for (size_t w = 0; w < words_; ++w) mine[w] |= theirs[w];
        }
      }
    }
  }
}

void FlowRouter::path(int src, int dst, uint32_t flow, std::vector<uint32_t>& ports,
                      bool ack) const {
  const FabricGraph& g = fabric_.graph;
  const VertexId target = fabric_.hosts.at(static_cast<size_t>(dst));
  VertexId v = fabric_.hosts.at(static_cast<size_t>(src));
  // The QP's flow hash as Network::open_qp makes it (of the data's source and destination).
  const uint64_t qp_src = static_cast<uint64_t>(ack ? dst : src);
  const uint64_t qp_dst = static_cast<uint64_t>(ack ? src : dst);
  const auto qp_hash = static_cast<uint32_t>(net_hash::fmix64(
      (qp_src << 40) ^ (qp_dst << 16) ^ flow ^ (static_cast<uint64_t>(ecmp_salt_) << 32)));
  const uint32_t hash = ack ? qp_hash ^ net_hash::kReverseSalt : qp_hash;
  std::vector<uint16_t> choices;
  for (int hop = 0; v != target; ++hop) {
    if (hop == kMaxHops) {
      throw std::runtime_error("flow route from " +
                               g[fabric_.hosts[static_cast<size_t>(src)]].name + " to " +
                               g[target].name + " does not arrive (a routing bug)");
    }
    choices.clear();
    if (torus_) {
      choices.push_back(dimension_order_next_port(fabric_, v, target));
    } else {
      const bool host = host_of_[v] >= 0;
      const int tier = g[v].tier;
      // A GPU: NVLink inside its server, else a network port whose leaf leads to dst.
      // A switch: down when dst is below it, else up (to a neighbour that has dst below it
      // when there is one).
      const bool down = !host && below(v, dst);
      bool preferred_seen = false;
      uint16_t port = 0;
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e, ++port) {
        if (g[*e].failed) continue;
        const VertexId u = boost::target(*e, g);
        if (host) {
          if (g[v].server >= 0 && g[v].server == g[target].server) {
            if (!g[*e].nvlink) continue;
          } else if (g[*e].nvlink) {
            continue;
          }
          const bool leads = u == target || (host_of_[u] < 0 && below(u, dst));
          if (leads && !preferred_seen) {
            choices.clear();
            preferred_seen = true;
          }
          if (leads || !preferred_seen) choices.push_back(port);
        } else if (down) {
          if (g[u].tier < tier && (u == target || (host_of_[u] < 0 && below(u, dst)))) {
            choices.push_back(port);
          }
        } else if (g[u].tier > tier) {
          const bool leads = below(u, dst);
          if (leads && !preferred_seen) {
            choices.clear();
            preferred_seen = true;
          }
          if (leads || !preferred_seen) choices.push_back(port);
        }
      }
      if (choices.empty()) {
        throw std::runtime_error("the flow mode finds no way on from " + g[v].name + " to " +
                                 g[target].name +
                                 " (failed links? the flow mode does not route around them; "
                                 "the packet mode does)");
      }
    }
    // At the source, a GPU with several NICs toward dst gives flow (channel) c its NIC c mod k,
    // as the packet model's collectives do (Network::open_qp); further on, and for an ACK at
    // its source too (Network::send_control), the ECMP hash (Network::hashed_index).
    const uint16_t chosen =
        choices.size() == 1 ? choices[0]
        : hop == 0 && !ack
            ? choices[flow % choices.size()]
            : choices[net_hash::fmix64(static_cast<uint64_t>(hash) ^ switch_salt_[v]) %
                      choices.size()];
    ports.push_back(first_port_[v] + chosen);
    v = boost::target(*std::next(boost::out_edges(v, g).first, chosen), g);
  }
}

// ---- FlowNetwork -------------------------------------------------------------------------

FlowNetwork::FlowNetwork(Simulator& sim, const Fabric& fabric, const FlowRouter& router,
                         const FlowConfig& cfg)
    : sim_(sim), fabric_(fabric), router_(router), cfg_(cfg) {
  if (cfg.mtu_bytes <= 0) throw std::invalid_argument("FlowNetwork: mtu_bytes must be > 0");
  if (cfg.ack_interval < 1 || cfg.ack_wire_bytes < 0) {
    throw std::invalid_argument("FlowNetwork: ack_interval must be >= 1, ack_wire_bytes >= 0");
  }
  const FabricGraph& g = fabric.graph;
  const size_t links = router.port_count();
  capacity_bps_.resize(links);
  rate_bps_.resize(links);
  delay_ps_.resize(links);
  for (VertexId v = 0; v < boost::num_vertices(g); ++v) {
    uint32_t id = router.first_port(v);
    for (auto [e, end] = boost::out_edges(v, g); e != end; ++e, ++id) {
      capacity_bps_[id] = g[*e].failed ? 0 : g[*e].rate_bps;
      rate_bps_[id] = g[*e].rate_bps;
      delay_ps_[id] = g[*e].delay_ps;
    }
  }
  link_count_.assign(links, 0);
  link_begin_.assign(links, 0);
  link_end_.assign(links, 0);
  link_left_bps_.assign(links, 0);
  link_weight_.assign(links, 0);
  link_data_.assign(links, 0);
}

int64_t FlowNetwork::wire_bytes(int64_t bytes) const {
  if (bytes <= 0) return cfg_.wire.wire_bytes(0);
  const int64_t full = bytes / cfg_.mtu_bytes, rest = bytes % cfg_.mtu_bytes;
  return full * cfg_.wire.wire_bytes(cfg_.mtu_bytes) + (rest > 0 ? cfg_.wire.wire_bytes(rest) : 0);
}

int64_t FlowNetwork::latency_of(const uint32_t* ports, size_t hops,
                                int64_t last_payload_bytes) const {
  const double packet_bits = static_cast<double>(cfg_.wire.wire_bytes(last_payload_bytes)) * 8;
  int64_t latency = 0;
  for (size_t i = 0; i < hops; ++i) {
    const uint32_t id = ports[i];
    latency += delay_ps_[id];
    if (i == 0) continue;  // the first link's serialization is the flow's own sending
    latency += cfg_.switch_latency_ps;
    if (!cfg_.cut_through) {
      latency +=
          static_cast<int64_t>(std::ceil(packet_bits * 1e12 / static_cast<double>(rate_bps_[id])));
    }
  }
  return latency;
}

int64_t FlowNetwork::path_latency_ps(int src, int dst, uint32_t flow,
                                     int64_t last_payload_bytes) const {
  std::vector<uint32_t> ports;
  router_.path(src, dst, flow, ports);
  return latency_of(ports.data(), ports.size(), last_payload_bytes);
}

std::pair<int64_t, int64_t> FlowNetwork::path_latency_rate(int src, int dst, uint32_t flow,
                                                           int64_t last_payload_bytes,
                                                           std::vector<uint32_t>& ports) const {
  ports.clear();
  router_.path(src, dst, flow, ports);
  int64_t rate = 0;
  for (uint32_t id : ports) rate = rate == 0 ? rate_bps_[id] : std::min(rate, rate_bps_[id]);
  return {latency_of(ports.data(), ports.size(), last_payload_bytes), rate};
}

int64_t FlowNetwork::path_rate_bps(int src, int dst, uint32_t flow) const {
  std::vector<uint32_t> ports;
  router_.path(src, dst, flow, ports);
  int64_t rate = 0;
  for (uint32_t id : ports) rate = rate == 0 ? rate_bps_[id] : std::min(rate, rate_bps_[id]);
  return rate;
}

std::vector<FlowNetwork::Hop> FlowNetwork::path_hops(int src, int dst, uint32_t flow) const {
  std::vector<uint32_t> ports;
  router_.path(src, dst, flow, ports);
  std::vector<Hop> hops;
  for (uint32_t id : ports) hops.push_back({rate_bps_[id], delay_ps_[id]});
  return hops;
}

void FlowNetwork::send(int src, int dst, int64_t bytes, uint32_t flow, uint64_t tag,
                       int64_t pace_bps) {
  if (src == dst && (flow & kNicLoopFlowBit)) {
    throw std::invalid_argument(
        "FlowNetwork::send: a NIC loopback (CollNet/SHARP) needs the packet network");
  }
  const int hosts = static_cast<int>(fabric_.hosts.size());
  if (src < 0 || src >= hosts || dst < 0 || dst >= hosts || src == dst || bytes < 0 ||
      pace_bps < 0) {
    throw std::invalid_argument("FlowNetwork::send: bad hosts " + std::to_string(src) + " -> " +
                                std::to_string(dst) + " or size " + std::to_string(bytes));
  }
  advance();
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    index = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[index];
  f.tag = tag;
  f.ended = f.delivered = false;
  const int64_t wire = wire_bytes(bytes);
  f.remaining_bits = static_cast<double>(wire) * 8;
  f.rate_bps = 0;
  f.cap_bps = pace_bps > 0 && bytes > 0
                  ? static_cast<double>(pace_bps) * static_cast<double>(wire) / bytes
                  : 0;
  f.path_begin = static_cast<uint32_t>(paths_.size());
  router_.path(src, dst, flow, paths_);
  f.path_len = static_cast<uint32_t>(paths_.size()) - f.path_begin;
  // The ACKs: one per ack_interval packets and the message's last, back along the reverse path.
  const int64_t packets = bytes == 0 ? 1 : (bytes + cfg_.mtu_bytes - 1) / cfg_.mtu_bytes;
  const int64_t acks = (packets + cfg_.ack_interval - 1) / cfg_.ack_interval;
  f.ack_len = 0;
  f.ack_weight = 0;
  if (cfg_.ack_wire_bytes > 0) {
    router_.path(dst, src, flow, paths_, /*ack=*/true);
    f.ack_len = static_cast<uint32_t>(paths_.size()) - f.path_begin - f.path_len;
    f.ack_weight = static_cast<double>(acks * cfg_.ack_wire_bytes) / static_cast<double>(wire);
    link_bytes_ += static_cast<double>(acks * cfg_.ack_wire_bytes) * f.ack_len;
  }
  live_path_ports_ += f.path_len + f.ack_len;
  const int64_t last = bytes == 0 ? 0 : (bytes - 1) % cfg_.mtu_bytes + 1;
  f.latency_ps = latency_of(paths_.data() + f.path_begin, f.path_len, last);
  link_bytes_ += static_cast<double>(wire) * f.path_len;
  active_.push_back(index);
  ++started_;
  last_start_ps_ = sim_.now().ps();
  window_end_ps_ = -1;  // the rates are computed again at this instant
  max_active_ =
      std::max<int64_t>(max_active_, static_cast<int64_t>(active_.size() - ended_listed_));
  schedule_update();
}

void FlowNetwork::advance() {
  const int64_t now = sim_.now().ps();
  const double dt_s = static_cast<double>(now - last_advance_ps_) * 1e-12;
  if (dt_s > 0) {
    for (uint32_t i : active_) flows_[i].remaining_bits -= flows_[i].rate_bps * dt_s;
  }
  last_advance_ps_ = now;
}

void FlowNetwork::schedule_update() {
  // One update per instant, after every flow that starts at this instant has been added. An
  // update pending for a later flow's end is superseded: the new flow's rate cannot wait.
  if (update_pending_ && update_at_ps_ == sim_.now().ps()) return;
  update_pending_ = true;
  update_at_ps_ = sim_.now().ps();
  sim_.at<&FlowNetwork::on_update>(sim_.now(), lp(), this, ++generation_);
}

void FlowNetwork::allocate() {
  ++reallocations_;
  // The flows of each link some active flow uses, as one array (CSR).
  touched_.clear();
  // A link's weight sums its flows' weights: 1 where it carries the data, ack_weight the ACKs.
  for (uint32_t i : active_) {
    const Flow& f = flows_[i];
    for (uint32_t k = 0; k < f.path_len + f.ack_len; ++k) {
      const uint32_t l = paths_[f.path_begin + k];
      if (link_count_[l]++ == 0) touched_.push_back(l);
    }
  }
  uint32_t offset = 0;
  for (uint32_t l : touched_) {
    link_begin_[l] = link_end_[l] = offset;
    offset += link_count_[l];
    link_left_bps_[l] = static_cast<double>(capacity_bps_[l]);
    link_weight_[l] = 0;
  }
  link_flows_.resize(offset);
  link_is_data_.resize(offset);
  for (uint32_t i : active_) {
    const Flow& f = flows_[i];
    for (uint32_t k = 0; k < f.path_len + f.ack_len; ++k) {
      const uint32_t l = paths_[f.path_begin + k];
      link_is_data_[link_end_[l]] = k < f.path_len;
      link_flows_[link_end_[l]++] = i;
      link_weight_[l] += k < f.path_len ? 1.0 : f.ack_weight;
      if (k < f.path_len) ++link_data_[l];
    }
  }
  // Progressive filling: the link with the smallest fair share (what is left over the weights
  // of its free flows) fixes the rate of the free flows whose data cross it; their bandwidth,
  // times their weight there, leaves every link they use. ACKs take their share of a link but
  // never hold back their own flow (an RDMA sender has no window to wait for them): a flow is
  // fixed by a link its data cross, and a link only ACKs cross is no constraint.
  // The heap holds, for each link, an entry at or below its share: a flow fixed at the
  // smallest share r takes r w of left and w of weight from each of its links, whose shares
  // L / W are all >= r, so none falls ((L - r w) / (W - w) >= L / W when r <= L / W) but by a
  // rounding (1 to 4 ulps), and only then is the link queued again at once (link_queued_: its
  // lowest entry). A link whose entry is found below its share at the top is queued again at
  // its share. So the links are taken in the same order (smallest share, then smallest id) as
  // by queueing every change, with a heap of links (hundreds to thousands) instead of one
  // entry per (flow, link) fixed (16,256 flows of 12 links each for an AllToAll on 128 GPUs).
  if (frozen_.size() < flows_.size()) frozen_.resize(flows_.size());
  for (uint32_t i : active_) frozen_[i] = 0;
  auto& heap = heap_;  // (share, link), a min-heap by std::greater
  heap.clear();
  const auto later = std::greater<>();
  if (link_queued_.size() < link_left_bps_.size()) link_queued_.resize(link_left_bps_.size());
  for (uint32_t l : touched_) {
    if (link_data_[l] > 0) {
      link_queued_[l] = link_left_bps_[l] / link_weight_[l];
      heap.emplace_back(link_queued_[l], l);
    }
  }
  // A paced flow is a link of its own, of its cap, that only it crosses: entry ports + index.
  const uint32_t ports = static_cast<uint32_t>(capacity_bps_.size());
  for (uint32_t i : active_) {
    if (flows_[i].cap_bps > 0) heap.emplace_back(flows_[i].cap_bps, ports + i);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  const auto requeue = [&](uint32_t l, double share) {
    link_queued_[l] = share;
    heap.emplace_back(share, l);
    std::push_heap(heap.begin(), heap.end(), later);
  };
  // Fixes flow i's rate and takes it off its links (`from`: the link doing it).
  auto freeze = [&](uint32_t i, double rate, uint32_t from) {
    frozen_[i] = 1;
    Flow& f = flows_[i];
    f.rate_bps = rate;
    for (uint32_t h = 0; h < f.path_len + f.ack_len; ++h) {
      const uint32_t l2 = paths_[f.path_begin + h];
      const double w = h < f.path_len ? 1.0 : f.ack_weight;
      link_left_bps_[l2] -= rate * w;
      link_weight_[l2] -= w;
      --link_count_[l2];
      if (h < f.path_len) --link_data_[l2];
      if (l2 != from && link_data_[l2] > 0) {
        const double share = std::max(0.0, link_left_bps_[l2]) / link_weight_[l2];
        if (share < link_queued_[l2]) requeue(l2, share);  // fell by a rounding
      }
    }
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const auto [share, l] = heap.back();
    heap.pop_back();
    if (l >= ports) {  // a cap below every share its links still offer
      if (!frozen_[l - ports]) freeze(l - ports, share, ports);
      continue;
    }
    if (link_data_[l] == 0) continue;
    const double current = std::max(0.0, link_left_bps_[l]) / link_weight_[l];
    if (current != share) {                      // stale: its share has changed since it was queued
      if (current > share) requeue(l, current);  // (below: a lower entry is queued already)
      continue;
    }
    for (uint32_t k = link_begin_[l]; k < link_end_[l]; ++k) {
      const uint32_t i = link_flows_[k];
      if (link_is_data_[k] && !frozen_[i]) freeze(i, current, l);
    }
  }
  for (uint32_t l : touched_) link_count_[l] = link_data_[l] = 0;
}

void FlowNetwork::on_update(uint64_t generation) {
  if (generation != generation_) return;  // superseded
  update_pending_ = false;
  const int64_t now = sim_.now().ps();
  if (window_end_ps_ >= 0 && now <= window_end_ps_) {
    // Inside a batch window: the flows due now end at the rates they have; the others keep
    // theirs until the window closes (they stay listed in active_, marked, until then).
    const size_t first = next_end_;
    while (next_end_ < ends_.size() && ends_[next_end_].first <= now) {
      const uint32_t i = ends_[next_end_++].second;
      Flow& f = flows_[i];
      f.ended = true;
      ++ended_listed_;
      sim_.at<&FlowNetwork::on_deliver>(SimTime(now + f.latency_ps), lp(), this, i);
      live_path_ports_ -= f.path_len + f.ack_len;
    }
    if (next_end_ < ends_.size()) {
      batched_ends_ += static_cast<int64_t>(next_end_ - first);  // no computation of their own
      schedule_next(ends_[next_end_].first);
      return;
    }
    // The window's last end: the bandwidth it freed is shared out now.
  }
  advance();
  // Flows with (within a picosecond of sending) nothing left are done: their last bit is out.
  for (size_t k = 0; k < active_.size();) {
    Flow& f = flows_[active_[k]];
    if (f.ended) {  // ended in the last window: its delivery is scheduled already
      f.ended = false;
      --ended_listed_;
      if (f.delivered) free_.push_back(active_[k]);
    } else if (f.remaining_bits <= f.rate_bps * 1e-12) {
      sim_.at<&FlowNetwork::on_deliver>(SimTime(now + f.latency_ps), lp(), this, active_[k]);
      live_path_ports_ -= f.path_len + f.ack_len;
    } else {
      ++k;
      continue;
    }
    active_[k] = active_.back();
    active_.pop_back();
  }
  window_end_ps_ = -1;
  if (active_.empty()) return;
  // Slots are reused: a fixed order keeps the floating-point sums, and so the run, the same.
  std::sort(active_.begin(), active_.end());
  allocate();
  const auto end_of = [&](const Flow& f) {
    const double t = std::ceil(f.remaining_bits / f.rate_bps * 1e12);
    return now + std::max<int64_t>(1, static_cast<int64_t>(t));
  };
  int64_t next = std::numeric_limits<int64_t>::max();
  for (uint32_t i : active_) {
    const Flow& f = flows_[i];
    if (f.rate_bps <= 0) continue;  // a failed link on its path: it never finishes
    next = std::min(next, end_of(f));
  }
  if (next != std::numeric_limits<int64_t>::max() && cfg_.batch_tolerance > 0) {
    // The window: ends up to batch_tolerance × the flows' age (since the last flow started)
    // after the first share this rate computation. Every flow still sending started by then,
    // so none gets its share of the bandwidth freed in the window later than that fraction of
    // its own age.
    window_end_ps_ = next + static_cast<int64_t>(cfg_.batch_tolerance *
                                                 static_cast<double>(next - last_start_ps_));
    ends_.clear();
    next_end_ = 0;
    for (uint32_t i : active_) {
      const Flow& f = flows_[i];
      if (f.rate_bps <= 0) continue;
      const int64_t t = end_of(f);
      if (t <= window_end_ps_) ends_.emplace_back(t, i);
    }
    std::sort(ends_.begin(), ends_.end());
  }
  schedule_next(next);
}

void FlowNetwork::schedule_next(int64_t at_ps) {
  if (at_ps == std::numeric_limits<int64_t>::max()) return;
  update_pending_ = true;
  update_at_ps_ = at_ps;
  sim_.at<&FlowNetwork::on_update>(SimTime(at_ps), lp(), this, ++generation_);
}

void FlowNetwork::on_deliver(uint64_t flow_index) {
  const auto index = static_cast<uint32_t>(flow_index);
  const uint64_t tag = flows_[index].tag;
  flows_[index].path_len = 0;
  flows_[index].ack_len = 0;
  // A flow that ended in a batch window is still listed in active_: its slot is freed when
  // the next rate computation takes it out.
  if (flows_[index].ended) {
    flows_[index].delivered = true;
  } else {
    free_.push_back(index);
  }
  ++completed_;
  // Compact the path store once most of it belongs to flows that have finished sending.
  if (paths_.size() > 4 * live_path_ports_ + (size_t{1} << 20)) {
    std::vector<uint32_t> compact;
    compact.reserve(live_path_ports_);
    for (uint32_t i : active_) {
      Flow& f = flows_[i];
      const auto begin = static_cast<uint32_t>(compact.size());
      compact.insert(compact.end(), paths_.begin() + f.path_begin,
                     paths_.begin() + f.path_begin + f.path_len + f.ack_len);
      f.path_begin = begin;
    }
    paths_ = std::move(compact);
  }
  if (sink_ != nullptr) sink_->on_message_complete(tag);
}

}  // namespace fabricsim
