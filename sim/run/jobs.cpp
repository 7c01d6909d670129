// `jobs:` placed, planned and built into one DAG (sim/run/jobs.hpp).
#include "sim/run/jobs.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "collectives/nccl_tests.hpp"
#include "collectives/replay.hpp"
#include "jobs/placement.hpp"
#include "sim/core/config_error.hpp"
#include "sim/core/rng.hpp"
#include "sim/run/run_parts.hpp"
#include "sim/run/scenario_collectives.hpp"

namespace fabricsim {

namespace {

/// The most tasks the jobs' DAG may hold: a task and its edges take some 100 bytes to build
/// and replay, so 50 million are a few GB.
constexpr int64_t kMaxJobTasks = 50'000'000;

/// Per server of the fabric (server s: hosts s x G … s x G + G - 1): the switch its first GPU's
/// NIC is cabled to, numbered in server order (placement.hpp's groups).
std::vector<int> server_groups(const Fabric& fabric, int servers, int g) {
  const FabricGraph& graph = fabric.graph;
  std::map<VertexId, int> index;
  std::vector<int> out(static_cast<size_t>(servers), 0);
  for (int s = 0; s < servers; ++s) {
    const VertexId host = fabric.hosts[static_cast<size_t>(s * g)];
    VertexId leaf = host;  // a host with no network link: a group of its own
    for (const auto e : boost::make_iterator_range(boost::out_edges(host, graph))) {
      const VertexId other = boost::target(e, graph);
      if (!graph[e].nvlink && graph[other].kind == NodeKind::kSwitch) {
        leaf = other;
        break;
      }
    }
    out[static_cast<size_t>(s)] = index.emplace(leaf, static_cast<int>(index.size())).first->second;
  }
  return out;
}

/// `e`, from the collectives' checks of the job as a workload section, in the job's terms: its
/// keys under `at` ("jobs[1]"), `size` for the workload's bytes, `gpus` for ngpus.
ConfigError in_job_terms(const ConfigError& e, const std::string& at) {
  const auto rewrite = [&](std::string text) {
    const std::pair<std::string, std::string> words[] = {{"workload.maxbytes", at + ".size"},
                                                         {"workload.minbytes", at + ".size"},
                                                         {"workload.ngpus", at + ".gpus"},
                                                         {"workload.", at + "."},
                                                         {"ngpus is", "gpus is"}};
    for (const auto& [from, to] : words) {
      for (size_t i = text.find(from); i != std::string::npos; i = text.find(from, i + to.size())) {
        text.replace(i, from.size(), to);
      }
    }
    return text;
  };
  return ConfigError(e.where(), e.line(), e.column(), rewrite(e.key_path()), rewrite(e.message()));
}

/// The workload the job's collective is, as a `workload:` section would give it.
WorkloadConfig job_workload(const JobConfig& job) {
  WorkloadConfig w = job.workload;
  w.ngpus = job.gpus;
  // A training job: NCCL's settings for its ranks, as a scenario's own step takes them.
  w.minbytes = w.maxbytes = job.training.enabled ? 1024 : job.bytes;
  return w;
}

}  // namespace

JobsPlan plan_jobs(const Scenario& sc, const Fabric& fabric) {
  JobsPlan plan;
  if (sc.jobs.empty()) return plan;
  const int g = std::max(1, fabric.gpus_per_server);
  const int servers = static_cast<int>(fabric.hosts.size()) / g;
  PlacementRequest request;
  request.group = server_groups(fabric, servers, g);
  int64_t tasks = 0;  // the DAG's tasks over every job
  request.free.assign(static_cast<size_t>(servers), true);
  for (size_t j = 0; j < sc.jobs.size(); ++j) {
    const JobConfig& job = sc.jobs[j];
    const std::string at = "jobs[" + std::to_string(j) + "]";
    const auto given = [&](const std::string& key) { return sc.origins.count(at + "." + key) > 0; };
    // Where the collectives' checks point: the job's own keys, under the names it wrote.
    std::map<std::string, KeyOrigin> origins = sc.origins;
    std::map<std::string, std::string> written_as = sc.written_as;
    origins["workload"] = sc.origins.at(at);
    if (job.training.enabled) origins["training"] = sc.origins.at(at + ".training");
    for (const auto& [key, origin] : sc.origins) {
      if (key.rfind(at + ".", 0) != 0) continue;
      std::string own = key.substr(at.size() + 1);
      if (own == "gpus") own = "ngpus";
      if (own == "op") own = "redop";
      if (own == "size") {  // a workload's sweep is a job's one size
        origins["workload.minbytes"] = origin;
        written_as["workload.minbytes"] = key;
        own = "maxbytes";
      }
      const std::string as =
          own.rfind("nccl.", 0) == 0 || own.rfind("training", 0) == 0 ? own : "workload." + own;
      origins[as] = origin;
      written_as[as] = key;
    }
    NcclConfig nccl = job.nccl;
    apply_nccl_environment(nccl, origins);
    const WorkloadConfig workload = job_workload(job);
    CollectiveInputs base = collective_inputs(sc);
    const CollectiveInputs in{workload,
                              nccl,
                              job.training,
                              base.host_rate_bps,
                              base.nvlink_rate_bps,
                              base.intra_pcie,
                              base.pcie_rate_bps,
                              base.pcie_latency_ps,
                              base.nics_per_server,
                              base.flow_mode,
                              base.infiniband,
                              base.switch_hop_ps,
                              KeyPlaces{sc.path, origins, written_as}};
    JobPlan p;
    p.config = job;
    p.nccl = nccl;
    const auto fail = [&](const std::string& key, const std::string& message) {
      throw key_error(KeyPlaces{sc.path, sc.origins, sc.written_as},
                      given(key) ? at + "." + key : at, message);
    };
    // Its servers first (what the fabric has left), then NCCL's setup of its ranks on them.
    const int per_server = job.workload.ranks_per_server > 0 ? job.workload.ranks_per_server : g;
    if (per_server > g) {
      fail("ranks_per_server", "ranks_per_server is " + std::to_string(per_server) +
                                   " but a server has " + std::to_string(g) + " GPU" +
                                   (g == 1 ? "" : "s") + "; expected 1 to " + std::to_string(g));
    }
    const int need = (job.gpus + per_server - 1) / per_server;
    const int free = static_cast<int>(std::count(request.free.begin(), request.free.end(), true));
    const std::string shape = std::to_string(job.gpus) + " GPUs at " + std::to_string(per_server) +
                              " a server need " + std::to_string(need) + " server" +
                              (need == 1 ? "" : "s");
    if (!job.servers.empty()) {
      p.placement = "servers";
      if (static_cast<int>(job.servers.size()) != need) {
        fail("servers", shape + "; " + std::to_string(job.servers.size()) + " are listed");
      }
      for (size_t i = 0; i < job.servers.size(); ++i) {
        const int s = job.servers[i];
        if (s >= servers) {
          fail("servers", "server " + std::to_string(s) + " does not exist: the fabric has " +
                              std::to_string(servers) + " (0 to " + std::to_string(servers - 1) +
                              ")");
        }
        if (std::find(job.servers.begin(), job.servers.begin() + static_cast<long>(i), s) !=
            job.servers.begin() + static_cast<long>(i)) {
          fail("servers", "server " + std::to_string(s) + " is listed twice");
        }
        if (!request.free[static_cast<size_t>(s)]) {
          fail("servers", "server " + std::to_string(s) + " is taken by an earlier job");
        }
      }
      p.servers = job.servers;
    } else {
      p.placement = job.placement;
      if (need > free) {
        fail("gpus", shape + ", and " + std::to_string(free) + " of the fabric's " +
                         std::to_string(servers) + " are left" +
                         (j > 0 ? " after the jobs before it" : ""));
      }
      request.servers = need;
      request.seed = job.placement_seed != 0
                         ? job.placement_seed
                         : sc.seed ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(j + 1));
      try {
        p.servers = place(job.placement, request);
      } catch (const std::invalid_argument& e) {
        fail("placement", e.what());
      }
    }
    try {
      p.setup = nccl_setup(in, fabric);
    } catch (const ConfigError& e) {
      throw in_job_terms(e, at);
    }
    std::vector<int> groups;
    for (const int s : p.servers) {
      request.free[static_cast<size_t>(s)] = false;
      groups.push_back(request.group[static_cast<size_t>(s)]);
    }
    std::sort(groups.begin(), groups.end());
    p.leaves = static_cast<int>(std::unique(groups.begin(), groups.end()) - groups.begin());
    p.setup.rank_hosts.resize(static_cast<size_t>(job.gpus));
    for (int r = 0; r < job.gpus; ++r) {
      p.setup.rank_hosts[static_cast<size_t>(r)] =
          p.servers[static_cast<size_t>(r / per_server)] * g + r % per_server;
    }
    const int elem = datatype_bytes(workload.datatype);
    int64_t collective_tasks = 0;
    if (job.training.enabled) {
      p.step = training_plan(in, job.gpus, g, p.setup, "job " + job.name);
      p.row.collective = kTrainingStep;
      p.row.ranks = job.gpus;
      collective_tasks = static_cast<int64_t>(p.step->dag.size());
    } else {
      try {
        p.size = plan_size(p.setup, job.bytes, elem);
      } catch (const std::invalid_argument& e) {
        fail(given("algorithm") ? "algorithm" : "collective", e.what());
      }
      p.row = plan_row(workload, p.setup, p.size);
      if (p.size.buffer_count > 0) {
        collective_tasks = static_cast<int64_t>(
            build_collective(p.setup.layout, p.size.spec, p.size.buffer_count, elem).size());
      }
    }
    // The job's DAG holds its collective's (or step's) tasks and a launch and a join per rank
    // once per iteration: refused before it is built when it would not fit.
    const int64_t per_iteration = collective_tasks + 2 * int64_t{job.gpus};
    tasks += per_iteration * job.iterations;
    if (tasks > kMaxJobTasks) {
      fail(given("iterations") ? "iterations" : "size",
           "the jobs' collectives would be " + std::to_string(tasks) +
               " tasks to replay (this job: " + std::to_string(per_iteration) +
               " an iteration), above the " + std::to_string(kMaxJobTasks) +
               " a run holds; expected fewer iterations, a smaller size or fewer GPUs");
    }
    plan.first_rank.push_back(static_cast<int>(plan.rank_hosts.size()));
    plan.rank_hosts.insert(plan.rank_hosts.end(), p.setup.rank_hosts.begin(),
                           p.setup.rank_hosts.end());
    plan.jobs.push_back(std::move(p));
  }
  return plan;
}

