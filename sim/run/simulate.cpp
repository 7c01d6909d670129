// simulate(): the flow or the packet model, then the accounting check; simulate_limited(): the
// same under a wall-clock limit, watched by a thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "sim/core/units.hpp"
#include "sim/run/run.hpp"
#include "sim/run/run_parts.hpp"

namespace fabricsim {

RunReport simulate(const Scenario& sc, const Prepared& prepared, const std::atomic<bool>* interrupt,
                   bool progress, ChromeTrace* trace, uint64_t max_events,
                   PacketEngineFactory engine, const RunHooks& hooks) {
  RunReport rep = sc.mode == "flow" ? simulate_flows(sc, prepared, interrupt, progress, max_events)
                                    : simulate_packets(sc, prepared, interrupt, progress, trace,
                                                       max_events, engine, hooks);
  check_accounted(sc, prepared, rep);
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
  }
  return rep;
}

}  // namespace fabricsim
