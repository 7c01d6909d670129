#include "calibration/nccl_log.hpp"

#include "calibration/log_checks.hpp"
#include "collectives/nccl_tests.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace fabricsim {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool all_alpha(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }) && !(s[0] >= '0' && s[0] <= '9');
}

/// Removes launcher prefixes, repeatedly: Open MPI --tag-output "[1,0]<stdout>:", srun -l "0: ",
/// and the ssbandjl fork's "run(), common.cu:NNN, ".
std::string strip_prefixes(std::string s) {
  static const std::regex kPrefix(
      R"(^(\[\d+,\d+\]<std(?:out|err)>:|\s*\d+: |run\(\), common\.cu:\d+, ?))");
  std::smatch m;
  while (std::regex_search(s, m, kPrefix)) s = m.suffix().str();
  return s;
}

/// A row's time, algbw and busbw as printed, for the checks of log_checks.hpp.
struct RowText {
  NcclBlockText oop, ip;
  bool in_place = true;  ///< the row has the in-place block
};

/// The table layout, read from the "#  size  count  type …" header line.
struct Layout {
  bool has_root = true;
  bool error_column = false;  ///< old format: "error" instead of "#wrong"
  int lead = 5;               ///< size count type redop [root]
  int ncols = 13;             ///< lead + 4 (out-of-place) + 4 (in-place) [+ 2]
  int extra = 0;              ///< fabricsim's own table: "algorithm protocol" after the blocks
};

/// Reads the header tokens (after '#'); false if they are not an nccl-tests table header.
bool read_layout(const std::vector<std::string>& tok, Layout& out) {
  if (tok.size() < 8 || tok[0] != "size" || tok[1] != "count") return false;
  const auto time_it = std::find(tok.begin(), tok.end(), "time");
  if (time_it == tok.end()) return false;
  Layout l;
  l.lead = static_cast<int>(time_it - tok.begin());
  const std::vector<std::string> lead(tok.begin(), time_it);
  if (lead == std::vector<std::string>{"size", "count", "type", "redop", "root"}) {
    l.has_root = true;
  } else if (lead == std::vector<std::string>{"size", "count", "type", "redop"}) {
    l.has_root = false;
  } else {
    return false;
  }
  // fabricsim run prints the same table with the algorithm and protocol of each size after it.
  if (tok.size() >= 2 && tok[tok.size() - 2] == "algorithm" && tok.back() == "protocol") {
    l.extra = 2;
  }
  const int blocks = (static_cast<int>(tok.size()) - l.extra - l.lead) / 4;
  if (blocks < 1 || blocks > 2 || l.lead + 4 * blocks + l.extra != static_cast<int>(tok.size())) {
    return false;
  }
  for (int b = 0; b < blocks; ++b) {
    const int i = l.lead + 4 * b;
    if (tok[i] != "time" || tok[i + 1] != "algbw" || tok[i + 2] != "busbw") return false;
    if (tok[i + 3] == "error") {
      l.error_column = true;
    } else if (tok[i + 3] != "#wrong") {
      return false;
    }
  }
  l.ncols = static_cast<int>(tok.size());
  out = l;
  return true;
}

/// A finite number written in full; false otherwise.
bool to_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

bool to_int64(const std::string& s, int64_t& out) {
  if (!all_digits(s) && !(s.size() > 1 && s[0] == '-' && all_digits(s.substr(1)))) return false;
  errno = 0;
  out = std::strtoll(s.c_str(), nullptr, 10);
  return errno == 0;
}

/// The digits a regex matched as a count up to `max`. Throws ParseError at `line` of `path` when
/// they do not fit (a fuzzer's find: std::stoi's out_of_range escaped as an internal error).
int64_t count_of(const std::string& digits, const std::string& path, int line,
                 int64_t max = std::numeric_limits<int>::max()) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() || v < 0 || v > max) {
    throw ParseError(
        path, line,
        "the number " + digits + " is out of range (at most " + std::to_string(max) + ")");
  }
  return v;
}

