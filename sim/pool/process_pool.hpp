// Tasks run in child processes, at most N at once: each child is fork()ed from the caller (it
// has everything the caller loaded), runs one task and sends its result back through a pipe
// (sim/pool/pipe_codec.hpp), then exits. The caller collects the results as the children end;
// a child that dies without a result is told with how it ended. Used by `fabricsim sweep
// --jobs N` for its points.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace fabricsim {

/// Why process `who` ended without a result, from its waitpid() status: "WHO was killed by
/// signal 9 (Killed)", "WHO exited with code 3 without a result".
std::string describe_wait_status(const std::string& who, int status);

/// The CPUs this process may run on: the online ones, fewer under a CPU affinity mask.
int64_t usable_cpus();

/// "41 s", "2 min", "3 h": a wall-clock duration for a progress line.
std::string rough_duration(double s);

/// What a task's process sends back: `data` through the pipe, then it exits with `exit_code`
/// (or with ProcessPool::failure_exit_code when `data` could not be sent).
struct TaskMessage {
  std::string data;
  int exit_code = 0;
};

/// A task whose process has ended.
struct FinishedTask {
  size_t index = 0;     ///< 0-based task
  std::string data;     ///< all it sent (whole, partial or nothing)
  int status = 0;       ///< its waitpid() status
  bool killed = false;  ///< the pool SIGKILLed it for not stopping within stop_grace
  std::chrono::steady_clock::time_point start;  ///< when its process was started
};

/// What run_process_pool runs and whom it tells.
struct ProcessPool {
  size_t tasks = 0;
  int64_t jobs = 1;  ///< processes at once (fewer when the system refuses more)
  /// When it becomes true no task starts, the running ones are sent SIGINT and waited for.
  const std::atomic<bool>* interrupt = nullptr;
  /// Past it no task starts (the running ones are expected to stop themselves at it).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::string deadline_name = "the deadline";  ///< for messages: "--max-wall"
  /// How long a process may take to stop after the interrupt or the deadline before it is
  /// SIGKILLed (a stopped or hung process would otherwise hold the pool forever).
  std::chrono::seconds stop_grace{5};
  bool progress = false;             ///< draw "NAME: D/N TASKS done, R running, …" on stderr
  std::string progress_name;         ///< NAME: "sweep"
  std::string tasks_name = "tasks";  ///< TASKS: "points"
  std::string log_prefix;            ///< messages on stderr start "PREFIX: ": "fabricsim sweep"
  /// The exit code of a child that could not send its message (or whose task threw).
  int failure_exit_code = 1;

  /// True when task i has its result already (it is counted done and not run).
  std::function<bool(size_t)> done_already;
  /// Runs task i in the child process; what it returns is sent back. An exception leaves the
  /// child with failure_exit_code and no message.
  std::function<TaskMessage(size_t)> run_in_child;
  /// No process could be started for task i (and none is running): `failure` says why.
  std::function<void(size_t, const std::string& failure)> cannot_start;
  /// Task i's process has ended (called in the order they end).
  std::function<void(const FinishedTask&)> finished;
  /// Task i for messages: "point 3/8 (ecn.kmin=5KB)".
  std::function<std::string(size_t)> describe;
};

/// Runs pool.tasks in child processes, at most pool.jobs at once, started in index order, calling
/// pool.finished as each ends. When pool.interrupt becomes true it starts no more, forwards
/// SIGINT to the running ones and waits for them; past pool.deadline it starts no more either.
/// One that has not stopped pool.stop_grace after either is SIGKILLed (and said on stderr).
/// When a process cannot be started while others run (a process limit), the pool carries on
/// with those (said once on stderr). Returns how many tasks were started or skipped (tasks 0
/// to that number - 1 have been reported).
size_t run_process_pool(ProcessPool pool);

}  // namespace fabricsim
