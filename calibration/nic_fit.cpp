#include "calibration/nic_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "calibration/printf_format.hpp"
#include "sim/core/units.hpp"
#include "sim/net/wire.hpp"

namespace fabricsim {

namespace {

NicKeyFit not_fitted(const std::string& key, const std::string& path, std::string reason) {
  NicKeyFit k;
  k.key = key;
  k.path = path;
  k.reason = std::move(reason);
  return k;
}

}  // namespace

NicKeyFit fit_message_rate(const PerftestLog& log) {
  const std::string key = "nic.message_rate";
  if (log.latency) return not_fitted(key, log.path, "a latency test: one message at a time");
  const double per_direction = log.bidirectional ? 0.5 : 1.0;
  double top_Bps = 0;
  for (const PerftestBwRow& r : log.bw_rows) top_Bps = std::max(top_Bps, r.bw_avg_Bps);
  std::vector<const PerftestBwRow*> bound;
  int64_t last = 0;
  for (const PerftestBwRow& r : log.bw_rows) {
    if (r.bytes <= last) continue;  // a table pasted twice: its first run's rows
    last = r.bytes;
    if (r.bw_avg_Bps > 0 && r.bw_avg_Bps <= 0.25 * top_Bps) bound.push_back(&r);
  }
  if (bound.size() < 3) {
    return not_fitted(key, log.path,
                      std::to_string(bound.size()) +
                          " sizes run at under a quarter of the log's top BW average (" +
                          printf_format("%.2f", top_Bps * 8e-9) +
                          " Gb/s); the message rate needs at least 3 message-bound sizes (a "
                          "sweep from 2 B: -a)");
  }
  std::vector<double> rates_Mpps;
  for (const PerftestBwRow* r : bound) {
    // MsgRate = BW average / size (perftest prints it; older tables lack the column).
    const double mpps = std::isnan(r->msg_rate_Mpps)
                            ? r->bw_avg_Bps / static_cast<double>(r->bytes) * 1e-6
                            : r->msg_rate_Mpps;
    rates_Mpps.push_back(mpps * per_direction);
  }
  NicKeyFit k;
  k.key = key;
  k.path = log.path;
  k.fitted = true;
  // The median: one odd row (a warm-up, a 2 B row several times slower than the rest) does not
  // pull the rate down, as it would a mean.
  std::sort(rates_Mpps.begin(), rates_Mpps.end());
  const size_t n = rates_Mpps.size();
  const double mpps =
      n % 2 == 1 ? rates_Mpps[n / 2] : 0.5 * (rates_Mpps[n / 2 - 1] + rates_Mpps[n / 2]);
  k.value = mpps * 1e6;
  k.unit = "messages/s";
  k.yaml = printf_format("%.3f", mpps) + "e6";
  const int qps = log.num_qps > 0 ? log.num_qps : 1;
  k.rows = "median MsgRate " + printf_format("%.3f", mpps) + " Mpps" +
           (log.bidirectional ? " a direction" : "") + " of the " + std::to_string(bound.size()) +
           " message-bound rows " + format_size(bound.front()->bytes) + " .. " +
           format_size(bound.back()->bytes) + " (BW average at most a quarter of the top " +
           printf_format("%.2f", top_Bps * 8e-9) + " Gb/s); one perftest process over " +
           std::to_string(qps) + (qps == 1 ? " QP" : " QPs") +
           (log.num_qps > 0 ? " (-q)" : " (assumed: no -q)") + ", far below a NIC's datasheet rate";
  return k;
}

NicKeyFit fit_pcie_rate(const PerftestLog& log, const PerftestBwFit& fit,
                        std::optional<double> port_Gbps, const std::string& port_source) {
  const std::string key = "nic.pcie_rate";
  if (log.latency) return not_fitted(key, log.path, "a latency test has no bandwidth plateau");
  if (std::isnan(fit.bandwidth_Gbps.ci95) ||
      fit.bandwidth_Gbps.ci95 > 0.25 * fit.bandwidth_Gbps.value) {
    return not_fitted(key, log.path,
                      "the sweep does not reach a bandwidth plateau (one size, or sizes that "
                      "stop before it)");
  }
  if (!port_Gbps) {
    return not_fitted(key, log.path,
                      "the port's rate is not in a perftest log: give --scenario (its "
                      "link.host_rate is the port) to tell a host or PCIe plateau from the wire");
  }
  const WireFormat wire = log.link_type == "IB" ? infiniband_wire() : roce_v2_wire();
  const int mtu = log.mtu_bytes > 0 ? log.mtu_bytes : 4096;
  const double wire_payload_Gbps = *port_Gbps * mtu / static_cast<double>(wire.wire_bytes(mtu));
  const double plateau = fit.bandwidth_Gbps.value;
  const std::string plateau_text = "the plateau (" + printf_format("%.2f", plateau) +
                                   " Gb/s of payload, " + format_size(fit.plateau_first_bytes) +
                                   " .. " + format_size(fit.plateau_last_bytes) + ")";
  const std::string wire_text = printf_format("%.2f", wire_payload_Gbps) + " Gb/s of payload on " +
                                port_source + "'s " + printf_format("%.0f", *port_Gbps) +
                                " Gb/s port at MTU " + std::to_string(mtu) + " (" +
                                std::to_string(wire.wire_bytes(mtu)) + " B a packet on the wire)";
  if (plateau >= kPcieBelowWire * wire_payload_Gbps) {
    return not_fitted(key, log.path,
                      plateau_text + " is at the wire rate, " + wire_text + ", within " +
                          printf_format("%.0f", (1 - kPcieBelowWire) * 100) +
                          " %: the link limits it, not the host's PCIe");
  }
  NicKeyFit k;
  k.key = key;
  k.path = log.path;
  k.fitted = true;
  k.value = plateau;
  k.unit = "Gb/s";
  k.yaml = std::to_string(std::llround(plateau * 1e9)) + "bps";
  k.rows = plateau_text + ", " + printf_format("%.0f", plateau / wire_payload_Gbps * 100) +
           " % of the " + wire_text + (log.gpu_memory ? "; buffers in GPU memory" : "") +
           ": the host's PCIe path, not the link";
  return k;
}

}  // namespace fabricsim