TransferDag build_jobs_dag(JobsPlan& plan, int only) {
  TransferDag dag;
  for (size_t j = 0; j < plan.jobs.size(); ++j) {
    JobPlan& p = plan.jobs[j];
    p.joins.clear();
    if (only >= 0 && static_cast<size_t>(only) != j) {
      p.first_task = p.end_task = static_cast<uint32_t>(dag.size());
      continue;
    }
    const int n = p.setup.layout.ranks;
    const int first = plan.first_rank[j];
    const int elem = datatype_bytes(p.row.datatype);
    const TransferDag built =
        p.step || p.size.buffer_count == 0
            ? TransferDag()
            : build_collective(p.setup.layout, p.size.spec, p.size.buffer_count, elem);
    const TransferDag& one = p.step ? p.step->dag : built;
    p.first_task = static_cast<uint32_t>(dag.size());
    std::vector<uint32_t> previous;
    for (int it = 0; it < p.config.iterations; ++it) {
      // Each rank launches the iteration once its part of the previous one is done (NCCL's
      // collectives on one stream), the first at the job's start.
      std::vector<uint32_t> launch(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        launch[r] = dag.add_compute(first + r, it == 0 ? p.config.start_ps : 0);
        if (it > 0) dag.depends(launch[r], previous[r]);
      }
      const uint32_t base = static_cast<uint32_t>(dag.size());
      for (uint32_t i = 0; i < one.size(); ++i) {
        const Transfer& t = one.transfer(i);
        const uint32_t id =
            dag.add_like(t, first + t.src_rank, first + t.dst_rank, t.bytes, t.flow);
        dag.depends(id, launch[t.src_rank]);
        if (t.dst_rank != t.src_rank) dag.depends(id, launch[t.dst_rank]);
      }
      dag.copy_dependencies(one, base);
      // A rank's part is done when what it receives has arrived (what it sends, if it
      // receives nothing; its launch, if neither).
      std::vector<uint32_t> joins(static_cast<size_t>(n));
      std::vector<std::vector<uint32_t>> received(static_cast<size_t>(n)), sent(n);
      for (uint32_t i = 0; i < one.size(); ++i) {
        const Transfer& t = one.transfer(i);
        received[t.dst_rank].push_back(base + i);
        sent[t.src_rank].push_back(base + i);
      }
      for (int r = 0; r < n; ++r) {
        joins[r] = dag.add_compute(first + r, 0);
        const std::vector<uint32_t>& on = !received[r].empty() ? received[r] : sent[r];
        for (const uint32_t k : on) dag.depends(joins[r], k);
        if (on.empty()) dag.depends(joins[r], launch[r]);
      }
      p.joins.push_back(joins);
      previous = std::move(joins);
    }
    p.end_task = static_cast<uint32_t>(dag.size());
  }
  return dag;
}

