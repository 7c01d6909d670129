// fabricsim: command-line entry point (DESIGN.md §4). Parses arguments with
// Boost.Program_options and maps errors to exit codes: 2 bad input, 74 an output file not
// written, 1 internal error (out of memory: 2 or 1, see main_guarded).
#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "calibration/parse_error.hpp"
#include "sim/cli/calibrate.hpp"
#include "sim/cli/params.hpp"
#include "sim/cli/run.hpp"
#include "sim/cli/sweep.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/report/output_file.hpp"

#ifdef FABRICSIM_HAVE_MPI
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "sim/parallel/mpi_engine.hpp"
#endif

namespace po = boost::program_options;
using namespace fabricsim;

namespace {

std::atomic<bool> g_interrupted{false};   ///< lock-free: set from the signal handler
volatile std::sig_atomic_t g_signal = 0;  ///< the signal that set it
int g_mpi_ranks = 1;                      ///< ranks of the MPI job this process is one of (1: none)
int g_mpi_rank = 0;
bool g_internal_error = false;        ///< main_guarded caught an unexpected exception
std::ostream g_null_stream(nullptr);  ///< discards (messages other ranks leave to rank 0)
extern "C" void on_signal(int sig) {
  g_signal = sig;
  g_interrupted.store(true);
}

/// The signals that stop a run, a sweep or a calibration cleanly (exit 130, what finished
/// written): Ctrl-C, a kill, a closed terminal (SIGHUP), Ctrl-\ (SIGQUIT).
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

/// Installed first thing in main, before the options are read, so that a signal at any moment
/// (a job scheduler's SIGTERM right after the start) is remembered rather than fatal: `run`
/// then stops before its simulation with a results.json saying so. Under mpirun, also SIGUSR1:
/// OpenMPI forwards it to the ranks, where Ctrl-C and SIGTERM on mpirun never arrive (it kills
/// them a second later, before they can write).
void install_stop_handlers(bool mpi) {
  for (const int sig : kStopSignals) std::signal(sig, on_signal);
  if (mpi) std::signal(SIGUSR1, on_signal);
  // A parent may have started us with these blocked (the mask survives exec): unblocked, one
  // already pending is delivered now, to the handler.
  sigset_t stop;
  sigemptyset(&stop);
  for (const int sig : kStopSignals) sigaddset(&stop, sig);
  if (mpi) sigaddset(&stop, SIGUSR1);
  sigprocmask(SIG_UNBLOCK, &stop, nullptr);
}

/// For commands that do not look at g_interrupted (validate, topo): the signals act as if no
/// handler had been installed, one that came already included.
void let_signals_stop() {
  for (const int sig : kStopSignals) std::signal(sig, SIG_DFL);
  if (g_signal != 0) std::raise(g_signal);
}

constexpr const char* kUsage =
    "usage: fabricsim COMMAND SCENARIO.yaml [options]\n"
    "commands:\n"
    "  run SCENARIO.yaml [--set KEY=VALUE]... [--out DIR] [--seed N] [--trace-events N]\n"
    "        [--mode packet|flow] [--max-wall TIME] [--max-events N] [--flows csv|gz|none]\n"
    "      simulate the scenario's workload; print the nccl-tests table and a summary;\n"
    "      --max-wall / --max-events stop it cleanly (exit 124) with what completed;\n"
    "      --mode flow (= --set mode=flow) shares links between max-min fair flows instead of\n"
    "      simulating packets: fast at 10,000s of GPUs, blind to queues, PFC, ECN and drops;\n"
    "      --out writes results.json, perf.json, ports.csv, queues.csv, flows.csv and\n"
    "      trace.json (Chrome trace events, at most --trace-events N, default 200000) to DIR,\n"
    "      and perftest.txt for a scenario with a perftest section;\n"
    "      --flows gz writes flows.csv.gz instead (gzip), none leaves it out;\n"
    "      under `mpirun -np N` the packet model runs partitioned over N ranks and writes the\n"
    "      same files, byte for byte; SIGUSR1 to mpirun stops it as Ctrl-C does a run\n"
    "      (docs/mpi.md)\n"
    "  validate SCENARIO.yaml [--set KEY=VALUE]... [--mode packet|flow]   check the scenario\n"
    "      without running it\n"
    "  topo SCENARIO.yaml [--set KEY=VALUE]... [--dot FILE] [--json] [--partitions N]\n"
    "        [--partition-method auto|topology|metis]\n"
    "      describe the fabric; --partitions N splits it over N ranks of a parallel run and\n"
    "      prints per part nodes, hosts and ports, the cut links, the lookahead and imbalance\n"
    "  sweep SCENARIO.yaml --vary KEY=V1,V2,... [--vary ...] [--set KEY=VALUE]... [--seed N]\n"
    "        [--out DIR [--report]] [--jobs N] [--max-wall TIME] [--max-events N]\n"
    "        [--flows csv|gz|none]\n"
    "      run the scenario once per point of the --vary lists' cartesian product (the first\n"
    "      --vary outermost; at most 10000 points), each as `run` would, --jobs N at once in\n"
    "      child processes (default: one per CPU; 1 = one after another);\n"
    "      KEY is any --set path, values split on commas outside [] and {} (pfc.priorities=\n"
    "      [3],[3,4] is two values); every point is checked before any runs; prints a table of\n"
    "      busbw, queues, PFC/ECN/CNP counters, drops, FCT and simulated time per point;\n"
    "      --out writes DIR/point-NNN/ (as `run --out`, without trace.json), sweep.csv,\n"
    "      sweep.md, sweep_perf.csv (wall time per point) and plots: busbw.gp/.dat/.svg and,\n"
    "      per numeric --vary key, vs-KEY.gp/.dat/.svg (SVGs when gnuplot is on PATH);\n"
    "      --report (with --out) adds report.md and report.html: per fabric (a combination of\n"
    "      the --vary keys other than workload.* and training.*) cost, busbw, step time,\n"
    "      queues and PFC, each against the first fabric in %, and the points that failed;\n"
    "      --max-wall bounds the whole sweep (no point starts after it, running ones stop),\n"
    "      --max-events each point; stopped points are tabulated as limited (exit 124);\n"
    "      exit 3 if a point deadlocked, 1 if one stopped otherwise, 74 if a file could not be\n"
    "      written\n"
    "  calibrate [--perftest FILE]... [--nccl-tests FILE]... [--scenario SCENARIO.yaml]\n"
    "        [--set KEY=VALUE]... [--holdout above=SIZE|largest=N|file=PATH] --out FILE.yaml\n"
    "      parse perftest and nccl-tests outputs, fit link bandwidth, per-message overhead and\n"
    "      latency/bandwidth per regime (with 95% intervals), the NIC's message rate from a\n"
    "      perftest sweep, flag unhealthy logs; with --scenario, nic.pcie_rate from a plateau\n"
    "      below its port, nic.tx_latency/rx_latency from a perftest latency log, and\n"
    "      link.host_rate and nccl.launch_latency through the simulation, comparing every\n"
    "      size; write the fragment to FILE.yaml (a regular file) and\n"
    "      FILE.report.json beside it\n"
    "  params [--markdown]   print every scenario key: type and unit, default, range, doc\n"
    "exit codes: 0 ok, 1 internal error or incomplete run (out of memory while simulating\n"
    "  included), 2 bad input (a scenario too large for the memory included: refused with\n"
    "  an estimate, or out of memory while it was read or built), 3 deadlock,\n"
    "  4 the transport gave up (a queue pair exceeded its retry count),\n"
    "  74 an output file could not be written (a full disk: no file is left half-written,\n"
    "  results.json lists the files not written), 124 --max-wall or --max-events reached,\n"
    "  130 interrupted (SIGINT, SIGTERM, SIGHUP or SIGQUIT; what finished is still printed and\n"
    "  written); 130 wins over 74, and 74 over 1, 3, 4 and 124\n";

/// Where bad-input messages go: stderr, or nowhere on MPI ranks other than 0 (every rank
/// meets the same bad input; rank 0 says it).
std::ostream& err() {
  return g_mpi_rank == 0 ? std::cerr : g_null_stream;
}

/// An option `cmd` does not have: its name, the closest of `desc`'s ("did you mean"), and where
/// the list is, in one line instead of the whole usage text.
std::string unknown_option_message(const std::string& cmd, const std::string& option,
                                   const po::options_description& desc) {
  std::vector<std::string> names;
  for (const auto& o : desc.options()) names.push_back("--" + o->long_name());
  std::string text = "fabricsim " + cmd + ": unknown option '" + option + "'";
  std::string guess = closest_match(option, names);
  for (const std::string& n : names) {  // --outdir for --out: a name the option starts with
    if (guess.empty() && option.rfind(n, 0) == 0) guess = n;
  }
  if (!guess.empty()) text += "; did you mean '" + guess + "'?";
  return text + " (fabricsim " + cmd + " --help lists its options)";
}

/// po::store of `parser`'s result into `vm`. Throws po::error: for an unknown option, one line
/// with a "did you mean" (unknown_option_message), which main_guarded prints as it is.
void store_options(po::command_line_parser parser, const std::string& cmd,
                   const po::options_description& desc, po::variables_map& vm) {
  try {
    po::store(parser.run(), vm);
  } catch (const po::unknown_option& e) {
    throw po::error(unknown_option_message(cmd, e.get_option_name(), desc));
  }
}

int dispatch(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ||
      std::string(argv[1]) == "help") {
    std::cout << kUsage;
    return argc < 2 ? kExitBadInput : kExitOk;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> known = {"run",   "validate",  "topo",
                                          "sweep", "calibrate", "params"};
  if (g_mpi_ranks > 1 && cmd != "run") {
    if (g_mpi_rank == 0) {
      err() << "fabricsim: " << cmd
            << " does not run over MPI ranks; only `run` does (start it without mpirun)\n";
    }
    return kExitBadInput;
  }
  if (cmd == "params") return cmd_params({argv + 2, argv + argc}, std::cout, err());
  if (cmd == "calibrate") {
    CalibrateOptions c;
    std::string max_sim;
    po::options_description cdesc("options");
    cdesc.add_options()("help,h", "show this help")(
        "perftest", po::value<std::vector<std::string>>(&c.perftest)->composing(),
        "an ib_write_bw / ib_read_bw / ib_send_bw / ib_*_lat output")(
        "nccl-tests", po::value<std::vector<std::string>>(&c.nccl_tests)->composing(),
        "an all_reduce_perf (or other nccl-tests) output")(
        "scenario", po::value<std::string>(&c.scenario.scenario_path),
        "fit link.host_rate, nccl.launch_latency and nccl.step_latency through this scenario's "
        "simulation")("set", po::value<std::vector<std::string>>(&c.scenario.sets)->composing(),
                      "override a scenario key")(
        "out", po::value<std::string>(&c.out),
        "the calibrated YAML fragment (FILE.report.json beside it)")(
        "holdout", po::value<std::string>(&c.holdout),
        "above=SIZE: leave sizes >= SIZE out of the fits; largest=N: each log's N largest sizes; "
        "file=PATH: leave that log out and predict it")(
        "max-sim-size", po::value<std::string>(&max_sim),
        "simulate sizes up to this (default 256MiB)");
    po::variables_map cvm;
    store_options(po::command_line_parser(argc - 1, argv + 1).options(cdesc), cmd, cdesc, cvm);
    po::notify(cvm);
    if (cvm.count("help")) {
      std::cout << kUsage << cdesc;
      return kExitOk;
    }
    if (!max_sim.empty()) {
      try {
        c.max_sim_bytes = parse_size_bytes(max_sim);
      } catch (const std::exception& e) {
        err() << "fabricsim: --max-sim-size " << max_sim << ": " << e.what() << "\n";
        return kExitBadInput;
      }
    }
    return cmd_calibrate(c, &g_interrupted);
  }
  if (cmd != "run" && cmd != "validate" && cmd != "topo" && cmd != "sweep") {
    err() << "fabricsim: unknown command '" << cmd << "'";
    const std::string guess = closest_match(cmd, known);
    if (!guess.empty()) err() << "; did you mean '" << guess << "'?";
    err() << "\n" << kUsage;
    return kExitBadInput;
  }

  RunOptions opts;
  std::string dot_path;
  std::string seed_text, trace_text, jobs_text, partitions_text, method_text;
  std::vector<std::string> varies;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")(
      "set", po::value<std::vector<std::string>>(&opts.sets)->composing(),
      "override a scenario key: --set topology.oversubscription=3")(
      "scenario", po::value<std::string>(&opts.scenario_path), "scenario YAML file");
  std::string mode_text;
  if (cmd == "run" || cmd == "sweep" || cmd == "validate") {
    desc.add_options()("mode", po::value<std::string>(&mode_text),
                       "packet (default) or flow: the same as --set mode=VALUE");
  }
  std::string flows_text;
  if (cmd == "run" || cmd == "sweep") {
    desc.add_options()("flows", po::value<std::string>(&flows_text),
                       "with --out: csv (flows.csv, the default), gz (flows.csv.gz) or none");
    desc.add_options()("out", po::value<std::string>(&opts.out_dir), "write results to DIR")(
        "seed", po::value<std::string>(&seed_text), "override the scenario seed (0 to 2^64-1)");
  }
  std::string max_wall_text, max_events_text;
  if (cmd == "run") {
    desc.add_options()("trace-events", po::value<std::string>(&trace_text),
                       "cap of trace.json events with --out (default 200000; 0 = no trace)")(
        "max-wall", po::value<std::string>(&max_wall_text),
        "stop cleanly after this wall-clock time (e.g. 90s), writing what completed (exit 124)")(
        "max-events", po::value<std::string>(&max_events_text),
        "stop cleanly after N simulated events, writing what completed (exit 124)");
  }
  if (cmd == "sweep") {
    desc.add_options()(
        "max-wall", po::value<std::string>(&max_wall_text),
        "stop the whole sweep cleanly after this wall-clock time (e.g. 8h): no point starts "
        "after it, running points stop with what they completed (status limited, exit 124)")(
        "max-events", po::value<std::string>(&max_events_text),
        "stop each point cleanly after N simulated events (status limited, exit 124)");
  }
  if (cmd == "sweep") {
    desc.add_options()("vary", po::value<std::vector<std::string>>(&varies)->composing(),
                       "run once per value: --vary ecn.kmin=10KB,50KB (several: their product)")(
        "jobs", po::value<std::string>(&jobs_text),
        "points run at once, each in a child process (default: one per CPU; 1 = one after "
        "another)")("report",
                    "with --out: compare the fabrics (the combinations of the --vary keys other "
                    "than workload.* and training.*) in DIR/report.md and DIR/report.html");
  }
  if (cmd == "topo") {
    desc.add_options()("dot", po::value<std::string>(&dot_path), "write Graphviz DOT to FILE")(
        "json", "print the fabric as JSON")(
        "partitions", po::value<std::string>(&partitions_text),
        "split the fabric over N ranks of a parallel run and summarize the split")(
        "partition-method", po::value<std::string>(&method_text),
        "auto (default: the family's own split when N fits it, else METIS), topology or metis");
  }
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  store_options(po::command_line_parser(argc - 1, argv + 1).options(desc).positional(pos), cmd,
                desc, vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << kUsage << desc;
    return kExitOk;
  }
  if (opts.scenario_path.empty()) {
    err() << "fabricsim " << cmd << ": missing SCENARIO.yaml\n" << kUsage;
    return kExitBadInput;
  }
  if (vm.count("seed")) {
    // Digits only: program_options would read "-1" as 2^64-1 without a word.
    uint64_t seed = 0;
    const auto [end, ec] =
        std::from_chars(seed_text.data(), seed_text.data() + seed_text.size(), seed);
    if (seed_text.empty() || ec != std::errc() || end != seed_text.data() + seed_text.size()) {
      err() << "fabricsim: --seed " << seed_text
            << ": expected a non-negative integer (0 to 2^64-1)\n";
      return kExitBadInput;
    }
    opts.seed = seed;
  }
  if (vm.count("out") && opts.out_dir.rfind("--", 0) == 0) {
    // `--out --report`: the option became the folder's name, and --report was never given.
    err() << "fabricsim: --out " << opts.out_dir
          << ": expected a folder, got an option (--out takes the word after it); write --out "
             "DIR "
          << opts.out_dir << ", or --out ./" << opts.out_dir << " for a folder of that name\n";
    return kExitBadInput;
  }
  if (vm.count("flows")) {
    if (flows_text != "csv" && flows_text != "gz" && flows_text != "none") {
      err() << "fabricsim: --flows " << flows_text
            << ": expected csv (flows.csv), gz (flows.csv.gz, gzip) or none\n";
      return kExitBadInput;
    }
    if (!vm.count("out")) {
      err() << "fabricsim: --flows " << flows_text << " needs --out DIR (where flows.csv goes)\n";
      return kExitBadInput;
    }
    opts.flows = flows_text;
  }
  if (vm.count("trace-events")) {
    int64_t cap = 0;
    const auto [end, ec] =
        std::from_chars(trace_text.data(), trace_text.data() + trace_text.size(), cap);
    if (trace_text.empty() || ec != std::errc() || end != trace_text.data() + trace_text.size() ||
        cap < 0) {
      err() << "fabricsim: --trace-events " << trace_text
            << ": expected a non-negative integer (0 = no trace.json)\n";
      return kExitBadInput;
    }
    opts.trace_max_events = cap;
  }
  if (vm.count("max-wall")) {
    try {
      opts.max_wall_ps = parse_time_ps(max_wall_text);
    } catch (const UnitError& e) {
      err() << "fabricsim: --max-wall " << max_wall_text << ": " << e.what()
            << "; expected a wall-clock time such as 90s\n";
      return kExitBadInput;
    }
    if (opts.max_wall_ps < 1'000'000'000) {  // below 1 ms: a typo (a unit missing?)
      err() << "fabricsim: --max-wall " << max_wall_text
            << ": expected a wall-clock time of at least 1ms, such as 90s\n";
      return kExitBadInput;
    }
  }
  if (vm.count("max-events")) {
    uint64_t n = 0;
    const auto [end, ec] =
        std::from_chars(max_events_text.data(), max_events_text.data() + max_events_text.size(), n);
    if (max_events_text.empty() || ec != std::errc() ||
        end != max_events_text.data() + max_events_text.size() || n == 0) {
      err() << "fabricsim: --max-events " << max_events_text
            << ": expected a positive integer, the number of simulated events to run\n";
      return kExitBadInput;
    }
    opts.max_events = n;
  }
  if (vm.count("report") && !vm.count("out")) {
    err() << "fabricsim: --report needs --out DIR (where report.md and report.html go)\n";
    return kExitBadInput;
  }
  int64_t jobs = 0;  // sweep --jobs N; 0 = one per CPU
  if (vm.count("jobs")) {
    const auto [end, ec] =
        std::from_chars(jobs_text.data(), jobs_text.data() + jobs_text.size(), jobs);
    if (jobs_text.empty() || ec != std::errc() || end != jobs_text.data() + jobs_text.size() ||
        jobs < 1) {
      err() << "fabricsim: --jobs " << jobs_text
            << ": expected a positive integer, the number of points run at once (1 = one "
               "after another)\n";
      return kExitBadInput;
    }
  }
  TopoPartitionOptions partition;  // topo --partitions N [--partition-method M]
  if (vm.count("partitions")) {
    const auto [end, ec] = std::from_chars(
        partitions_text.data(), partitions_text.data() + partitions_text.size(), partition.parts);
    if (partitions_text.empty() || ec != std::errc() ||
        end != partitions_text.data() + partitions_text.size() || partition.parts < 1) {
      err() << "fabricsim: --partitions " << partitions_text
            << ": expected a positive integer, the number of ranks to split the fabric over\n";
      return kExitBadInput;
    }
  }
  if (vm.count("partition-method")) {
    const auto m = parse_partition_method(method_text);
    if (!m) {
      err() << "fabricsim: --partition-method " << method_text
            << ": expected auto, topology or metis\n";
      return kExitBadInput;
    }
    if (!vm.count("partitions")) {
      err() << "fabricsim: --partition-method needs --partitions N\n";
      return kExitBadInput;
    }
    partition.method = *m;
  }
  if (vm.count("mode")) opts.sets.push_back("mode=" + mode_text);  // checked as the key is
  opts.out_given = vm.count("out") > 0;
  opts.progress = true;

