// fabricsim-phold: the PHOLD benchmark (Fujimoto, "Performance of Time Warp under synthetic
// workloads", 1990) on fabricsim's engine, sequentially (1 rank) or over MPI with WindowSync.
//
// N LPs start with M tokens each. An LP receiving a token at time t folds (t, token) into its
// history digest and sends the token on to a destination drawn from its own random stream, at
// t + lookahead + a uniform extra delay in [0, 2 * mean), a multiple of --grid (a coarse grid
// makes many events fall on the same picosecond, so the tie order is put to the test). Each LP's
// digest is a hash chain over the events it executed, in order, so two runs agree on it only if
// every LP saw the same events in the same order, ties at equal picoseconds included. The output
// file (rank 0) lists every LP's event count and digest; it must be byte-identical for any number
// of ranks.
//
//   fabricsim-phold --lps 1024 --tokens 4 --end 10us --lookahead 100ns --mean 50ns --seed 1
//       --out phold.txt
//   mpirun -np 2 fabricsim-phold ... --out phold-2.txt      (the same bytes)
//
// stderr gets the performance line: events, windows, remote events, wall time, events/s in all
// and per rank.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/simulator.hpp"
#include "sim/core/units.hpp"
#include "sim/parallel/window_sync.hpp"

namespace fabricsim {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Options {
  uint32_t lps = 1024;
  uint32_t tokens = 4;
  int64_t end_ps = 10'000'000;     // 10 us
  int64_t lookahead_ps = 100'000;  // 100 ns
  int64_t mean_ps = 50'000;        // 50 ns
  int64_t grid_ps = 1;             // times are multiples of it: a coarse grid makes ties
  uint64_t seed = 1;
  std::string out;
};

class Phold {
 public:
  Phold(Simulator& sim, const Options& o, WindowSync* sync)
      : sim_(sim), o_(o), sync_(sync), state_(o.lps) {
    for (uint32_t lp = 0; lp < o.lps; ++lp) {
      uint64_t s = o.seed * 0x2545f4914f6cdd1dULL + lp;
      state_[lp].rng = splitmix64(s);
    }
    if (sync_ != nullptr) rx_ = sync_->add_receiver(this, &Phold::receive);
  }

  /// Each LP's first tokens, pushed by the rank that owns it (set-up: the key is the LP's own).
  void start() {
    for (uint32_t lp = 0; lp < o_.lps; ++lp) {
      if (sync_ != nullptr && !sync_->local(LpId(lp))) continue;
      for (uint32_t k = 0; k < o_.tokens; ++k) {
        const auto slots =
            static_cast<uint64_t>(std::max<int64_t>(1, o_.lookahead_ps / o_.grid_ps));
        const int64_t t = static_cast<int64_t>((lp * 7919ULL + k * 104729ULL) % slots) * o_.grid_ps;
        sim_.at<&Phold::on_token>(SimTime(t), LpId(lp), this, uint64_t{lp} * o_.tokens + k);
      }
    }
  }

  struct LpState {
    uint64_t rng = 0;
    uint64_t digest = 0xcbf29ce484222325ULL;
    uint64_t events = 0;
  };
  const std::vector<LpState>& state() const { return state_; }

 private:
  void on_token(uint64_t token) {
    const uint32_t lp = sim_.current_lp().value;
    LpState& s = state_[lp];
    uint64_t fold = s.digest ^ static_cast<uint64_t>(sim_.now_ps()) ^ (token << 1);
    s.digest = splitmix64(fold);
    ++s.events;
    const auto dst = static_cast<uint32_t>(splitmix64(s.rng) % o_.lps);
    const auto slots = static_cast<uint64_t>(std::max<int64_t>(1, 2 * o_.mean_ps / o_.grid_ps));
    const int64_t delay =
        o_.lookahead_ps + static_cast<int64_t>(splitmix64(s.rng) % slots) * o_.grid_ps;
    const SimTime at = sim_.now() + SimTime(delay);
    if (sync_ == nullptr || sync_->local(LpId(dst))) {
      sim_.at<&Phold::on_token>(at, LpId(dst), this, token);
    } else {
      sync_->send(rx_, at, LpId(dst), &token, sizeof token);
    }
  }

  static void receive(void* obj, Simulator& sim, int64_t time_ps, uint64_t key, LpId lp,
                      const std::byte* data, uint32_t size) {
    uint64_t token = 0;
    if (size != sizeof token) throw std::logic_error("phold: a token of the wrong size");
    std::memcpy(&token, data, sizeof token);
    sim.at_keyed<&Phold::on_token>(SimTime(time_ps), key, lp, static_cast<Phold*>(obj), token);
  }

