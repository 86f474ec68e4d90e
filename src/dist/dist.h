/* The solver over several processes (tilefmm.h, "Several processes: MPI"),
 * as the rest of the library sees it: no mpi.h here, so that solver.c and
 * the simulation compile alike with and without MPI (dist_none.c gives the
 * same calls for a build without it, where no solver has a communicator).
 *
 * Every call taking a tfmm_dist is collective over its communicator. A NULL
 * tfmm_dist (a solver of one process) makes the reductions no-ops. */
#ifndef TFMM_DIST_H
#define TFMM_DIST_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tfmm_dist tfmm_dist;

/* The tfmm_dist of a solver (NULL: one process, or NULL). */
tfmm_dist *tfmm_solver_dist_of(const tfmm_solver *s);

/* Frees the communicator's duplicate and the buffers. NULL allowed. */
void tfmm_dist_destroy(tfmm_dist *d);

/* The evaluation of tfmm_solver_compute(_active) on a solver with a
 * communicator: the forces at this rank's n bodies (at those with active
 * nonzero; active NULL: all) from every rank's. Errors on s->err. */
tfmm_status tfmm_dist_compute(tfmm_solver *s, size_t n, const double *pos,
                              const double *mass, const unsigned char *active,
                              double *acc, double *pot);

/* Ranks and this rank (1 and 0 for NULL). */
int tfmm_dist_size(const tfmm_dist *d);
int tfmm_dist_rank(const tfmm_dist *d);

/* Every rank's st agreed on: TFMM_OK when all are, otherwise the status of
 * the lowest failing rank, whose message every other rank's err gets as
 * "rank r: <message>". */
tfmm_status tfmm_dist_agree(tfmm_dist *d, tfmm_status st, tfmm_error *err);

/* In-place sums (and a maximum) over the ranks. */
tfmm_status tfmm_dist_sum(tfmm_dist *d, double *v, int count, tfmm_error *err);
tfmm_status tfmm_dist_sum_i64(tfmm_dist *d, int64_t *v, int count,
                              tfmm_error *err);
tfmm_status tfmm_dist_max(tfmm_dist *d, double *v, int count, tfmm_error *err);

/* The rank whose key range holds each of n positions, from the split of
 * the last evaluation (owner[i] in 0..size-1); without one yet (no
 * evaluation) every body stays (owner = this rank). */
tfmm_status tfmm_dist_owners(tfmm_dist *d, size_t n, const double *pos,
                             int *owner, tfmm_error *err);

/* Moves records of `width` doubles between ranks: record i goes to rank
 * owner[i]. *out (malloc'd, the caller frees) gets the records this rank
 * receives, *nout of them, grouped by source rank in rank order, each
 * group in its sender's order. */
tfmm_status tfmm_dist_migrate_records(tfmm_dist *d, size_t n, int width,
                                      const double *records, const int *owner,
                                      double **out, size_t *nout,
                                      tfmm_error *err);

#endif
