/* The far field's passes over the tree: one schedule (upward, M2L,
 * downward, M2P) over an operator table, so that the Newtonian kernel of
 * expansion.h and the Plummer-softened one of soft_taylor.h (issue 28) run
 * the same passes. Each cell's expansion is ops->size(p) doubles at
 * [cell * size] of M (multipoles) or L (locals). Every pass writes each
 * output from one thread (parents gather from children, targets from their
 * list), so there are no atomics and the result does not depend on the
 * number of threads. Body outputs are in the tree's sorted order. */
#ifndef TFMM_PASSES_H
#define TFMM_PASSES_H

#include "tree/lists.h"

#include <stddef.h>

/* A far-field kernel's operators (the families of expansion.h and
 * soft_taylor.h): P2M, M2M, L2L and L2P do not depend on the kernel's
 * softening; M2L and M2P take eps (the Newtonian table ignores it). */
typedef struct tfmm_far_ops {
  const char *name; /* "newton" or "softened" */
  int order_max;    /* the highest order the operators take */
  size_t (*size)(int p);
  void (*p2m)(int p, const double c[3], size_t n, const double *pos,
              const double *mass, double *M);
  void (*m2m)(int p, const double *Mc, const double c_child[3],
              const double c_parent[3], double *Mp);
  void (*m2l)(int p, double eps, const double *M, const double c_src[3],
              const double c_tgt[3], double *L);
  void (*l2l)(int p, const double *Lp, const double c_parent[3],
              const double c_child[3], double *Lc);
  void (*l2p)(int p, const double *L, const double c[3], size_t n,
              const double *pos, double *phi, double *grad);
  void (*m2p)(int p, double eps, const double *M, const double c[3], size_t n,
              const double *pos, double *phi, double *grad);
} tfmm_far_ops;

/* Newton's 1/r in solid harmonics (expansion.h). */
extern const tfmm_far_ops TFMM_FAR_OPS_NEWTON;

/* ---- The schedule, for either table ---- */

/* P2M at the leaves, then M2M level by level up to the root. M is
 * overwritten. */
void tfmm_far_upward(const tfmm_far_ops *k, const tfmm_octree *t, int p,
                     double *M);

/* L[target] = sum over its M2L list of M2L(M[source]) with softening eps.
 * L is overwritten. */
void tfmm_far_m2l(const tfmm_far_ops *k, const tfmm_octree *t,
                  const tfmm_csr *m2l, int p, double eps, const double *M,
                  double *L);

/* L2L level by level down from the root (L is updated in place), then L2P
 * at the leaves: phi[k] = Phi and grad[3k..] = grad Phi of sorted body k
 * (overwritten), at the targets of a subset: targets[c] counts those of
 * cell c (tree/targets.h; NULL: every body). Cells without targets take no
 * L2L (their L is left as it is) and leaves without targets no L2P (their
 * bodies' phi and grad are left as they are); the others' results are
 * those of the whole pass bit for bit. */
void tfmm_far_downward_at(const tfmm_far_ops *k, const tfmm_octree *t, int p,
                          const int32_t *targets, double *L, double *phi,
                          double *grad);

/* phi and grad of every body of a leaf that holds targets (targets as
 * above) are ADDED the multipoles on the M2P lists of its leaf and of every
 * ancestor of it (the lists are by target cell), with softening eps:
 * Barnes-Hut's far field, and the FMM's part for targets of few bodies.
 * Parallel over leaves, each walking up its ancestors: no write is
 * shared. */
void tfmm_far_m2p_at(const tfmm_far_ops *k, const tfmm_octree *t,
                     const tfmm_csr *m2p, int p, double eps,
                     const int32_t *targets, const double *M, double *phi,
                     double *grad);

/* ---- Newton's passes, by name (the GPU far field's tests and benches
 * compare against these) ---- */

void tfmm_upward_pass(const tfmm_octree *t, int p, double *M);
void tfmm_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                   const double *M, double *L);
void tfmm_downward_pass(const tfmm_octree *t, int p, double *L, double *phi,
                        double *grad);
void tfmm_downward_pass_at(const tfmm_octree *t, int p, const int32_t *targets,
                           double *L, double *phi, double *grad);
void tfmm_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                   const double *M, double *phi, double *grad);
void tfmm_m2p_pass_at(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                      const int32_t *targets, const double *M, double *phi,
                      double *grad);

#endif
