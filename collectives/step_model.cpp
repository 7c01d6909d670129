#include "collectives/step_model.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace fabricsim {

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

void validate(const std::vector<LayerSpec>& layers, const ParallelSpec& spec) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("build_training_step: " + what);
  };
  if (layers.empty()) fail("no layers");
  if (spec.dp < 1) fail("dp must be >= 1, got " + std::to_string(spec.dp));
  if (spec.tp < 1) fail("tp must be >= 1, got " + std::to_string(spec.tp));
  if (spec.pp < 1) fail("pp must be >= 1, got " + std::to_string(spec.pp));
  if (spec.microbatches < 1) {
    fail("microbatches must be >= 1, got " + std::to_string(spec.microbatches));
  }
  if (spec.bucket_cap_bytes < 1) fail("bucket_cap_bytes must be >= 1");
  if (spec.first_bucket_cap_bytes < 1) fail("first_bucket_cap_bytes must be >= 1");
  if (spec.optimizer_ps < 0) fail("optimizer_ps must be >= 0");
  if (spec.gpus_per_server < 1) fail("gpus_per_server must be >= 1");
  if (spec.tp > spec.gpus_per_server || spec.gpus_per_server % spec.tp != 0) {
    fail("a tensor-parallel group must fit inside a server: tp = " + std::to_string(spec.tp) +
         " must divide gpus_per_server = " + std::to_string(spec.gpus_per_server));
  }
  if (static_cast<size_t>(spec.pp) > layers.size()) {
    fail("more pipeline stages (" + std::to_string(spec.pp) + ") than layers (" +
         std::to_string(layers.size()) + ")");
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerSpec& l = layers[i];
    if (l.fwd_ps < 0 || l.bwd_ps < 0 || l.param_bytes < 0 || l.tp_comm_bytes < 0 ||
        l.activation_bytes < 0) {
      fail("layer " + std::to_string(i) + " (" + l.name + ") has a negative time or size");
    }
  }
}

// Builds the DAG in a topological order: every task is added after everything it waits for.
class Builder {
 public:
  Builder(const std::vector<LayerSpec>& layers, const ParallelSpec& spec,
          const GroupCollective& allreduce)
      : layers_(layers), spec_(spec), allreduce_(allreduce) {
    plan_.dp = spec.dp;
    plan_.tp = spec.tp;
    plan_.pp = spec.pp;
    plan_.ranks = spec.dp * spec.tp * spec.pp;
    plan_.compute_ps_per_rank.assign(static_cast<size_t>(plan_.ranks), 0);
    tail_.assign(static_cast<size_t>(plan_.ranks), kNone);
    const int n = static_cast<int>(layers.size());
    for (int s = 0, first = 0; s < spec.pp; ++s) {
      const int count = n / spec.pp + (s < n % spec.pp ? 1 : 0);
      stage_first_.push_back(first);
      stage_end_.push_back(first + count);
      first += count;
    }
  }

  StepPlan build() {
    const int m_count = spec_.microbatches;
    // Forward: microbatch by microbatch, stage by stage, so a stage's input is already there.
    // recv[(d * tp + t)] = what stage s's first forward (backward) of the microbatch waits for.
    std::vector<uint32_t> recv(static_cast<size_t>(spec_.dp * spec_.tp), kNone);
    for (int m = 0; m < m_count; ++m) {
      std::fill(recv.begin(), recv.end(), kNone);
      for (int s = 0; s < spec_.pp; ++s) {
        for (int l = stage_first_[s]; l < stage_end_[s]; ++l) {
          pass(s, l, layers_[l].fwd_ps, l == stage_first_[s] ? &recv : nullptr);
        }
        if (s + 1 < spec_.pp) boundary(s, s + 1, layers_[stage_end_[s] - 1], recv);
      }
    }
    // Backward, GPipe: microbatches in reverse order, stages last to first, layers reversed.
    // The last microbatch's (m = 0) backward task of each layer and rank is kept for the buckets.
    grad_ready_.assign(layers_.size() * static_cast<size_t>(spec_.dp * spec_.tp), kNone);
    for (int m = m_count - 1; m >= 0; --m) {
      std::fill(recv.begin(), recv.end(), kNone);
      for (int s = spec_.pp - 1; s >= 0; --s) {
        for (int l = stage_end_[s] - 1; l >= stage_first_[s]; --l) {
          const bool first = l == stage_end_[s] - 1;
          const std::vector<uint32_t> done = pass(s, l, layers_[l].bwd_ps, first ? &recv : nullptr);
          if (m == 0) {
            for (size_t g = 0; g < done.size(); ++g) {
              grad_ready_[static_cast<size_t>(l) * done.size() + g] = done[g];
            }
          }
        }
        if (s > 0) boundary(s, s - 1, layers_[stage_end_[s - 1] - 1], recv);
      }
    }
    for (int s = 0; s < spec_.pp; ++s) gradient_buckets(s);
    // The optimizer step: after the rank's compute and its last bucket's AllReduce.
    for (int r = 0; r < plan_.ranks; ++r) {
      const uint32_t opt = compute(r, spec_.optimizer_ps);
      if (comm_tail_.size() > static_cast<size_t>(r) && comm_tail_[r] != kNone) {
        plan_.dag.depends(opt, comm_tail_[r]);
      }
    }
    return std::move(plan_);
  }

