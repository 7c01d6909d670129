#include "calibration/calibrate_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "calibration/net_transport.hpp"
#include "calibration/report_json.hpp"
#include "sim/core/units.hpp"

namespace fabricsim {

using calibration_text::estimate_json;
using calibration_text::f2;
using calibration_text::optional_json;
using calibration_text::ordered_json;

void print_nic_key(std::ostream& out, const NicKeyFit& k) {
  if (k.fitted) {
    char value[64];
    if (k.unit == "messages/s") {
      std::snprintf(value, sizeof value, "%.3fe6 messages/s", k.value * 1e-6);
    } else {
      std::snprintf(value, sizeof value, "%.2f %s", k.value, k.unit.c_str());
    }
    out << "#   " << k.key << " = " << value << ": " << k.rows << "\n";
  } else {
    out << "#   " << k.key << " not fitted: " << k.reason << "\n";
  }
}

ordered_json nic_key_json(const NicKeyFit& k) {
  if (!k.fitted) return {{"key", k.key}, {"path", k.path}, {"not_fitted", k.reason}};
  return {{"key", k.key},   {"path", k.path},           {"value", k.value},
          {"unit", k.unit}, {"scenario_value", k.yaml}, {"rows", k.rows}};
}

void fit_perftest_logs(const std::vector<PerftestLog>& perftests, ordered_json& report,
                       ClosedFormFits& cf, std::ostream& out) {
  std::vector<std::string>& not_fitted = cf.not_fitted;
  std::vector<HealthHint>& hints = cf.hints;
  std::optional<double>& link_rate_Gbps = cf.link_rate_Gbps;
  std::optional<double>& link_GBps = cf.link_GBps;
  std::vector<PlotSeries>& plots = cf.plots;
  for (const PerftestLog& log : perftests) {
    ordered_json in = {{"path", log.path},
                       {"kind", "perftest"},
                       {"tool", log.tool},
                       {"link_type", log.link_type},
                       {"mtu_bytes", log.mtu_bytes},
                       {"num_qps", log.num_qps},
                       {"bidirectional", log.bidirectional},
                       {"gpu_memory", log.gpu_memory},
                       {"meta", log.meta},
                       {"notes", log.notes}};
    out << "# perftest " << log.path << " (" << (log.tool.empty() ? "?" : log.tool) << ", "
        << (log.link_type.empty() ? "link ?" : log.link_type)
        << (log.gpu_memory ? ", GPU memory" : "") << ")\n";
    if (log.latency) {
      const PerftestLatFit f = fit_perftest_lat(log);
      out << "#   base latency (t_typical, smallest message) " << f2(f.base_latency_us) << " us\n";
      in["fit"] = {{"base_latency_us", f.base_latency_us},
                   {"per_kib_us", f.per_kib_us ? estimate_json(*f.per_kib_us) : nullptr}};
    } else {
      PerftestBwFit f;
      try {
        f = fit_perftest_bw(log);
      } catch (const std::invalid_argument& e) {  // e.g. every size the same after filtering
        out << "#   not fitted (" << e.what() << ")\n";
        not_fitted.push_back(e.what());
        in["fit"] = nullptr;
        in["not_fitted"] = e.what();
        report["inputs"].push_back(in);
        continue;
      }
      if (std::isnan(f.bandwidth_Gbps.ci95)) {  // one message size: no line to fit
        out << "#   one size: B = " << f2(f.bandwidth_Gbps.value) << " Gb/s payload (line rate "
            << f2(f.line_rate_Gbps)
            << " Gb/s); no per-message overhead or interval without a sweep (-a)\n";
      } else if (!(f.bandwidth_Gbps.value > 0)) {  // a sweep that stops while overhead-bound
        out << "#   t(s) = a + s/B: a = " << f2(f.overhead_ns.value) << " +- "
            << f2(f.overhead_ns.ci95)
            << " ns, B undetermined (the sizes do not reach the bandwidth plateau), R2 " << f2(f.r2)
            << "\n";
      } else {
        out << "#   t(s) = a + s/B: a = " << f2(f.overhead_ns.value) << " +- "
            << f2(f.overhead_ns.ci95) << " ns, B = " << f2(f.bandwidth_Gbps.value) << " +- "
            << f2(f.bandwidth_Gbps.ci95) << " Gb/s payload (line rate " << f2(f.line_rate_Gbps)
            << " Gb/s), R2 " << f2(f.r2) << "\n";
      }
      out << "#        bytes   measured Gb/s   fitted Gb/s\n";
      ordered_json pts = ordered_json::array();
      for (const auto& p : f.points) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  %12lld  %14.2f  %12.2f\n",
                      static_cast<long long>(p.bytes), p.measured_Gbps, p.fitted_Gbps);
        out << buf;
        pts.push_back({{"bytes", p.bytes},
                       {"measured_Gbps", p.measured_Gbps},
                       {"fitted_Gbps", p.fitted_Gbps}});
      }
      PlotSeries ps{log.path + " (" + log.tool + ")", "bandwidth (Gb/s)", {}, {}, {}, {}};
      for (const auto& p : f.points) {
        ps.bytes.push_back(p.bytes);
        ps.measured.push_back(p.measured_Gbps);
        ps.fitted.push_back(p.fitted_Gbps);
        ps.simulated.push_back(std::nan(""));
      }
      plots.push_back(std::move(ps));
      in["fit"] = {{"overhead_ns", estimate_json(f.overhead_ns)},
                   {"bandwidth_Gbps", estimate_json(f.bandwidth_Gbps)},
                   {"line_rate_Gbps", f.line_rate_Gbps},
                   {"r2", std::isnan(f.r2) ? ordered_json(nullptr) : ordered_json(f.r2)},
                   {"points", pts}};
      const auto h = health_hints(log, f, nominal_rate_Gbps(log.meta));
      hints.insert(hints.end(), h.begin(), h.end());
      ordered_json nic = ordered_json::array();
      const NicKeyFit pcie = fit_pcie_rate(log, f, cf.port_Gbps, cf.port_source);
      for (const NicKeyFit& k : {fit_message_rate(log), pcie}) {
        print_nic_key(out, k);
        nic.push_back(nic_key_json(k));
        cf.nic_keys.push_back(k);
      }
      in["nic"] = nic;
      // A GPU-memory run's plateau, with no port to hold it against, may be the GPU's PCIe
      // path as well as the link: it is not taken as either.
      const bool unknown_gpu_path = log.gpu_memory && !cf.port_Gbps;
      if (pcie.fitted) {
        out << "#   link.host_rate not taken from this log: its plateau is the host's "
               "(nic.pcie_rate), the port is "
            << cf.port_source << "'s\n";
      } else if (unknown_gpu_path) {
        out << "#   link.host_rate not taken from this log: its buffers are in GPU memory, so its "
               "plateau may be the GPU's PCIe path rather than the port; with --scenario (the "
               "port) a plateau below the port is fitted as nic.pcie_rate\n";
      }
      // An undetermined bandwidth (a sweep that stops before its plateau) is not a link rate,
      // nor is a plateau below the port (the host's PCIe path: nic.pcie_rate).
      if (!(f.bandwidth_Gbps.ci95 > 0.25 * f.bandwidth_Gbps.value) && !pcie.fitted &&
          !unknown_gpu_path) {
        if (link_rate_Gbps &&
            std::abs(*link_rate_Gbps - f.line_rate_Gbps) > 0.1 * f.line_rate_Gbps) {
          hints.push_back({log.path, "its link rate (" + f2(f.line_rate_Gbps) +
                                         " Gb/s) differs from another perftest log's (" +
                                         f2(*link_rate_Gbps) + "): the fragment takes the larger"});
        }
        link_rate_Gbps = std::max(link_rate_Gbps.value_or(0), f.line_rate_Gbps);
        link_GBps = std::max(link_GBps.value_or(0), f.bandwidth_Gbps.value / 8);
      }
    }
    report["inputs"].push_back(in);
  }
}

