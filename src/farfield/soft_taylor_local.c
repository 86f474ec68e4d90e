/* The local (Taylor) expansions of the Plummer-softened kernel: M2L, L2L
 * and L2P (see soft_taylor.h for the series, the truncation and the
 * storage).
 *
 * M2L and L2L are one contraction: out_k += sum_{|n| <= p - |k|} a_n
 * b_{n+k}, with a = (-1)^|n| M_n and b = D^n g(R) for M2L, a = d^m / m!
 * and b = L for L2L. For n = (t - j, j - c, c) and k = (k_a, k_b, k_c)
 * with j_k = k_b + k_c, n + k has degree t + |k|, j + j_k and last
 * component c + k_c: for fixed k, t and j the entries n (c = 0 .. j) and
 * n + k are contiguous in the storage, and the sum is a dot product. */
#include "farfield/soft_taylor.h"

#include <string.h>

enum {
  /* Doubles of an expansion of the highest order. */
  SIZE_MAX_P = (TFMM_SOFT_TAYLOR_ORDER_MAX + 1) *
               (TFMM_SOFT_TAYLOR_ORDER_MAX + 2) *
               (TFMM_SOFT_TAYLOR_ORDER_MAX + 3) / 6
};

static inline int level_offset(int t) { return t * (t + 1) * (t + 2) / 6; }

/* out_k += sum_{|n| <= p - |k|} a_n b_{n+k} for every |k| <= p. */
static void contract(int p, const double *restrict a, const double *restrict b,
                     double *restrict out) {
  for (int tk = 0; tk <= p; tk++)
    for (int jk = 0; jk <= tk; jk++)
      for (int kc = 0; kc <= jk; kc++) {
        double sum = 0;
        for (int t = 0; t + tk <= p; t++)
          for (int j = 0; j <= t; j++) {
            const int J = j + jk;
            const double *an = a + level_offset(t) + j * (j + 1) / 2;
            const double *bn = b + level_offset(t + tk) + J * (J + 1) / 2 + kc;
            for (int c = 0; c <= j; c++)
              sum += an[c] * bn[c];
          }
        out[tfmm_soft_taylor_index(tk - jk, jk - kc, kc)] += sum;
      }
}

void tfmm_soft_taylor_m2l(int p, double eps, const double *M,
                          const double c_s[3], const double c_t[3], double *L) {
  double D[SIZE_MAX_P], Ms[SIZE_MAX_P];
  const double R[3] = {c_t[0] - c_s[0], c_t[1] - c_s[1], c_t[2] - c_s[2]};
  tfmm_soft_taylor_derivatives(p, eps, R, D);
  for (int t = 0; t <= p; t++) { /* (-1)^|n| M_n */
    const double sign = t % 2 ? -1.0 : 1.0;
    for (int k = level_offset(t); k < level_offset(t + 1); k++)
      Ms[k] = sign * M[k];
  }
  contract(p, Ms, D, L);
}

void tfmm_soft_taylor_l2l(int p, const double *L, const double c_parent[3],
                          const double c_child[3], double *Lc) {
  double d_m[SIZE_MAX_P];
  const double d[3] = {c_child[0] - c_parent[0], c_child[1] - c_parent[1],
                       c_child[2] - c_parent[2]};
  tfmm_soft_taylor_monomials(p, d, d_m);
  contract(p, d_m, L, Lc);
}

/* Phi = sum_k L_k z^k / k!; d/dz_x of z^k / k! is z^(k - e_x) / (k - e_x)!,
 * so grad_x Phi = sum_m L_{m + e_x} z^m / m!: m + e_x sits one level up at
 * the same position (j, c), m + e_y and m + e_z at (j + 1, c) and
 * (j + 1, c + 1), as in M2P. */
void tfmm_soft_taylor_l2p(int p, const double *L, const double c[3], size_t n,
                          const double *pos, double *phi, double *grad) {
  double z_m[SIZE_MAX_P];
  for (size_t i = 0; i < n; i++) {
    const double z[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                         pos[3 * i + 2] - c[2]};
    tfmm_soft_taylor_monomials(p, z, z_m);
    double f = 0, gx = 0, gy = 0, gz = 0;
    for (int k = 0; k < level_offset(p + 1); k++)
      f += L[k] * z_m[k];
    for (int t = 0; t < p; t++) {
      const double *zm = z_m + level_offset(t), *l1 = L + level_offset(t + 1);
      for (int j = 0, k = 0; j <= t; j++)
        for (int cc = 0; cc <= j; cc++, k++) {
          gx += zm[k] * l1[k];
          gy += zm[k] * l1[k + j + 1];
          gz += zm[k] * l1[k + j + 2];
        }
    }
    if (phi != NULL)
      phi[i] += f;
    if (grad != NULL)
      grad[3 * i] += gx, grad[3 * i + 1] += gy, grad[3 * i + 2] += gz;
  }
}
