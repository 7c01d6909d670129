#include "sim/cli/run.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/range/iterator_range.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stop_token>
#include <thread>

#include "calibration/calibrate.hpp"
#include "calibration/parse_error.hpp"
#include "collectives/flow_plan.hpp"
#include "collectives/nccl_model.hpp"
#include "collectives/nccl_plan.hpp"
#include "collectives/nccl_tests.hpp"
#include "collectives/replay.hpp"
#include "collectives/transfer_dag.hpp"
#include "sim/cli/congestion_dependence.hpp"
#include "sim/cli/deadlock_advice.hpp"
#include "sim/cli/run_outputs.hpp"
#include "sim/cli/trace_observer.hpp"
#include "sim/config/cost_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/net/network.hpp"
#include "topologies/metrics.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

namespace {

/// The NCCL_* variables fabricsim reads, and the `nccl.` key each one sets ("" = none: read
/// from the environment only).
const std::pair<const char*, const char*> kNcclVariables[] = {
    {"NCCL_ALGO", "algo"},
    {"NCCL_PROTO", "proto"},
    {"NCCL_BUFFSIZE", "buffsize"},
    {"NCCL_LL_BUFFSIZE", ""},
    {"NCCL_LL128_BUFFSIZE", ""},
    {"NCCL_MIN_NCHANNELS", "min_nchannels"},
    {"NCCL_MAX_NCHANNELS", "max_nchannels"},
    {"NCCL_MIN_NRINGS", "min_nchannels"},  // NCCL's older names; the NCHANNELS ones win
    {"NCCL_MAX_NRINGS", "max_nchannels"},
    {"NCCL_NET_GDR_LEVEL", "net_gdr_level"},
    {"NCCL_IB_DISABLE", "ib_disable"},
    {"NCCL_NET", "net"},
};

/// The scenario's nccl section as NCCL_* variables (only what it sets).
std::map<std::string, std::string> nccl_variables(const Scenario& sc) {
  std::map<std::string, std::string> env;
  const NcclConfig& n = sc.nccl;
  if (!n.algo.empty()) env["NCCL_ALGO"] = n.algo;
  if (!n.proto.empty()) env["NCCL_PROTO"] = n.proto;
  if (n.buffsize_bytes > 0) env["NCCL_BUFFSIZE"] = std::to_string(n.buffsize_bytes);
  if (n.ll_buffsize_bytes > 0) env["NCCL_LL_BUFFSIZE"] = std::to_string(n.ll_buffsize_bytes);
  if (n.ll128_buffsize_bytes > 0) {
    env["NCCL_LL128_BUFFSIZE"] = std::to_string(n.ll128_buffsize_bytes);
  }
  if (n.min_nchannels > 0) env["NCCL_MIN_NCHANNELS"] = std::to_string(n.min_nchannels);
  if (n.max_nchannels > 0) env["NCCL_MAX_NCHANNELS"] = std::to_string(n.max_nchannels);
  if (!n.net_gdr_level.empty()) env["NCCL_NET_GDR_LEVEL"] = n.net_gdr_level;
  if (n.ib_disable) env["NCCL_IB_DISABLE"] = "1";
  if (!n.net.empty()) env["NCCL_NET"] = n.net;
  return env;
}

/// The NCCL_* variables of fabricsim's own environment override the scenario's nccl section
/// (NCCL reads them at init), unless --set gave the key. Throws ConfigError (exit 2) for a bad
/// value, naming the variable.
void apply_nccl_environment(Scenario& sc) {
  std::map<std::string, std::string> env;
  for (const auto& [var, key] : kNcclVariables) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') env[var] = value;  // empty = unset, as for NCCL
  }
  if (const char* v = std::getenv("NCCL_NCHANNELS"); v != nullptr && *v != '\0') {
    std::fprintf(stderr,
                 "fabricsim: note: NCCL_NCHANNELS=%s is ignored, as NCCL ignores it (it reads "
                 "NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS)\n",
                 v);
  }
  if (const auto it = env.find("NCCL_ALGO"); it != env.end()) {
    // NCCL skips algorithms it cannot use here; environment files for H100/GB200 name NVLS
    // and CollNet, which fabricsim does not model: drop them with a note, keep the rest.
    std::string value = it->second, kept, dropped;
    const bool exclude = !value.empty() && value[0] == '^';
    if (exclude) value.erase(0, 1);
    std::stringstream list(value);
    for (std::string name; std::getline(list, name, ',');) {
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      lower.erase(std::remove(lower.begin(), lower.end(), ' '), lower.end());
      const bool other = lower == "nvls" || lower == "nvlstree" || lower == "collnetdirect" ||
                         lower == "collnetchain" || lower == "collnet" || lower == "pat";
      (other ? dropped : kept) += (((other ? dropped : kept).empty()) ? "" : ",") + name;
    }
    if (!dropped.empty()) {
      std::fprintf(stderr,
                   "fabricsim: note: NCCL_ALGO=%s: %s not modelled (fabricsim has Ring and "
                   "Tree); ignored\n",
                   it->second.c_str(), dropped.c_str());
      if (kept.empty()) {
        env.erase(it);
      } else {
        it->second = (exclude ? "^" : "") + kept;
      }
    }
  }
  if (env.empty()) return;
  NcclSettings parsed;
  const auto bad = [&](const std::string& var, const std::string& message) {
    return ConfigError("environment variable " + var + "=" + env[var], 0, 0, var, message);
  };
  try {
    parsed = parse_nccl_env(env);
  } catch (const NcclSettingError& e) {
    throw bad(e.variable, e.message);
  }
  for (const char* var : {"NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE", "NCCL_LL128_BUFFSIZE"}) {
    if (!env.count(var)) continue;
    const int64_t bytes = std::stoll(env[var]);  // parse_nccl_env checked it is a number
    if (bytes < 65'536 || bytes > (int64_t{1} << 30)) {
      throw bad(var,
                "expected a buffer size from 65536 to 1073741824 bytes (64 KiB, 8 KiB per "
                "step, to 1 GiB), got " +
                    env[var]);
    }
  }
  // A key --set gave (itself, or nccl.nchannels for the channel bounds) keeps its value.
  const auto set_by_user = [&](const std::string& key) {
    for (const std::string& k : {key, std::string("nccl.nchannels")}) {
      if (k == "nccl.nchannels" && key != "nccl.min_nchannels" && key != "nccl.max_nchannels") {
        continue;
      }
      const auto it = sc.origins.find(k);
      if (it != sc.origins.end() && it->second.where.rfind("--set", 0) == 0) return true;
    }
    return false;
  };
  for (const auto& [var, value] : env) {
    std::string key;
    for (const auto& [v, k] : kNcclVariables) {
      if (var == v && *k != '\0') key = std::string("nccl.") + k;
    }
    const bool legacy = var == "NCCL_MIN_NRINGS" || var == "NCCL_MAX_NRINGS";
    if (!key.empty() && set_by_user(key)) continue;
    if (legacy &&
        env.count(var == "NCCL_MIN_NRINGS" ? "NCCL_MIN_NCHANNELS" : "NCCL_MAX_NCHANNELS")) {
      continue;  // the NCHANNELS name wins
    }
    if (!key.empty()) {
      sc.origins[key] = KeyOrigin{"environment variable " + var + "=" + value, 0, 0};
    }
    sc.nccl.from_env[key.empty() ? var : key] = var + "=" + value;
    NcclConfig& n = sc.nccl;
    if (var == "NCCL_ALGO") n.algo = value;
    if (var == "NCCL_PROTO") n.proto = value;
    if (var == "NCCL_BUFFSIZE") n.buffsize_bytes = parsed.buffsize_bytes;
    if (var == "NCCL_LL_BUFFSIZE") n.ll_buffsize_bytes = parsed.ll_buffsize_bytes;
    if (var == "NCCL_LL128_BUFFSIZE") n.ll128_buffsize_bytes = parsed.ll128_buffsize_bytes;
    if (var == "NCCL_MIN_NCHANNELS" || var == "NCCL_MIN_NRINGS") {
      n.min_nchannels = parsed.min_nchannels;
    }
    if (var == "NCCL_MAX_NCHANNELS" || var == "NCCL_MAX_NRINGS") {
      n.max_nchannels = parsed.max_nchannels;
    }
    if (var == "NCCL_NET_GDR_LEVEL") n.net_gdr_level = value;
    if (var == "NCCL_IB_DISABLE") n.ib_disable = parsed.ib_disable;
    if (var == "NCCL_NET") n.net = value;
  }
}

}  // namespace

Scenario load(const RunOptions& opts) {
  // --seed wins over --set seed=; a sweep refuses it beside --vary seed=.
  std::vector<std::string> sets = opts.sets;
  if (opts.seed) sets.push_back("seed=" + std::to_string(*opts.seed));
  Scenario sc = load_scenario(opts.scenario_path, sets, opts.varied);
  apply_nccl_environment(sc);
  return sc;
}

/// Creates DIR and proves it writable before a long run, so a typo costs seconds, not hours.
void check_out_dir(const std::string& dir) {
  const std::string where = "--out " + dir;
  if (dir.empty()) throw ConfigError(where, 0, 0, "", "expected a directory name");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ConfigError(where, 0, 0, "", "cannot create the directory: " + ec.message());
  try {  // as results.json will be written: a temporary file beside it, then a rename
    check_output_file((std::filesystem::path(dir) / "results.json").string());
  } catch (const OutputError& e) {
    throw ConfigError(where, 0, 0, "", e.what());  // "cannot write DIR/results.json: REASON"
  }
}