  if (g_mpi_ranks > 1) {
    opts.mpi_ranks = g_mpi_ranks;
    opts.reports = g_mpi_rank == 0;
#ifdef FABRICSIM_HAVE_MPI
    set_mpi_trace_cap(opts.out_given ? opts.trace_max_events : 0);  // rank 0 writes it
    opts.packet_engine = &make_mpi_engine;  // the packet model over the ranks
#endif
  }
  if (cmd == "run" || cmd == "sweep") {
    return cmd == "run" ? cmd_run(opts, &g_interrupted)
                        : cmd_sweep(opts, varies, &g_interrupted, jobs, vm.count("report") > 0);
  }
  let_signals_stop();
  if (cmd == "validate") return cmd_validate(opts);
  return cmd_topo(opts, dot_path, vm.count("json") > 0, partition);
}

/// The size of the MPI job this process was started in by mpirun (Open MPI sets
/// OMPI_COMM_WORLD_SIZE, MPICH's Hydra PMI_SIZE); 1 outside one.
int mpi_world_size_from_env() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  return 1;
}

int main_guarded(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // A reader of stdout that went away (`| head -0`, a closed terminal) must not kill a long run
  // before it writes its files: writes to the closed pipe fail (EPIPE) and are dropped instead.
  std::signal(SIGPIPE, SIG_IGN);
  const int world = mpi_world_size_from_env();
  install_stop_handlers(world > 1);
  if (world <= 1) return main_guarded(argc, argv);
#ifdef FABRICSIM_HAVE_MPI
  MPI_Init(&argc, &argv);
  install_stop_handlers(true);  // again, in case MPI_Init installed its own
  MPI_Comm_rank(MPI_COMM_WORLD, &g_mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_mpi_ranks);
  // Every rank runs the same; rank 0 alone prints results and writes files. The others keep
  // stderr for what only they can say (an internal error, prefixed with their rank); bad input
  // is found alike on every rank and said by rank 0.
  if (g_mpi_rank != 0 && !std::freopen("/dev/null", "w", stdout)) {
    MPI_Abort(MPI_COMM_WORLD, kExitInternal);
  }
  const int code = main_guarded(argc, argv);
  // Bad input is found alike on every rank before the ranks talk, and a run's outcome is the
  // same on every rank; an internal error may leave the other ranks waiting in a collective.
  if (g_internal_error) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
  return code;
#else
  std::cerr << "fabricsim: started by mpirun with " << world
            << " ranks, but built without MPI (install libopenmpi-dev openmpi-bin and rebuild)\n";
  return kExitBadInput;
#endif
}

