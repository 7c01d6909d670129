// DCQCN parameter presets (dcqcn_preset(), declared in scenario.hpp), each value with its source.
//
// paper:    Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015.
// connectx: the firmware defaults of NVIDIA ConnectX-4 and later NICs, as NVIDIA's "DCQCN CC
//           Parameters" page (DOCA / MLNX_OFED documentation) lists them and `mlxconfig -d <dev>
//           query` prints them (NVConfig names RPG_TIME_RESET_P1 …); the same knobs are the mlx5
//           sysfs files /sys/class/net/<if>/ecn/roce_rp/<name> and .../roce_np/<name>.
//           Firmware units are converted: us -> ps, Mb/s -> bits/s, 10-bit fixed point -> /1024.
#include <stdexcept>
#include <string>

#include "sim/config/scenario.hpp"

namespace fabricsim {

namespace {

constexpr int64_t kUs = 1'000'000;    // picoseconds per microsecond
constexpr int64_t kMbps = 1'000'000;  // bits/s per Mb/s

/// The paper's values are DcqcnConfig's initializers, each cited there (scenario.hpp).
DcqcnConfig paper_preset() {
  DcqcnConfig c;
  c.preset = "paper";
  return c;
}

DcqcnConfig connectx_preset() {
  DcqcnConfig c;
  c.preset = "connectx";
  // Alpha update, every dce_tcp_rtt: alpha = (dce_tcp_g / 1024) alpha [+ (1024 - dce_tcp_g) /
  // 1024 if a CNP came], i.e. g = (1024 - dce_tcp_g) / 1024 (NVIDIA "DCQCN Parameters").
  c.g = (1024.0 - 1019.0) / 1024;     // dce_tcp_g = 1019 (DCE_TCP_G)
  c.initial_alpha = 1023.0 / 1024;    // initial_alpha_value = 1023 (INITIAL_ALPHA_VALUE)
  c.alpha_timer_ps = 1 * kUs;         // dce_tcp_rtt = 1 us (DCE_TCP_RTT)
  c.rate_timer_ps = 300 * kUs;        // rpg_time_reset = 300 us (RPG_TIME_RESET)
  c.byte_counter_bytes = 32'767;      // rpg_byte_reset = 32767 bytes (RPG_BYTE_RESET)
  c.fast_recovery_steps = 1;          // rpg_threshold = 1 (RPG_THRESHOLD)
  c.rai_bps = 5 * kMbps;              // rpg_ai_rate = 5 Mb/s (RPG_AI_RATE)
  c.rhai_bps = 50 * kMbps;            // rpg_hai_rate = 50 Mb/s (RPG_HAI_RATE)
  c.min_rate_bps = 1 * kMbps;         // rpg_min_rate = 1 Mb/s (RPG_MIN_RATE)
  c.max_decrease = 1.0 - 50.0 / 100;  // rpg_min_dec_fac = 50 %: new rate >= 50 % of the old
  // rpg_gd = 11: cut = alpha_fixed / 2^11 = alpha / 2 with alpha in 1/1024 units, the paper's
  // cut, so it needs no field of its own.
  // A cut keeps Rt unless the rate rose since the last cut (byte counter or timer), and cuts
  // come at most once per 4 us however many CNPs arrive. The semantics as the DCQCN authors'
  // ns-3 (bobzhuyb/ns3-rdma, rpr_cnm_received) and the HPCC authors' model of ConnectX
  // (alibaba-edu/High-Precision-Congestion-Control, RdmaHw::CheckRateDecreaseMlx) implement
  // them; the values as `mlxconfig query` prints them on a ConnectX-6 Dx.
  c.clamp_target_rate = false;                // clamp_tgt_rate = 0 (CLAMP_TGT_RATE)
  c.clamp_target_rate_after_time_inc = true;  // clamp_tgt_rate_after_time_inc = 1
  c.rate_reduce_monitor_period_ps = 4 * kUs;  // rate_reduce_monitor_period = 4 us
  c.cnp_interval_ps = 4 * kUs;  // min_time_between_cnps = 4 us (MIN_TIME_BETWEEN_CNPS)
  c.cnp_traffic_class = 6;      // cnp_802p_prio = 6 (CNP_802P_PRIO)
  return c;
}

}  // namespace

DcqcnConfig dcqcn_preset(const std::string& name) {
  if (name == "paper") return paper_preset();
  if (name == "connectx") return connectx_preset();
  throw std::invalid_argument("unknown DCQCN preset '" + name + "' (expected paper or connectx)");
}

}  // namespace fabricsim
