// Which congestion settings a run's result leans on: when PFC held the senders for a real share
// of the run, when DCQCN cut their rates, when a lossy fabric resent what it dropped, the result
// moves with those keys and the summary says so (results.json `depends_on`), so that a number
// is not read as the fabric's alone.
#pragma once

#include <vector>

#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"

namespace fabricsim {

/// The congestion settings `rep` (a finished or stopped packet-mode run of `sc`) depends on,
/// each with its keys and what happened, by these rules (thresholds of this model, chosen so
/// that an uncongested run lists nothing):
///  - PFC paused the hosts' NIC ports for at least 1 % of the simulated time on average
///    (mean_host_paused_fraction): XOFF thresholds, buffers and headroom decide how long;
///  - DCQCN is on and senders received at least one CNP per queue pair (counters.cnp_rx >=
///    queue_pairs): the ECN thresholds and the DCQCN parameters decide their rates;
///  - a lossy fabric (no PFC, no credits) resent packets (counters.retransmits > 0): its
///    buffers and loss recovery decide the goodput.
/// Nothing for the flow mode (it models none of these).
std::vector<Dependence> congestion_dependence(const Scenario& sc, const RunReport& rep);

}  // namespace fabricsim
