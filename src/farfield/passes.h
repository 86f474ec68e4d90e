/* The far field's passes over the tree, driving the expansion operators of
 * expansion.h. Each cell's expansion is tfmm_expansion_size(p) doubles at
 * [cell * size] of M (multipoles) or L (locals). Every pass writes each
 * output from one thread (parents gather from children, targets from their
 * list), so there are no atomics and the result does not depend on the
 * number of threads. Body outputs are in the tree's sorted order. */
#ifndef TFMM_PASSES_H
#define TFMM_PASSES_H

#include "tree/lists.h"

/* P2M at the leaves, then M2M level by level up to the root. M is
 * overwritten. */
void tfmm_upward_pass(const tfmm_octree *t, int p, double *M);

/* L[target] = sum over its M2L list of M2L(M[source]). L is overwritten. */
void tfmm_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                   const double *M, double *L);

/* L2L level by level down from the root (L is updated in place), then L2P
 * at the leaves: phi[k] = Phi and grad[3k..] = grad Phi of sorted body k
 * (overwritten). */
void tfmm_downward_pass(const tfmm_octree *t, int p, double *L, double *phi,
                        double *grad);

/* The same at the targets of a subset: targets[c] counts those of cell c
 * (tree/targets.h; NULL: every body). Cells without targets take no L2L
 * (their L is left as it is) and leaves without targets no L2P (their
 * bodies' phi and grad are left as they are); the others' results are
 * tfmm_downward_pass's bit for bit. */
void tfmm_downward_pass_at(const tfmm_octree *t, int p, const int32_t *targets,
                           double *L, double *phi, double *grad);

/* phi and grad of every body are ADDED the multipoles on the M2P lists of
 * its leaf and of every ancestor of it (the lists are by target cell):
 * Barnes-Hut's far field, and the FMM's part for targets of few bodies.
 * Parallel over leaves, each walking up its ancestors: no write is shared. */
void tfmm_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                   const double *M, double *phi, double *grad);

/* The same at the leaves that hold targets (targets as for
 * tfmm_downward_pass_at); the other bodies' phi and grad are left as they
 * are. */
void tfmm_m2p_pass_at(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                      const int32_t *targets, const double *M, double *phi,
                      double *grad);

#endif
