#include "sim/run/run_command.hpp"

#include <unistd.h>
#include <algorithm>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/nccl_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/parallel/partition.hpp"
#include "sim/report/output_file.hpp"
#include "sim/run/run_outputs.hpp"

namespace fabricsim {

/// The training step's times, in ms, and its critical path.
void print_training(std::ostream& os, const TrainingSummary& t) {
  const auto ms = [](int64_t ps) { return static_cast<double>(ps) / 1e9; };
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "# training   : dp %d x tp %d x pp %d = %d GPUs, %d layers, %d microbatch%s, %d "
      "DDP bucket%s\n"
      "#   step %.3f ms: compute %.3f ms, exposed communication %.3f ms (%.1f %%), GPU "
      "utilization %.1f %%\n"
      "#   critical path (GPU %d): compute %.3f ms, NCCL software latency %.3f ms, network "
      "%.3f ms (its bytes at link rate %.3f ms, its NIC paused by PFC %.3f ms, sharing links "
      "and queueing %.3f ms)\n",
      t.dp, t.tp, t.pp, t.ranks, t.layers, t.microbatches, t.microbatches == 1 ? "" : "es",
      t.buckets, t.buckets == 1 ? "" : "s", ms(t.step_ps), ms(t.compute_ps), ms(t.exposed_comm_ps),
      t.step_ps > 0 ? 100.0 * static_cast<double>(t.exposed_comm_ps) / t.step_ps : 0.0,
      100.0 * t.gpu_utilization, t.critical_rank, ms(t.cp_compute_ps), ms(t.cp_software_ps),
      ms(t.cp_link_ps + t.cp_waiting_ps), ms(t.cp_link_ps), ms(t.cp_pfc_pause_ps),
      ms(t.cp_queueing_ps));
  os << buf;
}

/// The measured log beside the simulation, size by size, and the median and worst error.
void print_measured(std::ostream& os, const MeasuredComparison& m) {
  os << "# measured   : " << m.path << "\n";
  if (m.transport_support == "not_modelled") {
    os << "# warning    : the log ran on " << m.transport_name;
    if (m.transport_line > 0) {
      os << " (line " << m.transport_line << ": `" << m.transport_evidence << "`)";
    }
    os << ", which fabricsim does not model (it models NET/IB over InfiniBand or RoCE, and "
          "NET/Socket): this comparison is not a prediction of that hardware\n";
  }
  if (m.points.empty()) {
    os << "#   no size of the sweep is in the log\n";
    return;
  }
  os << "#        size  busbw measured  busbw simulated   error\n";
  for (const auto& p : m.points) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "#  %10lld  %14.2f  %15.2f  %+6.1f %%\n",
                  static_cast<long long>(p.size_bytes), p.measured_busbw_GBps,
                  p.simulated_busbw_GBps, p.error_pct);
    os << buf;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "#   busbw error over %zu sizes: median %.1f %%, worst %.1f %%\n",
                m.points.size(), m.median_abs_pct_error, m.max_abs_pct_error);
  os << buf;
  if (m.log_channels > 0) {
    os << "#   channels: the log's NCCL opened " << m.log_channels << ", the model "
       << m.model_channels << "\n";
  }
  if (m.choices_compared > 0) {
    os << "#   NCCL's choice (the log's \"Bytes -> Algo\" lines) at " << m.choices_compared
       << " size" << (m.choices_compared == 1 ? "" : "s") << ": the run used the same algorithm "
       << "and protocol at " << m.choices_same;
    const char* sep = "; not at ";
    for (const auto& p : m.points) {
      if (p.log_algorithm.empty() ||
          (p.log_algorithm == p.simulated_algorithm && p.log_protocol == p.simulated_protocol)) {
        continue;
      }
      os << sep << format_size(p.size_bytes) << " (NCCL " << p.log_algorithm << "/"
         << p.log_protocol << ", run " << p.simulated_algorithm << "/" << p.simulated_protocol
         << ")";
      sep = ", ";
    }
    os << "\n";
  }
}

