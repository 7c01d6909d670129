// DCQCN (Zhu et al., SIGCOMM 2015, §3.1): the reaction point's rate cut, alpha timer, fast
// recovery, additive and hyper increase, byte counter and resets, checked against the paper's
// equations evaluated here; lazy timer evaluation against fine stepping and against an explicit
// event-by-event model on a seeded random schedule; the notification point's one CNP per N; the
// presets and the config checks (one SECTION per invalid value).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "congestion/dcqcn.hpp"
#include "sim/config/scenario.hpp"
#include "sim/core/rng.hpp"

using namespace fabricsim;

namespace {

constexpr int64_t kUs = 1'000'000;          // ps per us
constexpr int64_t kMs = 1'000 * kUs;        // ps per ms
constexpr int64_t kMbps = 1'000'000;        // bits/s per Mb/s
constexpr int64_t kLine = 100'000'000'000;  // 100 Gb/s
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

/// The paper preset with the given timers (ps); byte counter as given (0 = off).
DcqcnConfig paper_with(int64_t alpha_timer_ps, int64_t rate_timer_ps, int64_t byte_counter) {
  DcqcnConfig c = dcqcn_preset("paper");
  c.alpha_timer_ps = alpha_timer_ps;
  c.rate_timer_ps = rate_timer_ps;
  c.byte_counter_bytes = byte_counter;
  return c;
}

/// Rc after one increase event: the midpoint of Rc and Rt, rounded up (dcqcn.hpp).
int64_t midpoint(int64_t rc, int64_t rt) {
  return rc + (rt - rc + 1) / 2;
}

/// Everything observable of an RP, for exact comparisons.
struct Snapshot {
  int64_t rate, target, next_timer;
  double alpha;
  uint32_t cnps, decreases, fr, ai, hai, timer, bytes;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snap(const DcqcnRp& rp) {
  return {rp.rate_bps(),
          rp.target_bps(),
          rp.next_rate_timer_ps(),
          rp.alpha(),
          rp.cnp_received(),
          rp.decreases(),
          rp.fast_recovery_events(),
          rp.additive_increase_events(),
          rp.hyper_increase_events(),
          rp.timer_events(),
          rp.byte_counter_events()};
}

/// An explicit-event model of the same reaction point, written independently of DcqcnRp: the
/// alpha timer and the rate timer are events on a clock, run one at a time in time order, and
/// alpha decays by repeated multiplication. Used as the oracle for the lazy evaluation.
struct EventModel {
  EventModel(const DcqcnConfig& cfg, int64_t line) : c(cfg), line(line), rc(line), rt(line) {
    alpha = c.initial_alpha;
  }

  void run_until(int64_t t) {
    for (;;) {
      const int64_t cut_at = pending ? last_cut + c.rate_reduce_monitor_period_ps : kNever;
      const int64_t next = std::min({alpha_at, rate_at, cut_at});
      if (next > t) return;
      if (alpha_at == next) {
        alpha *= 1 - c.g;
        alpha_at += c.alpha_timer_ps;
      } else if (rate_at == next) {
        ++tc;
        rate_at += c.rate_timer_ps;
        event();
      } else {
        do_cut(next);  // a deferred cut, after the timers due at the same time
      }
    }
  }
  void event() {
    const int f = c.fast_recovery_steps;
    if (std::max(tc, bc) <= f) {
      // fast recovery: Rt unchanged
    } else if (std::min(tc, bc) <= f) {
      rt = std::min(line, rt + c.rai_bps);
    } else {
      rt = std::min(line, rt + (std::min(tc, bc) - f) * c.rhai_bps);
    }
    rc = midpoint(rc, rt);
    if (rc == line) {
      limited = false;
      rate_at = kNever;
      bytes = 0;
    }
  }
  void cnp(int64_t t) {
    run_until(t);
    // rate_reduce_monitor_period: within the period of the last cut, the cut waits for its end.
    if (c.rate_reduce_monitor_period_ps == 0 || last_cut < 0 ||
        t - last_cut >= c.rate_reduce_monitor_period_ps) {
      do_cut(t);
    } else {
      pending = true;
    }
    alpha = (1 - c.g) * alpha + c.g;
    alpha_at = t + c.alpha_timer_ps;
  }
  void do_cut(int64_t t) {
    // clamp_tgt_rate; else after a byte-counter increase (QCN), or a timer increase too
    // (clamp_tgt_rate_after_time_inc).
    if (c.clamp_target_rate || bc > 0 || (c.clamp_target_rate_after_time_inc && tc > 0)) rt = rc;
    const double cut = std::min(alpha / 2, c.max_decrease);
    rc = std::max(c.min_rate_bps, static_cast<int64_t>(std::llround(double(rc) * (1 - cut))));
    tc = bc = 0;
    bytes = 0;
    limited = rc < line;
    rate_at = limited ? t + c.rate_timer_ps : kNever;
    last_cut = t;
    pending = false;
  }
  void sent(int64_t n, int64_t t) {
    run_until(t);
    if (!limited || c.byte_counter_bytes == 0) return;
    bytes += n;
    while (limited && bytes >= c.byte_counter_bytes) {
      bytes -= c.byte_counter_bytes;
      ++bc;
      event();
    }
  }

