// `mpirun -np N fabricsim run SCENARIO`: the packet model partitioned over MPI ranks.
// Built only when MPI is found (FABRICSIM_HAVE_MPI); mpi_engine.cpp has the design.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/run/run.hpp"

namespace fabricsim {

/// The engine that runs the packet model of `prepared` partitioned over MPI_COMM_WORLD's ranks
/// (a PacketEngineFactory for simulate(): MPI must be initialised, and every rank calls
/// simulate() with the same scenario and this engine). Rank 0 receives the gathered results; the
/// others' reports are partial and must not be written.
std::unique_ptr<PacketEngine> make_mpi_engine(const Prepared& prepared);

/// trace.json over MPI: every rank records its share of the NetObserver calls (at most
/// `max_events` + 1 of them, the cap of `run --trace-events`; 0 = no trace) and rank 0 writes
/// the merged trace, byte-identical to the sequential run's. Call on every rank before the run.
void set_mpi_trace_cap(int64_t max_events);

}  // namespace fabricsim
