/* The softened FMM's passes (soft_passes.h): passes.c's schedule, the
 * operators of soft_taylor.h. */
#include "farfield/soft_passes.h"

#include "farfield/soft_taylor.h"

const tfmm_far_ops TFMM_FAR_OPS_SOFTENED = {
    "softened",           TFMM_SOFT_TAYLOR_ORDER_MAX, tfmm_soft_taylor_size,
    tfmm_soft_taylor_p2m, tfmm_soft_taylor_m2m,       tfmm_soft_taylor_m2l,
    tfmm_soft_taylor_l2l, tfmm_soft_taylor_l2p,       tfmm_soft_taylor_m2p};

void tfmm_soft_upward_pass(const tfmm_octree *t, int p, double *M) {
  tfmm_far_upward(&TFMM_FAR_OPS_SOFTENED, t, p, M);
}

void tfmm_soft_m2l_pass(const tfmm_octree *t, const tfmm_csr *m2l, int p,
                        double eps, const double *M, double *L) {
  tfmm_far_m2l(&TFMM_FAR_OPS_SOFTENED, t, m2l, p, eps, M, L);
}

void tfmm_soft_downward_pass(const tfmm_octree *t, int p, double *L,
                             double *phi, double *grad) {
  tfmm_far_downward_at(&TFMM_FAR_OPS_SOFTENED, t, p, NULL, L, phi, grad);
}

void tfmm_soft_downward_pass_at(const tfmm_octree *t, int p,
                                const int32_t *targets, double *L, double *phi,
                                double *grad) {
  tfmm_far_downward_at(&TFMM_FAR_OPS_SOFTENED, t, p, targets, L, phi, grad);
}

void tfmm_soft_m2p_pass(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                        double eps, const double *M, double *phi,
                        double *grad) {
  tfmm_far_m2p_at(&TFMM_FAR_OPS_SOFTENED, t, m2p, p, eps, NULL, M, phi, grad);
}

void tfmm_soft_m2p_pass_at(const tfmm_octree *t, const tfmm_csr *m2p, int p,
                           double eps, const int32_t *targets, const double *M,
                           double *phi, double *grad) {
  tfmm_far_m2p_at(&TFMM_FAR_OPS_SOFTENED, t, m2p, p, eps, targets, M, phi,
                  grad);
}
