/* The arithmetic of the softened kernel's Cartesian Taylor operators,
 * written once for the CPU (soft_taylor.c, soft_taylor_local.c) and the
 * GPU (kernels/far/soft_far_gpu.cu), so that both compute the same
 * expansions by the same operations in the same order. soft_taylor.h says
 * what the operators mean, the storage and the costs; soft_taylor.c cites
 * the derivatives' recursion, soft_taylor_local.c the contraction.
 *
 * Every function takes its scratch from the caller: the CPU sizes it for
 * the highest order, the GPU for the order a kernel is compiled for.
 *   D:   tfmm_soft_op_size(q) doubles for derivatives to order q;
 *   buf: 3 tfmm_soft_op_level_max(q) doubles (the recursion's levels);
 *   monomials: tfmm_soft_op_size(p) doubles. */
#ifndef TFMM_SOFT_TAYLOR_OPS_H
#define TFMM_SOFT_TAYLOR_OPS_H

#include <math.h>

#if defined(__CUDACC__)
#define TFMM_SOFT_FN static __host__ __device__ __forceinline__
#define TFMM_SOFT_SIZE_FN static constexpr __host__ __device__ inline
#else
#define TFMM_SOFT_FN static inline
#define TFMM_SOFT_SIZE_FN static inline
#endif

/* Entries of degree t, and the index of the first. */
TFMM_SOFT_SIZE_FN int tfmm_soft_op_level_count(int t) {
  return (t + 1) * (t + 2) / 2;
}
TFMM_SOFT_SIZE_FN int tfmm_soft_op_level_offset(int t) {
  return t * (t + 1) * (t + 2) / 6;
}

/* Doubles of an expansion of order p. */
TFMM_SOFT_SIZE_FN int tfmm_soft_op_size(int p) {
  return tfmm_soft_op_level_offset(p + 1);
}

/* Index of n = (a, b, c): the degrees below |n| first, then, within degree
 * t = |n|, j = b + c ascending and c ascending. */
TFMM_SOFT_SIZE_FN int tfmm_soft_taylor_index(int a, int b, int c) {
  return tfmm_soft_op_level_offset(a + b + c) + (b + c) * (b + c + 1) / 2 + c;
}

/* The most values one level of the recursion holds for derivatives to
 * order q: max over t of (q - t + 1)(t + 1)(t + 2) / 2 (A for m = 0 ..
 * q - t at each position of degree t). */
TFMM_SOFT_SIZE_FN int tfmm_soft_op_level_max(int q) {
  int most = 0;
  for (int t = 0; t <= q; t++) {
    const int k = (q - t + 1) * tfmm_soft_op_level_count(t);
    most = k > most ? k : most;
  }
  return most;
}

/* One value of the recursion's level t: A_t^(m) at position k of the
 * level, from u = A_{t-1}^(m+1) and v = A_{t-2}^(m+1) (v unused at
 * t = 1). Positions with a = t - j >= 2 step along x, a = 1 along x
 * without the second term, a = 0 along y (b >= 1) or, for (0, 0, t),
 * along z. */
TFMM_SOFT_FN double tfmm_soft_op_level_entry(int t, int k, const double R[3],
                                             const double *u, const double *v) {
  const int base = t * (t + 1) / 2, base1 = (t - 1) * t / 2,
            base2 = t >= 2 ? (t - 2) * (t - 1) / 2 : 0;
  if (k < base1) { /* a >= 2: j with j (j + 1) / 2 <= k */
    int j = 0;
    while ((j + 1) * (j + 2) / 2 <= k)
      j++;
    return R[0] * u[k] + (double)(t - 1 - j) * v[k];
  }
  if (k < base) /* a = 1 */
    return R[0] * u[k];
  const int c = k - base;
  if (c + 1 < t) /* a = 0, b = t - c >= 2 */
    return R[1] * u[base1 + c] + (double)(t - c - 1) * v[base2 + c];
  if (c + 1 == t) /* b = 1 */
    return R[1] * u[base1 + t - 1];
  return R[2] * u[base1 + t - 1] + /* (0, 0, t) */
         (t >= 2 ? (t - 1) * v[base2 + t - 2] : 0.0);
}

/* One level of the recursion: o = A_t^(m) at every position. */
TFMM_SOFT_FN void tfmm_soft_op_level_step(int t, const double R[3],
                                          const double *u, const double *v,
                                          double *o) {
  for (int k = 0; k < tfmm_soft_op_level_count(t); k++)
    o[k] = tfmm_soft_op_level_entry(t, k, R, u, v);
}

/* Level 0 of the recursion: A_0^(m) = phi_m for m = 0 .. q,
 * phi_{m+1} = -(2m + 1) s phi_m, s = 1 / (|R|^2 + eps^2). */
