// `fabricsim calibrate --scenario` with a perftest latency log (ib_write_lat, ib_read_lat,
// ib_send_lat): nic.tx_latency and nic.rx_latency fitted at the log's smallest size, after
// removing what the model already computes for it on the scenario's fabric (the wire, the
// propagation, the switches and, for a read, the response's DMA read).
//
// The model's own formula, found by simulating rather than written out: the scenario's perftest
// run of the log's test at the smallest size with tx_latency = rx_latency = 0 gives t0, and with
// both = 1 us gives t0 + k us, where k counts the NIC sends and receives in what perftest times
// (2 for ib_write_lat / ib_send_lat's half round trip: one send, one receive; 4 for
// ib_read_lat's whole round trip). The log's t_typical = t0 + k·x gives x = (t_typical - t0) / k
// for each, the send and the receive side split evenly (scenarios/perftest_ib_write_lat_ib_qdr.yaml
// did this by hand: (0.98 - 0.16) / 2 = 0.41 us).
#pragma once

#include <vector>

#include "calibration/nic_fit.hpp"
#include "calibration/perftest.hpp"
#include "sim/run/run.hpp"

namespace fabricsim {

/// nic.tx_latency and nic.rx_latency (in that order) from the latency log `log` on the fabric of
/// `scenario` (its workload, traffic and measured logs left out). Each is not fitted, with why,
/// for a test the workload does not simulate, a scenario that cannot run it (the reason is its
/// error), or a log faster than the model without NIC latency.
std::vector<NicKeyFit> fit_nic_latency(const RunOptions& scenario, const PerftestLog& log);

}  // namespace fabricsim
