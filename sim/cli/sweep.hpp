// `fabricsim sweep`: one scenario run over the cartesian product of --vary value lists
// (DESIGN.md §4). Wiring only: the points are planned and run by sim/sweep/ (each as `fabricsim
// run` would, sim/cli/run.hpp), in child processes by sim/pool/; the table, plots and report
// are written by sim/report/ (sweep_table, sweep_plots, sweep_report).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cli/run.hpp"
#include "sim/sweep/vary.hpp"

namespace fabricsim {

/// `fabricsim sweep`: loads and prepares every point (the --set list of `opts`, then the
/// point's KEY=VALUE pairs as further --set overrides, then --seed) before any runs, so bad
/// input anywhere is exit 2 with nothing run or written; then simulates the points, each
/// exactly as `fabricsim run` would.
///
/// `jobs` (--jobs N) is how many points run at once; 0 = as many as the CPUs this process may
/// use. With 1 the points run one after another in this process. With more, each point runs in
/// a child process (fork(): the points are loaded already), at most `jobs` at once, started in
/// point order; the child writes the point's outputs and sends its row back, and its exit code
/// is `fabricsim run`'s. Tables are written in point order and are byte-identical to a
/// sequential sweep's. A child that dies without a row (a crash, a kill) is tabulated as failed
/// with the reason; the others still run.
///
/// With opts.out_given, point i (1-based) writes DIR/point-NNN/ (write_run_outputs, no
/// trace.json), and DIR/sweep.csv, DIR/sweep.md and DIR/sweep_perf.csv (wall-clock time per
/// point) are rewritten after every point (with the points finished so far, in point order).
/// At the end the plots are written beside them: busbw.gp/.dat (busbw against message size,
/// one curve per completed point) and, per varied key whose values all start with a number,
/// vs-KEY.gp/.dat (busbw at the largest size against the key, one curve per combination of the
/// other keys); gnuplot draws each .svg when it is on PATH (else a note, not an error). The
/// table of sweep.md is printed to stdout at the end. With progress and stderr a terminal, a
/// parallel sweep shows "sweep: D/N points done, R running, elapsed T, ETA ~T" in place.
/// Returns 0 when every point completed, 3 when the points that did not complete deadlocked,
/// 1 when one stopped for another reason or its process died (the sweep still runs the rest),
/// 130 when `interrupt` became true: no more points start, the running ones are sent SIGINT
/// and waited for, and the points started are tabulated, the interrupted ones marked so.
///
/// With `report` (--report, needs opts.out_given) the fabric comparison is written last:
/// DIR/report.md and DIR/report.html (sim/report/sweep_report.hpp).
int cmd_sweep(const RunOptions& opts, const std::vector<std::string>& varies,
              const std::atomic<bool>* interrupt, int64_t jobs = 0, bool report = false);

}  // namespace fabricsim