 private:
  // Appends a compute task to `rank`'s compute stream.
  uint32_t compute(int rank, int64_t duration_ps) {
    const uint32_t id = plan_.dag.add_compute(rank, duration_ps);
    if (tail_[rank] != kNone) plan_.dag.depends(id, tail_[rank]);
    tail_[rank] = id;
    plan_.compute_ps_per_rank[rank] += duration_ps;
    return id;
  }

  // One layer's forward or backward pass of one microbatch on every rank of stage s, then its
  // TP AllReduce per group. `recv` (if given) holds per (d, t) what the pass also waits for.
  // Returns the compute task ids, indexed d * tp + t.
  std::vector<uint32_t> pass(int s, int l, int64_t duration_ps, const std::vector<uint32_t>* recv) {
    const int tp = spec_.tp;
    std::vector<uint32_t> done(static_cast<size_t>(spec_.dp * tp));
    for (int d = 0; d < spec_.dp; ++d) {
      for (int t = 0; t < tp; ++t) {
        const int g = d * tp + t;
        done[g] = compute(plan_.rank_of(s, d, t), duration_ps);
        if (recv != nullptr && (*recv)[g] != kNone) plan_.dag.depends(done[g], (*recv)[g]);
      }
      if (tp > 1 && layers_[l].tp_comm_bytes > 0) {
        std::vector<int> members(static_cast<size_t>(tp));
        std::vector<uint32_t> gates(static_cast<size_t>(tp));
        for (int t = 0; t < tp; ++t) {
          members[t] = plan_.rank_of(s, d, t);
          gates[t] = done[d * tp + t];
        }
        const std::vector<uint32_t> joins = splice(members, layers_[l].tp_comm_bytes, gates, {});
        // The next compute on each rank waits for the AllReduce.
        for (int t = 0; t < tp; ++t) tail_[members[t]] = joins[t];
      }
    }
    return done;
  }

  // The pipeline boundary from stage `from` to `to` for one microbatch: each rank of `from`
  // sends `layer.activation_bytes` to the rank of `to` with its (d, t), after its compute
  // stream so far. Fills recv with what `to`'s next pass waits for.
  void boundary(int from, int to, const LayerSpec& layer, std::vector<uint32_t>& recv) {
    const uint32_t flow = flow_base_of({-1 - from, -1 - to});
    for (int d = 0; d < spec_.dp; ++d) {
      for (int t = 0; t < spec_.tp; ++t) {
        const int src = plan_.rank_of(from, d, t), g = d * spec_.tp + t;
        if (layer.activation_bytes == 0) {
          recv[g] = tail_[src];
          continue;
        }
        const uint32_t id =
            plan_.dag.add(src, plan_.rank_of(to, d, t), layer.activation_bytes, flow);
        plan_.dag.depends(id, tail_[src]);
        recv[g] = id;
      }
    }
  }