  const DcqcnConfig& c;
  int64_t line, rc, rt;
  double alpha;
  int64_t alpha_at = kNever, rate_at = kNever, bytes = 0, last_cut = -1;
  int tc = 0, bc = 0;
  bool limited = false, pending = false;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Rate decrease and alpha (paper §3.1, equations 1 and 2)

TEST_CASE("One CNP at line rate with alpha = 1 halves the rate and sets Rt to the old rate",
          "[dcqcn]") {
  const DcqcnConfig c = dcqcn_preset("paper");
  DcqcnRp rp(&c, kLine, 0);
  CHECK(rp.at_line_rate());
  CHECK(rp.rate_bps() == kLine);
  CHECK(rp.alpha() == 1.0);
  CHECK(rp.next_rate_timer_ps() == kNever);  // no timer before the first CNP

  rp.on_cnp(7 * kUs);
  CHECK(rp.rate_bps() == kLine / 2);
  CHECK(rp.target_bps() == kLine);
  CHECK(rp.alpha() == 1.0);  // (1 - g) 1 + g
  CHECK_FALSE(rp.at_line_rate());
  CHECK(rp.cnp_received() == 1);
  CHECK(rp.decreases() == 1);
  CHECK(rp.next_rate_timer_ps() == 7 * kUs + c.rate_timer_ps);
}

TEST_CASE("Alpha: (1-g) a + g at a CNP, then a (1-g)^n after n quiet K periods", "[dcqcn]") {
  DcqcnConfig c = paper_with(55 * kUs, 10 * kMs, 0);
  c.initial_alpha = 0.5;
  const double g = c.g;
  DcqcnRp rp(&c, kLine, 0);
  rp.advance(3 * kMs);
  CHECK(rp.alpha() == 0.5);  // no alpha timer before the first CNP

  const int64_t t0 = 3 * kMs;
  rp.on_cnp(t0);
  const double a = (1 - g) * 0.5 + g;
  CHECK(rp.alpha() == Approx(a).epsilon(1e-15));
  CHECK(rp.rate_bps() == kLine * 3 / 4);  // cut by alpha / 2 = 1/4 with the alpha before it

  auto decayed = [&](int n) {  // a (1 - g)^n by repeated multiplication
    double x = a;
    for (int i = 0; i < n; ++i) x *= 1 - g;
    return x;
  };
  for (int n : {1, 2, 3, 10, 100, 1000, 5000}) {
    rp.advance(t0 + n * c.alpha_timer_ps - 1);  // one picosecond before the n-th expiry
    CHECK(rp.alpha() == Approx(decayed(n - 1)).epsilon(1e-12));
    rp.advance(t0 + n * c.alpha_timer_ps);  // the expiry itself is applied
    CHECK(rp.alpha() == Approx(decayed(n)).epsilon(1e-12));
  }
}

TEST_CASE("A later CNP cuts with the decayed alpha", "[dcqcn]") {
  const DcqcnConfig c = paper_with(55 * kUs, 1'000 * kMs, 0);  // no rate increase in between
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);  // alpha 1 -> 1, Rc = 50 G
  const int64_t rc0 = rp.rate_bps();
  rp.advance(3 * c.alpha_timer_ps + 5);
  const double alpha3 = std::pow(1 - c.g, 3);
  CHECK(rp.alpha() == Approx(alpha3).epsilon(1e-12));

  rp.on_cnp(3 * c.alpha_timer_ps + 5);
  CHECK(rp.target_bps() == rc0);
  CHECK(double(rp.rate_bps()) == Approx(double(rc0) * (1 - alpha3 / 2)).margin(1));
  CHECK(rp.alpha() == Approx((1 - c.g) * alpha3 + c.g).epsilon(1e-12));
  CHECK(rp.decreases() == 2);
}

TEST_CASE("max_decrease bounds one cut", "[dcqcn]") {
  DcqcnConfig c = dcqcn_preset("paper");
  c.max_decrease = 0.25;
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);  // alpha / 2 = 0.5 > 0.25
  CHECK(rp.rate_bps() == kLine * 3 / 4);

