// `jobs:`: several jobs on one fabric. Each job is placed on servers of its own (a placement
// policy of jobs/placement.hpp, or its servers list), its collective planned as NCCL would for
// its ranks on those servers (collectives/nccl_setup.hpp, with its own NCCL settings), and
// every job's iterations spliced into one DAG over the run's ranks, so the jobs share the
// network in one phase. A run with jobs also runs each job alone on the same servers (the same
// scenario without the other jobs) for its slowdown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/nccl_plan.hpp"
#include "collectives/step_model.hpp"
#include "collectives/transfer_dag.hpp"
#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"
#include "topologies/fabric_graph.hpp"

namespace fabricsim {

class DagReplayer;

/// One job, placed and planned.
struct JobPlan {
  JobConfig config;          ///< its scenario item
  std::string placement;     ///< the policy, or "servers" for a list given
  std::vector<int> servers;  ///< in rank order
  int leaves = 0;            ///< distinct server groups (leaves) among its servers
  NcclRunSetup setup;        ///< rank_hosts: the fabric's host of each of its ranks
  NcclConfig nccl;  ///< the NCCL settings it ran with: the file's, the environment's over them
  SizePlan size;    ///< its collective's size, as NCCL plans it
  std::optional<StepPlan> step;  ///< a training job's step (then `size` is unused)
  CollectiveRow row;             ///< what NCCL chose, before it runs
  /// Its tasks in the DAG it is built into: [first_task, end_task).
  uint32_t first_task = 0, end_task = 0;
  /// Per iteration, each of its ranks' join task (done once the rank's part of it is).
  std::vector<std::vector<uint32_t>> joins;
};

/// The scenario's jobs on its fabric.
struct JobsPlan {
  std::vector<JobPlan> jobs;
  /// The run's ranks: job 0's, then job 1's, … ; rank -> the fabric's host.
  std::vector<int> rank_hosts;
  std::vector<int> first_rank;  ///< per job: its rank 0 among the run's ranks
  bool empty() const { return jobs.empty(); }
};

/// Places and plans the scenario's jobs in order, each on servers no earlier job took. Throws
/// ConfigError (exit 2) at the job's key for a job that does not fit, a server list that is
/// wrong, or a collective its NCCL settings cannot run.
JobsPlan plan_jobs(const Scenario& sc, const Fabric& fabric);

/// The DAG of the jobs (`only` < 0: every job; else job `only` alone), over the run's ranks
/// (JobsPlan::rank_hosts), each job's iterations chained per rank and its first launched at
/// its start time; sets the jobs' task ranges and joins in `plan` for that DAG.
TransferDag build_jobs_dag(JobsPlan& plan, int only = -1);

/// Each job's row after a run of build_jobs_dag(plan, only): times from the replayer's
/// completions (start, end, mean iteration time, algbw and busbw as nccl-tests computes them
/// from it); a job not finished has complete false.
std::vector<JobRow> job_rows(const JobsPlan& plan, const DagReplayer& replayer, int only = -1);

}  // namespace fabricsim
