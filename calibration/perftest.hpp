// perftest (linux-rdma/perftest: ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat,
// ib_send_lat, ib_atomic_*) output as people paste it: prompts, launcher and library noise
// around the report, which is found by its table header line.
//
// Source: linux-rdma/perftest src/perftest_parameters.h (RESULT_FMT, RESULT_FMT_G,
// RESULT_FMT_PER_PORT, RESULT_FMT_QOS, RESULT_FMT_LAT, RESULT_FMT_LAT_DUR, REPORT_FMT*,
// RESULT_LINE) and src/perftest_parameters.c (print_report_bw, print_full_bw_report,
// print_report_lat, print_report_lat_duration).
//
// Units, as perftest computes them (print_report_bw: format_factor = MBS ? 0x100000 : 125000000):
//   - "MB/sec" is 2^20 bytes per second (MiB/s), the default;
//   - "Gb/sec" (--report_gbits) is 10^9 bits = 1.25·10^8 bytes per second;
//   - "MsgRate[Mpps]" is 10^6 messages per second;
//   - latency columns "[usec]" are microseconds. ib_write_lat / ib_send_lat report half the
//     round trip (rtt_factor 2), ib_read_lat / ib_atomic_lat the full read (rtt_factor 1).
// Bidirectional runs (-b, title "… Bidirectional BW Test") print the sum of both directions
// (print_full_bw_report adds the remote side's report to the local one).
// A BW row whose average is below 0.1 Gb/s is printed with 6 decimals (REPORT_FMT_EXT).
//
// Table layouts accepted (the header line names the columns; each row must have one field per
// column):
//   #bytes #iterations BW peak[U] BW average[U] MsgRate[Mpps]                    (U =
//   MB/sec|Gb/sec) #bytes #sl #iterations BW peak[U] BW average[U] MsgRate[Mpps] (--report-qos) …
//   MsgRate[Mpps] BW Port1[U] MsgRate Port1[Mpps] BW Port2[U] MsgRate Port2[Mpps]   (per port)
//   #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9% percentile [usec]
//   #bytes #iterations t_min t_max t_typical [usec]                              (old perftest)
//   #bytes #iterations t_avg[usec] tps average                                   (-D duration)
// each optionally followed by "CPU_Util[%]" (--cpu_util); older BW tables without MsgRate too.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "calibration/parse_error.hpp"

namespace fabricsim {

/// One row of a perftest BW table. Bandwidths are converted to bytes per second from the unit
/// the header names (MB/sec = 2^20 B/s, Gb/sec = 1.25·10^8 B/s).
struct PerftestBwRow {
  int64_t bytes = 0;         ///< message size in bytes ("#bytes")
  int64_t iterations = 0;    ///< "#iterations" (messages per QP × QPs, or a count with -D)
  double bw_peak_Bps = 0;    ///< "BW peak", bytes per second (0 when perftest printed 0.00)
  double bw_avg_Bps = 0;     ///< "BW average", bytes per second
  double msg_rate_Mpps = 0;  ///< "MsgRate[Mpps]", 10^6 messages per second; NaN if absent
};

/// One row of a perftest latency table, in microseconds; NaN for a column the log lacks (old
/// perftest prints only t_min/t_max/t_typical; -D prints only t_avg).
struct PerftestLatRow {
  int64_t bytes = 0;        ///< message size in bytes
  int64_t iterations = 0;   ///< "#iterations"
  double t_min_us = 0;      ///< smallest sample
  double t_max_us = 0;      ///< largest sample kept (perftest drops the 2 largest)
  double t_typical_us = 0;  ///< median
  double t_avg_us = 0;      ///< mean
  double t_stdev_us = 0;    ///< standard deviation
  double p99_us = 0;        ///< "99% percentile[usec]"
  /// "99.9% percentile[usec]". perftest prints the 99.9th percentile (iters_99_9 =
  /// ceil(n × 0.999)), not 99.99 %.
  double p99_9_us = 0;
};

/// What parse_perftest found in one log.
struct PerftestLog {
  std::string path;  ///< as given to the parser
  /// "ib_write_bw", "ib_read_lat", … from the test title ("RDMA_Write BW Test"), else the
  /// command line, else the "## tool:" header; "" if none names it.
  std::string tool;
  /// perftest's title line as printed, trimmed ("RDMA_Write Bidirectional BW Test"); "" if the
  /// log has none.
  std::string title;
  /// The line `tool` was read from: the title's, else the command line's; 0 when it came from
  /// the "## tool:" header or nothing names it.
  int tool_line = 0;
  bool latency = false;         ///< a latency table (t_* columns)
  bool bidirectional = false;   ///< "Bidirectional" title, or -b/--bidirectional on the command
  std::string link_type;        ///< "IB" or "Ethernet" (RoCE), from "Link type"; "" if absent
  int mtu_bytes = 0;            ///< from "Mtu : 4096[B]"; 0 if absent
  int num_qps = 0;              ///< from "Number of qps"; 0 if absent
  std::string connection_type;  ///< "RC", "UC", "UD", "XRC", "DC" from "Connection type"
  std::string device;           ///< from "Device", e.g. "mlx5_0"
  /// GPU buffers: --use_cuda / --use_rocm / --use_neuron … on the command, or perftest's
  /// "initializing CUDA" / GPU buffer lines.
  bool gpu_memory = false;
  bool report_gbits = false;  ///< the table is in Gb/sec (--report_gbits) rather than MB/sec
  std::vector<PerftestBwRow> bw_rows;    ///< in file order (empty for a latency test)
  std::vector<PerftestLatRow> lat_rows;  ///< in file order (empty for a BW test)
  /// The leading "## key: value" lines; a repeated key's values are joined with " | ".
  std::map<std::string, std::string> meta;
  /// Things a user should know, each "line N: …": error lines (a run that aborted keeps the rows
  /// printed before the error), a table without its closing dashed line, perftest warnings
  /// printed inside the table (CPU frequency), several tables concatenated.
  std::vector<std::string> notes;
};

/// Parses perftest output `text`; `path` is used in errors and copied to the result.
/// Throws ParseError for: an empty or binary text (line 0, or the line of the first NUL byte);
/// no table header (line 0, or the line of an error perftest printed, e.g. "Couldn't connect");
/// a header with an unknown column or no rows (the header's line); a row with the wrong number
/// of fields or a field that is not a number (the row's line; a line starting like a number,
/// with full-width digits, or of the table's width with a number second is such a row); a row
/// whose numbers disagree (calibration/log_checks.hpp: latencies out of order or above an hour,
/// MsgRate not BW average / size; the row's line); a second table with other
/// columns (its header's line); a title that contradicts the table (the header's line).
PerftestLog parse_perftest(const std::string& text, const std::string& path);

/// Reads `path` (read_log_text: a regular file of at most kMaxLogFileBytes) and parses it;
/// ParseError with line 0 if the file cannot be read.
PerftestLog parse_perftest_file(const std::string& path);

}  // namespace fabricsim
