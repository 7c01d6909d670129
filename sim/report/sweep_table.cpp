#include "sim/report/sweep_table.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "sim/core/counter_table.hpp"
#include "sim/report/markdown_table.hpp"

namespace fabricsim {

std::string number_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

std::string fixed3(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

std::vector<std::string> metric_cells(size_t workload_sizes, const RunReport* rep, Outcome outcome,
                                      const std::string& error) {
  std::vector<std::string> c;
  switch (outcome) {
    case Outcome::kComplete:
      c.push_back("complete");
      break;
    case Outcome::kDeadlock:
      c.push_back("deadlock");
      break;
    case Outcome::kTransportFailed:
      c.push_back("transport gave up");  // which queue pair and why: stderr, results.json
      break;
    case Outcome::kInterrupted:
      c.push_back("interrupted");
      break;
    case Outcome::kLimited:
      c.push_back("limited");
      break;
    case Outcome::kFailed:
      c.push_back("incomplete: " + (rep ? rep->stop_reason : "internal error: " + error));
      break;
    case Outcome::kUnbuildable:
      c.push_back("unbuildable");
      break;
  }
  if (rep == nullptr) {
    c.resize(kMetricColumns.size());
    return c;
  }
  // busbw only when every size of the workload finished: a partial sweep's mean is not
  // comparable with a full one's (nccl-tests' "Avg bus bandwidth" is over all sizes).
  bool all_sizes = false;
  if (workload_sizes > 0 && !rep->rows.empty()) all_sizes = rep->rows.size() == workload_sizes;
  if (all_sizes) {
    double avg = 0;
    const CollectiveRow* largest = &rep->rows.front();
    for (const auto& row : rep->rows) {
      avg += row.busbw_GBps;
      if (row.size_bytes > largest->size_bytes) largest = &row;
    }
    c.push_back(fixed3(avg / static_cast<double>(rep->rows.size())));
    c.push_back(fixed3(largest->busbw_GBps));
  } else {
    c.insert(c.end(), {"", ""});
  }
  const Counters& k = rep->counters;
  c.push_back(std::to_string(k.max_queue_bytes));
  if (rep->ports.empty()) {
    c.push_back("");
  } else {
    int64_t worst = 0;
    for (const auto& p : rep->ports) worst = std::max(worst, p.p99_queue_bytes);
    c.push_back(std::to_string(worst));
  }
  for (uint32_t i : {kCounterPfcPauseTx, kCounterEcnMarked, kCounterCnpTx, kCounterDrops}) {
    c.push_back(std::to_string(counter_value(k, i)));
  }
  // FCT of the traffic flows and of the collectives' messages, apart (empty where none).
  for (const FctSummary* fct : {&rep->fct_traffic, &rep->fct_messages}) {
    c.push_back(fct->completed > 0 ? format_ps_as_us(fct->p50_ps) : "");
    c.push_back(fct->completed > 0 ? format_ps_as_us(fct->p99_ps) : "");
  }
  c.push_back(format_ps_as_us(rep->simulated_ps));
  // The traffic flows' FCT slowdown over all sizes (fct_slowdown.hpp; empty without one).
  const SlowdownBucket& s = rep->slowdown.all;
  for (double x : {s.p50, s.p95, s.p99}) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", x);  // as slowdown.csv
    c.push_back(s.count > 0 ? text : "");
  }
  return c;
}

void write_csv(std::ostream& out, const SweepTable& t) {
  for (size_t i = 0; i < t.header.size(); ++i) out << (i ? "," : "") << csv_field(t.header[i]);
  out << "\n";
  for (const auto& row : t.rows) {
    for (size_t i = 0; i < row.cells.size(); ++i) out << (i ? "," : "") << csv_field(row.cells[i]);
    out << "\n";
  }
}

void write_markdown_table(std::ostream& out, const SweepTable& t) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(t.rows.size());
  for (const auto& row : t.rows) rows.push_back(row.cells);
  // A varied value too long for a column (a whole jobs list) is shown as "#k", k its place
  // among the column's values, and written out under the table (sweep.csv keeps it whole).
  const auto status = std::find(t.header.begin(), t.header.end(), "status");
  std::string legend;
  for (size_t c = 1; c < static_cast<size_t>(status - t.header.begin()); ++c) {
    const bool long_values = std::any_of(rows.begin(), rows.end(), [&](const auto& r) {
      return c < r.size() && r[c].size() > kLongValueChars;
    });
    if (!long_values) continue;
    std::vector<std::string> seen;
    for (auto& r : rows) {
      if (c >= r.size()) continue;
      auto it = std::find(seen.begin(), seen.end(), r[c]);
      if (it == seen.end()) {
        seen.push_back(r[c]);
        legend += "\n- `";
        legend += t.header[c];
        legend += "` #";
        legend += std::to_string(seen.size());
        legend += ": `";
        legend += r[c];
        legend += '`';
        it = seen.end() - 1;
      }
      r[c] = '#';
      r[c] += std::to_string(it - seen.begin() + 1);
    }
  }
  fabricsim::write_markdown_table(out, t.header, rows, t.right_aligned);
  if (!legend.empty()) out << legend.substr(1) << "\n";
}

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789._/=:,+-@%") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (const char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string point_dir_name(int64_t point, int64_t points) {
  const std::string digits = std::to_string(point);
  const size_t width = std::max<size_t>(3, std::to_string(points).size());
  return "point-" + std::string(width - std::min(width, digits.size()), '0') + digits;
}

std::string describe_values(const std::vector<SweepAxis>& axes,
                            const std::vector<std::string>& values) {
  std::string s;
  for (size_t a = 0; a < axes.size(); ++a) s += (a ? " " : "") + axes[a].key + "=" + values[a];
  return s;
}

}  // namespace fabricsim
