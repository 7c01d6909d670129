// What a run's numbers depend on that the model lacks, each with why this run depends on it
// (results.json `limits`, the summary's "not modelled" lines). Only what the run can tell from
// its own scenario and inputs; README's "What it does not model" lists the rest.
#pragma once

#include <vector>

#include "sim/config/scenario.hpp"
#include "sim/report/report.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// The limits of a run of `sc` as `prepared`, in this order:
///  - the measured log's network transport (measured.nccl_tests) when fabricsim does not model
///    it (calibration/net_transport.hpp: EFA through aws-ofi-nccl, GPUDirect-TCPX(O), another
///    NCCL net plugin): the comparison is then no prediction of that hardware;
///  - a rail-optimized server with more NICs than GPUs (topology.nics_per_server = m × G, m > 1)
///    whose NICs carry the run's traffic (its ranks span servers, or it has traffic flows) and
///    add up to more than link.pcie_rate per GPU (m × link.host_rate > link.pcie_rate): each
///    GPU sends through its m NICs at m × link.host_rate, with no PCIe link in its path;
///  - GPUs peer to peer over PCIe (topology.gpu_interconnect: pcie) with several ranks on a
///    server: one PCIe switch per server, no root complex, socket link or ACS;
///  - the flow mode (mode: flow): queues, PFC, ECN/DCQCN, drops and retransmissions.
/// Empty for every other run.
std::vector<Limit> run_limits(const Scenario& sc, const Prepared& prepared);

}  // namespace fabricsim
