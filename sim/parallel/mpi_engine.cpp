// `mpirun -np N fabricsim run SCENARIO`: the packet model partitioned over MPI ranks.
//
// Every rank loads the same scenario and builds the same fabric, network and collective DAGs;
// the fabric is split by partition_fabric (sim/parallel/partition.hpp) and each rank executes
// only the events of the nodes it owns (Simulator::set_partition). An event for a node of another
// rank (a frame's arrival over a cut link, returned credits, a collective dependency met on
// another host) travels at the end of the window through WindowSync, with the key its sender
// took, so every node executes the same events in the same order as in the sequential run.
// Windows are `gap` long (the smallest cable delay, never more than a cut link's), end at the
// lossless check's barrier, and after each one the ranks agree on whether the phase's workload
// is done (counts summed over ranks) and when. At the end the ranks' node state and counters
// are gathered on rank 0, which writes the same files as a sequential run. Design and proof of
// the order: sim/parallel/README.md and sim/core/simulator.hpp.
#include "sim/parallel/mpi_engine.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <tuple>

#include "collectives/replay.hpp"
#include "sim/core/units.hpp"
#include "sim/net/lossless_snapshot.hpp"
#include "sim/net/network.hpp"
#include "sim/parallel/partition.hpp"
#include "sim/parallel/window_sync.hpp"
#include "sim/run/run.hpp"
#include "sim/run/trace_observer.hpp"

namespace fabricsim {

namespace {

/// A generic remote event: which registered handler, and its argument.
struct GenericEvent {
  uint32_t handler;
  uint64_t arg;
};

/// A message's receive copy for the destination host's rank.
struct PostedMessage {
  uint32_t qp;
  Network::RxMessage message;
};

/// What the ranks agree on after each window, in one MPI_Allreduce: `min` element-wise under
/// MIN (maxima and flags negated), `sum` under SUM. Integers only, so the result is exact and
/// the same on every rank whatever order MPI combines them in.
struct WindowAgreement {
  int64_t min[7];  ///< next event, -finish, failure, -interrupted, -deadlocked, check, -pending
  int64_t sum[1];  ///< completed workload items
};

extern "C" void combine_agreements(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const WindowAgreement*>(in);
  auto* b = static_cast<WindowAgreement*>(inout);
  for (int i = 0; i < *len; ++i) {
    for (size_t k = 0; k < std::size(b[i].min); ++k)
      b[i].min[k] = std::min(a[i].min[k], b[i].min[k]);
    for (size_t k = 0; k < std::size(b[i].sum); ++k) b[i].sum[k] += a[i].sum[k];
  }
}

int64_t g_trace_cap = 0;  ///< set_mpi_trace_cap

/// One NetObserver call, with its place in the sequential run's order: by time, the barrier's
/// work (the lossless check, whose watchdog goes port by port as each port's node: lp, then
/// the call's index) before the events at that time, then by event key and the call's index in
/// its event. Each rank executes its events in that order, so its records are sorted already.
struct TraceRecord {
  enum Kind : uint8_t { kPosted, kDelivered, kQueue, kDropped, kWentBack, kPfc, kPause };
  int64_t t_ps = 0;
  uint64_t key = 0;
  uint32_t lp = 0;
  uint32_t index = 0;
  uint8_t in_event = 0;  ///< 0: the barrier's work, 1: an event
  uint8_t kind = 0;
  uint8_t flag = 0;  ///< corrupt, timeout, xoff or paused
  int8_t tc = 0;
  uint32_t port_or_qp = 0;
  int32_t src = 0, dst = 0;
  uint32_t from = 0, to = 0;
  uint64_t seq = 0;
  int64_t value = 0;  ///< bytes, or ingress bytes
  auto order() const { return std::tie(t_ps, in_event, key, lp, index); }
};

/// Records this rank's NetObserver calls, up to `limit`, and counts the rest.
class TraceRecorder final : public NetObserver {
 public:
  TraceRecorder(const Simulator& sim, size_t limit) : sim_(sim), limit_(limit) {}
  void message_posted(uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
                      int64_t t_ps) override {
    message(TraceRecord::kPosted, seq, src, dst, qp, bytes, t_ps);
  }
  void message_delivered(uint64_t seq, int src, int dst, uint32_t qp, int64_t t_ps) override {
    message(TraceRecord::kDelivered, seq, src, dst, qp, 0, t_ps);
  }
  void queue_changed(uint32_t port, int tc, int64_t bytes, int64_t t_ps) override {
    port_event(TraceRecord::kQueue, port, tc, false, bytes, t_ps);
  }
  void packet_dropped(uint32_t port, int tc, bool corrupt, int64_t t_ps) override {
    port_event(TraceRecord::kDropped, port, tc, corrupt, 0, t_ps);
  }
  void pfc_decided(uint32_t port, int tc, bool xoff, int64_t ingress_bytes, int64_t t_ps) override {
    port_event(TraceRecord::kPfc, port, tc, xoff, ingress_bytes, t_ps);
  }
  void pause_changed(uint32_t port, int tc, bool paused, int64_t t_ps) override {
    port_event(TraceRecord::kPause, port, tc, paused, 0, t_ps);
  }
  void went_back(uint32_t qp, int src, uint32_t from, uint32_t to, bool timeout,
                 int64_t t_ps) override {
    TraceRecord r = make(TraceRecord::kWentBack, t_ps);
    r.port_or_qp = qp, r.src = src, r.from = from, r.to = to, r.flag = timeout;
    keep(r);
  }
  const std::vector<TraceRecord>& records() const { return records_; }
  /// Calls recorded or not (past the limit).
  int64_t calls() const { return calls_; }

