// load() and prepare(): a scenario read with its overrides and NCCL environment, its fabric
// built, routed and checked runnable (what `validate` refuses), and its workload planned.

#include <algorithm>
#include <boost/range/iterator_range.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include "topologies/family.hpp"

#include "collectives/algorithm_registry.hpp"
#include "collectives/nccl_env.hpp"
#include "collectives/nccl_setup.hpp"
#include "sim/config/cost_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/memory_budget.hpp"
#include "sim/core/units.hpp"
#include "sim/flow/flow_network.hpp"
#include "sim/net/network.hpp"
#include "sim/report/output_file.hpp"
#include "sim/run/background.hpp"
#include "sim/run/run.hpp"
#include "sim/run/run_parts.hpp"
#include "sim/run/scenario_collectives.hpp"
#include "topologies/metrics.hpp"
#include "topologies/registry.hpp"
#include "topologies/routing.hpp"

namespace fabricsim {

Scenario load(const RunOptions& opts) {
  // --seed wins over --set seed=; a sweep refuses it beside --vary seed=.
  std::vector<std::string> sets = opts.sets;
  if (opts.seed) sets.push_back("seed=" + std::to_string(*opts.seed));
  Scenario sc = load_scenario(opts.scenario_path, sets, opts.varied);
  apply_nccl_environment(sc);
  take_measured_nccl_version(sc);
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

struct SlowestHostPort {
  int64_t rate_bps = 0;
  std::string link;  ///< "host0 -> leaf0"
};

/// The slowest port of any host (its NIC's or NVLink's; failed links left out), starting from
/// `host_rate_bps`: the lowest line rate a queue pair's congestion control can start at.
SlowestHostPort slowest_host_port(const Fabric& fabric, int64_t host_rate_bps) {
  SlowestHostPort out{host_rate_bps, ""};
  const FabricGraph& g = fabric.graph;
  for (const VertexId h : fabric.hosts) {
    for (const auto e : boost::make_iterator_range(boost::out_edges(h, g))) {
      if (g[e].failed || g[e].rate_bps <= 0 || g[e].rate_bps >= out.rate_bps) continue;
      out.rate_bps = g[e].rate_bps;
      out.link = g[h].name + " -> " + g[boost::target(e, g)].name;
    }
  }
  return out;
}

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
    if (family_of(fabric).dimension_ordered) {
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
  // A queue pair's control starts at its NIC port's rate: check its parameters against the
  // slowest host port (a degraded host link included), named when it is below link.host_rate.
  const SlowestHostPort slowest = slowest_host_port(fabric, sc.link.host_rate_bps);
  const auto where = [&] {
    return slowest.rate_bps < sc.link.host_rate_bps
               ? "; the slowest host link, " + slowest.link + ", runs at " +
                     format_rate(slowest.rate_bps)
               : std::string();
  };
  if (sc.dcqcn.enabled && roce) {
    try {
      validate_dcqcn(sc.dcqcn, slowest.rate_bps);
    } catch (const std::invalid_argument& e) {
      // "DCQCN: min_rate must …": blame dcqcn.min_rate (where it was given, or the preset).
      std::string what = e.what();
      if (what.rfind("DCQCN: ", 0) == 0) what.erase(0, 7);
      const std::string field = what.substr(0, what.find(' '));
      const std::string key = "dcqcn." + field;
      throw key_error(sc, sc.origins.count(key) ? key : "dcqcn.preset",
                      what + (sc.origins.count(key) ? "" : " (the value of the preset)") + where());
    }
  }
  // TIMELY's and HPCC's parameters: "TIMELY: min_rate …" blames timely.min_rate where it was
  // given, or the control when the value is the section's default.
  const auto check_control = [&](const std::string& section, const std::string& label,
                                 const std::function<void()>& validate) {
    try {
      validate();
    } catch (const std::invalid_argument& e) {
      std::string what = e.what();
      if (what.rfind(label + ": ", 0) == 0) what.erase(0, label.size() + 2);
      const std::string key = section + "." + what.substr(0, what.find(' '));
      throw key_error(
          sc, sc.origins.count(key) ? key : "nic.congestion_control",
          what + (sc.origins.count(key) ? "" : " (" + key + " at its default)") + where());
    }
  };
  if (sc.nic.congestion_control == "timely") {
    check_control("timely", "TIMELY", [&] { validate_timely(sc.timely, slowest.rate_bps); });
  }
  if (sc.nic.congestion_control == "hpcc") {
    check_control("hpcc", "HPCC", [&] { validate_hpcc(sc.hpcc, slowest.rate_bps); });
    // A packet's INT records hold IntStack::kMaxHops switch hops: a longer path would hide its
    // later hops from the sender, so it is refused, not run. Hops between hosts, less one, bound
    // the switches a path crosses.
    const int hosts = static_cast<int>(fabric.hosts.size());
    int longest = 0;
    for (int s = 0; s < hosts; ++s) {
      for (int d = 0; d < hosts; ++d) longest = std::max(longest, routes.host_distance(s, d));
    }
    if (longest - 1 > IntStack::kMaxHops) {
      throw key_error(sc, "nic.congestion_control",
                      "HPCC reads one INT record per switch on a packet's path, and a packet "
                      "holds " +
                          std::to_string(IntStack::kMaxHops) +
                          "; this fabric's longest route crosses " + std::to_string(longest - 1) +
                          " switches: expected a fabric of at most " +
                          std::to_string(IntStack::kMaxHops) + " switch hops, or another control");
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
    // Name what needs them: the collective, else the perftest run, else the traffic flows.
    const std::string who = sc.has_workload       ? sc.workload.collective
                            : sc.perftest.enabled ? std::string("perftest (a client and a server)")
                                                  : std::string("traffic");
    throw key_error(sc, "topology",
                    who + " needs at least 2 " + (sc.has_workload ? "GPUs" : "hosts") +
                        "; this fabric has " + std::to_string(fabric.hosts.size()));
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
  if (const std::string bad =
          RedEcn{sc.ecn.kmin_bytes, sc.ecn.kmax_bytes, sc.ecn.pmax}.check("ecn.kmin", "ecn.kmax");
      !bad.empty()) {
    throw key_error(sc, sc.origins.count("ecn.kmax") ? "ecn.kmax" : "ecn.kmin", bad);
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

/// What the flow mode cannot run, refused at the key `mode` (exit 2).
void check_flow_mode(const Scenario& sc, const Fabric& fabric) {
  if (sc.perftest.enabled) {
    throw key_error(sc, "mode",
                    "the flow mode runs the workload's collectives; a perftest run needs the "
                    "packet mode (mode: packet)");
  }
  for (const char* key : {"nic.message_rate", "nic.tx_latency", "nic.rx_latency",
                          "nic.dma_read_latency", "nic.pcie_rate"}) {
    if (sc.origins.count(key)) {
      throw key_error(sc, key,
                      "the flow mode does not model the NIC's message rate, latencies or PCIe; use "
                      "the packet mode (mode: packet)");
    }
  }
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
  if (!sc.topology.link_events.empty()) {
    throw key_error(sc, "topology.link_events",
                    "the flow mode does not model links changing during the run; use the "
                    "packet mode (mode: packet)");
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
  if (sc.has_workload) {
    const CollectiveAlgorithm* algorithm = find_collective_algorithm(sc.workload.algorithm);
    if (algorithm != nullptr && !algorithm->build_flows) {
      throw key_error(sc, "workload.algorithm",
                      flow_mode_refusal(sc.workload.algorithm) + " (mode: packet)");
    }
  }
  try {
    FlowRouter router(fabric, sc.seed);
  } catch (const std::invalid_argument& e) {
    throw key_error(sc, "mode", e.what());
  }
}

}  // namespace

/// The scenario's `cost_model:` resolved against the scenario's folder, like an include.
std::string cost_model_path(const Scenario& sc) {
  const std::filesystem::path p(sc.cost_model);
  return p.is_absolute() ? p.string() : (std::filesystem::path(sc.path).parent_path() / p).string();
}

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
  s.server_profile = sc.server.profile;
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

static Prepared plan_workload(const Scenario& sc, Fabric fabric, std::optional<RoutingTable> routes,
                              LinkPlan link_plan);

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
  add_background_flows(sc, fabric);
  check_runnable(sc, fabric);
  if (sc.perftest.enabled) {
    const int hosts = static_cast<int>(fabric.hosts.size());
    for (const auto& [key, host] : {std::pair{"perftest.client", sc.perftest.client},
                                    std::pair{"perftest.server", sc.perftest.server}}) {
      if (host >= hosts) {
        throw key_error(sc, sc.origins.count(key) ? key : "perftest",
                        "host " + std::to_string(host) + " is not in this fabric of " +
                            std::to_string(hosts) + " hosts (0 .. " + std::to_string(hosts - 1) +
                            ")");
      }
    }
    // perftest measures NIC to NIC; two GPUs of one server would talk over their NVSwitch.
    const auto server_of = [&](int host) { return fabric.graph[fabric.hosts[host]].server; };
    const int shared = server_of(sc.perftest.client);
    if (fabric.gpus_per_server > 1 && shared >= 0 && shared == server_of(sc.perftest.server)) {
      int other = 0;
      while (other < hosts && server_of(other) == shared) ++other;
      const char* key = sc.origins.count("perftest.server") ? "perftest.server" : "perftest";
      throw key_error(
          sc, key,
          "hosts " + std::to_string(sc.perftest.client) + " and " +
              std::to_string(sc.perftest.server) + " are GPUs of one server (" +
              std::to_string(shared) + "), which talk over its " +
              (sc.topology.gpu_interconnect == "pcie" ? "PCIe switch" : "NVSwitch") +
              ", not NIC to NIC as perftest measures" +
              (other < hosts ? "; e.g. host " + std::to_string(other) + " is on another server"
                             : std::string()));
    }
  }
  std::optional<RoutingTable> routes;
  LinkPlan link_plan;
  if (sc.mode == "flow") {
    check_flow_mode(sc, fabric);
  } else {
    routes.emplace(building([&] { return build_routes(sc, fabric); },
                            "the routing tables (" + std::to_string(fabric.hosts.size()) +
                                " GPUs x " + std::to_string(boost::num_vertices(fabric.graph)) +
                                " nodes)"));
    check_lossless(sc, fabric, *routes);
    link_plan = building([&] { return plan_link_events(sc, fabric, *routes); },
                         "the routing tables of topology.link_events");
    for (const std::string& w : link_plan.warnings) {  // once, though a sweep prepares twice
      if (std::find(sc.warnings.begin(), sc.warnings.end(), w) == sc.warnings.end()) {
        sc.warnings.push_back(w);
      }
    }
  }
  if (!sc.has_workload && !sc.training.enabled && sc.jobs.empty()) {
    for (const auto& [key, origin] : sc.origins) {
      if (key.rfind("nccl.", 0) == 0 && origin.where.rfind("environment", 0) != 0) {
        const std::string only = sc.perftest.enabled && !sc.traffic.empty()
                                     ? "a perftest run and traffic flows"
                                 : sc.perftest.enabled ? "a perftest run"
                                                       : "traffic flows";
        throw key_error(sc, key,
                        "the nccl settings apply to a workload's collectives, and this scenario "
                        "has none (only " +
                            only + "); expected a workload section, or no nccl settings");
      }
    }
  }
  return building(
      [&] { return plan_workload(sc, std::move(fabric), std::move(routes), std::move(link_plan)); },
      "the workload's plan (NCCL setup, collectives, step)");
}

/// prepare()'s last part: the workload's NCCL setup, measured logs and training step plan.
static Prepared plan_workload(const Scenario& sc, Fabric fabric, std::optional<RoutingTable> routes,
                              LinkPlan link_plan) {
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
  std::optional<PerftestLog> measured_perftest;
  if (!sc.measured_perftest.empty()) measured_perftest = measured_perftest_log(sc);
  if (!sc.jobs.empty() && sc.mode == "flow") {
    throw key_error(sc, "mode",
                    "jobs run in the packet mode only (the flow mode replays one workload); "
                    "expected mode: packet");
  }
  JobsPlan jobs = plan_jobs(sc, fabric);
  return Prepared{std::move(fabric),    std::move(routes), std::move(nccl),
                  std::move(measured),  std::move(step),   std::move(measured_perftest),
                  std::move(link_plan), std::move(jobs)};
}

}  // namespace fabricsim
