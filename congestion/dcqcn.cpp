// DCQCN reaction point: the slow paths of DcqcnRp (the algorithm is described in dcqcn.hpp).
#include "congestion/dcqcn.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fabricsim {

static_assert(sizeof(DcqcnRp) <= 144, "DcqcnRp lives in every queue pair: keep it small");

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int32_t kMaxStage = std::numeric_limits<int32_t>::max();

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("DCQCN: " + what);
}

/// (lo + hi) / 2 rounded up, for lo <= hi: repeated midpoints reach hi.
int64_t midpoint_up(int64_t lo, int64_t hi) {
  return lo + (hi - lo + 1) / 2;
}

/// min(rate + n x step, cap) without overflow, for rate <= cap and n, step >= 0.
int64_t add_capped(int64_t rate, int64_t n, int64_t step, int64_t cap) {
  if (step == 0 || n == 0) return rate;
  if (n > (cap - rate) / step) return cap;
  return rate + n * step;
}

int64_t saturating_add(int64_t a, int64_t b) {
  return a > kMax - b ? kMax : a + b;
}

}  // namespace

void validate_dcqcn(const DcqcnConfig& c, int64_t line_rate_bps) {
  if (!(c.g > 0.0 && c.g <= 1.0)) fail("g must be in (0, 1], got " + std::to_string(c.g));
  if (!(c.initial_alpha >= 0.0 && c.initial_alpha <= 1.0)) {
    fail("initial_alpha must be in [0, 1], got " + std::to_string(c.initial_alpha));
  }
  if (c.alpha_timer_ps <= 0) {
    fail("alpha_timer must be > 0 ps, got " + std::to_string(c.alpha_timer_ps));
  }
  if (c.rate_timer_ps <= 0) {
    fail("rate_timer must be > 0 ps, got " + std::to_string(c.rate_timer_ps));
  }
  if (c.byte_counter_bytes < 0) {
    fail("byte_counter must be >= 0 bytes, got " + std::to_string(c.byte_counter_bytes));
  }
  if (c.fast_recovery_steps < 0) {
    fail("fast_recovery_steps must be >= 0, got " + std::to_string(c.fast_recovery_steps));
  }
  if (c.rai_bps < 0) fail("rai must be >= 0 bps, got " + std::to_string(c.rai_bps));
  if (c.rhai_bps < 0) fail("rhai must be >= 0 bps, got " + std::to_string(c.rhai_bps));
  if (c.min_rate_bps <= 0) {
    fail("min_rate must be > 0 bps, got " + std::to_string(c.min_rate_bps));
  }
  if (c.min_rate_bps > line_rate_bps) {
    fail("min_rate " + std::to_string(c.min_rate_bps) + " bps exceeds the line rate " +
         std::to_string(line_rate_bps) + " bps");
  }
  if (!(c.max_decrease >= 0.0 && c.max_decrease <= 1.0)) {
    fail("max_decrease must be in [0, 1], got " + std::to_string(c.max_decrease));
  }
  if (c.rate_reduce_monitor_period_ps < 0) {
    fail("rate_reduce_monitor_period must be >= 0 ps, got " +
         std::to_string(c.rate_reduce_monitor_period_ps));
  }
  if (c.cnp_interval_ps < 0) {
    fail("cnp_interval must be >= 0 ps, got " + std::to_string(c.cnp_interval_ps));
  }
  if (c.cnp_traffic_class < 0 || c.cnp_traffic_class > 7) {
    fail("cnp_traffic_class must be in 0..7, got " + std::to_string(c.cnp_traffic_class));
  }
}

DcqcnRp::DcqcnRp(const DcqcnConfig* cfg, int64_t line_rate_bps, int64_t now_ps) {
  if (cfg == nullptr) fail("a reaction point needs a config");
  if (line_rate_bps <= 0) {
    fail("line rate must be > 0 bps, got " + std::to_string(line_rate_bps));
  }
  if (now_ps < 0) fail("start time must be >= 0 ps, got " + std::to_string(now_ps));
  validate_dcqcn(*cfg, line_rate_bps);
  cfg_ = cfg;
  line_rate_bps_ = rate_bps_ = target_bps_ = line_rate_bps;
  alpha_ = alpha_at_cnp_ = cfg->initial_alpha;
  now_ps_ = now_ps;
}

void DcqcnRp::throw_time_backwards(int64_t now_ps) const {
  fail("time went backwards: " + std::to_string(now_ps) + " ps after " + std::to_string(now_ps_) +
       " ps");
}