/// The measured perftest log beside the simulated run, size by size, and the median and worst
/// error.
void print_measured_perftest(std::ostream& os, const PerftestComparison& m) {
  os << "# measured   : " << m.path << "\n";
  for (const std::string& w : m.warnings) os << "# warning    : " << w << "\n";
  const bool bw = m.metric == "bw_average";
  const std::string what = bw ? "BW average" : m.metric;
  char buf[256];
  if (m.only_measured > 0 || m.only_simulated > 0) {
    std::snprintf(buf, sizeof buf, "#   skipped: %d size%s only the log has, %d only the run has\n",
                  m.only_measured, m.only_measured == 1 ? "" : "s", m.only_simulated);
    os << buf;
  }
  if (m.rows.empty()) {
    os << "#   no size of the perftest run is in the log\n";
    return;
  }
  const std::string measured = what + " measured [" + m.unit + "]";
  const std::string simulated = "simulated [" + m.unit + "]";
  const int wm = static_cast<int>(measured.size()), ws = static_cast<int>(simulated.size());
  std::snprintf(buf, sizeof buf, "#      bytes  %s  %s    error\n", measured.c_str(),
                simulated.c_str());
  os << buf;
  for (const auto& r : m.rows) {
    // perftest's own precision: 2 decimals, 6 below 0.1 (REPORT_FMT_EXT).
    const int digits = r.measured < 0.1 || r.simulated < 0.1 ? 6 : 2;
    std::snprintf(buf, sizeof buf, "#  %9lld  %*.*f  %*.*f  %+6.1f %%\n",
                  static_cast<long long>(r.bytes), wm, digits, r.measured, ws, digits, r.simulated,
                  r.error_pct);
    os << buf;
  }
  std::snprintf(buf, sizeof buf,
                "#   %s error over %zu size%s: median %.1f %%, worst %.1f %% (at %lld B)\n",
                what.c_str(), m.rows.size(), m.rows.size() == 1 ? "" : "s", m.median_abs_pct_error,
                m.max_abs_pct_error, static_cast<long long>(m.max_error_bytes));
  os << buf;
}

/// The scenario's warnings (settings that do nothing under its other choices), on stderr.
void print_warnings(const Scenario& sc) {
  for (const std::string& w : sc.warnings) std::cerr << w << "\n";
}

/// What a partitioned run (`mpirun -np N fabricsim run`, sim/parallel/mpi_engine.cpp) cannot do
/// yet, refused as bad input (exit 2) on every rank alike.
static void check_partitioned(const RunOptions& opts) {
  if (opts.max_events > 0) {
    throw ConfigError("--max-events", 0, 0, "",
                      "not available with mpirun (each rank runs its own events); use "
                      "--max-wall");
  }
}

/// `mpirun -np N` on a fabric that cannot be split into N parts (more parts than it has
/// separable groups, or a zero-delay link between parts): bad input, exit 2, on every rank
/// alike, with the reason partition_fabric gives.
static void check_partition_fits(const Prepared& prepared, int ranks) {
  try {
    partition_fabric(prepared.fabric, ranks, PartitionMethod::kAuto);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("mpirun -np " + std::to_string(ranks), 0, 0, "",
                      std::string(e.what()) +
                          "; run on fewer ranks (`fabricsim topo SCENARIO --partitions N` "
                          "shows the splits)");
  }
}

