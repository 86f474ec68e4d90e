/* The local (Taylor) expansions of the Plummer-softened kernel: M2L, L2L
 * and L2P (see soft_taylor.h for the series, the truncation and the
 * storage).
 *
 * M2L and L2L are one contraction: out_k += sum_{|n| <= p - |k|} a_n
 * b_{n+k}, with a = (-1)^|n| M_n and b = D^n g(R) for M2L, a = d^m / m!
 * and b = L for L2L. For n = (t - j, j - c, c) and k = (k_a, k_b, k_c)
 * with j_k = k_b + k_c, n + k has degree t + |k|, j + j_k and last
 * component c + k_c: for fixed k, t and j the entries n (c = 0 .. j) and
 * n + k are contiguous in the storage, and the sum is a dot product. The
 * arithmetic is in soft_taylor_ops.h, shared with the GPU. */
#include "farfield/soft_taylor.h"

#include "farfield/soft_taylor_ops.h"

enum {
  /* Doubles of an expansion of the highest order. */
  SIZE_MAX_P = (TFMM_SOFT_TAYLOR_ORDER_MAX + 1) *
               (TFMM_SOFT_TAYLOR_ORDER_MAX + 2) *
               (TFMM_SOFT_TAYLOR_ORDER_MAX + 3) / 6,
  LEVEL_MAX = 288 /* >= tfmm_soft_op_level_max(TFMM_SOFT_TAYLOR_ORDER_MAX) */
};

void tfmm_soft_taylor_m2l(int p, double eps, const double *M,
                          const double c_s[3], const double c_t[3], double *L) {
  double D[SIZE_MAX_P], buf[3 * LEVEL_MAX];
  const double R[3] = {c_t[0] - c_s[0], c_t[1] - c_s[1], c_t[2] - c_s[2]};
  tfmm_soft_op_m2l(p, eps, M, R, D, buf, LEVEL_MAX, L);
}

void tfmm_soft_taylor_l2l(int p, const double *L, const double c_parent[3],
                          const double c_child[3], double *Lc) {
  double d_m[SIZE_MAX_P];
  const double d[3] = {c_child[0] - c_parent[0], c_child[1] - c_parent[1],
                       c_child[2] - c_parent[2]};
  tfmm_soft_op_l2l(p, L, d, d_m, Lc);
}

void tfmm_soft_taylor_l2p(int p, const double *L, const double c[3], size_t n,
                          const double *pos, double *phi, double *grad) {
  double z_m[SIZE_MAX_P];
  for (size_t i = 0; i < n; i++) {
    const double z[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                         pos[3 * i + 2] - c[2]};
    double out[4] = {0, 0, 0, 0};
    tfmm_soft_op_l2p(p, L, z, z_m, out);
    if (phi != NULL)
      phi[i] += out[0];
    if (grad != NULL)
      grad[3 * i] += out[1], grad[3 * i + 1] += out[2],
          grad[3 * i + 2] += out[3];
  }
}
