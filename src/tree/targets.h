/* The targets of an evaluation at a subset of the bodies (the active
 * bodies of individual time steps, tfmm_solver_compute_active), counted
 * per cell of the tree: the traversals drop every pair whose target cell
 * holds none, and the downward passes skip such cells. */
#ifndef TFMM_TARGETS_H
#define TFMM_TARGETS_H

#include "tree/octree.h"

#include <stddef.h>
#include <stdint.h>

/* count[c] = the active bodies of cell c, for every cell of t (ncells
 * entries): the mask gathered through the tree's permutation into sorted
 * order and summed as a prefix, each cell's bodies being a contiguous
 * range of it. Returns 0, or -1 when scratch allocation fails. */
int tfmm_targets_per_cell(const tfmm_octree *t, const unsigned char *active,
                          int32_t *count);

#endif