int run_scenario(const RunOptions& opts, const std::atomic<bool>* interrupt) {
  Scenario sc = load(opts);
  if (opts.out_given) check_out_dir(opts.out_dir);
  if (opts.mpi_ranks > 1) check_partitioned(opts);
  // A signal before the simulation (even before the options were read: the handlers come
  // first) stops the run here, its files saying so. Not under MPI: there the ranks must agree
  // on when they stop, which the partitioned simulation's first window does.
  const auto stopped_early = [&] {
    return opts.mpi_ranks == 1 && interrupt != nullptr && interrupt->load();
  };
  if (stopped_early()) {
    return stop_before_simulation(opts, sc, nullptr,
                                  "the scenario was read; the fabric was not built");
  }
  const Prepared prepared = prepare(sc);  // bad input is refused before anything is written
  if (stopped_early()) {
    return stop_before_simulation(opts, sc, &prepared,
                                  "the scenario was read and the fabric built and routed; "
                                  "nothing was simulated");
  }
  // The flow mode is one logical process: under mpirun rank 0 runs it alone, as a sequential
  // run; the other ranks have nothing to do.
  if (opts.mpi_ranks > 1 && sc.mode == "flow" && !opts.reports) return kExitOk;
  if (opts.mpi_ranks > 1 && sc.perftest.enabled) {
    // Its completions drive its posts on both hosts: every rank refuses it alike.
    throw key_error(sc, "perftest",
                    "a perftest run is not partitioned over MPI ranks: run it without mpirun");
  }
  if (opts.mpi_ranks > 1 && sc.mode != "flow") check_partition_fits(prepared, opts.mpi_ranks);
  if (opts.reports) print_warnings(sc);
  // What runs: the workload's collective, traffic flows, a training step (one or more).
  std::vector<std::string> parts;
  if (sc.has_workload) {
    parts.push_back(sc.workload.collective + ", algorithm " + sc.workload.algorithm +
                    ", protocol " + sc.workload.protocol);
  }
  if (!sc.traffic.empty()) {
    const auto background = static_cast<size_t>(std::count_if(
        sc.traffic.begin(), sc.traffic.end(), [](const TrafficFlow& t) { return t.background; }));
    parts.push_back(std::to_string(sc.traffic.size()) + " traffic flow" +
                    (sc.traffic.size() == 1 ? "" : "s") +
                    (background > 0 ? " (" + std::to_string(background) + " background)" : ""));
  } else if (sc.background.enabled) {
    parts.emplace_back("no background flow (background.load 0, or none arrived)");
  }
  if (sc.training.enabled) parts.emplace_back("a training step");
  if (!sc.jobs.empty()) {
    parts.push_back(std::to_string(sc.jobs.size()) + " job" + (sc.jobs.size() == 1 ? "" : "s") +
                    " (each also alone on its servers)");
  }
  if (sc.perftest.enabled) {
    parts.push_back("perftest " + sc.perftest.test + " from host " +
                    std::to_string(sc.perftest.client) + " to host " +
                    std::to_string(sc.perftest.server));
  }
  std::cout << "# fabricsim " << sc.name << ": ";
  for (size_t i = 0; i < parts.size(); ++i) std::cout << (i > 0 ? ", plus " : "") << parts[i];
  if (sc.mode == "flow") std::cout << ", flow mode";
  if (sc.mode == "flow" && opts.mpi_ranks > 1) {
    std::cout << " (one logical process: rank 0 runs it alone, the other " << opts.mpi_ranks - 1
              << " rank" << (opts.mpi_ranks > 2 ? "s wait" : " waits") << ")";
  }
  std::cout << ", seed " << sc.seed << "\n";
  if (sc.has_workload) {
    const NcclRunSetup& n = prepared.nccl;
    std::cout << "# nccl       : " << n.layout.ranks << " ranks on " << n.layout.servers()
              << " server" << (n.layout.servers() == 1 ? "" : "s") << " x "
              << n.layout.gpus_per_server << " GPU" << (n.layout.gpus_per_server == 1 ? "" : "s")
              << (n.tune.intra_hw == NcclHw::kPci ? " (peer to peer over PCIe)" : "") << ", "
              << n.channels << (n.channels == 1 ? " channel" : " channels") << ", NET/"
              << (effective_net(n.settings) == NcclNet::kSocket ? "Socket" : "IB")
              << (n.staged ? " staged through host memory" : " with GPUDirect RDMA")
              << ", NCCL_ALGO " << (sc.nccl.algo.empty() ? "(all)" : sc.nccl.algo)
              << ", NCCL_PROTO " << (sc.nccl.proto.empty() ? "(NCCL's)" : sc.nccl.proto)
              << ", tuning of NCCL " << n.tuning_label;
    for (const auto& [key, assignment] : sc.nccl.from_env) {
      std::cout << (key == sc.nccl.from_env.begin()->first ? "; from the environment: " : ", ")
                << assignment;
    }
    if (!n.note.empty()) std::cout << "; " << n.note;
    std::cout << "\n";
  }
  for (const JobPlan& job : prepared.jobs.jobs) {
    const NcclRunSetup& n = job.setup;
    std::cout << "# job        : " << job.config.name << ", " << n.layout.ranks << " ranks on "
              << n.layout.servers() << " server" << (n.layout.servers() == 1 ? "" : "s")
              << " under " << job.leaves << " lea" << (job.leaves == 1 ? "f" : "ves") << " ("
              << job.placement << "), " << n.channels
              << (n.channels == 1 ? " channel" : " channels") << ", NCCL_ALGO "
              << (job.nccl.algo.empty() ? "(all)" : job.nccl.algo) << ", NCCL_PROTO "
              << (job.nccl.proto.empty() ? "(NCCL's)" : job.nccl.proto);
    if (job.config.start_ps > 0) std::cout << ", starts at " << format_time(job.config.start_ps);
    for (const auto& [key, assignment] : job.nccl.from_env) {
      std::cout << (key == job.nccl.from_env.begin()->first ? "; from the environment: " : ", ")
                << assignment;
    }
    if (!n.note.empty()) std::cout << "; " << n.note;
    std::cout << "\n";
  }
  const bool progress = opts.progress && opts.reports && isatty(STDERR_FILENO);
  std::optional<ChromeTrace> trace;
  const std::filesystem::path dir(opts.out_dir);
  std::vector<OutputError> failures;  // output files not written
  std::vector<UnwrittenFile> unwritten;
  if (opts.out_given && opts.trace_max_events > 0 && opts.reports) {
    try {
      trace.emplace((dir / "trace.json").string(), opts.trace_max_events);
    } catch (const OutputError& e) {  // the run goes on without it
      trace_not_written(dir, e, unwritten, failures);
    }
  } else if (opts.out_given && opts.reports) {
    // no trace asked: leave no trace.json of an earlier run beside these
    remove_output_file((dir / "trace.json").string());
  }
  std::optional<WallLimit> wall;
  if (opts.max_wall_ps > 0) {
    wall = WallLimit{
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(opts.max_wall_ps / 1000),
        opts.max_wall_ps};
  }
  // The simulation's own state (events, packets in flight, records) has no up-front estimate:
  // running out of memory here is an incomplete run (exit 1), not bad input.
  RunReport rep = building(
      [&] {
        return simulate_limited(sc, prepared, interrupt, progress, trace ? &*trace : nullptr,
                                opts.max_events > 0 ? opts.max_events : UINT64_MAX, wall,
                                opts.packet_engine, opts.hooks);
      },
      "the simulation's state (events, packets, records)", false);
  rep.files_not_written = std::move(unwritten);
  if (trace && rep.deadlock.detected_at_ps >= 0) {
    // Marked across every track, whatever the cap: where to look in the viewer.
    trace->global_note("deadlock: a cycle of " + std::to_string(rep.deadlock.cycle.size()) +
                           " queues (" +
                           (rep.deadlock.cycle.empty() ? "" : rep.deadlock.cycle.front()) +
                           " ...) can never move; see results.json deadlock",
                       rep.deadlock.detected_at_ps);
  }
  if (trace) {
    try {
      trace->close();  // renamed into place, whole, before results.json is written
    } catch (const OutputError& e) {
      trace_not_written(dir, e, rep.files_not_written, failures);
    }
  }
  if (sc.has_workload) {
    print_table_header(std::cout);
    for (const auto& row : rep.rows) print_table_row(std::cout, row);
  }
  if (!rep.jobs.empty()) print_jobs(std::cout, rep.jobs);
  if (rep.measured) print_measured(std::cout, *rep.measured);
  if (rep.training) print_training(std::cout, *rep.training);
  std::cout << rep.perftest;
  if (rep.measured_perftest) print_measured_perftest(std::cout, *rep.measured_perftest);
  print_summary(std::cout, rep);
  if (opts.out_given && opts.reports) {
    const std::vector<OutputError> more = write_run_outputs(dir.string(), rep, opts.flows);
    failures.insert(failures.end(), more.begin(), more.end());
    print_wrote(std::cout, dir, rep, trace ? &*trace : nullptr, opts.trace_max_events, opts.flows);
    std::cout.flush();
    print_unwritten(std::cerr, failures);
  }
  if (!rep.complete && opts.reports) std::cerr << "fabricsim: run " << rep.stop_reason << "\n";
  return run_exit_code(rep, !failures.empty());
}

}  // namespace fabricsim
