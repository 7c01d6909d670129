#include "calibration/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>
#include <stdexcept>

#include "calibration/fit.hpp"
#include "calibration/net_transport.hpp"
#include "calibration/printf_format.hpp"
#include "collectives/nccl_tests.hpp"
#include "sim/net/wire.hpp"

namespace fabricsim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// 1/slope and its interval by the delta method: d(1/b) = db / b².
Estimate inverse(double slope, double slope_ci95, double scale) {
  const double v = scale / slope;
  return Estimate{v, std::isnan(slope_ci95) ? kNaN : scale * slope_ci95 / (slope * slope)};
}

}  // namespace

PerftestBwFit fit_perftest_bw(const PerftestLog& log) {
  if (log.latency) throw std::invalid_argument(log.path + ": a latency test, not a BW test");
  std::vector<double> s, t, w;
  std::vector<const PerftestBwRow*> used;
  const double per_direction = log.bidirectional ? 0.5 : 1.0;
  for (const PerftestBwRow& r : log.bw_rows) {
    if (!(r.bw_avg_Bps > 0) || r.bytes <= 0) continue;
    // A size not above the last one kept (tables pasted twice, concatenated runs) is skipped:
    // the fit needs increasing sizes; the first run's rows stand.
    if (!s.empty() && static_cast<double>(r.bytes) <= s.back()) continue;
    const double bw = r.bw_avg_Bps * per_direction;
    s.push_back(static_cast<double>(r.bytes));
    t.push_back(static_cast<double>(r.bytes) / bw);
    w.push_back(1.0 / (t.back() * t.back()));
    used.push_back(&r);
  }
  if (s.empty()) throw std::invalid_argument(log.path + ": no row with a bandwidth to fit");
  PerftestBwFit f;
  f.path = log.path;
  f.tool = log.tool;
  LinearFit line;
  const bool sweep = s.size() >= 2 && s.front() != s.back();
  if (sweep && s.size() >= 6) {
    // Two regimes at most: overhead-bound small messages, bandwidth-bound large ones (one line
    // through both would bend β towards the small sizes' many points). α from the first
    // segment, β from the last.
    const std::vector<Segment> segs = fit_piecewise(s, t, w, 3, 3);
    line = segs.back().fit;
    line.intercept = segs.front().fit.intercept;
    line.intercept_ci95 = segs.front().fit.intercept_ci95;
    f.segments = static_cast<int>(segs.size());
    f.plateau_first_bytes = used[segs.back().first]->bytes;
    for (size_t k = 0; k < segs.size(); ++k) {
      for (size_t i = segs[k].first; i < segs[k].last; ++i) {
        f.points.push_back({used[i]->bytes, used[i]->bw_avg_Bps * per_direction * 8e-9,
                            s[i] / segs[k].fit.at(s[i]) * 8e-9});
      }
    }
    double tss = 0, rss = 0, mean = 0;
    for (size_t i = 0; i < s.size(); ++i) mean += w[i] * t[i];
    double wsum = 0;
    for (double v : w) wsum += v;
    mean /= wsum;
    for (size_t i = 0; i < s.size(); ++i) tss += w[i] * (t[i] - mean) * (t[i] - mean);
    for (const Segment& g : segs) rss += g.fit.rss;
    line.r2 = tss > 0 ? 1 - rss / tss : 1;
  } else if (sweep) {
    line = fit_line(s, t, w);
  } else {  // one size repeated: no overhead to separate, β from the mean time
    double mean = 0;
    for (double v : t) mean += v / static_cast<double>(t.size());
    line.intercept = 0;
    line.slope = mean / s.front();
    line.intercept_ci95 = line.slope_ci95 = kNaN;
    line.r2 = kNaN;
  }
  if (f.plateau_first_bytes == 0) f.plateau_first_bytes = used.front()->bytes;
  f.plateau_last_bytes = used.back()->bytes;
  f.overhead_ns = Estimate{line.intercept * 1e9, line.intercept_ci95 * 1e9};
  f.bandwidth_Gbps = inverse(line.slope, line.slope_ci95, 8e-9);
  f.r2 = line.r2;
  const WireFormat wire = log.link_type == "IB" ? infiniband_wire() : roce_v2_wire();
  const int mtu = log.mtu_bytes > 0 ? log.mtu_bytes : 4096;
  f.line_rate_Gbps = f.bandwidth_Gbps.value * static_cast<double>(wire.wire_bytes(mtu)) / mtu;
  if (f.points.empty()) {
    for (size_t i = 0; i < s.size(); ++i) {
      f.points.push_back({used[i]->bytes, used[i]->bw_avg_Bps * per_direction * 8e-9,
                          s[i] / line.at(s[i]) * 8e-9});
    }
  }
  return f;
}

