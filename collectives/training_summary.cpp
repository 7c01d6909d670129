#include "collectives/training_summary.hpp"

#include <algorithm>
#include <cmath>

namespace fabricsim {

TrainingSummary training_summary(const CollectiveInputs& in, const Fabric& fabric,
                                 const StepPlan& plan, const DagReplayer& replayer,
                                 const Network& net) {
  const StepResult r = analyze_step(plan, replayer);
  TrainingSummary t;
  t.dp = plan.dp;
  t.tp = plan.tp;
  t.pp = plan.pp;
  t.microbatches = in.training.microbatches;
  t.ranks = plan.ranks;
  for (const TrainingLayer& l : in.training.layers) t.layers += l.count;
  t.buckets = static_cast<int>(plan.buckets.size());
  t.step_ps = r.step_ps;
  t.compute_ps = r.compute_ps;
  t.exposed_comm_ps = r.exposed_comm_ps;
  t.gpu_utilization = r.gpu_utilization;
  t.critical_rank = r.critical_rank;
  t.cp_compute_ps = r.critical_path.compute_ps;
  t.cp_software_ps = r.critical_path.software_ps;
  const int g = std::max(1, fabric.gpus_per_server);
  for (const uint32_t id : r.critical_path_ids) {
    const Transfer& x = plan.dag.transfer(id);
    if (x.is_compute()) continue;
    // A NIC loopback (CollNet) stays on its host but goes through its NIC.
    const bool nvlink =
        x.src_rank / g == x.dst_rank / g && !x.is_nic_loopback() && in.nvlink_rate_bps > 0;
    const int64_t rate = nvlink ? in.nvlink_rate_bps : in.host_rate_bps;
    const int64_t network = (replayer.completed_time(id) - replayer.posted_time(id)).ps();
    const int64_t link = std::min(
        network, static_cast<int64_t>(std::llround(static_cast<double>(x.bytes) * 8e12 / rate)));
    t.cp_link_ps += link;
    // Rank r runs on host r in a training step (training_plan); NVLink is never paused.
    if (!nvlink) {
      t.cp_pfc_pause_ps +=
          std::min(network - link, net.host_paused_ps(x.src_rank, replayer.posted_time(id).ps(),
                                                      replayer.completed_time(id).ps()));
    }
  }
  t.cp_waiting_ps = r.critical_path.network_ps - t.cp_link_ps;
  t.cp_queueing_ps = t.cp_waiting_ps - t.cp_pfc_pause_ps;
  return t;
}

}  // namespace fabricsim
