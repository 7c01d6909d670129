#include "calibration/perftest.hpp"

#include "calibration/log_checks.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>
#include <string_view>

namespace fabricsim {

namespace {

/// A header's leading integer (std::atoi without its undefined behaviour on overflow): clamped
/// to 0 .. INT_MAX, 0 when there is none.
int header_int(const std::string& v) {
  const long n = std::strtol(v.c_str(), nullptr, 10);
  return static_cast<int>(std::clamp(n, 0L, static_cast<long>(std::numeric_limits<int>::max())));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMBps = 1048576.0;  // perftest "MB/sec": format_factor 0x100000
constexpr double kGbps = 1.25e8;     // perftest "Gb/sec": format_factor 125000000

/// What a column of the result table holds.
enum class Col {
  kBytes,
  kSl,
  kIters,
  kBwPeak,
  kBwAvg,
  kMsgRate,
  kTMin,
  kTMax,
  kTTypical,
  kTAvg,
  kTStdev,
  kP99,
  kP99_9,
  kIgnored
};

enum class Unit { kNone, kMB, kGb };

struct Label {
  std::string_view text;  ///< as perftest prints it; a space matches any run of whitespace
  Col col;
  Unit unit;
};

/// Every column label of perftest_parameters.h's RESULT_FMT* headers.
constexpr Label kLabels[] = {
    {"#bytes", Col::kBytes, Unit::kNone},
    {"#sl", Col::kSl, Unit::kNone},
    {"#iterations", Col::kIters, Unit::kNone},
    {"BW peak[MB/sec]", Col::kBwPeak, Unit::kMB},
    {"BW peak[Gb/sec]", Col::kBwPeak, Unit::kGb},
    {"BW average[MB/sec]", Col::kBwAvg, Unit::kMB},
    {"BW average[Gb/sec]", Col::kBwAvg, Unit::kGb},
    {"MsgRate[Mpps]", Col::kMsgRate, Unit::kNone},
    {"BW Port1[MB/sec]", Col::kIgnored, Unit::kNone},
    {"BW Port1[Gb/sec]", Col::kIgnored, Unit::kNone},
    {"MsgRate Port1[Mpps]", Col::kIgnored, Unit::kNone},
    {"BW Port2[MB/sec]", Col::kIgnored, Unit::kNone},
    {"BW Port2[Gb/sec]", Col::kIgnored, Unit::kNone},
    {"MsgRate Port2[Mpps]", Col::kIgnored, Unit::kNone},
    {"t_min[usec]", Col::kTMin, Unit::kNone},
    {"t_max[usec]", Col::kTMax, Unit::kNone},
    {"t_typical[usec]", Col::kTTypical, Unit::kNone},
    {"t_avg[usec]", Col::kTAvg, Unit::kNone},
    {"t_stdev[usec]", Col::kTStdev, Unit::kNone},
    {"99% percentile[usec]", Col::kP99, Unit::kNone},
    {"99.9% percentile[usec]", Col::kP99_9, Unit::kNone},
    {"tps average", Col::kIgnored, Unit::kNone},
    {"CPU_Util[%]", Col::kIgnored, Unit::kNone},
};

constexpr std::string_view kExpectedHeader =
    "expected a line like ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   "
    "MsgRate[Mpps]' or ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec] …'";

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

/// The text's lines without "\r" and terminal colour escapes (ESC [ … letter).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      lines.push_back(std::move(cur));
      cur.clear();
    } else if (c == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

/// Throws ParseError if `text` is empty or looks binary.
void check_text(const std::string& text, const std::string& path) {
  if (trim(text).empty()) throw ParseError(path, 0, "empty file: no perftest output");
  const size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
    throw ParseError(path, line, "binary data (NUL byte): not a perftest text log");
  }
  size_t control = 0;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' &&
         c != '\x1b') ||
        u == 0x7f) {
      ++control;
    }
  }
  if (control * 20 > text.size()) {
    throw ParseError(path, 0, "binary data (control characters): not a perftest text log");
  }
}