PerftestLatFit fit_perftest_lat(const PerftestLog& log) {
  if (!log.latency || log.lat_rows.empty()) {
    throw std::invalid_argument(log.path + ": no latency rows to fit");
  }
  PerftestLatFit f;
  f.path = log.path;
  f.tool = log.tool;
  const auto smallest = std::min_element(
      log.lat_rows.begin(), log.lat_rows.end(),
      [](const PerftestLatRow& a, const PerftestLatRow& b) { return a.bytes < b.bytes; });
  f.base_latency_us = smallest->t_typical_us;
  std::vector<double> s, t;
  for (const PerftestLatRow& r : log.lat_rows) {
    if (!(r.t_typical_us > 0)) continue;
    if (!s.empty() && static_cast<double>(r.bytes) <= s.back()) continue;  // sizes increasing
    s.push_back(static_cast<double>(r.bytes));
    t.push_back(r.t_typical_us);
  }
  if (s.size() >= 3) {
    const LinearFit line = fit_line(s, t);
    f.per_kib_us = Estimate{line.slope * 1024, line.slope_ci95 * 1024};
  }
  return f;
}

double nccl_row_busbw_GBps(const NcclLog& log, const NcclLogRow& row) {
  const double factor = log.nranks >= 2 ? busbw_factor(log.collective, log.nranks) : 1.0;
  return static_cast<double>(row.size_bytes) / row.oop_time_us * 1e-3 * factor;
}

std::pair<double, double> abs_pct_errors(
    const std::vector<std::pair<double, double>>& measured_predicted) {
  if (measured_predicted.empty()) throw std::invalid_argument("abs_pct_errors: no points");
  std::vector<double> e;
  for (const auto& [m, p] : measured_predicted) {
    if (!(m > 0)) throw std::invalid_argument("abs_pct_errors: a measured value <= 0");
    e.push_back(std::abs(p - m) / m * 100);
  }
  std::sort(e.begin(), e.end());
  const size_t n = e.size();
  const double median = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
  return {median, e.back()};
}

