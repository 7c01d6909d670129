#include "collectives/replay.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fabricsim {

DagReplayer::DagReplayer(const TransferDag& dag, CollectiveTransport& transport)
    : dag_(dag),
      transport_(transport),
      waiting_(dag.size()),
      finished_(dag.size(), 0),
      ready_at_(dag.size(), SimTime(-1)),
      posted_at_(dag.size(), SimTime(-1)),
      completed_at_(dag.size(), SimTime(-1)) {
  for (uint32_t i = 0; i < dag.size(); ++i) waiting_[i] = dag.dependency_count(i);
  cross_.assign(dag.size(), 0);
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    const uint32_t done_lp = transport.owner_lp(t.is_compute() ? t.src_rank : t.dst_rank);
    for (uint32_t next : dag.dependents(i)) {
      if (transport.owner_lp(dag.transfer(next).src_rank) != done_lp) cross_[next] = 1;
    }
    // A task is posted on its own (its sender's) LP.
    const uint32_t post_lp = transport.owner_lp(t.src_rank);
    for (uint32_t next : dag.post_dependents(i)) {
      if (transport.owner_lp(dag.transfer(next).src_rank) != post_lp) cross_[next] = 1;
    }
  }
}

void DagReplayer::start() {
  start_ = finish_ = transport_.now();
  // The roots by their dependency count, not waiting_: a 0-duration root may complete while
  // this runs and bring a later task's waiting_ to 0, which then is queued by complete().
  for (uint32_t i = 0; i < dag_.size(); ++i) {
    const int rank = dag_.transfer(i).src_rank;
    if (dag_.dependency_count(i) != 0 || !transport_.is_local(rank)) continue;
    if (transport_.defers_roots()) {
      transport_.start_root(i, rank);  // released in an event of its own LP, now
    } else {
      ready_queue_.push_back(i);
    }
  }
  drain();
}

void DagReplayer::release_root(uint64_t id) {
  if (id >= dag_.size() || dag_.dependency_count(static_cast<uint32_t>(id)) != 0) {
    throw std::logic_error("DagReplayer: release_root of a task that is not a root");
  }
  ready_queue_.push_back(static_cast<uint32_t>(id));
  drain();
}

void DagReplayer::drain() {
  if (draining_) return;  // a release further up the stack is already emptying the queue
  draining_ = true;
  try {
    while (ready_head_ < ready_queue_.size()) release(ready_queue_[ready_head_++]);
  } catch (...) {
    draining_ = false;
    ready_queue_.clear();
    ready_head_ = 0;
    throw;
  }
  ready_queue_.clear();
  ready_head_ = 0;
  draining_ = false;
}

void DagReplayer::release(uint32_t id) {
  ready_at_[id] = transport_.now();
  const Transfer& t = dag_.transfer(id);
  if (t.delay_ps > 0) {
    transport_.post_after(t.delay_ps, id, t.src_rank);
  } else {
    post(id);
  }
}

void DagReplayer::post(uint64_t id) {
  if (id >= dag_.size()) throw std::logic_error("DagReplayer: post of an unknown transfer");
  posted_at_[id] = transport_.now();
  const Transfer& t = dag_.transfer(static_cast<uint32_t>(id));
  if (t.is_compute()) {
    complete(id);
  } else {
    transport_.send(t.src_rank, t.dst_rank, t.bytes, t.flow, id, t.pace_bps);
  }
  const auto waiting_for_post = dag_.post_dependents(static_cast<uint32_t>(id));
  if (waiting_for_post.empty()) return;
  for (uint32_t next : waiting_for_post) met(next);
  drain();
}

void DagReplayer::met(uint32_t next) {
  if (cross_[next]) {
    const Transfer& t = dag_.transfer(next);
    transport_.dependency_after(t.delay_ps, next, t.src_rank);
  } else if (--waiting_[next] == 0) {
    ready_queue_.push_back(next);
  }
}

void DagReplayer::complete(uint64_t id) {
  if (id >= dag_.size() || finished_[id]) throw std::logic_error("DagReplayer: bad completion");
  finished_[id] = 1;
  ++completed_;
  finish_ = completed_at_[id] = transport_.now();
  for (uint32_t next : dag_.dependents(static_cast<uint32_t>(id))) met(next);
  drain();
}

void DagReplayer::dependency_met(uint64_t id) {
  if (id >= dag_.size() || waiting_[id] == 0 || !cross_[id]) {
    throw std::logic_error("DagReplayer: a dependency met for a task not waiting on one");
  }
  if (--waiting_[id] > 0) return;
  const Transfer& t = dag_.transfer(static_cast<uint32_t>(id));
  ready_at_[id] = transport_.now() - SimTime(t.delay_ps);  // its delay has already passed
  post(id);  // a compute task completes here, releasing its own dependents
}

std::vector<int64_t> DagReplayer::task_times() const {
  std::vector<int64_t> out;
  out.reserve(3 * dag_.size());
  for (const auto* v : {&ready_at_, &posted_at_, &completed_at_}) {
    for (const SimTime t : *v) out.push_back(t.ps());
  }
  return out;
}

void DagReplayer::set_task_times(const std::vector<int64_t>& times) {
  const size_t n = dag_.size();
  if (times.size() != 3 * n) throw std::invalid_argument("DagReplayer: task times of another DAG");
  completed_ = 0;
  for (size_t i = 0; i < n; ++i) {
    ready_at_[i] = SimTime(times[i]);
    posted_at_[i] = SimTime(times[n + i]);
    completed_at_[i] = SimTime(times[2 * n + i]);
    finished_[i] = times[2 * n + i] >= 0 ? 1 : 0;
    if (finished_[i]) {
      ++completed_;
      if (completed_at_[i] > finish_) finish_ = completed_at_[i];
    }
  }
}

