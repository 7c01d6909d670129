// Output writers: trace.json (Chrome trace events), results.json, ports/queues/flows CSV and the
// summary lines. Every expected value here follows from the inputs written in the test.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"

namespace fs = std::filesystem;
using fabricsim::ChromeTrace;
using fabricsim::RunReport;

namespace {

/// A fresh directory for one test case, removed when the case ends.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("fabricsim_test_report_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

const std::string kTruncNote3 = "trace truncated: max_events reached (3 events)";

}  // namespace

TEST_CASE("format_ps_as_us prints exact microseconds from integer picoseconds") {
  using fabricsim::format_ps_as_us;
  CHECK(format_ps_as_us(0) == "0.000000");
  CHECK(format_ps_as_us(1) == "0.000001");
  CHECK(format_ps_as_us(999'999) == "0.999999");
  CHECK(format_ps_as_us(1'000'000) == "1.000000");
  CHECK(format_ps_as_us(1'000'000'000'000) == "1000000.000000");  // 1 s
  CHECK(format_ps_as_us(12'345'678) == "12.345678");
  CHECK(format_ps_as_us(-1) == "-0.000001");
  // A double would round these; integer arithmetic keeps every digit.
  CHECK(format_ps_as_us(std::numeric_limits<int64_t>::max()) == "9223372036854.775807");
  CHECK(format_ps_as_us(std::numeric_limits<int64_t>::min()) == "-9223372036854.775808");
}

TEST_CASE("trace.json holds one event per line with the Trace Event Format fields") {
  TempDir d("events");
  const fs::path file = d.path / "trace.json";
  {
    ChromeTrace t(file.string(), 100);
    t.process_name(1, "host0");
    t.thread_name(1, 2, "qp 2");
    t.async_begin("msg", "write 4096 B", 0x1f, 1, 2, 1, R"({"bytes":4096})");
    t.counter(3, "leaf0:1 queue", 999'999, 42);
    t.instant("drop", "tail drop", 3, 1, 1'000'000'000'000);
    t.async_end("msg", "write 4096 B", 0x1f, 1, 2, 12'345'678);
    CHECK(t.events_written() == 4);  // metadata is not counted
    CHECK_FALSE(t.truncated());
    t.close();
  }
  const std::string text = slurp(file);
  const auto lines = lines_of(text);
  // "[", six events, "]".
  REQUIRE(lines.size() == 8);
  CHECK(lines[0] == "[");
  CHECK(lines[1] == R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"host0"}},)");
  CHECK(lines[2] == R"({"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"qp 2"}},)");
  CHECK(lines[3] ==
        R"({"name":"write 4096 B","cat":"msg","ph":"b","ts":0.000001,"pid":1,"tid":2,"id":"0x1f",)"
        R"("args":{"bytes":4096}},)");
  CHECK(lines[4] ==
        R"({"name":"leaf0:1 queue","ph":"C","ts":0.999999,"pid":3,"args":{"bytes":42}},)");
  CHECK(
      lines[5] ==
      R"({"name":"tail drop","cat":"drop","ph":"i","s":"t","ts":1000000.000000,"pid":3,"tid":1},)");
  CHECK(
      lines[6] ==
      R"({"name":"write 4096 B","cat":"msg","ph":"e","ts":12.345678,"pid":1,"tid":2,"id":"0x1f"})");
  CHECK(lines[7] == "]");

  const auto j = nlohmann::json::parse(text);
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 6);
  CHECK(j[0]["args"]["name"] == "host0");
  CHECK(j[2]["ph"] == "b");
  CHECK(j[2]["id"] == j[5]["id"]);  // begin and end pair up by cat + id
  CHECK(j[2]["cat"] == j[5]["cat"]);
  CHECK(j[2]["args"]["bytes"] == 4096);
  CHECK(j[3]["args"]["bytes"] == 42);
  CHECK(j[4]["s"] == "t");
  CHECK(j[5]["ts"].get<double>() == Approx(12.345678));
}

