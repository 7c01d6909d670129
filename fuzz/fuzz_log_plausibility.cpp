// libFuzzer target: the plausibility checks of the calibration log readers
// (calibration/log_checks.hpp through parse_nccl_tests and parse_perftest).
//
// Random bytes seldom reach a result row whose numbers almost agree, so this target builds the
// logs: the fuzzer's bytes choose an nccl-tests or perftest table (collective, rank count, device
// list or "## nodes x GPUs" header, sizes, times, bandwidths; perftest samples) printed the way
// the tools print them, then perhaps one corruption (a time of 1e308 or 0, an edited bandwidth,
// swapped columns, a full-width digit, a device list of another rank count) and noise lines.
// Two oracles, computed here from the tools' definitions and the printed text, not with the
// parser's code:
//   - a log without corruption is accepted (the checks allow the printed rounding, no less);
//   - an accepted log keeps every row, and each row agrees within that rounding: time in
//     (0, 1 h], algbw = size / time, busbw = algbw x the factor of the rank count the parser
//     reports; perftest latencies in order, MsgRate = BW average / size.
// A broken oracle traps (a finding); a ParseError is the other allowed outcome.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "calibration/nccl_log.hpp"
#include "calibration/parse_error.hpp"
#include "calibration/perftest.hpp"

namespace {

constexpr double kHourUs = 3.6e9;

std::string g_text;  // the log being parsed, printed with a finding

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "---- log ----\n%s---- oracle broken: %s\n", g_text.c_str(), what.c_str());
  __builtin_trap();
}

std::string printf_string(const char* format, double v) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

/// Half a unit of the last digit of a printed number (plain decimals or %g's exponent form).
double half_unit(const std::string& s) {
  const size_t e = s.find_first_of("eE");
  const std::string mantissa = s.substr(0, e);
  const long exponent = e == std::string::npos
                            ? 0
                            : std::clamp(std::strtol(s.c_str() + e + 1, nullptr, 10), -400L, 400L);
  const size_t dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : int(mantissa.size() - dot - 1);
  return 0.5 * std::pow(10.0, exponent - decimals);
}

/// nccl-tests' busbw factor, from doc/PERFORMANCE.md.
double factor(const std::string& collective, int n) {
  if (collective == "all_reduce") return 2.0 * (n - 1) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall") {
    return double(n - 1) / n;
  }
  return 1.0;
}

/// nccl-tests' time column (src/common.cu).
std::string nccl_time(double us) {
  return printf_string(us >= 10000.0 ? "%.0f" : us >= 100.0 ? "%.1f" : "%.2f", us);
}

// ---- nccl-tests -----------------------------------------------------------------------------

struct Block {
  std::string time, algbw, busbw;
};
struct Row {
  int64_t size = 0;
  Block oop, ip;
};

const char* const kCollectives[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                    "reduce",     "alltoall",   "sendrecv"};
const char* const kNoise[] = {
    "node1:123:456 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 - Init COMPLETE",
    "Warning: Permanently added 'node02' (ED25519) to the list of known hosts.",
    "[1,0]<stderr>:NCCL version 2.18.3+cuda12.2",
    "mlx5: node01: got completion with error:",
    "",
};

/// A block whose numbers are nccl-tests' own for `size` bytes in `time_us` on `f`.
Block exact_block(int64_t size, double time_us, double f) {
  const double algbw = double(size) / (time_us * 1e3);
  return Block{nccl_time(time_us), printf_string("%.2f", algbw), printf_string("%.2f", algbw * f)};
}

/// Replaces `field` by one of the corruptions a hand or a paste makes.
void corrupt(FuzzedDataProvider& in, std::string& field) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0:
      field = "1e308";
      break;
    case 1:
      field = "0.00";
      break;
    case 2:
      field = "-" + field;
      break;
    case 3:
      field = printf_string("%.2f", std::strtod(field.c_str(), nullptr) *
                                        in.ConsumeFloatingPointInRange<double>(0.5, 2.0));
      break;
    case 4: {  // a full-width digit for the first ASCII one
      const size_t d = field.find_first_of("0123456789");
      if (d != std::string::npos) {
        field.replace(d, 1, std::string("\xEF\xBC") + char(0x90 + (field[d] - '0')));
      }
      break;
    }
    case 5:
      field += "M";
      break;
    case 6:
      field = printf_string("%g", in.ConsumeFloatingPoint<double>());
      break;
    default:
      field = in.ConsumeRandomLengthString(12);
      // Whitespace (any isspace byte) would make two fields of one: not this corruption.
      if (field.empty() || field.find_first_of(" \t\n\r\v\f") != std::string::npos) field = "x";
      break;
  }
}

