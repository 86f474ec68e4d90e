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
 * for n = (0, 0, t), along z. */
#include "farfield/soft_taylor.h"

#include <math.h>
#include <string.h>

enum {
  Q_MAX = TFMM_SOFT_TAYLOR_ORDER_MAX + 1,
  /* Doubles of an expansion of order Q_MAX: the derivatives M2P needs. */
  SIZE_MAX_Q = (Q_MAX + 1) * (Q_MAX + 2) * (Q_MAX + 3) / 6,
  /* The most A of one level, max over t of (q - t + 1)(t + 1)(t + 2) / 2:
   * 275 at q = 13, t = 9. */
  LEVEL_MAX = 288,
  /* Positions of the deepest level. */
  LEVEL_COUNT_MAX = (Q_MAX + 1) * (Q_MAX + 2) / 2
};

/* Entries of degree t, and the index of the first. */
static inline int level_count(int t) { return (t + 1) * (t + 2) / 2; }
static inline int level_offset(int t) { return t * (t + 1) * (t + 2) / 6; }

size_t tfmm_soft_taylor_size(int p) { return (size_t)level_offset(p + 1); }

/* j = b + c of each position k of a level (the same at every level). */
static void fill_j(int q, int *jk) {
  for (int j = 0, k = 0; j <= q; j++)
    for (int c = 0; c <= j; c++)
      jk[k++] = j;
}

/* One level of the recursion: o = A_t^(m) from u = A_{t-1}^(m+1) and
 * v = A_{t-2}^(m+1) (v unused at t = 1). The positions k < t (t - 1) / 2
 * have a = t - j >= 2, the next t have a = 1; then a = 0. Flat loops, so
 * that the compiler may vectorise them. */
static void level_step(int t, const double R[3], const int *jk,
                       const double *restrict u, const double *restrict v,
                       double *restrict o) {
  const int base = t * (t + 1) / 2, base1 = (t - 1) * t / 2,
            base2 = t >= 2 ? (t - 2) * (t - 1) / 2 : 0;
  for (int k = 0; k < base1; k++) /* a >= 2: along x */
    o[k] = R[0] * u[k] + (double)(t - 1 - jk[k]) * v[k];
  for (int k = base1; k < base; k++) /* a = 1 */
    o[k] = R[0] * u[k];
  for (int c = 0; c + 1 < t; c++) /* a = 0, b = t - c >= 2: along y */
    o[base + c] = R[1] * u[base1 + c] + (double)(t - c - 1) * v[base2 + c];
  o[base + t - 1] = R[1] * u[base1 + t - 1]; /* b = 1 */
  o[base + t] = R[2] * u[base1 + t - 1] +    /* n = (0, 0, t): along z */
                (t >= 2 ? (t - 1) * v[base2 + t - 2] : 0.0);
}

void tfmm_soft_taylor_derivatives(int q, double eps, const double R[3],
                                  double *D) {
  double buf[3][LEVEL_MAX];
  int jk[LEVEL_COUNT_MAX];
  fill_j(q, jk);
  const double s = 1.0 / (R[0] * R[0] + R[1] * R[1] + R[2] * R[2] + eps * eps);
  /* Level 0: A_0^(m) = phi_m, phi_{m+1} = -(2m + 1) s phi_m. */
  buf[0][0] = sqrt(s);
  for (int m = 1; m <= q; m++)
    buf[0][m] = -(2 * m - 1) * s * buf[0][m - 1];
  D[0] = buf[0][0];
  for (int t = 1; t <= q; t++) {
    const double *u = buf[(t - 1) % 3], *v = buf[(t + 1) % 3];
    double *cur = buf[t % 3];
    const int nc = level_count(t), n1 = level_count(t - 1),
              n2 = t >= 2 ? level_count(t - 2) : 0;
    for (int m = 0; m <= q - t; m++)
      level_step(t, R, jk, u + (m + 1) * n1, v + (m + 1) * n2, cur + m * nc);
    memcpy(D + level_offset(t), cur, (size_t)nc * sizeof *D);
  }
}

/* Each y^n / n! from the entry one degree down along the same axis as
 * level_step. */