/// The columns a table header names; throws ParseError at `line_no` for an unknown label.
std::vector<Col> parse_header(std::string_view line, int line_no, const std::string& path,
                              Unit& unit) {
  std::vector<Col> cols;
  unit = Unit::kNone;
  size_t i = 0;
  while (true) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i == line.size()) break;
    const Label* found = nullptr;
    size_t found_end = 0;
    for (const Label& label : kLabels) {
      size_t j = i;
      bool ok = true;
      for (const char c : label.text) {
        if (c == ' ') {
          if (j >= line.size() || !is_space(line[j])) {
            ok = false;
            break;
          }
          while (j < line.size() && is_space(line[j])) ++j;
        } else if (j < line.size() && line[j] == c) {
          ++j;
        } else {
          ok = false;
          break;
        }
      }
      // the label must end at a word boundary ("#sl" is not "#slots")
      if (ok && (j == line.size() || is_space(line[j])) && j > found_end) {
        found = &label;
        found_end = j;
      }
    }
    if (found == nullptr) {
      size_t end = i;
      while (end < line.size() && !is_space(line[end])) ++end;
      throw ParseError(path, line_no,
                       "unknown column '" + std::string(line.substr(i, end - i)) +
                           "' in the perftest table header");
    }
    if (found->unit != Unit::kNone) {
      if (unit != Unit::kNone && unit != found->unit) {
        throw ParseError(path, line_no, "the table header mixes MB/sec and Gb/sec columns");
      }
      unit = found->unit;
    }
    cols.push_back(found->col);
    i = found_end;
  }
  return cols;
}

bool has(const std::vector<Col>& cols, Col c) {
  return std::find(cols.begin(), cols.end(), c) != cols.end();
}

bool is_latency_table(const std::vector<Col>& cols) {
  return has(cols, Col::kTMin) || has(cols, Col::kTAvg) || has(cols, Col::kTTypical);
}

/// A dashed RESULT_LINE (perftest prints 87 dashes; pastes sometimes shorten it).
bool is_dashed(std::string_view t) {
  return t.size() >= 10 && t.find_first_not_of('-') == std::string_view::npos;
}

/// An error perftest, libibverbs or the shell printed ("Couldn't connect to …", "Completion
/// with error at client", "Failed status 10: …"). A leading "function_name: " is skipped; a
/// "Warning:" is not an error.
bool is_error_line(std::string_view t) {
  // The prefix ^[A-Za-z_][\w.]*:\s+ by hand: std::regex ran on every line before the table
  // and made a 64 KB log take 0.17 s.
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (!t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_')) {
    size_t i = 1;
    while (i < t.size() && (word(t[i]) || t[i] == '.')) ++i;
    size_t j = i + 1;
    while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
    if (i < t.size() && t[i] == ':' && j > i + 1) t.remove_prefix(j);
  }
  static constexpr std::string_view kStarts[] = {"Completion with error",
                                                 "Failed",
                                                 "failed",
                                                 "Couldn't",
                                                 "Could not",
                                                 "Unable",
                                                 "Error",
                                                 "ERROR",
                                                 "error",
                                                 "Problems",
                                                 "Segmentation fault",
                                                 "Aborted",
                                                 "Killed",
                                                 "terminate called",
                                                 "Unexpected CM event",
                                                 "Connection refused",
                                                 "No IB devices found",
                                                 "IB device",
                                                 "Port number"};
  for (const std::string_view s : kStarts) {
    if (starts_with(t, s)) return true;
  }
  return false;
}

bool parse_int(std::string_view s, int64_t& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

/// The value of "key : value" in `line` (perftest's test-info block), or "".
std::string info_value(const std::string& line, std::string_view needle, const std::regex& re) {
  if (line.find(needle) == std::string::npos) return {};  // cheap: most lines have none
  std::smatch m;
  return std::regex_search(line, m, re) ? m[1].str() : std::string();
}

/// "ib_write_bw" … for a title "RDMA_Write BW Test", "Send Latency Test", …, or "".
std::string tool_from_title(std::string_view verb, std::string_view kind) {
  std::string tool = "ib_";
  if (verb == "RDMA_Write")
    tool += "write";
  else if (verb == "RDMA_Read")
    tool += "read";
  else if (verb == "Send")
    tool += "send";
  else if (verb == "Atomic")
    tool += "atomic";
  else
    return "";
  return tool + (kind == "BW" ? "_bw" : "_lat");
}

bool tool_is_latency(const std::string& tool) {
  return tool.size() > 4 && tool.compare(tool.size() - 4, 4, "_lat") == 0;
}

/// The table being read.
struct Table {
  int header_line = 0;
  std::vector<Col> cols;
  Unit unit = Unit::kNone;
  size_t rows_before = 0;  ///< rows already collected from earlier tables
};

}  // namespace