namespace {

/// PFC, credits, the dateline and DCQCN: what the loader cannot check without the fabric.
void check_lossless(const Scenario& sc, const Fabric& fabric, const RoutingTable& routes) {
  const bool roce = sc.transport == "roce";
  if (sc.routing.dateline_class >= 0) {
    const uint8_t bit = static_cast<uint8_t>(1u << sc.routing.dateline_class);
    const uint8_t lossless = pfc_lossless_mask(sc.pfc, sc.nic.traffic_class);
    if (roce && !(sc.pfc.enabled && (lossless & bit))) {
      throw key_error(sc, "routing.dateline_class",
                      "class " + std::to_string(sc.routing.dateline_class) +
                          " must be lossless for the dateline to break the cycle: enable pfc "
                          "and list it in pfc.priorities with the traffic class (e.g. [" +
                          std::to_string(sc.nic.traffic_class) + ", " +
                          std::to_string(sc.routing.dateline_class) + "])");
    }
  }
  if (sc.routing.bounce_class >= 0) {
    const int b = sc.routing.bounce_class;
    const uint8_t lossless = pfc_lossless_mask(sc.pfc, sc.nic.traffic_class);
    if (fabric.kind == "torus") {
      throw key_error(sc, "routing.bounce_class",
                      "applies to Clos fabrics (spine-leaf, fat-tree, rail-optimized); a torus "
                      "uses routing.dateline_class");
    }
    if (b == sc.nic.traffic_class) {
      throw key_error(sc, "routing.bounce_class",
                      "bounce_class " + std::to_string(b) +
                          " is the class packets start in (nic.traffic_class); pick another "
                          "lossless class");
    }
    if (roce && !(sc.pfc.enabled && (lossless >> b & 1))) {
      throw key_error(sc, "routing.bounce_class",
                      "class " + std::to_string(b) +
                          " must be lossless for bounced packets to stay lossless: enable pfc and "
                          "list it in pfc.priorities with the traffic class (e.g. [" +
                          std::to_string(sc.nic.traffic_class) + ", " + std::to_string(b) + "])");
    }
  }
  if (sc.dcqcn.enabled && roce) {
    try {
      validate_dcqcn(sc.dcqcn, sc.link.host_rate_bps);
    } catch (const std::invalid_argument& e) {
      // "DCQCN: min_rate must …": blame dcqcn.min_rate (where it was given, or the preset).
      std::string what = e.what();
      if (what.rfind("DCQCN: ", 0) == 0) what.erase(0, 7);
      const std::string field = what.substr(0, what.find(' '));
      const std::string key = "dcqcn." + field;
      throw key_error(sc, sc.origins.count(key) ? key : "dcqcn.preset",
                      what + (sc.origins.count(key) ? "" : " (the value of the preset)"));
    }
  }
  // The devices check the thresholds, headroom, ECN overrides and credit buffers of every
  // port: build them once here so that a misfit is bad input, reported before anything runs.
  try {
    Simulator sim;
    Network net(sim, fabric, routes, net_config_for(sc));
  } catch (const DeviceConfigError& e) {
    // Blame the switch's own override if it set the key, else the scenario-wide key.
    const std::string own = "switches." + e.switch_name + "." + e.key;
    throw key_error(sc, sc.origins.count(own) ? own : e.key, e.what());
  }
}

/// What a run needs beyond a valid scenario: ranks to talk, and buffers that hold a frame.
/// Throws ConfigError (exit 2): `validate` and `run` refuse the same things.
void check_runnable(const Scenario& sc, const Fabric& fabric) {
  if (fabric.hosts.size() < 2) {
    throw key_error(sc, "topology",
                    sc.workload.collective + " needs at least 2 GPUs; this fabric has " +
                        std::to_string(fabric.hosts.size()));
  }
  const WireFormat wire = wire_format_for(sc.transport);
  const int64_t frame = wire.wire_bytes(sc.nic.mtu_bytes);
  // The idle round trip of one frame and its ACK between two hosts on one cut-through switch
  // is a lower bound on any RTT in the fabric: an RTO below it times out every packet.
  const int64_t min_rtt_ps = serialization_ps(frame, sc.link.host_rate_bps) +
                             serialization_ps(wire.ack_wire_bytes(), sc.link.host_rate_bps) +
                             4 * sc.link.propagation_delay_ps + 2 * sc.sw.latency_ps;
  if (sc.nic.rto_ps < min_rtt_ps && !sc.origins.count("nic.rto")) {
    // The default RTO: blame the written key whose term of the round trip is the largest, at
    // its own position (a propagation_delay of 250ms was blamed on nic.rto at nic:).
    const std::pair<const char*, int64_t> terms[] = {
        {"link.propagation_delay", 4 * sc.link.propagation_delay_ps},
        {"switch.latency", 2 * sc.sw.latency_ps},
        {"link.host_rate", serialization_ps(frame + wire.ack_wire_bytes(), sc.link.host_rate_bps)},
        {"nic.mtu", serialization_ps(frame, sc.link.host_rate_bps)}};
    const auto* blamed = &terms[0];
    for (const auto& t : terms) {
      if (sc.origins.count(t.first) &&
          (!sc.origins.count(blamed->first) || t.second > blamed->second)) {
        blamed = &t;
      }
    }
    throw key_error(sc, blamed->first,
                    "makes the fastest possible round trip (one frame and its ACK over "
                    "host-switch-host) " +
                        format_time(min_rtt_ps) + ", longer than the default nic.rto (" +
                        format_time(sc.nic.rto_ps) +
                        "): every packet would time out before its ACK could return; expected "
                        "a round trip below it, or set nic.rto");
  }
  if (sc.nic.rto_ps < min_rtt_ps) {
    throw key_error(sc, "nic.rto",
                    format_time(sc.nic.rto_ps) +
                        " is shorter than the fastest possible round trip (" +
                        format_time(min_rtt_ps) +
                        ": one frame and its ACK over host-switch-host): every packet would "
                        "time out before its ACK could return");
  }
  if (sc.ecn.kmin_bytes >= sc.ecn.kmax_bytes) {
    throw key_error(sc, sc.origins.count("ecn.kmax") ? "ecn.kmax" : "ecn.kmin",
                    "ecn.kmin (" + std::to_string(sc.ecn.kmin_bytes) +
                        " B) must be below ecn.kmax (" + std::to_string(sc.ecn.kmax_bytes) +
                        " B): marking rises from 0 at kmin to pmax at kmax");
  }
  const std::string frame_text =
      std::to_string(frame) + " B at MTU " + std::to_string(sc.nic.mtu_bytes) + "B";
  if (sc.sw.buffer_model == "static") {
    if (sc.sw.buffer_per_port_bytes < frame) {
      throw key_error(
          sc, "switch.buffer_per_port",
          "smaller than one full frame (" + frame_text + "): no packet could be queued");
    }
    return;
  }
  // Shared: the pool left after every egress queue's reservation (ports x 8 classes) of the
  // largest switch must hold a frame beyond a full reservation.
  size_t max_ports = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(fabric.graph))) {
    if (fabric.graph[v].kind == NodeKind::kSwitch)
      max_ports = std::max(max_ports, boost::out_degree(v, fabric.graph));
  }
  const int64_t reserved = static_cast<int64_t>(max_ports) * 8 * sc.sw.reserved_per_queue_bytes;
  const bool reserve_fits = sc.sw.reserved_per_queue_bytes >= frame;
  if (sc.sw.shared_buffer_bytes - reserved < (reserve_fits ? 1 : frame)) {
    // Blame the value the user gave most directly: a --set, then the scenario, then a profile.
    auto directness = [&](const std::string& key) {
      const auto o = sc.origins.find(key);
      if (o == sc.origins.end()) return 0;
      return o->second.line == 0 ? 2 : o->second.where == sc.path ? 1 : 0;
    };
    const bool blame_reserve =
        directness("switch.reserved_per_queue") > directness("switch.shared_buffer");
    throw key_error(sc, blame_reserve ? "switch.reserved_per_queue" : "switch.shared_buffer",
                    std::to_string(sc.sw.shared_buffer_bytes) +
                        " B of shared_buffer cannot serve a switch of " +
                        std::to_string(max_ports) + " ports: their " +
                        std::to_string(max_ports * 8) + " egress queues reserve " +
                        std::to_string(reserved) + " B (switch.reserved_per_queue " +
                        std::to_string(sc.sw.reserved_per_queue_bytes) +
                        " B each), leaving no shared pool for a frame (" + frame_text + ")");
  }
}

/// The scenario's `cost_model:` resolved against the scenario's folder, like an include.
std::string cost_model_path(const Scenario& sc) {
  const std::filesystem::path p(sc.cost_model);
  return p.is_absolute() ? p.string() : (std::filesystem::path(sc.path).parent_path() / p).string();
}

}  // namespace

FabricSummary summarize(const Scenario& sc, const Fabric& f) {
  FabricSummary s;
  s.kind = f.kind;
  s.gpus = static_cast<int>(f.hosts.size());
  s.switches = f.switches;
  s.links = f.links;
  s.oversubscription = f.oversubscription;
  s.bisection_bandwidth_bps = f.bisection_bandwidth_bps;
  if ((!sc.topology.failed_links.empty() || !sc.topology.degraded_links.empty()) &&
      boost::num_vertices(f.graph) <= 5000) {  // compute_metrics' max-flow limit
    s.bisection_available_bps = host_halves_max_flow_bps(f);
  }
  s.host_rate_bps = sc.link.host_rate_bps;
  if (!sc.cost_model.empty()) {
    FabricCost& c = s.cost.emplace();
    c.prices = sc.cost_model;  // as written: results.json must not depend on how a path was typed
    // An InfiniBand and an Ethernet switch are priced apart when the file says so.
    const CostBreakdown b =
        fabric_cost(f, for_transport(load_cost_model(cost_model_path(sc)), sc.transport));
    c.switch_ports_usd = b.switches_usd;
    c.nics_usd = b.nics_usd;
    c.host_links_usd = b.host_links_usd;
    c.fabric_links_usd = b.fabric_links_usd;
    c.total_usd = b.total_usd;
  }
  return s;
}