  // Stage s's DDP buckets, each an AllReduce per tp index among the stage's dp replicas.
  void gradient_buckets(int s) {
    // PyTorch compute_bucket_assignment_by_size: walk the gradients in ready order (reverse
    // layer order), add each to the open bucket, close the bucket once its size >= the limit;
    // the first bucket's limit is first_bucket_cap_bytes, every later one bucket_cap_bytes.
    // Layers without parameters have no gradient to bucket.
    std::vector<Bucket> stage_buckets;
    Bucket open{s, 0, 0, 0, 0, 0};
    bool has_open = false;
    for (int l = stage_end_[s] - 1; l >= stage_first_[s]; --l) {
      if (layers_[l].param_bytes == 0) continue;
      if (!has_open) open = Bucket{s, l, l, 0, 0, 0};
      has_open = true;
      open.first_layer = l;
      open.bytes += layers_[l].param_bytes;
      const int64_t limit =
          stage_buckets.empty() ? spec_.first_bucket_cap_bytes : spec_.bucket_cap_bytes;
      if (open.bytes >= limit) {
        stage_buckets.push_back(open);
        has_open = false;
      }
    }
    if (has_open) stage_buckets.push_back(open);

    const int tp = spec_.tp, dp = spec_.dp;
    if (comm_tail_.empty()) comm_tail_.assign(static_cast<size_t>(plan_.ranks), kNone);
    for (Bucket& b : stage_buckets) {
      b.first_id = b.end_id = static_cast<uint32_t>(plan_.dag.size());
      if (dp > 1) {
        for (int t = 0; t < tp; ++t) {
          std::vector<int> members(static_cast<size_t>(dp));
          std::vector<uint32_t> gates(static_cast<size_t>(dp)), after(static_cast<size_t>(dp));
          for (int d = 0; d < dp; ++d) {
            members[d] = plan_.rank_of(s, d, t);
            // Every layer of the bucket has finished backward once its lowest layer has (the
            // compute stream runs them in reverse order).
            gates[d] = grad_ready_[static_cast<size_t>(b.first_layer) * (dp * tp) + d * tp + t];
            after[d] = comm_tail_[members[d]];  // the previous bucket's AllReduce
          }
          const std::vector<uint32_t> joins = splice(members, b.bytes, gates, after);
          for (int d = 0; d < dp; ++d) comm_tail_[members[d]] = joins[d];
        }
        b.end_id = static_cast<uint32_t>(plan_.dag.size());
      }
      plan_.buckets.push_back(b);
    }
  }

  // The flow range of the communicator `group` (its member ranks; a pipeline pair is keyed by
  // {−1 − from, −1 − to}): every collective on one group reuses its queue pairs, as NCCL
  // reuses a communicator's connections, so QPs (and their congestion state and ECMP paths)
  // do not grow with the number of collectives.
  uint32_t flow_base_of(const std::vector<int>& group) {
    const auto it = flow_bases_.find(group);
    if (it != flow_bases_.end()) return it->second;
    // Flow ids stay below kNicLoopFlowBit (bit 30), which marks a NIC loopback.
    if (instances_ >= kNicLoopFlowBit / kFlowsPerCollective) {
      throw std::invalid_argument("build_training_step: too many communicators for flow ids");
    }
    const uint32_t base = instances_++ * kFlowsPerCollective;
    flow_bases_.emplace(group, base);
    return base;
  }

  // Splices allreduce(members.size(), bytes) in: local rank i is members[i]. Member i launches
  // it (a 0-duration task) once gates[i] and, if given, after[i] have completed; every
  // transfer waits for its sender's and receiver's launch as well as for its own
  // dependencies. Returns each member's join task.
  std::vector<uint32_t> splice(const std::vector<int>& members, int64_t bytes,
                               const std::vector<uint32_t>& gates,
                               const std::vector<uint32_t>& after) {
    if (!allreduce_) {
      throw std::invalid_argument("build_training_step: a collective is needed but no builder");
    }
    const int n = static_cast<int>(members.size());
    const int g = spec_.gpus_per_server;
    const int per_server = static_cast<int>(std::count_if(
        members.begin(), members.end(), [&](int m) { return m / g == members.front() / g; }));
    const TransferDag sub = allreduce_(n, per_server, bytes);
    const uint32_t flow_base = flow_base_of(members);
    TransferDag& dag = plan_.dag;
    std::vector<uint32_t> launch(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      launch[i] = dag.add_compute(members[i], 0);
      dag.depends(launch[i], gates[i]);
      if (!after.empty() && after[i] != kNone) dag.depends(launch[i], after[i]);
    }
    const uint32_t base = static_cast<uint32_t>(dag.size());
    for (uint32_t i = 0; i < sub.size(); ++i) {
      const Transfer& t = sub.transfer(i);
      if (t.src_rank < 0 || t.src_rank >= n || t.dst_rank < 0 || t.dst_rank >= n) {
        throw std::invalid_argument(
            "build_training_step: the collective builder used a rank "
            "outside its group of " +
            std::to_string(n));
      }
      // A NIC loopback's flow carries kNicLoopFlowBit, which add_like keeps.
      const uint32_t own_flow = t.flow & ~kNicLoopFlowBit;
      if (own_flow >= kFlowsPerCollective) {
        throw std::invalid_argument("build_training_step: the collective builder used flow " +
                                    std::to_string(own_flow) + " (must be < 64)");
      }
      const int src = members[t.src_rank], dst = members[t.dst_rank];
      const uint32_t id = dag.add_like(t, src, dst, t.bytes, flow_base + own_flow);
      dag.depends(id, launch[t.src_rank]);
      if (t.dst_rank != t.src_rank) dag.depends(id, launch[t.dst_rank]);
    }
    dag.copy_dependencies(sub, base);
    std::vector<uint32_t> joins(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      joins[i] = dag.add_compute(members[i], 0);
      bool any = false;
      for (int pass = 0; pass < 2 && !any; ++pass) {  // what it receives, else what it sends
        for (uint32_t k = 0; k < sub.size(); ++k) {
          const Transfer& t = sub.transfer(k);
          if ((pass == 0 ? t.dst_rank : t.src_rank) != i) continue;
          dag.depends(joins[i], base + k);
          any = true;
        }
      }
      if (!any) dag.depends(joins[i], launch[i]);
    }
    return joins;
  }

