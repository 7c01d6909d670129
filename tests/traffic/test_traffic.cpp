// Background traffic (traffic/): the flow-size CDFs against HPCC's published tables and means
// worked out by hand, their text format and its errors, and the Poisson flow generator's
// offered load, inter-arrival times, destinations and determinism.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/core/rng.hpp"
#include "traffic/flow_size_cdf.hpp"
#include "traffic/poisson_flows.hpp"

using namespace fabricsim;

namespace {

// HPCC's traffic_gen/WebSearch_distribution.txt and FbHdp_distribution.txt, verbatim
// (github.com/alibaba-edu/High-Precision-Congestion-Control).
const char* const kWebSearchFile =
    "0 0\n10000 15\n20000 20\n30000 30\n50000 40\n80000 53\n200000 60\n1000000 70\n2000000 80\n"
    "5000000 90\n10000000 97\n30000000 100\n";
const char* const kHadoopFile =
    "0 0\n100 1\n200 2\n300 5\n350 15\n400 20\n500 30\n600 40\n700 50\n1000 60\n2000 67\n"
    "7000 70\n30000 72\n50000 82\n80000 87\n120000 90\n300000 95\n1000000 97.5\n2000000 99\n"
    "10000000 100\n";

using Table = std::vector<std::pair<double, double>>;
const Table kWebSearch = {{0, 0},        {10000, 15},   {20000, 20},    {30000, 30},
                          {50000, 40},   {80000, 53},   {200000, 60},   {1000000, 70},
                          {2000000, 80}, {5000000, 90}, {10000000, 97}, {30000000, 100}};
const Table kHadoop = {{0, 0},       {100, 1},     {200, 2},        {300, 5},      {350, 15},
                       {400, 20},    {500, 30},    {600, 40},       {700, 50},     {1000, 60},
                       {2000, 67},   {7000, 70},   {30000, 72},     {50000, 82},   {80000, 87},
                       {120000, 90}, {300000, 95}, {1000000, 97.5}, {2000000, 99}, {10000000, 100}};

// The means by hand: sum over segments of (x0 + x1) / 2 * (y1 - y0), over 100.
//   web-search: 5000*15 + 15000*5 + 25000*10 + 40000*10 + 65000*13 + 140000*7 + 600000*10
//             + 1500000*10 + 3500000*10 + 7500000*7 + 20000000*3 = 171,125,000 -> 1,711,250 B.
constexpr double kWebSearchMean =
    (5000.0 * 15 + 15000.0 * 5 + 25000.0 * 10 + 40000.0 * 10 + 65000.0 * 13 + 140000.0 * 7 +
     600000.0 * 10 + 1500000.0 * 10 + 3500000.0 * 10 + 7500000.0 * 7 + 20000000.0 * 3) /
    100;
static_assert(kWebSearchMean == 1711250.0);
//   hadoop: 50*1 + 150*1 + 250*3 + 325*10 + 375*5 + 450*10 + 550*10 + 650*10 + 850*10
//         + 1500*7 + 4500*3 + 18500*2 + 40000*10 + 65000*5 + 100000*3 + 210000*5
//         + 650000*2.5 + 1500000*1.5 + 6000000*1 = 12,042,075 -> 120,420.75 B.
constexpr double kHadoopMean =
    (50.0 * 1 + 150.0 * 1 + 250.0 * 3 + 325.0 * 10 + 375.0 * 5 + 450.0 * 10 + 550.0 * 10 +
     650.0 * 10 + 850.0 * 10 + 1500.0 * 7 + 4500.0 * 3 + 18500.0 * 2 + 40000.0 * 10 + 65000.0 * 5 +
     100000.0 * 3 + 210000.0 * 5 + 650000.0 * 2.5 + 1500000.0 * 1.5 + 6000000.0 * 1) /
    100;
static_assert(kHadoopMean == 120420.75);

// The CdfError that `text` raises (fails the test if it parses).
CdfError parse_error(const std::string& text) {
  try {
    parse_flow_size_cdf(text, "t.txt");
  } catch (const CdfError& e) {
    return e;
  }
  FAIL("'" << text << "' parsed");
  throw;  // unreachable: FAIL throws
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FlowSizeCdf

TEST_CASE("built-in CDFs are HPCC's tables", "[traffic][cdf]") {
  CHECK(web_search_cdf().points() == kWebSearch);
  CHECK(hadoop_cdf().points() == kHadoop);
  CHECK(web_search_cdf().name() == "web-search");
  CHECK(hadoop_cdf().name() == "hadoop");
  CHECK(builtin_flow_size_cdf_names() == std::vector<std::string>{"web-search", "hadoop"});
  CHECK(builtin_flow_size_cdf("web-search").points() == kWebSearch);
  CHECK(builtin_flow_size_cdf("hadoop").points() == kHadoop);
  CHECK_THROWS_MATCHES(builtin_flow_size_cdf("websearch"), std::invalid_argument,
                       Catch::Matchers::Message("unknown flow-size distribution 'websearch': did "
                                                "you mean 'web-search'? (built-in: web-search, "
                                                "hadoop)"));
}

TEST_CASE("mean_bytes is the trapezoid sum worked out by hand", "[traffic][cdf]") {
  CHECK(web_search_cdf().mean_bytes() == Approx(kWebSearchMean).epsilon(1e-12));
  CHECK(hadoop_cdf().mean_bytes() == Approx(kHadoopMean).epsilon(1e-12));
  // One segment 0..1000 B: uniform, mean 500.
  CHECK(FlowSizeCdf({{0, 0}, {1000, 100}}, "u").mean_bytes() == 500);
}

TEST_CASE("sample is the inverse CDF: the table's sizes at its percents, linear between",
          "[traffic][cdf]") {
  for (const auto& [cdf, table] :
       {std::pair{web_search_cdf(), kWebSearch}, std::pair{hadoop_cdf(), kHadoop}}) {
    INFO(cdf.name());
    for (const auto& [size, percent] : table) {
      INFO("percent " << percent);
      CHECK(cdf.sample(percent / 100) == Approx(size).epsilon(1e-12).margin(1e-9));
    }
  }
  const FlowSizeCdf web = web_search_cdf();
  CHECK(web.sample(0.25) == 25000);                         // halfway from 20% to 30%
  CHECK(web.sample(0.125) == Approx(10000.0 * 12.5 / 15));  // 8333.33 B
  // 50% lies 10/13 of the way from 40% to 53%: 50000 + 30000 * 10 / 13.
  CHECK(web.sample(0.5) == Approx(50000 + 30000.0 * 10 / 13));
}

TEST_CASE("sample_bytes truncates and never gives an empty flow", "[traffic][cdf]") {
  const FlowSizeCdf web = web_search_cdf();
  CHECK(web.sample_bytes(0.125) == 8333);  // 8333.33 truncated
  CHECK(web.sample_bytes(0.25) == 25000);
  CHECK(web.sample_bytes(0.0) == 1);  // size 0 -> 1 byte
  CHECK(hadoop_cdf().sample_bytes(0.005) == 50);
  CHECK(web.sample_bytes(1.0) == 30000000);
  CHECK_THROWS_AS(web.sample(-0.01), std::invalid_argument);
  CHECK_THROWS_AS(web.sample(1.01), std::invalid_argument);
  CHECK_THROWS_AS(web.sample(std::nan("")), std::invalid_argument);
}

TEST_CASE("the empirical mean of sampled sizes matches the analytic mean", "[traffic][cdf]") {
  // Random u: web-search's sizes have a coefficient of variation ~2.6, so 200k draws put the
  // sample mean within ~0.6 % (one sigma); hadoop's (CV ~5.5) get 2M draws (~0.4 %).
  for (const auto& [cdf, mean, draws] : {std::tuple{web_search_cdf(), kWebSearchMean, 200'000},
                                         std::tuple{hadoop_cdf(), kHadoopMean, 2'000'000}}) {
    INFO(cdf.name());
    RngStream rng(7, "test.cdf." + cdf.name());
    double sum = 0;
    for (int i = 0; i < draws; ++i) sum += static_cast<double>(cdf.sample_bytes(rng.uniform01()));
    CHECK(sum / draws == Approx(mean).epsilon(0.02));
    // Stratified u (the midpoint rule on the inverse CDF): converges to the mean itself.
    constexpr int kStrata = 1'000'000;
    double strat = 0;
    for (int i = 0; i < kStrata; ++i) strat += cdf.sample((i + 0.5) / kStrata);
    CHECK(strat / kStrata == Approx(mean).epsilon(1e-4));
  }
}

TEST_CASE("FlowSizeCdf rejects points that are not a CDF", "[traffic][cdf]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(FlowSizeCdf({{0, 0}}, "x"), Contains("at least two points"));
  CHECK_THROWS_WITH(FlowSizeCdf({{0, 0}, {10, 50}, {5, 100}}, "x"),
                    Contains("point 2 (5, 100): size 5 is not above the previous 10"));
  CHECK_THROWS_WITH(FlowSizeCdf({{0, 0}, {10, 50}, {20, 50}, {30, 100}}, "x"),
                    Contains("point 2 (20, 50): percent 50 is not above the previous 50"));
  CHECK_THROWS_WITH(FlowSizeCdf({{0, 1}, {10, 100}}, "x"),
                    Contains("the first point's percent must be 0, got 1"));
  CHECK_THROWS_WITH(FlowSizeCdf({{0, 0}, {10, 99.5}}, "x"),
                    Contains("the last point's percent must be 100, got 99.5"));
  CHECK_THROWS_WITH(FlowSizeCdf({{-1, 0}, {10, 100}}, "x"), Contains("size -1 is negative"));
  CHECK_THROWS_AS(FlowSizeCdf({{0, 0}, {NAN, 100}}, "x"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The text format

TEST_CASE("HPCC's distribution files parse to the built-in tables, and format reads back",
          "[traffic][cdf][format]") {
  CHECK(parse_flow_size_cdf(kWebSearchFile, "WebSearch_distribution.txt").points() == kWebSearch);
  CHECK(parse_flow_size_cdf(kHadoopFile, "FbHdp_distribution.txt").points() == kHadoop);
  CHECK(parse_flow_size_cdf(kHadoopFile, "FbHdp_distribution.txt").name() ==
        "FbHdp_distribution.txt");
  for (const FlowSizeCdf& cdf : {web_search_cdf(), hadoop_cdf()}) {
    const std::string text = format_flow_size_cdf(cdf);
    INFO(text);
    CHECK(parse_flow_size_cdf(text, cdf.name()).points() == cdf.points());
    CHECK(text.rfind("# " + cdf.name(), 0) == 0);
  }
  // The hadoop file, written out: the same lines as HPCC's, after the comment.
  const std::string hadoop_text = format_flow_size_cdf(hadoop_cdf());
  CHECK(hadoop_text.substr(hadoop_text.find('\n') + 1) == kHadoopFile);
  // Exact round trip of numbers with no short decimal.
  const FlowSizeCdf odd({{0.1, 0}, {1.0 / 3, 100.0 / 7}, {1e7 + 0.5, 100}}, "odd");
  CHECK(parse_flow_size_cdf(format_flow_size_cdf(odd), "odd").points() == odd.points());
}

TEST_CASE("the text format: comments, blank lines, tabs and CRLF", "[traffic][cdf][format]") {
  const FlowSizeCdf c = parse_flow_size_cdf(
      "# sizes in bytes\n\n  0\t0\r\n100  40 # trailing comment\r\n   # indented comment\n"
      "1e3 100\n",
      "c");
  CHECK(c.points() == Table{{0, 0}, {100, 40}, {1000, 100}});
}

TEST_CASE("parse errors give the line, column and what was expected", "[traffic][cdf][format]") {
  struct Case {
    std::string text;
    int line, column;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"0 0\n10000 20\n20000 15\n", 3, 7,
       "percent 15 is not above the previous 20: a CDF must increase"},
      {"0 0\n100 50\n200 97\n", 3, 5, "the last point's percent must be 100, got 97"},
      {"0 0\nabc 50\n", 2, 1, "expected a number, got 'abc'"},
      {"0 0\n  100   x5\n", 2, 9, "expected a number, got 'x5'"},
      {"0 0\n12abc 50\n", 2, 1, "expected a number, got '12abc'"},
      {"0 0\n1e400 100\n", 2, 1, "expected a number, got '1e400'"},
      {"0 0\n100 nan\n", 2, 5, "expected a number, got 'nan'"},
      {"0 0\n100 10\n100 20\n", 3, 1,
       "size 100 is not above the previous 100: a CDF's sizes must increase"},
      {"# header\n\n0 5\n10 100\n", 3, 3, "the first point's percent must be 0, got 5"},
      {"0 0\n100\n", 2, 4, "expected a percent after the size 100: a line is 'size_bytes percent'"},
      {"0 0\n100 50 7\n", 2, 8,
       "expected the end of the line after the percent, got '7': a line is 'size_bytes "
       "percent'"},
      {"0 0\n100 150\n", 2, 5, "percent 150 is above 100"},
      {"-5 0\n10 100\n", 1, 1, "size -5 is negative: a flow size is a count of bytes"},
      {"0 0\n", 1, 1, "a CDF needs at least two points (percent 0 and percent 100), got 1"},
      {"", 0, 0, "no points: a CDF needs at least two points (percent 0 and percent 100), got 0"},
      {"# only a comment\n\n", 0, 0,
       "no points: a CDF needs at least two points (percent 0 and percent 100), got 0"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const CdfError e = parse_error(c.text);
    CHECK(e.line() == c.line);
    CHECK(e.column() == c.column);
    CHECK(e.message() == c.message);
    const std::string where = c.line > 0 ? "line " + std::to_string(c.line) + ", column " +
                                               std::to_string(c.column) + ": "
                                         : "";
    CHECK(std::string(e.what()) == "t.txt: " + where + c.message);
  }
}

// ---------------------------------------------------------------------------------------------
// Poisson flows

namespace {

// 16 hosts at 100 Gb/s offering half their rate of web-search flows: by hand, the mean
// inter-arrival is 1,711,250 B * 8 / (0.5 * 100e9 b/s) = 273.8 us = 273,800,000 ps, and 3.5 s
// gives 16 * 3.5e12 / 2.738e8 = ~204,500 flows.
constexpr double kMeanInterarrivalPs = 273'800'000;

PoissonFlowsSpec long_spec() {
  PoissonFlowsSpec s;
  s.hosts = 16;
  s.load = 0.5;
  s.host_rate_bps = 100'000'000'000;
  s.start_ps = 2'000'000;
  s.duration_ps = 3'500'000'000'000;
  s.pattern = PoissonFlowsSpec::kAllToAll;
  s.seed = 11;
  return s;
}

// Each host's flows, in arrival order.
std::map<int, std::vector<GeneratedFlow>> by_src(const std::vector<GeneratedFlow>& flows) {
  std::map<int, std::vector<GeneratedFlow>> m;
  for (const auto& f : flows) m[f.src].push_back(f);
  return m;
}

}  // namespace

TEST_CASE("Poisson flows offer the target load, with exponential inter-arrivals",
          "[traffic][poisson]") {
  const PoissonFlowsSpec spec = long_spec();
  const FlowSizeCdf web = web_search_cdf();
  CHECK(poisson_mean_interarrival_ps(spec, web) == Approx(kMeanInterarrivalPs).epsilon(1e-12));
  const std::vector<GeneratedFlow> flows = generate_poisson_flows(spec, web);
  REQUIRE(flows.size() >= 20'000);
  const double per_host_expected = 3.5e12 / kMeanInterarrivalPs;  // ~12,783

  // Offered load: bytes per host per second over the host rate. The bytes of ~200k flows have
  // a relative standard deviation of ~0.6 %.
  double bytes = 0;
  for (const auto& f : flows) bytes += static_cast<double>(f.bytes);
  const double offered = bytes * 8 / (spec.hosts * 3.5) / 1e11;
  CHECK(offered == Approx(0.5).epsilon(0.03));

  // Inter-arrival times, the gap from start_ps to each host's first flow included: mean, and
  // P(gap > mean) = 1/e for an exponential.
  double gap_sum = 0;
  int64_t gaps = 0, above_mean = 0;
  for (const auto& [src, fs] : by_src(flows)) {
    INFO("host " << src);
    CHECK(static_cast<double>(fs.size()) == Approx(per_host_expected).epsilon(0.05));
    int64_t prev = spec.start_ps;
    for (const auto& f : fs) {
      const int64_t gap = f.start_ps - prev;
      REQUIRE(gap >= 0);
      gap_sum += static_cast<double>(gap);
      ++gaps;
      if (gap > kMeanInterarrivalPs) ++above_mean;
      prev = f.start_ps;
    }
  }
  CHECK(gap_sum / gaps == Approx(kMeanInterarrivalPs).epsilon(0.02));
  CHECK(static_cast<double>(above_mean) / gaps == Approx(std::exp(-1.0)).margin(0.01));
}

TEST_CASE("Poisson flows: sorted, inside the window, sizes from the CDF", "[traffic][poisson]") {
  PoissonFlowsSpec spec = long_spec();
  spec.duration_ps = 250'000'000'000;  // hadoop's flows are small: ~200k in 0.25 s
  const std::vector<GeneratedFlow> flows = generate_poisson_flows(spec, hadoop_cdf());
  REQUIRE(flows.size() >= 20'000);
  int64_t outside = 0, bad_size = 0, out_of_order = 0;
  for (size_t i = 0; i < flows.size(); ++i) {
    const auto& f = flows[i];
    if (f.start_ps < spec.start_ps || f.start_ps >= spec.start_ps + spec.duration_ps) ++outside;
    if (f.bytes < 1 || f.bytes > 10'000'000) ++bad_size;
    if (i > 0) {
      const auto& p = flows[i - 1];
      if (p.start_ps > f.start_ps || (p.start_ps == f.start_ps && p.src > f.src)) ++out_of_order;
    }
  }
  CHECK(outside == 0);
  CHECK(bad_size == 0);
  CHECK(out_of_order == 0);
}

TEST_CASE("all-to-all: destinations uniform over the other hosts, never the sender",
          "[traffic][poisson]") {
  const PoissonFlowsSpec spec = long_spec();
  const std::vector<GeneratedFlow> flows = generate_poisson_flows(spec, web_search_cdf());
  std::vector<double> received(spec.hosts, 0);
  std::set<std::pair<int, int>> pairs;
  for (const auto& f : flows) {
    REQUIRE(f.dst != f.src);
    REQUIRE(f.dst >= 0);
    REQUIRE(f.dst < spec.hosts);
    received[f.dst] += 1;
    pairs.insert({f.src, f.dst});
  }
  CHECK(pairs.size() == 16u * 15u);  // every ordered pair occurs
  for (int h = 0; h < spec.hosts; ++h) {
    INFO("host " << h);
    CHECK(received[h] == Approx(static_cast<double>(flows.size()) / spec.hosts).epsilon(0.05));
  }
}

TEST_CASE("rack-local: destinations in the sender's group", "[traffic][poisson]") {
  PoissonFlowsSpec spec = long_spec();
  spec.hosts = 12;
  spec.duration_ps = 500'000'000'000;  // ~1,800 flows per host
  spec.pattern = PoissonFlowsSpec::kRackLocal;
  spec.group_of_host = {7, 7, 7, 7, 3, 3, 3, 3, 5, 5, 5, 5};  // racks by id, not by index
  const std::vector<GeneratedFlow> flows = generate_poisson_flows(spec, web_search_cdf());
  REQUIRE(flows.size() >= 10'000);
  std::set<std::pair<int, int>> pairs;
  for (const auto& f : flows) {
    INFO(f.src << " -> " << f.dst);
    REQUIRE(f.dst != f.src);
    REQUIRE(spec.group_of_host[f.src] == spec.group_of_host[f.dst]);
    pairs.insert({f.src, f.dst});
  }
  CHECK(pairs.size() == 3u * 4u * 3u);  // every ordered in-rack pair occurs

  // Interleaved groups, and a two-host group: the only destination is the other one.
  spec.group_of_host = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 2};
  for (const auto& f : generate_poisson_flows(spec, web_search_cdf())) {
    REQUIRE(spec.group_of_host[f.src] == spec.group_of_host[f.dst]);
    REQUIRE(f.dst != f.src);
    if (f.src == 10) REQUIRE(f.dst == 11);
  }
}

TEST_CASE("Poisson flows are deterministic, and each host has its own stream",
          "[traffic][poisson]") {
  PoissonFlowsSpec spec = long_spec();
  spec.duration_ps = 100'000'000'000;
  const FlowSizeCdf web = web_search_cdf();
  const auto a = generate_poisson_flows(spec, web);
  REQUIRE(a.size() > 1000);
  CHECK(generate_poisson_flows(spec, web) == a);
  spec.seed = 12;
  CHECK(generate_poisson_flows(spec, web) != a);

  // Host 0's arrival times and sizes do not depend on how many other hosts there are.
  spec.hosts = 4;
  const auto four = by_src(generate_poisson_flows(spec, web))[0];
  spec.hosts = 8;
  const auto eight = by_src(generate_poisson_flows(spec, web))[0];
  REQUIRE(four.size() == eight.size());
  REQUIRE(!four.empty());
  for (size_t i = 0; i < four.size(); ++i) {
    CHECK(four[i].start_ps == eight[i].start_ps);
    CHECK(four[i].bytes == eight[i].bytes);
  }
  CHECK(poisson_stream_name(3) == "background.host.3");
}

TEST_CASE("Poisson flows reject a bad spec", "[traffic][poisson]") {
  using Catch::Contains;
  const FlowSizeCdf web = web_search_cdf();
  PoissonFlowsSpec base = long_spec();
  base.duration_ps = 1'000'000'000;
  // `change` applied to a copy of `base` makes generate_poisson_flows throw saying `text`.
  const auto fails = [&](const auto& change, const std::string& text) {
    INFO(text);
    PoissonFlowsSpec s = base;
    change(s);
    CHECK_THROWS_WITH(generate_poisson_flows(s, web), Contains(text));
  };
  using S = PoissonFlowsSpec;
  fails([](S& s) { s.hosts = 1; }, "hosts must be at least 2, got 1");
  fails([](S& s) { s.load = 0; }, "load must be in (0, 1]");
  fails([](S& s) { s.load = 1.5; }, "load must be in (0, 1]");
  fails([](S& s) { s.host_rate_bps = 0; }, "host_rate_bps must be positive");
  fails([](S& s) { s.duration_ps = 0; }, "duration_ps must be positive");
  fails([](S& s) { s.start_ps = -1; }, "start_ps must be >= 0");
  fails([](S& s) { s.start_ps = INT64_MAX; }, "overflows");
  fails([](S& s) { s.max_flows = 0; }, "max_flows must be positive");
  fails([](S& s) { s.group_of_host = {0, 1}; }, "group_of_host has 2 entries for 16 hosts");
  fails([](S& s) { s.pattern = S::kRackLocal; }, "rack-local traffic needs group_of_host");
  fails(
      [](S& s) {
        s.pattern = S::kRackLocal;
        s.group_of_host = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2};
      },
      "host 15 is alone in group 2: rack-local traffic needs at least two hosts in every group");
  // 1 s at the long spec's rate: 16 * 1e12 / 273,800,000 = 58,436.8 flows expected.
  fails(
      [](S& s) {
        s.duration_ps = 1'000'000'000'000;
        s.max_flows = 50'000;
      },
      "about 58437 flows expected (16 hosts x 1000000000000 ps / mean inter-arrival 273800000 "
      "ps), above max_flows 50000");
  PoissonFlowsSpec ok = base;
  ok.duration_ps = 1'000'000'000'000;
  ok.max_flows = 60'000;
  CHECK_NOTHROW(generate_poisson_flows(ok, web));
}