void tfmm_soft_taylor_monomials(int p, const double y[3], double *out) {
  out[0] = 1;
  for (int t = 1; t <= p; t++) {
    const double *prev = out + level_offset(t - 1);
    double *cur = out + level_offset(t);
    for (int j = 0; j < t; j++) {
      const double f = y[0] / (t - j); /* a = t - j */
      const int first = j * (j + 1) / 2;
      for (int k = first; k <= first + j; k++)
        cur[k] = f * prev[k];
    }
    const int base = t * (t + 1) / 2, base1 = (t - 1) * t / 2;
    for (int c = 0; c < t; c++)
      cur[base + c] = y[1] / (t - c) * prev[base1 + c];
    cur[base + t] = y[2] / t * prev[base1 + t - 1];
  }
}

void tfmm_soft_taylor_p2m(int p, const double c[3], size_t n, const double *pos,
                          const double *mass, double *M) {
  double y_n[SIZE_MAX_Q];
  const int count = level_offset(p + 1);
  for (size_t i = 0; i < n; i++) {
    const double y[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                         pos[3 * i + 2] - c[2]};
    tfmm_soft_taylor_monomials(p, y, y_n);
    for (int k = 0; k < count; k++)
      M[k] += mass[i] * y_n[k];
  }
}

/* M2M: sum_j m_j (y_j + d)^n / n! = sum_{k <= n} M_k d^(n-k) / (n-k)!,
 * d = c_child - c_parent (the binomial theorem, axis by axis). */
void tfmm_soft_taylor_m2m(int p, const double *Mc, const double c_child[3],
                          const double c_parent[3], double *Mp) {
  double d_n[SIZE_MAX_Q];
  const double d[3] = {c_child[0] - c_parent[0], c_child[1] - c_parent[1],
                       c_child[2] - c_parent[2]};
  tfmm_soft_taylor_monomials(p, d, d_n);
  for (int t = 0; t <= p; t++)
    for (int j = 0; j <= t; j++)
      for (int c = 0; c <= j; c++) {
        const int a = t - j, b = j - c;
        double sum = 0;
        for (int ka = 0; ka <= a; ka++)
          for (int kb = 0; kb <= b; kb++)
            for (int kc = 0; kc <= c; kc++)
              sum += Mc[tfmm_soft_taylor_index(ka, kb, kc)] *
                     d_n[tfmm_soft_taylor_index(a - ka, b - kb, c - kc)];
        Mp[tfmm_soft_taylor_index(a, b, c)] += sum;
      }
}

/* M2P: Phi = sum_n (-1)^|n| M_n D^n g(R) and its gradient, whose x part
 * takes D^{n + e_x} g: one level up at the same position (j, c), and
 * n + e_y, n + e_z at (j + 1, c) and (j + 1, c + 1). */
void tfmm_soft_taylor_m2p(int p, double eps, const double *M, const double c[3],
                          size_t n, const double *pos, double *phi,
                          double *grad) {
  double D[SIZE_MAX_Q];
  int jk[LEVEL_COUNT_MAX];
  fill_j(p, jk);
  for (size_t i = 0; i < n; i++) {
    const double R[3] = {pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                         pos[3 * i + 2] - c[2]};
    tfmm_soft_taylor_derivatives(p + 1, eps, R, D);
    double f = 0, gx = 0, gy = 0, gz = 0;
    for (int t = 0; t <= p; t++) {
      const double *m = M + level_offset(t), *d0 = D + level_offset(t),
                   *d1 = D + level_offset(t + 1);
      double sf = 0, sx = 0, sy = 0, sz = 0;
      for (int k = 0; k < level_count(t); k++) {
        const int up = k + jk[k] + 1; /* (j + 1, c) one level up */
        sf += m[k] * d0[k];
        sx += m[k] * d1[k];
        sy += m[k] * d1[up];
        sz += m[k] * d1[up + 1];
      }
      const double sign = t % 2 ? -1.0 : 1.0;
      f += sign * sf, gx += sign * sx, gy += sign * sy, gz += sign * sz;
    }
    if (phi != NULL)
      phi[i] += f;
    if (grad != NULL)
      grad[3 * i] += gx, grad[3 * i + 1] += gy, grad[3 * i + 2] += gz;
  }
}