/// "## nodes x GPUs:" header value -> nodes, ranks (0 when not stated).
void read_nodes_header(const std::string& v, int& nodes, int& ranks, const std::string& path) {
  static const std::regex kNxG(R"((\d+)\s*(?:[A-Za-z]+\s+)?x\s*(\d+))");
  static const std::regex kRanks(R"((\d+)\s+ranks)");
  constexpr int64_t kMax = 1'000'000;  // nodes, GPUs per node, ranks: a million is already absurd
  std::smatch m;
  if (std::regex_search(v, m, kNxG)) {
    const int64_t n = count_of(m[1], path, 0, kMax), per = count_of(m[2], path, 0, kMax);
    if (n * per > kMax) {
      throw ParseError(path, 0, "## nodes x GPUs: " + v + ": more than a million ranks");
    }
    nodes = static_cast<int>(n);
    ranks = static_cast<int>(n * per);
  }
  if (std::regex_search(v, m, kRanks)) ranks = static_cast<int>(count_of(m[1], path, 0, kMax));
}

bool is_collective(const std::string& name) {
  const auto& c = nccl_tests_collectives();
  return std::find(c.begin(), c.end(), name) != c.end();
}

/// The collective named by an "<name>_perf" in `s`, or "".
std::string collective_in(const std::string& s) {
  static const std::regex kPerf(R"(([a-z_]+)_perf\b)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kPerf); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1];
    if (is_collective(name)) return name;
  }
  return "";
}

}  // namespace

