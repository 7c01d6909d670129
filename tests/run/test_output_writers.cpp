// The output-writer table (sim/run/output_writers.hpp): a writer registered in this file alone
// writes its file during a run made as `fabricsim run` makes it (run_scenario), after the
// built-in files, and the `# wrote` line names it.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/report/output_file.hpp"
#include "sim/run/output_writers.hpp"
#include "sim/run/run_command.hpp"

namespace fabricsim {
namespace {

/// message_totals.txt: "messages M bytes B" over the messages flows.csv records.
void write_message_totals(const std::string& path, const RunReport& rep) {
  int64_t bytes = 0;
  for (const FlowRow& f : rep.flows) bytes += f.bytes;
  write_output_file(path, "messages " + std::to_string(rep.flows.size()) + " bytes " +
                              std::to_string(bytes) + "\n");
}

const size_t kToyWriter = register_output_writer(
    {"message_totals.txt",
     [](const OutputSettings&, const RunReport& rep) { return rep.flows_unrecorded == 0; },
     write_message_totals, nullptr});

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("output writers: the built-in files in their order then a registered one") {
  const auto& table = output_writers();
  const char* built_in[] = {"perf.json",    "ports.csv",    "queues.csv",  "flows.csv",
                            "flows.csv.gz", "slowdown.csv", "perftest.txt"};
  REQUIRE(table.size() == 8);
  for (size_t i = 0; i < 7; ++i) CHECK(table[i].file == built_in[i]);
  CHECK(table[kToyWriter].file == "message_totals.txt");
  CHECK_THROWS_AS(register_output_writer({"ports.csv", nullptr, write_message_totals, nullptr}),
                  std::invalid_argument);
  CHECK_THROWS_AS(register_output_writer({"results.json", nullptr, write_message_totals, nullptr}),
                  std::invalid_argument);
  CHECK_THROWS_AS(register_output_writer({"nothing.txt", nullptr, nullptr, nullptr}),
                  std::invalid_argument);
}

TEST_CASE("a registered output writer writes its file in a run through run_scenario") {
  const auto dir = std::filesystem::temp_directory_path() / "fabricsim_test_output_writers";
  std::filesystem::remove_all(dir);
  RunOptions opts;
  // quickstart.yaml: 16 hosts of one GPU each; Ring AllReduce, Simple protocol, three sizes.
  opts.scenario_path = std::string(FABRICSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opts.sets = {"workload.minbytes=8KiB", "workload.maxbytes=32KiB", "workload.algorithm=ring",
               "workload.protocol=simple"};
  opts.out_dir = dir.string();
  opts.out_given = true;
  opts.trace_max_events = 0;
  std::ostringstream out;
  std::streambuf* const saved = std::cout.rdbuf(out.rdbuf());
  const int code = run_scenario(opts, nullptr);
  std::cout.rdbuf(saved);
  REQUIRE(code == kExitOk);

  // Ring AllReduce of S bytes on N ranks moves 2 (N - 1) x S bytes over the network (each of
  // the N ranks sends 2 (N - 1) / N x S): N = 16, S = 8 + 16 + 32 KiB = 57344, 1720320 bytes.
  // The message count is flows.csv's, whose lines (past its header) are one per message.
  std::istringstream flows(slurp(dir / "flows.csv"));
  int64_t messages = -1;
  for (std::string line; std::getline(flows, line);) ++messages;
  REQUIRE(messages > 0);
  CHECK(slurp(dir / "message_totals.txt") ==
        "messages " + std::to_string(messages) + " bytes 1720320\n");
  // Listed after the built-in files.
  CHECK(out.str().find("queues.csv, flows.csv, message_totals.txt\n") != std::string::npos);

  // --flows none: flows.csv is not written and an earlier run's is removed; the toy still is.
  opts.flows = "none";
  std::cout.rdbuf(out.rdbuf());
  const int again = run_scenario(opts, nullptr);
  std::cout.rdbuf(saved);
  REQUIRE(again == kExitOk);
  CHECK_FALSE(std::filesystem::exists(dir / "flows.csv"));
  CHECK(std::filesystem::exists(dir / "message_totals.txt"));
  std::filesystem::remove_all(dir);
}

}  // namespace fabricsim