void DcqcnRp::decay_alpha() {
  // alpha = alpha_at_cnp (1 - g)^n after n whole K periods since the last CNP: a function of the
  // time alone, so it is the same however the time is reached.
  const int64_t k = cfg_->alpha_timer_ps;
  const int64_t n = (now_ps_ - last_cnp_ps_) / k;
  alpha_ = alpha_at_cnp_ * std::pow(1.0 - cfg_->g, static_cast<double>(n));
  next_alpha_ps_ = n + 1 > (kMax - last_cnp_ps_) / k ? kMax : last_cnp_ps_ + (n + 1) * k;
}

void DcqcnRp::increase(bool from_timer) {
  const DcqcnConfig& c = *cfg_;
  if (from_timer) {
    ++timer_events_;
    if (timer_stage_ < kMaxStage) ++timer_stage_;
    next_rate_ps_ = saturating_add(next_rate_ps_, c.rate_timer_ps);
  } else {
    ++byte_events_;
    if (byte_stage_ < kMaxStage) ++byte_stage_;
  }
  const int32_t f = c.fast_recovery_steps;
  const int32_t high = std::max(timer_stage_, byte_stage_);
  const int32_t low = std::min(timer_stage_, byte_stage_);
  if (high <= f) {
    ++fast_recovery_;  // Rt stays: Rc closes half the gap
  } else if (low <= f) {
    target_bps_ = add_capped(target_bps_, 1, c.rai_bps, line_rate_bps_);
    ++additive_increase_;
  } else {
    target_bps_ = add_capped(target_bps_, low - f, c.rhai_bps, line_rate_bps_);
    ++hyper_increase_;
  }
  rate_bps_ = midpoint_up(rate_bps_, target_bps_);
  if (rate_bps_ == line_rate_bps_) release();
}

void DcqcnRp::count_bytes(int64_t bytes) {
  if (bytes < 0) fail("bytes sent must be >= 0, got " + std::to_string(bytes));
  const int64_t b = cfg_->byte_counter_bytes;
  if (b == 0) return;  // no byte counter
  bytes_counted_ += bytes;
  while (bytes_counted_ >= b && rate_bps_ != line_rate_bps_) {
    bytes_counted_ -= b;
    increase(/*from_timer=*/false);
  }
}

void DcqcnRp::release() {
  rate_bps_ = target_bps_ = line_rate_bps_;
  next_rate_ps_ = kNever;
  bytes_counted_ = 0;
}

void DcqcnRp::on_cnp(int64_t now_ps) {
  if (cfg_ == nullptr) throw std::logic_error("DCQCN: on_cnp() on a reaction point without config");
  advance(now_ps);
  const DcqcnConfig& c = *cfg_;
  ++cnp_received_;
  const int64_t period = c.rate_reduce_monitor_period_ps;
  const bool now_due = period <= 0 || last_cut_ps_ < 0 || now_ps >= cut_due_ps();
  if (now_due) {
    cut(now_ps);  // with the alpha of this moment, then the alpha update (§3.1, equation 1)
  } else {
    cut_pending_ = true;  // the cut waits for the end of the period, with the alpha of then
  }
  alpha_at_cnp_ = std::min(1.0, (1.0 - c.g) * alpha_ + c.g);
  alpha_ = alpha_at_cnp_;
  last_cnp_ps_ = now_ps;
  next_alpha_ps_ = saturating_add(now_ps, c.alpha_timer_ps);
}

void DcqcnRp::cut(int64_t now_ps) {
  const DcqcnConfig& c = *cfg_;
  cut_pending_ = false;
  last_cut_ps_ = now_ps;
  // Rt = Rc: always in the paper. Otherwise only if the rate rose since the last cut: by the
  // byte counter (QCN's rule), or by the timer too with clamp_tgt_rate_after_time_inc. Cuts with
  // no increase between them keep Rt, the rate before the run of cuts.
  const bool raised = byte_stage_ > 0 || (c.clamp_target_rate_after_time_inc && timer_stage_ > 0);
  if (c.clamp_target_rate || raised) target_bps_ = rate_bps_;
  const double decrease = std::min(alpha_ / 2, c.max_decrease);
  const auto reduced =
      static_cast<int64_t>(std::llround(static_cast<double>(rate_bps_) * (1.0 - decrease)));
  const int64_t next = std::max(reduced, c.min_rate_bps);
  if (next < rate_bps_) {
    rate_bps_ = next;
    ++decreases_;
  }
  // The increase machinery starts over: both counters, the byte count and the rate timer.
  timer_stage_ = byte_stage_ = 0;
  bytes_counted_ = 0;
  next_rate_ps_ = saturating_add(now_ps, c.rate_timer_ps);
  if (rate_bps_ == line_rate_bps_) release();  // nothing was cut (alpha 0 or max_decrease 0)
}

}  // namespace fabricsim
