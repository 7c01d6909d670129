#include "sim/pool/process_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "sim/pool/pipe_codec.hpp"

namespace fabricsim {
namespace {

/// A task running in a process of its own.
struct RunningTask {
  pid_t pid = -1;
  int fd = -1;       ///< read end of the pipe its result comes through
  size_t index = 0;  ///< 0-based task
  std::string data;  ///< what it has sent so far
  std::chrono::steady_clock::time_point start;
  bool killed = false;  ///< SIGKILLed for not stopping within stop_grace
};

/// Starts task `index` in a child process (fork: the child has everything the caller loaded).
/// The child runs it, sends its message through a pipe and exits with the message's code.
/// Returns "" or why the process could not be started.
std::string start_task(const ProcessPool& pool, size_t index, std::vector<RunningTask>& running) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  std::cout.flush();  // the child must not write the parent's buffered output again
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("fork: ") + std::strerror(e);
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (const RunningTask& r : running) ::close(r.fd);
    int code = pool.failure_exit_code;
    try {
      const TaskMessage m = pool.run_in_child(index);
      if (write_all(fds[1], m.data)) code = m.exit_code;
    } catch (...) {
    }
    ::_exit(code);  // no atexit handlers, no flush of buffers inherited from the parent
  }
  ::close(fds[1]);
  RunningTask r;
  r.pid = pid;
  r.fd = fds[0];
  r.index = index;
  r.start = std::chrono::steady_clock::now();
  running.push_back(std::move(r));
  return "";
}

}  // namespace

std::string describe_wait_status(const std::string& who, int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return who + " was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (") + name + ")" : std::string());
  }
  if (WIFEXITED(status)) {
    return who + " exited with code " + std::to_string(WEXITSTATUS(status)) + " without a result";
  }
  return who + " ended without a result";
}

int64_t usable_cpus() {
  int64_t n = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    n = std::min<int64_t>(n > 0 ? n : CPU_SETSIZE, CPU_COUNT(&set));
  }
  return std::max<int64_t>(1, n);
}

std::string rough_duration(double s) {
  if (s < 100) return std::to_string(static_cast<int64_t>(std::lround(s))) + " s";
  if (s < 100 * 60) return std::to_string(static_cast<int64_t>(std::lround(s / 60))) + " min";
  return std::to_string(static_cast<int64_t>(std::lround(s / 3600))) + " h";
}

size_t run_process_pool(ProcessPool pool) {
  const size_t tasks = pool.tasks;
  int64_t jobs = pool.jobs;
  const std::atomic<bool>* interrupt = pool.interrupt;
  std::vector<RunningTask> running;
  size_t next = 0, done = 0;
  bool forwarded = false;
  const auto start = std::chrono::steady_clock::now();
  auto drawn = start - std::chrono::seconds(10);
  const auto draw = [&](bool final) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    std::string line = pool.progress_name + ": " + std::to_string(done) + "/" +
                       std::to_string(tasks) + " " + pool.tasks_name + " done, " +
                       std::to_string(running.size()) + " running, elapsed " +
                       rough_duration(elapsed);
    if (!final && done > 0 && done < tasks) {
      line += ", ETA ~" + rough_duration(elapsed * static_cast<double>(tasks - done) /
                                         static_cast<double>(done));
    }
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
    std::fflush(stderr);
    drawn = now;
  };
  bool noted = false, changed = true;
  std::optional<std::chrono::steady_clock::time_point> stopping_since;
  for (;;) {
    const bool interrupted = interrupt != nullptr && interrupt->load();
    const auto now = std::chrono::steady_clock::now();
    const bool stop = interrupted || (pool.deadline && now >= *pool.deadline);
    if (interrupted && !forwarded) {
      for (const RunningTask& r : running) ::kill(r.pid, SIGINT);
      forwarded = true;
    }
    if (stop && !stopping_since) stopping_since = now;
    if (stopping_since && now - *stopping_since >= pool.stop_grace) {
      for (RunningTask& r : running) {
        if (r.killed) continue;
        ::kill(r.pid, SIGKILL);  // also ends a stopped (SIGSTOP) process
        r.killed = true;
        std::cerr << pool.log_prefix << ": " << pool.describe(r.index) << " did not stop within "
                  << pool.stop_grace.count() << " s of "
                  << (interrupted ? "the interrupt" : pool.deadline_name) << ": killed\n";
      }
    }
    while (!stop && next < tasks && static_cast<int64_t>(running.size()) < jobs) {
      if (pool.done_already(next)) {  // tabulated already, not run
        ++next;
        ++done;
        continue;
      }
      const std::string failure = start_task(pool, next, running);
      if (failure.empty()) {
        ++next;
        continue;
      }
      if (running.empty()) {  // not even one: the task fails, the pool goes on
        const size_t index = next;
        ++next;
        ++done;
        pool.cannot_start(index, failure);
        continue;
      }
      if (!noted) {  // e.g. a process limit: carry on with the processes that run
        std::cerr << pool.log_prefix << ": note: cannot start more than " << running.size() << " "
                  << pool.tasks_name << " at once (" << failure << ")\n";
        noted = true;
      }
      jobs = static_cast<int64_t>(running.size());
    }
    if (running.empty()) break;
    if (pool.progress &&
        (changed || std::chrono::steady_clock::now() - drawn > std::chrono::seconds(1))) {
      draw(false);  // after the finished tasks' successors started
      changed = false;
    }

    std::vector<pollfd> fds;
    for (const RunningTask& r : running) fds.push_back(pollfd{r.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 250);  // EINTR: a signal; look again
    for (size_t k = running.size(); ready > 0 && k-- > 0;) {
      if (fds[k].revents == 0) continue;
      RunningTask& r = running[k];
      char buf[65536];
      const ssize_t n = ::read(r.fd, buf, sizeof buf);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n > 0) {
        r.data.append(buf, static_cast<size_t>(n));
        continue;
      }
      // End of the pipe: the child has exited (or is exiting).
      ::close(r.fd);
      FinishedTask f;
      while (::waitpid(r.pid, &f.status, 0) < 0 && errno == EINTR) {
      }
      f.index = r.index;
      f.data = std::move(r.data);
      f.killed = r.killed;
      f.start = r.start;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      ++done;
      pool.finished(f);
      changed = true;
    }
  }
  if (pool.progress) draw(true);
  return next;
}

}  // namespace fabricsim
