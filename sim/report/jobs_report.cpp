// results.json `jobs` and the summary's table of the jobs (scenario `jobs:`).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/core/units.hpp"
#include "sim/report/report.hpp"

namespace fabricsim {

namespace {

/// Servers as ranges: [0, 1, 2, 5, 7, 8] -> "0-2,5,7-8".
std::string server_ranges(const std::vector<int>& servers) {
  std::string out;
  for (size_t i = 0; i < servers.size();) {
    size_t k = i;
    while (k + 1 < servers.size() && servers[k + 1] == servers[k] + 1) ++k;
    if (!out.empty()) out += ',';
    out += std::to_string(servers[i]);
    if (k > i) {
      out += '-';
      out += std::to_string(servers[k]);
    }
    i = k + 1;
  }
  return out;
}

/// `v` with `decimals` digits after the point.
std::string num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// A job's `collective` object: a training step's has its time and no bandwidths (null).
nlohmann::ordered_json job_row_json(const JobRow& j) {
  nlohmann::ordered_json c = collective_row_json(j.row);
  if (j.row.collective == kTrainingStep) {
    for (const char* k : {"algorithm", "protocol", "type", "redop", "algbw_GBps", "busbw_GBps"}) {
      c[k] = nullptr;
    }
  }
  return c;
}

}  // namespace

nlohmann::ordered_json jobs_json(const std::vector<JobRow>& jobs) {
  using nlohmann::ordered_json;
  ordered_json out = ordered_json::array();
  for (const JobRow& j : jobs) {
    out.push_back(
        {{"name", j.name},
         {"placement", j.placement},
         {"servers", j.servers},
         {"leaves", j.leaves},
         {"iterations", j.iterations},
         {"start_ps", j.start_ps},
         {"end_ps", j.end_ps >= 0 ? ordered_json(j.end_ps) : ordered_json(nullptr)},
         {"complete", j.complete},
         {"collective", job_row_json(j)},
         {"alone", j.alone_time_ps > 0
                       ? ordered_json{{"time_ps", j.alone_time_ps},
                                      {"busbw_GBps", j.row.collective == kTrainingStep
                                                         ? ordered_json(nullptr)
                                                         : ordered_json(j.alone_busbw_GBps)}}
                       : ordered_json(nullptr)},
         {"alone_note", j.alone_note.empty() ? ordered_json(nullptr) : ordered_json(j.alone_note)},
         {"slowdown", j.slowdown > 0 ? ordered_json(j.slowdown) : ordered_json(nullptr)},
         {"overlap", j.overlap >= 0 ? ordered_json(j.overlap) : ordered_json(nullptr)}});
  }
  return out;
}

void print_jobs(std::ostream& out, const std::vector<JobRow>& jobs) {
  out << "# jobs: " << jobs.size()
      << " on one fabric; time and busbw per iteration (the mean), beside the job alone on its "
         "servers; overlap: the share of its time another job ran\n";
  // Each column as wide as its widest cell; text left-aligned, numbers right-aligned.
  const std::vector<std::string> header = {"job",         "placement", "servers",     "leaves",
                                           "collective",  "ranks",     "size",        "algo/proto",
                                           "iters",       "time (us)", "busbw(GB/s)", "alone (us)",
                                           "alone busbw", "slowdown",  "overlap"};
  const std::vector<bool> left = {true,  true,  true,  false, true,  false, false, true,
                                  false, false, false, false, false, false, false};
  std::vector<std::vector<std::string>> rows;
  for (const JobRow& j : jobs) {
    const bool step = j.row.collective == kTrainingStep;
    const auto us = [](int64_t ps) { return num(static_cast<double>(ps) / 1e6, 2); };
    rows.push_back({j.name, j.placement, server_ranges(j.servers), std::to_string(j.leaves),
                    j.row.collective, std::to_string(j.row.ranks),
                    step ? "-" : format_size(j.row.size_bytes),
                    step ? "-" : j.row.algorithm + "/" + j.row.protocol,
                    std::to_string(j.iterations), j.complete ? us(j.row.time_ps) : "unfinished",
                    j.complete && !step ? num(j.row.busbw_GBps, 2) : "-",
                    j.alone_time_ps > 0 ? us(j.alone_time_ps) : "-",
                    j.alone_time_ps > 0 && !step ? num(j.alone_busbw_GBps, 2) : "-",
                    j.slowdown > 0 ? num(j.slowdown, 3) + "x" : "-",
                    j.overlap >= 0 ? num(100 * j.overlap, 0) + " %" : "-"});
  }
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = "#";
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      text += "  ";
      text += left[c] ? cells[c] + pad : pad + cells[c];
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  for (const JobRow& j : jobs) {
    if (!j.alone_note.empty()) out << "#  " << j.name << " alone: " << j.alone_note << "\n";
  }
  out << "#\n";
}

}  // namespace fabricsim
