// Replaying a TransferDag on a network backend, through a narrow interface.
//
// The collective layer sees only CollectiveTransport (send, completion callback, now), after
// ASTRA-sim's AstraNetworkAPI but typed: the same DAG runs on the packet network today and a
// flow-level backend later.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/transfer_dag.hpp"
#include "sim/core/time.hpp"
#include "sim/net/network.hpp"

namespace fabricsim {

/// The network as the collective layer sees it. Ranks map to hosts one to one for now.
class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;
  /// Starts a transfer; the backend calls DagReplayer::complete(tag) when it has been received.
  virtual void send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag) = 0;
  virtual SimTime now() const = 0;
};

/// Runs one DAG: issues every transfer whose dependencies are met, as they complete.
class DagReplayer {
 public:
  DagReplayer(const TransferDag& dag, CollectiveTransport& transport);
  /// Issues the transfers with no dependencies. Records the start time.
  void start();
  /// Transfer `id` has been fully received. Throws std::logic_error on a repeated completion.
  void complete(uint64_t id);
  bool done() const { return completed_ == dag_.size(); }
  size_t completed() const { return completed_; }
  SimTime start_time() const { return start_; }
  SimTime finish_time() const { return finish_; }

 private:
  const TransferDag& dag_;
  CollectiveTransport& transport_;
  std::vector<uint32_t> waiting_;  ///< remaining dependencies per transfer
  std::vector<uint8_t> finished_;
  size_t completed_ = 0;
  SimTime start_, finish_;
};

/// CollectiveTransport over the packet-level Network; forwards completions to a DagReplayer
/// and stops the simulator when the replayer is done.
class PacketTransport final : public CollectiveTransport, public CompletionSink {
 public:
  PacketTransport(Simulator& sim, Network& net);
  void attach(DagReplayer* replayer) { replayer_ = replayer; }
  void send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag) override;
  SimTime now() const override { return sim_.now(); }
  void on_message_complete(uint64_t tag) override;

 private:
  Simulator& sim_;
  Network& net_;
  DagReplayer* replayer_ = nullptr;
};

}  // namespace fabricsim
