// The process pool (sim/pool/process_pool.hpp) and its pipe codec (sim/pool/pipe_codec.hpp):
// messages read back exactly, truncated ones are told apart, and each task's process reports
// its message, its exit code or how it died.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/pool/pipe_codec.hpp"
#include "sim/pool/process_pool.hpp"

namespace fabricsim {
namespace {

TEST_CASE("pipe codec: integers, doubles and strings read back exactly, in order") {
  std::string m;
  put_u64(m, 0x0102030405060708ULL);
  put_f64(m, 0.1);  // not exact in binary: its bit pattern must survive
  put_str(m, std::string("a\0b", 3));
  put_str(m, "");
  // 8 bytes each for the two numbers, 8 + 3 and 8 + 0 for the strings.
  CHECK(m.size() == 8 + 8 + 11 + 8);
  PipeReader in(m);
  CHECK(in.u64() == 0x0102030405060708ULL);
  CHECK(in.f64() == 0.1);
  CHECK(in.str() == std::string("a\0b", 3));
  CHECK(in.str().empty());
  CHECK(in.ok());
  CHECK(in.at_end());
}

TEST_CASE("pipe codec: a truncated message is bad, and reads past its end give nothing") {
  std::string m;
  put_str(m, "hello");
  m.resize(m.size() - 1);  // the writer died one byte short
  PipeReader in(m);
  CHECK(in.str().empty());
  CHECK_FALSE(in.ok());
  CHECK(in.u64() == 0);  // once bad, stays bad
  const std::string nothing;
  PipeReader empty(nothing);
  CHECK(empty.u64() == 0);
  CHECK_FALSE(empty.ok());
}

TEST_CASE("describe_wait_status: a signal by number and name, an exit by its code") {
  // waitpid() statuses as the kernel encodes them: signal in the low 7 bits, exit code << 8.
  CHECK(describe_wait_status("the point's process", SIGKILL) ==
        "the point's process was killed by signal 9 (Killed)");
  CHECK(describe_wait_status("gnuplot", 3 << 8) == "gnuplot exited with code 3 without a result");
}

TEST_CASE("process pool: every task runs once in a child, its message and exit code come back") {
  std::map<size_t, FinishedTask> finished;
  ProcessPool pool;
  pool.tasks = 6;
  pool.jobs = 2;
  pool.failure_exit_code = 7;
  pool.done_already = [](size_t i) { return i == 0; };  // task 0 has its result: not run
  pool.run_in_child = [](size_t i) -> TaskMessage {
    if (i == 3) ::raise(SIGKILL);                       // dies without a message
    if (i == 4) throw std::runtime_error("no result");  // exits with failure_exit_code
    return {"task " + std::to_string(i), static_cast<int>(10 + i)};
  };
  pool.cannot_start = [](size_t, const std::string&) { FAIL("every process starts"); };
  pool.describe = [](size_t i) { return "task " + std::to_string(i); };
  pool.finished = [&](const FinishedTask& t) { finished[t.index] = t; };
  CHECK(run_process_pool(pool) == 6);
  REQUIRE(finished.size() == 5);
  CHECK_FALSE(finished.count(0));
  for (const size_t i : {1, 2, 5}) {
    CHECK(finished[i].data == "task " + std::to_string(i));
    CHECK(WIFEXITED(finished[i].status));
    CHECK(WEXITSTATUS(finished[i].status) == static_cast<int>(10 + i));
    CHECK_FALSE(finished[i].killed);
  }
  CHECK(finished[3].data.empty());
  CHECK(describe_wait_status("task 3", finished[3].status) ==
        "task 3 was killed by signal 9 (Killed)");
  CHECK(finished[4].data.empty());
  CHECK(WEXITSTATUS(finished[4].status) == 7);
}

TEST_CASE("process pool: an interrupt set before the start starts no task") {
  std::atomic<bool> interrupt{true};
  ProcessPool pool;
  pool.tasks = 3;
  pool.jobs = 3;
  pool.interrupt = &interrupt;
  pool.done_already = [](size_t) { return false; };
  pool.run_in_child = [](size_t) { return TaskMessage{}; };
  pool.finished = [](const FinishedTask&) { FAIL("no task runs"); };
  CHECK(run_process_pool(pool) == 0);
}

}  // namespace
}  // namespace fabricsim
