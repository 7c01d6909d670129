// Network: what a partitioned run needs beyond the sequential model (sim/parallel/README.md):
// frames handed between ranks, and the per-node state gathered on rank 0 for the report.
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "sim/net/network.hpp"

namespace fabricsim {

namespace {

/// Appends trivially copyable values to a byte buffer, and reads them back in order.
class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &v, sizeof(T));
  }
  template <class T>
  void put_span(const T* p, size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(n);
    const size_t at = out_.size();
    out_.resize(at + n * sizeof(T));
    if (n > 0) std::memcpy(out_.data() + at, p, n * sizeof(T));
  }

 private:
  std::vector<std::byte>& out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    T v;
    need(sizeof(T));
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  template <class T>
  void get_span(T* p, size_t expected) {
    const auto n = get<uint64_t>();
    if (n != expected) throw std::runtime_error("Network::import_state: a blob of another fabric");
    need(n * sizeof(T));
    if (n > 0) std::memcpy(p, in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<uint64_t>();
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return v;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(size_t bytes) const {
    if (in_.size() - at_ < bytes) throw std::runtime_error("Network::import_state: short blob");
  }
  std::span<const std::byte> in_;
  size_t at_ = 0;
};

constexpr uint64_t kStateMagic = 0x6661627374617465;  // "fabstate"

}  // namespace

EventFn Network::arrival_handler() {
  return Simulator::handler<&Network::on_arrival, Network>();
}

EventFn Network::credit_handler() {
  return Simulator::handler<&Network::on_credit, Network>();
}

void Network::take_departed(uint64_t arg, std::byte* out) {
  Packet* p = reinterpret_cast<Packet*>(arg);
  Packet copy = *p;
  copy.next = nullptr;
  std::memcpy(out, &copy, sizeof copy);
  if (const size_t side = pool_.side_bytes(); side > 0) {
    std::memcpy(out + sizeof copy, pool_.side_record(p), side);
  }
  pool_.put(p);
}

void Network::inject_arrival(SimTime t, uint64_t key, LpId lp, const std::byte* frame_bytes) {
  Packet frame;
  std::memcpy(&frame, frame_bytes, sizeof frame);
  Packet* p = pool_.get();
  const uint8_t in_use = p->flags & Packet::kInUse;
  *p = frame;
  p->next = nullptr;
  p->flags = static_cast<uint8_t>(frame.flags | in_use);
  if (const size_t side = pool_.side_bytes(); side > 0) {
    std::memcpy(pool_.side_record(p), frame_bytes + sizeof frame, side);
  }
  sim_.at_keyed<&Network::on_arrival>(t, key, lp, this, reinterpret_cast<uint64_t>(p));
}

std::span<int64_t Network::*const> Network::exchanged_counters() {
  static constexpr int64_t Network::*kCounters[] = {&Network::delivered_packets_,
                                                    &Network::dropped_packets_,
                                                    &Network::sent_bytes_,
                                                    &Network::delivered_bytes_,
                                                    &Network::dropped_bytes_,
                                                    &Network::retransmits_,
                                                    &Network::nak_tx_,
                                                    &Network::rto_timeouts_,
                                                    &Network::ce_received_,
                                                    &Network::cnp_tx_,
                                                    &Network::cnp_rx_,
                                                    &Network::no_route_drops_};
  return kCounters;
}

