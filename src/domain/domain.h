/* The domain layer (src/domain/): a solver over the ranks of an MPI
 * communicator, above the solver. tfmm_solver_create_mpi gives its caller a
 * solver handle over a tfmm_domain (solver_over.h), and the domain
 * evaluates with a plain solver of its own for each rank's part, through
 * the public entry points. This header is what the simulation, a layer
 * above, calls: the domain behind a solver, the reductions and the moves
 * of bodies between ranks. No mpi.h here, so that the simulation compiles
 * alike with and without MPI (domain_none.c gives the same calls for a
 * build without it, where no solver has a domain).
 *
 * Every call taking a tfmm_domain is collective over its communicator. A
 * NULL tfmm_domain (one process) makes the reductions no-ops. */
#ifndef TFMM_DOMAIN_H
#define TFMM_DOMAIN_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tfmm_domain tfmm_domain;

/* The domain behind a solver made by tfmm_solver_create_mpi; NULL for any
 * other solver (one process) and for NULL. */
tfmm_domain *tfmm_domain_of(const tfmm_solver *s);

/* Ranks and this rank (1 and 0 for NULL). */
int tfmm_domain_size(const tfmm_domain *d);
int tfmm_domain_rank(const tfmm_domain *d);

/* Every rank's st agreed on: TFMM_OK when all are, otherwise the status of
 * the lowest failing rank, whose message every other rank's err gets as
 * "rank r: <message>". */
tfmm_status tfmm_domain_agree(tfmm_domain *d, tfmm_status st, tfmm_error *err);

/* In-place sums (and a maximum) over the ranks; tfmm_domain_sum's are
 * the same bits on every rank. */
tfmm_status tfmm_domain_sum(tfmm_domain *d, double *v, int count,
                            tfmm_error *err);
tfmm_status tfmm_domain_sum_i64(tfmm_domain *d, int64_t *v, int count,
                                tfmm_error *err);
tfmm_status tfmm_domain_max(tfmm_domain *d, double *v, int count,
                            tfmm_error *err);

/* The rank whose key range holds each of n positions, from the split of
 * the last evaluation (owner[i] in 0..size-1); without one yet (no
 * evaluation) every body stays (owner = this rank). */
tfmm_status tfmm_domain_owners(tfmm_domain *d, size_t n, const double *pos,
                               int *owner, tfmm_error *err);

/* Moves records of `width` doubles between ranks: record i goes to rank
 * owner[i]. *out (malloc'd, the caller frees) gets the records this rank
 * receives, *nout of them, grouped by source rank in rank order, each
 * group in its sender's order. */
tfmm_status tfmm_domain_migrate_records(tfmm_domain *d, size_t n, int width,
                                        const double *records, const int *owner,
                                        double **out, size_t *nout,
                                        tfmm_error *err);

#endif