std::vector<JobRow> job_rows(const JobsPlan& plan, const DagReplayer& replayer, int only) {
  std::vector<JobRow> rows;
  for (size_t j = 0; j < plan.jobs.size(); ++j) {
    if (only >= 0 && static_cast<size_t>(only) != j) continue;
    const JobPlan& p = plan.jobs[j];
    JobRow r;
    r.name = p.config.name;
    r.placement = p.placement;
    r.servers = p.servers;
    r.leaves = p.leaves;
    r.row = p.row;
    r.iterations = p.config.iterations;
    r.start_ps = p.config.start_ps;
    r.complete = !p.joins.empty();
    int64_t end = r.start_ps;
    for (const uint32_t id : p.joins.empty() ? std::vector<uint32_t>{} : p.joins.back()) {
      const int64_t done = replayer.completed_time(id).ps();
      if (done < 0) r.complete = false;
      end = std::max(end, done);
    }
    if (r.complete) {
      r.end_ps = end;
      r.row.time_ps = (end - r.start_ps) / r.iterations;
      if (r.row.time_ps > 0 && !p.step) {  // 0: a count of 0 elements, which NCCL returns at once
        r.row.algbw_GBps = algbw_GBps(r.row.size_bytes, r.row.time_ps);
        r.row.busbw_GBps = r.row.algbw_GBps * busbw_factor(r.row.collective, r.row.ranks);
      }
    }
    rows.push_back(std::move(r));
  }
  // How much of each job's time another job was running: the share of [start, end] covered by
  // the other jobs' [start, end] (unfinished ones: to the last end any job reached).
  int64_t last = 0;
  for (const JobRow& r : rows) last = std::max(last, r.end_ps);
  for (JobRow& r : rows) {
    if (rows.size() < 2 || !r.complete || r.end_ps <= r.start_ps) continue;
    std::vector<std::pair<int64_t, int64_t>> others;
    for (const JobRow& o : rows) {
      if (&o == &r) continue;
      const int64_t b = std::max(o.start_ps, r.start_ps);
      const int64_t e = std::min(o.complete ? o.end_ps : last, r.end_ps);
      if (e > b) others.emplace_back(b, e);
    }
    std::sort(others.begin(), others.end());
    int64_t covered = 0, reach = r.start_ps;
    for (const auto& [b, e] : others) {
      if (e <= reach) continue;
      covered += e - std::max(b, reach);
      reach = e;
    }
    r.overlap = static_cast<double>(covered) / static_cast<double>(r.end_ps - r.start_ps);
  }
  return rows;
}

}  // namespace fabricsim