  Simulator& sim_;
  const Options& o_;
  WindowSync* sync_;
  uint16_t rx_ = 0;
  std::vector<LpState> state_;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(a + ": missing value");
    const std::string v = argv[++i];
    if (a == "--lps") {
      o.lps = static_cast<uint32_t>(std::stoul(v));
    } else if (a == "--tokens") {
      o.tokens = static_cast<uint32_t>(std::stoul(v));
    } else if (a == "--end") {
      o.end_ps = parse_time_ps(v);
    } else if (a == "--lookahead") {
      o.lookahead_ps = parse_time_ps(v);
    } else if (a == "--mean") {
      o.mean_ps = parse_time_ps(v);
    } else if (a == "--grid") {
      o.grid_ps = parse_time_ps(v);
    } else if (a == "--seed") {
      o.seed = std::stoull(v);
    } else if (a == "--out") {
      o.out = v;
    } else {
      throw std::invalid_argument("unknown option " + a);
    }
  }
  if (o.lps == 0 || o.tokens == 0 || o.lookahead_ps <= 0 || o.mean_ps <= 0 || o.grid_ps <= 0 ||
      o.end_ps < 0) {
    throw std::invalid_argument("expected --lps, --tokens, --lookahead, --mean and --grid above 0");
  }
  return o;
}

int main_mpi(int argc, char** argv) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Options o = parse(argc, argv);

  Simulator sim;
  std::optional<WindowSync> sync;
  if (ranks > 1) {  // contiguous blocks of LPs per rank
    std::vector<int> rank_of_lp(o.lps);
    for (uint32_t lp = 0; lp < o.lps; ++lp) {
      rank_of_lp[lp] = static_cast<int>(uint64_t{lp} * static_cast<uint64_t>(ranks) / o.lps);
    }
    sync.emplace(sim, MPI_COMM_WORLD, std::move(rank_of_lp), o.lookahead_ps);
  }
  Phold model(sim, o, sync ? &*sync : nullptr);
  model.start();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  if (sync) {
    sync->run(SimTime(o.end_ps));
  } else {
    sim.run(SimTime(o.end_ps));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Gather every LP's (events, digest) on rank 0: each LP is filled on exactly one rank.
  std::vector<uint64_t> mine(2 * size_t{o.lps}, 0), all(2 * size_t{o.lps}, 0);
  for (uint32_t lp = 0; lp < o.lps; ++lp) {
    if (sync && !sync->local(LpId(lp))) continue;
    mine[2 * lp] = model.state()[lp].events;
    mine[2 * lp + 1] = model.state()[lp].digest;
  }
  MPI_Reduce(mine.data(), all.data(), static_cast<int>(mine.size()), MPI_UINT64_T, MPI_SUM, 0,
             MPI_COMM_WORLD);
  const uint64_t local_events = sim.events_executed();
  uint64_t events = 0;
  MPI_Reduce(&local_events, &events, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  double slowest = 0;
  MPI_Reduce(&wall, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    if (!o.out.empty()) {
      std::ofstream f(o.out);
      f << "# phold lps " << o.lps << " tokens " << o.tokens << " end_ps " << o.end_ps
        << " lookahead_ps " << o.lookahead_ps << " mean_ps " << o.mean_ps << " grid_ps "
        << o.grid_ps << " seed " << o.seed << "\n# lp events digest\n";
      for (uint32_t lp = 0; lp < o.lps; ++lp) {
        char line[64];
        std::snprintf(line, sizeof line, "%u %llu %016llx\n", lp,
                      static_cast<unsigned long long>(all[2 * lp]),
                      static_cast<unsigned long long>(all[2 * lp + 1]));
        f << line;
      }
      f << "# events " << events << "\n";
      if (!f) throw std::runtime_error("cannot write " + o.out);
    }
    std::fprintf(stderr,
                 "phold: %d rank%s, %llu events, %llu windows, %.3f s, %.2f M events/s (%.2f M "
                 "per rank)\n",
                 ranks, ranks == 1 ? "" : "s", static_cast<unsigned long long>(events),
                 static_cast<unsigned long long>(sync ? sync->windows() : 0), slowest,
                 static_cast<double>(events) / slowest / 1e6,
                 static_cast<double>(events) / slowest / 1e6 / ranks);
  }
  if (sync) {
    std::fprintf(stderr, "phold: rank %d: %llu events, %llu sent to other ranks, %llu received\n",
                 rank, static_cast<unsigned long long>(local_events),
                 static_cast<unsigned long long>(sync->remote_sent()),
                 static_cast<unsigned long long>(sync->remote_received()));
  }
  return 0;
}

}  // namespace
}  // namespace fabricsim

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  try {
    code = fabricsim::main_mpi(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabricsim-phold: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return code;
}
