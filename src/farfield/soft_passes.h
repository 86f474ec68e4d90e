/* The far field's passes with the Plummer-softened kernel inside the
 * expansions (soft_taylor.h): the schedule of passes.h over the Cartesian
 * operators, so that no softening separation is needed in the lists
 * (issue 28). Each cell's expansion is tfmm_soft_taylor_size(p) doubles;
 * phi and grad as in soft_taylor.h (no G, acceleration = grad Phi).
 * eps >= 0, 0 <= p <= TFMM_SOFT_TAYLOR_ORDER_MAX. */
#ifndef TFMM_SOFT_PASSES_H
#define TFMM_SOFT_PASSES_H

#include "farfield/passes.h"

/* The softened kernel's operator table (soft_taylor.h). */
extern const tfmm_far_ops TFMM_FAR_OPS_SOFTENED;

/* The passes of passes.h with TFMM_FAR_OPS_SOFTENED, by name. */
void tfmm_soft_upward_pass(const tfmm_octree *t, int p, double *M);
void tfmm_soft_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                        double eps, const double *M, double *L);
void tfmm_soft_downward_pass(const tfmm_octree *t, int p, double *L,
                             double *phi, double *grad);
void tfmm_soft_downward_pass_at(const tfmm_octree *t, int p,
                                const int32_t *targets, double *L, double *phi,
                                double *grad);
void tfmm_soft_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                        double eps, const double *M, double *phi, double *grad);
void tfmm_soft_m2p_pass_at(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                           double eps, const int32_t *targets, const double *M,
                           double *phi, double *grad);

#endif
