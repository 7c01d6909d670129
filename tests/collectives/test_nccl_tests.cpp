// nccl-tests' table conventions (collectives/nccl_tests.hpp), checked by hand-worked examples
// from nccl-tests' source and against real all_reduce_perf / all_gather_perf / alltoall_perf
// logs copied verbatim into tests/data/nccl/.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/nccl_tests.hpp"

using namespace fabricsim;

namespace {

// ---------------------------------------------------------------------------------------------
// A small reader for nccl-tests logs, local to this test.

/// One of the two (out-of-place, in-place) measurements of a row.
struct Measurement {
  std::string time_text;  ///< as printed, µs
  double algbw = 0;       ///< GB/s
  double busbw = 0;       ///< GB/s
};

/// One 13-column row: size count type redop root, then time algbw busbw #wrong twice.
struct Row {
  std::string line;
  int64_t size = 0;
  int64_t count = 0;
  std::string type;
  std::string redop;
  int root = 0;
  Measurement m[2];
};

struct Sweep {
  int64_t minbytes = 0, maxbytes = 0, stepfactor = 0;
};

struct Log {
  std::string name;            ///< file name
  std::string collective;      ///< from "## tool: ... <collective>_perf"
  int nranks = 0;              ///< from "## nodes x GPUs:"
  int highest_rank = -1;       ///< the highest "#  Rank N" device line, -1 if none
  std::optional<Sweep> sweep;  ///< from the "# nThread ... minBytes ... step: F(factor)" line
  std::vector<Row> rows;
};

/// The rank count a "## nodes x GPUs:" value states: "... = N ranks", "N ranks ...", or
/// "A x B ..." / "A pods x B GPUs ..." (A × B); 0 if it states none of these.
int ranks_from_header(const std::string& value) {
  std::smatch m;
  if (std::regex_search(value, m, std::regex(R"(=\s*(\d+)\s+ranks)"))) return std::stoi(m[1]);
  if (std::regex_search(value, m, std::regex(R"(^(\d+)\s+ranks)"))) return std::stoi(m[1]);
  if (std::regex_search(value, m, std::regex(R"(^(\d+)\s+(?:[A-Za-z]+\s+)?x\s+(\d+))"))) {
    return std::stoi(m[1]) * std::stoi(m[2]);
  }
  return 0;
}

Log read_log(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  static const std::regex kRow(
      R"(^(?:\S*[:>])?\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+))"
      R"(\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$)");
  static const std::regex kTool(R"(^## tool:.*?\b(\w+)_perf\b)");
  static const std::regex kStarting(R"(# Collective test starting: (\w+)_perf)");
  static const std::regex kNodes(R"(^## nodes x GPUs:\s*(.*)$)");
  static const std::regex kRank(R"(#\s+Rank\s+(\d+)\s)");
  static const std::regex kSweep(
      R"(# nThread \d+ nGpus \d+ minBytes (\d+) maxBytes (\d+) step: (\d+)\(factor\))");
  Log log;
  log.name = path.filename().string();
  std::string starting;  // the name nccl-tests itself printed, if the tool line has none
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (std::regex_search(line, m, kTool)) {
      log.collective = m[1];
    } else if (std::regex_search(line, m, kNodes)) {
      log.nranks = ranks_from_header(m[1]);
    } else if (std::regex_search(line, m, kStarting)) {
      starting = m[1];
    } else if (std::regex_search(line, m, kSweep)) {
      log.sweep = Sweep{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
    } else if (std::regex_search(line, m, kRank)) {
      log.highest_rank = std::max(log.highest_rank, std::stoi(m[1]));
    } else if (std::regex_match(line, m, kRow)) {
      Row r;
      r.line = line;
      r.size = std::stoll(m[1]);
      r.count = std::stoll(m[2]);
      r.type = m[3];
      r.redop = m[4];
      r.root = std::stoi(m[5]);
      for (int k = 0; k < 2; ++k) {
        r.m[k].time_text = m[6 + 4 * k];
        r.m[k].algbw = std::stod(m[7 + 4 * k]);
        r.m[k].busbw = std::stod(m[8 + 4 * k]);
      }
      log.rows.push_back(r);
    }
  }
  if (log.collective.empty()) log.collective = starting;
  return log;
}

/// The logs of tests/data/nccl/ whose tables are complete, in nccl-tests' current 13-column
/// format, with a rank count the device lines or the header state (the calibration parser's
/// tests cover the others: old 12-column tables, hangs, interleaved runs, spliced headers).
const std::vector<Log>& logs() {
  static const std::vector<Log> kLogs = [] {
    std::vector<Log> out;
    const std::filesystem::path dir =
        std::filesystem::path(FABRICSIM_SOURCE_DIR) / "tests" / "data" / "nccl";
    std::vector<std::filesystem::path> files;
    for (const char* name : {"nccl-allgather-b200-1node-2gpu-nvlink-gcp-a4-01.txt",
                             "nccl-allgather-b200-2node-gcp-a4-roce-gib-01.txt",
                             "nccl-allgather-b200-2x1-gcp-a4-roce-gib-01.txt",
                             "nccl-allgather-h200-2x1-gcp-a3ultra-roce-gib-01.txt",
                             "nccl-allreduce-a100-1node-8gpu-nvswitch-gcm-fixture-01.txt",
                             "nccl-allreduce-a100-2node-aws-p4de-efa-01.txt",
                             "nccl-allreduce-a800-12node-2gpu-k8s-kubeflow-01.txt",
                             "nccl-allreduce-gb200-nvl72-1rack-coreweave-01.txt",
                             "nccl-allreduce-gb200-nvl72-20rack-coreweave-01.txt",
                             "nccl-allreduce-gb300-16node-mnnvl-oci-01.txt",
                             "nccl-allreduce-gb300-32node-mnnvl-roce400-oci-01.txt",
                             "nccl-allreduce-h100-2node-8hca-01.txt",
                             "nccl-allreduce-h100-2node-aws-p5-efa-01.txt",
                             "nccl-allreduce-h100-2node-dgx-midsize-anomaly-01.txt",
                             "nccl-allreduce-h200-2x1-gcp-a3ultra-roce-mpioperator-01.txt",
                             "nccl-allreduce-rtx4090-1node-4gpu-pcie-p2p-patched-01.txt",
                             "nccl-allreduce-t4-2node-aws-efa-karpenter-01.txt",
                             "nccl-allreduce-t4-2node-aws-g4dn-metal-efa-01.txt",
                             "nccl-allreduce-v100-2node-roce25g-nogdr-01.txt",
                             "nccl-alltoall-gb300-16node-mnnvl-oci-01.txt",
                             "nccl-alltoall-gb300-32node-mnnvl-roce400-oci-01.txt"}) {
      files.push_back(dir / name);
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back(read_log(f));
    return out;
  }();
  return kLogs;
}

/// The sizes requested by the log's -b/-e/-f sweep, if its rows are that whole sweep (same
/// number of rows); empty if the log has no sweep line or elided rows.
std::vector<int64_t> complete_sweep(const Log& log) {
  if (!log.sweep || log.rows.empty()) return {};
  const int elem = nccl_tests_type_bytes(log.rows.front().type);
  std::vector<int64_t> requested =
      sweep_sizes(log.sweep->minbytes, log.sweep->maxbytes, log.sweep->stepfactor, elem);
  if (requested.size() != log.rows.size()) return {};
  return requested;
}

/// Digits after the decimal point of a printed number.
int decimals(const std::string& text) {
  const auto dot = text.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Worked examples from nccl-tests' source (src/*.cu GetCollByteCount, src/common.cu TimeTest).

TEST_CASE("nccl_tests_size: all_reduce, broadcast, reduce and sendrecv keep the whole count") {
  for (const char* c : {"all_reduce", "broadcast", "reduce", "sendrecv"}) {
    const NcclTestsSize s = nccl_tests_size(c, 1000, 4, 8);
    CHECK(s.size_bytes == 1000);
    CHECK(s.count == 250);
    CHECK(s.send_bytes == 1000);
    CHECK(s.recv_bytes == 1000);
    // A partial element is dropped: 1003 B of float are 250 elements.
    CHECK(nccl_tests_size(c, 1003, 4, 8).size_bytes == 1000);
    CHECK(nccl_tests_size(c, 3, 4, 8).size_bytes == 0);
  }
}

TEST_CASE("nccl_tests_size: all_gather sends a 16-byte-aligned share and receives n of them") {
  // 1 MiB float on 3 ranks: 262144 / 3 = 87381 elements, down to a multiple of 4 = 87380.
  const NcclTestsSize s = nccl_tests_size("all_gather", 1 << 20, 4, 3);
  CHECK(s.count == 87380);
  CHECK(s.send_bytes == 87380 * 4);
  CHECK(s.recv_bytes == 87380 * 4 * 3);
  CHECK(s.size_bytes == 87380 * 4 * 3);
  // Below 16 bytes per rank the row is all zero: 16 B float on 2 ranks is 2 elements per rank.
  CHECK(nccl_tests_size("all_gather", 16, 4, 2).size_bytes == 0);
  CHECK(nccl_tests_size("all_gather", 32, 4, 2).size_bytes == 32);
  // The alignment is in bytes: 8 int8, 8 half or 2 double per 16 bytes.
  CHECK(nccl_tests_size("all_gather", 100, 1, 4).count == 16);
  CHECK(nccl_tests_size("all_gather", 100, 2, 2).count == 24);
  CHECK(nccl_tests_size("all_gather", 100, 8, 2).count == 6);
}

TEST_CASE("nccl_tests_size: reduce_scatter sends n shares and receives one") {
  const NcclTestsSize s = nccl_tests_size("reduce_scatter", 1 << 20, 4, 3);
  CHECK(s.count == 87380);
  CHECK(s.send_bytes == 87380 * 4 * 3);
  CHECK(s.recv_bytes == 87380 * 4);
  CHECK(s.size_bytes == 87380 * 4 * 3);
}

TEST_CASE("nccl_tests_size: alltoall sends and receives n shares and counts one per peer") {
  const NcclTestsSize s = nccl_tests_size("alltoall", 1 << 20, 4, 3);
  CHECK(s.count == 87380);
  CHECK(s.send_bytes == 87380 * 4 * 3);
  CHECK(s.recv_bytes == 87380 * 4 * 3);
  CHECK(s.size_bytes == 87380 * 4 * 3);
}

TEST_CASE("nccl_tests_size: a printed size maps to itself") {
  for (const std::string& c : nccl_tests_collectives()) {
    for (int n : {1, 2, 3, 8, 72}) {
      for (int64_t requested : {int64_t{0}, int64_t{1000}, int64_t{1} << 20, int64_t{3} << 30}) {
        const NcclTestsSize s = nccl_tests_size(c, requested, 4, n);
        const NcclTestsSize again = nccl_tests_size(c, s.size_bytes, 4, n);
        CHECK(again.size_bytes == s.size_bytes);
        CHECK(again.count == s.count);
        CHECK(s.size_bytes <= requested);
      }
    }
  }
}

TEST_CASE("nccl_tests_size: invalid inputs") {
  SECTION("unknown collective, with a suggestion") {
    CHECK_THROWS_WITH(
        nccl_tests_size("allreduce", 8, 4, 2),
        Catch::Contains("'allreduce'") && Catch::Contains("did you mean 'all_reduce'"));
  }
  SECTION("negative size") {
    CHECK_THROWS_AS(nccl_tests_size("all_reduce", -1, 4, 2), std::invalid_argument);
  }
  SECTION("element size not 1, 2, 4 or 8") {
    CHECK_THROWS_AS(nccl_tests_size("all_reduce", 8, 0, 2), std::invalid_argument);
    CHECK_THROWS_AS(nccl_tests_size("all_reduce", 8, 3, 2), std::invalid_argument);
    CHECK_THROWS_AS(nccl_tests_size("all_gather", 8, 16, 2), std::invalid_argument);
  }
  SECTION("no ranks") {
    CHECK_THROWS_AS(nccl_tests_size("all_gather", 8, 4, 0), std::invalid_argument);
  }
}

TEST_CASE("nccl_tests_collectives: nccl-tests' binary names") {
  CHECK(nccl_tests_collectives() == std::vector<std::string>{"all_reduce", "all_gather",
                                                             "reduce_scatter", "broadcast",
                                                             "reduce", "alltoall", "sendrecv"});
  for (const std::string& c : nccl_tests_collectives()) CHECK_NOTHROW(busbw_factor(c, 4));
}

TEST_CASE("nccl_tests_redop: the op for reductions and sendrecv, none otherwise") {
  CHECK(nccl_tests_redop("all_reduce", "sum") == "sum");
  CHECK(nccl_tests_redop("reduce_scatter", "max") == "max");
  CHECK(nccl_tests_redop("reduce", "avg") == "avg");
  CHECK(nccl_tests_redop("sendrecv", "prod") == "prod");  // src/sendrecv.cu passes opName on
  CHECK(nccl_tests_redop("all_reduce", "mulsum") == "mulsum");
  for (const char* c : {"all_gather", "broadcast", "alltoall"}) {
    CHECK(nccl_tests_redop(c, "sum") == "none");
  }
  SECTION("unknown op") {
    CHECK_THROWS_WITH(nccl_tests_redop("all_reduce", "summ"),
                      Catch::Contains("'summ'") && Catch::Contains("did you mean 'sum'"));
  }
  SECTION("unknown collective") {
    CHECK_THROWS_AS(nccl_tests_redop("allgather", "sum"), std::invalid_argument);
  }
}

TEST_CASE("nccl_tests_root: the root for broadcast and reduce, -1 otherwise") {
  CHECK(nccl_tests_root("broadcast", 3) == 3);
  CHECK(nccl_tests_root("reduce", 0) == 0);
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"}) {
    CHECK(nccl_tests_root(c, 0) == -1);
    CHECK(nccl_tests_root(c, 5) == -1);
  }
  SECTION("negative root of a rooted collective") {
    CHECK_THROWS_AS(nccl_tests_root("broadcast", -1), std::invalid_argument);
  }
  SECTION("unknown collective") {
    CHECK_THROWS_AS(nccl_tests_root("bcast", 0), std::invalid_argument);
  }
}

TEST_CASE("nccl_tests_type_bytes: nccl-tests' type names and sizes") {
  const std::map<std::string, int> expected = {
      {"int8", 1},   {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8},
      {"uint64", 8}, {"half", 2},  {"float", 4}, {"double", 8}, {"bfloat16", 2}};
  CHECK(nccl_tests_types().size() == expected.size());
  for (const std::string& t : nccl_tests_types()) {
    INFO(t);
    REQUIRE(expected.count(t) == 1);
    CHECK(nccl_tests_type_bytes(t) == expected.at(t));
  }
  SECTION("NCCL's own spellings are not nccl-tests names, but are suggested") {
    CHECK_THROWS_WITH(nccl_tests_type_bytes("float32"), Catch::Contains("did you mean 'float'"));
    CHECK_THROWS_WITH(nccl_tests_type_bytes("float16"), Catch::Contains("did you mean 'half'"));
    CHECK_THROWS_WITH(nccl_tests_type_bytes("char"), Catch::Contains("did you mean 'int8'"));
    CHECK_THROWS_WITH(nccl_tests_type_bytes("int"), Catch::Contains("did you mean 'int32'"));
  }
  SECTION("a typo") {
    CHECK_THROWS_WITH(nccl_tests_type_bytes("bfloat61"),
                      Catch::Contains("did you mean 'bfloat16'"));
  }
  SECTION("nothing close") {
    CHECK_THROWS_AS(nccl_tests_type_bytes("complex128"), std::invalid_argument);
    CHECK_THROWS_AS(nccl_tests_type_bytes(""), std::invalid_argument);
  }
}

// ---------------------------------------------------------------------------------------------
// Real logs (tests/data/nccl/): the expected values are the logs' own numbers.

TEST_CASE("nccl-tests logs: every log names its collective and rank count and has rows") {
  REQUIRE(!logs().empty());
  for (const Log& log : logs()) {
    DYNAMIC_SECTION(log.name) {
      const auto& names = nccl_tests_collectives();
      CHECK(std::find(names.begin(), names.end(), log.collective) != names.end());
      CHECK(log.nranks >= 1);
      CHECK(!log.rows.empty());
      // Where the device list is printed, its last rank agrees with the header.
      if (log.highest_rank >= 0) CHECK(log.highest_rank + 1 == log.nranks);
    }
  }
}

TEST_CASE("nccl-tests logs: cover all_reduce, all_gather and alltoall at several rank counts") {
  std::map<std::string, std::set<int>> ranks;
  for (const Log& log : logs()) ranks[log.collective].insert(log.nranks);
  CHECK(ranks["all_reduce"].size() >= 3);
  CHECK(ranks["all_gather"].size() >= 2);
  CHECK(ranks["alltoall"].size() >= 2);
}

TEST_CASE("nccl-tests logs: size, count, redop and root columns") {
  for (const Log& log : logs()) {
    DYNAMIC_SECTION(log.name) {
      for (const Row& r : log.rows) {
        INFO(r.line);
        const int elem = nccl_tests_type_bytes(r.type);
        const NcclTestsSize s = nccl_tests_size(log.collective, r.size, elem, log.nranks);
        CHECK(s.size_bytes == r.size);
        CHECK(s.count == r.count);
        // nccl-tests' defaults: -o sum, -r 0.
        CHECK(nccl_tests_redop(log.collective, "sum") == r.redop);
        CHECK(nccl_tests_root(log.collective, 0) == r.root);
      }
    }
  }
}

TEST_CASE("nccl-tests logs: each row of a complete sweep is the requested size as printed") {
  // A log whose rows are its whole -b/-e/-f sweep (none elided) shows what each requested size
  // prints as; logs with elided rows are covered by the size-column test above.
  int swept = 0;
  for (const Log& log : logs()) swept += complete_sweep(log).empty() ? 0 : 1;
  CHECK(swept >= 5);
  for (const Log& log : logs()) {
    DYNAMIC_SECTION(log.name) {
      const std::vector<int64_t> requested = complete_sweep(log);
      for (size_t i = 0; i < requested.size(); ++i) {
        INFO("requested " << requested[i] << " B; row: " << log.rows[i].line);
        const int elem = nccl_tests_type_bytes(log.rows[i].type);
        const NcclTestsSize s = nccl_tests_size(log.collective, requested[i], elem, log.nranks);
        CHECK(s.size_bytes == log.rows[i].size);
        CHECK(s.count == log.rows[i].count);
      }
    }
  }
}

TEST_CASE("nccl-tests logs: busbw over algbw is busbw_factor within the printing precision") {
  int checked = 0;  // measurements with algbw >= 1.00, over all logs
  for (const Log& log : logs()) {
    for (const Row& r : log.rows) checked += (r.m[0].algbw >= 1.00) + (r.m[1].algbw >= 1.00);
  }
  CHECK(checked >= 100);
  for (const Log& log : logs()) {
    DYNAMIC_SECTION(log.name) {
      const double f = busbw_factor(log.collective, log.nranks);
      for (const Row& r : log.rows) {
        for (const Measurement& m : r.m) {
          if (m.algbw < 1.00) continue;  // rounding to 2 decimals would dominate
          INFO(r.line << "\nfactor " << f << ", busbw/algbw " << m.busbw / m.algbw);
          // Each printed value is within ±0.005 of the true one and true busbw = f × true algbw,
          // so |busbw − f × algbw| <= 0.005 + f × 0.005.
          CHECK(std::abs(m.busbw - f * m.algbw) <= 0.005 * (1 + f) + 1e-9);
        }
      }
    }
  }
}

TEST_CASE("nccl-tests logs: algbw is the size column over the time column") {
  for (const Log& log : logs()) {
    DYNAMIC_SECTION(log.name) {
      for (const Row& r : log.rows) {
        for (const Measurement& m : r.m) {
          INFO(r.line);
          const double t_us = std::stod(m.time_text);
          const int d = decimals(m.time_text);
          // src/common.cu BenchTime: %7.0f from 10000 µs, %7.1f from 100 µs, else %7.2f.
          if (d == 0) CHECK(t_us >= 10000);
          if (d == 1) CHECK((t_us >= 100 && t_us <= 10000));
          if (d == 2) CHECK(t_us <= 100);
          const double half_ulp_us = 0.5 * std::pow(10.0, -d);
          const auto ps = [](double us) { return static_cast<int64_t>(std::llround(us * 1e6)); };
          // The true time is within half a unit of the last printed digit; algbw within 0.005.
          const double slowest = algbw_GBps(r.size, ps(t_us + half_ulp_us));
          CHECK(m.algbw >= slowest - 0.005 - 1e-9);
          if (t_us - half_ulp_us > 0) {
            const double fastest = algbw_GBps(r.size, ps(t_us - half_ulp_us));
            CHECK(m.algbw <= fastest + 0.005 + 1e-9);
          }
        }
      }
    }
  }
}
