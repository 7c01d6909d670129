// Run hooks: code outside the library that takes part in a packet-mode run without editing it.
// A hook is called once the run's Network is built (before any traffic is set up), may watch
// the network's events through a NetObserver of its own, and sees the finished report. A hook
// registered counter (sim/core/counter_table.hpp) it increments with Network::add is then
// written by results.json, ports.csv and the summary as the counter table says.
//
// Hooks are passed in RunOptions::hooks (the CLI passes none) or to simulate(). The flow mode
// builds no Network: it calls no hook. Under mpirun every rank calls its hooks on its own share
// of the network (its nodes' events); registered counters are merged over ranks as declared.
#pragma once

#include <memory>
#include <vector>

namespace fabricsim {

class Network;
class NetObserver;
struct Prepared;
struct RunReport;
struct Scenario;

class RunHook {
 public:
  virtual ~RunHook() = default;
  /// The run's network is built and its engine attached; no traffic has been set up yet.
  /// Called once per packet-mode run (per rank under mpirun).
  virtual void network_built(Network& /*net*/, const Scenario& /*sc*/,
                             const Prepared& /*prepared*/) {}
  /// The observer of the network's events this hook wants called for the rest of the run
  /// (asked right after network_built), or nullptr. It must live until the run returns.
  virtual NetObserver* observer() { return nullptr; }
  /// The run is over: the engine has merged the ranks' state (on the reporting rank) and the
  /// report holds the counters and rows. The network is still alive.
  virtual void run_finished(const Network& /*net*/, RunReport& /*report*/) {}
};

/// The hooks of one run, called in this order.
using RunHooks = std::vector<std::shared_ptr<RunHook>>;

}  // namespace fabricsim
