#include "sim/parallel/window_sync.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fabricsim {

namespace {

/// One remote event on the wire, followed by `size` bytes of payload. Ranks run the same
/// binary on the same architecture, so the header travels as its bytes.
struct WireHeader {
  int64_t time_ps;
  uint64_t key;
  uint32_t lp;
  uint16_t receiver;
  uint16_t size;
};

}  // namespace

WindowSync::WindowSync(Simulator& sim, MPI_Comm comm, std::vector<int> rank_of_lp,
                       int64_t lookahead_ps)
    : sim_(sim), comm_(comm), rank_of_lp_(std::move(rank_of_lp)), lookahead_ps_(lookahead_ps) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &ranks_);
  if (lookahead_ps_ <= 0) {
    throw std::invalid_argument("WindowSync: the lookahead must be positive, got " +
                                std::to_string(lookahead_ps_) +
                                " ps (a zero-delay link between ranks cannot be synchronised)");
  }
  for (size_t lp = 0; lp < rank_of_lp_.size(); ++lp) {
    if (rank_of_lp_[lp] < 0 || rank_of_lp_[lp] >= ranks_) {
      throw std::invalid_argument("WindowSync: LP " + std::to_string(lp) + " on rank " +
                                  std::to_string(rank_of_lp_[lp]) + ", but there are " +
                                  std::to_string(ranks_) + " ranks");
    }
  }
  out_.resize(static_cast<size_t>(ranks_));
}

uint16_t WindowSync::add_receiver(void* obj, Receiver receiver) {
  if (receivers_.size() >= UINT16_MAX) throw std::length_error("WindowSync: too many receivers");
  receivers_.push_back(Rx{obj, receiver});
  return static_cast<uint16_t>(receivers_.size() - 1);
}

void WindowSync::send(uint16_t receiver, SimTime t, LpId lp, const void* data, uint32_t size) {
  send_keyed(receiver, t, sim_.take_key(lp), lp, data, size);
}

void WindowSync::send_keyed(uint16_t receiver, SimTime t, uint64_t key, LpId lp, const void* data,
                            uint32_t size) {
  if (local(lp) || lp.value >= rank_of_lp_.size()) {
    throw std::logic_error("WindowSync::send: LP " + std::to_string(lp.value) +
                           " is not a remote LP");
  }
  if (t.ps() < window_end_ps_) {
    throw std::logic_error("WindowSync::send: an event at " + std::to_string(t.ps()) +
                           " ps for LP " + std::to_string(lp.value) +
                           " falls inside the window ending at " + std::to_string(window_end_ps_) +
                           " ps: closer than the lookahead (" + std::to_string(lookahead_ps_) +
                           " ps)");
  }
  append(receiver, t.ps(), key, lp, data, size);
}

void WindowSync::post_data(uint16_t receiver, LpId lp, const void* data, uint32_t size) {
  if (local(lp) || lp.value >= rank_of_lp_.size()) {
    throw std::logic_error("WindowSync::post_data: LP " + std::to_string(lp.value) +
                           " is not a remote LP");
  }
  append(receiver, -1, 0, lp, data, size);
}

void WindowSync::append(uint16_t receiver, int64_t t_ps, uint64_t key, LpId lp, const void* data,
                        uint32_t size) {
  if (size > UINT16_MAX) throw std::length_error("WindowSync::send: payload over 65535 bytes");
  const WireHeader h{t_ps, key, lp.value, receiver, static_cast<uint16_t>(size)};
  std::vector<std::byte>& buf = out_[static_cast<size_t>(rank_of_lp_[lp.value])];
  const size_t at = buf.size();
  buf.resize(at + sizeof h + size);
  std::memcpy(buf.data() + at, &h, sizeof h);
  if (size > 0) std::memcpy(buf.data() + at + sizeof h, data, size);
  ++remote_sent_;
  pending_ = true;
  if (t_ps >= 0) pending_min_ps_ = std::min(pending_min_ps_, t_ps);
}

void WindowSync::exchange() {
  const auto n = static_cast<size_t>(ranks_);
  std::vector<int> send_counts(n), recv_counts(n), send_displs(n), recv_displs(n);
  std::vector<std::byte> send_buf;
  for (size_t r = 0; r < n; ++r) {
    if (out_[r].size() > static_cast<size_t>(INT32_MAX) - send_buf.size()) {
      throw std::length_error("WindowSync: over 2 GB of events in one window");
    }
    send_displs[r] = static_cast<int>(send_buf.size());
    send_counts[r] = static_cast<int>(out_[r].size());
    send_buf.insert(send_buf.end(), out_[r].begin(), out_[r].end());
    out_[r].clear();
  }
  pending_ = false;
  pending_min_ps_ = INT64_MAX;
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
  size_t total = 0;
  for (size_t r = 0; r < n; ++r) {
    recv_displs[r] = static_cast<int>(total);
    total += static_cast<size_t>(recv_counts[r]);
  }
  std::vector<std::byte> recv_buf(total);
  MPI_Alltoallv(send_buf.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv_buf.data(),
                recv_counts.data(), recv_displs.data(), MPI_BYTE, comm_);
  for (size_t at = 0; at < total;) {
    WireHeader h;
    std::memcpy(&h, recv_buf.data() + at, sizeof h);
    at += sizeof h;
    if (h.receiver >= receivers_.size()) {
      throw std::logic_error("WindowSync: an event for unknown receiver " +
                             std::to_string(h.receiver));
    }
    const Rx& rx = receivers_[h.receiver];
    rx.fn(rx.obj, sim_, h.time_ps, h.key, LpId(h.lp), recv_buf.data() + at, h.size);
    at += h.size;
    ++remote_received_;
  }
}

bool WindowSync::run(SimTime stop_at) {
  for (;;) {
    // One reduction for all three: the earliest event time once this window's remote events
    // are delivered, whether any rank asked to stop, and whether any has something to deliver
    // (flags negated under MPI_MIN). Windows with nothing to deliver skip the exchange.
    int64_t mine[3] = {std::min(sim_.next_event_ps(), pending_min_ps_), stop_requested_ ? -1 : 0,
                       pending_ ? -1 : 0};
    int64_t all[3] = {0, 0, 0};
    MPI_Allreduce(mine, all, 3, MPI_INT64_T, MPI_MIN, comm_);
    if (all[2] < 0) exchange();
    if (all[1] < 0) return true;
    if (all[0] == INT64_MAX || all[0] > stop_at.ps()) return false;
    window_end_ps_ = all[0] >= stop_at.ps() - lookahead_ps_ + 1 && stop_at.ps() < INT64_MAX
                         ? stop_at.ps() + 1
                         : all[0] + std::min(lookahead_ps_, INT64_MAX - all[0]);
    ++windows_;
    const StopReason why = sim_.run(SimTime(window_end_ps_ - 1));
    if (why == StopReason::kWorkloadDone) {
      stop_requested_ = true;
      // The rest of this window still runs, as on every other rank: the window is the unit
      // all ranks agree on.
      sim_.run(SimTime(window_end_ps_ - 1));
    } else if (why != StopReason::kStopTime && why != StopReason::kNoEvents) {
      throw std::runtime_error(std::string("WindowSync: the simulator stopped: ") + to_string(why));
    }
  }
}

}  // namespace fabricsim
