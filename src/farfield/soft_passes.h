/* The far field's passes over the tree with the Plummer-softened kernel
 * inside the expansions (soft_taylor.h): the library's FMM passes
 * (passes.h) with the Cartesian operators in place of the solid
 * harmonics, so that no softening separation is needed in the lists
 * (issue 28). Each cell's expansion is tfmm_soft_taylor_size(p) doubles
 * at [cell * size] of M (multipoles) or L (locals). Every pass writes each
 * output from one thread, so the result does not depend on the number of
 * threads. Body outputs are in the tree's sorted order; phi and grad as in
 * soft_taylor.h (no G, acceleration = grad Phi). eps >= 0, 0 <= p <=
 * TFMM_SOFT_TAYLOR_ORDER_MAX. */
#ifndef TFMM_SOFT_PASSES_H
#define TFMM_SOFT_PASSES_H

#include "tree/lists.h"

/* P2M at the leaves, then M2M level by level up to the root. M is
 * overwritten. */
void tfmm_soft_upward_pass(const tfmm_octree *t, int p, double *M);

/* L[target] = sum over its M2L list of M2L(M[source]) with softening eps.
 * L is overwritten. */
void tfmm_soft_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                        double eps, const double *M, double *L);

/* L2L level by level down from the root (L updated in place), then L2P at
 * the leaves: phi[k] and grad[3k..] of sorted body k (overwritten). */
void tfmm_soft_downward_pass(const tfmm_octree *t, int p, double *L,
                             double *phi, double *grad);

/* phi and grad of every body are ADDED the multipoles on the M2P lists of
 * its leaf and of every ancestor (lists by target cell, as
 * tfmm_m2p_pass), with softening eps. */
void tfmm_soft_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                        double eps, const double *M, double *phi, double *grad);

#endif