  c.max_decrease = 0.0;  // a NIC that never cuts (rpg_min_dec_fac = 100 %)
  DcqcnRp never(&c, kLine, 0);
  never.on_cnp(0);
  CHECK(never.rate_bps() == kLine);
  CHECK(never.at_line_rate());
  CHECK(never.decreases() == 0);
  CHECK(never.next_rate_timer_ps() == kNever);
}

// ---------------------------------------------------------------------------------------------
// Rate increase (paper §3.1, equations 3 and 4; QCN's hyper increase)

TEST_CASE("Fast recovery: after k timer events Rc = Rt - (Rt - Rc0) / 2^k, Rt fixed", "[dcqcn]") {
  const DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 0);
  DcqcnRp rp(&c, kLine, 0);
  const int64_t t0 = 1 * kUs;
  rp.on_cnp(t0);
  const int64_t rt = rp.target_bps();
  const int64_t rc0 = rp.rate_bps();
  REQUIRE(rt - rc0 == 50'000'000'000);  // divisible by 2^5: the closed form is exact
  for (int k = 1; k <= c.fast_recovery_steps; ++k) {
    rp.advance(t0 + k * c.rate_timer_ps - 1);
    CHECK(rp.timer_events() == uint32_t(k - 1));
    rp.advance(t0 + k * c.rate_timer_ps);
    CHECK(rp.timer_events() == uint32_t(k));
    CHECK(rp.fast_recovery_events() == uint32_t(k));
    CHECK(rp.target_bps() == rt);
    CHECK(double(rp.rate_bps()) == double(rt) - double(rt - rc0) / std::pow(2.0, k));
  }
  CHECK(rp.additive_increase_events() == 0);
}

TEST_CASE("Fast recovery with integer rounding reaches Rt exactly", "[dcqcn]") {
  DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 0);
  c.fast_recovery_steps = 64;  // long enough to close any gap
  DcqcnRp rp(&c, 99'999'999'999, 0);
  rp.on_cnp(0);
  const int64_t rt = rp.target_bps();
  const int64_t d0 = rt - rp.rate_bps();
  for (int k = 1; k <= 40; ++k) {
    rp.advance(k * c.rate_timer_ps);
    if (rp.at_line_rate()) break;
    CHECK(rp.rate_bps() == rt - (d0 >> k));  // Rt - floor(d0 / 2^k)
  }
  CHECK(rp.at_line_rate());  // ~37 halvings of a 5e10 gap
  CHECK(rp.next_rate_timer_ps() == kNever);
}

TEST_CASE("Additive then hyper increase once the counters pass F", "[dcqcn]") {
  const int64_t b = 1'000'000;
  const DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, b);
  const int f = c.fast_recovery_steps;
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);
  rp.on_cnp(1);  // Rt = 50 G, Rc = 25 G: room for Rt to grow
  int64_t rt = rp.target_bps();
  int64_t rc = rp.rate_bps();
  REQUIRE(rt == kLine / 2);
  REQUIRE(rc == kLine / 4);

  // F + 1 byte-counter events at once: F fast recovery, then additive (bc = F + 1, tc = 0).
  rp.on_bytes_sent((f + 1) * b, 2);
  for (int i = 0; i < f; ++i) rc = midpoint(rc, rt);
  rt += c.rai_bps;
  rc = midpoint(rc, rt);
  CHECK(rp.byte_counter_events() == uint32_t(f + 1));
  CHECK(rp.fast_recovery_events() == uint32_t(f));
  CHECK(rp.additive_increase_events() == 1);
  CHECK(rp.target_bps() == rt);
  CHECK(rp.rate_bps() == rc);

  // Timer events tc = 1 … F: one counter (bc) above F, the other not: additive.
  for (int k = 1; k <= f; ++k) {
    rp.advance(1 + k * c.rate_timer_ps);
    rt += c.rai_bps;
    rc = midpoint(rc, rt);
    CHECK(rp.target_bps() == rt);
    CHECK(rp.rate_bps() == rc);
  }
  CHECK(rp.additive_increase_events() == uint32_t(1 + f));
  CHECK(rp.hyper_increase_events() == 0);

  // tc = F + 1 and F + 2 with bc = F + 1: both above F, i = min(tc, bc) - F = 1.
  for (int k = f + 1; k <= f + 2; ++k) {
    rp.advance(1 + k * c.rate_timer_ps);
    rt += 1 * c.rhai_bps;
    rc = midpoint(rc, rt);
    CHECK(rp.target_bps() == rt);
    CHECK(rp.rate_bps() == rc);
  }
  // One more byte event: bc = F + 2, tc = F + 2, i = 2.
  rp.on_bytes_sent(b, 1 + (f + 2) * c.rate_timer_ps + 10);
  rt += 2 * c.rhai_bps;
  rc = midpoint(rc, rt);
  CHECK(rp.target_bps() == rt);
  CHECK(rp.rate_bps() == rc);
  CHECK(rp.hyper_increase_events() == 3);
  CHECK(rp.target_bps() == kLine / 2 + (1 + f) * c.rai_bps + 4 * c.rhai_bps);
}

TEST_CASE("With the timer alone there is no hyper increase", "[dcqcn]") {
  const DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 0);  // no byte counter
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);
  rp.on_cnp(1);
  const int64_t rt0 = rp.target_bps();
  rp.advance(1 + 50 * c.rate_timer_ps);
  CHECK(rp.fast_recovery_events() == uint32_t(c.fast_recovery_steps));
  CHECK(rp.additive_increase_events() == uint32_t(50 - c.fast_recovery_steps));
  CHECK(rp.hyper_increase_events() == 0);
  CHECK(rp.target_bps() == rt0 + (50 - c.fast_recovery_steps) * c.rai_bps);
}

