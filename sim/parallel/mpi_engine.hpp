// `mpirun -np N fabricsim run SCENARIO` (issue 10): the packet model partitioned over MPI ranks.
// Built only when MPI is found (FABRICSIM_HAVE_MPI); mpi_engine.cpp has the design.
#pragma once

#include <cstdint>

namespace fabricsim {

/// Makes simulate() run the packet model partitioned over MPI_COMM_WORLD's ranks (MPI must be
/// initialised; every rank calls simulate() with the same scenario). Rank 0 receives the
/// gathered results; the others' reports are partial and must not be written.
void install_mpi_engine();

/// trace.json over MPI: every rank records its share of the NetObserver calls (at most
/// `max_events` + 1 of them, the cap of `run --trace-events`; 0 = no trace) and rank 0 writes
/// the merged trace, byte-identical to the sequential run's. Call on every rank before the run.
void set_mpi_trace_cap(int64_t max_events);

}  // namespace fabricsim