NcclFit fit_nccl(const NcclLog& log, int64_t heldout_from_bytes) {
  if (log.collective.empty() || log.nranks < 1) {
    throw std::invalid_argument(log.path +
                                ": the log names no collective or rank count; busbw needs both");
  }
  NcclFit f;
  f.path = log.path;
  f.collective = log.collective;
  f.nranks = log.nranks;
  f.nodes = log.nodes;
  const double factor = log.nranks >= 2 ? busbw_factor(log.collective, log.nranks) : 1.0;
  std::vector<double> s, t, w;
  std::vector<const NcclLogRow*> fitted, held;
  for (const NcclLogRow& r : log.rows) {
    if (!(r.oop_time_us > 0) || r.size_bytes <= 0) continue;
    if (!s.empty() && static_cast<double>(r.size_bytes) <= s.back()) continue;
    if (heldout_from_bytes > 0 && r.size_bytes >= heldout_from_bytes) {
      held.push_back(&r);
      continue;
    }
    s.push_back(static_cast<double>(r.size_bytes));
    t.push_back(r.oop_time_us);
    w.push_back(1.0 / (r.oop_time_us * r.oop_time_us));
    fitted.push_back(&r);
  }
  if (s.size() < 3) {  // a line through 2 points has no interval, and no check of its shape
    std::string msg = log.path + ": fewer than 3 sizes with a time to fit";
    if (!held.empty()) {
      msg += " (" + std::to_string(s.size()) + " left after --holdout held out " +
             std::to_string(held.size()) + "; hold out fewer)";
    }
    throw std::invalid_argument(msg);
  }
  // Regimes of at least 3 sizes (a line through 2 has no interval); fewer regimes while one of
  // them is unphysical (a latency below zero beyond its interval, or a bandwidth <= 0).
  const int min_points = s.size() >= 6 ? 3 : 2;
  std::vector<Segment> segments;
  for (int max_segments = s.size() >= 6 ? 3 : 1; max_segments >= 1; --max_segments) {
    segments = fit_piecewise(s, t, w, max_segments, min_points);
    const bool physical = std::all_of(segments.begin(), segments.end(), [](const Segment& g) {
      const double ci = std::isnan(g.fit.intercept_ci95) ? 0 : g.fit.intercept_ci95;
      return g.fit.slope > 0 && g.fit.intercept >= -ci;
    });
    if (physical) break;
  }
  for (const Segment& g : segments) {
    f.regimes.push_back(NcclRegime{fitted[g.first]->size_bytes, fitted[g.last - 1]->size_bytes,
                                   Estimate{g.fit.intercept, g.fit.intercept_ci95},
                                   inverse(g.fit.slope, g.fit.slope_ci95, 1e-3), g.fit.r2});
  }
  // busbw in GB/s from bytes and µs: S / (t µs) = S / t × 1e-3 GB/s.
  const auto busbw = [&](double bytes, double time_us) { return bytes / time_us * 1e-3 * factor; };
  f.busbw_asymptote_GBps = f.regimes.back().algbw_GBps.value * factor;
  for (const Segment& g : segments) {
    for (size_t i = g.first; i < g.last; ++i) {
      f.points.push_back(
          {fitted[i]->size_bytes, busbw(s[i], t[i]), busbw(s[i], g.fit.at(s[i])), false});
    }
  }
  std::vector<std::pair<double, double>> errors;
  const LinearFit& last = segments.back().fit;
  for (const NcclLogRow* r : held) {
    const double bytes = static_cast<double>(r->size_bytes);
    const double predicted = busbw(bytes, last.at(bytes));
    const double measured = busbw(bytes, r->oop_time_us);
    f.points.push_back({r->size_bytes, measured, predicted, true});
    errors.emplace_back(measured, predicted);
  }
  if (!errors.empty()) {
    const auto [median, worst] = abs_pct_errors(errors);
    f.heldout_median_abs_pct_error = median;
    f.heldout_max_abs_pct_error = worst;
  }
  return f;
}

std::optional<double> nominal_rate_Gbps(const std::map<std::string, std::string>& meta) {
  std::string text;
  for (const char* key : {"hardware", "fabric"}) {
    if (const auto it = meta.find(key); it != meta.end()) text += it->second + " ";
  }
  // "400G", "400 Gb/s", "400Gbps", "400 GbE", "100g"; then IB generations.
  // InfiniBand SDR/DDR/QDR signal in 8b/10b: 40 Gb/s QDR carries 32 Gb/s of data; FDR and
  // later use 64b/66b (FDR: 56 Gb/s signalling, 54.5 of data) — IBTA spec vol. 2.
  double coding = 1.0;
  for (const char* g : {"SDR", "DDR", "QDR"}) {
    if (text.find(g) != std::string::npos) coding = 0.8;
  }
  if (text.find("FDR") != std::string::npos) coding = 64.0 / 66.0;
  static const std::regex rate(R"((\d{2,4})\s*(?:G(?:b/s|bps|bE|b)?|g)(?![a-zA-Z]))");
  std::smatch m;
  if (std::regex_search(text, m, rate)) return std::stod(m[1].str()) * coding;
  for (const auto& [name, gbps] :
       {std::pair{"XDR", 800.0}, std::pair{"NDR", 400.0}, std::pair{"HDR", 200.0},
        std::pair{"EDR", 100.0}, std::pair{"FDR", 56.0}, std::pair{"QDR", 40.0}}) {
    if (text.find(name) != std::string::npos) return gbps * coding;
  }
  return std::nullopt;
}

