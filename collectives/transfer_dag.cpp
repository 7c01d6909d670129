#include "collectives/transfer_dag.hpp"

#include <stdexcept>
#include <string>

namespace fabricsim {

uint32_t TransferDag::add(int32_t src_rank, int32_t dst_rank, int64_t bytes, uint32_t flow) {
  if (bytes < 0) throw std::invalid_argument("TransferDag::add: negative size");
  if (src_rank == dst_rank) throw std::invalid_argument("TransferDag::add: src == dst");
  transfers_.push_back(
      Transfer{.src_rank = src_rank, .dst_rank = dst_rank, .bytes = bytes, .flow = flow});
  dep_count_.push_back(0);
  index_stale_ = true;
  return static_cast<uint32_t>(transfers_.size() - 1);
}

uint32_t TransferDag::add_compute(int32_t rank, int64_t duration_ps) {
  if (rank < 0) throw std::invalid_argument("TransferDag::add_compute: negative rank");
  if (duration_ps < 0) throw std::invalid_argument("TransferDag::add_compute: negative duration");
  transfers_.push_back(
      Transfer{.src_rank = rank, .dst_rank = rank, .bytes = 0, .flow = 0, .delay_ps = duration_ps});
  dep_count_.push_back(0);
  index_stale_ = true;
  return static_cast<uint32_t>(transfers_.size() - 1);
}

uint32_t TransferDag::add_loopback(int32_t rank, int64_t bytes, uint32_t flow) {
  if (rank < 0) throw std::invalid_argument("TransferDag::add_loopback: negative rank");
  if (bytes < 0) throw std::invalid_argument("TransferDag::add_loopback: negative size");
  transfers_.push_back(
      Transfer{.src_rank = rank, .dst_rank = rank, .bytes = bytes, .flow = flow, .loopback = true});
  dep_count_.push_back(0);
  index_stale_ = true;
  return static_cast<uint32_t>(transfers_.size() - 1);
}

uint32_t TransferDag::add_nic_loopback(int32_t rank, int64_t bytes, uint32_t flow) {
  if ((flow & kNicLoopFlowBit) != 0) {
    throw std::invalid_argument("TransferDag::add_nic_loopback: flow uses the NIC-loop bit");
  }
  return add_loopback(rank, bytes, flow | kNicLoopFlowBit);
}

uint32_t TransferDag::add_like(const Transfer& t, int32_t src_rank, int32_t dst_rank, int64_t bytes,
                               uint32_t flow) {
  // A NIC loopback stays one, whatever the new flow's bits say.
  const uint32_t id = t.is_nic_loopback()
                          ? add_nic_loopback(src_rank, bytes, flow & ~kNicLoopFlowBit)
                      : t.loopback     ? add_loopback(src_rank, bytes, flow)
                      : t.is_compute() ? add_compute(src_rank, t.delay_ps)
                                       : add(src_rank, dst_rank, bytes, flow);
  set_delay(id, t.delay_ps);
  set_pace(id, t.pace_bps);
  return id;
}

void TransferDag::add_edge(std::vector<std::pair<uint32_t, uint32_t>>& edges, uint32_t after,
                           uint32_t before, const char* who) {
  if (!(before < after) || after >= transfers_.size()) {
    throw std::invalid_argument(std::string("TransferDag::") + who +
                                ": dependency must point to an earlier transfer");
  }
  edges.emplace_back(before, after);
  ++dep_count_[after];
  index_stale_ = true;
}

void TransferDag::depends(uint32_t after, uint32_t before) {
  add_edge(edges_, after, before, "depends");
}

void TransferDag::depends_on_post(uint32_t after, uint32_t before) {
  add_edge(post_edges_, after, before, "depends_on_post");
}

void TransferDag::copy_dependencies(const TransferDag& sub, uint32_t base) {
  for (const auto& [before, after] : sub.edges_) depends(base + after, base + before);
  for (const auto& [before, after] : sub.post_edges_) depends_on_post(base + after, base + before);
}

void TransferDag::set_delay(uint32_t id, int64_t delay_ps) {
  if (id >= transfers_.size() || delay_ps < 0) {
    throw std::invalid_argument("TransferDag::set_delay: bad transfer id or negative delay");
  }
  transfers_[id].delay_ps = delay_ps;
}

void TransferDag::set_pace(uint32_t id, int64_t pace_bps) {
  if (id >= transfers_.size() || pace_bps < 0) {
    throw std::invalid_argument("TransferDag::set_pace: bad transfer id or negative rate");
  }
  transfers_[id].pace_bps = pace_bps;
}

namespace {

// Groups `edges` by their `before` (a stable counting sort): the dependents of i are
// index[first[i] .. first[i+1]).
void group_edges(const std::vector<std::pair<uint32_t, uint32_t>>& edges, size_t transfers,
                 std::vector<uint32_t>& first, std::vector<uint32_t>& index) {
  first.assign(transfers + 1, 0);
  for (const auto& [before, after] : edges) ++first[before + 1];
  for (size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  index.resize(edges.size());
  std::vector<uint32_t> next(first.begin(), first.end() - 1);
  for (const auto& [before, after] : edges) index[next[before]++] = after;
}

}  // namespace

void TransferDag::build_index() const {
  group_edges(edges_, transfers_.size(), first_, index_);
  if (!post_edges_.empty()) group_edges(post_edges_, transfers_.size(), post_first_, post_index_);
  index_stale_ = false;
}

int64_t TransferDag::total_bytes() const {
  int64_t sum = 0;
  for (const Transfer& t : transfers_) sum += t.bytes;
  return sum;
}

}  // namespace fabricsim
