#include "sim/sweep/sweep_point.hpp"

#include <chrono>
#include <exception>
#include <filesystem>
#include <system_error>

#include "collectives/nccl_tests.hpp"
#include "sim/pool/pipe_codec.hpp"
#include "sim/report/output_file.hpp"
#include "sim/report/sweep_outputs.hpp"
#include "sim/run/run_outputs.hpp"

namespace fabricsim {
namespace {

/// How many message sizes `sc`'s workload has, for metric_cells: counted only when the point
/// has a report with rows and the scenario a workload (0 otherwise).
size_t workload_sizes_of(const Scenario& sc, const RunReport* rep) {
  if (rep == nullptr || !sc.has_workload || rep->rows.empty()) return 0;
  return sweep_sizes(sc.workload.minbytes, sc.workload.maxbytes, sc.workload.stepfactor,
                     datatype_bytes(sc.workload.datatype))
      .size();
}

// ---- a point's result through a pipe, from the point's process to the sweep's --------------
// Both ends are the same binary: integers and doubles travel as their bytes, strings with
// their length first. The message ends with a marker, so a process that died mid-write is
// told from one that finished.

constexpr uint64_t kResultEnd = 0x66616272'69637377;  // "fabricsw"

}  // namespace

void remove_point_outputs(const RunOptions& opts, int64_t index, int64_t points) {
  if (!opts.out_given) return;
  const std::filesystem::path point_dir =
      std::filesystem::path(opts.out_dir) / point_dir_name(index + 1, points);
  const std::vector<std::string> names = {"results.json", "perf.json",  "ports.csv",   "queues.csv",
                                          "flows.csv",    "trace.json", "perftest.txt"};
  for (const std::string& f : names) {
    std::error_code ec;
    std::filesystem::remove(point_dir / f, ec);
  }
  remove_temporary_files(point_dir, names);  // a killed point process's
}

PointResult run_point(Scenario& sc, int64_t index, int64_t points,
                      const std::vector<std::string>& values, const RunOptions& opts,
                      const std::atomic<bool>* interrupt, bool progress,
                      const std::optional<WallLimit>& wall) {
  const auto wall_start = std::chrono::steady_clock::now();
  PointResult result;
  result.point = index + 1;
  std::optional<RunReport> rep;
  std::string error;
  try {
    const Prepared prepared = prepare(sc);
    rep = simulate_limited(sc, prepared, interrupt, progress, nullptr,
                           opts.max_events > 0 ? opts.max_events : UINT64_MAX, wall, nullptr,
                           opts.hooks);  // a point runs the hooks a `run` would
  } catch (const std::exception& e) {    // the point fails; the sweep goes on
    error = e.what();
  }
  result.outcome = !rep                    ? Outcome::kFailed
                   : rep->complete         ? Outcome::kComplete
                   : rep->interrupted      ? Outcome::kInterrupted
                   : rep->limited          ? Outcome::kLimited
                   : rep->deadlocked       ? Outcome::kDeadlock
                   : rep->transport_failed ? Outcome::kTransportFailed
                                           : Outcome::kFailed;
  if (rep && opts.out_given) {
    const std::filesystem::path point_dir =
        std::filesystem::path(opts.out_dir) / point_dir_name(index + 1, points);
    std::error_code ec;
    std::filesystem::create_directories(point_dir, ec);
    if (ec) {
      result.unwritten.push_back(OutputError(point_dir.string(), ec.value()).what());
    } else {  // no trace.json: `run --trace-events 0`
      for (const OutputError& e : write_run_outputs(point_dir.string(), *rep, opts.flows))
        result.unwritten.push_back(e.what());
    }
  }
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(
      workload_sizes_of(sc, rep ? &*rep : nullptr), rep ? &*rep : nullptr, result.outcome, error);
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.events = rep ? rep->events : 0;
  if (result.outcome != Outcome::kComplete) {
    result.reason = rep ? rep->stop_reason : "internal error: " + error;
  }
  if (rep) {
    for (const CollectiveRow& row : rep->rows)
      result.busbw.push_back({row.size_bytes, row.busbw_GBps});
    for (const SlowdownBucket& b : rep->slowdown.buckets) {
      if (b.count > 0)
        result.slowdown.push_back({b.above_bytes, b.max_bytes, b.count, b.p50, b.p95, b.p99});
    }
    if (rep->fabric.cost) result.cost_usd = rep->fabric.cost->total_usd;
    if (rep->training) {
      result.step_ps = rep->training->step_ps;
      result.exposed_comm_ps = rep->training->exposed_comm_ps;
    }
    for (const JobRow& j : rep->jobs) {
      JobResult& r = result.jobs.emplace_back();
      r.name = j.name;
      if (j.complete) r.time_us = static_cast<double>(j.row.time_ps) / 1e6;
      if (j.complete && j.row.collective != kTrainingStep) r.busbw_GBps = j.row.busbw_GBps;
      if (j.slowdown > 0) r.slowdown = j.slowdown;
      if (j.overlap >= 0) r.overlap = j.overlap;
    }
  }
  return result;
}

PointResult failed_point(int64_t index, const std::vector<std::string>& values,
                         const std::string& error) {
  PointResult result;
  result.point = index + 1;
  result.outcome = Outcome::kFailed;
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(0, nullptr, Outcome::kFailed, error);
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.reason = "internal error: " + error;
  return result;
}

PointResult stopped_point(int64_t index, const std::vector<std::string>& values, Outcome outcome) {
  PointResult result;
  result.point = index + 1;
  result.outcome = outcome;
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(0, nullptr, outcome, "");
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.reason = "killed: did not stop in time";
  return result;
}

PointResult unbuildable_point(int64_t index, const std::vector<std::string>& values,
                              const std::string& why) {
  PointResult result;
  result.point = index + 1;
  result.outcome = Outcome::kUnbuildable;
  result.cells.push_back(std::to_string(index + 1));
  for (const std::string& v : values) result.cells.push_back(v);
  const std::vector<std::string> metrics = metric_cells(0, nullptr, Outcome::kUnbuildable, why);
  result.cells.insert(result.cells.end(), metrics.begin(), metrics.end());
  result.reason = "cannot be built: " + why;
  return result;
}

int exit_code_of(Outcome outcome) {
  switch (outcome) {
    case Outcome::kComplete:
      return kExitOk;
    case Outcome::kDeadlock:
      return kExitDeadlock;
    case Outcome::kTransportFailed:
      return kExitTransport;
    case Outcome::kInterrupted:
      return kExitInterrupted;
    case Outcome::kLimited:
      return kExitLimit;
    case Outcome::kFailed:
    case Outcome::kUnbuildable:
      break;
  }
  return kExitInternal;
}

std::string encode_point(const PointResult& r) {
  std::string s;
  put_u64(s, static_cast<uint64_t>(r.point));
  put_u64(s, static_cast<uint64_t>(r.outcome));
  put_u64(s, r.cells.size());
  for (const std::string& c : r.cells) put_str(s, c);
  put_str(s, r.reason);
  put_f64(s, r.wall_s);
  put_u64(s, static_cast<uint64_t>(r.events));
  put_u64(s, r.busbw.size());
  for (const SizeBusbw& b : r.busbw) {
    put_u64(s, static_cast<uint64_t>(b.size_bytes));
    put_f64(s, b.busbw_GBps);
  }
  put_u64(s, r.slowdown.size());
  for (const SizeSlowdown& b : r.slowdown) {
    put_u64(s, static_cast<uint64_t>(b.above_bytes));
    put_u64(s, static_cast<uint64_t>(b.max_bytes));
    put_u64(s, static_cast<uint64_t>(b.flows));
    for (const double x : {b.p50, b.p95, b.p99}) put_f64(s, x);
  }
  put_u64(s, r.cost_usd ? 1 : 0);
  put_f64(s, r.cost_usd.value_or(0));
  put_u64(s, r.step_ps ? 1 : 0);
  put_u64(s, static_cast<uint64_t>(r.step_ps.value_or(0)));
  put_u64(s, static_cast<uint64_t>(r.exposed_comm_ps.value_or(0)));
  put_u64(s, r.jobs.size());
  for (const JobResult& j : r.jobs) {
    put_str(s, j.name);
    for (const std::optional<double>& x : {j.time_us, j.busbw_GBps, j.slowdown, j.overlap}) {
      put_u64(s, x ? 1 : 0);
      put_f64(s, x.value_or(0));
    }
  }
  put_u64(s, r.unwritten.size());
  for (const std::string& u : r.unwritten) put_str(s, u);
  put_u64(s, kResultEnd);
  return s;
}

std::optional<PointResult> decode_point(const std::string& s) {
  PipeReader in(s);
  PointResult r;
  r.point = static_cast<int64_t>(in.u64());
  const uint64_t outcome = in.u64();
  if (outcome > static_cast<uint64_t>(Outcome::kLimited) ||
      outcome == static_cast<uint64_t>(Outcome::kUnbuildable)) {
    in.fail();  // not sent by a point's process
  }
  r.outcome = static_cast<Outcome>(outcome);
  const uint64_t cells = in.u64();
  for (uint64_t i = 0; in.ok() && i < cells; ++i) r.cells.push_back(in.str());
  r.reason = in.str();
  r.wall_s = in.f64();
  r.events = static_cast<int64_t>(in.u64());
  const uint64_t sizes = in.u64();
  for (uint64_t i = 0; in.ok() && i < sizes; ++i) {
    SizeBusbw b;
    b.size_bytes = static_cast<int64_t>(in.u64());
    b.busbw_GBps = in.f64();
    r.busbw.push_back(b);
  }
  const uint64_t buckets = in.u64();
  for (uint64_t i = 0; in.ok() && i < buckets; ++i) {
    SizeSlowdown b;
    b.above_bytes = static_cast<int64_t>(in.u64());
    b.max_bytes = static_cast<int64_t>(in.u64());
    b.flows = static_cast<int64_t>(in.u64());
    b.p50 = in.f64();
    b.p95 = in.f64();
    b.p99 = in.f64();
    r.slowdown.push_back(b);
  }
  const uint64_t has_cost = in.u64();
  const double cost = in.f64();
  if (has_cost > 1) in.fail();
  if (has_cost == 1) r.cost_usd = cost;
  const uint64_t has_step = in.u64();
  const uint64_t step = in.u64(), exposed = in.u64();
  if (has_step > 1) in.fail();
  if (has_step == 1) {
    r.step_ps = static_cast<int64_t>(step);
    r.exposed_comm_ps = static_cast<int64_t>(exposed);
  }
  const uint64_t jobs = in.u64();
  for (uint64_t i = 0; in.ok() && i < jobs; ++i) {
    JobResult& j = r.jobs.emplace_back();
    j.name = in.str();
    for (std::optional<double>* x : {&j.time_us, &j.busbw_GBps, &j.slowdown, &j.overlap}) {
      const uint64_t has = in.u64();
      const double v = in.f64();
      if (has > 1) in.fail();
      if (has == 1) *x = v;
    }
  }
  const uint64_t unwritten = in.u64();
  for (uint64_t i = 0; in.ok() && i < unwritten; ++i) r.unwritten.push_back(in.str());
  if (in.u64() != kResultEnd || !in.at_end()) in.fail();
  if (!in.ok()) return std::nullopt;
  return r;
}

}  // namespace fabricsim
