// What breaks a deadlock the detector found, for this fabric and this cycle: the fixes a user
// can apply with one or two scenario keys, in the order to try them (results.json
// `deadlock.fixes`, the run summary).
#pragma once

#include <string>
#include <vector>

#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"

namespace fabricsim {

/// Fixes for a deadlock on the scenario's fabric (`fabric_kind`: "torus", "spine-leaf",
/// "fat-tree", "rail-optimized"), each the --set values that apply it (none when it is not one
/// key's change) and one sentence on what it does:
///  - on a torus, a dateline class (routing.dateline_class with pfc.priorities listing it; for
///    InfiniBand a second VL), or no wraparound: a ring of one class is the cycle (Dally and
///    Seitz, "Deadlock-free message routing in multiprocessor interconnection networks", IEEE
///    Trans. Computers C-36(5), 1987);
///  - on a Clos, where only bounced routes (down, then up again) close a cycle, a bounce class
///    (routing.bounce_class; Tagger, Hu et al., CoNEXT 2017), and up-down routing or repairing
///    the failed links that force the bounces;
///  - everywhere, the PFC watchdog (pfc.watchdog) with its cost: the stormed queues' frames
///    dropped (or PAUSE ignored) after watchdog_detection_time, retransmissions, and queue
///    pairs that may give up.
/// The classes proposed are free ones: not nic.traffic_class, not DCQCN's CNP class, not
/// already lossless.
std::vector<DeadlockFix> deadlock_fixes(const Scenario& sc, const std::string& fabric_kind);

}  // namespace fabricsim