namespace {

/// Copies the network's counters, per-port and per-queue statistics and flow records into the
/// report (formatting is sim/report's job).
void fill_counters(const Network& net, RunReport& rep) {
  const NetTotals t = net.totals();
  rep.counters.drops = t.drops;
  rep.counters.retransmits = t.retransmits;
  rep.counters.max_queue_bytes = t.max_queue_bytes;
  rep.counters.tail_drops = t.tail_drops;
  rep.counters.corrupt_drops = t.corrupt_drops;
  rep.counters.nak_tx = t.nak_tx;
  rep.counters.rto_timeouts = t.rto_timeouts;
  rep.counters.ecn_marked = t.ecn_marked;
  rep.counters.pfc_pause_tx = t.pfc_tx;
  rep.counters.pfc_pause_rx = t.pfc_rx;
  rep.counters.cnp_tx = t.cnp_tx;
  rep.counters.cnp_rx = t.cnp_rx;
  rep.counters.ce_received = t.ce_received;
  rep.counters.headroom_drops = t.headroom_drops;
  rep.counters.watchdog_drops = t.watchdog_drops;
  rep.counters.pfc_storms = t.watchdog_storms;
  rep.counters.paused_ps = t.paused_ps;
  const DeadlockReport& d = net.deadlock();
  rep.deadlock = DeadlockRow{d.detected_at_ps, d.cycle, d.flows, d.links, d.broken_by_watchdog, {}};
  rep.packet_hops = t.packet_hops;
  const ByteBalance b = net.byte_balance();
  rep.conservation =
      Conservation{b.sent_bytes, b.delivered_bytes, b.dropped_bytes, b.in_flight_bytes};
  const FabricGraph& g = net.fabric().graph;
  const int64_t now = rep.simulated_ps;
  const auto& ports = net.ports();
  for (uint32_t pid = 0; pid < ports.size(); ++pid) {
    const Port& p = ports[pid];
    PortRow row;
    row.node = g[p.node].name;
    row.peer = g[p.peer_node].name;
    row.port = p.index;
    row.rate_bps = p.rate_bps;
    row.tx_packets = p.counters.tx_packets;
    row.tx_bytes = p.counters.tx_bytes;
    const ArrivalCounters& arrived = net.arrived_from(pid);
    row.rx_packets = arrived.rx_packets;
    row.rx_bytes = arrived.rx_bytes;
    row.drops = p.counters.drops;
    row.drop_bytes = p.counters.drop_bytes;
    row.corrupt_drops = arrived.corrupt_drops;
    row.pfc_tx = p.counters.pfc_tx;
    row.pfc_rx = p.counters.pfc_rx;
    row.headroom_drops = p.counters.headroom_drops;
    row.max_queue_bytes = p.counters.max_queue_bytes;
    row.avg_queue_bytes = net.port_occupancy(pid).average(now);
    const OccupancyHistogram& h = net.port_histogram(pid);
    // A bucket's upper edge can exceed the peak the port reached: quote at most the peak.
    row.p50_queue_bytes = std::min(h.percentile(0.5), row.max_queue_bytes);
    row.p99_queue_bytes = std::min(h.percentile(0.99), row.max_queue_bytes);
    row.p999_queue_bytes = std::min(h.percentile(0.999), row.max_queue_bytes);
    rep.ports.push_back(row);
    for (int tc = 0; tc < kTrafficClasses; ++tc) {
      const QueueCounters& q = net.queue(pid, tc);
      if (q.tx_packets == 0 && q.drops == 0 && q.ecn_marked == 0 && q.paused_ps == 0 &&
          q.watchdog_drops == 0) {
        continue;
      }
      QueueRow qr;
      qr.node = row.node;
      qr.peer = row.peer;
      qr.port = p.index;
      qr.traffic_class = tc;
      qr.tx_packets = q.tx_packets;
      qr.tx_bytes = q.tx_bytes;
      qr.drops = q.drops;
      qr.drop_bytes = q.drop_bytes;
      qr.max_queue_bytes = q.occupancy.max_bytes;
      qr.avg_queue_bytes = q.occupancy.average(now);
      qr.mean_sojourn_ps =
          q.tx_packets > 0 ? static_cast<double>(q.sojourn_ps) / static_cast<double>(q.tx_packets)
                           : 0.0;
      qr.ecn_marked = q.ecn_marked;
      qr.paused_ps = q.paused_ps;
      qr.watchdog_drops = q.watchdog_drops;
      rep.queues.push_back(qr);
    }
  }
  rep.flows_unrecorded = net.flows_unrecorded();
  // Completion times over every delivered message: exact from the records while they hold
  // all of a kind, else from the network's histograms (within 0.1 %).
  static_assert(TrafficPlayer::kTagBit == uint64_t{1} << 63, "fct_histogram(true): traffic");
  std::vector<int64_t> fct[2];
  for (const FlowRecord& f : net.flows()) fct[f.tag >> 63].push_back(f.end_ps - f.start_ps);
  QuantileHistogram all = net.fct_histogram(false);
  all.merge(net.fct_histogram(true));
  const auto summary = [](const QuantileHistogram& h, std::vector<int64_t> recorded) {
    return h.count() == static_cast<int64_t>(recorded.size()) ? fct_summary(std::move(recorded))
                                                              : fct_summary(h);
  };
  rep.fct_messages = summary(net.fct_histogram(false), fct[0]);
  rep.fct_traffic = summary(net.fct_histogram(true), fct[1]);
  fct[0].insert(fct[0].end(), fct[1].begin(), fct[1].end());
  rep.fct_all = summary(all, std::move(fct[0]));
  for (const FlowRecord& f : net.flows()) {
    FlowRow fr;
    fr.id = static_cast<int64_t>(f.seq);
    fr.src = f.src;
    fr.dst = f.dst;
    fr.qp = f.qp;
    fr.traffic_class = f.tc;
    fr.bytes = f.bytes;
    fr.start_ps = f.start_ps;
    fr.end_ps = f.end_ps;
    fr.retransmitted_packets = f.retransmitted_packets;
    fr.traffic = (f.tag & TrafficPlayer::kTagBit) != 0;
    rep.flows.push_back(fr);
  }
}

/// The `nccl.` key a variable maps to (for errors), or the variable itself.
std::string nccl_key_of(const std::string& variable) {
  for (const auto& [v, k] : kNcclVariables) {
    if (variable == v && *k != '\0') return std::string("nccl.") + k;
  }
  return variable;
}

/// The scenario's `measured.nccl_tests` log, resolved against the scenario's folder and parsed;
/// its collective and rank count must be the workload's. Throws ConfigError (exit 2) at the key
/// for a log that cannot be read or does not match.
NcclLog measured_log(const Scenario& sc, const NcclRunSetup& setup) {
  const std::string key = "measured.nccl_tests";
  if (!sc.has_workload) {
    throw key_error(sc, key,
                    "a measured log is compared with the workload's sweep, and this "
                    "scenario has none; expected a workload section, or no measured log");
  }
  const std::filesystem::path p(sc.measured_nccl_tests);
  const std::string path =
      p.is_absolute()
          ? p.string()
          : (std::filesystem::path(sc.path).parent_path() / p).lexically_normal().string();
  NcclLog log;
  try {
    log = parse_nccl_tests_file(path);
  } catch (const ParseError& e) {
    throw key_error(sc, key, e.what());
  }
  if (log.collective != sc.workload.collective || log.nranks != setup.layout.ranks) {
    throw key_error(sc, key,
                    path + " ran " +
                        (log.collective.empty() ? "an unnamed collective" : log.collective) +
                        " on " + std::to_string(log.nranks) + " ranks, the workload runs " +
                        sc.workload.collective + " on " + std::to_string(setup.layout.ranks) +
                        "; expected the same collective and rank count (workload.collective, "
                        "workload.ngpus)");
  }
  return log;
}

/// An AllReduce among `ranks` GPUs, `per_server` of them in each server, with the run's NCCL
/// settings, latencies and channels (NCCL's cost model sees that group).
NcclRunSetup group_setup(const Scenario& sc, const NcclRunSetup& base, int ranks, int per_server) {
  NcclRunSetup s = base;
  s.collective = "all_reduce";
  s.algorithm = "auto";
  s.protocol = "auto";
  s.root = 0;
  s.layout = RankLayout{ranks, per_server};
  s.rank_hosts.clear();
  NcclTuneInputs& t = s.tune;
  t.nranks = ranks;
  t.nnodes = s.layout.servers();
  if (ranks % per_server != 0) {
    t.nnodes = ranks <= per_server ? 1 : ranks;
    s.settings.algo.allowed[static_cast<int>(NcclAlgo::kTree)] = false;
  }
  t.bw_intra_GBps = t.nnodes == 1 && per_server > 1 && sc.link.nvlink_rate_bps > 0
                        ? static_cast<double>(sc.link.nvlink_rate_bps) / 8e9 / s.channels
                        : t.bw_inter_GBps;
  return s;
}

/// The scenario's training step on this fabric (collectives/step_model.hpp): rank r on GPU r,
/// dp defaulting to every GPU / (tp × pp), the DDP buckets' and TP groups' AllReduces planned
/// as NCCL would for their groups (float gradients). Throws ConfigError (exit 2) at the
/// training key for a step the fabric cannot hold or the model refuses.
StepPlan training_plan(const Scenario& sc, const Fabric& fabric, const NcclRunSetup& base) {
  const TrainingConfig& t = sc.training;
  const int g = std::max(1, fabric.gpus_per_server);
  const int hosts = static_cast<int>(fabric.hosts.size());
  ParallelSpec p;
  p.tp = t.tp;
  p.pp = t.pp;
  p.microbatches = t.microbatches;
  p.bucket_cap_bytes = t.bucket_cap_bytes;
  p.first_bucket_cap_bytes = t.first_bucket_cap_bytes;
  p.optimizer_ps = t.optimizer_ps;
  p.gpus_per_server = g;
  p.dp = t.dp > 0 ? t.dp : hosts / (t.tp * t.pp);
  const int64_t needed = int64_t{std::max(1, p.dp)} * p.tp * p.pp;
  if (p.dp < 1 || needed > hosts) {
    throw key_error(sc, t.dp > 0 ? "training.dp" : "training.tp",
                    "dp x tp x pp = " + std::to_string(std::max(1, p.dp)) + " x " +
                        std::to_string(p.tp) + " x " + std::to_string(p.pp) + " = " +
                        std::to_string(needed) + " GPUs, but the fabric has " +
                        std::to_string(hosts) + "; expected at most " + std::to_string(hosts));
  }
  std::vector<LayerSpec> layers;
  for (const TrainingLayer& l : sc.training.layers) {
    for (int i = 0; i < l.count; ++i) {
      layers.push_back({l.count == 1 ? l.name : l.name + "[" + std::to_string(i) + "]", l.fwd_ps,
                        l.bwd_ps, l.param_bytes, l.tp_comm_bytes, l.activation_bytes});
    }
  }
  constexpr int kElem = 4;  // float gradients
  const GroupCollective allreduce = [&](int ranks, int per_server, int64_t bytes) {
    const NcclRunSetup s = group_setup(sc, base, ranks, per_server);
    const SizePlan plan = plan_size(s, std::max<int64_t>(kElem, bytes), kElem);
    return build_collective(s.layout, plan.spec, plan.buffer_count, kElem);
  };
  try {
    return build_training_step(layers, p, allreduce);
  } catch (const std::invalid_argument& e) {
    throw key_error(sc, "training", e.what());
  }
}

/// The workload's collective setup on this fabric: ranks and servers, NCCL's settings and
/// channels, the cost model's view of the links. Throws ConfigError (exit 2) for a workload the
/// fabric or the algorithms cannot run.
NcclRunSetup nccl_setup(const Scenario& sc, const Fabric& fabric) {
  const WorkloadConfig& w = sc.workload;
  NcclRunSetup setup;
  setup.collective = w.collective;
  setup.algorithm = w.algorithm;
  setup.protocol = w.protocol;
  const int hosts = static_cast<int>(fabric.hosts.size());
  const int server_gpus = std::max(1, fabric.gpus_per_server);
  const int per_server = w.ranks_per_server > 0 ? w.ranks_per_server : server_gpus;
  if (per_server > server_gpus) {
    throw key_error(sc, "workload.ranks_per_server",
                    "ranks_per_server is " + std::to_string(per_server) + " but a server has " +
                        std::to_string(server_gpus) + " GPU" + (server_gpus == 1 ? "" : "s") +
                        "; expected 1 to " + std::to_string(server_gpus));
  }
  // Ranks fill servers R at a time (rank r on GPU r mod R of server r / R), as mpirun
  // -npernode R places them.
  const int capacity = hosts / server_gpus * per_server;
  const int ranks = w.ngpus > 0 ? w.ngpus : capacity;
  if (ranks > capacity) {
    throw key_error(sc, "workload.ngpus",
                    "ngpus is " + std::to_string(ranks) + " but the fabric has " +
                        std::to_string(hosts) + " GPUs" +
                        (per_server < server_gpus
                             ? ", " + std::to_string(capacity) + " of them at ranks_per_server " +
                                   std::to_string(per_server)
                             : std::string()) +
                        "; expected at most " + std::to_string(capacity));
  }
  const bool rooted = w.collective == "broadcast" || w.collective == "reduce";
  if (sc.origins.count("workload.root") && !rooted) {
    throw key_error(sc, "workload.root",
                    "root applies to broadcast and reduce only, not to " + w.collective);
  }
  if (w.root >= ranks) {
    throw key_error(sc, "workload.root",
                    "root " + std::to_string(w.root) + " is not a rank; expected 0 to " +
                        std::to_string(ranks - 1));
  }
  setup.root = w.root;
  if (w.algorithm != "auto" && !algorithm_supports(w.algorithm, w.collective)) {
    std::string runs;
    for (const char* a : {"ring", "tree", "halving_doubling", "p2p"}) {
      if (algorithm_supports(a, w.collective)) runs += std::string(runs.empty() ? "" : ", ") + a;
    }
    throw key_error(sc, "workload.algorithm",
                    "algorithm " + w.algorithm + " does not run " + w.collective +
                        "; expected auto or " + runs);
  }
  if ((w.collective == "alltoall" || w.collective == "sendrecv") && w.protocol == "ll128") {
    throw key_error(sc, "workload.protocol",
                    w.collective +
                        " runs on NCCL's point-to-point path, which has LL and Simple "
                        "only; expected auto, ll or simple");
  }
  try {
    setup.settings = parse_nccl_env(nccl_variables(sc));
  } catch (const NcclSettingError& e) {
    std::string key = nccl_key_of(e.variable);
    // nccl.nchannels sets both bounds: point at it when it is what gave this one.
    if ((key == "nccl.min_nchannels" || key == "nccl.max_nchannels") && !sc.origins.count(key) &&
        sc.origins.count("nccl.nchannels")) {
      key = "nccl.nchannels";
    }
    throw key_error(sc, key, e.message);
  }
  // Where a nccl setting came from, for messages that blame another key.
  const auto from = [&](const std::string& key) {
    const auto it = sc.origins.find(key);
    if (it == sc.origins.end()) return std::string();
    const KeyOrigin& o = it->second;
    return " (" + o.where +
           (o.line > 0 ? ":" + std::to_string(o.line) + ":" + std::to_string(o.column) : "") + ")";
  };
  if ((w.algorithm == "ring" || w.algorithm == "tree") &&
      !setup.settings.algo.allows(parse_nccl_algo(w.algorithm))) {
    throw key_error(sc, "workload.algorithm",
                    "workload.algorithm " + w.algorithm + " is excluded by nccl.algo " +
                        sc.nccl.algo + from("nccl.algo") +
                        "; expected one algorithm setting that allows it");
  }
  if (w.protocol != "auto" && setup.settings.proto.set_by_user &&
      !setup.settings.proto.allowed[static_cast<int>(parse_nccl_proto(w.protocol))]) {
    throw key_error(sc, "workload.protocol",
                    "workload.protocol " + w.protocol + " is excluded by nccl.proto " +
                        sc.nccl.proto + from("nccl.proto") +
                        "; expected one protocol setting that allows it");
  }

  const int g = per_server;
  setup.layout = RankLayout{ranks, g};
  if (per_server != server_gpus) {
    setup.rank_hosts.resize(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      setup.rank_hosts[static_cast<size_t>(r)] = r / g * server_gpus + r % g;
    }
  }
  if (ranks % g != 0) {
    // NCCL's trees join whole nodes; with a partial server only the ring (and the others) run.
    if (w.algorithm == "tree") {
      throw key_error(sc, "workload.algorithm",
                      "tree joins whole servers, but ngpus " + std::to_string(ranks) +
                          " is not a multiple of the " + std::to_string(g) +
                          " GPUs per server; expected auto, ring or halving_doubling, or ngpus a "
                          "multiple of " +
                          std::to_string(g));
    }
    setup.settings.algo.allowed[static_cast<int>(NcclAlgo::kTree)] = false;
  }
  if (w.algorithm == "auto" && w.collective != "alltoall" && w.collective != "sendrecv") {
    bool any = false;
    for (NcclAlgo a : {NcclAlgo::kTree, NcclAlgo::kRing}) {
      any |= nccl_algo_supported(w.collective, a) && setup.settings.algo.allows(a);
    }
    if (!any) {
      setup.note = "NCCL_ALGO " + sc.nccl.algo + " leaves no algorithm for " + w.collective +
                   " here; NCCL falls back to Ring, and so does fabricsim";
      std::fprintf(stderr, "fabricsim: note: %s\n", setup.note.c_str());
    }
  }
  // The NICs the ranks of one server use: on a rail-optimized server NIC n hangs off GPU n mod G
  // (rail_optimized.hpp), and the ranks sit on GPUs 0 to R − 1; on the other families' servers
  // (topologies/servers.hpp) every GPU has one NIC.
  int nics = fabric.kind == "rail-optimized" ? 1 : g;
  if (fabric.kind == "rail-optimized") {
    const int n_nics = sc.topology.nics_per_server > 0 ? sc.topology.nics_per_server : server_gpus;
    nics = 0;
    for (int n = 0; n < n_nics; ++n) nics += n % server_gpus < g ? 1 : 0;
    nics = std::max(1, nics);
  }
  // NCCL opens two channels per NIC on InfiniBand/RoCE (its ring search duplicates the
  // channels it finds); NCCL_MIN/MAX_NCHANNELS bound the count.
  int channels = std::min(2 * nics, kNcclMaxChannelsAccepted);
  if (setup.settings.min_nchannels > 0) channels = std::max(channels, setup.settings.min_nchannels);
  if (setup.settings.max_nchannels > 0) channels = std::min(channels, setup.settings.max_nchannels);
  setup.channels = channels;

  NcclTuneInputs& t = setup.tune;
  t.nranks = ranks;
  t.nnodes = setup.layout.servers();
  // NCCL's model takes equal nodes: a partial last server is modelled as one-GPU nodes (Tree
  // is off then, above); ranks within one server are one node.
  if (ranks % g != 0) t.nnodes = ranks <= g ? 1 : ranks;
  t.nchannels = channels;
  const double nic_GBps = static_cast<double>(sc.link.host_rate_bps) / 8e9;
  t.bw_inter_GBps = nic_GBps * nics / channels;
  // NCCL's ring graph has bwIntra = bwInter (the NIC limits) as soon as there is a network;
  // NVLink's speed counts only inside a single server.
  t.bw_intra_GBps = t.nnodes == 1 && g > 1 && sc.link.nvlink_rate_bps > 0
                        ? static_cast<double>(sc.link.nvlink_rate_bps) / 8e9 / channels
                        : t.bw_inter_GBps;
  t.intra_hw = NcclHw::kNvlink;
  t.gpu_nic_path = NcclPathType::kPix;  // a GPU and its NIC under one PCIe switch (DGX)
  setup.staged = t.gpu_nic_path > setup.settings.net_gdr_level ||
                 effective_net(setup.settings) == NcclNet::kSocket;
  setup.pcie_rate_bps = sc.link.pcie_rate_bps;
  setup.pcie_latency_ps = sc.link.pcie_latency_ps;
  setup.step_latency_ps = sc.nccl.step_latency_ps;
  setup.launch_latency_ps = sc.nccl.launch_latency_ps;

  // Refuse up front a sweep whose largest DAG would not fit in memory (~100 B per transfer,
  // twice while it is built), rather than be killed by the OOM killer hours in.
  constexpr int64_t kMaxTransfers = 10'000'000;
  const int elem = datatype_bytes(w.datatype);
  int64_t worst = 0, worst_size = 0;
  for (int64_t size : sweep_sizes(w.minbytes, w.maxbytes, w.stepfactor, elem)) {
    const SizePlan plan = plan_size(setup, size, elem);
    const int64_t t = sc.mode == "flow"
                          ? estimate_flows(setup.layout, plan.spec)
                          : estimate_transfers(setup.layout, plan.spec, plan.buffer_count, elem);
    if (t > worst) {
      worst = t;
      worst_size = size;
    }
  }
  if (worst > kMaxTransfers && sc.mode == "flow") {
    throw key_error(sc, "mode",
                    "size " + format_size(worst_size) + " would run as " + std::to_string(worst) +
                        " flows (the flow mode's " + w.collective +
                        " has one per connection of its ranks); expected at most " +
                        std::to_string(kMaxTransfers));
  }
  if (worst > kMaxTransfers) {
    throw key_error(sc, "workload.maxbytes",
                    "size " + format_size(worst_size) + " would replay as " +
                        std::to_string(worst) + " transfers (about " +
                        std::to_string(worst * 200 / (1 << 20)) +
                        " MiB while built); expected at most " + std::to_string(kMaxTransfers) +
                        ": lower workload.maxbytes, or raise nccl.buffsize (NCCL_BUFFSIZE) for "
                        "fewer, larger chunks");
  }
  return setup;
}

}  // namespace