TEST_CASE("trace.json stops at max_events and ends with a truncation note") {
  TempDir d("cap");
  const fs::path file = d.path / "trace.json";
  ChromeTrace t(file.string(), 3);
  t.process_name(0, "fabric");
  for (int i = 0; i < 5; ++i) {
    CHECK(t.recording() == (i < 3));
    std::string name = "e";  // (not "e" + to_string: GCC 12 warns falsely, bug 105329)
    name += std::to_string(i);
    t.instant("c", name, 0, 0, int64_t{1000} * (i + 1));
  }
  t.thread_name(0, 0, "late metadata");  // metadata is never capped
  CHECK(t.truncated());
  CHECK(t.events_written() == 3);
  CHECK(t.events_dropped() == 2);
  t.close();
  t.close();  // idempotent

  const auto j = nlohmann::json::parse(slurp(file));
  REQUIRE(j.is_array());
  int metadata = 0, events = 0, notes = 0;
  for (const auto& e : j) {
    if (e["ph"] == "M") {
      ++metadata;
    } else if (e["name"] == kTruncNote3) {
      ++notes;
    } else {
      ++events;
    }
  }
  CHECK(metadata == 2);
  CHECK(events == 3);
  CHECK(notes == 1);
  // The written events are the first three, and the note comes last, at the first refused time.
  CHECK(j[1]["name"] == "e0");
  CHECK(j[3]["name"] == "e2");
  const auto& note = j.back();
  CHECK(note["name"] == kTruncNote3);
  CHECK(note["ph"] == "i");
  CHECK(note["ts"].get<double>() == Approx(0.004));  // e3 at 4000 ps
  CHECK(note["args"]["max_events"] == 3);
  CHECK(note["args"]["dropped_events"] == 2);
}

TEST_CASE("trace.json with exactly max_events events is not truncated") {
  TempDir d("exact");
  const fs::path file = d.path / "trace.json";
  {
    ChromeTrace t(file.string(), 2);
    t.counter(0, "q", 0, 1);
    t.counter(0, "q", 1, 2);
    CHECK_FALSE(t.recording());
    CHECK_FALSE(t.truncated());
  }  // the destructor closes the file
  const auto j = nlohmann::json::parse(slurp(file));
  REQUIRE(j.size() == 2);
  CHECK(j[1]["args"]["bytes"] == 2);
}

TEST_CASE("trace.json escapes names as results.json does, invalid UTF-8 included") {
  TempDir d("escape");
  // A quote, a backslash, a newline, a control character, and a Latin-1 byte (not UTF-8).
  const std::string name = std::string("sw \"a\"\\b\n\x01") + "caf\xE9";
  const std::string want = std::string("sw \"a\"\\b\n\x01") + "caf\xEF\xBF\xBD";
  {
    ChromeTrace t((d.path / "trace.json").string(), 10);
    t.process_name(0, name);
    t.instant(name, name, 0, 0, 5);
    t.close();
  }
  const std::string text = slurp(d.path / "trace.json");
  CHECK(lines_of(text).size() == 4);  // the newline in the name is escaped, not written
  const auto j = nlohmann::json::parse(text);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["args"]["name"] == want);
  CHECK(j[1]["name"] == want);
  CHECK(j[1]["cat"] == want);

  RunReport r;
  r.scenario = name;
  fabricsim::write_results_json((d.path / "results.json").string(), r);
  CHECK(nlohmann::json::parse(slurp(d.path / "results.json"))["scenario"] == want);
}

TEST_CASE("ChromeTrace refuses bad arguments and unwritable paths") {
  TempDir d("bad");
  CHECK_THROWS_AS(ChromeTrace((d.path / "t.json").string(), 0), std::invalid_argument);
  CHECK_FALSE(fs::exists(d.path / "t.json"));
  CHECK_THROWS_AS(ChromeTrace((d.path / "no_such_dir" / "t.json").string(), 10),
                  std::runtime_error);
  ChromeTrace t((d.path / "t.json").string(), 10);
  CHECK_THROWS_AS(t.instant("c", "n", 0, 0, 0, "not json"), std::invalid_argument);
  CHECK_THROWS_AS(t.async_begin("c", "n", 1, 0, 0, 0, "[1]"), std::invalid_argument);
  CHECK(t.events_written() == 0);  // a refused call is not counted
  t.close();
  t.instant("c", "after close", 0, 0, 0);  // ignored
  CHECK_FALSE(t.recording());
  CHECK(slurp(d.path / "t.json") == "[\n]\n");  // the refused events left no text behind
  CHECK(nlohmann::json::parse(slurp(d.path / "t.json")).empty());
}

