// HPCC's window and rate computation (the algorithm is described in hpcc.hpp).
#include "congestion/hpcc/hpcc.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/core/units.hpp"

namespace fabricsim {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("HPCC: " + what);
}

constexpr double kPsPerS = 1e12;

}  // namespace

void validate_hpcc(const HpccConfig& c, int64_t line_rate_bps) {
  if (!(c.eta > 0.0 && c.eta <= 1.0)) fail("eta must be in (0, 1], got " + std::to_string(c.eta));
  if (c.max_stage < 0) fail("max_stage must be >= 0, got " + std::to_string(c.max_stage));
  if (c.rate_ai_bps < 0) fail("rate_ai must be >= 0 bps, got " + std::to_string(c.rate_ai_bps));
  if (c.rate_ai_bps > line_rate_bps) {
    fail("rate_ai (" + format_rate(c.rate_ai_bps) + ") exceeds the line rate (" +
         format_rate(line_rate_bps) + "): expected an increment at most the line rate");
  }
  if (c.min_rate_bps <= 0) fail("min_rate must be > 0 bps, got " + std::to_string(c.min_rate_bps));
  if (c.min_rate_bps > line_rate_bps) {
    fail("min_rate (" + format_rate(c.min_rate_bps) + ") exceeds the line rate (" +
         format_rate(line_rate_bps) + "): expected a floor at most the line rate");
  }
  if (c.base_rtt_ps < 0) fail("base_rtt must be >= 0 ps, got " + std::to_string(c.base_rtt_ps));
  if (c.int_header_bytes < 0 || c.int_header_bytes > 1024) {
    fail("int_header_bytes must be 0..1024, got " + std::to_string(c.int_header_bytes));
  }
}

int64_t hpcc_rate_ai_bps(const HpccConfig& c, int64_t line_rate_bps) {
  return c.rate_ai_bps > 0 ? c.rate_ai_bps : line_rate_bps / 2500;
}

HpccRp::HpccRp(const HpccConfig* cfg, int64_t line_rate_bps, int64_t base_rtt_ps) {
  if (cfg == nullptr) fail("a sender needs a config");
  if (line_rate_bps <= 0) fail("line rate must be > 0 bps, got " + std::to_string(line_rate_bps));
  if (base_rtt_ps <= 0) fail("base RTT must be > 0 ps, got " + std::to_string(base_rtt_ps));
  validate_hpcc(*cfg, line_rate_bps);
  cfg_ = cfg;
  line_rate_bps_ = rate_bps_ = ref_rate_bps_ = line_rate_bps;
  base_rtt_ps_ = base_rtt_ps;
  ai_bps_ = hpcc_rate_ai_bps(*cfg, line_rate_bps);
}

int64_t HpccRp::window_bytes() const {
  if (!cfg_->window) return 0;
  const double w =
      static_cast<double>(rate_bps_) * static_cast<double>(base_rtt_ps_) / (8.0 * kPsPerS);
  return std::max<int64_t>(1, std::llround(w));
}

void HpccRp::on_ack(uint32_t acked_psn, uint32_t snd_nxt, const IntStack& ints) {
  overflowed_ |= ints.overflow;
  const int n = std::min<int>(ints.n, IntStack::kMaxHops);
  if (!have_prev_) {  // the first ACK: its records are the reference for the next one
    std::copy(ints.hop, ints.hop + n, prev_);
    nprev_ = static_cast<uint8_t>(n);
    have_prev_ = true;
    last_update_psn_ = snd_nxt;
    return;
  }
  const bool full = acked_psn > last_update_psn_;
  if (!full && !cfg_->fast_react) return;
  // MeasureInflight: the most utilized hop, against the records of the previous ACK.
  const double t = static_cast<double>(base_rtt_ps_);
  double umax = 0.0;
  int64_t tau_ps = 0;
  bool measured = false;
  for (int i = 0; i < n && i < nprev_; ++i) {
    const IntHop& h = ints.hop[i];
    const IntHop& p = prev_[i];
    const int64_t dt = h.ts_ps - p.ts_ps;
    if (dt <= 0 || h.rate_bps <= 0) continue;  // no time between the samples: nothing to learn
    const double b = static_cast<double>(h.rate_bps);
    const double tx_rate_bps =
        static_cast<double>(h.tx_bytes - p.tx_bytes) * 8.0 * kPsPerS / static_cast<double>(dt);
    const double qlen_bits = 8.0 * static_cast<double>(std::min(h.qlen_bytes, p.qlen_bytes));
    const double u = qlen_bits * kPsPerS / (b * t) + tx_rate_bps / b;
    if (!measured || u > umax) {
      umax = u;
      tau_ps = dt;
    }
    measured = true;
  }
  std::copy(ints.hop, ints.hop + n, prev_);
  nprev_ = static_cast<uint8_t>(n);
  if (measured) {
    const double tau = static_cast<double>(std::min(tau_ps, base_rtt_ps_));
    u_ = (u_ * (t - tau) + umax * tau) / t;
    // ComputeWind, as a rate (W / T).
    const double c = u_ / cfg_->eta;
    double next;
    int32_t stage;
    if (c >= 1.0 || inc_stage_ >= cfg_->max_stage) {
      next = c > 0.0 ? static_cast<double>(ref_rate_bps_) / c + static_cast<double>(ai_bps_)
                     : static_cast<double>(line_rate_bps_);
      stage = 0;
    } else {
      next = static_cast<double>(ref_rate_bps_ + ai_bps_);
      stage = inc_stage_ + 1;
    }
    next = std::clamp(next, static_cast<double>(cfg_->min_rate_bps),
                      static_cast<double>(line_rate_bps_));
    rate_bps_ = std::llround(next);
    if (full) {
      ref_rate_bps_ = rate_bps_;
      inc_stage_ = stage;
      ++updates_;
    } else {
      ++fast_reacts_;
    }
  }
  if (full && snd_nxt > last_update_psn_) last_update_psn_ = snd_nxt;
}

}  // namespace fabricsim
