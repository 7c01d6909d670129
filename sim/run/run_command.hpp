// `fabricsim run` as a library call: the scenario of RunOptions loaded, prepared, simulated and
// reported (the nccl-tests table and summary on stdout, the files of --out, the reasons of an
// incomplete run on stderr), with the run's exit code. The CLI's `run` is this call; a test or
// a tool that wants a run exactly as the CLI makes it calls it too, with hooks of its own
// (RunOptions::hooks, run_hooks.hpp).
#pragma once

#include <atomic>
#include <iosfwd>

#include "sim/run/run.hpp"

namespace fabricsim {

/// Runs `opts` as `fabricsim run` does and returns its exit code (ExitCode: 0, 3, 4, 74, 124,
/// 130, or 1 for another incomplete run). `interrupt` (SIGINT/SIGTERM; may be nullptr) stops it
/// cleanly, its files saying so. Throws ConfigError for bad input (exit 2), before anything is
/// written, and OutputError only where the CLI exits 74 on it.
int run_scenario(const RunOptions& opts, const std::atomic<bool>* interrupt);

/// The training step's times, in ms, and its critical path (the run's summary block).
void print_training(std::ostream& os, const TrainingSummary& t);

/// The measured log beside the simulation, size by size, and the median and worst error.
void print_measured(std::ostream& os, const MeasuredComparison& m);
/// The measured perftest log beside the simulated perftest run, size by size, and the median
/// and worst error.
void print_measured_perftest(std::ostream& os, const PerftestComparison& m);

/// The scenario's warnings (settings that do nothing under its other choices), on stderr.
void print_warnings(const Scenario& sc);

}  // namespace fabricsim