 private:
  TraceRecord make(TraceRecord::Kind kind, int64_t t_ps) {
    TraceRecord r;
    r.t_ps = t_ps;
    r.in_event = sim_.in_barrier() ? 0 : 1;
    r.key = sim_.current_key();
    r.lp = sim_.in_event() ? sim_.current_lp().value : UINT32_MAX;
    r.index = last_ && std::tie(last_->t_ps, last_->in_event, last_->key, last_->lp) ==
                           std::tie(r.t_ps, r.in_event, r.key, r.lp)
                  ? last_->index + 1
                  : 0;
    r.kind = kind;
    return r;
  }
  void message(TraceRecord::Kind kind, uint64_t seq, int src, int dst, uint32_t qp, int64_t bytes,
               int64_t t_ps) {
    TraceRecord r = make(kind, t_ps);
    r.seq = seq, r.src = src, r.dst = dst, r.port_or_qp = qp, r.value = bytes;
    keep(r);
  }
  void port_event(TraceRecord::Kind kind, uint32_t port, int tc, bool flag, int64_t value,
                  int64_t t_ps) {
    TraceRecord r = make(kind, t_ps);
    r.port_or_qp = port, r.tc = static_cast<int8_t>(tc), r.flag = flag, r.value = value;
    keep(r);
  }
  void keep(const TraceRecord& r) {
    last_ = r;
    ++calls_;
    if (records_.size() < limit_) records_.push_back(r);
  }
  const Simulator& sim_;
  size_t limit_;
  std::vector<TraceRecord> records_;
  std::optional<TraceRecord> last_;
  int64_t calls_ = 0;
};

/// A flow record with the rank whose host sent it (to renumber its message).
struct RankedFlow {
  FlowRecord flow;
  int32_t sender_rank;
};

class MpiEngine final : public PacketEngine {
 public:
  explicit MpiEngine(const Prepared& prepared) : prepared_(prepared) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
  }