std::vector<HealthHint> health_hints(const PerftestLog& log, const PerftestBwFit& fit,
                                     std::optional<double> nominal_Gbps) {
  std::vector<HealthHint> hints;
  if (!(fit.bandwidth_Gbps.ci95 <= 0.25 * fit.bandwidth_Gbps.value) &&
      !std::isnan(fit.bandwidth_Gbps.ci95)) {
    // A slope that is not positive (every size still overhead-bound) has no bandwidth to show.
    const std::string b = fit.bandwidth_Gbps.value > 0
                              ? "B = " + printf_format("%.1f", fit.bandwidth_Gbps.value) + " +- " +
                                    printf_format("%.1f", fit.bandwidth_Gbps.ci95) + " Gb/s"
                              : "the bandwidth";
    hints.push_back({log.path, "the sizes do not reach the bandwidth plateau: " + b +
                                   " is not determined (run with -a up to MiB sizes)"});
    return hints;
  }
  if (nominal_Gbps && fit.line_rate_Gbps < 0.8 * *nominal_Gbps) {
    const double standard[] = {800, 400, 200, 100, 56, 50, 40, 25, 10};
    double nearest = standard[0];
    for (double r : standard) {
      if (std::abs(r - fit.line_rate_Gbps) < std::abs(nearest - fit.line_rate_Gbps)) nearest = r;
    }
    hints.push_back(
        {log.path,
         "the link carries " + printf_format("%.1f", fit.line_rate_Gbps) +
             " Gb/s (line rate, fitted), " +
             printf_format("%.0f", fit.line_rate_Gbps / *nominal_Gbps * 100) + " % of the " +
             printf_format("%.0f", *nominal_Gbps) + " Gb/s the header names: closest to a " +
             printf_format("%.0f", nearest) +
             " Gb/s link (negotiated below nominal?), or the host side (PCIe, GPU memory, one "
             "QP) limits it"});
  }
  return hints;
}

std::vector<HealthHint> health_hints(const NcclLog& log, const NcclFit& fit,
                                     std::optional<double> link_GBps) {
  std::vector<HealthHint> hints;
  std::string transport = log.transport;
  std::transform(transport.begin(), transport.end(), transport.begin(), ::tolower);
  // On one node no byte crosses a network: the socket or IB device NCCL initialised there
  // carries nothing, so neither the socket nor the GPUDirect hint applies.
  const bool one_node = classify_net_transport(log).support == NetTransportSupport::kNone;
  if (!one_node && transport.find("socket") != std::string::npos) {
    hints.push_back({log.path,
                     "NCCL used the socket transport (NET/Socket): no RDMA, every byte goes "
                     "through the CPU; check that the IB/RoCE devices and NCCL's IB plugin are "
                     "visible"});
  }
  if (!one_node && log.gdr == 0) {
    hints.push_back({log.path,
                     "GPUDirect RDMA is off (no GDRDMA on the network channels): data is staged "
                     "through host memory; check nvidia-peermem / dma-buf and "
                     "NCCL_NET_GDR_LEVEL"});
  }
  for (const NcclLogRow& r : log.rows) {
    if (r.oop_wrong > 0 || r.ip_wrong > 0) {
      hints.push_back({log.path, "line " + std::to_string(r.line) +
                                     ": #wrong > 0: the collective returned wrong data"});
      break;
    }
  }
  if (link_GBps && log.nodes > 1 && fit.busbw_asymptote_GBps < 0.5 * *link_GBps) {
    hints.push_back({log.path, "busbw tends to " + printf_format("%.1f", fit.busbw_asymptote_GBps) +
                                   " GB/s, under half the " + printf_format("%.1f", *link_GBps) +
                                   " GB/s the fitted link carries"});
  }
  return hints;
}

}  // namespace fabricsim
