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
         {"slowdown", j.slowdown > 0 ? ordered_json(j.slowdown) : ordered_json(nullptr)}});
  }
  return out;
}

void print_jobs(std::ostream& out, const std::vector<JobRow>& jobs) {
  out << "# jobs: " << jobs.size()
      << " on one fabric; time and busbw per iteration (the mean), beside the job alone on its "
         "servers\n";
  size_t w_name = 4, w_servers = 7;
  for (const JobRow& j : jobs) {
    w_name = std::max(w_name, j.name.size());
    w_servers = std::max(w_servers, server_ranges(j.servers).size());
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "#  %-*s  %-9s  %-*s  %6s  %-14s  %5s  %10s  %-13s  %5s  %12s  %11s  %12s  %11s  "
                "%8s\n",
                static_cast<int>(w_name), "job", "placement", static_cast<int>(w_servers),
                "servers", "leaves", "collective", "ranks", "size", "algo/proto", "iters",
                "time (us)", "busbw(GB/s)", "alone (us)", "alone busbw", "slowdown");
  out << buf;
  for (const JobRow& j : jobs) {
    const bool step = j.row.collective == kTrainingStep;
    const std::string algo = step ? "-" : j.row.algorithm + "/" + j.row.protocol;
    const std::string time =
        j.complete ? num(static_cast<double>(j.row.time_ps) / 1e6, 2) : std::string("unfinished");
    const std::string busbw = j.complete && !step ? num(j.row.busbw_GBps, 2) : std::string("-");
    const std::string alone =
        j.alone_time_ps > 0 ? num(static_cast<double>(j.alone_time_ps) / 1e6, 2) : "-";
    const std::string alone_busbw = j.alone_time_ps > 0 && !step ? num(j.alone_busbw_GBps, 2) : "-";
    const std::string slowdown = j.slowdown > 0 ? num(j.slowdown, 3) + "x" : "-";
    std::snprintf(
        buf, sizeof buf,
        "#  %-*s  %-9s  %-*s  %6d  %-14s  %5d  %10s  %-13s  %5d  %12s  %11s  %12s  %11s  "
        "%8s\n",
        static_cast<int>(w_name), j.name.c_str(), j.placement.c_str(), static_cast<int>(w_servers),
        server_ranges(j.servers).c_str(), j.leaves, j.row.collective.c_str(), j.row.ranks,
        step ? "-" : format_size(j.row.size_bytes).c_str(), algo.c_str(), j.iterations,
        time.c_str(), busbw.c_str(), alone.c_str(), alone_busbw.c_str(), slowdown.c_str());
    out << buf;
  }
  for (const JobRow& j : jobs) {
    if (!j.alone_note.empty()) out << "#  " << j.name << " alone: " << j.alone_note << "\n";
  }
  out << "#\n";
}

}  // namespace fabricsim
