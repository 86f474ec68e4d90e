/* The measured error of an evaluation over ranks (measure_ranks.c). */
#ifndef TFMM_DOMAIN_MEASURE_RANKS_H
#define TFMM_DOMAIN_MEASURE_RANKS_H

#include "domain/state.h"

/* Collective. The error of the forces acc of this rank's n bodies (pos,
 * mass, in the caller's units and order, as tfmm_domain_compute gives
 * them back) at a sample of k of every rank's bodies (at most all of
 * them) drawn from seed, and at the worst group (the bodies of the leaf
 * that holds the sample's largest error), into stats->error alike on every
 * rank. The leaves are those of the octree of every rank's bodies in the
 * common cube d->cube with leaves of d->leaf bodies. */
tfmm_status tfmm_domain_measure(tfmm_domain *d, size_t n, const double *pos,
                                const double *mass, const double *acc, size_t k,
                                double confidence, uint64_t seed,
                                tfmm_stats *stats, tfmm_error *err);

#endif