  const std::vector<LayerSpec>& layers_;
  const ParallelSpec& spec_;
  const GroupCollective& allreduce_;
  StepPlan plan_;
  std::vector<int> stage_first_, stage_end_;  ///< layers [first, end) of each stage
  std::vector<uint32_t> tail_;                ///< last compute-stream task per rank
  std::vector<uint32_t> comm_tail_;           ///< last bucket's join per rank
  std::vector<uint32_t> grad_ready_;  ///< [layer × dp·tp + d·tp + t]: backward of microbatch 0
  uint32_t instances_ = 0;            ///< communicators (groups and pipeline pairs) so far
  std::map<std::vector<int>, uint32_t> flow_bases_;  ///< communicator -> its flow range
};

}  // namespace

StepPlan build_training_step(const std::vector<LayerSpec>& layers, const ParallelSpec& spec,
                             const GroupCollective& allreduce) {
  validate(layers, spec);
  return Builder(layers, spec, allreduce).build();
}

StepResult analyze_step(const StepPlan& plan, const DagReplayer& replayer) {
  const TransferDag& dag = plan.dag;
  if (dag.size() == 0 || !replayer.done() || replayer.completed() != dag.size()) {
    throw std::invalid_argument("analyze_step: the replayer has not run the whole step");
  }
  StepResult res;
  res.step_ps = (replayer.finish_time() - replayer.start_time()).ps();
  // The task that completed last (ties: the highest id).
  uint32_t last = 0;
  for (uint32_t i = 1; i < dag.size(); ++i) {
    if (replayer.completed_time(i) >= replayer.completed_time(last)) last = i;
  }
  res.critical_rank = dag.transfer(last).dst_rank;
  for (int r = 0; r < plan.ranks; ++r) {
    const int64_t c = plan.compute_ps_per_rank[r];
    res.compute_ps = std::max(res.compute_ps, c);
    if (res.step_ps > 0) res.gpu_utilization += static_cast<double>(c) / res.step_ps;
  }
  res.gpu_utilization /= plan.ranks;
  res.exposed_comm_ps = res.step_ps - plan.compute_ps_per_rank[res.critical_rank];

  // Each task's dependencies (the DAG stores only dependents), with whether it waits for the
  // dependency's post (TransferDag::depends_on_post) rather than its completion.
  std::vector<std::vector<std::pair<uint32_t, bool>>> deps(dag.size());
  for (uint32_t i = 0; i < dag.size(); ++i) {
    for (uint32_t next : dag.dependents(i)) deps[next].emplace_back(i, false);
    for (uint32_t next : dag.post_dependents(i)) deps[next].emplace_back(i, true);
  }
  // Reached through a post: the path leaves the task when it is posted, not completed.
  bool via_post = false;
  for (uint32_t cur = last;;) {
    res.critical_path_ids.push_back(cur);
    const int64_t ready = replayer.ready_time(cur).ps(), posted = replayer.posted_time(cur).ps();
    const int64_t completed = replayer.completed_time(cur).ps();
    if (dag.transfer(cur).is_compute()) {
      res.critical_path.compute_ps += posted - ready;
    } else {
      res.critical_path.software_ps += posted - ready;
    }
    if (!via_post) res.critical_path.network_ps += completed - posted;
    if (deps[cur].empty()) break;
    // The dependency that made it ready: the one met last (ties: the highest id).
    auto met_at = [&](const std::pair<uint32_t, bool>& d) {
      return d.second ? replayer.posted_time(d.first) : replayer.completed_time(d.first);
    };
    std::pair<uint32_t, bool> pred = deps[cur].front();
    for (const auto& d : deps[cur]) {
      if (met_at(d) > met_at(pred) || (met_at(d) == met_at(pred) && d.first > pred.first)) {
        pred = d;
      }
    }
    cur = pred.first;
    via_post = pred.second;
  }
  std::reverse(res.critical_path_ids.begin(), res.critical_path_ids.end());
  return res;
}

}  // namespace fabricsim