RunReport report_header(const Scenario& sc, const Prepared& prepared) {
  RunReport rep;
  rep.scenario = sc.name;
  rep.seed = sc.seed;
  rep.mode = sc.mode;
  rep.fabric = summarize(sc, prepared.fabric);
  if (sc.has_workload) {
    const NcclRunSetup& n = prepared.nccl;
    rep.nccl.ranks = n.layout.ranks;
    rep.nccl.servers = n.layout.servers();
    rep.nccl.gpus_per_server = n.layout.gpus_per_server;
    rep.nccl.channels = n.channels;
    rep.nccl.transport = effective_net(n.settings) == NcclNet::kSocket ? "Socket" : "IB";
    rep.nccl.gdr = !n.staged;
    rep.nccl.algo = sc.nccl.algo;
    rep.nccl.proto = sc.nccl.proto;
    for (NcclProto p : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
      rep.nccl.buffsize_bytes.emplace_back(to_string(p), nccl_buffsize_bytes(p, n.settings));
    }
    rep.nccl.min_nchannels = n.settings.min_nchannels;
    rep.nccl.max_nchannels = n.settings.max_nchannels;
    rep.nccl.net_gdr_level = to_string(n.settings.net_gdr_level);
    rep.nccl.step_latency_ps = n.step_latency_ps;
    rep.nccl.launch_latency_ps = n.launch_latency_ps;
    for (const auto& [key, assignment] : sc.nccl.from_env)
      rep.nccl.environment.push_back(assignment);
  }
  rep.has_workload = sc.has_workload;
  rep.has_training = sc.training.enabled;
  return rep;
}

/// The message sizes of the workload's sweep (none without a workload).
std::vector<int64_t> workload_sizes(const Scenario& sc) {
  const int elem = datatype_bytes(sc.workload.datatype);
  return sc.has_workload
             ? sweep_sizes(sc.workload.minbytes, sc.workload.maxbytes, sc.workload.stepfactor, elem)
             : std::vector<int64_t>{};
}

/// The row of one size, before it runs: what NCCL would choose and the nccl-tests columns.
CollectiveRow plan_row(const Scenario& sc, const NcclRunSetup& setup, const SizePlan& plan) {
  CollectiveRow row;
  row.collective = sc.workload.collective;
  row.algorithm = plan.algorithm;
  row.protocol = plan.protocol;
  row.nccl_model_time_us = plan.nccl_model_time_us;
  row.channels = plan.spec.channels;
  row.datatype = sc.workload.datatype;
  row.redop = nccl_tests_redop(row.collective, sc.workload.redop);
  row.root = nccl_tests_root(row.collective, setup.root);
  row.ranks = setup.layout.ranks;
  row.size_bytes = plan.size.size_bytes;
  row.count = plan.size.count;
  return row;
}

MeasuredComparison compare_measured(const Scenario& sc, const NcclLog& log,
                                    const std::vector<CollectiveRow>& rows);

/// The collective transport of the flow mode: ranks' transfers as FlowNetwork flows.
class FlowTransport final : public CollectiveTransport, public CompletionSink {
 public:
  FlowTransport(Simulator& sim, FlowNetwork& net, std::vector<int> rank_hosts)
      : sim_(sim), net_(net), rank_hosts_(std::move(rank_hosts)) {
    net_.set_sink(this);
  }
  void attach(DagReplayer* replayer) { replayer_ = replayer; }
  int host(int rank) const {
    return rank_hosts_.empty() ? rank : rank_hosts_[static_cast<size_t>(rank)];
  }
  void send(int src_rank, int dst_rank, int64_t bytes, uint32_t flow, uint64_t tag) override {
    net_.send(host(src_rank), host(dst_rank), bytes, flow, tag);
  }
  void post_after(int64_t delay_ps, uint64_t tag, int /*src_rank*/) override {
    // The flow model is one LP (FlowNetwork::lp): its tasks post there.
    sim_.at<&FlowTransport::on_post>(sim_.now() + SimTime(delay_ps), net_.lp(), this, tag);
  }
  SimTime now() const override { return sim_.now(); }
  void on_message_complete(uint64_t tag) override {
    replayer_->complete(tag);
    if (replayer_->done()) sim_.request_stop();
  }
  void on_post(uint64_t tag) {
    replayer_->post(tag);
    if (replayer_->done()) sim_.request_stop();
  }

 private:
  Simulator& sim_;
  FlowNetwork& net_;
  std::vector<int> rank_hosts_;
  DagReplayer* replayer_ = nullptr;
};