TEST_CASE("The byte counter makes one increase event per B bytes sent after a CNP", "[dcqcn]") {
  const int64_t b = 64'000;
  const DcqcnConfig c = paper_with(55 * kUs, 1'000 * kMs, b);  // timer out of the way
  DcqcnRp rp(&c, kLine, 0);

  rp.on_bytes_sent(10 * b, 1);  // at line rate: the limiter is released, nothing counted
  CHECK(rp.byte_counter_events() == 0);

  rp.on_cnp(2);
  const int64_t rt = rp.target_bps();
  int64_t rc = rp.rate_bps();
  rp.on_bytes_sent(b - 1, 3);
  CHECK(rp.byte_counter_events() == 0);
  rp.on_bytes_sent(1, 4);
  CHECK(rp.byte_counter_events() == 1);
  rc = midpoint(rc, rt);
  CHECK(rp.rate_bps() == rc);
  rp.on_bytes_sent(3 * b + b / 2, 5);  // three events, half a B carried over
  CHECK(rp.byte_counter_events() == 4);
  rp.on_bytes_sent(b / 2, 6);
  CHECK(rp.byte_counter_events() == 5);
  rp.on_bytes_sent(0, 7);
  CHECK(rp.byte_counter_events() == 5);

  // A CNP clears the count: half a B before it and half after make no event.
  rp.on_bytes_sent(b / 2, 8);
  rp.on_cnp(9);
  rp.on_bytes_sent(b / 2, 10);
  CHECK(rp.byte_counter_events() == 5);
  rp.on_bytes_sent(b / 2, 11);
  CHECK(rp.byte_counter_events() == 6);
  CHECK(rp.timer_events() == 0);
}

TEST_CASE("A CNP restarts the rate timer, the alpha timer and both counters", "[dcqcn]") {
  const int64_t k = 40 * kUs;
  const int64_t t = 55 * kUs;
  const DcqcnConfig c = paper_with(k, t, 0);
  DcqcnRp rp(&c, kLine, 0);
  const int64_t t0 = 10 * kUs;
  rp.on_cnp(t0);
  rp.advance(t0 + 3 * t + t / 2);
  CHECK(rp.timer_events() == 3);
  CHECK(rp.fast_recovery_events() == 3);

  const int64_t t1 = t0 + 3 * t + t / 2;
  const int64_t rc_before = rp.rate_bps();
  rp.on_cnp(t1);
  const double alpha1 = rp.alpha();
  CHECK(rp.target_bps() == rc_before);
  CHECK(rp.next_rate_timer_ps() == t1 + t);

  // Old schedules: rate timer at t0 + 4T, alpha timer at t0 + 5K; both before t1 + K.
  REQUIRE(t0 + 5 * k < t0 + 4 * t);
  REQUIRE(t0 + 4 * t < t1 + k);
  rp.advance(t0 + 4 * t);
  CHECK(rp.timer_events() == 3);
  CHECK(rp.alpha() == alpha1);
  rp.advance(t1 + t - 1);
  CHECK(rp.timer_events() == 3);
  rp.advance(t1 + t);
  CHECK(rp.timer_events() == 4);
  CHECK(rp.fast_recovery_events() == 4);  // counters restarted: fast recovery again
  CHECK(rp.target_bps() == rc_before);
  CHECK(rp.alpha() == Approx(alpha1 * (1 - c.g)).epsilon(1e-15));  // one decay, at t1 + K
}

TEST_CASE("A CNP restarts the alpha timer", "[dcqcn]") {
  const int64_t k = 55 * kUs;
  const DcqcnConfig c = paper_with(k, 1'000 * kMs, 0);
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);
  rp.advance(k / 2);
  rp.on_cnp(k / 2);
  const double a = rp.alpha();
  rp.advance(k);  // would be the first expiry without the second CNP
  CHECK(rp.alpha() == a);
  rp.advance(k / 2 + k - 1);
  CHECK(rp.alpha() == a);
  rp.advance(k / 2 + k);
  CHECK(rp.alpha() == Approx(a * (1 - c.g)).epsilon(1e-15));
}

// ---------------------------------------------------------------------------------------------
// ConnectX firmware's clamping and rate reduce monitor period (NVIDIA "DCQCN Parameters":
// clamp_tgt_rate, clamp_tgt_rate_after_time_inc, rate_reduce_monitor_period; the same
// semantics as RdmaHw::CheckRateDecreaseMlx in the HPCC authors' ns-3 model)

TEST_CASE("Without clamping, cuts keep Rt and fast recovery returns toward the rate before them",
          "[dcqcn][clamp]") {
  DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 0);
  c.clamp_target_rate = false;
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);         // alpha 1: Rc 100 -> 50 Gb/s
  rp.on_cnp(10 * kUs);  // no increase in between: Rt stays at the line rate
  CHECK(rp.target_bps() == kLine);
  const int64_t after_two = rp.rate_bps();
  CHECK(after_two < kLine / 2);
  rp.advance(10 * kUs + c.rate_timer_ps);  // one fast-recovery event: halfway to Rt = 100 Gb/s
  CHECK(rp.rate_bps() == midpoint(after_two, kLine));
  // The rate rose since the last cut: the next cut sets Rt = Rc.
  const int64_t before = rp.rate_bps();
  rp.on_cnp(10 * kUs + c.rate_timer_ps + 1);
  CHECK(rp.target_bps() == before);

  SECTION("the paper's clamping sets Rt = Rc at every cut") {
    DcqcnConfig p = paper_with(55 * kUs, 55 * kUs, 0);
    DcqcnRp q(&p, kLine, 0);
    q.on_cnp(0);
    const int64_t rc1 = q.rate_bps();
    q.on_cnp(10 * kUs);
    CHECK(q.target_bps() == rc1);
  }
}

