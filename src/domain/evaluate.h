/* One evaluation over the ranks (evaluate.c: its stages in order). */
#ifndef TFMM_DOMAIN_EVALUATE_H
#define TFMM_DOMAIN_EVALUATE_H

#include "domain/state.h"

/* One call over the ranks (evaluate.c), the handle's
 * tfmm_solver_compute(_active): the forces at this rank's n bodies (at
 * those with active nonzero; active NULL: all) from every rank's, at the
 * setting the planner over the ranks chooses (d->plan: tfmm_planner_run,
 * which may evaluate a few times); the handle's statistics into *stats,
 * the same choice and measured error on every rank, d->stats this rank's
 * over the ranks. */
tfmm_status tfmm_domain_compute(tfmm_domain *d, size_t n, const double *pos,
                                const double *mass, const unsigned char *active,
                                double *acc, double *pot, tfmm_stats *stats,
                                tfmm_error *err);

#endif