/// What the flow mode cannot run, refused at the key `mode` (exit 2).
void check_flow_mode(const Scenario& sc, const Fabric& fabric) {
  if (!sc.traffic.empty() || sc.training.enabled) {
    throw key_error(sc, "mode",
                    std::string("the flow mode runs the workload's collectives; ") +
                        (sc.training.enabled ? "a training step needs" : "traffic flows need") +
                        " the packet mode (mode: packet)");
  }
  // Its routes are fixed paths (valley-free on a Clos, dimension order on a torus): it neither
  // routes around failed links nor runs other routing algorithms (both
  // ended in an internal error, or were silently ignored).
  if (!sc.topology.failed_links.empty()) {
    throw key_error(sc, "topology.failed_links",
                    "the flow mode does not route around failed links; use the packet mode "
                    "(mode: packet)");
  }
  if (sc.routing.algorithm != "auto") {
    throw key_error(sc, "routing.algorithm",
                    "the flow mode routes by the fabric's default (valley-free up-down with "
                    "per-flow ECMP on a Clos, dimension order on a torus); expected auto, or the "
                    "packet mode for " +
                        sc.routing.algorithm);
  }
  // Each silently ignored before: a QP rate limit, and the chain of a
  // broadcast or reduce through multi-GPU servers (its pipeline fill is a closed form for one
  // GPU per server: 2 to 13 times the packet model's time with 2 to 8 GPUs per server).
  if (sc.nic.qp_rate_limit_bps > 0) {
    throw key_error(sc, "nic.qp_rate_limit",
                    "the flow mode does not model a per-QP rate limit; use the packet mode "
                    "(mode: packet)");
  }
  if (sc.has_workload &&
      (sc.workload.collective == "broadcast" || sc.workload.collective == "reduce") &&
      fabric.gpus_per_server > 1) {
    throw key_error(sc, "workload.collective",
                    "the flow mode's " + sc.workload.collective +
                        " is checked on one GPU per server only (with " +
                        std::to_string(fabric.gpus_per_server) +
                        " it is off by a factor of 2 to 13); use the packet mode (mode: packet)");
  }
  if (sc.has_workload && sc.workload.algorithm == "halving_doubling") {
    throw key_error(sc, "workload.algorithm",
                    "the flow mode runs NCCL's algorithms (ring, tree, p2p); halving_doubling "
                    "needs the packet mode (mode: packet)");
  }
  try {
    FlowRouter router(fabric, sc.seed);
  } catch (const std::invalid_argument& e) {
    throw key_error(sc, "mode", e.what());
  }
}

/// `run` in the flow mode: each size's collective as max-min fair flows (sim/flow,
/// collectives/flow_plan.hpp). Counters of queues, PFC, ECN and drops stay 0: not modelled.
RunReport simulate_flows(const Scenario& sc, const Prepared& prepared,
                         const std::atomic<bool>* interrupt, bool progress, uint64_t max_events) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Fabric& fabric = prepared.fabric;
  RunReport rep = report_header(sc, prepared);
  rep.stop_reason = to_string(StopReason::kWorkloadDone);
  const NetConfig n = net_config_for(sc);
  const FlowConfig cfg = flow_config_for(n);
  const FlowRouter router(fabric, sc.seed);
  Simulator sim;
  sim.set_interrupt_flag(interrupt);
  sim.set_event_cap(max_events);
  FlowNetwork net(sim, fabric, router, cfg);
  const NcclRunSetup& setup = prepared.nccl;
  FlowTransport transport(sim, net, setup.rank_hosts);
  const int elem = datatype_bytes(sc.workload.datatype);
  const auto sizes = workload_sizes(sc);
  int64_t events = 0;
  for (size_t i = 0; i < sizes.size() && rep.complete; ++i) {
    const SizePlan plan = plan_size(setup, sizes[i], elem);
    CollectiveRow row = plan_row(sc, setup, plan);
    if (plan.buffer_count == 0) {
      rep.rows.push_back(row);
      continue;
    }
    // α of a hop: the uncongested latency of a message of one chunk (or the whole transfer).
    const int64_t probe = plan.spec.chunk_bytes > 0 ? plan.spec.chunk_bytes : n.mtu_bytes;
    const TransferDag dag = build_collective_flows(
        setup.layout, plan.spec, plan.buffer_count, elem, [&](int src, int dst) {
          const int a = transport.host(src), b = transport.host(dst);
          return Hop{net.path_latency_ps(a, b, 0, std::min<int64_t>(probe, n.mtu_bytes)),
                     net.path_rate_bps(a, b, 0)};
        });
    DagReplayer replayer(dag, transport);
    transport.attach(&replayer);
    replayer.start();
    StopReason why = StopReason::kWorkloadDone;
    if (!replayer.done()) why = sim.run(SimTime::max());
    transport.attach(nullptr);
    if (progress) {
      std::fprintf(stderr, "\r[fabricsim] flow mode: size %zu/%zu done   ", i + 1, sizes.size());
    }
    if (why != StopReason::kWorkloadDone || !replayer.done()) {
      rep.complete = false;
      if (why == StopReason::kInterrupted) {
        rep.interrupted = true;
        rep.stop_reason = "interrupted during size " + std::to_string(sizes[i]) + " B";
      } else if (why == StopReason::kEventCap) {
        rep.limited = true;
        rep.stop_reason = "stopped at --max-events " + std::to_string(max_events) +
                          " during size " + std::to_string(sizes[i]) + " B";
      } else {
        rep.stop_reason = "stalled during size " + std::to_string(sizes[i]) +
                          " B: " + std::to_string(replayer.completed()) + " of " +
                          std::to_string(dag.size()) +
                          " flows completed (a failed link with no way around it?)";
      }
      break;
    }
    row.time_ps = (replayer.finish_time() - replayer.start_time()).ps();
    row.algbw_GBps = algbw_GBps(row.size_bytes, row.time_ps);
    row.busbw_GBps = row.algbw_GBps * busbw_factor(row.collective, row.ranks);
    rep.rows.push_back(row);
  }
  if (progress) std::fprintf(stderr, "\r%*s\r", 100, "");
  events += static_cast<int64_t>(sim.events_executed());
  rep.events = events;
  rep.simulated_ps = sim.now().ps();
  rep.flow_stats = FlowStats{net.flows_completed(), net.reallocations(), net.max_active_flows(),
                             net.link_bytes()};
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rep.peak_rss_bytes = peak_rss_bytes();
  if (prepared.measured) rep.measured = compare_measured(sc, *prepared.measured, rep.rows);
  return rep;
}

static Prepared plan_workload(const Scenario& sc, Fabric fabric,
                              std::optional<RoutingTable> routes);

Prepared prepare(Scenario& sc) {
  // An allocation that fails below names what was being built (sim/core/memory_budget.hpp).
  Fabric fabric = building([&] { return build_fabric(sc); }, "the " + sc.topology.kind + " fabric");
  for (const std::string& w : fabric.warnings) {  // once, though a sweep prepares points twice
    if (std::find(sc.warnings.begin(), sc.warnings.end(), w) == sc.warnings.end()) {
      sc.warnings.push_back(w);
    }
  }
  std::vector<std::string> switch_names;
  for (auto v : boost::make_iterator_range(boost::vertices(fabric.graph))) {
    if (fabric.graph[v].kind == NodeKind::kSwitch) switch_names.push_back(fabric.graph[v].name);
  }
  check_switch_overrides(sc, switch_names);
  std::vector<std::string> host_names;
  for (VertexId h : fabric.hosts) host_names.push_back(fabric.graph[h].name);
  resolve_traffic(sc, host_names);
  check_runnable(sc, fabric);
  std::optional<RoutingTable> routes;
  if (sc.mode == "flow") {
    check_flow_mode(sc, fabric);
  } else {
    routes.emplace(building([&] { return build_routes(sc, fabric); },
                            "the routing tables (" + std::to_string(fabric.hosts.size()) +
                                " GPUs x " + std::to_string(boost::num_vertices(fabric.graph)) +
                                " nodes)"));
    check_lossless(sc, fabric, *routes);
  }
  if (!sc.has_workload && !sc.training.enabled) {
    for (const auto& [key, origin] : sc.origins) {
      if (key.rfind("nccl.", 0) == 0 && origin.where.rfind("environment", 0) != 0) {
        throw key_error(sc, key,
                        "the nccl settings apply to a workload's collectives, and this scenario "
                        "has none (only traffic flows); expected a workload section, or no nccl "
                        "settings");
      }
    }
  }
  return building([&] { return plan_workload(sc, std::move(fabric), std::move(routes)); },
                  "the workload's plan (NCCL setup, collectives, step)");
}

/// prepare()'s last part: the workload's NCCL setup, measured log and training step plan.
static Prepared plan_workload(const Scenario& sc, Fabric fabric,
                              std::optional<RoutingTable> routes) {
  NcclRunSetup nccl;
  if (sc.has_workload) {
    nccl = nccl_setup(sc, fabric);
    if (sc.mode == "flow" && nccl.staged) {  // before: silently run as GPUDirect
      throw key_error(sc, "mode",
                      "the flow mode does not model NCCL's staging through host memory "
                      "(GPUDirect RDMA off, as nccl.net_gdr_level or nccl.ib_disable set it "
                      "here); use the packet mode (mode: packet)");
    }
  } else if (sc.training.enabled) {  // NCCL's settings for the step's collectives alone
    Scenario alone = sc;
    alone.workload.minbytes = alone.workload.maxbytes = 1024;
    nccl = nccl_setup(alone, fabric);
  }
  std::optional<NcclLog> measured;
  if (!sc.measured_nccl_tests.empty()) measured = measured_log(sc, nccl);
  std::optional<StepPlan> step;
  if (sc.training.enabled) step = training_plan(sc, fabric, nccl);
  return Prepared{std::move(fabric), std::move(routes), std::move(nccl), std::move(measured),
                  std::move(step)};
}

TrainingSummary training_summary(const Scenario& sc, const Fabric& fabric, const StepPlan& plan,
                                 const DagReplayer& replayer, const Network& net) {
  const StepResult r = analyze_step(plan, replayer);
  TrainingSummary t;
  t.dp = plan.dp;
  t.tp = plan.tp;
  t.pp = plan.pp;
  t.microbatches = sc.training.microbatches;
  t.ranks = plan.ranks;
  for (const TrainingLayer& l : sc.training.layers) t.layers += l.count;
  t.buckets = static_cast<int>(plan.buckets.size());
  t.step_ps = r.step_ps;
  t.compute_ps = r.compute_ps;
  t.exposed_comm_ps = r.exposed_comm_ps;
  t.gpu_utilization = r.gpu_utilization;
  t.critical_rank = r.critical_rank;
  t.cp_compute_ps = r.critical_path.compute_ps;
  t.cp_software_ps = r.critical_path.software_ps;
  const int g = std::max(1, fabric.gpus_per_server);
  for (const uint32_t id : r.critical_path_ids) {
    const Transfer& x = plan.dag.transfer(id);
    if (x.is_compute()) continue;
    const bool nvlink = x.src_rank / g == x.dst_rank / g && sc.link.nvlink_rate_bps > 0;
    const int64_t rate = nvlink ? sc.link.nvlink_rate_bps : sc.link.host_rate_bps;
    const int64_t network = (replayer.completed_time(id) - replayer.posted_time(id)).ps();
    const int64_t link = std::min(
        network, static_cast<int64_t>(std::llround(static_cast<double>(x.bytes) * 8e12 / rate)));
    t.cp_link_ps += link;
    // Rank r runs on host r in a training step (training_plan); NVLink is never paused.
    if (!nvlink) {
      t.cp_pfc_pause_ps +=
          std::min(network - link, net.host_paused_ps(x.src_rank, replayer.posted_time(id).ps(),
                                                      replayer.completed_time(id).ps()));
    }
  }
  t.cp_waiting_ps = r.critical_path.network_ps - t.cp_link_ps;
  t.cp_queueing_ps = t.cp_waiting_ps - t.cp_pfc_pause_ps;
  return t;
}