NcclLog parse_nccl_tests(const std::string& text, const std::string& path) {
  NcclLog log;
  log.path = path;

  // --- Split into lines; refuse empty and binary input. ---
  std::vector<std::string> lines;
  {
    std::string cur;
    for (char c : text) {
      if (c == '\n') {
        lines.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) lines.push_back(cur);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    for (unsigned char c : lines[i]) {
      if (c < 0x09 || (c > 0x0d && c < 0x20 && c != 0x1b)) {
        throw ParseError(path, static_cast<int>(i + 1),
                         "binary data (control byte " + std::to_string(static_cast<int>(c)) +
                             "); expected nccl-tests text output");
      }
    }
  }
  if (std::all_of(lines.begin(), lines.end(),
                  [](const std::string& l) { return trim(l).empty(); })) {
    throw ParseError(path, 0, "empty input; expected nccl-tests output");
  }

  static const std::regex kNThread(
      R"(^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)\s+step:\s*(\S+)\s+warmup iters:\s*(\d+)\s+iters:\s*(\d+))");
  static const std::regex kValidation(R"(validation:\s*(\d+))");
  static const std::regex kRank(
      R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s*(.*)$)");
  static const std::regex kStarting(R"(^#\s*Collective test starting:\s*(\S+))");
  // A version as NCCL prints it ("2.26.6+cuda12.8"); other text after "NCCL version" is not one.
  static const std::regex kVersion(R"(NCCL version (\d+\.\d+\.\d+(?:\+[A-Za-z0-9.]+)?))");
  static const std::regex kNetwork(R"(NCCL INFO Using network (.+)$)");
  static const std::regex kNetUsing(R"(NCCL INFO NET/(IB|Socket)\s*: Using)");
  static const std::regex kNetName(R"(NCCL INFO NET/([A-Za-z0-9_]+))");
  static const std::regex kChannel(R"(Channel (\d+)/(\d+) :)");
  // enqueue.cc's choice: "N Bytes -> Algo 1 proto 2 time T" (indices) or, in newer releases,
  // "AllReduce: N Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}=..." (names).
  static const std::regex kChoice(R"((\d+) Bytes -> Algo (\w+) proto (\w+))");
  static const std::regex kEnv(R"(NCCL INFO (NCCL_[A-Z0-9_]+) set by environment to (.*)$)");
  static const std::regex kAvg(R"(^#\s*Avg bus bandwidth\s*:\s*(\S+))");
  static const std::regex kOob(R"(^#\s*Out of bounds values\s*:\s*(\d+)\s*(\S*))");
  static const std::regex kPerftest(
      R"(\bib_(write|read|send|atomic)_(bw|lat)\b|RDMA_(Write|Read|Send)\w* \w+ Test|#bytes\s+#iterations)");

  // fabricsim run's own output (a simulated log to calibrate against, or to compare).
  static const std::regex kFabricsimRun(R"(^#\s*fabricsim \S+: (\w+), algorithm )");
  static const std::regex kFabricsimRanks(
      R"(^#\s*nccl\s*: (\d+) ranks on (\d+) servers? x (\d+) GPUs?\b)");
  int fabricsim_ranks = 0, fabricsim_nodes = 0;

  bool in_meta_block = true;
  int perftest_line = 0;
  int header_line = 0;  // line of the current table header
  Layout layout;
  int footer_line = 0;
  int nthread_lines = 0;
  int last_rank_line = 0;
  bool rank_list_cut = false;  // "..." right after the device list
  bool gdr_seen = false, gdr_disabled = false, net_lines = false;
  std::string coll_started, coll_body;
  std::set<std::string> body_collectives;
  std::set<std::string> versions;
  std::map<int, int> rank_first_line;
  std::vector<RowText> printed;  // beside log.rows: the row's numbers as printed

  for (size_t idx = 0; idx < lines.size(); ++idx) {
    const int ln = static_cast<int>(idx + 1);
    std::string raw = lines[idx];
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();

    // The "## key: value" block at the top of a file.
    if (in_meta_block && raw.rfind("##", 0) == 0) {
      const std::string body = trim(raw.substr(2));
      const auto colon = body.find(':');
      if (colon != std::string::npos) {
        const std::string key = trim(body.substr(0, colon));
        const std::string value = trim(body.substr(colon + 1));
        auto& slot = log.meta[key];
        slot = slot.empty() ? value : slot + "\n" + value;
        log.meta_lines.emplace(key, ln);
      }
      continue;
    }
    if (!trim(raw).empty()) in_meta_block = false;

    const std::string line = strip_prefixes(raw);
    const std::string t = trim(line);
    if (t.empty() || t.rfind("```", 0) == 0) continue;

    std::smatch m;
    if (perftest_line == 0 && std::regex_search(t, kPerftest)) perftest_line = ln;

    // NCCL INFO lines and "NCCL version" lines.
    if (std::regex_search(t, m, kVersion)) {
      if (log.nccl_version.empty()) {
        log.nccl_version = m[1];
        log.nccl_version_line = ln;
      }
      versions.insert(m[1]);
    }
    if (t.find("NCCL INFO") != std::string::npos) {
      if (std::regex_search(t, m, kNetwork)) {
        log.transport = trim(m[1]);
        log.net_info.emplace("network " + log.transport, NcclInfoLine{ln, t});
      } else if (std::regex_search(t, m, kNetUsing)) {
        if (log.transport.empty()) log.transport = m[1];
        log.net_info.emplace("using NET/" + m[1].str(), NcclInfoLine{ln, t});
      }
      if (std::regex_search(t, m, kChoice)) {
        const int algo = nccl_algo_index(m[2]), proto = nccl_proto_index(m[3]);
        if (algo >= 0 && proto >= 0) {
          log.choices.push_back(
              {count_of(m[1], path, ln, std::numeric_limits<int64_t>::max()), algo, proto, ln});
        }
      }
      // "Channel 00/02 :    0   1" lists a ring; "Channel 00/0 : 0[0] -> 1[0] via ..." is a
      // connection, whose number after the slash is not the channel count.
      if (t.find("->") == std::string::npos && std::regex_search(t, m, kChannel)) {
        log.channels = std::max(log.channels, static_cast<int>(count_of(m[2], path, ln)));
      }
      if (t.find("via NET/") != std::string::npos) {
        net_lines = true;
      } else if (std::regex_search(t, m, kNetName)) {
        const bool provider = t.find("Selected Provider is") != std::string::npos;
        log.net_info.emplace(provider ? "provider" : "NET/" + m[1].str(), NcclInfoLine{ln, t});
      }
      if (t.find("GDRDMA") != std::string::npos ||
          t.find("GPU Direct RDMA Enabled") != std::string::npos) {
        gdr_seen = true;
      }
      if (t.find("GPU Direct RDMA Disabled") != std::string::npos) gdr_disabled = true;
      if (std::regex_search(t, m, kEnv)) {
        std::string v = trim(m[2]);
        if (!v.empty() && v.back() == '.') v.pop_back();
        log.nccl_env[m[1]] = v;
      }
      continue;
    }

    if (std::regex_search(t, m, kFabricsimRun)) {
      if (is_collective(m[1].str()) && coll_started.empty()) coll_started = m[1].str();
      continue;
    }
    if (std::regex_search(t, m, kFabricsimRanks)) {
      fabricsim_ranks = static_cast<int>(count_of(m[1], path, ln));
      fabricsim_nodes = static_cast<int>(count_of(m[2], path, ln));
      continue;
    }
    if (std::regex_search(t, m, kStarting)) {
      const std::string name = collective_in(m[1].str());
      if (!name.empty() && coll_started.empty()) coll_started = name;
      continue;
    }
    if (std::regex_search(t, m, kNThread)) {
      ++nthread_lines;
      log.nthread = static_cast<int>(count_of(m[1], path, ln));
      log.ngpus = static_cast<int>(count_of(m[2], path, ln));
      log.minbytes = count_of(m[3], path, ln, std::numeric_limits<int64_t>::max());
      log.maxbytes = count_of(m[4], path, ln, std::numeric_limits<int64_t>::max());
      log.step = m[5];
      log.warmup_iters = static_cast<int>(count_of(m[6], path, ln));
      log.iters = static_cast<int>(count_of(m[7], path, ln));
      if (std::regex_search(t, m, kValidation)) log.validation = m[1] != "0";
      continue;
    }
    if (std::regex_search(t, m, kRank)) {
      NcclRank r;
      r.rank = static_cast<int>(count_of(m[1], path, ln, std::numeric_limits<int>::max()));
      if (r.rank >= kMaxNcclRanks) {
        throw ParseError(path, ln,
                         "rank " + m[1].str() + ": more than " + std::to_string(kMaxNcclRanks) +
                             " ranks, beyond any real run; expected the rank of one GPU");
      }
      r.host = m[2];
      r.device = static_cast<int>(count_of(m[3], path, ln));
      r.gpu = trim(m[4]);
      r.line = ln;
      if (auto it = rank_first_line.find(r.rank); it != rank_first_line.end()) {
        throw ParseError(
            path, ln,
            "rank " + std::to_string(r.rank) + " is listed again (first at line " +
                std::to_string(it->second) +
                "): several independent runs are interleaved; nccl-tests was probably built "
                "without MPI (make MPI=1), so each launched process ran alone");
      }
      rank_first_line[r.rank] = ln;
      log.ranks.push_back(r);
      last_rank_line = ln;
      rank_list_cut = false;
      continue;
    }
    if (std::regex_search(t, m, kAvg)) {
      double v = 0;
      if (to_double(m[1], v)) log.avg_busbw_GBps = v;
      if (header_line != 0 && footer_line == 0) footer_line = ln;
      continue;
    }
    if (std::regex_search(t, m, kOob)) {
      if (count_of(m[1], path, ln, std::numeric_limits<int64_t>::max()) > 0) {
        log.notes.push_back("line " + std::to_string(ln) + ": " + m[1].str() +
                            " out-of-bounds values (" + m[2].str() +
                            "): results failed validation");
      }
      if (header_line != 0 && footer_line == 0) footer_line = ln;
      continue;
    }

    // Elisions.
    if (t == "..." || t == "…") {
      if (header_line != 0 && footer_line == 0) {
        log.notes.push_back("line " + std::to_string(ln) +
                            ": '...' in the table: rows were elided (truncated paste)");
      } else if (last_rank_line != 0 && header_line == 0) {
        rank_list_cut = true;
        log.notes.push_back("line " + std::to_string(ln) + ": device list elided ('...')");
      } else {
        log.notes.push_back("line " + std::to_string(ln) + ": '...': lines elided");
      }
      continue;
    }

    if (t[0] == '#') {
      const auto tok = split_ws(t.substr(1));
      Layout l;
      if (read_layout(tok, l)) {
        if (!log.rows.empty()) {
          throw ParseError(path, ln,
                           "a second nccl-tests result table starts here (the first has " +
                               std::to_string(log.rows.size()) +
                               " rows): the log holds more than one run; split it");
        }
        if (header_line != 0) {
          log.notes.push_back("line " + std::to_string(ln) +
                              ": table header repeated (first at line " +
                              std::to_string(header_line) + ")");
        }
        header_line = ln;
        layout = l;
        continue;
      }
      if (header_line != 0 && footer_line == 0) {
        std::string lower = t;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower.find("truncated") != std::string::npos) {
          log.notes.push_back("line " + std::to_string(ln) + ": table truncated (\"" + t + "\")");
        }
      }
      continue;
    }

    // A result row: size and count integers, then a type name. Inside a table, a line with the
    // table's column count and a number in its first two, or one whose first columns read as
    // numbers and a type but with other characters than ASCII digits (a full-width '１'), is a
    // row too: read and reported at its line, never skipped as noise.
    const auto tok = split_ws(t);
    const bool in_table = header_line != 0 && footer_line == 0;
    const bool row_like = in_table && tok.size() >= 3 &&
                          ((static_cast<int>(tok.size()) == layout.ncols &&
                            (starts_like_number(tok[0]) || starts_like_number(tok[1]))) ||
                           (numberish(tok[0]) && numberish(tok[1]) && all_alpha(tok[2])));
    if (!row_like &&
        (tok.size() < 3 || !all_digits(tok[0]) || !all_digits(tok[1]) || !all_alpha(tok[2]))) {
      if (header_line == 0) {
        const std::string name = collective_in(t);
        if (!name.empty()) body_collectives.insert(name);
      }
      continue;  // noise: shell prompts, launcher warnings, …
    }
    if (header_line == 0) {
      // No header: accept a row whose column count names the layout unambiguously.
      if (tok.size() == 13) {
        layout = Layout{};
      } else if (tok.size() == 12) {
        layout = Layout{false, true, 4, 12};
      } else {
        continue;
      }
      header_line = ln;
      log.notes.push_back("line " + std::to_string(ln) +
                          ": no table header; columns inferred from the row (" +
                          std::to_string(tok.size()) + " columns)");
    }
    if (footer_line != 0) {
      throw ParseError(path, ln,
                       "result row after the table's footer (line " + std::to_string(footer_line) +
                           "): the log holds more than one run; split it");
    }
    const int n = static_cast<int>(tok.size());
    const bool oop_only = n == layout.lead + 4 && layout.ncols == layout.lead + 8;
    if (n != layout.ncols && !oop_only) {
      throw ParseError(path, ln,
                       "row has " + std::to_string(n) + " columns; the table header at line " +
                           std::to_string(header_line) + " has " + std::to_string(layout.ncols) +
                           " (size count type redop" + (layout.has_root ? " root" : "") +
                           ", then time algbw busbw " + (layout.error_column ? "error" : "#wrong") +
                           " out-of-place and in-place)");
    }
    NcclLogRow row;
    row.line = ln;
    auto bad = [&](const std::string& what, const std::string& value) {
      return ParseError(path, ln,
                        "cannot read " + what + " '" + value + "'" + non_ascii_hint(value));
    };
    if (!to_int64(tok[0], row.size_bytes)) throw bad("size", tok[0]);
    if (!to_int64(tok[1], row.count)) throw bad("count", tok[1]);
    row.type = tok[2];
    int elem_bytes = 0;
    try {
      elem_bytes = nccl_tests_type_bytes(row.type);
    } catch (const std::invalid_argument& e) {
      throw ParseError(path, ln, e.what());
    }
    row.redop = tok[3];
    if (!all_alpha(row.redop)) throw bad("redop", row.redop);
    int i = 4;
    if (layout.has_root) {
      int64_t root = 0;
      if (!to_int64(tok[4], root)) throw bad("root", tok[4]);
      row.root = static_cast<int>(root);
      i = 5;
    }
    RowText text;
    text.in_place = !oop_only;
    auto block = [&](int at, double& time, double& algbw, double& busbw, int64_t& wrong,
                     double& error, const char* which, NcclBlockText& printed) {
      const std::string w(which);
      if (!to_double(tok[at], time)) throw bad(w + " time", tok[at]);
      if (!to_double(tok[at + 1], algbw)) throw bad(w + " algbw", tok[at + 1]);
      if (!to_double(tok[at + 2], busbw)) throw bad(w + " busbw", tok[at + 2]);
      printed = NcclBlockText{tok[at], tok[at + 1], tok[at + 2], time, algbw, busbw};
      const std::string& last = tok[at + 3];
      if (layout.error_column) {
        if (!to_double(last, error)) throw bad(w + " error", last);
      } else if (last == "N/A") {
        wrong = -1;
      } else if (!to_int64(last, wrong) || wrong < 0) {
        throw bad(w + " #wrong", last);
      }
    };
    block(i, row.oop_time_us, row.oop_algbw_GBps, row.oop_busbw_GBps, row.oop_wrong, row.oop_error,
          "out-of-place", text.oop);
    if (!oop_only) {
      block(i + 4, row.ip_time_us, row.ip_algbw_GBps, row.ip_busbw_GBps, row.ip_wrong, row.ip_error,
            "in-place", text.ip);
    }
    if (row.size_bytes < 0 || row.count < 0) {
      throw ParseError(path, ln, "negative size or count; expected bytes and elements >= 0");
    }
    check_nccl_time_and_algbw(path, ln, "out-of-place", row.size_bytes, text.oop);
    if (text.in_place) check_nccl_time_and_algbw(path, ln, "in-place", row.size_bytes, text.ip);
    if (row.count > row.size_bytes / elem_bytes) {
      throw ParseError(path, ln,
                       "count " + std::to_string(row.count) + " x " + std::to_string(elem_bytes) +
                           " bytes exceeds size " + std::to_string(row.size_bytes));
    }
    if (!log.rows.empty()) {
      const NcclLogRow& prev = log.rows.back();
      if (row.root == prev.root && row.size_bytes < prev.size_bytes) {
        throw ParseError(path, ln,
                         "size " + std::to_string(row.size_bytes) + " after " +
                             std::to_string(prev.size_bytes) + " (line " +
                             std::to_string(prev.line) +
                             "): rows of several runs are interleaved (nccl-tests built without "
                             "MPI, or several logs pasted together)");
      }
    }
    if (row.oop_wrong > 0 || row.ip_wrong > 0) {
      log.notes.push_back("line " + std::to_string(ln) + ": #wrong " +
                          std::to_string(row.oop_wrong) + " out-of-place, " +
                          std::to_string(row.ip_wrong) + " in-place at size " +
                          std::to_string(row.size_bytes) + ": results failed validation");
    }
    log.rows.push_back(row);
    printed.push_back(text);
  }

  // --- No rows: say why. ---
  if (log.rows.empty()) {
    if (header_line != 0) {
      throw ParseError(path, header_line,
                       "nccl-tests table header with no result rows after it: the run stopped "
                       "(hang or crash) before printing results");
    }
    if (perftest_line != 0) {
      throw ParseError(path, perftest_line,
                       "this looks like a perftest output (ib_write_bw, ib_read_lat …), not "
                       "nccl-tests (fabricsim calibrate takes it with --perftest)");
    }
    throw ParseError(path, 0,
                     "no nccl-tests result table found; expected a header line '#  size  count  "
                     "type  redop  root  time  algbw  busbw  #wrong …' followed by one row per "
                     "size");
  }

  // --- Collective. ---
  if (!coll_started.empty()) {
    log.collective = coll_started;
  } else if (!body_collectives.empty()) {
    log.collective = *body_collectives.begin();
  } else {
    if (auto it = log.meta.find("tool"); it != log.meta.end())
      log.collective = collective_in(it->second);
    for (const auto& [key, value] : log.meta) {
      if (!log.collective.empty()) break;
      log.collective = collective_in(value);
    }
  }
  if (body_collectives.size() > 1) {
    log.notes.push_back("several collectives named on command lines; using '" + log.collective +
                        "'");
  }

  // --- GDR, versions, repeated run headers. ---
  log.gdr = gdr_seen ? 1 : (gdr_disabled || net_lines) ? 0 : -1;
  if (versions.size() > 1) {
    log.notes.push_back(std::to_string(versions.size()) + " different NCCL versions in the log");
  }
  if (nthread_lines > 1) {
    log.notes.push_back(std::to_string(nthread_lines) +
                        " '# nThread' lines: several runs or processes printed headers");
  }

  // --- Ranks and nodes. ---
  int hdr_nodes = 0, hdr_ranks = 0;
  if (auto it = log.meta.find("nodes x GPUs"); it != log.meta.end()) {
    read_nodes_header(it->second, hdr_nodes, hdr_ranks, path);
  }
  std::set<std::string> hosts;
  int max_rank = -1;
  for (const auto& r : log.ranks) {
    hosts.insert(r.host);
    max_rank = std::max(max_rank, r.rank);
  }
  const bool listed_all =
      !log.ranks.empty() && static_cast<int>(log.ranks.size()) == max_rank + 1 && !rank_list_cut;
  const std::string device_list = log.ranks.empty()
                                      ? std::string()
                                      : "the device list: Rank " + std::to_string(max_rank) +
                                            " at line " + std::to_string(rank_first_line[max_rank]);
  std::string nranks_source;  // where log.nranks comes from, for messages
  if (!log.ranks.empty() && !rank_list_cut) {
    log.nranks = max_rank + 1;
    nranks_source = device_list;
  } else if (!log.ranks.empty()) {
    log.nranks = std::max(hdr_ranks, max_rank + 1);
    nranks_source = hdr_ranks >= max_rank + 1 ? "the ## nodes x GPUs header" : device_list;
    log.notes.push_back(
        "device list cut after rank " + std::to_string(max_rank) + "; nranks " +
        std::to_string(log.nranks) +
        (hdr_ranks >= max_rank + 1 ? " from the ## nodes x GPUs header" : " is a lower bound"));
  } else if (hdr_ranks > 0) {
    log.nranks = hdr_ranks;
    nranks_source = "the ## nodes x GPUs header";
  } else {
    log.nranks = fabricsim_ranks;  // fabricsim run's "# nccl : R ranks on S servers" line
    nranks_source = "the '# nccl : R ranks' line";
  }
  if (listed_all) {
    log.nodes = static_cast<int>(hosts.size());
  } else if (hdr_nodes > 0) {
    log.nodes = hdr_nodes;
  } else if (log.ranks.empty() && hdr_ranks == 0 && fabricsim_nodes > 0) {
    log.nodes = fabricsim_nodes;
  } else if (!log.ranks.empty()) {
    log.notes.push_back("device list incomplete; node count unknown (" +
                        std::to_string(hosts.size()) + " host(s) listed)");
  }

  // --- busbw of every row against algbw and the rank count: nccl-tests computes busbw as
  // algbw x busbw_factor(collective, nranks), so a row that disagrees has another rank count
  // than the device list or header says (spliced from another run), or was edited. ---
  if (!log.collective.empty() && log.nranks > 0) {
    for (size_t k = 0; k < log.rows.size(); ++k) {
      const int ln = log.rows[k].line;
      check_nccl_busbw(path, ln, "out-of-place", log.collective, log.nranks, nranks_source,
                       printed[k].oop);
      if (printed[k].in_place) {
        check_nccl_busbw(path, ln, "in-place", log.collective, log.nranks, nranks_source,
                         printed[k].ip);
      }
    }
  }
  if (log.maxbytes > 0 && log.rows.back().size_bytes > log.maxbytes &&
      (log.collective == "all_reduce" || log.collective == "broadcast" ||
       log.collective == "reduce")) {
    log.notes.push_back("rows reach " + std::to_string(log.rows.back().size_bytes) +
                        " bytes but the header says maxBytes " + std::to_string(log.maxbytes) +
                        ": header from another run");
  }
  return log;
}