TEST_CASE("Without clamp_tgt_rate_after_time_inc only a byte-counter increase clamps (QCN's rule)",
          "[dcqcn][clamp]") {
  DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 10'000);
  c.clamp_target_rate = false;
  for (const bool after_time_inc : {true, false}) {
    c.clamp_target_rate_after_time_inc = after_time_inc;
    DcqcnRp rp(&c, kLine, 0);
    rp.on_cnp(0);
    rp.advance(c.rate_timer_ps);  // one timer event, no byte-counter event
    REQUIRE(rp.timer_events() == 1);
    const int64_t rc = rp.rate_bps();
    rp.on_cnp(c.rate_timer_ps + 1);
    CHECK(rp.target_bps() == (after_time_inc ? rc : kLine));
    // A byte-counter increase clamps the next cut either way.
    rp.on_bytes_sent(10'000, c.rate_timer_ps + 2);
    REQUIRE(rp.byte_counter_events() == 1);
    const int64_t rc2 = rp.rate_bps();
    rp.on_cnp(c.rate_timer_ps + 3);
    CHECK(rp.target_bps() == rc2);
  }
}

TEST_CASE("rate_reduce_monitor_period: at most one cut per period, a CNP within it cut at its end",
          "[dcqcn][monitor]") {
  DcqcnConfig c = dcqcn_preset("connectx");
  DcqcnRp rp(&c, kLine, 0);
  rp.on_cnp(0);  // cuts now: alpha 1023/1024
  const int64_t r1 = static_cast<int64_t>(std::llround(double(kLine) * (1 - (1023.0 / 1024) / 2)));
  CHECK(rp.rate_bps() == r1);
  rp.on_cnp(1 * kUs);  // within 4 us of the cut: alpha updates, the rate waits
  rp.on_cnp(3 * kUs);
  CHECK(rp.rate_bps() == r1);
  CHECK(rp.decreases() == 1);
  CHECK(rp.cut_pending());
  CHECK(rp.next_rate_timer_ps() == 4 * kUs);  // the NIC wakes a paced QP then
  // At 4 us one cut, with the alpha of that moment: (1 - g) a + g at each CNP (0, 1, 3 us),
  // (1 - g) at each quiet K (1 us) in between: 1 before 1 us, 2 before 3 us, 1 before 4 us.
  const double g = c.g;
  double a = 1023.0 / 1024;
  for (const int quiet_before_next : {1, 2, 1}) {
    a = (1 - g) * a + g;
    for (int k = 0; k < quiet_before_next; ++k) a *= 1 - g;
  }
  rp.advance(4 * kUs);
  CHECK(rp.decreases() == 2);
  CHECK_FALSE(rp.cut_pending());
  CHECK(rp.rate_bps() == static_cast<int64_t>(std::llround(double(r1) * (1 - a / 2))));
  // A CNP a full period after the last cut cuts on arrival.
  rp.on_cnp(8 * kUs);
  CHECK(rp.decreases() == 3);

  SECTION("a cut waiting at the line rate keeps the QP counted and paced") {
    DcqcnConfig q = paper_with(55 * kUs, 55 * kUs, 1'000);
    q.rate_reduce_monitor_period_ps = 50 * kUs;
    q.fast_recovery_steps = 1;
    q.rhai_bps = kLine;  // back to line rate in a few byte-counter events
    DcqcnRp p(&q, kLine, 0);
    p.on_cnp(0);
    for (int64_t t = 1; !p.at_line_rate(); ++t) p.on_bytes_sent(1'000, t * kUs / 10);
    REQUIRE(p.now_ps() < 20 * kUs);
    REQUIRE(p.rate_bps() == kLine);
    p.on_cnp(20 * kUs);  // within the period: nothing changes yet
    CHECK(p.rate_bps() == kLine);
    CHECK_FALSE(p.at_line_rate());  // but the NIC keeps calling, so the cut lands at 50 us
    CHECK(p.next_rate_timer_ps() == 50 * kUs);
    p.on_bytes_sent(1'000, 51 * kUs);
    CHECK(p.rate_bps() < kLine);
    CHECK(p.decreases() == 2);
  }
}

TEST_CASE("The rate stays in [min_rate, line rate] — at line rate the increase stops", "[dcqcn]") {
  const DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 0);
  DcqcnRp rp(&c, kLine, 0);
  // A CNP every microsecond for 2 ms: the rate falls to the floor and stays there.
  int64_t now = 0;
  for (; now < 2 * kMs; now += kUs) {
    rp.on_cnp(now);
    CHECK(rp.rate_bps() >= c.min_rate_bps);
  }
  CHECK(rp.rate_bps() == c.min_rate_bps);
  const uint32_t decreases = rp.decreases();
  CHECK(decreases < rp.cnp_received());  // CNPs at the floor cut nothing
  rp.on_cnp(now);
  CHECK(rp.decreases() == decreases);

  // Quiet: timer-only recovery, fast recovery to Rt = min_rate, then R_AI per T up to line.
  int64_t last = rp.rate_bps();
  while (!rp.at_line_rate()) {
    now += c.rate_timer_ps;
    rp.advance(now);
    CHECK(rp.rate_bps() >= last);
    CHECK(rp.rate_bps() <= rp.target_bps());
    CHECK(rp.target_bps() <= kLine);
    last = rp.rate_bps();
    REQUIRE(now < 2'000 * kMs);
  }
  CHECK(rp.rate_bps() == kLine);
  CHECK(rp.target_bps() == kLine);
  CHECK(rp.next_rate_timer_ps() == kNever);
  // AI steps of 40 Mb/s from 10 Mb/s: about (100 G - 10 M) / 40 M = 2500 timer events.
  CHECK(rp.timer_events() > 2'400);
  CHECK(rp.timer_events() < 2'600);
  const uint32_t events = rp.timer_events();
  rp.advance(now + 1'000 * kMs);
  rp.on_bytes_sent(1'000'000'000, now + 1'000 * kMs);
  CHECK(rp.timer_events() == events);
  CHECK(rp.byte_counter_events() == 0);
  CHECK(rp.at_line_rate());
}

TEST_CASE("The floor and the target cap hold with large hyper steps", "[dcqcn]") {
  DcqcnConfig c = paper_with(55 * kUs, 5 * kUs, 1'000);
  c.rhai_bps = 30'000'000'000;  // 30 G per hyper step: overshoots the line at once
  c.min_rate_bps = 1'000'000'000;
  DcqcnRp rp(&c, kLine, 0);
  for (int i = 0; i < 40; ++i) rp.on_cnp(i);
  CHECK(rp.rate_bps() == c.min_rate_bps);
  int64_t now = 100;
  for (int i = 0; i < 200 && !rp.at_line_rate(); ++i) {
    now += kUs;
    rp.on_bytes_sent(2'000, now);
    CHECK(rp.target_bps() <= kLine);
    CHECK(rp.rate_bps() <= rp.target_bps());
  }
  CHECK(rp.hyper_increase_events() > 0);
  CHECK(rp.at_line_rate());
}

// ---------------------------------------------------------------------------------------------
// Lazy evaluation

namespace {

/// Runs a seeded random schedule of CNPs, sends and queries on three reaction points: one that
/// only sees the schedule (lazy), one also advanced at random instants and at every rate-timer
/// expiry in between (stepped), and the explicit-event model. Lazy and stepped must agree bit
/// for bit; the event model to rounding.
void check_schedule(const DcqcnConfig& c, int64_t line, uint64_t seed, int ops) {
  RngStream rng(seed, "test.dcqcn.schedule");
  DcqcnRp lazy(&c, line, 0);
  DcqcnRp stepped(&c, line, 0);
  EventModel model(c, line);
  int64_t now = 0;
  int cnps = 0;
  for (int op = 0; op < ops; ++op) {
    // Gaps: mostly short, sometimes long enough for a full recovery.
    const uint64_t kind = rng.next() % 100;
    const int64_t gap = kind < 2 ? static_cast<int64_t>(rng.next() % (200 * kMs))
                                 : static_cast<int64_t>(rng.next() % (20 * kUs));
    const int64_t next = now + gap;
    for (int s = static_cast<int>(rng.next() % 4); s > 0; --s) {
      const int64_t at = now + static_cast<int64_t>(rng.uniform01() * double(next - now));
      stepped.advance(std::max(at, stepped.now_ps()));
    }
    while (stepped.next_rate_timer_ps() <= next) stepped.advance(stepped.next_rate_timer_ps());
    now = next;

    const uint64_t what = rng.next() % 100;
    if (what < 8) {
      lazy.on_cnp(now);
      stepped.on_cnp(now);
      model.cnp(now);
      ++cnps;
    } else if (what < 95) {
      const auto bytes = static_cast<int64_t>(64 + rng.next() % 9'000);
      lazy.on_bytes_sent(bytes, now);
      stepped.on_bytes_sent(bytes, now);
      model.sent(bytes, now);
    } else {
      lazy.advance(now);
      stepped.advance(now);
      model.run_until(now);
    }
    INFO("seed " << seed << ", op " << op << ", t = " << now << " ps");
    REQUIRE(snap(lazy) == snap(stepped));
    REQUIRE(double(lazy.rate_bps()) == Approx(double(model.rc)).epsilon(1e-9));
    REQUIRE(double(lazy.target_bps()) == Approx(double(model.rt)).epsilon(1e-9));
    REQUIRE(lazy.alpha() == Approx(model.alpha).epsilon(1e-9).margin(1e-300));
    REQUIRE(lazy.rate_bps() >= c.min_rate_bps);
    REQUIRE(lazy.rate_bps() <= lazy.target_bps());
    REQUIRE(lazy.target_bps() <= line);
  }
  CHECK(cnps > 0);
  CHECK(lazy.fast_recovery_events() > 0);
  CHECK(lazy.additive_increase_events() > 0);
}

}  // namespace

TEST_CASE("advance() lazily == advancing in small steps == an explicit event model",
          "[dcqcn][property]") {
  SECTION("paper timers, a small byte counter so that both counters pass F") {
    DcqcnConfig c = paper_with(55 * kUs, 55 * kUs, 100'000);
    check_schedule(c, kLine, 1, 4'000);
    check_schedule(c, 400'000'000'000, 2, 4'000);
  }
  SECTION("paper preset") {
    check_schedule(dcqcn_preset("paper"), kLine, 3, 4'000);
  }
  SECTION("connectx preset") {
    check_schedule(dcqcn_preset("connectx"), kLine, 4, 4'000);
    check_schedule(dcqcn_preset("connectx"), 400'000'000'000, 5, 4'000);
  }
}

TEST_CASE("Hyper increase shows up in the random schedule", "[dcqcn][property]") {
  DcqcnConfig c = paper_with(55 * kUs, 20 * kUs, 20'000);
  c.fast_recovery_steps = 2;
  RngStream rng(9, "test.dcqcn.hyper");
  DcqcnRp rp(&c, kLine, 0);
  int64_t now = 0;
  for (int i = 0; i < 20'000; ++i) {
    now += static_cast<int64_t>(rng.next() % (2 * kUs));
    if (rng.next() % 500 == 0) {
      rp.on_cnp(now);
    } else {
      rp.on_bytes_sent(4'096, now);
    }
  }
  CHECK(rp.hyper_increase_events() > 0);
}

// ---------------------------------------------------------------------------------------------
// Notification point

TEST_CASE("The NP sends at most one CNP per flow per N", "[dcqcn][np]") {
  const int64_t n = 50 * kUs;
  int64_t last = -1;
  CHECK(dcqcn_cnp_due(last, 0, n));  // the first marked packet always gets a CNP
  CHECK(last == 0);
  CHECK_FALSE(dcqcn_cnp_due(last, 1, n));
  CHECK_FALSE(dcqcn_cnp_due(last, n - 1, n));
  CHECK(last == 0);  // unchanged when refused
  CHECK(dcqcn_cnp_due(last, n, n));
  CHECK(last == n);

  // A marked packet every microsecond for 1 ms: CNPs at 0, 50, …, 950 us.
  last = -1;
  std::vector<int64_t> sent;
  for (int64_t t = 0; t < 1'000 * kUs; t += kUs) {
    if (dcqcn_cnp_due(last, t, n)) sent.push_back(t);
  }
  REQUIRE(sent.size() == 20);
  for (size_t i = 0; i < sent.size(); ++i) CHECK(sent[i] == int64_t(i) * n);

  // Irregular arrivals: any two CNPs at least N apart.
  last = -1;
  RngStream rng(11, "test.dcqcn.np");
  int64_t t = 0, prev = -n;
  for (int i = 0; i < 10'000; ++i) {
    t += static_cast<int64_t>(rng.next() % (30 * kUs));
    if (dcqcn_cnp_due(last, t, n)) {
      CHECK(t - prev >= n);
      prev = t;
    }
  }

  last = 5;
  CHECK(dcqcn_cnp_due(last, 5, 0));  // N = 0: every marked packet
}

// ---------------------------------------------------------------------------------------------
// Presets

TEST_CASE("Presets: paper and connectx values as cited", "[dcqcn][preset]") {
  const DcqcnConfig p = dcqcn_preset("paper");
  CHECK(p.preset == "paper");
  CHECK_FALSE(p.enabled);  // the preset fills parameters; enabling is the scenario's choice
  CHECK(p.g == 1.0 / 256);
  CHECK(p.initial_alpha == 1.0);
  CHECK(p.alpha_timer_ps == 55 * kUs);
  CHECK(p.rate_timer_ps == 55 * kUs);
  CHECK(p.byte_counter_bytes == 10'000'000);
  CHECK(p.fast_recovery_steps == 5);
  CHECK(p.rai_bps == 40 * kMbps);
  CHECK(p.rhai_bps == 400 * kMbps);
  CHECK(p.min_rate_bps == 10 * kMbps);
  CHECK(p.max_decrease == 0.5);
  CHECK(p.cnp_interval_ps == 50 * kUs);
  CHECK(p.cnp_traffic_class == 6);
  CHECK(p.clamp_target_rate);  // §3.1: Rt = Rc at every cut
  CHECK(p.rate_reduce_monitor_period_ps == 0);

  const DcqcnConfig x = dcqcn_preset("connectx");
  CHECK(x.preset == "connectx");
  CHECK(x.g == 5.0 / 1024);  // dce_tcp_g 1019
  CHECK(x.initial_alpha == 1023.0 / 1024);
  CHECK(x.alpha_timer_ps == 1 * kUs);
  CHECK(x.rate_timer_ps == 300 * kUs);
  CHECK(x.byte_counter_bytes == 32'767);
  CHECK(x.fast_recovery_steps == 1);
  CHECK(x.rai_bps == 5 * kMbps);
  CHECK(x.rhai_bps == 50 * kMbps);
  CHECK(x.min_rate_bps == 1 * kMbps);
  CHECK(x.max_decrease == 0.5);
  CHECK(x.cnp_interval_ps == 4 * kUs);
  CHECK(x.cnp_traffic_class == 6);
  CHECK_FALSE(x.clamp_target_rate);           // clamp_tgt_rate 0
  CHECK(x.clamp_target_rate_after_time_inc);  // clamp_tgt_rate_after_time_inc 1
  CHECK(x.rate_reduce_monitor_period_ps == 4 * kUs);

  // They differ where the sources differ, and both pass the checks at a 1 Gb/s port and up.
  CHECK(x.g != p.g);
  CHECK(x.rate_timer_ps != p.rate_timer_ps);
  CHECK(x.byte_counter_bytes != p.byte_counter_bytes);
  CHECK(x.cnp_interval_ps != p.cnp_interval_ps);
  CHECK_NOTHROW(validate_dcqcn(p, 1'000'000'000));
  CHECK_NOTHROW(validate_dcqcn(x, 1'000'000'000));
}

TEST_CASE("DcqcnConfig's defaults are the paper preset", "[dcqcn][preset]") {
  const DcqcnConfig d;
  const DcqcnConfig p = dcqcn_preset("paper");
  CHECK(d.preset == p.preset);
  CHECK(d.g == p.g);
  CHECK(d.initial_alpha == p.initial_alpha);
  CHECK(d.alpha_timer_ps == p.alpha_timer_ps);
  CHECK(d.rate_timer_ps == p.rate_timer_ps);
  CHECK(d.byte_counter_bytes == p.byte_counter_bytes);
  CHECK(d.fast_recovery_steps == p.fast_recovery_steps);
  CHECK(d.rai_bps == p.rai_bps);
  CHECK(d.rhai_bps == p.rhai_bps);
  CHECK(d.min_rate_bps == p.min_rate_bps);
  CHECK(d.max_decrease == p.max_decrease);
  CHECK(d.cnp_interval_ps == p.cnp_interval_ps);
  CHECK(d.cnp_traffic_class == p.cnp_traffic_class);
}

TEST_CASE("An unknown preset is rejected by name", "[dcqcn][preset]") {
  for (const char* name : {"Paper", "", "mellanox", "connectx "}) {
    try {
      dcqcn_preset(name);
      FAIL("no exception for '" << name << "'");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()) ==
            "unknown DCQCN preset '" + std::string(name) + "' (expected paper or connectx)");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Invalid input

TEST_CASE("Invalid configs and calls are rejected", "[dcqcn][errors]") {
  DcqcnConfig c = dcqcn_preset("paper");
  auto rejects = [&](const std::string& fragment) {
    try {
      DcqcnRp rp(&c, kLine, 0);
      FAIL("accepted; expected an error mentioning '" << fragment << "'");
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains(fragment));
    }
  };
  SECTION("g = 0") {
    c.g = 0;
    rejects("g must be in (0, 1]");
  }
  SECTION("g > 1") {
    c.g = 1.5;
    rejects("g must be in (0, 1]");
  }
  SECTION("g NaN") {
    c.g = std::nan("");
    rejects("g must be in (0, 1]");
  }
  SECTION("initial_alpha > 1") {
    c.initial_alpha = 1.01;
    rejects("initial_alpha");
  }
  SECTION("initial_alpha < 0") {
    c.initial_alpha = -0.1;
    rejects("initial_alpha");
  }
  SECTION("alpha_timer 0") {
    c.alpha_timer_ps = 0;
    rejects("alpha_timer must be > 0");
  }
  SECTION("rate_timer negative") {
    c.rate_timer_ps = -1;
    rejects("rate_timer must be > 0");
  }
  SECTION("byte_counter negative") {
    c.byte_counter_bytes = -1;
    rejects("byte_counter");
  }
  SECTION("fast_recovery_steps negative") {
    c.fast_recovery_steps = -1;
    rejects("fast_recovery_steps");
  }
  SECTION("rai negative") {
    c.rai_bps = -1;
    rejects("rai must be");
  }
  SECTION("rhai negative") {
    c.rhai_bps = -1;
    rejects("rhai must be");
  }
  SECTION("min_rate 0") {
    c.min_rate_bps = 0;
    rejects("min_rate must be > 0");
  }
  SECTION("min_rate above the line rate") {
    c.min_rate_bps = kLine + 1;
    rejects("exceeds the line rate");
  }
  SECTION("max_decrease > 1") {
    c.max_decrease = 1.5;
    rejects("max_decrease");
  }
  SECTION("cnp_interval negative") {
    c.cnp_interval_ps = -1;
    rejects("cnp_interval");
  }
  SECTION("cnp_traffic_class 8") {
    c.cnp_traffic_class = 8;
    rejects("cnp_traffic_class");
  }
  SECTION("no config") {
    CHECK_THROWS_AS(DcqcnRp(nullptr, kLine, 0), std::invalid_argument);
  }
  SECTION("line rate 0") {
    CHECK_THROWS_AS(DcqcnRp(&c, 0, 0), std::invalid_argument);
  }
  SECTION("negative start time") {
    CHECK_THROWS_AS(DcqcnRp(&c, kLine, -1), std::invalid_argument);
  }
  SECTION("time going backwards") {
    DcqcnRp rp(&c, kLine, 100);
    CHECK_THROWS_WITH(rp.advance(99), Catch::Contains("time went backwards"));
    rp.on_cnp(200);
    CHECK_THROWS_AS(rp.on_cnp(150), std::invalid_argument);
    CHECK_THROWS_AS(rp.on_bytes_sent(100, 150), std::invalid_argument);
    CHECK(rp.cnp_received() == 1);
  }
  SECTION("negative bytes") {
    DcqcnRp rp(&c, kLine, 0);
    CHECK_THROWS_AS(rp.on_bytes_sent(-1, 0), std::invalid_argument);  // at line rate too
    rp.on_cnp(1);
    CHECK_THROWS_AS(rp.on_bytes_sent(-1, 2), std::invalid_argument);
  }
  SECTION("an inert reaction point") {
    DcqcnRp rp;
    rp.advance(1'000);
    rp.on_bytes_sent(1'000, 2'000);
    CHECK(rp.rate_bps() == 0);
    CHECK(rp.next_rate_timer_ps() == kNever);
    CHECK_THROWS_AS(rp.on_cnp(3'000), std::logic_error);
  }
}