MeasuredComparison compare_measured(const Scenario& sc, const NcclLog& log,
                                    const std::vector<CollectiveRow>& rows) {
  MeasuredComparison m;
  m.path = sc.measured_nccl_tests;  // as written: not how the scenario's own path was typed
  std::map<int64_t, const NcclLogRow*> by_size;
  for (const NcclLogRow& r : log.rows) {
    if (r.oop_time_us > 0 && r.size_bytes > 0) by_size.emplace(r.size_bytes, &r);
  }
  std::vector<std::pair<double, double>> pairs;
  for (const CollectiveRow& row : rows) {
    const auto it = by_size.find(row.size_bytes);
    if (it == by_size.end() || row.time_ps <= 0) continue;
    const double measured = nccl_row_busbw_GBps(log, *it->second);
    m.points.push_back(
        {row.size_bytes, measured, row.busbw_GBps, (row.busbw_GBps - measured) / measured * 100.0});
    pairs.emplace_back(measured, row.busbw_GBps);
  }
  if (!pairs.empty()) std::tie(m.median_abs_pct_error, m.max_abs_pct_error) = abs_pct_errors(pairs);
  return m;
}

namespace {

/// The sequential engine: Simulator::run, the transport stopping it when a phase is done.
class SequentialEngine final : public PacketEngine {
 public:
  void attach(Simulator& sim, Network&, PacketTransport&) override { sim_ = &sim; }
  void begin_phase(std::function<std::pair<size_t, int64_t>()>, size_t) override {}
  StopReason step(int64_t limit_ps, int64_t* finished_at_ps) override {
    const StopReason why = sim_->run(SimTime(limit_ps), 2'000'000);
    if (why == StopReason::kWorkloadDone) *finished_at_ps = sim_->now().ps();
    return why;
  }
  int64_t sum(int64_t v) override { return v; }
  int64_t max(int64_t v) override { return v; }
  void max_in_place(std::vector<int64_t>&) override {}
  uint64_t events() override { return sim_->events_executed(); }
  void finish() override {}

 private:
  Simulator* sim_ = nullptr;
};

std::unique_ptr<PacketEngine> (*g_engine_factory)(const Prepared&) = nullptr;

}  // namespace

void set_packet_engine_factory(std::unique_ptr<PacketEngine> (*factory)(const Prepared&)) {
  g_engine_factory = factory;
}

/// The time a phase runs on after its workload finished (see simulate_packets): the smallest
/// non-zero propagation delay of any link, picoseconds (0 if every link has none).
static int64_t settle_gap_ps(const Network& net) {
  int64_t gap = 0;
  for (const Port& p : net.ports()) {
    if (p.delay_ps > 0 && (gap == 0 || p.delay_ps < gap)) gap = p.delay_ps;
  }
  return gap;
}

/// The packet model's simulate().
static RunReport simulate_packets(const Scenario& sc, const Prepared& prepared,
                                  const std::atomic<bool>* interrupt, bool progress,
                                  ChromeTrace* trace, uint64_t max_events) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Fabric& fabric = prepared.fabric;
  const RoutingTable& routes = *prepared.routes;
  std::unique_ptr<PacketEngine> engine =
      g_engine_factory != nullptr ? g_engine_factory(prepared) : nullptr;
  if (engine == nullptr) engine = std::make_unique<SequentialEngine>();
  Simulator sim;
  sim.set_interrupt_flag(interrupt);
  sim.set_event_cap(max_events);
  Network net(sim, fabric, routes, net_config_for(sc));
  PacketTransport transport(sim, net);
  transport.set_rank_hosts(prepared.nccl.rank_hosts);
  engine->attach(sim, net, transport);
  std::optional<TraceObserver> observer;
  if (!engine->traces(trace) && trace != nullptr) {
    observer.emplace(*trace, net);
    net.set_observer(&*observer);
  }

  RunReport rep = report_header(sc, prepared);
  const auto sizes = workload_sizes(sc);
  const int elem = datatype_bytes(sc.workload.datatype);
  rep.stop_reason = to_string(StopReason::kWorkloadDone);
  auto last_progress = wall_start;

  // Explicit flows (traffic:) start at time 0, beside the sweep's first size.
  std::vector<TrafficPlayer::Flow> flows;
  for (size_t i = 0; i < sc.traffic.size(); ++i) {
    const TrafficFlow& t = sc.traffic[i];
    flows.push_back({t.src_host, t.dst_host, t.bytes, t.start_ps, t.priority,
                     static_cast<uint32_t>(t.flow >= 0 ? t.flow : static_cast<int64_t>(i))});
  }
  TrafficPlayer traffic(sim, net, std::move(flows));
  transport.attach_traffic(&traffic);
  traffic.start();

  // A phase (a size, the step, the traffic) ends `gap` after its workload finished: the
  // network runs on until then (ACKs, other traffic), and the next phase starts at that time.
  // A partitioned run learns that the workload finished only at the end of a window of at
  // most `gap` (the smallest cable delay, <= any cut link's): both agree on this time.
  const int64_t gap = settle_gap_ps(net);
  // Runs until the phase's workload is done (the transport stops the simulator) and `gap`
  // more; false, with rep.stop_reason set, if the run ended otherwise. `stalled` describes
  // what is missing.
  const auto run_phase = [&](const std::string& what, const std::string& label,
                             const std::function<std::string()>& stalled) {
    int64_t settle_until = -1;  // the workload finished (or a QP failed): run up to here
    for (;;) {
      StopReason why;
      int64_t finished_at = -1;
      try {
        why = engine->step(settle_until < 0 ? INT64_MAX : settle_until - 1, &finished_at);
      } catch (const std::overflow_error&) {
        rep.complete = false;
        rep.stop_reason = "simulated time overflow during " + what +
                          " (beyond int64 picoseconds, about 106 days)";
        return false;
      }
      if (why == StopReason::kEventLimit) {
        const auto now = std::chrono::steady_clock::now();
        if (progress && now - last_progress > std::chrono::seconds(1)) {
          last_progress = now;
          const double wall = std::chrono::duration<double>(now - wall_start).count();
          std::fprintf(stderr, "\r[fabricsim] %s, simulated %.3f us, %.2f M events/s   ",
                       label.c_str(), sim.now().us(),
                       static_cast<double>(sim.events_executed()) / wall / 1e6);
        }
        continue;
      }
      // With the PFC watchdog on, a deadlock found is reported but does not stop the run.
      const bool deadlocked = net.deadlock().detected_at_ps >= 0 && !net.config().pfc_watchdog;
      if (why == StopReason::kWorkloadDone && !deadlocked) {
        if (settle_until < 0) settle_until = finished_at + gap;
        continue;  // a later request (another QP failing) changes nothing
      }
      if (settle_until >= 0 && !deadlocked &&
          (why == StopReason::kStopTime || why == StopReason::kNoEvents)) {
        sim.advance_to(SimTime(settle_until));
        if (net.failure().empty()) return true;
        why = StopReason::kWorkloadDone;
      }
      rep.complete = false;
      // With the watchdog on, a deadlock it had not broken when a queue pair gave up is what
      // stopped the run: say so (exit 3), with the queue pair's failure.
      const bool deadlock_failed_qp = !net.failure().empty() &&
                                      net.deadlock().detected_at_ps >= 0 &&
                                      !net.deadlock().broken_by_watchdog;
      if ((deadlocked || deadlock_failed_qp) && why != StopReason::kInterrupted &&
          why != StopReason::kEventCap) {
        rep.deadlocked = true;
        rep.stop_reason = std::string(net.config().credits ? "credit" : "PFC") +
                          " deadlock during " + what + ": no packet in a cycle of " +
                          std::to_string(net.deadlock().cycle.size()) + " queues " +
                          (net.config().credits ? "without InfiniBand credits" : "paused by PFC") +
                          " can move (see deadlock in results.json)";
        if (!deadlocked) {
          rep.stop_reason += "; the PFC watchdog had not broken it when " + net.failure();
        }
      } else if (!net.failure().empty()) {
        rep.transport_failed = true;
        rep.stop_reason = "the transport gave up during " + what + ": " + net.failure();
      } else if (why == StopReason::kInterrupted) {
        rep.interrupted = true;
        rep.stop_reason = "interrupted during " + what;
      } else if (why == StopReason::kEventCap) {
        rep.limited = true;
        rep.stop_reason =
            "stopped at --max-events " + std::to_string(max_events) + " during " + what;
      } else {
        rep.stop_reason = "stalled during " + what + ": " + stalled() + " and no event left";
      }
      return false;
    }
  };

  // Sizes run back to back on one network, like one all_reduce_perf process (1 iteration each:
  // the idle network repeats exactly, so warm-up and averaging would change nothing).
  const NcclRunSetup& setup = prepared.nccl;
  for (size_t i = 0; i < sizes.size() && rep.complete; ++i) {
    const SizePlan plan = plan_size(setup, sizes[i], elem);
    CollectiveRow row = plan_row(sc, setup, plan);
    if (plan.buffer_count == 0) {  // NCCL returns at once for a count of 0: nothing moves
      rep.rows.push_back(row);
      continue;
    }
    const TransferDag dag = build_collective(setup.layout, plan.spec, plan.buffer_count, elem);
    transport.open_qps(dag);
    DagReplayer replayer(dag, transport);
    transport.attach(&replayer);
    engine->begin_phase(
        [&] { return std::make_pair(replayer.completed(), replayer.finish_time().ps()); },
        dag.size());
    replayer.start();
    char label[96];
    std::snprintf(label, sizeof label, "size %zu/%zu (%s)", i + 1, sizes.size(),
                  format_size(sizes[i]).c_str());
    const bool ok = run_phase("size " + std::to_string(sizes[i]) + " B", label, [&] {
      return std::to_string(engine->sum(static_cast<int64_t>(replayer.completed()))) + " of " +
             std::to_string(dag.size()) + " transfers completed";
    });
    transport.attach(nullptr);
    if (!ok) break;
    row.time_ps = engine->max(replayer.finish_time().ps()) - replayer.start_time().ps();
    row.algbw_GBps = algbw_GBps(row.size_bytes, row.time_ps);
    row.busbw_GBps = row.algbw_GBps * busbw_factor(row.collective, row.ranks);
    rep.rows.push_back(row);
  }
  // The step's replayer outlives its phase: its summary reads the network's pause intervals,
  // which a partitioned run has all on rank 0 only after finish().
  std::optional<DagReplayer> step_replayer;
  bool step_done = false;
  if (rep.complete && prepared.step) {
    const StepPlan& plan = *prepared.step;
    transport.set_rank_hosts({});  // step rank r runs on GPU r
    transport.open_qps(plan.dag);
    DagReplayer& replayer = step_replayer.emplace(plan.dag, transport);
    transport.attach(&replayer);
    engine->begin_phase(
        [&] { return std::make_pair(replayer.completed(), replayer.finish_time().ps()); },
        plan.dag.size());
    replayer.start();
    const bool ok =
        engine->sum(static_cast<int64_t>(replayer.completed())) <
                static_cast<int64_t>(plan.dag.size())
            ? run_phase(
                  "the training step", "training step",
                  [&] {
                    return std::to_string(engine->sum(static_cast<int64_t>(replayer.completed()))) +
                           " of " + std::to_string(plan.dag.size()) + " step tasks completed";
                  })
            : true;
    transport.attach(nullptr);
    // A partitioned run's ranks each hold the times of their own tasks: combine them.
    std::vector<int64_t> times = replayer.task_times();
    engine->max_in_place(times);
    replayer.set_task_times(times);
    if (ok) step_done = true;
  }
  if (rep.complete && engine->sum(static_cast<int64_t>(traffic.completed())) <
                          static_cast<int64_t>(traffic.size())) {
    engine->begin_phase(
        [&] { return std::make_pair(traffic.completed(), traffic.finish_time_ps()); },
        traffic.size());
    run_phase("the traffic flows", "traffic", [&] {
      return std::to_string(engine->sum(static_cast<int64_t>(traffic.completed()))) + " of " +
             std::to_string(traffic.size()) + " traffic flows completed";
    });
  }
  if (progress) std::fprintf(stderr, "\r%*s\r", 100, "");

  engine->finish();
  net.settle_statistics();
  if (step_done) {
    rep.training = training_summary(sc, fabric, *prepared.step, *step_replayer, net);
  }
  if (engine->reports()) net.check_invariants();  // every run: conservation, no lossless drop
  rep.events = static_cast<int64_t>(engine->events());
  rep.simulated_ps = sim.now().ps();
  fill_counters(net, rep);
  rep.packet_pool_packets = static_cast<int64_t>(net.packet_pool_capacity());
  rep.packet_struct_bytes = static_cast<int64_t>(Network::packet_bytes());
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  rep.peak_rss_bytes = peak_rss_bytes();
  if (prepared.measured) rep.measured = compare_measured(sc, *prepared.measured, rep.rows);
  if (rep.deadlock.detected_at_ps >= 0) rep.deadlock.fixes = deadlock_fixes(sc, fabric.kind);
  if (rep.simulated_ps > 0 && !fabric.hosts.empty()) {
    double paused = 0;
    for (size_t h = 0; h < fabric.hosts.size(); ++h) {
      paused += static_cast<double>(net.host_paused_ps(static_cast<int>(h), 0, rep.simulated_ps));
    }
    rep.mean_host_paused_fraction =
        paused / static_cast<double>(fabric.hosts.size()) / static_cast<double>(rep.simulated_ps);
  }
  rep.queue_pairs = static_cast<int64_t>(net.queue_pairs());
  rep.depends_on = congestion_dependence(sc, rep);
  return rep;
}