namespace {

/// What fabricsim's estimates budget against ("this machine's 23.4 GB"), for an out-of-memory
/// message; never throws.
std::string memory_text() {
  try {
    const MemoryBudget b = memory_budget();
    return b.bytes > 0 ? b.text : std::string("the machine's memory");
  } catch (...) {
    return "the machine's memory";
  }
}

int main_guarded(int argc, char** argv) {
  // Under mpirun every rank meets the same bad input: rank 0 says it.
  std::ostream& bad = err();
  try {
    return dispatch(argc, argv);
  } catch (const ConfigError& e) {
    bad << e.what() << "\n";
    return kExitBadInput;
  } catch (const UnitError& e) {
    bad << "fabricsim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const ParseError& e) {  // a perftest / nccl-tests log that is not what it claims
    bad << e.what() << "\n";
    return kExitBadInput;
  } catch (const po::error& e) {
    const std::string what = e.what();
    if (what.rfind("fabricsim ", 0) == 0) {  // said in full already (store_options)
      bad << what << "\n";
    } else {
      bad << "fabricsim: " << what << "\n" << kUsage;
    }
    return kExitBadInput;
  } catch (const OutputError& e) {  // "cannot write PATH: No space left on device"
    std::cerr << "fabricsim: " << e.what() << "\n";
    return kExitOutput;
  } catch (const OutOfMemory& e) {
    // Out of memory is never an internal error. Where the up-front estimates apply (reading
    // the scenario, building its fabric, routes and plan) the scenario is too large for this
    // machine: bad input, exit 2, as the estimate's refusal would have been. In the simulation,
    // which no estimate covers, the run is incomplete: exit 1.
    std::cerr << "fabricsim: "
              << (g_mpi_ranks > 1 ? "rank " + std::to_string(g_mpi_rank) + ": " : "") << e.what()
              << (e.estimated()
                      ? ": the scenario is too large for the memory this process may use (its "
                        "up-front estimates, against " +
                            memory_text() + ", did not refuse it)"
                      : ": the run is incomplete (the simulation's own state has no up-front "
                        "estimate; budget: " +
                            memory_text() + ")")
              << "\n";
    g_internal_error = g_mpi_ranks > 1;  // the other ranks may wait for this one: stop them
    return e.estimated() ? kExitBadInput : kExitInternal;
  } catch (const std::bad_alloc&) {
    std::cerr << "fabricsim: "
              << (g_mpi_ranks > 1 ? "rank " + std::to_string(g_mpi_rank) + ": " : "")
              << "out of memory (outside what fabricsim estimates up front; budget: "
              << memory_text() << ")\n";
    g_internal_error = true;
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: "
              << (g_mpi_ranks > 1 ? "rank " + std::to_string(g_mpi_rank) + ": " : "")
              << "internal error: " << e.what() << "\n";
    g_internal_error = true;
    return kExitInternal;
  }
}

}  // namespace