std::vector<std::byte> Network::export_state(const std::vector<uint8_t>& owned_nodes) const {
  std::vector<std::byte> out;
  Writer w(out);
  w.put(kStateMagic);
  w.put<uint64_t>(ports_.size());
  w.put<uint64_t>(is_switch_.size());
  std::vector<int64_t> scalars;
  for (int64_t Network::*const m : exchanged_counters()) scalars.push_back(this->*m);
  scalars.insert(scalars.end(), {static_cast<int64_t>(in_flight_),
                                 byte_balance().in_flight_bytes - imported_in_flight_bytes_,
                                 static_cast<int64_t>(pool_.capacity())});
  w.put_span(scalars.data(), scalars.size());
  w.put_span(registered_.data(), registered_.size());
  for (const QuantileHistogram& h : fct_) {  // this rank's deliveries
    w.put(h.max());
    w.put_span(h.counts().data(), h.counts().size());
  }
  std::vector<std::byte> pfc_state;
  for (uint32_t v = 0; v < is_switch_.size(); ++v) {
    if (v >= owned_nodes.size() || !owned_nodes[v]) continue;
    w.put<uint32_t>(v);
    const uint32_t first = first_port_[v], last = first_port_[v + 1];
    w.put_span(ports_.data() + first, last - first);
    w.put_span(arrivals_.data() + first, last - first);
    w.put_span(port_occ_.data() + first, last - first);
    w.put_span(port_hist_.data() + first, last - first);
    w.put_span(queues_.data() + size_t{first} * kTrafficClasses,
               size_t{last - first} * kTrafficClasses);
    pfc_state.clear();
    pfc_.export_node(v, pfc_state);
    w.put_span(pfc_state.data(), pfc_state.size());
    if (credit_fc_.on()) {
      w.put_span(credit_fc_.ports_data(first), size_t{last - first} * kTrafficClasses);
    }
    w.put(mmus_[v]);
  }
  w.put<uint32_t>(UINT32_MAX);
  return out;
}

void Network::import_state(std::span<const std::byte> blob) {
  Reader r(blob);
  if (r.get<uint64_t>() != kStateMagic || r.get<uint64_t>() != ports_.size() ||
      r.get<uint64_t>() != is_switch_.size()) {
    throw std::runtime_error("Network::import_state: a blob of another fabric");
  }
  const auto scalars = r.get_vector<int64_t>();
  const auto counters = exchanged_counters();
  const size_t n = counters.size();
  if (scalars.size() != n + 3) throw std::runtime_error("Network::import_state: bad counters");
  for (size_t i = 0; i < n; ++i) this->*counters[i] += scalars[i];
  in_flight_ += static_cast<size_t>(scalars[n]);  // senders count up, receivers down
  imported_in_flight_bytes_ += scalars[n + 1];
  imported_pool_capacity_ += static_cast<size_t>(scalars[n + 2]);
  const auto registered = r.get_vector<int64_t>();
  if (registered.size() != registered_.size()) {
    throw std::runtime_error("Network::import_state: bad registered counters");
  }
  merge_registered(registered);
  for (QuantileHistogram& h : fct_) {
    const auto max = r.get<int64_t>();
    h.merge(QuantileHistogram::from_parts(r.get_vector<uint64_t>(), max));
  }
  for (;;) {
    const auto v = r.get<uint32_t>();
    if (v == UINT32_MAX) break;
    if (v >= is_switch_.size()) throw std::runtime_error("Network::import_state: bad node");
    const uint32_t first = first_port_[v], last = first_port_[v + 1];
    r.get_span(ports_.data() + first, last - first);
    for (uint32_t pid = first; pid < last; ++pid) {  // the packets stayed on their rank
      ports_[pid].head.fill(nullptr);
      ports_[pid].tail.fill(nullptr);
    }
    r.get_span(arrivals_.data() + first, last - first);
    r.get_span(port_occ_.data() + first, last - first);
    r.get_span(port_hist_.data() + first, last - first);
    r.get_span(queues_.data() + size_t{first} * kTrafficClasses,
               size_t{last - first} * kTrafficClasses);
    pfc_.import_node(v, r.get_vector<std::byte>());
    if (credit_fc_.on()) {
      r.get_span(credit_fc_.ports_data(first), size_t{last - first} * kTrafficClasses);
    }
    mmus_[v] = r.get<BufferMmu>();
  }
  if (!r.done()) throw std::runtime_error("Network::import_state: trailing bytes");
}

}  // namespace fabricsim
