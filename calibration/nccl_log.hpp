// A parser for nccl-tests outputs (all_reduce_perf, all_gather_perf, alltoall_perf …) as people
// paste them: with launcher prefixes, NCCL INFO noise, elided device lists and truncated tables.
//
// Format facts: NVIDIA nccl-tests src/common.cu (the "# nThread … nGpus … minBytes …" line, the
// "#  Rank  r Group  g Pid p on host device d [bus] name" device lines, the two-line table header,
// one row per size printed by TimeTest, the "# Out of bounds values" and "# Avg bus bandwidth"
// footer) and collectives/nccl_tests.hpp (columns, units, busbw). Two table layouts exist:
//   current (13 columns): size count type redop root | time algbw busbw #wrong | (in-place) same
//   old (12 columns, nccl-tests before root was printed): size count type redop | time algbw busbw
//   error | same — `error` is the maximum relative error (e.g. 5e-07), not a count.
// Units as printed: size in bytes, count in elements, time in µs, algbw/busbw in GB/s (10⁹ B/s).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "calibration/parse_error.hpp"

namespace fabricsim {

/// One row of the result table (one message size).
struct NcclLogRow {
  int64_t size_bytes = 0;  ///< size column, bytes (max of send and receive buffer per rank)
  int64_t count = 0;       ///< count column, elements per NCCL call per rank
  std::string type;   ///< nccl-tests type name (float, half, …), checked by nccl_tests_type_bytes
  std::string redop;  ///< sum, prod, …, or none
  int root = -1;      ///< root column; -1 when the column is absent (old format) or printed -1
  double oop_time_us = std::numeric_limits<double>::quiet_NaN();     ///< out-of-place time, µs
  double oop_algbw_GBps = std::numeric_limits<double>::quiet_NaN();  ///< out-of-place algbw, GB/s
  double oop_busbw_GBps = std::numeric_limits<double>::quiet_NaN();  ///< out-of-place busbw, GB/s
  double ip_time_us = std::numeric_limits<double>::quiet_NaN();      ///< in-place time, µs
  double ip_algbw_GBps = std::numeric_limits<double>::quiet_NaN();   ///< in-place algbw, GB/s
  double ip_busbw_GBps = std::numeric_limits<double>::quiet_NaN();   ///< in-place busbw, GB/s
  int64_t oop_wrong = -1;  ///< out-of-place #wrong; -1 for "N/A" or the old format's error column
  int64_t ip_wrong = -1;   ///< in-place #wrong; -1 for "N/A" (alltoall, sendrecv) or old format
  /// Old format only: the `error` columns (max relative error); NaN with the #wrong format.
  double oop_error = std::numeric_limits<double>::quiet_NaN();
  double ip_error = std::numeric_limits<double>::quiet_NaN();
  int line = 0;  ///< 1-based line of the row in the parsed text
};

/// One "# Rank r … on host device d [bus] gpu" line of the device list.
struct NcclRank {
  int rank = 0;
  std::string host;
  int device = 0;   ///< CUDA device index on the host
  std::string gpu;  ///< name as printed, e.g. "NVIDIA H100 80GB HBM3"
  int line = 0;     ///< 1-based line of the device line
};

/// One NCCL INFO line kept as evidence of the network transport (net_transport.hpp).
struct NcclInfoLine {
  int line = 0;      ///< 1-based line in the parsed text
  std::string text;  ///< the line after launcher prefixes, trimmed
};

/// Everything parse_nccl_tests() recognises in one nccl-tests log.
struct NcclLog {
  std::string path;
  /// nccl-tests collective name (all_reduce, all_gather, reduce_scatter, broadcast, reduce,
  /// alltoall, sendrecv; see nccl_tests_collectives()): from "# Collective test starting: X_perf",
  /// else an X_perf on a command line in the body, else one in the ## header; empty if none.
  std::string collective;

  // From "# nThread N nGpus G minBytes B maxBytes E step: S warmup iters: W iters: I …
  // validation: V" (0 / empty when the line is missing).
  int nthread = 0;
  int ngpus = 0;         ///< GPUs per process (-g)
  int64_t minbytes = 0;  ///< -b, bytes
  int64_t maxbytes = 0;  ///< -e, bytes
  std::string step;      ///< as printed: "2(factor)" or "1048576(bytes)"
  int warmup_iters = 0;  ///< -w
  int iters = 0;         ///< -n
  bool validation = false;

  std::vector<NcclRank> ranks;  ///< device lines as printed (may be elided with "...")
  /// Ranks in the run: the highest listed rank + 1 when the device list ends with the last rank;
  /// when the list is cut after its last line ("..." follows it) or absent, the ## "nodes x GPUs"
  /// header's rank count (if it is at least the listed ranks), else the listed count; 0 if none.
  int nranks = 0;
  /// Distinct hosts in the device list when that list is complete (ranks 0..nranks-1 all listed),
  /// else the ## "nodes x GPUs" header's node count, else the distinct listed hosts; 0 if none.
  int nodes = 0;

  std::string nccl_version;   ///< "2.26.6+cuda12.8" from the first "NCCL version X.Y.Z" line
  int nccl_version_line = 0;  ///< that line; 0 when none

  std::vector<NcclLogRow> rows;  ///< in the order printed
  /// "# Avg bus bandwidth : X" (GB/s, mean of the busbw column over rows); NaN when absent.
  double avg_busbw_GBps = std::numeric_limits<double>::quiet_NaN();

