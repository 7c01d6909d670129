// `mpirun -np N fabricsim run SCENARIO` (issue 10): the packet model partitioned over MPI ranks.
// Built only when MPI is found (FABRICSIM_HAVE_MPI); run_mpi.cpp has the design.
#pragma once

namespace fabricsim {

/// Makes simulate() run the packet model partitioned over MPI_COMM_WORLD's ranks (MPI must be
/// initialised; every rank calls simulate() with the same scenario). Rank 0 receives the
/// gathered results; the others' reports are partial and must not be written.
void install_mpi_engine();

}  // namespace fabricsim