void fuzz_nccl(FuzzedDataProvider& in) {
  const std::string coll = kCollectives[in.ConsumeIntegralInRange<size_t>(0, 6)];
  const bool chain = coll == "broadcast" || coll == "reduce";
  const bool reducing =
      coll == "all_reduce" || coll == "reduce_scatter" || coll == "reduce" || coll == "sendrecv";
  const int ranks =
      in.ConsumeBool() ? in.ConsumeIntegralInRange(1, 16) : in.ConsumeIntegralInRange(1, 4096);
  const int list_mode = in.ConsumeIntegralInRange(0, 2);  // full list, header only, cut list
  bool valid = true;
  int listed_ranks = ranks;  // the rank count the device list or header states
  if (in.ConsumeIntegralInRange(0, 7) == 0) {
    listed_ranks = in.ConsumeIntegralInRange(1, 5000);
    valid = valid && listed_ranks == ranks;
  }
  const double f = factor(coll, ranks);

  std::string text;
  if (list_mode != 0) text += "## nodes x GPUs: 1 x " + std::to_string(listed_ranks) + "\n\n";
  text += "$ mpirun -np " + std::to_string(ranks) + " ./build/" + coll + "_perf -b 8 -e 8G\n";
  text +=
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n";
  if (list_mode == 0) {
    for (int r = 0; r < std::min(listed_ranks, 64); ++r) {
      text += "#  Rank " + std::to_string(r) + " Group  0 Pid 1 on node" + std::to_string(r / 8) +
              " device " + std::to_string(r % 8) + " [0x1b] NVIDIA H100\n";
    }
    // A list too long to write here ends with its last rank, as CoreWeave's posts do.
    if (listed_ranks > 64) {
      text += "#  Rank " + std::to_string(listed_ranks - 1) +
              " Group  0 Pid 1 on last device 0 [0x1b] NVIDIA H100\n";
    }
  } else if (list_mode == 2) {
    text += "#  Rank 0 Group  0 Pid 1 on node0 device 0 [0x1b] NVIDIA H100\n...\n";
  }
  text +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";

  std::vector<Row> rows;
  const int nrows = in.ConsumeIntegralInRange(1, 24);
  const int64_t step = int64_t{4} * std::max(1, ranks);  // whole floats per rank
  int64_t size = step * in.ConsumeIntegralInRange<int64_t>(0, 64);
  const int corrupt_row = in.ConsumeIntegralInRange(-nrows, nrows - 1);  // < 0: none
  for (int k = 0; k < nrows; ++k) {
    Row row;
    row.size = size;
    const double t1 = std::exp(in.ConsumeFloatingPointInRange<double>(-4.5, 21.9));
    const double t2 = std::exp(in.ConsumeFloatingPointInRange<double>(-4.5, 21.9));
    row.oop = exact_block(size, t1, f);
    row.ip = exact_block(size, t2, f);
    for (const Block* b : {&row.oop, &row.ip}) {
      const double t = std::strtod(b->time.c_str(), nullptr);
      if (!(t > 0) || t > kHourUs) valid = false;  // printed as 0.00, or above the bound
    }
    if (k == corrupt_row) {
      valid = false;
      Block& b = in.ConsumeBool() ? row.oop : row.ip;
      switch (in.ConsumeIntegralInRange(0, 3)) {
        case 0:
          corrupt(in, b.time);
          break;
        case 1:
          corrupt(in, b.algbw);
          break;
        case 2:
          corrupt(in, b.busbw);
          break;
        default:
          std::swap(b.algbw, b.busbw);
          break;
      }
    }
    const int64_t count = (chain || coll == "all_reduce" || coll == "sendrecv")
                              ? size / 4
                              : size / 4 / std::max(1, ranks);
    std::string size_text = std::to_string(size);
    if (k == corrupt_row && in.ConsumeIntegralInRange(0, 3) == 0) corrupt(in, size_text);
    text += "  " + size_text + "  " + std::to_string(count) + "  float  " +
            (reducing ? "sum" : "none") + "  " + (chain ? "0" : "-1");
    for (const Block* b : {&row.oop, &row.ip}) {
      text += "  " + b->time + "  " + b->algbw + "  " + b->busbw + "  0";
    }
    text += "\n";
    if (in.ConsumeIntegralInRange(0, 5) == 0) {
      text += std::string(kNoise[in.ConsumeIntegralInRange<size_t>(0, 4)]) + "\n";
    }
    rows.push_back(row);
    if (size > (int64_t{1} << 40)) break;
    size = size == 0 ? step : size * 2;
  }
  text += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n";
  // A byte anywhere: it may join or split lines, so the rows written are no longer known and
  // only the outcome (a log or a ParseError) and the rank bound are checked.
  const bool mutated = in.ConsumeIntegralInRange(0, 15) == 0;
  if (mutated) {
    const size_t at = in.ConsumeIntegralInRange<size_t>(0, text.size() - 1);
    text[at] = static_cast<char>(in.ConsumeIntegral<uint8_t>());
    valid = false;
  }

  g_text = text;
  fabricsim::NcclLog log;
  try {
    log = fabricsim::parse_nccl_tests(text, "fuzz.log");
  } catch (const fabricsim::ParseError& e) {
    if (valid) finding(std::string("a log nccl-tests could print was refused: ") + e.what());
    return;
  }
  if (log.nranks > 1000000) finding("more than a million ranks accepted");
  if (mutated) return;
  if (log.rows.size() != rows.size()) {
    finding("rows " + std::to_string(rows.size()) + " written, " + std::to_string(log.rows.size()) +
            " read: a row was dropped");
  }
  for (size_t k = 0; k < rows.size(); ++k) {
    for (const Block* b : {&rows[k].oop, &rows[k].ip}) {
      const double t = std::strtod(b->time.c_str(), nullptr);
      const double a = std::strtod(b->algbw.c_str(), nullptr);
      const double bus = std::strtod(b->busbw.c_str(), nullptr);
      const double s = double(log.rows[k].size_bytes);
      if (!(t > 0) || t > kHourUs) finding("time " + b->time + " accepted");
      const double ht = half_unit(b->time), ha = half_unit(b->algbw), hb = half_unit(b->busbw);
      const double lo = s / ((t + ht) * 1e3) - ha;
      const double hi = t - ht > 0 ? s / ((t - ht) * 1e3) + ha : INFINITY;
      if (a < lo - 1e-6 * std::abs(lo) - 1e-9 || a > hi + 1e-6 * std::abs(hi) + 1e-9) {
        finding("algbw " + b->algbw + " accepted for size " +
                std::to_string(log.rows[k].size_bytes) + " in " + b->time + " us");
      }
      if (!log.collective.empty() && log.nranks > 0) {
        const double g = factor(log.collective, log.nranks);
        if (std::abs(a * g - bus) > ha * g + hb + 1e-6 * std::abs(a * g) + 1e-9) {
          finding("busbw " + b->busbw + " accepted with algbw " + b->algbw + " on " +
                  std::to_string(log.nranks) + " ranks of " + log.collective);
        }
      }
    }
  }
}

