// perftest as a workload (perftest.hpp): the player of one size and perftest's report.
#include "perftest/perftest.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "sim/net/network.hpp"

namespace fabricsim {

namespace {

// Tags: kind (data, or a read request) << 40 | direction << 32 | QP index, with the top bit
// set, as traffic flows' tags (TrafficPlayer::kTagBit): the network counts them apart from a
// collective's messages.
constexpr uint64_t kData = 0, kReadRequest = 1;
constexpr uint64_t kTrafficBit = uint64_t{1} << 63;
// Queue pair ids between the two hosts, apart from the collectives' (small) and traffic flows'
// (TrafficPlayer::kQpBit, bit 31): requester direction × 65536 + QP index above this, below
// the NIC-loopback bit (kNicLoopFlowBit, bit 30, which only a host's message to itself has).
constexpr uint32_t kFlowBase = uint32_t{1} << 29;

uint64_t tag_of(uint64_t kind, int dir, int qp) {
  return kTrafficBit | kind << 40 | static_cast<uint64_t>(dir) << 32 | static_cast<uint64_t>(qp);
}
uint32_t flow_of(int dir, int qp) {
  return kFlowBase + static_cast<uint32_t>(dir) * 65536 + static_cast<uint32_t>(qp);
}

}  // namespace

const std::vector<PerftestTest>& perftest_tests() {
  static const std::vector<PerftestTest> tests = {
      {"ib_write_bw", "RDMA_Write BW Test", false, false},
      {"ib_read_bw", "RDMA_Read BW Test", false, true},
      {"ib_send_bw", "Send BW Test", false, false},
      {"ib_write_lat", "RDMA_Write Latency Test", true, false},
      {"ib_read_lat", "RDMA_Read Latency Test", true, true},
      {"ib_send_lat", "Send Latency Test", true, false},
  };
  return tests;
}

const PerftestTest* find_perftest(const std::string& name) {
  for (const PerftestTest& t : perftest_tests()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

std::vector<int64_t> perftest_sizes(const PerftestConfig& c) {
  const PerftestTest* t = find_perftest(c.test);
  if (!c.all_sizes) {
    if (c.size_bytes > 0) return {c.size_bytes};
    return {t != nullptr && t->latency ? int64_t{2} : int64_t{65536}};
  }
  std::vector<int64_t> sizes;
  for (int64_t s = 2; s <= (int64_t{8} << 20); s *= 2) sizes.push_back(s);  // MAX_SIZE
  return sizes;
}

int perftest_tx_depth(const PerftestConfig& c) {
  if (c.tx_depth > 0) return c.tx_depth;
  const PerftestTest* t = find_perftest(c.test);
  return t != nullptr && t->latency ? 1 : 128;
}

int64_t perftest_inline_size(const PerftestConfig& c) {
  if (c.inline_size >= 0) return c.inline_size;
  if (c.test == "ib_write_lat") return 220;  // perftest_parameters.h: DEF_INLINE_WRITE
  if (c.test == "ib_send_lat") return 236;   // DEF_INLINE_SEND_RC_UC
  return 0;                                  // the bw tests, and reads (no payload to send)
}

int64_t perftest_iterations(const PerftestConfig& c, int64_t bytes) {
  const int64_t floor = 2 * int64_t{perftest_tx_depth(c)} * c.qps;
  const int64_t cap = std::max(floor, c.max_bytes_per_size / std::max<int64_t>(bytes, 1));
  return std::max<int64_t>(1, std::min(c.iterations, cap));
}

PerftestPlayer::PerftestPlayer(Simulator& sim, Network& net, const PerftestConfig& c)
    : sim_(sim),
      net_(net),
      c_(c),
      test_(find_perftest(c.test)),
      tx_depth_(perftest_tx_depth(c)),
      inline_size_(perftest_inline_size(c)) {
  if (test_ == nullptr) throw std::invalid_argument("perftest: unknown test '" + c.test + "'");
  // Every QP the test may use, in a fixed order (requester direction, QP; forward, back).
  const int qps = test_->latency ? 1 : c.qps;
  for (int dir = 0; dir < 2; ++dir) {
    for (int q = 0; q < qps; ++q) {
      net_.open_qp(c.client, c.server, flow_of(dir, q));
      net_.open_qp(c.server, c.client, flow_of(dir, q));
    }
  }
}

void PerftestPlayer::start(int64_t bytes) {
  bytes_ = bytes;
  iterations_ = perftest_iterations(c_, bytes);
  const int dirs = !test_->latency && c_.bidirectional ? 2 : 1;
  const int qps = test_->latency ? 1 : c_.qps;
  total_ = static_cast<size_t>(test_->latency ? iterations_ : iterations_ * qps * dirs);
  completed_ = 0;
  done_ = false;
  start_ps_ = sim_.now().ps();
  finish_ps_ = half_ps_ = -1;
  posted_.assign(2 * static_cast<size_t>(qps), 0);
  rtt_start_.assign(1, 0);
  samples_us_.clear();
  samples_us_.reserve(test_->latency ? static_cast<size_t>(iterations_) : 0);
  net_.set_sink(this);
  if (test_->latency) {
    rtt_start_[0] = start_ps_;
    post(0, 0);
    return;
  }
  for (int dir = 0; dir < dirs; ++dir) {
    for (int q = 0; q < qps; ++q) {
      for (int64_t i = 0; i < std::min<int64_t>(tx_depth_, iterations_); ++i) post(dir, q);
    }
  }
}

void PerftestPlayer::post(int dir, int qp) {
  const int requester = dir == 0 ? c_.client : c_.server;
  const int responder = dir == 0 ? c_.server : c_.client;
  if (!test_->latency) ++posted_[static_cast<size_t>(dir * (c_.qps) + qp)];
  if (test_->read) {  // the read request: a header-only packet; the responder sends the data
    net_.send(requester, responder, 0, flow_of(dir, qp), tag_of(kReadRequest, dir, qp));
  } else {
    net_.send(requester, responder, bytes_, flow_of(dir, qp), tag_of(kData, dir, qp), -1,
              bytes_ <= inline_size_);
  }
}

void PerftestPlayer::post_data(int dir, int qp) {  // a read's response, responder -> requester
  const int requester = dir == 0 ? c_.client : c_.server;
  const int responder = dir == 0 ? c_.server : c_.client;
  net_.send(responder, requester, bytes_, flow_of(dir, qp), tag_of(kData, dir, qp));
}

void PerftestPlayer::on_message_complete(uint64_t tag) {
  const uint64_t kind = tag >> 40 & 0xff;
  const int dir = static_cast<int>(tag >> 32 & 0xff);
  const int qp = static_cast<int>(tag & 0xffffffff);
  if (kind == kReadRequest) {  // at the responder
    post_data(dir, qp);
    return;
  }
  const int64_t now = sim_.now().ps();
  if (test_->latency) {
    if (!test_->read && dir == 0) {  // the ping arrived: the server answers in kind
      net_.send(c_.server, c_.client, bytes_, flow_of(1, 0), tag_of(kData, 1, 0), -1,
                bytes_ <= inline_size_);
      return;
    }
    // The round trip is over: perftest reports half of it for write/send, all of it for read.
    const int64_t rtt = now - rtt_start_[0];
    samples_us_.push_back(static_cast<double>(rtt) / (test_->read ? 1e6 : 2e6));
    ++completed_;
    if (completed_ < total_) {
      rtt_start_[0] = now;
      post(0, 0);
      return;
    }
  } else {
    ++completed_;
    if (completed_ == total_ / 2) half_ps_ = now;
    if (posted_[static_cast<size_t>(dir * c_.qps + qp)] < iterations_) post(dir, qp);
    if (completed_ < total_) return;
  }
  done_ = true;
  finish_ps_ = now;
  sim_.request_stop();
}

PerftestResult PerftestPlayer::result() const {
  PerftestResult r;
  r.bytes = bytes_;
  if (!test_->latency) {
    r.iterations = iterations_ * c_.qps;
    const double secs = static_cast<double>(finish_ps_ - start_ps_) / 1e12;
    r.bw_avg_Bps = static_cast<double>(bytes_) * static_cast<double>(total_) / secs;
    const double half_secs = static_cast<double>(finish_ps_ - half_ps_) / 1e12;
    const size_t second_half = total_ - total_ / 2;
    r.bw_peak_Bps = half_secs > 0 && total_ >= 2
                        ? static_cast<double>(bytes_) * static_cast<double>(second_half) / half_secs
                        : r.bw_avg_Bps;
    r.msg_rate_Mpps = r.bw_avg_Bps / static_cast<double>(bytes_) / 1e6;
    return r;
  }
  r.iterations = iterations_;
  std::vector<double> s = samples_us_;
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  if (n == 0) return r;
  double sum = 0;
  for (double x : s) sum += x;
  r.t_avg_us = sum / static_cast<double>(n);
  double var = 0;
  for (double x : s) var += (x - r.t_avg_us) * (x - r.t_avg_us);
  r.t_stdev_us = std::sqrt(var / static_cast<double>(n));
  r.t_min_us = s.front();
  r.t_max_us = s.back();
  r.t_typical_us = s[n / 2];
  // perftest's percentiles: sample ceil(n × p) (1-based).
  const auto at = [&](double p) {
    const size_t i = static_cast<size_t>(std::ceil(static_cast<double>(n) * p));
    return s[std::min(n, std::max<size_t>(i, 1)) - 1];
  };
  r.p99_us = at(0.99);
  r.p99_9_us = at(0.999);
  return r;
}

std::string format_perftest(const PerftestConfig& c, int mtu_bytes, const std::string& link_type,
                            const std::vector<PerftestResult>& results) {
  const PerftestTest* t = find_perftest(c.test);
  if (t == nullptr) throw std::invalid_argument("perftest: unknown test '" + c.test + "'");
  const bool bidir = !t->latency && c.bidirectional;
  std::string title = t->title;
  if (bidir) title.insert(title.find(" BW"), " Bidirectional");
  const std::string dashes(87, '-');
  char line[512];
  std::string out;
  std::snprintf(
      line, sizeof line,
      "## simulated: fabricsim, %s from host %d to host %d; at most %" PRId64
      " iterations and %" PRId64 " bytes a size, and at least %" PRId64
      " iterations (2 x TX depth x QPs; perftest itself runs 5000 iterations for ib_write_bw, "
      "1000 for the others)\n",
      c.test.c_str(), c.client, c.server, c.iterations, c.max_bytes_per_size,
      std::min(c.iterations, 2 * int64_t{perftest_tx_depth(c)} * c.qps));
  out += line;
  out += dashes + "\n";
  out += "                    " + title + "\n";
  std::snprintf(line, sizeof line,
                " Number of qps   : %d\t\tTransport type : IB\n"
                " Connection type : RC\t\tUsing SRQ      : OFF\n"
                " TX depth        : %d\n"
                " Mtu             : %d[B]\n"
                " Link type       : %s\n"
                " Max inline data : %" PRId64 "[B]\n",
                t->latency ? 1 : c.qps, perftest_tx_depth(c), mtu_bytes, link_type.c_str(),
                perftest_inline_size(c));
  out += line;
  out += dashes + "\n";
  if (t->latency) {
    out +=
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
        "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n";
    for (const PerftestResult& r : results) {
      std::snprintf(line, sizeof line,
                    " %-7" PRId64 " %-10" PRId64
                    "     %-7.2f        %-7.2f      %-7.2f"
                    "            %-7.2f        %-7.2f            %-7.2f                %-7.2f\n",
                    r.bytes, r.iterations, r.t_min_us, r.t_max_us, r.t_typical_us, r.t_avg_us,
                    r.t_stdev_us, r.p99_us, r.p99_9_us);
      out += line;
    }
  } else {
    const char* unit = c.report_gbits ? "Gb/sec" : "MB/sec";
    const double per_unit = c.report_gbits ? 1.25e8 : 1048576.0;  // perftest's format_factor
    std::snprintf(line, sizeof line,
                  " #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]\n",
                  unit, unit);
    out += line;
    for (const PerftestResult& r : results) {
      const double peak = r.bw_peak_Bps / per_unit, avg = r.bw_avg_Bps / per_unit;
      // REPORT_FMT, or REPORT_FMT_EXT (6 decimals) for a Gb/sec average below 0.1.
      const char* fmt = c.report_gbits && avg < 0.1 ? " %-7" PRId64 "    %-7" PRId64
                                                      "          %-7.6f            %-7.6f"
                                                      "\t   %-7.6f\n"
                                                    : " %-7" PRId64 "    %-7" PRId64
                                                      "          %-7.2f            %-7.2f"
                                                      "\t   %-7.6f\n";
      std::snprintf(line, sizeof line, fmt, r.bytes, r.iterations, peak, avg, r.msg_rate_Mpps);
      out += line;
    }
  }
  out += dashes + "\n";
  return out;
}

}  // namespace fabricsim
