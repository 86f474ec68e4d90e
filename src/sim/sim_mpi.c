/* tfmm_sim_create_mpi and tfmm_sim_restore_mpi: the sim of sim.c with its
 * solver over a communicator, made by the domain layer
 * (tfmm_solver_create_mpi, src/domain/). Built with MPI only. */
#include <mpi.h> /* before tilefmm.h (through sim.h): the calls with MPI_Comm */

#include "sim/sim.h"

static tfmm_status make_solver(void *ctx, const tfmm_config *cfg,
                               tfmm_solver **out) {
  return tfmm_solver_create_mpi(out, cfg, *(MPI_Comm *)ctx);
}

tfmm_status tfmm_sim_create_mpi(tfmm_sim **out, const tfmm_sim_config *cfg,
                                MPI_Comm comm, size_t n, const double *pos,
                                const double *vel, const double *mass,
                                const uint64_t *ids) {
  return tfmm_sim_create_by(out, cfg, n, pos, vel, mass, ids, make_solver,
                            &comm);
}

tfmm_status tfmm_sim_restore_mpi(tfmm_sim **out, const tfmm_sim_config *cfg,
                                 MPI_Comm comm, const tfmm_sim_state *state) {
  return tfmm_sim_restore_by(out, cfg, state, make_solver, &comm);
}