namespace {

fabricsim::FlowRow flow(int64_t id, int64_t start_ps, int64_t end_ps, int64_t retx = 0) {
  fabricsim::FlowRow f;
  f.id = id;
  f.src = 0;
  f.dst = 1;
  f.bytes = 4096;
  f.start_ps = start_ps;
  f.end_ps = end_ps;
  f.retransmitted_packets = retx;
  return f;
}

fabricsim::PortRow busy_port(int i) {
  fabricsim::PortRow p;
  p.node = "leaf" + std::to_string(i);
  p.peer = "spine0";
  p.port = i;
  p.rate_bps = 400'000'000'000;
  p.tx_packets = i + 1;
  return p;
}

nlohmann::ordered_json results_of(const fs::path& dir, const RunReport& r) {
  fabricsim::write_results_json((dir / "results.json").string(), r);
  return nlohmann::ordered_json::parse(slurp(dir / "results.json"));
}

}  // namespace

TEST_CASE("results.json counters keep DESIGN's names first, then the extensions") {
  TempDir d("counters");
  RunReport r;
  r.counters.drops = 5;
  r.counters.retransmits = 9;
  r.counters.max_queue_bytes = 77;
  r.counters.tail_drops = 3;
  r.counters.corrupt_drops = 2;
  r.counters.nak_tx = 4;
  r.counters.rto_timeouts = 1;
  r.conservation = {1000, 900, 60, 40};
  const auto j = results_of(d.path, r);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j["counters"].items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"drops", "retransmits", "pfc_pause_tx", "pfc_pause_rx",
                                         "ecn_marked", "cnp_tx", "max_queue_bytes", "tail_drops",
                                         "corrupt_drops", "nak_tx", "rto_timeouts",
                                         "headroom_drops", "watchdog_drops", "pfc_storms",
                                         "paused_ps", "cnp_rx", "ce_received"});
  CHECK(j["counters"]["drops"] == 5);
  CHECK(j["counters"]["tail_drops"] == 3);
  CHECK(j["counters"]["corrupt_drops"] == 2);
  CHECK(j["counters"]["nak_tx"] == 4);
  CHECK(j["counters"]["rto_timeouts"] == 1);
  CHECK(j["conservation"] == nlohmann::ordered_json{{"sent_bytes", 1000},
                                                    {"delivered_bytes", 900},
                                                    {"dropped_bytes", 60},
                                                    {"in_flight_bytes", 40}});
  std::vector<std::string> top;
  for (const auto& [k, v] : j.items()) top.push_back(k);
  CHECK(top == std::vector<std::string>{"scenario", "seed", "fabric", "collectives", "nccl",
                                        "counters", "conservation", "flows", "fct_slowdown",
                                        "deadlock", "run", "ports_truncated", "ports", "mode",
                                        "congestion_control", "depends_on", "limits"});
  CHECK(j["mode"] == "packet");
  CHECK(j["congestion_control"] == "none");  // a report that names none
  CHECK(j["limits"].empty());                // present, and empty when the run names none
}

TEST_CASE("results.json limits: each what and why, in order, printed as not modelled lines") {
  TempDir d("limits");
  RunReport r;
  r.limits = {{"the PCIe link between each GPU and its NICs", "two NICs per GPU"},
              {"queues, PFC, ECN/DCQCN, drops and retransmissions", "mode: flow"}};
  const auto j = results_of(d.path, r);
  CHECK(j["limits"] ==
        nlohmann::ordered_json::array(
            {{{"what", "the PCIe link between each GPU and its NICs"}, {"why", "two NICs per GPU"}},
             {{"what", "queues, PFC, ECN/DCQCN, drops and retransmissions"},
              {"why", "mode: flow"}}}));
  std::ostringstream out;
  fabricsim::print_summary(out, r);
  CHECK(out.str().find("# not modelled: the PCIe link between each GPU and its NICs (two NICs "
                       "per GPU)\n# not modelled: queues,") != std::string::npos);
}

