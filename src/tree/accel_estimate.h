/* The accelerations the error-based opening criterion (mac.h) measures its
 * error against, estimated before the lists exist.
 *
 * For every leaf, the field at its centre of mass from every other cell,
 * by a monopole Barnes-Hut walk (a cell of radius r at distance d is used
 * whole when r < ESTIMATE_THETA d, a leaf always), with the Plummer
 * kernel at eps so that near leaves stay finite; the leaf's own bodies
 * are left out. Then every cell takes the least over its leaves: |a|_A.
 * Leaving the own leaf out underestimates the bodies of an isolated group
 * (which only opens more cells); the walk is within 1% of the field at
 * the centre of mass for half the leaves and within 8% for 95% of them
 * (tests/test_tree.c), errors the criterion's calibration
 * takes up. O(leaves log N). */
#ifndef TFMM_ACCEL_ESTIMATE_H
#define TFMM_ACCEL_ESTIMATE_H

#include "tree/octree.h"

#include <stddef.h>

/* A malloc'd array of t->ncells values of |a|_A (G = 1), or NULL for no
 * memory. */
double *tfmm_accel_estimate(const tfmm_octree *t, double eps);

/* The same with nsrc more point masses in the field (src: x, y, z, m
 * each, in t's units), each taken whole as a leaf is: the bodies of other
 * processes, as the domain layer describes them (src/domain/). */
double *tfmm_accel_estimate_with(const tfmm_octree *t, double eps,
                                 const double *src, size_t nsrc);

/* |a|_A from the bodies' own accelerations at a previous evaluation (a
 * simulation's last step: Dehnen 2014 sec. 3.2; SWIFT keeps the least
 * |a| of a cell's bodies from the previous step the same way) instead of
 * the estimate: for every cell the least tfmm_mac_prior_accel over its
 * bodies, acc being 3 values a body in input order (t->order maps the
 * sorted bodies there) in the caller's units and scale bringing them to
 * t's (mac_rule.h). The least is exact in any order, so the GPU's
 * (kernels/traversal/traverse_gpu.cu) gives the same bits. A malloc'd
 * array of t->ncells values, or NULL for no memory. */
double *tfmm_accel_prior(const tfmm_octree *t, const double *acc, double scale);

#endif