  void attach(Simulator& sim, Network& net, PacketTransport& transport) override {
    sim_ = &sim;
    net_ = &net;
    const Fabric& fabric = prepared_.fabric;
    const Partition part = partition_fabric(fabric, ranks_, PartitionMethod::kAuto);
    const size_t nodes = part.part_of.size();
    // One LP per fabric node; a spare one past them belongs to rank 0.
    std::vector<int> rank_of_lp(nodes + 1, 0);
    for (size_t v = 0; v < nodes; ++v) rank_of_lp[v] = part.part_of[v];
    local_.assign(rank_of_lp.size(), 0);
    for (size_t lp = 0; lp < rank_of_lp.size(); ++lp) local_[lp] = rank_of_lp[lp] == rank_;
    owned_nodes_.assign(local_.begin(), local_.begin() + static_cast<ptrdiff_t>(nodes));
    rank_of_node_ = part.part_of;
    // Windows of the smallest cable delay: no longer than any cut link's (the lookahead), and
    // short enough that the window in which a phase's workload finishes ends before the
    // phase's settle time (sim/run/simulate_packets.cpp: finish + the same delay).
    window_ps_ = 0;
    for (const Port& p : net.ports()) {
      if (p.delay_ps > 0 && (window_ps_ == 0 || p.delay_ps < window_ps_)) window_ps_ = p.delay_ps;
    }
    if (part.lookahead_ps) window_ps_ = std::min(window_ps_, *part.lookahead_ps);
    ws_ = std::make_unique<WindowSync>(sim, MPI_COMM_WORLD, rank_of_lp, window_ps_);
    // One element of this type is one WindowAgreement, so MPI never splits it.
    MPI_Type_contiguous(sizeof(WindowAgreement) / sizeof(int64_t), MPI_INT64_T, &agreement_type_);
    MPI_Type_commit(&agreement_type_);
    MPI_Op_create(&combine_agreements, 1, &agreement_op_);
    rx_arrival_ = ws_->add_receiver(this, &MpiEngine::receive_arrival);
    rx_event_ = ws_->add_receiver(this, &MpiEngine::receive_event);
    handlers_.push_back({Network::credit_handler(), &net});
    for (EventFn fn : PacketTransport::cross_lp_handlers()) handlers_.push_back({fn, &transport});
    rx_message_ = ws_->add_receiver(this, &MpiEngine::receive_message);
    sim.set_partition(&local_, &MpiEngine::send_remote, this);
    if (g_trace_cap > 0) {  // every rank records its share; rank 0 writes them at finish()
      recorder_.emplace(sim, static_cast<size_t>(g_trace_cap) + 1);
      net.set_observer(&*recorder_);
    }
    transport.set_stop_when_done(false);
    // The lossless check: each rank's watchdog and snapshot cover its own nodes; every rank
    // runs the detector on the same merged snapshot.
    net.set_owned_nodes(owned_nodes_);
    net.set_snapshot_gather([](LosslessSnapshot mine) {
      const std::vector<std::byte> bytes = mine.encode();
      int ranks = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &ranks);
      const int size = static_cast<int>(bytes.size());
      std::vector<int> sizes(static_cast<size_t>(ranks)), displs(static_cast<size_t>(ranks));
      MPI_Allgather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
      int total = 0;
      for (int r = 0; r < ranks; ++r) {
        displs[static_cast<size_t>(r)] = total;
        total += sizes[static_cast<size_t>(r)];
      }
      std::vector<std::byte> all(static_cast<size_t>(total));
      MPI_Allgatherv(bytes.data(), size, MPI_BYTE, all.data(), sizes.data(), displs.data(),
                     MPI_BYTE, MPI_COMM_WORLD);
      LosslessSnapshot merged;
      for (int r = 0; r < ranks; ++r) {
        merged.merge(LosslessSnapshot::decode(
            std::span<const std::byte>(all.data() + displs[static_cast<size_t>(r)],
                                       static_cast<size_t>(sizes[static_cast<size_t>(r)]))));
      }
      return merged;
    });
    // Every rank opens every QP in the same order (PacketTransport::open_qps), so their ids
    // agree; a message's receive copy goes to its destination host's rank.
    net.set_require_open_qps(true);
    net.set_record_posts(true);  // for merge_flows' renumbering
    net.set_remote_post([this](uint32_t qp, const Network::RxMessage& m) {
      const LpId lp = Network::node_lp(static_cast<uint32_t>(
          prepared_.fabric.hosts[static_cast<size_t>(net_->qp_dst_host(qp))]));
      if (sim_->is_local(lp)) return false;
      const PostedMessage msg{qp, m};
      ws_->post_data(rx_message_, lp, &msg, sizeof msg);
      return true;
    });
    // Once a process: a run with jobs builds an engine for each job's run alone too, on the
    // same split.
    static bool said = false;
    if (rank_ == 0 && !said) {
      said = true;
      std::printf("# mpi        : %d ranks, %s, %d cut links, windows of %s\n", ranks_,
                  part.scheme.c_str(), part.cut_links, format_time(window_ps_).c_str());
      // Out before the run starts, whatever stdout is (a pipe or a file buffers it to the end):
      // the line says every rank has joined and the fabric is split.
      std::fflush(stdout);
    }
  }