/// The end-of-run invariant on the workload: a complete run has a row for every size and the
/// training step's summary; an incomplete one says why. Throws std::logic_error (an internal
/// error, exit 1) otherwise, rather than print a table with sizes silently missing.
static void check_accounted(const Scenario& sc, const Prepared& prepared, const RunReport& rep) {
  if (!rep.complete) {
    if (rep.stop_reason.empty() || rep.stop_reason == to_string(StopReason::kWorkloadDone)) {
      throw std::logic_error("the run stopped early without a reason (" +
                             std::to_string(rep.rows.size()) + " sizes finished)");
    }
    return;
  }
  const size_t sizes = workload_sizes(sc).size();
  if (rep.rows.size() != sizes) {
    throw std::logic_error("the run completed with " + std::to_string(rep.rows.size()) + " of " +
                           std::to_string(sizes) + " collective sizes");
  }
  if (prepared.step.has_value() != rep.training.has_value()) {
    throw std::logic_error("the run completed without the training step's summary");
  }
}

RunReport simulate(const Scenario& sc, const Prepared& prepared, const std::atomic<bool>* interrupt,
                   bool progress, ChromeTrace* trace, uint64_t max_events) {
  RunReport rep = sc.mode == "flow"
                      ? simulate_flows(sc, prepared, interrupt, progress, max_events)
                      : simulate_packets(sc, prepared, interrupt, progress, trace, max_events);
  check_accounted(sc, prepared, rep);
  return rep;
}

/// The training step's times, in ms, and its critical path.
void print_training(std::ostream& os, const TrainingSummary& t) {
  const auto ms = [](int64_t ps) { return static_cast<double>(ps) / 1e9; };
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "# training   : dp %d x tp %d x pp %d = %d GPUs, %d layers, %d microbatch%s, %d "
      "DDP bucket%s\n"
      "#   step %.3f ms: compute %.3f ms, exposed communication %.3f ms (%.1f %%), GPU "
      "utilization %.1f %%\n"
      "#   critical path (GPU %d): compute %.3f ms, NCCL software latency %.3f ms, network "
      "%.3f ms (its bytes at link rate %.3f ms, its NIC paused by PFC %.3f ms, sharing links "
      "and queueing %.3f ms)\n",
      t.dp, t.tp, t.pp, t.ranks, t.layers, t.microbatches, t.microbatches == 1 ? "" : "es",
      t.buckets, t.buckets == 1 ? "" : "s", ms(t.step_ps), ms(t.compute_ps), ms(t.exposed_comm_ps),
      t.step_ps > 0 ? 100.0 * static_cast<double>(t.exposed_comm_ps) / t.step_ps : 0.0,
      100.0 * t.gpu_utilization, t.critical_rank, ms(t.cp_compute_ps), ms(t.cp_software_ps),
      ms(t.cp_link_ps + t.cp_waiting_ps), ms(t.cp_link_ps), ms(t.cp_pfc_pause_ps),
      ms(t.cp_queueing_ps));
  os << buf;
}

/// The measured log beside the simulation, size by size, and the median and worst error.
void print_measured(std::ostream& os, const MeasuredComparison& m) {
  os << "# measured   : " << m.path << "\n";
  if (m.points.empty()) {
    os << "#   no size of the sweep is in the log\n";
    return;
  }
  os << "#        size  busbw measured  busbw simulated   error\n";
  for (const auto& p : m.points) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "#  %10lld  %14.2f  %15.2f  %+6.1f %%\n",
                  static_cast<long long>(p.size_bytes), p.measured_busbw_GBps,
                  p.simulated_busbw_GBps, p.error_pct);
    os << buf;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "#   busbw error over %zu sizes: median %.1f %%, worst %.1f %%\n",
                m.points.size(), m.median_abs_pct_error, m.max_abs_pct_error);
  os << buf;
}

RunReport simulate_limited(const Scenario& sc, const Prepared& prepared,
                           const std::atomic<bool>* interrupt, bool progress, ChromeTrace* trace,
                           uint64_t max_events, const std::optional<WallLimit>& wall) {
  if (!wall) return simulate(sc, prepared, interrupt, progress, trace, max_events);
  std::atomic<bool> stop{false};
  std::jthread watchdog;  // joined on every way out, an exception from simulate() included
  const auto deadline = wall->deadline;
  watchdog = std::jthread([&, deadline](std::stop_token done) {
    std::mutex m;
    std::condition_variable_any tick;
    std::unique_lock<std::mutex> lock(m);
    while (!done.stop_requested()) {
      if (interrupt != nullptr && interrupt->load()) stop = true;
      if (std::chrono::steady_clock::now() >= deadline) {
        stop = true;
        return;
      }
      tick.wait_for(lock, done, std::chrono::milliseconds(20), [] { return false; });
    }
  });
  RunReport rep = simulate(sc, prepared, &stop, progress, trace, max_events);
  watchdog.request_stop();
  watchdog.join();
  // Stopped, and not by a signal: by the deadline (in a partitioned run, possibly another
  // rank's, which reached it a moment earlier and stopped every rank at a window's end).
  if (rep.interrupted && !(interrupt != nullptr && interrupt->load())) {
    rep.interrupted = false;
    rep.limited = true;
    const std::string during = rep.stop_reason.rfind("interrupted ", 0) == 0
                                   ? rep.stop_reason.substr(std::string("interrupted ").size())
                                   : rep.stop_reason;
    rep.stop_reason = "stopped at --max-wall " + format_time(wall->max_wall_ps) + " " + during;
  }
  return rep;
}

/// The scenario's warnings (settings that do nothing under its other choices), on stderr.
void print_warnings(const Scenario& sc) {
  for (const std::string& w : sc.warnings) std::cerr << w << "\n";
}

/// What a partitioned run (`mpirun -np N fabricsim run`, sim/cli/run_mpi.cpp) cannot do yet,
/// refused as bad input (exit 2) on every rank alike.
static void check_partitioned(const RunOptions& opts) {
  if (opts.max_events > 0) {
    throw ConfigError("--max-events", 0, 0, "",
                      "not available with mpirun (each rank runs its own events); use "
                      "--max-wall");
  }
}

/// `mpirun -np N` on a fabric that cannot be split into N parts (more parts than it has
/// separable groups, or a zero-delay link between parts): bad input, exit 2, on every rank
/// alike, with the reason partition_fabric gives.
static void check_partition_fits(const Prepared& prepared, int ranks) {
  try {
    partition_fabric(prepared.fabric, ranks, PartitionMethod::kAuto);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("mpirun -np " + std::to_string(ranks), 0, 0, "",
                      std::string(e.what()) +
                          "; run on fewer ranks (`fabricsim topo SCENARIO --partitions N` "
                          "shows the splits)");
  }
}