  // Hints from NCCL INFO lines (NCCL_DEBUG=INFO), when present:
  /// "Using network X" (IB, Socket, AWS Libfabric, a plugin name …); else "IB" / "Socket" from a
  /// "NET/IB : Using" / "NET/Socket : Using" line; empty when none is seen.
  std::string transport;
  /// 1 when "GDRDMA" (in a "via NET/…/GDRDMA" channel line) or "GPU Direct RDMA Enabled" is seen;
  /// 0 when "via NET/" channel lines show no GDRDMA or "GPU Direct RDMA Disabled" is seen;
  /// -1 when the log says nothing about it.
  int gdr = -1;
  int channels = 0;  ///< max yy over "Channel xx/yy :" lines; 0 when none
  /// NCCL's algorithm and protocol for one operation, where the log prints them: enqueue.cc's
  /// "N Bytes -> Algo A proto P time T" line (indices; NCCL_DEBUG_SUBSYS=TUNING in the releases
  /// that print it at INFO level) or "Coll: N Bytes -> Algo NAME proto NAME ..." (names, newer
  /// releases); lines naming neither are skipped. `algo` and `proto` are NCCL's indices (algo
  /// 0 Tree, 1 Ring, 2 CollNetDirect, 3 CollNetChain, 4 NVLS, 5 NVLSTree, 6 PAT; proto 0 LL,
  /// 1 LL128, 2 Simple), `bytes` NCCL's nBytes (nccl-tests' size column), `line` the log's line.
  struct Choice {
    int64_t bytes = 0;
    int algo = -1, proto = -1;
    int line = 0;
  };
  std::vector<Choice> choices;  ///< in the order printed
  /// "NCCL INFO NCCL_X set by environment to Y" lines: NCCL_X -> Y (trailing '.' dropped).
  std::map<std::string, std::string> nccl_env;
  /// The first NCCL INFO line of each kind that names a network transport, by kind:
  /// "Using network X" -> "network X"; "NET/IB : Using …" / "NET/Socket : Using …" ->
  /// "using NET/IB" / "using NET/Socket"; "NET/OFI … Selected Provider is P" -> "provider"; any
  /// other "NET/Name …" line (not a "via NET/…" channel line) -> "NET/Name". Read by
  /// classify_net_transport (net_transport.hpp).
  std::map<std::string, NcclInfoLine> net_info;

  /// The "## key: value" header lines of the file; repeated keys are joined with "\n".
  std::map<std::string, std::string> meta;
  std::map<std::string, int> meta_lines;  ///< key -> 1-based line of its first "## key:" line
  /// Human-readable findings: truncated table or device list, rows with #wrong > 0, busbw that
  /// implies another rank count, a header that disagrees with the rows, etc.
  std::vector<std::string> notes;
};

/// Parses nccl-tests output `text`; `path` is used only in messages and NcclLog::path.
///
/// Line prefixes stripped before parsing (repeatedly): Open MPI --tag-output "[1,0]<stdout>:",
/// Slurm srun -l "0: ", and a fork's "run(), common.cu:NNN, ". Lines that are neither nccl-tests
/// output nor recognised NCCL INFO lines are ignored. "..." lines and "# Truncated …" comments in
/// the table are skipped and noted.
///
/// Throws ParseError (path, line, message) when: the text is empty or binary (line 0 or the first
/// line with a NUL byte); it looks like a perftest output (line of the first perftest marker);
/// no table header is found (line 0, "no nccl-tests result table found; expected …"); a table
/// header has no rows after it (the header's line); a row has the wrong number of columns or an
/// unreadable number or type (that row's line; inside a table a line of the table's width
/// starting like a number, or with full-width digits, is such a row, not noise); a row's
/// numbers disagree (calibration/log_checks.hpp: a time not in (0, 1 h], algbw not size / time,
/// busbw not algbw x the busbw factor of nranks; that row's line); a device line names a rank
/// of a million or more (its line); a second result table follows rows of a first
/// (its header's line); rank 0 appears more than once in the device list, i.e. several 1-rank
/// runs are interleaved because nccl-tests was built without MPI (the repeated line); or row
/// sizes go down for the same root (rows of several runs interleaved; that row's line).
NcclLog parse_nccl_tests(const std::string& text, const std::string& path);

/// The NCCL version the log ran: its "NCCL version X" line (NcclLog::nccl_version), else the
/// "NCCL X.Y.Z[+suffix]" of its "## software:" header; "" when neither says.
std::string nccl_version_of(const NcclLog& log);

/// NCCL's name of algorithm index `algo` as fabricsim spells algorithms ("tree", "ring",
/// "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"; the same order in NCCL 2.18 to
/// 2.28) and of protocol index `proto` ("ll", "ll128", "simple"); "" for an index out of range.
std::string nccl_algo_name(int algo);
std::string nccl_proto_name(int proto);
/// The index of an algorithm or protocol as a choice line prints it: NCCL's index ("1") or its
/// name in any case, with or without '_' ("RING", "NVLS_TREE", "NVLSTree", "SIMPLE"); -1 for
/// anything else.
int nccl_algo_index(const std::string& word);
int nccl_proto_index(const std::string& word);

/// Reads `path` (read_log_text: a regular file of at most kMaxLogFileBytes) and parses it with
/// parse_nccl_tests. Throws ParseError (line 0) if the file cannot be read.
NcclLog parse_nccl_tests_file(const std::string& path);

}  // namespace fabricsim