TFMM_SOFT_FN void tfmm_soft_op_level0(int q, double eps, const double R[3],
                                      double *buf) {
  const double s = 1.0 / (R[0] * R[0] + R[1] * R[1] + R[2] * R[2] + eps * eps);
  buf[0] = sqrt(s);
  for (int m = 1; m <= q; m++)
    buf[m] = -(2 * m - 1) * s * buf[m - 1];
}

/* D^n g(R) for |n| <= q into D; R may be 0 when eps > 0. */
TFMM_SOFT_FN void tfmm_soft_op_derivatives(int q, double eps, const double R[3],
                                           double *D, double *buf,
                                           int level_max) {
  tfmm_soft_op_level0(q, eps, R, buf);
  D[0] = buf[0];
  for (int t = 1; t <= q; t++) {
    const double *u = buf + ((t - 1) % 3) * level_max,
                 *v = buf + ((t + 1) % 3) * level_max;
    double *cur = buf + (t % 3) * level_max;
    const int nc = tfmm_soft_op_level_count(t),
              n1 = tfmm_soft_op_level_count(t - 1),
              n2 = t >= 2 ? tfmm_soft_op_level_count(t - 2) : 0;
    for (int m = 0; m <= q - t; m++)
      tfmm_soft_op_level_step(t, R, u + (m + 1) * n1, v + (m + 1) * n2,
                              cur + m * nc);
    double *d = D + tfmm_soft_op_level_offset(t);
    for (int k = 0; k < nc; k++)
      d[k] = cur[k];
  }
}

/* y^n / n! for |n| <= p, each from the entry one degree down along the
 * axis the recursion steps along. */
