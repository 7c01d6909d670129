// The lossless and congestion sections' parameters: `ecn:` (EcnConfig), `pfc:` (PfcConfig),
// `dcqcn:` (DcqcnConfig), `infiniband:` (InfinibandConfig) and their per-switch overrides
// (`switches:`), with each one's validation: PFC thresholds and headroom, ECN thresholds against
// what a queue can hold, DCQCN's need for ECN marks, and the warnings for PFC keys that do
// nothing.
#include <cstdio>

#include "sim/config/loader_detail.hpp"

namespace fabricsim::config_detail {

namespace {

// PFC: a threshold, offset or headroom written is a size; 0 (the derived value) by leaving it out.
const QuantitySpec kXoff{"size",
                         "200KB",
                         parse_size_bytes,
                         1,
                         kInt64Max,
                         "a positive size",
                         "leave xoff out to derive it from the buffer"};
const QuantitySpec kXonOffset{"size",
                              "8KiB",
                              parse_size_bytes,
                              1,
                              kInt64Max,
                              "a positive size",
                              "leave xon_offset out for two MTU frames"};
const QuantitySpec kHeadroom{"size",
                             "100KB",
                             parse_size_bytes,
                             1,
                             kInt64Max,
                             "a positive size",
                             "leave headroom out to size it by the formula"};
/// SONiC's pfcwd accepts detection times to 5 s and restoration times to 60 s.
const QuantitySpec kWatchdogTime{
    "time", "200ms", parse_time_ps, 1, 60'000'000'000'000, "a positive time up to 60s"};
const QuantitySpec kDcqcnRate{"rate",
                              "40Mbps",
                              parse_rate_bps,
                              1'000'000,
                              100'000'000'000'000,
                              "a rate from 1Mbps to 100Tbps"};
const Choices kEcnMarkAt{"marking point", {"enqueue", "dequeue"}, {}, {}};
const Choices kPfcThresholds{"threshold model", {"static", "dynamic"}, {}, {}};
const Choices kWatchdogActions{"watchdog action", {"drop", "forward"}, {}, {}};
const Choices kDcqcnPresets{"DCQCN preset", {"paper", "connectx"}, {}, {}};
const Condition kStaticThreshold{"pfc.threshold", "static",
                                 [](const Scenario& s) { return s.pfc.threshold; }};
const Condition kDynamicThreshold{"pfc.threshold", "dynamic",
                                  [](const Scenario& s) { return s.pfc.threshold; }};

/// pfc.priorities: 1 to 8 distinct priorities 0..7, in the order written.
std::vector<int> priority_list(const Value& v) {
  std::vector<int> out;
  for (const Value& item :
       v.items("a list of 1 to 8 distinct priorities from 0 to 7, e.g. [3]", 1, 8)) {
    const int p = int(item.integer(0, 7));
    if (std::find(out.begin(), out.end(), p) != out.end()) {
      item.fail("priority " + std::to_string(p) + " is listed twice; expected distinct priorities");
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace

/// Sets every DCQCN parameter to preset `name`'s; `enabled` is the scenario's to say.
void apply_dcqcn_preset(const std::string& name, Scenario& s) {
  const bool enabled = s.dcqcn.enabled;
  s.dcqcn = dcqcn_preset(name);
  s.dcqcn.enabled = enabled;
  s.dcqcn.preset = name;
}

namespace {

constexpr auto kEcn = &Scenario::ecn;
constexpr auto kPfc = &Scenario::pfc;
constexpr auto kDcqcn = &Scenario::dcqcn;
constexpr auto kIb = &Scenario::infiniband;
using E = EcnConfig;
using P = PfcConfig;
using D = DcqcnConfig;

}  // namespace

// clang-format off
std::span<const Field> ecn_params() {
  static const Field rows[] = {
  {"ecn", "enabled", false, Bool(), at<kEcn, &E::enabled>,
   "RED ECN marking on every switch egress queue (DCQCN paper §3.1)"},
  {"ecn", "kmin", false, Quantity(kNonNegativeSize), at<kEcn, &E::kmin_bytes>,
   "queue bytes up to which nothing is marked (DCQCN paper: Kmin)"},
  {"ecn", "kmax", false, Quantity(kPositiveSize), at<kEcn, &E::kmax_bytes>,
   "queue bytes from which every packet is marked (DCQCN paper: Kmax)"},
  {"ecn", "pmax", false,
   Fraction(1e-6, 1, "a probability above 0 and at most 1, e.g. 0.01 or 1/100"),
   at<kEcn, &E::pmax>, "marking probability reached at kmax (DCQCN paper: Pmax)"},
  {"ecn", "mark_at", false, Choice(kEcnMarkAt), at<kEcn, &E::mark_at>,
   "enqueue (on arrival) | dequeue (when it starts to leave)"},
  };
  return rows;
}

// Every pfc, dcqcn and infiniband key also has its section's transport condition (sections()).
std::span<const Field> pfc_params() {
  static const Field rows[] = {
  {"pfc", "enabled", false, Bool(), at<kPfc, &P::enabled>,
   "IEEE 802.1Qbb priority flow control at every switch ingress"},
  {"pfc", "priorities", false,  // absent = nic.traffic_class
   Custom("list of integers", "1 to 8 distinct priorities, each 0 … 7"), at<kPfc, &P::priorities>,
   "lossless priorities; [] = {nic.traffic_class}", nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) { s.pfc.priorities = priority_list(v); }},
  {"pfc", "threshold", false,  // before xoff and alpha; dynamic needs a shared buffer (check_pfc)
   Choice(kPfcThresholds), at<kPfc, &P::threshold>,
   "XOFF model: static (xoff bytes) | dynamic (alpha x free shared buffer)"},
  {"pfc", "xoff", false,  // absent = derived from the buffer; xon_offset < xoff (check_pfc)
   Quantity(kXoff), at<kPfc, &P::xoff_bytes>,
   "XOFF threshold per ingress port and priority; 0 = the port's buffer share minus headroom",
   nullptr, nullptr, &kStaticThreshold},
  {"pfc", "alpha", false, Fraction(1.0 / 128, 64, kAlphaExpected), at<kPfc, &P::alpha>,
   "XOFF at alpha x the free shared buffer", nullptr, nullptr, &kDynamicThreshold},
  {"pfc", "xon_offset", false,  // absent = two MTU frames
   Quantity(kXonOffset), at<kPfc, &P::xon_offset_bytes>,
   "XON = XOFF - xon_offset; 0 = two MTU frames"},
  {"pfc", "headroom", false,  // absent = the formula of congestion/pfc.hpp
   Quantity(kHeadroom), at<kPfc, &P::headroom_bytes>,
   "headroom per ingress port and priority; 0 = sized by congestion/pfc.hpp's formula"},
  {"pfc", "response_time", false, Quantity(kNonNegativeTime), at<kPfc, &P::response_time_ps>,
   "PFC frame arrival to sender stop; -1 = IEEE 802.3 Annex 31D bound for the link's rate"},
  {"pfc", "pause_quanta", false, Int(1, kMaxPauseQuanta), at<kPfc, &P::pause_quanta>,
   "quanta (512 bit times each) an XOFF frame carries"},
  {"pfc", "watchdog", false, Bool(), at<kPfc, &P::watchdog>,
   "PFC watchdog: a queue paused for detection_time is stormed"},
  {"pfc", "watchdog_detection_time", false, Quantity(kWatchdogTime),
   at<kPfc, &P::watchdog_detection_time_ps>, "continuous pause before a queue is stormed (SONiC pfcwd)"},
  {"pfc", "watchdog_restoration_time", false, Quantity(kWatchdogTime),
   at<kPfc, &P::watchdog_restoration_time_ps>, "time without PAUSE before a stormed queue is restored"},
  {"pfc", "watchdog_action", false, Choice(kWatchdogActions), at<kPfc, &P::watchdog_action>,
   "drop (packets dropped, PAUSE ignored) | forward (PAUSE ignored)"},
  {"pfc", "deadlock_check_interval", false, Quantity(kCheckInterval),
   at<kPfc, &P::deadlock_check_interval_ps>, "period of the deadlock detector while a queue is paused"},
  };
  return rows;
}

// A dcqcn section starts from dcqcn_preset("paper") (build); preset comes first, so that the
// keys below override the preset it names. enabled needs ECN marking (check_dcqcn).
std::span<const Field> dcqcn_params() {
  static const Field rows[] = {
  {"dcqcn", "preset", false, Choice(kDcqcnPresets), at<kDcqcn, &D::preset>,
   "paper (Zhu et al., SIGCOMM 2015) | connectx (ConnectX firmware); keys given override it",
   nullptr, nullptr, nullptr,
   [](const Value& v, Scenario& s) {
     const std::string name = v.choice(kDcqcnPresets);
     try {
       apply_dcqcn_preset(name, s);
     } catch (const std::invalid_argument& e) {
       v.fail(e.what());
     }
   }},
  {"dcqcn", "enabled", false, Bool(), at<kDcqcn, &D::enabled>,
   "DCQCN on every RoCE queue pair; needs ecn.enabled"},
  {"dcqcn", "g", false, Fraction(1e-6, 1, "a number above 0 and at most 1, e.g. 1/256"),
   at<kDcqcn, &D::g>, "alpha gain [g]"},
  {"dcqcn", "initial_alpha", false, Fraction(0, 1, "a number from 0 to 1, e.g. 1"),
   at<kDcqcn, &D::initial_alpha>, "alpha of a new flow"},
  {"dcqcn", "alpha_timer", false, Quantity(kTimeout), at<kDcqcn, &D::alpha_timer_ps>,
   "alpha decays every [K] without a CNP"},
  {"dcqcn", "rate_timer", false, Quantity(kTimeout), at<kDcqcn, &D::rate_timer_ps>,
   "rate increase timer [T] (rpg_time_reset)"},
  {"dcqcn", "byte_counter", false, Quantity(kPositiveSize), at<kDcqcn, &D::byte_counter_bytes>,
   "rate increase every [B] bytes sent (rpg_byte_reset)"},
  {"dcqcn", "fast_recovery_steps", false, Int(1, 255), at<kDcqcn, &D::fast_recovery_steps>,
   "fast recovery iterations [F] (rpg_threshold)"},
  {"dcqcn", "rai", false, Quantity(kDcqcnRate), at<kDcqcn, &D::rai_bps>,
   "additive increase step [R_AI] (rpg_ai_rate)"},
  {"dcqcn", "rhai", false, Quantity(kDcqcnRate), at<kDcqcn, &D::rhai_bps>,
   "hyper increase step [R_HAI] (rpg_hai_rate)"},
  {"dcqcn", "min_rate", false,  // below the line rate: checked where the line rate is known
   Quantity(kDcqcnRate), at<kDcqcn, &D::min_rate_bps>, "floor of the current rate (rpg_min_rate)"},
  {"dcqcn", "clamp_target_rate", false, Bool(), at<kDcqcn, &D::clamp_target_rate>,
   "on a cut, target rate Rt = current rate Rc always (clamp_tgt_rate)"},
  {"dcqcn", "clamp_target_rate_after_time_inc", false, Bool(),
   at<kDcqcn, &D::clamp_target_rate_after_time_inc>,
   "without clamp_target_rate: Rt = Rc on a cut after a byte-counter or also a timer increase "
   "(clamp_tgt_rate_after_time_inc)"},
  {"dcqcn", "rate_reduce_monitor_period", false, Quantity(kNonNegativeTime),
   at<kDcqcn, &D::rate_reduce_monitor_period_ps>,
   "at most one cut per period; 0 = every CNP cuts (rate_reduce_monitor_period)"},
  {"dcqcn", "max_decrease", false,
   Fraction(1e-6, 1, "a number above 0 and at most 1, e.g. 0.5 or 1/2"),
   at<kDcqcn, &D::max_decrease>, "largest cut per CNP, as a fraction of the rate (rpg_min_dec_fac)"},
  {"dcqcn", "cnp_interval", false, Quantity(kNonNegativeTime), at<kDcqcn, &D::cnp_interval_ps>,
   "receiver: at most one CNP per flow per [N]"},
  {"dcqcn", "cnp_traffic_class", false, Int(0, 7), at<kDcqcn, &D::cnp_traffic_class>,
   "priority of CNPs (cnp_802p_prio)"},
  };
  return rows;
}

std::span<const Field> infiniband_params() {
  static const Field rows[] = {
  {"infiniband", "vl_buffer", false,  // absent = the switch's buffer per port
   Quantity(kPositiveSize), at<kIb, &InfinibandConfig::vl_buffer_bytes>,
   "input buffer per port and VL (64-byte credits); 0 = the switch's per-port share"},
  {"infiniband", "deadlock_check_interval", false,  // the credit-deadlock detector's period
   Quantity(kCheckInterval), at<kPfc, &P::deadlock_check_interval_ps>,
   "period of the credit-deadlock detector"},
  };
  return rows;
}
// clang-format on

/// A pfc value that applies to one switch: its own (`own`), else the scenario's (`top`), else
/// nullptr. `is_own` says which.
const Value* pfc_value(const std::string& key, const std::map<std::string, Value>& own,
                       const std::map<std::string, Value>* top, bool& is_own) {
  const std::string path = "pfc." + key;
  is_own = true;
  if (const auto it = own.find(path); it != own.end()) return &it->second;
  is_own = false;
  if (top == nullptr) return nullptr;
  const auto it = top->find(path);
  return it == top->end() ? nullptr : &it->second;
}

/// Cross-field rules of pfc, for the scenario's (`own` = its values, `sc` its parse) or, with
/// `top` (the scenario's values), for one switch's (`own` = the switch's pfc and ecn values, `sc`
/// the scenario with them applied). A rule broken by values that the switch inherits has
/// already failed for the scenario's section.
void check_pfc(const Context& main, const Scenario& sc, const std::map<std::string, Value>& own,
               const std::map<std::string, Value>* top) {
  const PfcConfig& pfc = sc.pfc;
  bool own_threshold = false, own_xoff = false, own_xon = false;
  if (pfc.headroom_bytes > 0 && pfc.headroom_bytes < sc.nic.mtu_bytes) {
    // The headroom takes what is already on the wire when XOFF is sent: less than one frame
    // cannot be lossless (1B ran with 8.9 M headroom drops).
    bool own_headroom = false;
    if (const Value* headroom = pfc_value("headroom", own, top, own_headroom)) {
      headroom->fail("expected a headroom of at least one frame (nic.mtu " +
                     std::to_string(sc.nic.mtu_bytes) +
                     "B) for the bytes in flight after XOFF, got '" + headroom->node().Scalar() +
                     "'; leave headroom out to size it by the formula");
    }
  }
  if (pfc.threshold == "dynamic" && sc.sw.buffer_model != "shared") {
    const Value* threshold = pfc_value("threshold", own, top, own_threshold);
    const auto model = sc.origins.find("switch.buffer_model");
    threshold->fail(
        "threshold dynamic needs switch.buffer_model shared (XOFF at alpha x the free shared "
        "buffer), not " +
        sc.sw.buffer_model +
        (model == sc.origins.end() ? " (the default)" : " (set in " + place(model->second) + ")"));
  }
  if (pfc.threshold != "static" || pfc.xoff_bytes == 0 || pfc.xon_offset_bytes == 0 ||
      pfc.xon_offset_bytes < pfc.xoff_bytes) {
    return;
  }
  const Value* xoff = pfc_value("xoff", own, top, own_xoff);
  const Value* xon = pfc_value("xon_offset", own, top, own_xon);
  const std::string xoff_text = xoff->node().Scalar(), xon_text = xon->node().Scalar();
  const std::string why = ": XON = xoff - xon_offset must be above 0";
  // Blame the switch's own value over an inherited one, then the more direct of the two.
  if (own_xoff != own_xon ? own_xoff : directness(main, *xoff) > directness(main, *xon)) {
    xoff->fail("xoff (" + xoff_text + ") must be more than xon_offset (" + xon_text + ")" + why);
  }
  xon->fail("xon_offset (" + xon_text + ") must be less than xoff (" + xoff_text + ")" + why);
}

/// DCQCN cuts rates on the CNPs that ECN marks cause: with none, it would never act.
void check_dcqcn(const std::map<std::string, Value>& found, const Scenario& s) {
  if (!s.dcqcn.enabled || s.ecn.enabled) return;
  // A fabric with ECN marking on some switches only (switches.NAME.ecn.enabled) is a fabric
  // configured inconsistently, which is what the switches section is for.
  for (const auto& [name, o] : s.switches) {
    if (o.ecn.enabled) return;
  }
  found.at("dcqcn.enabled").fail("DCQCN reacts to ECN marks: set ecn.enabled: true");
}

/// The most bytes one egress queue of the data's class (nic.traffic_class) can hold, and the
/// key that sets it: the whole shared buffer, or (static) the port's buffer for lossy data; 0
/// when it has no such bound (lossless data in static buffers is bounded at the ingress ports,
/// by PFC thresholds or InfiniBand credits, not by the egress buffer).
struct QueueBound {
  int64_t bytes = 0;          ///< 0: no bound to check against
  const char* key = nullptr;  ///< the buffer key that sets it
  std::string why;            ///< how, for the message
};
QueueBound queue_bound(const Scenario& s, const PfcConfig& pfc) {
  const int tc = s.nic.traffic_class;
  const bool listed =
      pfc.priorities.empty() ||
      std::find(pfc.priorities.begin(), pfc.priorities.end(), tc) != pfc.priorities.end();
  const bool lossless =
      s.transport == "infiniband" || (s.transport == "roce" && pfc.enabled && listed);
  if (s.sw.buffer_model == "shared") {
    const int64_t b = s.sw.shared_buffer_bytes;
    if (lossless) {  // lossless frames skip the egress admission: the whole pool
      return {b, "switch.shared_buffer",
              "switch.shared_buffer " + std::to_string(b) + " B for the whole switch"};
    }
    // The dynamic threshold admits a queue while its shared bytes are below alpha x the free
    // pool: alone, q <= alpha (B - q), so q <= alpha / (1 + alpha) x B, plus its reservation
    // (Choudhury & Hahne 1998; an upper bound, the pool being B minus all reservations).
    const auto q = static_cast<int64_t>(s.sw.alpha / (1 + s.sw.alpha) * static_cast<double>(b)) +
                   s.sw.reserved_per_queue_bytes;
    char alpha[32];
    std::snprintf(alpha, sizeof alpha, "%g", s.sw.alpha);
    return {q, "switch.shared_buffer",
            std::to_string(q) + " B per queue: alpha/(1+alpha) of switch.shared_buffer " +
                std::to_string(b) + " B at switch.alpha " + alpha + ", plus the reservation"};
  }
  if (lossless) return {};
  return {s.sw.buffer_per_port_bytes, "switch.buffer_per_port",
          "switch.buffer_per_port " + std::to_string(s.sw.buffer_per_port_bytes) + " B per port"};
}

/// A value of `key` that applies to one switch (`own`, its values) or to the scenario (`top`,
/// or `own` when there is no switch); nullptr when neither gave it.
const Value* given(const std::string& key, const std::map<std::string, Value>& own,
                   const std::map<std::string, Value>* top) {
  if (const auto it = own.find(key); it != own.end()) return &it->second;
  if (top == nullptr) return nullptr;
  const auto it = top->find(key);
  return it == top->end() ? nullptr : &it->second;
}

/// ECN thresholds against the most a queue can hold: a kmin at or above it never marks (an
/// error); a kmax above it stops the RED ramp short of pmax (a warning). For the scenario's ecn
/// (`top` null) or one switch's (`own` its values, `top` the scenario's, `whose` its name).
void check_ecn_reach(const Scenario& s, const EcnConfig& ecn, const PfcConfig& pfc,
                     const std::map<std::string, Value>& own,
                     const std::map<std::string, Value>* top,
                     const std::map<std::string, Value>& all, std::vector<std::string>& warnings) {
  if (!ecn.enabled) return;
  const QueueBound qb = queue_bound(s, pfc);
  const int64_t bound = qb.bytes;
  const char* key = qb.key;
  if (bound <= 0) return;
  const Value* kmin = given("ecn.kmin", own, top);
  const Value* kmax = given("ecn.kmax", own, top);
  const auto buffer = all.find(key);
  const std::string& queue = qb.why;
  if (ecn.kmin_bytes >= bound) {
    const std::string kmin_text = kmin ? "(" + kmin->node().Scalar() + ")"
                                       : std::to_string(ecn.kmin_bytes) + " B (the default)";
    const std::string message =
        "ecn.kmin " + kmin_text + " is at or above the most bytes a queue can hold (" + queue +
        "): ECN could never mark; expected a kmin below " + std::to_string(bound) + " B";
    if (kmin != nullptr || buffer == all.end()) {
      if (kmin) kmin->fail(message);
    } else {
      buffer->second.fail(message);
    }
  }
  if (ecn.kmax_bytes > bound) {
    const double reach = ecn.pmax * static_cast<double>(bound - ecn.kmin_bytes) /
                         static_cast<double>(ecn.kmax_bytes - ecn.kmin_bytes);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.3g", 100 * reach);
    char pmax[32];
    std::snprintf(pmax, sizeof pmax, "%g", ecn.pmax);
    const std::string message =
        "ecn.kmax (" + (kmax ? kmax->node().Scalar() : std::to_string(ecn.kmax_bytes) + " B") +
        ") is above the most bytes a queue can hold (" + queue +
        "): the RED ramp stops at a marking probability of " + pct + " %, never reaching pmax (" +
        pmax + "); expected a kmax of at most " + std::to_string(bound) + " B";
    if (kmax) {
      warnings.push_back(config_warning(kmax->origin(), kmax->path(), message));
    } else if (buffer != all.end()) {
      warnings.push_back(config_warning(buffer->second.origin(), buffer->second.path(), message));
    }
  }
}

/// PFC keys that do nothing: set while PFC is off (at the scenario, or at one switch: `own` its
/// values, `where` " at NAME"), and pfc.priorities without the data's traffic class while PFC is
/// on. Warnings, not errors: a sweep toggling pfc.enabled makes them on purpose.
void warn_pfc(const Scenario& s, const PfcConfig& pfc, const std::map<std::string, Value>& own,
              const std::map<std::string, Value>* top, const std::string& where, bool pfc_somewhere,
              std::vector<std::string>& warnings) {
  if (s.transport != "roce") return;
  if (!pfc.enabled && !pfc_somewhere) {
    const Value* enabled = given("pfc.enabled", own, top);
    const std::string off =
        "PFC is off" + where + " (pfc.enabled " +
        (enabled ? "false at " + place(enabled->origin()) : std::string("false, the default")) +
        ")";
    for (const auto& [path, v] : own) {
      if (path.rfind("pfc.", 0) != 0 || path == "pfc.enabled") continue;
      warnings.push_back(config_warning(
          v.origin(), v.path(), "has no effect: " + off + "; set pfc.enabled: true to use it"));
    }
    return;
  }
  const auto priorities = own.find("pfc.priorities");
  if (!pfc.enabled || priorities == own.end()) return;
  const int tc = s.nic.traffic_class;
  if (std::find(pfc.priorities.begin(), pfc.priorities.end(), tc) != pfc.priorities.end()) return;
  const std::string t = std::to_string(tc);
  warnings.push_back(config_warning(
      priorities->second.origin(), priorities->second.path(),
      "does not include nic.traffic_class " + t + ", the class of the RDMA data" + where +
          ": the data is lossy (tail drops under congestion) and PFC pauses none of it; add " + t +
          " to make it lossless"));
}

/// Where a switch's name was written in `switches:`, or the --set that created it.
KeyOrigin name_origin(const Context& ctx, const std::string& path, const YAML::Mark& mark) {
  if (!mark.is_null()) return KeyOrigin{ctx.file, mark.line + 1, mark.column + 1};
  for (const auto& [key, where] : ctx.overrides) {
    if (key.rfind(path + ".", 0) == 0) return KeyOrigin{where, 0, 0};
  }
  return KeyOrigin{ctx.file, 0, 0};
}

/// `switches:` (the section's value): per switch, the top-level pfc and ecn sections (already
/// in `s`) with that switch's keys applied over them, into s.switches; origins recorded as
/// "switches.NAME" (the name) and "switches.NAME.pfc.xoff" (a key). The names are checked
/// against the fabric later (check_switch_overrides).
void parse_switches(const Context& ctx, const Value& section,
                    const std::map<std::string, Value>& found, Scenario& s) {
  const std::string example = "e.g. {leaf0: {pfc: {xoff: 100KB}, ecn: {kmin: 10KB}}}";
  if (section.node().IsNull()) return;
  if (!section.node().IsMap()) {
    section.fail("expected a map of switch names to their pfc and ecn keys, " + example + ", got " +
                 describe(section.node()));
  }
  Scenario start = s;  // every switch starts from the top-level sections
  start.switches.clear();
  std::map<std::string, int> first_line;
  for (const auto& entry : section.node()) {
    const YAML::Node key = entry.first;
    if (!key.IsScalar()) {
      ctx.fail(kSwitchesSection, key.Mark(), "expected a switch name, got " + describe(key));
    }
    const std::string name = key.Scalar();
    const std::string path = std::string(kSwitchesSection) + "." + name;
    if (auto [seen, inserted] = first_line.emplace(name, key.Mark().line + 1); !inserted) {
      ctx.fail(path, key.Mark(),
               "duplicate switch '" + name + "' (first given at line " +
                   std::to_string(seen->second) + ")");
    }
    const Value v(&ctx, path, entry.second, key.Mark());
    const std::vector<std::string>& subsections = kPerSwitchSections;
    std::map<std::string, Value> own;  // "pfc.xoff" -> the switch's value
    if (!v.node().IsNull()) {
      if (!v.node().IsMap()) {
        v.fail("expected a map with the sections a switch overrides (" +
               join_words(subsections, " and ") + "), e.g. {pfc: {xoff: 100KB}}, got " +
               describe(v.node()));
      }
      std::map<std::string, int> sub_line;
      for (const auto& sub : v.node()) {
        const YAML::Node sub_key = sub.first;
        if (!sub_key.IsScalar()) {
          ctx.fail(path, sub_key.Mark(), "expected a section name, got " + describe(sub_key));
        }
        const std::string sub_name = sub_key.Scalar();
        const std::string sub_path = path + "." + sub_name;
        if (std::find(subsections.begin(), subsections.end(), sub_name) == subsections.end()) {
          std::string message = "unknown key '" + sub_name + "'";
          std::vector<std::string> homes;
          for (const std::string& x : subsections) {
            const std::vector<std::string> keys = keys_of(x);
            if (std::find(keys.begin(), keys.end(), sub_name) != keys.end()) {
              homes.push_back(path + "." + x + "." + sub_name);
            }
          }
          if (!homes.empty()) {
            message +=
                "; it belongs in a section under " + name + " (" + join_words(homes, " or ") + ")";
          } else if (const std::string guess = closest_match(sub_name, subsections);
                     !guess.empty()) {
            message += "; did you mean '" + guess + "'?";
          } else {
            message += "; a switch overrides only " + join_words(subsections, " and ") + " keys";
          }
          ctx.fail(sub_path, sub_key.Mark(), message);
        }
        if (auto [seen, inserted] = sub_line.emplace(sub_name, sub_key.Mark().line + 1);
            !inserted) {
          ctx.fail(sub_path, sub_key.Mark(),
                   "duplicate key '" + sub_name + "' (first given at line " +
                       std::to_string(seen->second) + ")");
        }
        const Value sv(&ctx, sub_path, sub.second, sub_key.Mark());
        if (sv.node().IsNull()) continue;
        if (!sv.node().IsMap()) {
          sv.fail("expected a map of " + sub_name + " keys (" +
                  join_words(keys_of(sub_name), ", ") + "), got " + describe(sv.node()));
        }
        collect(ctx, sv.node(), sub_name, own, path + ".");
      }
    }
    Scenario t = start;
    parse_fields(ctx, own, t, false, "switch " + name + "'s", &found);
    check_pfc(ctx, t, own, &found);
    const bool own_ecn = std::any_of(own.begin(), own.end(),
                                     [](const auto& kv) { return kv.first.rfind("ecn.", 0) == 0; });
    if (own_ecn) check_ecn_reach(t, t.ecn, t.pfc, own, &found, found, s.warnings);
    warn_pfc(t, t.pfc, own, &found, " at " + name, false, s.warnings);
    s.switches[name] = SwitchOverride{t.pfc, t.ecn};
    s.origins[path] = name_origin(ctx, path, key.Mark());
    for (const auto& [relative, value] : own) s.origins[value.path()] = value.origin();
  }
}

}  // namespace fabricsim::config_detail