  void begin_phase(std::function<std::pair<size_t, int64_t>()> local_progress,
                   size_t total) override {
    progress_ = std::move(local_progress);
    total_ = total;
    phase_reported_ = false;
  }

  StopReason step(int64_t limit_ps, int64_t* finished_at_ps) override {
    for (int window = 0; window < 4096; ++window) {
      const auto [done_local, finish_local] =
          progress_ ? progress_() : std::pair<size_t, int64_t>{};
      const bool deadlocked = net_->deadlock().detected_at_ps >= 0 && !net_->config().pfc_watchdog;
      // One reduction per window (WindowAgreement): what the ranks agree on is computed
      // before this window's remote events are delivered, which changes none of it (they are
      // only pushed; the earliest of them is in pending_min_ps()). Windows after which no rank
      // sends anything, most of them in runs that mostly wait, skip the exchange.
      WindowAgreement mine{
          {std::min(sim_->next_event_ps(), ws_->pending_min_ps()), -finish_local,
           net_->failure_ps() >= 0 ? net_->failure_ps() : INT64_MAX, interrupted_ ? -1 : 0,
           deadlocked ? -1 : 0, net_->next_check_ps(), ws_->pending() ? -1 : 0},
          {static_cast<int64_t>(done_local)}};
      WindowAgreement all{};
      MPI_Allreduce(&mine, &all, 1, agreement_type_, agreement_op_, MPI_COMM_WORLD);
      if (all.min[6] < 0) ws_->exchange();
      const int64_t done_all = all.sum[0];
      if (all.min[3] < 0) return StopReason::kInterrupted;
      if (all.min[4] < 0) return StopReason::kWorkloadDone;  // every rank found the same cycle
      const bool finished = progress_ && done_all >= static_cast<int64_t>(total_);
      if (!phase_reported_ && (finished || all.min[2] != INT64_MAX)) {
        phase_reported_ = true;
        const int64_t finish_all = -all.min[1];
        *finished_at_ps = finished ? std::min(finish_all, all.min[2]) : all.min[2];
        if (all.min[2] != INT64_MAX) adopt_failure(all.min[2]);
        return StopReason::kWorkloadDone;
      }
      // The lossless check runs where the first rank to arm it put it, on every rank (its
      // snapshot gather is collective), before the events at its time.
      const int64_t check = all.min[5];
      if (check != INT64_MAX && check != net_->next_check_ps()) net_->arm_check_at(check);
      const int64_t t = std::min(all.min[0], check);
      if (t == INT64_MAX) return StopReason::kNoEvents;
      if (t > limit_ps) {
        if (limit_ps > sim_->now_ps()) sim_->advance_to(SimTime(limit_ps));
        return StopReason::kStopTime;
      }
      int64_t end = t + std::min(window_ps_, INT64_MAX - t);
      if (limit_ps < INT64_MAX) end = std::min(end, limit_ps + 1);
      if (check > t) end = std::min(end, check);
      ws_->set_window_end(end);
      ws_->count_window();
      StopReason why = sim_->run(SimTime(end - 1));
      // A queue pair failing asks for a stop: the window still runs to its end on every rank.
      while (why == StopReason::kWorkloadDone &&
             !(net_->deadlock().detected_at_ps >= 0 && !net_->config().pfc_watchdog)) {
        why = sim_->run(SimTime(end - 1));
      }
      if (why == StopReason::kInterrupted) interrupted_ = true;
      if (why == StopReason::kEventCap) {
        throw std::logic_error("MpiEngine: an event cap in a partitioned run");
      }
    }
    return StopReason::kEventLimit;
  }

