/* What passes between the ranks of a domain (exchange.c), besides the
 * reductions and moves that domain.h gives the simulation: MPI calls
 * checked, arrays of records all-to-all, and gathers. */
#ifndef TFMM_DOMAIN_EXCHANGE_H
#define TFMM_DOMAIN_EXCHANGE_H

#include "domain/state.h"

#include <stddef.h>

/* One MPI call checked: an error code becomes TFMM_ERR_MPI naming it. */
tfmm_status tfmm_domain_check(int rc, const char *what, tfmm_error *err);
#define TFMM_MPI_TRY(call, what, err)                                          \
  do {                                                                         \
    tfmm_status mpi_st_ = tfmm_domain_check((call), (what), (err));            \
    if (mpi_st_ != TFMM_OK)                                                    \
      return mpi_st_;                                                          \
  } while (0)

/* Sends count[r] records of width doubles to each rank r (send: grouped
 * by destination in rank order) and receives what each rank sends here:
 * *recv (malloc'd) holds them grouped by source in rank order, recv_count
 * (size entries) how many from each, *nrecv the total. */
tfmm_status tfmm_domain_alltoall(tfmm_domain *d, const double *send,
                                 const size_t *count, int width, double **recv,
                                 size_t *recv_count, size_t *nrecv,
                                 tfmm_error *err);

/* Every rank's count doubles gathered: *all (malloc'd) holds them in rank
 * order, offset (size + 1 entries) where each rank's begin. */
tfmm_status tfmm_domain_allgather(tfmm_domain *d, const double *mine,
                                  size_t count, double **all, size_t *offset,
                                  tfmm_error *err);

#endif
