/* Cartesian Taylor expansions of the Plummer-softened kernel (see
 * soft_taylor.h for the series and the storage).
 *
 * Derivatives. g(R) = f(s), s = |R|^2, f(s) = (s + eps^2)^(-1/2), whose
 * s-derivatives are f^(m)(s) = (-1/2)_m (s + eps^2)^(-1/2-m). With
 * phi_m(R) = 2^m f^(m)(|R|^2) = (-1)^m (2m - 1)!! (|R|^2 + eps^2)^(-m-1/2)
 * one has d phi_m / dR_x = R_x phi_{m+1}, and Leibniz's rule on
 * D^n phi_m = D^{n - e_x} (R_x phi_{m+1}) gives, for A_n^(m) = D^n phi_m,
 *
 *   A_n^(m) = R_x A_{n - e_x}^(m+1) + (n_x - 1) A_{n - 2 e_x}^(m+1)
 *
 * (and the same along y or z): the Hermite recursion of McMurchie &
 * Davidson (1978, J. Comput. Phys. 26, 218), there for the Boys function,
 * here for phi_m. D^n g = A_n^(0). With eps = 0, phi_m is Newton's
 * (-1)^m (2m - 1)!! / r^(2m+1) and the recursion that of Newtonian
 * Cartesian codes. Each level t = |n| needs the levels t - 1 and t - 2 at
 * m + 1 only, so three rolling buffers hold A for m = 0 .. q - t.
 *
 * Within a level, the entries with a > 0 (j = b + c < t) step along x and
 * keep their position: n - e_x and n - 2 e_x sit at the same j and c one
 * and two levels down. The entries with a = 0 step along y (b > 0) or,
 * for n = (0, 0, t), along z. The arithmetic is in soft_taylor_ops.h,
 * written once for this file and the GPU (kernels/far/soft_far_gpu.cu). */
#include "farfield/soft_taylor.h"

#include "farfield/soft_taylor_ops.h"

enum {
  Q_MAX = TFMM_SOFT_TAYLOR_ORDER_MAX + 1,
  /* Doubles of an expansion of order Q_MAX: the derivatives M2P needs. */
  SIZE_MAX_Q = (Q_MAX + 1) * (Q_MAX + 2) * (Q_MAX + 3) / 6,
  /* The most A of one level, tfmm_soft_op_level_max(Q_MAX): 275 at
   * q = 13, t = 9. */
  LEVEL_MAX = 288
};

size_t tfmm_soft_taylor_size(int p) { return (size_t)tfmm_soft_op_size(p); }

void tfmm_soft_taylor_derivatives(int q, double eps, const double R[3],
                                  double *D) {
  double buf[3 * LEVEL_MAX];
  tfmm_soft_op_derivatives(q, eps, R, D, buf, LEVEL_MAX);
}

void tfmm_soft_taylor_monomials(int p, const double y[3], double *out) {
  tfmm_soft_op_monomials(p, y, out);
}

void tfmm_soft_taylor_p2m(int p, const double c[3], size_t n, const double *pos,
                          const double *mass, double *M) {
  double y_n[SIZE_MAX_Q];
  for (size_t i = 0; i < n; i++) {
    const double y[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                         pos[3 * i + 2] - c[2]};
    tfmm_soft_op_p2m(p, y, mass[i], y_n, M);
  }
}

void tfmm_soft_taylor_m2m(int p, const double *Mc, const double c_child[3],
                          const double c_parent[3], double *Mp) {
  double d_n[SIZE_MAX_Q];
  const double d[3] = {c_child[0] - c_parent[0], c_child[1] - c_parent[1],
                       c_child[2] - c_parent[2]};
  tfmm_soft_op_m2m(p, Mc, d, d_n, Mp);
}

void tfmm_soft_taylor_m2p(int p, double eps, const double *M, const double c[3],
                          size_t n, const double *pos, double *phi,
                          double *grad) {
  double D[SIZE_MAX_Q], buf[3 * LEVEL_MAX];
  for (size_t i = 0; i < n; i++) {
    const double R[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                         pos[3 * i + 2] - c[2]};
    double out[4] = {0, 0, 0, 0};
    tfmm_soft_op_m2p(p, eps, M, R, D, buf, LEVEL_MAX, out);
    if (phi != NULL)
      phi[i] += out[0];
    if (grad != NULL)
      grad[3 * i] += out[1], grad[3 * i + 1] += out[2],
          grad[3 * i + 2] += out[3];
  }
}