TEST_CASE("results.json flow completion times are nearest-rank percentiles over every message") {
  TempDir d("flows");
  SECTION("ten delivered messages, six recorded: the percentiles cover all ten") {
    RunReport r;
    r.flows = {
        flow(0, 100, 100 + 1'234'567, 1), flow(1, 0, 7'000'001), flow(2, 5, 5 + 2'500'000, 2),
        flow(3, 0, 10'000'000),           flow(4, 1, 3'000'001), flow(5, 50, -1, 4)};
    r.flows_unrecorded = 4;
    // The completion times of all ten (four beyond the record bound): sorted 1.234567 2.5 3
    // 3 3 3 3 7.000001 10 10 us.
    fabricsim::QuantileHistogram h;
    for (int64_t us_x : {1'234'567, 7'000'001, 2'500'000, 10'000'000, 3'000'000, 3'000'000,
                         3'000'000, 3'000'000, 3'000'000, 10'000'000}) {
      h.record(us_x);
    }
    r.fct_all = r.fct_messages = fabricsim::fct_summary(h);
    const auto j = results_of(d.path, r);
    CHECK(j["flows"]["count"] == 10);
    CHECK(j["flows"]["recorded"] == 6);
    CHECK(j["flows"]["completed"] == 10);
    // p50: rank ceil(0.5 x 10) = 5 -> 3 us; p99: rank 10 -> 10 us; both to within 1/1024.
    CHECK(j["flows"]["fct_ps"]["p50"].get<int64_t>() >= 3'000'000);
    CHECK(j["flows"]["fct_ps"]["p50"].get<int64_t>() <= 3'000'000 + 3'000'000 / 1024);
    CHECK(j["flows"]["fct_ps"]["p99"] == 10'000'000);  // the largest, exactly
    CHECK(j["flows"]["fct_ps"]["max"] == 10'000'000);
    CHECK(j["flows"]["fct_us"]["max"].get<double>() == 10.0);
    CHECK(j["flows"]["retransmitted_packets"] == 7);  // 1 + 2 + 4
    CHECK(j["flows"]["messages"]["completed"] == 10);
    CHECK(j["flows"]["traffic"].is_null());
  }
  SECTION("200 values below 2048 ps are exact: p99 is the 198th, not an interpolation") {
    RunReport r;
    fabricsim::QuantileHistogram h;
    for (int i = 200; i >= 1; --i) h.record(int64_t{10} * i);
    r.fct_all = fabricsim::fct_summary(h);
    const auto j = results_of(d.path, r);
    CHECK(j["flows"]["fct_ps"]["p50"] == 1'000);  // rank 100
    CHECK(j["flows"]["fct_ps"]["p99"] == 1'980);  // rank ceil(198.0) = 198
    CHECK(j["flows"]["fct_ps"]["max"] == 2'000);
    CHECK(j["flows"]["fct_us"]["p99"].get<double>() == 0.00198);
    // The text carries the exact decimal.
    CHECK(slurp(d.path / "results.json").find("\"p99\": 0.00198,") != std::string::npos);
  }
  SECTION("every message recorded: exact nearest-rank values of the list") {
    RunReport r;
    std::vector<int64_t> fct;
    for (int i = 200; i >= 1; --i) fct.push_back(int64_t{1000} * i + 7);
    r.fct_all = fabricsim::fct_summary(fct);
    const auto j = results_of(d.path, r);
    CHECK(j["flows"]["fct_ps"]["p50"] == 100'007);  // rank 100
    CHECK(j["flows"]["fct_ps"]["p99"] == 198'007);  // rank ceil(198.0) = 198
    CHECK(j["flows"]["fct_ps"]["max"] == 200'007);
  }
  SECTION("no flows: null percentiles") {
    const auto j = results_of(d.path, RunReport{});
    CHECK(j["flows"]["count"] == 0);
    for (const char* k : {"p50", "p99", "max"}) {
      CHECK(j["flows"]["fct_us"][k].is_null());
      CHECK(j["flows"]["fct_ps"][k].is_null());
    }
    CHECK(j["flows"]["retransmitted_packets"] == 0);
    CHECK(j["flows"]["messages"].is_null());
  }
}

TEST_CASE("results.json lists ports with traffic, at most 4096, and says when it cut") {
  TempDir d("ports");
  SECTION("idle ports are left out; drops alone count as traffic") {
    RunReport r;
    r.ports.push_back(busy_port(0));
    fabricsim::PortRow idle;
    idle.node = "idle";
    r.ports.push_back(idle);
    fabricsim::PortRow dropping;
    dropping.node = "drops";
    dropping.drops = 1;
    r.ports.push_back(dropping);
    fabricsim::PortRow corrupt;
    corrupt.node = "corrupt";
    corrupt.corrupt_drops = 1;
    corrupt.avg_queue_bytes = std::nan("");
    r.ports.push_back(corrupt);
    r.ports[0].rx_packets = 5;
    r.ports[0].rx_bytes = 5000;
    r.ports[0].avg_queue_bytes = 12.5;
    r.ports[0].p999_queue_bytes = 2048;
    const auto j = results_of(d.path, r);
    CHECK(j["ports_truncated"] == false);
    REQUIRE(j["ports"].size() == 3);
    CHECK(j["ports"][0]["node"] == "leaf0");
    CHECK(j["ports"][1]["node"] == "drops");
    CHECK(j["ports"][2]["node"] == "corrupt");
    CHECK(j["ports"][2]["avg_queue_bytes"].is_null());  // never NaN in the file
    std::vector<std::string> keys;
    for (const auto& [k, v] : j["ports"][0].items()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{
                      "node", "port", "peer", "rate_bps", "tx_packets", "tx_bytes", "rx_packets",
                      "rx_bytes", "drops", "drop_bytes", "corrupt_drops", "max_queue_bytes",
                      "avg_queue_bytes", "p50_queue_bytes", "p99_queue_bytes", "p999_queue_bytes",
                      "pfc_tx", "pfc_rx", "headroom_drops"});
    CHECK(j["ports"][0]["rx_bytes"] == 5000);
    CHECK(j["ports"][0]["avg_queue_bytes"].get<double>() == 12.5);
    CHECK(j["ports"][0]["p999_queue_bytes"] == 2048);
  }
  SECTION("exactly 4096 busy ports fit") {
    RunReport r;
    for (int i = 0; i < 4096; ++i) r.ports.push_back(busy_port(i));
    r.ports.emplace_back();  // idle: not a reason to cut
    const auto j = results_of(d.path, r);
    CHECK(j["ports"].size() == 4096);
    CHECK(j["ports_truncated"] == false);
  }
  SECTION("5000 busy ports are cut to the first 4096") {
    RunReport r;
    for (int i = 0; i < 5000; ++i) r.ports.push_back(busy_port(i));
    const auto j = results_of(d.path, r);
    REQUIRE(j["ports"].size() == fabricsim::kResultsJsonMaxPorts);
    CHECK(j["ports_truncated"] == true);
    CHECK(j["ports"].back()["node"] == "leaf4095");
  }
}

TEST_CASE("results.json is the same bytes for the same report") {
  TempDir d("determinism");
  RunReport r;
  r.scenario = "det";
  r.flows = {flow(0, 0, 1'234'567)};
  r.ports = {busy_port(1)};
  r.ports[0].avg_queue_bytes = 1.0 / 3.0;
  fabricsim::write_results_json((d.path / "a.json").string(), r);
  fabricsim::write_results_json((d.path / "b.json").string(), r);
  CHECK(slurp(d.path / "a.json") == slurp(d.path / "b.json"));
}

TEST_CASE("ports.csv, queues.csv and flows.csv: headers and exact rows") {
  TempDir d("csv");
  RunReport r;
  fabricsim::PortRow p;
  p.node = "leaf,0";  // a comma is quoted, as RFC 4180 asks
  p.port = 3;
  p.peer = "spine1";
  p.rate_bps = 400'000'000'000;
  p.tx_packets = 10;
  p.tx_bytes = 41780;
  p.rx_packets = 9;
  p.rx_bytes = 37602;
  p.drops = 2;
  p.drop_bytes = 8356;
  p.corrupt_drops = 1;
  p.max_queue_bytes = 65536;
  p.avg_queue_bytes = 1234.56;
  p.p50_queue_bytes = 1024;
  p.p99_queue_bytes = 32768;
  p.p999_queue_bytes = 65536;
  r.ports.push_back(p);

  fabricsim::QueueRow q;
  q.node = "leaf0";
  q.port = 3;
  q.peer = "spine\"1";
  q.traffic_class = 3;
  q.tx_packets = 10;
  q.tx_bytes = 41780;
  q.drops = 2;
  q.drop_bytes = 8356;
  q.max_queue_bytes = 65536;
  q.avg_queue_bytes = 99.94;
  q.mean_sojourn_ps = 1'234'567;
  r.queues.push_back(q);

  fabricsim::FlowRow f = flow(7, 1, 2'000'001, 4);
  f.src = 1;
  f.dst = 2;
  f.qp = 3;
  f.traffic_class = 0;
  r.flows = {f, flow(8, 5, -1)};

  fabricsim::write_ports_csv((d.path / "ports.csv").string(), r);
  fabricsim::write_queues_csv((d.path / "queues.csv").string(), r);
  fabricsim::write_flows_csv((d.path / "flows.csv").string(), r);

  CHECK(slurp(d.path / "ports.csv") ==
        "node,port,peer,rate_bps,tx_packets,tx_bytes,rx_packets,rx_bytes,drops,drop_bytes,"
        "corrupt_drops,max_queue_bytes,avg_queue_bytes,p50_queue_bytes,p99_queue_bytes,"
        "p999_queue_bytes,pfc_tx,pfc_rx,headroom_drops\n"
        "\"leaf,0\",3,spine1,400000000000,10,41780,9,37602,2,8356,1,65536,1234.6,1024,32768,"
        "65536,0,0,0\n");
  CHECK(slurp(d.path / "queues.csv") ==
        "node,port,peer,traffic_class,tx_packets,tx_bytes,drops,drop_bytes,max_queue_bytes,"
        "avg_queue_bytes,mean_sojourn_ns,ecn_marked,paused_us,watchdog_drops\n"
        "leaf0,3,\"spine\"\"1\",3,10,41780,2,8356,65536,99.9,1234.567,0,0.000000,0\n");
  CHECK(slurp(d.path / "flows.csv") ==
        "id,src,dst,qp,traffic_class,bytes,start_us,end_us,fct_us,retransmitted_packets,source,"
        "ideal_fct_us,slowdown\n"
        "7,1,2,3,0,4096,0.000001,2.000001,2.000000,4,collective,,\n"
        "8,0,1,0,0,4096,0.000005,,,0,collective,,\n");  // unfinished: no end, no FCT
}

TEST_CASE("the summary adds a loss line and keeps the counters line") {
  RunReport r;
  r.counters.drops = 5;
  r.counters.tail_drops = 3;
  r.counters.corrupt_drops = 2;
  r.counters.retransmits = 9;
  r.counters.nak_tx = 4;
  r.counters.rto_timeouts = 1;
  std::ostringstream out;
  fabricsim::print_summary(out, r);
  const std::string s = out.str();
  CHECK(s.find("# counters   : drops 5, retransmits 9,") != std::string::npos);
  CHECK(s.find("# losses     : drops 5 (tail drop 3, corrupt 2, PFC headroom 0, watchdog 0), "
               "retransmits 9 (NAKs 4, timeouts 1)\n") != std::string::npos);
}