NcclLog parse_nccl_tests_file(const std::string& path) {
  return parse_nccl_tests(read_log_text(path), path);
}

std::string nccl_version_of(const NcclLog& log) {
  if (!log.nccl_version.empty()) return log.nccl_version;
  static const std::regex kNccl(R"(\bNCCL (\d+\.\d+\.\d+(?:\+[A-Za-z0-9.]+)?))");
  const auto software = log.meta.find("software");
  std::smatch m;
  if (software != log.meta.end() && std::regex_search(software->second, m, kNccl)) return m[1];
  return "";
}

namespace {

/// `word` lower-cased without '_': "NVLS_TREE" and "NVLSTree" both "nvlstree".
std::string folded(const std::string& word) {
  std::string out;
  for (char c : word) {
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

/// The index of `word` among `count` names (`name_of`): a one-digit index, or a name matched
/// by `folded`; -1 for anything else.
int index_of(const std::string& word, int count, std::string (*name_of)(int)) {
  if (word.size() == 1 && word[0] >= '0' && word[0] < '0' + count) return word[0] - '0';
  for (int i = 0; i < count; ++i) {
    if (folded(name_of(i)) == folded(word)) return i;
  }
  return -1;
}

}  // namespace

int nccl_algo_index(const std::string& word) {
  return index_of(word, 7, nccl_algo_name);
}

int nccl_proto_index(const std::string& word) {
  return index_of(word, 3, nccl_proto_name);
}

std::string nccl_algo_name(int algo) {
  static const char* const names[] = {
      "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
  return algo >= 0 && algo < 7 ? names[algo] : "";
}

std::string nccl_proto_name(int proto) {
  static const char* const names[] = {"ll", "ll128", "simple"};
  return proto >= 0 && proto < 3 ? names[proto] : "";
}

}  // namespace fabricsim
