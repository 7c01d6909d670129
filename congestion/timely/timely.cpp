// TIMELY's rate computation (the algorithm is described in timely.hpp).
#include "congestion/timely/timely.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/core/units.hpp"

namespace fabricsim {

static_assert(sizeof(TimelyRp) <= 80, "TimelyRp lives in every queue pair: keep it small");

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("TIMELY: " + what);
}

}  // namespace

void validate_timely(const TimelyConfig& c, int64_t line_rate_bps) {
  if (c.t_low_ps <= 0) fail("t_low must be > 0 ps, got " + std::to_string(c.t_low_ps));
  if (c.t_high_ps < c.t_low_ps) {
    fail("t_high (" + std::to_string(c.t_high_ps) + " ps) is below t_low (" +
         std::to_string(c.t_low_ps) + " ps)");
  }
  if (c.min_rtt_ps <= 0) fail("min_rtt must be > 0 ps, got " + std::to_string(c.min_rtt_ps));
  if (!(c.alpha > 0.0 && c.alpha <= 1.0)) {
    fail("alpha must be in (0, 1], got " + std::to_string(c.alpha));
  }
  if (!(c.beta >= 0.0 && c.beta <= 1.0)) {
    fail("beta must be in [0, 1], got " + std::to_string(c.beta));
  }
  if (c.rai_bps < 0) fail("rai must be >= 0 bps, got " + std::to_string(c.rai_bps));
  if (c.rhai_bps < 0) fail("rhai must be >= 0 bps, got " + std::to_string(c.rhai_bps));
  if (c.hai_threshold < 0) {
    fail("hai_threshold must be >= 0, got " + std::to_string(c.hai_threshold));
  }
  if (c.min_rate_bps <= 0) {
    fail("min_rate must be > 0 bps, got " + std::to_string(c.min_rate_bps));
  }
  if (c.min_rate_bps > line_rate_bps) {
    fail("min_rate (" + format_rate(c.min_rate_bps) + ") exceeds the line rate (" +
         format_rate(line_rate_bps) + "): expected a floor at most the line rate");
  }
}

TimelyRp::TimelyRp(const TimelyConfig* cfg, int64_t line_rate_bps) {
  if (cfg == nullptr) fail("a sender needs a config");
  if (line_rate_bps <= 0) {
    fail("line rate must be > 0 bps, got " + std::to_string(line_rate_bps));
  }
  validate_timely(*cfg, line_rate_bps);
  cfg_ = cfg;
  line_rate_bps_ = rate_bps_ = line_rate_bps;
}

void TimelyRp::on_rtt(uint32_t acked_psn, uint32_t snd_nxt, int64_t rtt_ps) {
  if (cfg_ == nullptr) throw std::logic_error("TIMELY: an RTT sample reached an inert sender");
  if (rtt_ps < 0) fail("negative RTT sample " + std::to_string(rtt_ps) + " ps");
  ++samples_;
  // One rate computation per round trip: the ACK must cover data sent after the last one.
  if (have_prev_ && acked_psn <= last_update_psn_) return;
  if (have_prev_) update(rtt_ps);
  if (!have_prev_ || snd_nxt > last_update_psn_) {
    have_prev_ = true;
    last_update_psn_ = snd_nxt;
    prev_rtt_ps_ = rtt_ps;
  }
}

void TimelyRp::update(int64_t rtt_ps) {
  const TimelyConfig& c = *cfg_;
  ++updates_;
  const double new_diff = static_cast<double>(rtt_ps - prev_rtt_ps_);
  rtt_diff_ps_ = (1.0 - c.alpha) * rtt_diff_ps_ + c.alpha * new_diff;
  const double gradient = rtt_diff_ps_ / static_cast<double>(c.min_rtt_ps);
  double factor = 1.0;  // the decrease's multiplier
  bool increase = false;
  if (rtt_ps < c.t_low_ps) {
    increase = true;
  } else if (rtt_ps > c.t_high_ps) {
    factor = 1.0 - c.beta * (1.0 - static_cast<double>(c.t_high_ps) / static_cast<double>(rtt_ps));
  } else if (gradient <= 0.0) {
    increase = true;
  } else {
    factor = std::max(0.0, 1.0 - c.beta * gradient);
  }
  if (increase) {
    const bool hai = inc_stage_ >= c.hai_threshold;
    const int64_t step = hai ? c.rhai_bps : c.rai_bps;
    rate_bps_ = step > line_rate_bps_ - rate_bps_ ? line_rate_bps_ : rate_bps_ + step;
    if (inc_stage_ < INT32_MAX) ++inc_stage_;
    ++increases_;
    if (hai) ++hai_increases_;
  } else {
    // To the nearest bit/s: a product like 65 Gb/s x 0.60625 is not exact in binary.
    const int64_t cut = std::llround(static_cast<double>(rate_bps_) * factor);
    rate_bps_ = std::clamp(cut, c.min_rate_bps, line_rate_bps_);
    inc_stage_ = 0;
    ++decreases_;
  }
}

}  // namespace fabricsim