PacketTransport::PacketTransport(Simulator& sim, Network& net) : sim_(sim), net_(net) {
  net_.set_sink(this);
}

void PacketTransport::send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag,
                           int64_t pace_bps) {
  // A transfer of the DAG whose QPs open_qps opened: its QP without the lookup by key.
  if (tag < qp_of_.size() && qp_of_[tag] != kNoQp) {
    net_.send_on(qp_of_[tag], bytes, tag, false, pace_bps);
    return;
  }
  net_.send(host(src_rank), host(dst_rank), bytes, flow, tag, -1, false, pace_bps);
}

void PacketTransport::open_qps(const TransferDag& dag) {
  qp_of_.assign(dag.size(), kNoQp);
  for (uint32_t i = 0; i < dag.size(); ++i) {
    const Transfer& t = dag.transfer(i);
    // A channel's connection takes its GPU's NICs in turn, as NCCL assigns them (the flow is
    // the channel), not the ECMP hash: with several NICs a GPU, channels do not pile up on one.
    if (!t.is_compute()) {
      qp_of_[i] =
          net_.open_qp(host(t.src_rank), host(t.dst_rank), t.flow, -1, static_cast<int>(t.flow));
    }
  }
}

void PacketTransport::post_after(int64_t delay_ps, uint64_t tag, int src_rank) {
  const LpId lp = Network::node_lp(
      static_cast<uint32_t>(net_.fabric().hosts.at(static_cast<size_t>(host(src_rank)))));
  sim_.at<&PacketTransport::on_post_timer>(sim_.now() + SimTime(delay_ps), lp, this, tag);
}

uint32_t PacketTransport::owner_lp(int rank) const {
  return Network::node_lp(
             static_cast<uint32_t>(net_.fabric().hosts.at(static_cast<size_t>(host(rank)))))
      .value;
}

void PacketTransport::dependency_after(int64_t delay_ps, uint64_t tag, int src_rank) {
  sim_.at<&PacketTransport::on_dependency>(sim_.now() + SimTime(delay_ps), LpId(owner_lp(src_rank)),
                                           this, tag);
}

void PacketTransport::start_root(uint64_t tag, int src_rank) {
  sim_.at<&PacketTransport::on_root>(sim_.now(), LpId(owner_lp(src_rank)), this, tag);
}

void PacketTransport::on_root(uint64_t tag) {
  if (replayer_ == nullptr) return;
  replayer_->release_root(tag);
  if (stop_when_done_ && replayer_->done()) sim_.request_stop();
}

std::vector<EventFn> PacketTransport::cross_lp_handlers() {
  return {Simulator::handler<&PacketTransport::on_dependency, PacketTransport>()};
}

void PacketTransport::on_post_timer(uint64_t tag) {
  if (replayer_ == nullptr) return;
  replayer_->post(tag);  // a compute task completes here, and may have been the last one
  if (stop_when_done_ && replayer_->done()) sim_.request_stop();
}

void PacketTransport::on_dependency(uint64_t tag) {
  if (replayer_ == nullptr) return;
  replayer_->dependency_met(tag);
  if (stop_when_done_ && replayer_->done()) sim_.request_stop();
}

void PacketTransport::on_message_complete(uint64_t tag) {
  if (tag & TrafficPlayer::kTagBit) {
    if (traffic_ == nullptr) return;
    traffic_->complete(tag & ~TrafficPlayer::kTagBit);
    if (stop_when_done_ && traffic_->done() && replayer_ == nullptr) sim_.request_stop();
    return;
  }
  if (replayer_ == nullptr) return;
  replayer_->complete(tag);
  if (stop_when_done_ && replayer_->done()) sim_.request_stop();
}

TrafficPlayer::TrafficPlayer(Simulator& sim, Network& net, std::vector<Flow> flows)
    : sim_(sim), net_(net), flows_(std::move(flows)), finished_(flows_.size(), 0) {}

void TrafficPlayer::start() {
  // Queue pairs in the flows' order (see PacketTransport::open_qps).
  for (const Flow& f : flows_) net_.open_qp(f.src, f.dst, f.flow | kQpBit, f.tc);
  for (size_t i = 0; i < flows_.size(); ++i) {
    // The post works on the source host's NIC: an event of the source's LP.
    const LpId lp = Network::node_lp(
        static_cast<uint32_t>(net_.fabric().hosts.at(static_cast<size_t>(flows_[i].src))));
    if (!sim_.is_local(lp)) continue;  // a partitioned run: that host's rank posts it
    sim_.at<&TrafficPlayer::on_post>(SimTime(std::max(flows_[i].start_ps, sim_.now().ps())), lp,
                                     this, i);
  }
}

void TrafficPlayer::on_post(uint64_t index) {
  const Flow& f = flows_[index];
  net_.send(f.src, f.dst, f.bytes, f.flow | kQpBit, kTagBit | index, f.tc);
}

void TrafficPlayer::complete(uint64_t index) {
  if (index >= flows_.size() || finished_[index]) {
    throw std::logic_error("TrafficPlayer: flow " + std::to_string(index) +
                           " completed twice or does not exist");
  }
  finished_[index] = 1;
  ++completed_;
  finish_ps_ = sim_.now().ps();
}

}  // namespace fabricsim