// ---- perftest -------------------------------------------------------------------------------

void fuzz_perftest(FuzzedDataProvider& in) {
  const bool latency = in.ConsumeBool();
  const bool gbits = in.ConsumeBool();
  const double scale = gbits ? 1.25e8 : 1048576.0;  // bytes per second per printed unit
  std::string text =
      "---------------------------------------------------------------------------\n";
  text += latency ? "                    RDMA_Write Latency Test\n"
                  : "                    RDMA_Write BW Test\n";
  text += "---------------------------------------------------------------------------\n";
  if (latency) {
    text +=
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
        "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n";
  } else {
    text += std::string(" #bytes     #iterations    BW peak[") + (gbits ? "Gb" : "MB") +
            "/sec]    BW average[" + (gbits ? "Gb" : "MB") + "/sec]   MsgRate[Mpps]\n";
  }
  bool valid = true;
  const int nrows = in.ConsumeIntegralInRange(1, 24);
  const int corrupt_row = in.ConsumeIntegralInRange(-nrows, nrows - 1);
  std::vector<std::vector<std::string>> rows;
  for (int k = 0; k < nrows; ++k) {
    const int64_t bytes = int64_t{2} << std::min(k, 40);
    std::vector<std::string> f{std::to_string(bytes), "1000"};
    const char* format = in.ConsumeBool() ? "%.2f" : "%.3f";
    if (latency) {
      // perftest's print_report_lat: sorted samples without the 2 largest; t_max is the next.
      std::vector<double> s(in.ConsumeIntegralInRange<size_t>(3, 40));
      for (double& v : s) v = std::exp(in.ConsumeFloatingPointInRange<double>(-3.0, 20.0));
      std::sort(s.begin(), s.end());
      const size_t m = s.size() - 2;
      double sum = 0;
      for (size_t i = 0; i < m; ++i) sum += s[i];
      const double median = m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
      const size_t i99 = std::min<size_t>(m, size_t(std::ceil(m * 0.99)));
      const size_t i999 = std::min<size_t>(m, size_t(std::ceil(m * 0.999)));
      for (double v : {s[0], s[m], median, sum / m, 0.0, s[i99], s[i999]}) {
        f.push_back(printf_string(format, v));
      }
      if (s[m] > kHourUs) valid = false;
    } else {
      const double limit_units = 3.2e12 / 8 / scale;  // the fastest NIC both ways
      const double avg = limit_units * std::exp(in.ConsumeFloatingPointInRange<double>(-25, -0.01));
      const double peak = in.ConsumeBool() ? 0.0 : avg * in.ConsumeFloatingPointInRange(1.0, 1.05);
      if (peak > limit_units) valid = false;
      f.push_back(printf_string(format, peak));
      f.push_back(printf_string(format, avg));
      f.push_back(printf_string("%.6f", avg * scale / double(bytes) / 1e6));
    }
    if (k == corrupt_row) {
      valid = false;
      const size_t i = in.ConsumeIntegralInRange<size_t>(0, f.size() - 1);
      if (in.ConsumeBool()) {
        corrupt(in, f[i]);
      } else {
        std::swap(f[i], f[in.ConsumeIntegralInRange<size_t>(2, f.size() - 1)]);
      }
    }
    for (const std::string& v : f) text += " " + v + "   ";
    text += "\n";
    if (in.ConsumeIntegralInRange(0, 7) == 0)
      text += " Conflicting CPU frequency values detected\n";
    rows.push_back(f);
  }
  text += "---------------------------------------------------------------------------\n";

  g_text = text;
  fabricsim::PerftestLog log;
  try {
    log = fabricsim::parse_perftest(text, "fuzz.log");
  } catch (const fabricsim::ParseError& e) {
    if (valid) finding(std::string("a log perftest could print was refused: ") + e.what());
    return;
  }
  const size_t read = latency ? log.lat_rows.size() : log.bw_rows.size();
  if (read != rows.size()) finding("perftest rows written and read differ: a row was dropped");
  for (size_t k = 0; k < rows.size(); ++k) {
    const std::vector<std::string>& f = rows[k];
    const auto v = [&](size_t i) { return std::strtod(f[i].c_str(), nullptr); };
    if (latency) {
      // t_min t_max t_typical t_avg t_stdev p99 p99.9 at 2..8
      const double tmin = v(2), tmax = v(3), typ = v(4), avg = v(5), p99 = v(7), p999 = v(8);
      const double r = 0.01 + 1e-9;
      if (tmax > kHourUs || tmin > typ + r || typ > tmax + r || tmin > avg + r || avg > tmax + r ||
          typ > p99 + r || p99 > p999 + r || p999 > tmax + r) {
        finding("perftest latencies out of order accepted at row " + std::to_string(k));
      }
    } else {
      const double bytes = v(0), avg = v(3), rate = v(4);
      const double per_unit = scale / bytes / 1e6;
      const double room = half_unit(f[3]) * per_unit + half_unit(f[4]);
      if (std::abs(avg * per_unit - rate) > room + 1e-6 * std::abs(rate) + 1e-9) {
        finding("perftest MsgRate " + f[4] + " accepted with BW average " + f[3]);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  if (in.ConsumeBool()) {
    fuzz_nccl(in);
  } else {
    fuzz_perftest(in);
  }
  return 0;
}
