/* The split of the bodies over the ranks along the Morton curve
 * (decompose.c); tfmm_domain_owners (domain.h) is its face to the
 * simulation. */
#ifndef TFMM_DOMAIN_DECOMPOSE_H
#define TFMM_DOMAIN_DECOMPOSE_H

#include "domain/state.h"
#include "units.h"

#include <stddef.h>
#include <stdint.h>

/* The common cube of every rank's bodies (lowest corner, side) and the
 * internal units of the multipoles sent between ranks (units.h), from
 * bounds reduced over the ranks; *total: the bodies of all ranks. */
tfmm_status tfmm_domain_bounds(tfmm_domain *d, size_t n, const double *pos,
                               const double *mass, double box_size,
                               double cube[4], tfmm_units *units, size_t *total,
                               tfmm_error *err);

/* d->split for the keys of this rank's n bodies: contiguous key ranges of
 * equal cost, each body weighing its last owner's cost per body (1 for
 * all before the first measurement). */
tfmm_status tfmm_domain_split(tfmm_domain *d, size_t n, const uint64_t *keys,
                              tfmm_error *err);

/* The owner of a key under d->split. */
int tfmm_domain_owner_of(const tfmm_domain *d, uint64_t key);

#endif