  int64_t sum(int64_t v) override {
    int64_t out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return out;
  }
  int64_t max(int64_t v) override {
    int64_t out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
  void max_in_place(std::vector<int64_t>& v) override {
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT64_T, MPI_MAX,
                  MPI_COMM_WORLD);
  }
  uint64_t events() override {
    return static_cast<uint64_t>(sum(static_cast<int64_t>(sim_->events_executed())));
  }

  void finish() override {
    MPI_Op_free(&agreement_op_);
    MPI_Type_free(&agreement_type_);
    net_->settle_statistics();
    const std::vector<std::byte> blob = net_->export_state(owned_nodes_);
    const std::vector<std::byte> all = gather(blob);
    if (rank_ == 0) {
      for (const auto& part : split(all)) net_->import_state(part);
    }
    merge_flows();
    if (recorder_) merge_trace();
  }

  bool traces(ChromeTrace* trace) override {
    trace_ = trace;
    return recorder_.has_value();
  }

  bool reports() const override { return rank_ == 0; }

 private:
  /// Gathers every rank's bytes on rank 0 (ranks 1.. in order, rank 0's own left out).
  std::vector<std::byte> gather(const std::vector<std::byte>& mine) {
    const int size = rank_ == 0 ? 0 : static_cast<int>(mine.size());
    std::vector<int> sizes(static_cast<size_t>(ranks_));
    MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> displs(static_cast<size_t>(ranks_), 0);
    int total = 0;
    for (int r = 0; r < ranks_; ++r) {
      displs[static_cast<size_t>(r)] = total;
      total += sizes[static_cast<size_t>(r)];
    }
    std::vector<std::byte> all(rank_ == 0 ? static_cast<size_t>(total) : 0);
    MPI_Gatherv(mine.data(), size, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
    gathered_sizes_ = sizes;
    return all;
  }
  std::vector<std::span<const std::byte>> split(const std::vector<std::byte>& all) const {
    std::vector<std::span<const std::byte>> parts;
    size_t at = 0;
    for (int r = 1; r < ranks_; ++r) {
      const auto n = static_cast<size_t>(gathered_sizes_[static_cast<size_t>(r)]);
      parts.emplace_back(all.data() + at, n);
      at += n;
    }
    return parts;
  }

  /// Gathers every rank's flow records and message posts on rank 0 and rebuilds the sequential
  /// run's flows: in delivery order (end time, then the delivering event's key), cut at
  /// max_flow_records, each message numbered by its place in the posting order over all ranks
  /// (time, posting event's key, place within the event), as the sequential run numbers them.
  void merge_flows() {
    const std::vector<Network::PostKey>& posts = net_->posted();
    std::vector<std::byte> mine;
    const auto append = [&mine](const void* p, size_t n) {
      const auto* b = static_cast<const std::byte*>(p);
      mine.insert(mine.end(), b, b + n);
    };
    const uint64_t n_posts = posts.size(), n_flows = net_->flows().size();
    const int64_t unrecorded = net_->flows_unrecorded();
    append(&n_posts, sizeof n_posts);
    append(posts.data(), posts.size() * sizeof(Network::PostKey));
    append(&n_flows, sizeof n_flows);
    append(net_->flows().data(), net_->flows().size() * sizeof(FlowRecord));
    append(&unrecorded, sizeof unrecorded);
    // Rank 0's own share is not sent: prepend it locally below.
    const std::vector<std::byte> all = gather(mine);
    if (rank_ != 0) return;
    struct RankedPost {
      Network::PostKey key;
      int rank;
    };
    std::vector<RankedPost> all_posts;
    std::vector<RankedFlow> all_flows;
    int64_t total_unrecorded = 0;
    std::vector<std::span<const std::byte>> parts{std::span<const std::byte>(mine)};
    for (const auto& p : split(all)) parts.push_back(p);
    for (size_t r = 0; r < parts.size(); ++r) {
      const std::byte* at = parts[r].data();
      uint64_t n = 0;
      std::memcpy(&n, at, sizeof n);
      at += sizeof n;
      for (uint64_t i = 0; i < n; ++i, at += sizeof(Network::PostKey)) {
        RankedPost rp{};
        std::memcpy(&rp.key, at, sizeof rp.key);
        rp.rank = static_cast<int>(r);
        all_posts.push_back(rp);
      }
      std::memcpy(&n, at, sizeof n);
      at += sizeof n;
      for (uint64_t i = 0; i < n; ++i, at += sizeof(FlowRecord)) {
        RankedFlow rf{};
        std::memcpy(&rf.flow, at, sizeof rf.flow);
        rf.sender_rank = rank_of_node_[prepared_.fabric.hosts[static_cast<size_t>(rf.flow.src)]];
        all_flows.push_back(rf);
      }
      int64_t u = 0;
      std::memcpy(&u, at, sizeof u);
      total_unrecorded += u;
    }
    std::stable_sort(all_posts.begin(), all_posts.end(),
                     [](const RankedPost& a, const RankedPost& b) {
                       return std::tie(a.key.t_ps, a.key.event_key, a.key.index_in_event) <
                              std::tie(b.key.t_ps, b.key.event_key, b.key.index_in_event);
                     });
    // Each rank numbered its own posts 0, 1, 2 …: map (rank, its number) to the global one.
    std::vector<std::vector<uint64_t>>& global = global_seq_;
    global.assign(static_cast<size_t>(ranks_), {});
    for (size_t i = 0; i < all_posts.size(); ++i) {
      auto& g = global[static_cast<size_t>(all_posts[i].rank)];
      const uint64_t local = all_posts[i].key.seq;
      if (g.size() <= local) g.resize(local + 1, UINT64_MAX);
      g[local] = i;
    }
    std::stable_sort(all_flows.begin(), all_flows.end(),
                     [](const RankedFlow& a, const RankedFlow& b) {
                       return std::tie(a.flow.end_ps, a.flow.deliver_key) <
                              std::tie(b.flow.end_ps, b.flow.deliver_key);
                     });
    const size_t keep = std::min(all_flows.size(), net_->config().max_flow_records);
    std::vector<FlowRecord> flows;
    flows.reserve(keep);
    for (size_t i = 0; i < keep; ++i) {
      FlowRecord f = all_flows[i].flow;
      const auto& g = global[static_cast<size_t>(all_flows[i].sender_rank)];
      if (f.seq >= g.size() || g[f.seq] == UINT64_MAX) {
        throw std::logic_error("MpiEngine: a delivered message that no rank posted");
      }
      f.seq = g[f.seq];
      flows.push_back(f);
    }
    net_->set_flows(std::move(flows),
                    total_unrecorded + static_cast<int64_t>(all_flows.size() - keep));
  }

  /// Gathers every rank's trace records on rank 0, merges them into the sequential run's order,
  /// renumbers messages as merge_flows() did, and replays the first cap + 1 through a
  /// TraceObserver into rank 0's trace (which then writes exactly what a sequential run's does,
  /// cap and truncation note included).
  void merge_trace() {
    const std::vector<TraceRecord>& kept = recorder_->records();
    // Only the first cap + 1 over all ranks are written or mark the cut: find the earliest time
    // T by which the ranks hold that many (a binary search, one reduction a step), and send only
    // the records up to T, so rank 0 receives about cap + 1 whatever the number of ranks.
    const auto held_by = [&](int64_t t) {
      return sum(static_cast<int64_t>(
          std::upper_bound(kept.begin(), kept.end(), t,
                           [](int64_t v, const TraceRecord& r) { return v < r.t_ps; }) -
          kept.begin()));
    };
    // held_by(lo) < cap + 1 <= held_by(hi), when the ranks hold more than the cap; else hi is
    // the latest record's time and every record is sent.
    int64_t lo = -1, hi = max(kept.empty() ? -1 : kept.back().t_ps);
    if (held_by(hi) > g_trace_cap) {
      while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (held_by(mid) > g_trace_cap ? hi : lo) = mid;
      }
    }
    const auto upto = std::upper_bound(kept.begin(), kept.end(), hi,
                                       [](int64_t v, const TraceRecord& r) { return v < r.t_ps; });
    const std::vector<TraceRecord> mine(kept.begin(), upto);
    std::vector<std::byte> bytes(mine.size() * sizeof(TraceRecord));
    if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
    const std::vector<std::byte> all = gather(bytes);
    const int64_t calls = sum(recorder_->calls());  // the trace's count of dropped events
    if (rank_ != 0 || trace_ == nullptr) return;
    std::vector<TraceRecord> merged(mine);
    for (const auto& part : split(all)) {
      const size_t n = part.size() / sizeof(TraceRecord);
      const size_t at = merged.size();
      merged.resize(at + n);
      if (n > 0) std::memcpy(&merged[at], part.data(), n * sizeof(TraceRecord));
    }
    std::sort(merged.begin(), merged.end(),
              [](const TraceRecord& a, const TraceRecord& b) { return a.order() < b.order(); });
    if (merged.size() > static_cast<size_t>(g_trace_cap) + 1) {
      merged.resize(static_cast<size_t>(g_trace_cap) + 1);
    }
    const int64_t beyond = calls - static_cast<int64_t>(merged.size());  // past the last kept
    // A message's number is its posting rank's (its source host's) local one.
    const auto global_seq = [&](int src, uint64_t seq) {
      const int rank = rank_of_node_[prepared_.fabric.hosts[static_cast<size_t>(src)]];
      const auto& g = global_seq_[static_cast<size_t>(rank)];
      if (seq >= g.size() || g[seq] == UINT64_MAX) {
        throw std::logic_error("MpiEngine: a traced message that no rank posted");
      }
      return g[seq];
    };
    TraceObserver out(*trace_, *net_);
    for (const TraceRecord& r : merged) {
      switch (r.kind) {
        case TraceRecord::kPosted:
          out.message_posted(global_seq(r.src, r.seq), r.src, r.dst, r.port_or_qp, r.value, r.t_ps);
          break;
        case TraceRecord::kDelivered:
          out.message_delivered(global_seq(r.src, r.seq), r.src, r.dst, r.port_or_qp, r.t_ps);
          break;
        case TraceRecord::kQueue:
          out.queue_changed(r.port_or_qp, r.tc, r.value, r.t_ps);
          break;
        case TraceRecord::kDropped:
          out.packet_dropped(r.port_or_qp, r.tc, r.flag != 0, r.t_ps);
          break;
        case TraceRecord::kWentBack:
          out.went_back(r.port_or_qp, r.src, r.from, r.to, r.flag != 0, r.t_ps);
          break;
        case TraceRecord::kPfc:
          out.pfc_decided(r.port_or_qp, r.tc, r.flag != 0, r.value, r.t_ps);
          break;
        case TraceRecord::kPause:
          out.pause_changed(r.port_or_qp, r.tc, r.flag != 0, r.t_ps);
          break;
        default:
          throw std::logic_error("MpiEngine: a trace record of unknown kind");
      }
    }
    if (!merged.empty()) trace_->skip(merged.back().t_ps, beyond);
  }

