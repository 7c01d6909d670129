#include "sim/run/output_writers.hpp"

#include "sim/report/output_file.hpp"

#include <stdexcept>
#include <utility>

namespace fabricsim {

namespace {

/// flows.csv's note: how many of the delivered messages it holds, when not all.
std::string flows_note(const RunReport& rep) {
  if (rep.flows_unrecorded == 0) return "";
  return " (the first " + std::to_string(rep.flows.size()) + " of " +
         std::to_string(rep.flows.size() + rep.flows_unrecorded) + " messages)";
}

std::deque<OutputWriter>& table() {
  // The order of the files after results.json, as `run` has always written and listed them.
  static std::deque<OutputWriter> t = {
      {"perf.json", nullptr, write_perf_json, nullptr},
      {"ports.csv", nullptr, write_ports_csv, nullptr},
      {"queues.csv", nullptr, write_queues_csv, nullptr},
      {"flows.csv", [](const OutputSettings& s, const RunReport&) { return s.flows == "csv"; },
       write_flows_csv, flows_note},
      {"flows.csv.gz", [](const OutputSettings& s, const RunReport&) { return s.flows == "gz"; },
       write_flows_csv_gz, flows_note},
      // The traffic flows' FCT slowdown per size bucket (sim/report/fct_slowdown.hpp).
      {"slowdown.csv",
       [](const OutputSettings&, const RunReport& r) { return r.slowdown.flows() > 0; },
       [](const std::string& path, const RunReport& r) {
         write_output_file(path, fct_slowdown_csv(r.slowdown));
       },
       nullptr},
      // perftest's own report of a perftest: run (perftest/perftest.hpp), as `run` printed it.
      {"perftest.txt",
       [](const OutputSettings&, const RunReport& r) { return !r.perftest.empty(); },
       [](const std::string& path, const RunReport& r) {
         // A stopped run's table ends early: said after it, so a diff against a real run does
         // not read the missing sizes as a shorter sweep.
         write_output_file(path, r.complete ? r.perftest
                                            : r.perftest + "# incomplete: " + r.stop_reason +
                                                  "; the sizes after the last row did not run\n");
       },
       nullptr},
  };
  return t;
}

}  // namespace

const std::deque<OutputWriter>& output_writers() {
  return table();
}

size_t register_output_writer(OutputWriter writer) {
  std::deque<OutputWriter>& t = table();
  if (writer.file.empty()) throw std::invalid_argument("register_output_writer: empty file name");
  if (!writer.write) {
    throw std::invalid_argument("register_output_writer: '" + writer.file +
                                "' has no write function");
  }
  if (writer.file == "results.json" || writer.file == "trace.json") {
    throw std::invalid_argument("register_output_writer: '" + writer.file +
                                "' is written by the run itself");
  }
  for (const OutputWriter& w : t) {
    if (w.file == writer.file) {
      throw std::invalid_argument("register_output_writer: '" + writer.file +
                                  "' is already an output");
    }
  }
  t.push_back(std::move(writer));
  return t.size() - 1;
}

}  // namespace fabricsim