int cmd_run(const RunOptions& opts, const std::atomic<bool>* interrupt) {
  Scenario sc = load(opts);
  if (opts.out_given) check_out_dir(opts.out_dir);
  if (opts.mpi_ranks > 1) check_partitioned(opts);
  // A signal before the simulation (even before the options were read: the handlers come
  // first) stops the run here, its files saying so. Not under MPI: there the ranks must agree
  // on when they stop, which the partitioned simulation's first window does.
  const auto stopped_early = [&] {
    return opts.mpi_ranks == 1 && interrupt != nullptr && interrupt->load();
  };
  if (stopped_early()) {
    return stop_before_simulation(opts, sc, nullptr,
                                  "the scenario was read; the fabric was not built");
  }
  const Prepared prepared = prepare(sc);  // bad input is refused before anything is written
  if (stopped_early()) {
    return stop_before_simulation(opts, sc, &prepared,
                                  "the scenario was read and the fabric built and routed; "
                                  "nothing was simulated");
  }
  // The flow mode is one logical process: under mpirun rank 0 runs it alone, as a sequential
  // run; the other ranks have nothing to do.
  if (opts.mpi_ranks > 1 && sc.mode == "flow" && !opts.reports) return kExitOk;
  if (opts.mpi_ranks > 1 && sc.mode != "flow") check_partition_fits(prepared, opts.mpi_ranks);
  if (opts.reports) print_warnings(sc);
  // What runs: the workload's collective, traffic flows, a training step (one or more).
  std::vector<std::string> parts;
  if (sc.has_workload) {
    parts.push_back(sc.workload.collective + ", algorithm " + sc.workload.algorithm +
                    ", protocol " + sc.workload.protocol);
  }
  if (!sc.traffic.empty()) {
    parts.push_back(std::to_string(sc.traffic.size()) + " traffic flow" +
                    (sc.traffic.size() == 1 ? "" : "s"));
  }
  if (sc.training.enabled) parts.emplace_back("a training step");
  std::cout << "# fabricsim " << sc.name << ": ";
  for (size_t i = 0; i < parts.size(); ++i) std::cout << (i > 0 ? ", plus " : "") << parts[i];
  if (sc.mode == "flow") std::cout << ", flow mode";
  if (sc.mode == "flow" && opts.mpi_ranks > 1) {
    std::cout << " (one logical process: rank 0 runs it alone, the other " << opts.mpi_ranks - 1
              << " rank" << (opts.mpi_ranks > 2 ? "s wait" : " waits") << ")";
  }
  std::cout << ", seed " << sc.seed << "\n";
  if (sc.has_workload) {
    const NcclRunSetup& n = prepared.nccl;
    std::cout << "# nccl       : " << n.layout.ranks << " ranks on " << n.layout.servers()
              << " server" << (n.layout.servers() == 1 ? "" : "s") << " x "
              << n.layout.gpus_per_server << " GPU" << (n.layout.gpus_per_server == 1 ? "" : "s")
              << ", " << n.channels << (n.channels == 1 ? " channel" : " channels") << ", NET/"
              << (effective_net(n.settings) == NcclNet::kSocket ? "Socket" : "IB")
              << (n.staged ? " staged through host memory" : " with GPUDirect RDMA")
              << ", NCCL_ALGO " << (sc.nccl.algo.empty() ? "(all)" : sc.nccl.algo)
              << ", NCCL_PROTO " << (sc.nccl.proto.empty() ? "(NCCL's)" : sc.nccl.proto);
    for (const auto& [key, assignment] : sc.nccl.from_env) {
      std::cout << (key == sc.nccl.from_env.begin()->first ? "; from the environment: " : ", ")
                << assignment;
    }
    if (!n.note.empty()) std::cout << "; " << n.note;
    std::cout << "\n";
  }
  const bool progress = opts.progress && opts.reports && isatty(STDERR_FILENO);
  std::optional<ChromeTrace> trace;
  const std::filesystem::path dir(opts.out_dir);
  std::vector<OutputError> failures;  // output files not written
  std::vector<UnwrittenFile> unwritten;
  if (opts.out_given && opts.trace_max_events > 0 && opts.reports) {
    try {
      trace.emplace((dir / "trace.json").string(), opts.trace_max_events);
    } catch (const OutputError& e) {  // the run goes on without it
      trace_not_written(dir, e, unwritten, failures);
    }
  } else if (opts.out_given && opts.reports) {
    // no trace asked: leave no trace.json of an earlier run beside these
    remove_output_file((dir / "trace.json").string());
  }
  std::optional<WallLimit> wall;
  if (opts.max_wall_ps > 0) {
    wall = WallLimit{
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(opts.max_wall_ps / 1000),
        opts.max_wall_ps};
  }
  // The simulation's own state (events, packets in flight, records) has no up-front estimate:
  // running out of memory here is an incomplete run (exit 1), not bad input.
  RunReport rep = building(
      [&] {
        return simulate_limited(sc, prepared, interrupt, progress, trace ? &*trace : nullptr,
                                opts.max_events > 0 ? opts.max_events : UINT64_MAX, wall);
      },
      "the simulation's state (events, packets, records)", false);
  rep.files_not_written = std::move(unwritten);
  if (trace && rep.deadlock.detected_at_ps >= 0) {
    // Marked across every track, whatever the cap: where to look in the viewer.
    trace->global_note("deadlock: a cycle of " + std::to_string(rep.deadlock.cycle.size()) +
                           " queues (" +
                           (rep.deadlock.cycle.empty() ? "" : rep.deadlock.cycle.front()) +
                           " ...) can never move; see results.json deadlock",
                       rep.deadlock.detected_at_ps);
  }
  if (trace) {
    try {
      trace->close();  // renamed into place, whole, before results.json is written
    } catch (const OutputError& e) {
      trace_not_written(dir, e, rep.files_not_written, failures);
    }
  }
  if (sc.has_workload) {
    print_table_header(std::cout);
    for (const auto& row : rep.rows) print_table_row(std::cout, row);
  }
  if (rep.measured) print_measured(std::cout, *rep.measured);
  if (rep.training) print_training(std::cout, *rep.training);
  print_summary(std::cout, rep);
  if (opts.out_given && opts.reports) {
    const std::vector<OutputError> more = write_run_outputs(dir.string(), rep, opts.flows);
    failures.insert(failures.end(), more.begin(), more.end());
    print_wrote(std::cout, dir, rep, trace ? &*trace : nullptr, opts.trace_max_events, opts.flows);
    std::cout.flush();
    print_unwritten(std::cerr, failures);
  }
  if (!rep.complete && opts.reports) std::cerr << "fabricsim: run " << rep.stop_reason << "\n";
  return run_exit_code(rep, !failures.empty());
}

int cmd_validate(const RunOptions& opts) {
  Scenario sc = load(opts);
  const Prepared prepared = prepare(sc);  // the topology can be built, run and routed;
  print_warnings(sc);
  const Fabric& fabric = prepared.fabric;
  if (!sc.cost_model.empty()) load_cost_model(cost_model_path(sc));  // its prices file reads
  std::cout << opts.scenario_path << ": ok (" << fabric.kind << ", " << fabric.hosts.size()
            << " GPUs, " << fabric.switches << " switches, " << fabric.links << " links)\n";
  return kExitOk;
}

namespace {

/// topo --partitions: the split, one line per part, then what it costs a parallel run.
void print_partition(const Partition& p) {
  char buf[64];
  std::cout << "partition           : " << p.parts << " part" << (p.parts == 1 ? "" : "s")
            << ", method " << to_string(p.method) << ": " << p.scheme << "\n";
  for (int i = 0; i < p.parts; ++i) {
    const PartLoad& l = p.loads[i];
    std::snprintf(buf, sizeof buf, "  part %-12d : ", i);
    std::cout << buf << l.nodes << " nodes, " << l.hosts << " hosts, " << l.ports << " ports\n";
  }
  std::cout << "cut links           : " << p.cut_links << "\n";
  if (p.lookahead_ps) {
    std::ostringstream ns;
    ns << static_cast<double>(*p.lookahead_ps) / 1000.0;
    std::cout << "lookahead           : " << ns.str()
              << " ns (smallest propagation delay of a cut link)\n";
  } else {
    std::cout << "lookahead           : none (no link crosses parts)\n";
  }
  std::snprintf(buf, sizeof buf, "%.3f", p.imbalance);
  std::cout << "imbalance           : " << buf << " (largest part's ports / mean)\n";
}

}  // namespace

int cmd_topo(const RunOptions& opts, const std::string& dot_path, bool json,
             const TopoPartitionOptions& partition_opts) {
  const Scenario sc = load(opts);
  if (!dot_path.empty()) {  // a folder that is not there is a typo: said before any work
    try {
      check_output_file(dot_path);
    } catch (const OutputError& e) {
      throw ConfigError("--dot " + dot_path, 0, 0, "", "cannot write the DOT file: " + e.reason());
    }
  }
  const Fabric fabric = build_fabric(sc);
  std::optional<Partition> partition;
  if (partition_opts.parts > 0) {
    try {
      partition = partition_fabric(fabric, partition_opts.parts, partition_opts.method);
    } catch (const std::invalid_argument& e) {
      std::cerr << "fabricsim topo: --partitions " << partition_opts.parts << ": " << e.what()
                << "\n";
      return kExitBadInput;
    }
  }
  const RoutingTable routes = build_routes(sc, fabric);
  print_warnings(sc);
  for (const std::string& w : fabric.warnings) std::cerr << w << "\n";
  const FabricSummary s = summarize(sc, fabric);  // with the cost proxy, as results.json's
  const FabricMetrics m = compute_metrics(fabric, routes);
  const std::optional<FabricCost>& cost = s.cost;
  // Whole or not at all; a failure is OutputError: exit 74 with the path and the reason.
  if (!dot_path.empty()) write_output_file(dot_path, to_dot(fabric));
  const std::string routing =
      std::string(to_string(routes.algorithm())) + ", " + sc.routing.load_balancing;
  if (json) {
    nlohmann::ordered_json j = {{"kind", s.kind},
                                {"gpus", s.gpus},
                                {"switches", s.switches},
                                {"links", s.links},
                                {"oversubscription", s.oversubscription},
                                {"bisection_bandwidth_bps", s.bisection_bandwidth_bps},
                                {"bisection_maxflow_bps", m.bisection_maxflow_bps},
                                {"diameter_hops", m.diameter_hops},
                                {"path_diversity", m.path_diversity},
                                {"path_diversity_pair", m.path_diversity_pair},
                                {"routing", routing}};
    nlohmann::ordered_json roles = nlohmann::ordered_json::object();
    for (const auto& t : m.nodes_by_role) roles[t.role] = t.count;
    j["nodes_by_role"] = roles;
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (const auto& l : m.links_by_class) {
      links.push_back(
          {{"ends", l.ends}, {"count", l.count}, {"rate_bps", l.rate_bps}, {"failed", l.failed}});
    }
    j["links_by_class"] = links;
    nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
    for (const auto& [role, ratio] : m.oversubscription_by_tier) tiers[role] = ratio;
    j["oversubscription_by_tier"] = tiers;
    if (cost) {
      j["cost_usd"] = fabric_cost_json(*cost);
    } else {
      j["cost_usd"] = nullptr;
    }
    if (partition) {
      nlohmann::ordered_json loads = nlohmann::ordered_json::array();
      for (const PartLoad& l : partition->loads) {
        loads.push_back({{"nodes", l.nodes}, {"hosts", l.hosts}, {"ports", l.ports}});
      }
      j["partition"] = {{"parts", partition->parts},
                        {"method", to_string(partition->method)},
                        {"scheme", partition->scheme},
                        {"cut_links", partition->cut_links},
                        {"lookahead_ps", partition->lookahead_ps
                                             ? nlohmann::ordered_json(*partition->lookahead_ps)
                                             : nlohmann::ordered_json(nullptr)},
                        {"imbalance", partition->imbalance},
                        {"per_part", loads}};
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::ostringstream nodes, links, tiers;
  for (const auto& t : m.nodes_by_role)
    nodes << (nodes.tellp() ? ", " : "") << t.role << " " << t.count;
  for (const auto& l : m.links_by_class) {
    links << (links.tellp() ? "; " : "") << l.ends << " " << l.count << " x "
          << format_rate(l.rate_bps);
    if (l.failed) links << " (" << l.failed << " failed)";
  }
  for (const auto& [role, ratio] : m.oversubscription_by_tier) {
    tiers << (tiers.tellp() ? ", " : "") << role << " " << ratio << ":1";
  }
  int nvlinks = 0;
  for (const auto& l : m.links_by_class) nvlinks += l.ends == "nvlink" ? l.count : 0;
  std::cout << "fabric              : " << s.kind << ", " << s.gpus << " GPUs, " << s.switches
            << " switches, " << s.links << " network links"
            << (nvlinks ? " (+" + std::to_string(nvlinks) + " NVLinks)" : std::string())
            << "; routing " << routing << "\n"
            << "nodes               : " << nodes.str() << "\n"
            << "links               : " << links.str() << "\n"
            << "oversubscription    : " << s.oversubscription << ":1 as built"
            << (m.oversubscription_by_tier.empty() ? "" : "; by tier: " + tiers.str()) << "\n"
            << "bisection bandwidth : " << format_rate(s.bisection_bandwidth_bps)
            << " (closed form), "
            << (m.bisection_maxflow_bps < 0
                    ? std::string("max-flow check skipped (large fabric)")
                    : format_rate(m.bisection_maxflow_bps) + " (max-flow check)")
            << "\n"
            << "diameter            : " << m.diameter_hops << " hops\n"
            << "path diversity      : " << m.path_diversity << " routed paths "
            << m.path_diversity_pair << "\n";
  if (cost) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "cost proxy          : USD %.0f (switch ports %.0f, NICs %.0f, host links %.0f, "
                  "fabric links %.0f) at the prices in %s\n",
                  cost->total_usd, cost->switch_ports_usd, cost->nics_usd, cost->host_links_usd,
                  cost->fabric_links_usd, cost->prices.c_str());
    std::cout << buf;
  } else {
    std::cout << "cost proxy          : none (add cost_model: ../configs/cost_example.yaml)\n";
  }
  if (partition) print_partition(*partition);
  return kExitOk;
}

}  // namespace fabricsim
