/* Bodies at one point, found from the tree's sort: two bodies at one point
 * share a key, so only runs of equal keys need comparing. */
#ifndef TFMM_COINCIDENT_H
#define TFMM_COINCIDENT_H

#include "tree/octree.h"

/* Returns 1 and the input indices (*i < *j) of two bodies at one point, the
 * pair with the smallest *i and then *j; 0 when there is none; -1 when out
 * of memory. O(n) over OpenMP threads plus a sort of each run of equal keys
 * (O(n log n) at worst, when all bodies share a key). */
int tfmm_octree_find_coincident(const tfmm_octree *t, int64_t *i, int64_t *j);

#endif
