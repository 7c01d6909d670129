// The hold model (Vaucher & Duval 1975), the classic benchmark for pending-event sets.
//
// The queue is filled with N pending events; from then on every executed event schedules exactly
// one new event at now + a random increment, so the queue size stays N and each "hold" is one
// pop plus one push. The first N holds are a warm-up (untimed), so the timed part sees the
// steady-state distribution of pending times rather than the initial fill. The timed part runs
// through Simulator::run, so it measures the engine as components use it: heap pop, handler
// dispatch through the trampoline, heap push, plus drawing one random increment.
//
// Usage: bench_hold_model [--events M] [--dist exp|uniform] [--seed S]
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "sim/core/rng.hpp"
#include "sim/core/simulator.hpp"
#include "sim/core/time.hpp"

namespace {

using fabricsim::RngStream;
using fabricsim::SimTime;
using fabricsim::Simulator;
using fabricsim::StopReason;

enum class Distribution { kExponential, kUniform };

constexpr int64_t kMeanIncrementPs = 1'000'000;  // 1 us; the mean does not affect the cost
constexpr uint64_t kDefaultEvents = 40'000'000;  // timed holds per N (~30 s in all, see README)
constexpr int64_t kSizes[] = {1'000, 10'000, 100'000, 1'000'000};

struct Options {
  uint64_t events = kDefaultEvents;
  Distribution dist = Distribution::kExponential;
  uint64_t seed = 1;
};

/// N pending events; each executed event schedules one more.
class HoldModel {
 public:
  HoldModel(int64_t n, Distribution dist, uint64_t seed) : rng_(seed, "bench.hold"), dist_(dist) {
    for (int64_t i = 0; i < n; ++i) schedule();
  }

  /// Runs `holds` events; returns the number actually executed (always `holds`).
  uint64_t run(uint64_t holds) {
    const uint64_t before = sim_.events_executed();
    const StopReason r = sim_.run(SimTime::max(), holds);
    if (r != StopReason::kEventLimit) {
      std::fprintf(stderr, "unexpected stop: %s\n", fabricsim::to_string(r));
    }
    return sim_.events_executed() - before;
  }
  size_t pending() const { return sim_.pending_events(); }

 private:
  void on_event(uint64_t) { schedule(); }
  void schedule() { sim_.after<&HoldModel::on_event>(SimTime(increment_ps()), kLp, this, 0); }
  int64_t increment_ps() {
    if (dist_ == Distribution::kUniform) {
      return static_cast<int64_t>(rng_.next() % (2 * kMeanIncrementPs));  // [0, 2 × mean)
    }
    // Exponential by inversion; 1 - u is in (0, 1], so the log is finite.
    return static_cast<int64_t>(-std::log(1.0 - rng_.uniform01()) * kMeanIncrementPs);
  }

  static constexpr fabricsim::LpId kLp{0};  // one logical process: the model has no nodes
  Simulator sim_;
  RngStream rng_;
  Distribution dist_;
};

void print_usage(std::FILE* out) {
  std::fprintf(out,
               "usage: bench_hold_model [--events M] [--dist exp|uniform] [--seed S]\n"
               "  --events M   timed holds per queue size N (default %llu)\n"
               "  --dist D     increment distribution: exp (default) or uniform\n"
               "  --seed S     RNG seed (default 1)\n",
               static_cast<unsigned long long>(kDefaultEvents));
}

bool parse_u64(std::string_view s, uint64_t& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && !s.empty();
}

/// Strict: an unknown option, a missing value or a malformed number is an error.
bool parse_args(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      print_usage(stdout);
      std::exit(0);
    }
    if (arg != "--events" && arg != "--seed" && arg != "--dist") {
      std::fprintf(stderr, "error: unknown option '%s'\n", argv[i]);
      return false;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "error: %s needs a value\n", argv[i]);
      return false;
    }
    const std::string_view value = argv[++i];
    if (arg == "--events") {
      if (!parse_u64(value, opt.events) || opt.events == 0) {
        std::fprintf(stderr, "error: --events wants a positive integer, got '%s'\n", argv[i]);
        return false;
      }
    } else if (arg == "--seed") {
      if (!parse_u64(value, opt.seed)) {
        std::fprintf(stderr, "error: --seed wants an unsigned integer, got '%s'\n", argv[i]);
        return false;
      }
    } else {  // --dist
      if (value == "exp") {
        opt.dist = Distribution::kExponential;
      } else if (value == "uniform") {
        opt.dist = Distribution::kUniform;
      } else {
        std::fprintf(stderr, "error: --dist wants exp or uniform, got '%s'\n", argv[i]);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse_args(argc, argv, opt)) {
    print_usage(stderr);
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  std::printf(
      "hold model: %llu timed holds per N after N warm-up holds; %s increments, mean %lld "
      "ps; seed %llu\n\n",
      static_cast<unsigned long long>(opt.events),
      opt.dist == Distribution::kExponential ? "exponential" : "uniform",
      static_cast<long long>(kMeanIncrementPs), static_cast<unsigned long long>(opt.seed));
  std::printf("%10s  %12s  %10s  %14s  %10s\n", "N", "events", "wall (s)", "events/s", "ns/event");
  for (const int64_t n : kSizes) {
    HoldModel model(n, opt.dist, opt.seed);
    model.run(static_cast<uint64_t>(n));  // warm-up: reach the steady state
    const auto start = Clock::now();
    const uint64_t executed = model.run(opt.events);
    const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    if (model.pending() != static_cast<size_t>(n)) {
      std::fprintf(stderr, "error: %zu events pending, expected %lld\n", model.pending(),
                   static_cast<long long>(n));
      return 1;
    }
    std::printf("%10lld  %12llu  %10.3f  %14.0f  %10.1f\n", static_cast<long long>(n),
                static_cast<unsigned long long>(executed), wall_s,
                static_cast<double>(executed) / wall_s,
                wall_s * 1e9 / static_cast<double>(executed));
    std::fflush(stdout);
  }
  return 0;
}