PerftestLog parse_perftest(const std::string& text, const std::string& path) {
  check_text(text, path);
  const std::vector<std::string> lines = split_lines(text);

  static const std::regex kTitle(
      R"(^\s*(Send|RDMA_Write|RDMA_Read|Atomic)\b.*\b(BW|Latency) Test\s*$)");
  static const std::regex kCommand(R"(\b(ib_(write|read|send|atomic)_(bw|lat))\b(.*))");
  static const std::regex kDevice(R"(\bDevice\s*:\s*(\S+))");
  static const std::regex kQps(R"(\bNumber of qps\s*:\s*(\d+))");
  static const std::regex kConnection(R"(\bConnection type\s*:\s*(\S+))");
  static const std::regex kMtu(R"(\bMtu\s*:\s*(\d+)\s*\[B\])");
  static const std::regex kLink(R"(\bLink type\s*:\s*(\S+))");

  PerftestLog log;
  log.path = path;

  std::string title_tool, command_tool;
  int title_line = 0, command_line = 0;
  bool title_bidir = false, command_bidir = false;
  std::vector<int> error_lines;  // before any table
  bool looks_like_nccl_tests = false;

  enum class State { kBefore, kInTable, kAfter } state = State::kBefore;
  Table table;
  bool have_table = false;

  auto close_table = [&](int closing_line, bool by_error) {
    const size_t rows = (log.latency ? log.lat_rows.size() : log.bw_rows.size());
    const size_t table_rows = rows - table.rows_before;
    if (table_rows == 0) {
      std::string msg = "the perftest result table has no rows";
      if (by_error) msg += " (the run failed at line " + std::to_string(closing_line) + ")";
      throw ParseError(path, table.header_line, msg);
    }
    if (by_error) {
      log.notes.push_back("line " + std::to_string(table.header_line) +
                          ": table truncated by the error at line " + std::to_string(closing_line) +
                          "; the " + std::to_string(table_rows) + " rows before it are kept");
    } else if (closing_line == 0) {
      log.notes.push_back("line " + std::to_string(table.header_line) +
                          ": table has no closing dashed line; the " + std::to_string(table_rows) +
                          " rows up to the end of the text are kept");
    }
    state = State::kAfter;
  };

  for (size_t idx = 0; idx < lines.size(); ++idx) {
    const int n = static_cast<int>(idx) + 1;
    const std::string& raw = lines[idx];
    const std::string_view t = trim(raw);

    if (starts_with(raw, "##")) {  // metadata header
      const std::string_view body = trim(std::string_view(raw).substr(2));
      const size_t colon = body.find(':');
      const std::string key(colon == std::string_view::npos ? "" : trim(body.substr(0, colon)));
      const std::string value(colon == std::string_view::npos ? body
                                                              : trim(body.substr(colon + 1)));
      auto [it, inserted] = log.meta.emplace(key, value);
      if (!inserted) it->second += " | " + value;
      continue;
    }
    if (t.empty()) continue;

    if (contains(t, "use_cuda") || contains(t, "use_rocm") || contains(t, "use_neuron") ||
        contains(t, "use_opencl") || contains(t, "initializing CUDA") ||
        contains(t, "GPU buffer")) {
      log.gpu_memory = true;
    }

    if (starts_with(t, "#bytes")) {
      Unit unit = Unit::kNone;
      std::vector<Col> cols = parse_header(t, n, path, unit);
      if (!has(cols, Col::kBytes) || !has(cols, Col::kIters)) {
        throw ParseError(path, n, "the table header lacks #bytes or #iterations");
      }
      const bool lat = is_latency_table(cols);
      if (!lat && (!has(cols, Col::kBwPeak) || !has(cols, Col::kBwAvg))) {
        throw ParseError(path, n, "the table header has neither BW nor latency columns");
      }
      if (state == State::kInTable) close_table(0, false);
      if (have_table) {
        if (cols != table.cols || unit != table.unit) {
          throw ParseError(path, n,
                           "a second result table with other columns than the one at line " +
                               std::to_string(table.header_line));
        }
        log.notes.push_back("line " + std::to_string(n) +
                            ": another result table; its rows are appended to the first");
      }
      if (!title_tool.empty() && tool_is_latency(title_tool) != lat) {
        throw ParseError(path, n,
                         std::string("the title at line ") + std::to_string(title_line) + " is a " +
                             (lat ? "BW" : "latency") + " test but this is a " +
                             (lat ? "latency" : "BW") + " table");
      }
      table.header_line = n;
      table.cols = std::move(cols);
      table.unit = unit;
      table.rows_before = lat ? log.lat_rows.size() : log.bw_rows.size();
      log.latency = lat;
      log.report_gbits = unit == Unit::kGb;
      have_table = true;
      state = State::kInTable;
      continue;
    }

    if (state == State::kInTable) {
      if (is_dashed(t)) {
        close_table(n, false);
        continue;
      }
      const std::vector<std::string_view> fields = split_ws(t);
      // A row starts with the size; one written with other digits than ASCII (a full-width
      // '８'), or starting with another number ("0.000" for columns out of order), or a line of
      // the table's width with a number second, is a row too: reported below, not skipped.
      if (numberish(fields.front()) || starts_like_number(fields.front()) ||
          (fields.size() == table.cols.size() && fields.size() >= 2 &&
           starts_like_number(fields[1]))) {
        if (fields.size() != table.cols.size()) {
          throw ParseError(path, n,
                           "row has " + std::to_string(fields.size()) +
                               " fields but the header "
                               "at line " +
                               std::to_string(table.header_line) + " names " +
                               std::to_string(table.cols.size()) + " columns");
        }
        PerftestBwRow bw{0, 0, 0, 0, kNaN};
        PerftestLatRow lat{0, 0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
        for (size_t c = 0; c < fields.size(); ++c) {
          const Col col = table.cols[c];
          const std::string field(fields[c]);
          if (col == Col::kBytes || col == Col::kIters || col == Col::kSl) {
            int64_t v = 0;
            if (!parse_int(field, v) || (v <= 0 && col != Col::kSl)) {
              throw ParseError(path, n,
                               "field " + std::to_string(c + 1) + " '" + field +
                                   "' is not a positive integer" + non_ascii_hint(field));
            }
            if (col == Col::kBytes) bw.bytes = lat.bytes = v;
            if (col == Col::kIters) bw.iterations = lat.iterations = v;
            continue;
          }
          char* end = nullptr;
          const double v = std::strtod(field.c_str(), &end);
          if (end != field.c_str() + field.size() || !std::isfinite(v) || v < 0) {
            throw ParseError(path, n,
                             "field " + std::to_string(c + 1) + " '" + field +
                                 "' is not a non-negative number" + non_ascii_hint(field));
          }
          const double scale = table.unit == Unit::kGb ? kGbps : kMBps;
          // The fastest NIC ports are 800 Gb/s (1600 both ways): a bandwidth beyond twice that
          // is a corrupted row, not a measurement.
          constexpr double kMaxBps = 3.2e12 / 8;
          if ((col == Col::kBwPeak || col == Col::kBwAvg) && v * scale > kMaxBps) {
            // %g, not an int64 cast: the value can be any finite double (1e63 was undefined
            // behaviour, a fuzzer's find).
            char gbps[32];
            std::snprintf(gbps, sizeof gbps, "%.4g", v * scale * 8 / 1e9);
            throw ParseError(path, n,
                             "field " + std::to_string(c + 1) + " '" + field + "' is " + gbps +
                                 " Gb/s, beyond any NIC (the fastest ports are 800 Gb/s); "
                                 "expected a measured bandwidth");
          }
          switch (col) {
            case Col::kBwPeak:
              bw.bw_peak_Bps = v * scale;
              break;
            case Col::kBwAvg:
              bw.bw_avg_Bps = v * scale;
              break;
            case Col::kMsgRate:
              bw.msg_rate_Mpps = v;
              break;
            case Col::kTMin:
              lat.t_min_us = v;
              break;
            case Col::kTMax:
              lat.t_max_us = v;
              break;
            case Col::kTTypical:
              lat.t_typical_us = v;
              break;
            case Col::kTAvg:
              lat.t_avg_us = v;
              break;
            case Col::kTStdev:
              lat.t_stdev_us = v;
              break;
            case Col::kP99:
              lat.p99_us = v;
              break;
            case Col::kP99_9:
              lat.p99_9_us = v;
              break;
            default:
              break;
          }
        }
        if (log.latency) {
          check_perftest_latency(path, n,
                                 {lat.t_min_us, lat.t_max_us, lat.t_typical_us, lat.t_avg_us,
                                  lat.p99_us, lat.p99_9_us});
          log.lat_rows.push_back(lat);
        } else {
          const auto avg = std::find(table.cols.begin(), table.cols.end(), Col::kBwAvg);
          const auto rate = std::find(table.cols.begin(), table.cols.end(), Col::kMsgRate);
          if (avg != table.cols.end() && rate != table.cols.end()) {
            check_perftest_msg_rate(path, n, bw.bytes,
                                    std::string(fields[size_t(avg - table.cols.begin())]),
                                    table.unit == Unit::kGb ? kGbps : kMBps,
                                    std::string(fields[size_t(rate - table.cols.begin())]));
          }
          log.bw_rows.push_back(bw);
        }
        continue;
      }
      if (is_error_line(t)) {
        log.notes.push_back("line " + std::to_string(n) + ": " + std::string(t));
        close_table(n, true);
        continue;
      }
      if (contains(t, "CPU Frequency is not max") || contains(t, "Conflicting CPU frequency")) {
        log.notes.push_back("line " + std::to_string(n) + ": perftest warning: " + std::string(t));
      }
      continue;  // other noise inside the table
    }

    if (is_error_line(t)) {
      log.notes.push_back("line " + std::to_string(n) + ": " + std::string(t));
      if (state == State::kBefore) error_lines.push_back(n);
      continue;
    }
    if (contains(t, "algbw") || contains(t, "busbw") || contains(t, "nccl-tests")) {
      looks_like_nccl_tests = true;
    }
    if (state != State::kBefore) continue;

    // The test-info block and the command line, before the first table.
    std::smatch m;
    if (title_tool.empty() && contains(t, "Test") && std::regex_search(raw, m, kTitle)) {
      title_tool = tool_from_title(m[1].str(), m[2].str());
      title_line = n;
      title_bidir = contains(t, "Bidirectional");
      log.title = std::string(trim(raw));
      continue;
    }
    if (command_tool.empty() && contains(t, "ib_") && std::regex_search(raw, m, kCommand)) {
      command_tool = m[1].str();
      command_line = n;
      const std::string args = m[4].str();
      for (const std::string_view arg : split_ws(args)) {
        if (arg == "-b" || arg == "--bidirectional") command_bidir = true;
      }
    }
    if (log.device.empty()) log.device = info_value(raw, "Device", kDevice);
    if (log.connection_type.empty())
      log.connection_type = info_value(raw, "Connection type", kConnection);
    if (log.link_type.empty()) log.link_type = info_value(raw, "Link type", kLink);
    if (log.num_qps == 0) {
      const std::string v = info_value(raw, "Number of qps", kQps);
      if (!v.empty()) log.num_qps = header_int(v);
    }
    if (log.mtu_bytes == 0) {
      const std::string v = info_value(raw, "Mtu", kMtu);
      if (!v.empty()) log.mtu_bytes = header_int(v);
    }
  }

  if (state == State::kInTable) close_table(0, false);
  if (!have_table) {
    if (!error_lines.empty()) {
      const int e = error_lines.front();
      throw ParseError(path, e,
                       "no perftest result table; the run failed: '" +
                           std::string(trim(lines[static_cast<size_t>(e) - 1])) + "'");
    }
    std::string msg = "no perftest result table found; " + std::string(kExpectedHeader);
    if (looks_like_nccl_tests)
      msg += " (this looks like an nccl-tests log: fabricsim calibrate takes it with --nccl-tests)";
    throw ParseError(path, 0, msg);
  }

  // The tool: the title names what ran; else the command line; else the "## tool" header.
  if (!title_tool.empty()) {
    log.tool = title_tool;
    log.bidirectional = title_bidir;
    log.tool_line = title_line;
  } else {
    log.tool = command_tool;
    log.bidirectional = command_bidir;
    log.tool_line = command_tool.empty() ? 0 : command_line;
    if (log.tool.empty()) {
      const auto it = log.meta.find("tool");
      std::smatch m;
      if (it != log.meta.end() && std::regex_search(it->second, m, kCommand)) {
        log.tool = m[1].str();
      }
    }
    if (!log.tool.empty() && tool_is_latency(log.tool) != log.latency) {
      log.notes.push_back("line " + std::to_string(command_line) + ": the command names " +
                          log.tool + " but the table is a " + (log.latency ? "latency" : "BW") +
                          " table");
    }
  }
  return log;
}

PerftestLog parse_perftest_file(const std::string& path) {
  return parse_perftest(read_log_text(path), path);
}

}  // namespace fabricsim
