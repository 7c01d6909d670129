#include "sim/sweep/sweep_parallel.hpp"

#include <chrono>
#include <exception>

#include "sim/pool/process_pool.hpp"
#include "sim/sweep/sweep_point.hpp"

namespace fabricsim {

int64_t run_parallel(std::vector<Scenario>& scenarios, const std::vector<SweepAxis>& axes,
                     const std::vector<std::vector<std::string>>& values, const RunOptions& opts,
                     const std::atomic<bool>* interrupt, const std::optional<WallLimit>& wall,
                     int64_t jobs, bool progress, std::vector<std::optional<PointResult>>& results,
                     const std::function<void()>& on_finish) {
  const size_t points = scenarios.size();
  ProcessPool pool;
  pool.tasks = points;
  pool.jobs = jobs;
  pool.interrupt = interrupt;
  if (wall) pool.deadline = wall->deadline;
  pool.deadline_name = "--max-wall";
  pool.stop_grace = std::chrono::seconds(kStopGraceSeconds);
  pool.progress = progress;
  pool.progress_name = "sweep";
  pool.tasks_name = "points";
  pool.log_prefix = "fabricsim sweep";
  pool.failure_exit_code = kExitInternal;
  pool.done_already = [&](size_t i) { return results[i].has_value(); };
  pool.run_in_child = [&](size_t index) {
    const auto i = static_cast<int64_t>(index);
    try {
      const PointResult r = run_point(scenarios[index], i, static_cast<int64_t>(points),
                                      values[index], opts, interrupt, false, wall);
      return TaskMessage{encode_point(r), exit_code_of(r.outcome)};
    } catch (const std::exception& e) {  // an internal error outside the simulation
      return TaskMessage{encode_point(failed_point(i, values[index], e.what())), kExitInternal};
    }
  };
  pool.cannot_start = [&](size_t next, const std::string& failure) {
    results[next] = failed_point(static_cast<int64_t>(next), values[next],
                                 "cannot start a process for the point: " + failure);
    on_finish();
  };
  pool.describe = [&](size_t index) {
    return "point " + std::to_string(index + 1) + "/" + std::to_string(points) + " (" +
           describe_values(axes, values[index]) + ")";
  };
  pool.finished = [&](const FinishedTask& r) {
    std::optional<PointResult> result = decode_point(r.data);
    const auto index = static_cast<int64_t>(r.index);
    if (!result || result->point != index + 1) {
      // Died without its row: whatever it wrote is partial.
      remove_point_outputs(opts, index, static_cast<int64_t>(points));
      if (r.killed) {  // by the sweep, stopping: tabulated as stopped, with no results
        const bool by_interrupt = interrupt != nullptr && interrupt->load();
        result = stopped_point(index, values[r.index],
                               by_interrupt ? Outcome::kInterrupted : Outcome::kLimited);
      } else {
        result = failed_point(index, values[r.index],
                              describe_wait_status("the point's process", r.status));
      }
      result->wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
    } else if (result->outcome == Outcome::kInterrupted &&
               !(interrupt != nullptr && interrupt->load())) {
      // A signal to the point's process alone: the sweep was not interrupted. Its row is
      // failed, so its partial files go as a dead process's do.
      remove_point_outputs(opts, index, static_cast<int64_t>(points));
      result = failed_point(index, values[r.index],
                            "the point's process was interrupted by a signal the sweep did "
                            "not send (SIGINT, SIGTERM, SIGHUP or SIGQUIT to it alone)");
    }
    results[r.index] = std::move(result);
    on_finish();
  };
  return static_cast<int64_t>(run_process_pool(std::move(pool)));
}

}  // namespace fabricsim