  /// The failure found first (at `t_ps`, over all ranks; at the same picosecond, in the event
  /// of the smallest key, as the sequential run meets them) becomes every rank's, so each
  /// reports it.
  void adopt_failure(int64_t t_ps) {
    const bool at_t = net_->failure_ps() == t_ps;
    uint64_t key = at_t ? net_->failure_key() : UINT64_MAX, key_all = 0;
    MPI_Allreduce(&key, &key_all, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    int root = at_t && net_->failure_key() == key_all ? rank_ : ranks_;
    int root_all = 0;
    MPI_Allreduce(&root, &root_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    std::string text = rank_ == root_all ? net_->failure() : std::string();
    int length = static_cast<int>(text.size());
    MPI_Bcast(&length, 1, MPI_INT, root_all, MPI_COMM_WORLD);
    text.resize(static_cast<size_t>(length));
    MPI_Bcast(text.data(), length, MPI_CHAR, root_all, MPI_COMM_WORLD);
    net_->set_failure(text, t_ps);
  }

  static void send_remote(void* ctx, const Simulator::RemotePush& p) {
    auto* self = static_cast<MpiEngine*>(ctx);
    if (p.fn == Network::arrival_handler()) {
      std::vector<std::byte>& frame = self->frame_buffer_;
      frame.resize(self->net_->departed_bytes());
      self->net_->take_departed(p.arg, frame.data());
      self->ws_->send_keyed(self->rx_arrival_, SimTime(p.time_ps), p.key, p.lp, frame.data(),
                            static_cast<uint32_t>(frame.size()));
      return;
    }
    for (uint32_t i = 0; i < self->handlers_.size(); ++i) {
      if (self->handlers_[i].fn == p.fn && self->handlers_[i].obj == p.obj) {
        const GenericEvent e{i, p.arg};
        self->ws_->send_keyed(self->rx_event_, SimTime(p.time_ps), p.key, p.lp, &e, sizeof e);
        return;
      }
    }
    throw std::logic_error("a partitioned run: an event for LP " + std::to_string(p.lp.value) +
                           " on another rank, of a handler that cannot cross ranks");
  }
  static void receive_arrival(void* ctx, Simulator&, int64_t time_ps, uint64_t key, LpId lp,
                              const std::byte* data, uint32_t size) {
    auto* self = static_cast<MpiEngine*>(ctx);
    if (size != self->net_->departed_bytes()) {
      throw std::logic_error("MpiEngine: a frame of the wrong size");
    }
    self->net_->inject_arrival(SimTime(time_ps), key, lp, data);
  }
  static void receive_message(void* ctx, Simulator&, int64_t, uint64_t, LpId, const std::byte* data,
                              uint32_t size) {
    auto* self = static_cast<MpiEngine*>(ctx);
    PostedMessage msg;
    if (size != sizeof msg) throw std::logic_error("MpiEngine: a message copy of the wrong size");
    std::memcpy(&msg, data, sizeof msg);
    self->net_->accept_rx_message(msg.qp, msg.message);
  }
  static void receive_event(void* ctx, Simulator& sim, int64_t time_ps, uint64_t key, LpId lp,
                            const std::byte* data, uint32_t size) {
    auto* self = static_cast<MpiEngine*>(ctx);
    GenericEvent e;
    if (size != sizeof e) throw std::logic_error("MpiEngine: an event of the wrong size");
    std::memcpy(&e, data, sizeof e);
    if (e.handler >= self->handlers_.size()) throw std::logic_error("MpiEngine: bad handler");
    const Handler& h = self->handlers_[e.handler];
    sim.at_keyed_raw(SimTime(time_ps), key, lp, h.fn, h.obj, e.arg);
  }

  struct Handler {
    EventFn fn;
    void* obj;
  };
  const Prepared& prepared_;
  int rank_ = 0, ranks_ = 1;
  Simulator* sim_ = nullptr;
  Network* net_ = nullptr;
  std::vector<std::byte> frame_buffer_;  ///< a departing frame (Network::departed_bytes())
  std::unique_ptr<WindowSync> ws_;
  std::vector<uint8_t> local_;        ///< per LP: this rank's
  std::vector<uint8_t> owned_nodes_;  ///< per fabric node: this rank's
  std::vector<Handler> handlers_;     ///< generic remote events, the same list on every rank
  uint16_t rx_arrival_ = 0, rx_event_ = 0, rx_message_ = 0;
  std::vector<int> rank_of_node_;
  int64_t window_ps_ = 0;
  std::function<std::pair<size_t, int64_t>()> progress_;
  size_t total_ = 0;
  bool phase_reported_ = false;
  bool interrupted_ = false;
  std::optional<TraceRecorder> recorder_;          ///< with a trace cap (set_mpi_trace_cap)
  ChromeTrace* trace_ = nullptr;                   ///< rank 0's trace.json, written at finish()
  std::vector<std::vector<uint64_t>> global_seq_;  ///< per rank: local message number -> run's
  MPI_Datatype agreement_type_ = MPI_DATATYPE_NULL;
  MPI_Op agreement_op_ = MPI_OP_NULL;
  std::vector<int> gathered_sizes_;
};

}  // namespace

std::unique_ptr<PacketEngine> make_mpi_engine(const Prepared& prepared) {
  return std::make_unique<MpiEngine>(prepared);
}

void set_mpi_trace_cap(int64_t max_events) {
  g_trace_cap = max_events;
}

}  // namespace fabricsim