void fit_nccl_logs(const std::vector<NcclLog>& nccls, const Holdout& holdout, ordered_json& report,
                   ClosedFormFits& cf, std::ostream& out) {
  std::vector<std::string>& not_fitted = cf.not_fitted;
  std::vector<HealthHint>& hints = cf.hints;
  const std::optional<double>& link_GBps = cf.link_GBps;
  std::vector<PlotSeries>& plots = cf.plots;
  std::map<std::string, size_t>& plot_of = cf.plot_of;
  std::vector<NcclFit>& fits = cf.fits;
  const std::string& heldout_file = holdout.file;
  const auto heldout_of = [&](const NcclLog& log, int64_t cap) {
    return holdout.first_heldout(log, cap);
  };
  for (const NcclLog& log : nccls) {
    const bool held = log.path == heldout_file;
    ordered_json in = {
        {"path", log.path},           {"kind", "nccl-tests"}, {"collective", log.collective},
        {"nranks", log.nranks},       {"nodes", log.nodes},   {"nccl_version", log.nccl_version},
        {"transport", log.transport}, {"gdr", log.gdr},       {"channels", log.channels},
        {"meta", log.meta},           {"notes", log.notes},   {"heldout", held}};
    const NetTransport net = classify_net_transport(log);
    in["network_transport"] = {{"support", to_string(net.support)},
                               {"name", net.name},
                               {"line", net.line},
                               {"evidence", net.evidence}};
    if (net.support == NetTransportSupport::kNotModelled) {
      // Parsed, but a fit would calibrate NET/IB or NET/Socket to another transport's numbers.
      const std::string why = not_modelled_reason(net);
      out << "# nccl-tests " << log.path << ": not fitted (" << why << ")\n";
      std::cerr << "fabricsim: warning: " << log.path << ":" << net.line << ": " << net.name
                << " is not modelled: the log is not fitted\n";
      not_fitted.push_back(log.path + ":" + std::to_string(net.line) + ": " + why);
      in["fit"] = nullptr;
      in["not_fitted"] = why;
      report["inputs"].push_back(in);
      continue;
    }
    NcclFit f;
    try {
      f = fit_nccl(log, held ? 0 : heldout_of(log, std::numeric_limits<int64_t>::max()));
    } catch (const std::invalid_argument& e) {
      out << "# nccl-tests " << log.path << ": not fitted (" << e.what() << ")\n";
      not_fitted.push_back(e.what());
      in["fit"] = nullptr;
      in["not_fitted"] = e.what();
      report["inputs"].push_back(in);
      continue;
    }
    out << "# nccl-tests " << log.path << " (" << log.collective << ", " << log.nranks
        << " ranks on " << log.nodes << (log.nodes == 1 ? " node" : " nodes")
        << (held ? ", held out" : "") << ")\n";
    ordered_json regimes = ordered_json::array();
    for (const NcclRegime& r : f.regimes) {
      out << "#   " << format_size(r.first_bytes) << " .. " << format_size(r.last_bytes)
          << ": t = " << f2(r.latency_us.value) << " +- " << f2(r.latency_us.ci95) << " us + S / ("
          << f2(r.algbw_GBps.value) << " +- " << f2(r.algbw_GBps.ci95) << " GB/s), R2 " << f2(r.r2)
          << "\n";
      regimes.push_back({{"first_bytes", r.first_bytes},
                         {"last_bytes", r.last_bytes},
                         {"latency_us", estimate_json(r.latency_us)},
                         {"algbw_GBps", estimate_json(r.algbw_GBps)},
                         {"r2", r.r2}});
    }
    out << "#        bytes  busbw measured  busbw fitted\n";
    ordered_json pts = ordered_json::array();
    for (const auto& p : f.points) {
      char buf[112];
      std::snprintf(buf, sizeof buf, "  %12lld  %14.2f  %12.2f%s\n",
                    static_cast<long long>(p.bytes), p.measured_busbw_GBps, p.fitted_busbw_GBps,
                    p.heldout ? "  (held out)" : "");
      out << buf;
      pts.push_back({{"bytes", p.bytes},
                     {"measured_busbw_GBps", p.measured_busbw_GBps},
                     {"fitted_busbw_GBps", p.fitted_busbw_GBps},
                     {"heldout", p.heldout}});
    }
    if (f.heldout_median_abs_pct_error) {
      out << "#   held out: busbw error median " << f2(*f.heldout_median_abs_pct_error)
          << " %, worst " << f2(*f.heldout_max_abs_pct_error) << " %\n";
    }
    PlotSeries ps{log.path + " (" + log.collective + ", " + std::to_string(log.nranks) + " ranks)",
                  "busbw (GB/s)",
                  {},
                  {},
                  {},
                  {}};
    for (const auto& p : f.points) {
      ps.bytes.push_back(p.bytes);
      ps.measured.push_back(p.measured_busbw_GBps);
      ps.fitted.push_back(p.fitted_busbw_GBps);
      ps.simulated.push_back(std::nan(""));
    }
    plot_of[log.path] = plots.size();
    plots.push_back(std::move(ps));
    in["fit"] = {{"regimes", regimes},
                 {"busbw_asymptote_GBps", f.busbw_asymptote_GBps},
                 {"points", pts},
                 {"heldout_median_abs_pct_error", optional_json(f.heldout_median_abs_pct_error)},
                 {"heldout_max_abs_pct_error", optional_json(f.heldout_max_abs_pct_error)}};
    const auto h = health_hints(log, f, link_GBps);
    hints.insert(hints.end(), h.begin(), h.end());
    report["inputs"].push_back(in);
    fits.push_back(std::move(f));
  }
}

}  // namespace fabricsim
