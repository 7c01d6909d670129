// simulate(): the flow or the packet model, then the accounting check; simulate_limited(): the
// same under a wall-clock limit, watched by a thread.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "sim/core/units.hpp"
#include "sim/run/run.hpp"
#include "sim/run/run_parts.hpp"

namespace fabricsim {

/// Each job of a run with jobs alone on its servers: the scenario without the other jobs (its
/// traffic, background and link events kept), for the job's slowdown. Only after a complete
/// run; one that stops early leaves that job's alone time out with the reason, and an
/// interrupt or limit stops the rest and the run (complete false, as any run stopped).
static void alone_runs(const Scenario& sc, const Prepared& prepared,
                       const std::atomic<bool>* interrupt, bool progress, uint64_t max_events,
                       PacketEngineFactory engine, RunReport& rep) {
  if (!rep.complete) {
    for (JobRow& j : rep.jobs) j.alone_note = "not run: the run with every job did not finish";
    return;
  }
  if (!sc.traffic.empty() && rep.jobs.size() > 1) {
    // The flows run beside each job alone too, but meet it at other times: with the other jobs
    // holding them back a job can finish sooner than alone, and congestion control's reactions
    // to them differ from run to run of the seed.
    rep.depends_on.push_back(
        {{"traffic", "background", "seed"},
         "the jobs' slowdowns: the traffic flows run in each job's alone run too, but meet it at "
         "other times, so part of a slowdown (below 1 or above) is theirs; compare over seeds "
         "(--vary seed=1,2,3)"});
  }
  // --max-events bounds the whole run: the alone runs share what the run with every job left.
  uint64_t used = static_cast<uint64_t>(rep.events);
  const std::string cap = "--max-events " + std::to_string(max_events);
  for (size_t j = 0; j < rep.jobs.size(); ++j) {
    JobRow& row = rep.jobs[j];
    if (rep.jobs.size() == 1) {  // the run was the job alone: its DAG is the same
      row.alone_time_ps = row.row.time_ps;
      row.alone_busbw_GBps = row.row.busbw_GBps;
      if (row.alone_time_ps > 0) row.slowdown = 1;
      break;
    }
    if (rep.complete && max_events != UINT64_MAX && used >= max_events) {
      rep.complete = false;
      rep.limited = true;
      rep.stop_reason = "stopped at " + cap + " before job " + row.name + " alone";
    }
    if (!rep.complete) {
      row.alone_note = "not run: " + rep.stop_reason;
      continue;
    }
    if (progress) std::fprintf(stderr, "\r[fabricsim] job %s alone   ", row.name.c_str());
    RunReport alone = simulate_packets(sc, prepared, interrupt, false, nullptr,
                                       max_events == UINT64_MAX ? max_events : max_events - used,
                                       engine, {}, static_cast<int>(j));
    if (progress) std::fprintf(stderr, "\r%*s\r", 60, "");
    // The run's figures cover its alone runs too (perf.json's events per second with them).
    used += static_cast<uint64_t>(alone.events);
    rep.events += alone.events;
    rep.packet_hops += alone.packet_hops;
    rep.wall_s += alone.wall_s;
    rep.peak_rss_bytes = std::max(rep.peak_rss_bytes, alone.peak_rss_bytes);
    if (alone.jobs.size() == 1 && alone.jobs[0].complete) {
      row.alone_time_ps = alone.jobs[0].row.time_ps;
      row.alone_busbw_GBps = alone.jobs[0].row.busbw_GBps;
      if (row.alone_time_ps > 0) {
        row.slowdown =
            static_cast<double>(row.row.time_ps) / static_cast<double>(row.alone_time_ps);
      }
      continue;
    }
    if (alone.limited && alone.stop_reason.rfind("stopped at --max-events", 0) == 0) {
      alone.stop_reason = "stopped at " + cap + " during job " + row.name + " alone";
    }
    row.alone_note = "did not finish: " + alone.stop_reason;
    if (alone.interrupted || alone.limited) {
      rep.complete = false;
      rep.interrupted = alone.interrupted;
      rep.limited = alone.limited;
      rep.stop_reason = alone.stop_reason;
    }
  }
}

RunReport simulate(const Scenario& sc, const Prepared& prepared, const std::atomic<bool>* interrupt,
                   bool progress, ChromeTrace* trace, uint64_t max_events,
                   PacketEngineFactory engine, const RunHooks& hooks) {
  RunReport rep = sc.mode == "flow" ? simulate_flows(sc, prepared, interrupt, progress, max_events)
                                    : simulate_packets(sc, prepared, interrupt, progress, trace,
                                                       max_events, engine, hooks);
  check_accounted(sc, prepared, rep);
  if (!prepared.jobs.empty())
    alone_runs(sc, prepared, interrupt, progress, max_events, engine, rep);
  return rep;
}

RunReport simulate_limited(const Scenario& sc, const Prepared& prepared,
                           const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace,
                           uint64_t max_events, const std::optional<WallLimit>& wall,
                           PacketEngineFactory engine, const RunHooks& hooks) {
  if (!wall) return simulate(sc, prepared, interrupt, progress, trace, max_events, engine, hooks);
  std::atomic<bool> stop{false};
  std::jthread watchdog;  // joined on every way out, an exception from simulate() included
  const auto deadline = wall->deadline;
  watchdog = std::jthread([&, deadline](std::stop_token done) {
    std::mutex m;
    std::condition_variable_any tick;
    std::unique_lock<std::mutex> lock(m);
    while (!done.stop_requested()) {
      if (interrupt != nullptr && interrupt->load()) stop = true;
      if (std::chrono::steady_clock::now() >= deadline) {
        stop = true;
        return;
      }
      tick.wait_for(lock, done, std::chrono::milliseconds(20), [] { return false; });
    }
  });
  RunReport rep = simulate(sc, prepared, &stop, progress, trace, max_events, engine, hooks);
  watchdog.request_stop();
  watchdog.join();
  // Stopped, and not by a signal: by the deadline (in a partitioned run, possibly another
  // rank's, which reached it a moment earlier and stopped every rank at a window's end).
  if (rep.interrupted && !(interrupt != nullptr && interrupt->load())) {
    rep.interrupted = false;
    rep.limited = true;
    const std::string during = rep.stop_reason.rfind("interrupted ", 0) == 0
                                   ? rep.stop_reason.substr(std::string("interrupted ").size())
                                   : rep.stop_reason;
    rep.stop_reason = "stopped at --max-wall " + format_time(wall->max_wall_ps) + " " + during;
    for (JobRow& j : rep.jobs) {  // a job's alone run the deadline stopped says so too
      const std::string was = "interrupted during ";
      if (const size_t at = j.alone_note.find(was); at != std::string::npos) {
        j.alone_note.replace(
            at, was.size(), "stopped at --max-wall " + format_time(wall->max_wall_ps) + " during ");
      }
    }
  }
  return rep;
}

}  // namespace fabricsim