TFMM_SOFT_FN void tfmm_soft_op_monomials(int p, const double y[3],
                                         double *out) {
  out[0] = 1;
  for (int t = 1; t <= p; t++) {
    const double *prev = out + tfmm_soft_op_level_offset(t - 1);
    double *cur = out + tfmm_soft_op_level_offset(t);
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

/* P2M of one body at y = x - c: M_n += m y^n / n!. */
TFMM_SOFT_FN void tfmm_soft_op_p2m(int p, const double y[3], double mass,
                                   double *y_n, double *M) {
  tfmm_soft_op_monomials(p, y, y_n);
  for (int k = 0; k < tfmm_soft_op_size(p); k++)
    M[k] += mass * y_n[k];
}

/* (t, j, c) of entry k: its degree, j = b + c and c. */
TFMM_SOFT_FN void tfmm_soft_op_entry(int k, int *t, int *j, int *c) {
  int d = 0, jj = 0;
  while (tfmm_soft_op_level_offset(d + 1) <= k)
    d++;
  const int pos = k - tfmm_soft_op_level_offset(d);
  while ((jj + 1) * (jj + 2) / 2 <= pos)
    jj++;
  *t = d, *j = jj, *c = pos - jj * (jj + 1) / 2;
}

/* One coefficient n = (a, b, c) of M2M: sum_{k <= n} Mc_k d_n[n - k]. */
TFMM_SOFT_FN double tfmm_soft_op_m2m_one(int a, int b, int c, const double *Mc,
                                         const double *d_n) {
  double sum = 0;
  for (int ka = 0; ka <= a; ka++)
    for (int kb = 0; kb <= b; kb++)
      for (int kc = 0; kc <= c; kc++)
        sum += Mc[tfmm_soft_taylor_index(ka, kb, kc)] *
               d_n[tfmm_soft_taylor_index(a - ka, b - kb, c - kc)];
  return sum;
}

/* M2M by d = c_child - c_parent: Mp_n += sum_{k <= n} Mc_k d^(n-k) /
 * (n-k)! (the binomial theorem, axis by axis). */
TFMM_SOFT_FN void tfmm_soft_op_m2m(int p, const double *Mc, const double d[3],
                                   double *d_n, double *Mp) {
  tfmm_soft_op_monomials(p, d, d_n);
  for (int t = 0; t <= p; t++)
    for (int j = 0; j <= t; j++)
      for (int c = 0; c <= j; c++)
        Mp[tfmm_soft_taylor_index(t - j, j - c, c)] +=
            tfmm_soft_op_m2m_one(t - j, j - c, c, Mc, d_n);
}

/* out[0] += Phi, out[1..3] += grad Phi of the multipole M at R = x - c:
 * Phi = sum_n (-1)^|n| M_n D^n g(R); the gradient's x part takes
 * D^{n + e_x} g, one level up at the same position (j, c), and n + e_y,
 * n + e_z at (j + 1, c) and (j + 1, c + 1). D to order p + 1. */
TFMM_SOFT_FN void tfmm_soft_op_m2p(int p, double eps, const double *M,
                                   const double R[3], double *D, double *buf,
                                   int level_max, double out[4]) {
  tfmm_soft_op_derivatives(p + 1, eps, R, D, buf, level_max);
  double f = 0, gx = 0, gy = 0, gz = 0;
  for (int t = 0; t <= p; t++) {
    const double *m = M + tfmm_soft_op_level_offset(t),
                 *d0 = D + tfmm_soft_op_level_offset(t),
                 *d1 = D + tfmm_soft_op_level_offset(t + 1);
    double sf = 0, sx = 0, sy = 0, sz = 0;
    for (int j = 0; j <= t; j++)
      for (int c = 0; c <= j; c++) {
        const int k = j * (j + 1) / 2 + c, up = k + j + 1;
        sf += m[k] * d0[k];
        sx += m[k] * d1[k];
        sy += m[k] * d1[up];
        sz += m[k] * d1[up + 1];
      }
    const double sign = t % 2 ? -1.0 : 1.0;
    f += sign * sf, gx += sign * sx, gy += sign * sy, gz += sign * sz;
  }
  out[0] += f, out[1] += gx, out[2] += gy, out[3] += gz;
}

/* out_k += sum_{|n| <= p - |k|} s_n a_n b_{n+k} for every |k| <= p, with
 * s_n = (-1)^|n| when alternate, else 1 (an exact factor: the same bits as
 * a_n negated first); _one: the sum for one k = (tk - jk, jk - kc, kc).
 * For fixed k, t and j the entries n (c = 0 .. j) and n + k are
 * contiguous, and the sum is a dot product. */
TFMM_SOFT_FN double tfmm_soft_op_contract_one(int p, int tk, int jk, int kc,
                                              const double *a, const double *b,
                                              int alternate) {
  double sum = 0;
  for (int t = 0; t + tk <= p; t++) {
    const double s = alternate && t % 2 ? -1.0 : 1.0;
    for (int j = 0; j <= t; j++) {
      const int J = j + jk;
      const double *an = a + tfmm_soft_op_level_offset(t) + j * (j + 1) / 2;
      const double *bn =
          b + tfmm_soft_op_level_offset(t + tk) + J * (J + 1) / 2 + kc;
      for (int c = 0; c <= j; c++)
        sum += s * an[c] * bn[c];
    }
  }
  return sum;
}

TFMM_SOFT_FN void tfmm_soft_op_contract(int p, const double *a, const double *b,
                                        int alternate, double *out) {
  for (int tk = 0; tk <= p; tk++)
    for (int jk = 0; jk <= tk; jk++)
      for (int kc = 0; kc <= jk; kc++)
        out[tfmm_soft_taylor_index(tk - jk, jk - kc, kc)] +=
            tfmm_soft_op_contract_one(p, tk, jk, kc, a, b, alternate);
}

/* M2L: L_k += sum_{|n| <= p - |k|} (-1)^|n| M_n D^{n+k} g(R), R = c_t -
 * c_s, D to order p. */
TFMM_SOFT_FN void tfmm_soft_op_m2l(int p, double eps, const double *M,
                                   const double R[3], double *D, double *buf,
                                   int level_max, double *L) {
  tfmm_soft_op_derivatives(p, eps, R, D, buf, level_max);
  tfmm_soft_op_contract(p, M, D, 1, L);
}

/* L2L by d = c_child - c_parent: Lc_k += sum_{|m| <= p - |k|} L_{k+m}
 * d^m / m!. */
TFMM_SOFT_FN void tfmm_soft_op_l2l(int p, const double *L, const double d[3],
                                   double *d_m, double *Lc) {
  tfmm_soft_op_monomials(p, d, d_m);
  tfmm_soft_op_contract(p, d_m, L, 0, Lc);
}

/* L2P at z = x - c: out[0] += sum_k L_k z^k / k!, out[1..3] += its
 * gradient, sum_{|m| <= p - 1} L_{m + e} z^m / m! (m + e_x one level up at
 * the same position, m + e_y and m + e_z at (j + 1, c) and (j + 1, c + 1)). */
TFMM_SOFT_FN void tfmm_soft_op_l2p(int p, const double *L, const double z[3],
                                   double *z_m, double out[4]) {
  tfmm_soft_op_monomials(p, z, z_m);
  double f = 0, gx = 0, gy = 0, gz = 0;
  for (int k = 0; k < tfmm_soft_op_size(p); k++)
    f += L[k] * z_m[k];
  for (int t = 0; t < p; t++) {
    const double *zm = z_m + tfmm_soft_op_level_offset(t),
                 *l1 = L + tfmm_soft_op_level_offset(t + 1);
    for (int j = 0, k = 0; j <= t; j++)
      for (int c = 0; c <= j; c++, k++) {
        gx += zm[k] * l1[k];
        gy += zm[k] * l1[k + j + 1];
        gz += zm[k] * l1[k + j + 2];
      }
  }
  out[0] += f, out[1] += gx, out[2] += gy, out[3] += gz;
}

#endif
