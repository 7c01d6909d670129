#include "sim/report/gnuplot_run.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "sim/core/units.hpp"
#include "sim/pool/process_pool.hpp"

namespace fabricsim {

std::string find_gnuplot() {
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  for (;;) {
    const size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    if (dir.empty()) dir.push_back('.');
    const std::string exe = dir + "/gnuplot";
    struct stat st {};
    if (::stat(exe.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(exe.c_str(), X_OK) == 0) {
      return exe;
    }
    if (colon == std::string::npos) return "";
    start = colon + 1;
  }
}

std::string run_gnuplot(const std::string& exe, const std::filesystem::path& dir,
                        const std::string& script) {
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0)
    return std::string("cannot make a pipe: ") + std::strerror(errno);
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(err[0]);
    ::close(err[1]);
    return std::string("cannot start gnuplot: ") + std::strerror(errno);
  }
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
    }
    ::dup2(err[1], STDERR_FILENO);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execl(exe.c_str(), "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err[1]);
  std::string message;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(err[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (message.size() < 65536) message.append(buf, static_cast<size_t>(n));
  }
  ::close(err[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  std::string first;
  std::istringstream lines(message);
  for (std::string line; std::getline(lines, line);) {
    if (!trim_blanks(line).empty()) {
      first = trim_blanks(line);
      break;
    }
  }
  const std::string how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                            : describe_wait_status("gnuplot", status);
  return how + (first.empty() ? "" : ": " + first);
}

}  // namespace fabricsim
