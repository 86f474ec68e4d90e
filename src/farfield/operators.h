/* The arithmetic of the expansion operators, written once for the CPU
 * (harmonics.c, expansion.c) and the GPU (kernels/upward/upward_gpu.cu,
 * kernels/far/farfield_gpu.cu), so that both compute the same expansions: the
 * regular and irregular solid harmonics by their recurrences, one column
 * (fixed order m) at a time, one coefficient of M2M, M2L and L2L, and the
 * evaluations L2P and M2P at one point.
 *
 * harmonics.h and expansion.c say what the functions and coefficients
 * mean and cite the identities; this header holds only the arithmetic.
 * Each value is formed by the same operations in the same order on both
 * sides, so that, compiled without fused multiply-add (the CPU's default
 * in C11 mode, and --fmad=false for the .cu files that use it), the GPU's
 * results are the CPU's bit for bit.
 *
 * Storage. Triangles: entry (n, m), 0 <= m <= n, at tfmm_harmonics_index.
 * "Full" arrays: all orders -n..n of degree n at tfmm_full_index(n, m),
 * (p + 1)^2 entries. */
#ifndef TFMM_OPERATORS_H
#define TFMM_OPERATORS_H

#include <math.h>

#if defined(__CUDACC__)
#define TFMM_OP_FN static __host__ __device__ __forceinline__
#else
#define TFMM_OP_FN static inline
#endif

/* The highest expansion order supported. */
enum { TFMM_ORDER_MAX = 20 };

TFMM_OP_FN int tfmm_harmonics_index(int n, int m) {
  return n * (n + 1) / 2 + m;
}

/* Entries for degrees 0..p with m >= 0. */
TFMM_OP_FN int tfmm_harmonics_count(int p) { return (p + 1) * (p + 2) / 2; }

/* Index of order m (-n..n) of degree n in a full array. */
TFMM_OP_FN int tfmm_full_index(int n, int m) { return n * n + n + m; }

/* Degree n and order m of triangle entry t (inverse of
 * tfmm_harmonics_index). */
TFMM_OP_FN void tfmm_op_triangle_entry(int t, int *n, int *m) {
  int d = 0;
  while (tfmm_harmonics_index(d + 1, 0) <= t)
    d++;
  *n = d;
  *m = t - tfmm_harmonics_index(d, 0);
}

/* Degree n and order m of full entry e (inverse of tfmm_full_index). */
TFMM_OP_FN void tfmm_op_full_entry(int e, int *n, int *m) {
  int d = 0;
  while ((d + 1) * (d + 1) <= e)
    d++;
  *n = d;
  *m = e - d * d - d;
}

TFMM_OP_FN int tfmm_op_imax(int a, int b) { return a > b ? a : b; }
TFMM_OP_FN int tfmm_op_imin(int a, int b) { return a < b ? a : b; }

/* The recurrences of the regular harmonics at (x, y, z) (harmonics.c
 * derives them), one step each:
 *   diagonal:  R_k^k = s_k (x + i y) R_{k-1}^{k-1},   s_k = -1 / (2k),
 *              R_0^0 = 1
 *   degree:    R_n^m = ((2n - 1) z R_{n-1}^m - r^2 R_{n-2}^m) v_n^m,
 *              v_n^m = 1 / ((n + m)(n - m))
 * (the term in n - 2 vanishes at n = m + 1, where the step is z R_m^m).
 * The factors are functions of their own, so that a kernel can hold them
 * in a table (a division costs tens of instructions on a GPU) and still
 * multiply by the very same values. */
TFMM_OP_FN double tfmm_op_regular_diagonal_factor(int k) { return -0.5 / k; }

TFMM_OP_FN double tfmm_op_regular_degree_factor(int n, int m) {
  return 1.0 / ((double)(n + m) * (double)(n - m));
}

TFMM_OP_FN void tfmm_op_regular_diagonal_step_by(double s, double x, double y,
                                                 double *re, double *im) {
  const double t = s * (x * *re - y * *im);
  *im = s * (x * *im + y * *re);
  *re = t;
}

TFMM_OP_FN double tfmm_op_regular_degree_step_by(double v, int n, double z,
                                                 double r2, double a,
                                                 double b) {
  const double zc = (2 * n - 1) * z;
  return (zc * a - r2 * b) * v;
}

/* The factors up to degree p in tables: diag[k] = s_k for k = 1..p, and
 * degree[tfmm_harmonics_index(n, m)] = v_n^m for n >= m + 2 (the other
 * entries are not read). */
TFMM_OP_FN void tfmm_op_regular_factors(int p, double *diag, double *degree) {
  for (int k = 1; k <= p; k++)
    diag[k] = tfmm_op_regular_diagonal_factor(k);
  for (int n = 2; n <= p; n++)
    for (int m = 0; m + 2 <= n; m++)
      degree[tfmm_harmonics_index(n, m)] = tfmm_op_regular_degree_factor(n, m);
}

/* R_m^m by m diagonal steps from R_0^0 = 1, the factors from a table. */
TFMM_OP_FN void tfmm_op_regular_diagonal_by(int m, double x, double y,
                                            const double *diag, double *re,
                                            double *im) {
  *re = 1.0;
  *im = 0.0;
  for (int k = 1; k <= m; k++)
    tfmm_op_regular_diagonal_step_by(diag[k], x, y, re, im);
}

/* One harmonic R_n^m by the same steps as tfmm_op_regular_column_by
 * (so the same value, bit for bit), keeping only the last two in
 * registers, with the factors from tables (tfmm_op_regular_factors). */
TFMM_OP_FN void tfmm_op_regular_term_by(int n, int m, double x, double y,
                                        double z, const double *diag,
                                        const double *degree, double *re,
                                        double *im) {
  const double r2 = x * x + y * y + z * z;
  double dr, di;
  tfmm_op_regular_diagonal_by(m, x, y, diag, &dr, &di);
  if (n > m) {
    double br = dr, bi = di; /* degree l - 2 */
    dr = z * br;             /* degree l - 1 */
    di = z * bi;
    for (int l = m + 2; l <= n; l++) {
      const double v = degree[tfmm_harmonics_index(l, m)];
      const double cr = tfmm_op_regular_degree_step_by(v, l, z, r2, dr, br);
      const double ci = tfmm_op_regular_degree_step_by(v, l, z, r2, di, bi);
      br = dr;
      bi = di;
      dr = cr;
      di = ci;
    }
  }
  *re = dr;
  *im = di;
}

/* The irregular harmonics by their recurrences (harmonics.c), at
 * (x, y, z) with inv_r2 = 1 / r^2:
 *   diagonal:  I_k^k = -(2k - 1) (x + i y) I_{k-1}^{k-1} / r^2,
 *              I_0^0 = 1 / r
 *   degree:    I_n^m = ((2n - 1) z I_{n-1}^m
 *                       - (n + m - 1)(n - m - 1) I_{n-2}^m) / r^2
 * (at n = m + 1 the step is (2m + 1) z I_m^m / r^2). Column m of the
 * triangle (I_n^m, n = m..p, at tfmm_harmonics_index(n, m) of re, im). */
TFMM_OP_FN void tfmm_op_irregular_column(int p, int m, double x, double y,
                                         double z, double *re, double *im) {
  const double inv_r2 = 1.0 / (x * x + y * y + z * z);
  double dr = sqrt(inv_r2), di = 0.0; /* I_m^m */
  for (int k = 1; k <= m; k++) {
    const double s = -(2 * k - 1) * inv_r2;
    const double t = s * (x * dr - y * di);
    di = s * (x * di + y * dr);
    dr = t;
  }
  const int k = tfmm_harmonics_index(m, m);
  re[k] = dr;
  im[k] = di;
  if (m == p)
    return;
  const double zc1 = (2 * m + 1) * z * inv_r2;
  const int k1 = tfmm_harmonics_index(m + 1, m);
  re[k1] = zc1 * dr;
  im[k1] = zc1 * di;
  for (int n = m + 2; n <= p; n++) {
    const int a = tfmm_harmonics_index(n - 1, m);
    const int b = tfmm_harmonics_index(n - 2, m);
    const int c = tfmm_harmonics_index(n, m);
    const double zc = (2 * n - 1) * z * inv_r2;
    const double w = (double)(n + m - 1) * (double)(n - m - 1) * inv_r2;
    re[c] = zc * re[a] - w * re[b];
    im[c] = zc * im[a] - w * im[b];
  }
}

/* The whole triangle, column by column. */
TFMM_OP_FN void tfmm_op_irregular(int p, double x, double y, double z,
                                  double *re, double *im) {
  for (int m = 0; m <= p; m++)
    tfmm_op_irregular_column(p, m, x, y, z, re, im);
}

/* Column m of the triangle of the regular harmonics R_n^m (n = m..p, at
 * tfmm_harmonics_index(n, m) of re, im), with the factors from tables
 * (tfmm_op_regular_factors). */
TFMM_OP_FN void tfmm_op_regular_column_by(int p, int m, double x, double y,
                                          double z, const double *diag,
                                          const double *degree, double *re,
                                          double *im) {
  const double r2 = x * x + y * y + z * z;
  double dr, di;
  tfmm_op_regular_diagonal_by(m, x, y, diag, &dr, &di);
  re[tfmm_harmonics_index(m, m)] = dr;
  im[tfmm_harmonics_index(m, m)] = di;
  if (m == p)
    return;
  re[tfmm_harmonics_index(m + 1, m)] = z * dr;
  im[tfmm_harmonics_index(m + 1, m)] = z * di;
  for (int n = m + 2; n <= p; n++) {
    const int a = tfmm_harmonics_index(n - 1, m);
    const int b = tfmm_harmonics_index(n - 2, m);
    const double v = degree[tfmm_harmonics_index(n, m)];
    re[tfmm_harmonics_index(n, m)] =
        tfmm_op_regular_degree_step_by(v, n, z, r2, re[a], re[b]);
    im[tfmm_harmonics_index(n, m)] =
        tfmm_op_regular_degree_step_by(v, n, z, r2, im[a], im[b]);
  }
}

/* The whole triangle of R_n^m, 0 <= m <= n <= p, with tables. */
TFMM_OP_FN void tfmm_op_regular_by(int p, double x, double y, double z,
                                   const double *diag, const double *degree,
                                   double *re, double *im) {
  for (int m = 0; m <= p; m++)
    tfmm_op_regular_column_by(p, m, x, y, z, diag, degree, re, im);
}

/* The same with the factors formed here, p <= TFMM_ORDER_MAX + 1. */
TFMM_OP_FN void tfmm_op_regular(int p, double x, double y, double z, double *re,
                                double *im) {
  double diag[TFMM_ORDER_MAX + 2];
  double degree[(TFMM_ORDER_MAX + 2) * (TFMM_ORDER_MAX + 3) / 2];
  tfmm_op_regular_factors(p, diag, degree);
  tfmm_op_regular_by(p, x, y, z, diag, degree, re, im);
}

/* Entry (n, m), -n <= m <= n, of the full array of a triangle of
 * coefficients X (re, im interleaved: the stored layout of M, expansion.c)
 * whose degree n is scaled by s, by X_n^{-m} = (-1)^m conj(X_n^m); the
 * imaginary part of m = 0 is taken as 0. */
TFMM_OP_FN void tfmm_op_coeff_full(const double *X, double s, int n, int m,
                                   double *re, double *im) {
  const int a = m < 0 ? -m : m;
  const double *x = X + 2 * tfmm_harmonics_index(n, 0);
  if (a == 0) {
    *re = s * x[0];
    *im = 0.0;
    return;
  }
  const double r = s * x[2 * a], i = s * x[2 * a + 1];
  const double sign = (a & 1) ? -1.0 : 1.0;
  *re = m > 0 ? r : sign * r;
  *im = m > 0 ? i : -sign * i;
}

/* Entry (n, m) of the full array of harmonics held as separate real and
 * imaginary triangles (at m = 0 the imaginary part, a zero, has its sign
 * flipped: what the whole-array form below has always written). */
TFMM_OP_FN void tfmm_op_harmonic_full(const double *tre, const double *tim,
                                      int n, int m, double *re, double *im) {
  const int a = m < 0 ? -m : m;
  const int t = tfmm_harmonics_index(n, a);
  const double sign = (a & 1) ? -1.0 : 1.0;
  *re = m > 0 ? tre[t] : sign * tre[t];
  *im = m > 0 ? tim[t] : -sign * tim[t];
}

/* Whole full arrays of the two: degree n of X scaled by scale^n. */
TFMM_OP_FN void tfmm_op_coeffs_to_full(int p, const double *X, double scale,
                                       double *re, double *im) {
  double s = 1.0;
  for (int n = 0; n <= p; n++) {
    for (int m = -n; m <= n; m++)
      tfmm_op_coeff_full(X, s, n, m, re + tfmm_full_index(n, m),
                         im + tfmm_full_index(n, m));
    s *= scale;
  }
}

TFMM_OP_FN void tfmm_op_harmonics_to_full(int p, const double *tre,
                                          const double *tim, double *re,
                                          double *im) {
  for (int n = 0; n <= p; n++)
    for (int m = -n; m <= n; m++)
      tfmm_op_harmonic_full(tre, tim, n, m, re + tfmm_full_index(n, m),
                            im + tfmm_full_index(n, m));
}

/* Coefficient (n, m), m >= 0, of one child's M2M (expansion.c: tfmm_m2m):
 *   sum_{j=0}^{n} sum_k R_j^k(d) Mc_{n-j}^{m-k},  |m - k| <= n - j,
 * from full arrays of R(d) (rr, ri) and of the child's multipole (mr, mi).
 * The real part in *sr, the imaginary in *si. */
TFMM_OP_FN void tfmm_op_m2m_coeff(int n, int m, const double *rr,
                                  const double *ri, const double *mr,
                                  const double *mi, double *sr, double *si) {
  double ar_sum = 0.0, ai_sum = 0.0;
  for (int j = 0; j <= n; j++) {
    const int l = n - j;
    const double *ar = rr + tfmm_full_index(j, 0),
                 *ai = ri + tfmm_full_index(j, 0);
    const double *br = mr + tfmm_full_index(l, m),
                 *bi = mi + tfmm_full_index(l, m);
    const int k1 = tfmm_op_imin(j, m + l);
    for (int k = tfmm_op_imax(-j, m - l); k <= k1; k++) {
      ar_sum += ar[k] * br[-k] - ai[k] * bi[-k];
      ai_sum += ar[k] * bi[-k] + ai[k] * br[-k];
    }
  }
  *sr = ar_sum;
  *si = ai_sum;
}

/* Coefficient (j, k), k >= 0, of one M2L (expansion.c: tfmm_m2l), before
 * its scale (-1)^j |D|^{-j-1}:
 *   sum_{l=0}^{p-j} sum_{m=-l}^{l} M_l^m |D|^{-l} conj(I_{l+j}^{m+k}(u))
 * from full arrays of the scaled multipole (mr, mi) and of I at the unit
 * vector u = D / |D| (ir, ii). */
TFMM_OP_FN void tfmm_op_m2l_coeff(int p, int j, int k, const double *mr,
                                  const double *mi, const double *ir,
                                  const double *ii, double *sr, double *si) {
  double r = 0.0, i = 0.0;
  for (int l = 0; l <= p - j; l++) {
    const int n = l + j;
    const double *ar = mr + tfmm_full_index(l, 0),
                 *ai = mi + tfmm_full_index(l, 0);
    const double *br = ir + tfmm_full_index(n, k),
                 *bi = ii + tfmm_full_index(n, k);
    for (int m = -l; m <= l; m++) {
      r += ar[m] * br[m] + ai[m] * bi[m];
      i += ai[m] * br[m] - ar[m] * bi[m];
    }
  }
  *sr = r;
  *si = i;
}

/* Coefficient (j, k), k >= 0, of one L2L (expansion.c: tfmm_l2l):
 *   sum_{l=j}^{p} sum_m Lp_l^m R_{l-j}^{m-k}(d),  |m - k| <= l - j,
 * from full arrays of the parent's local expansion (lr, li) and of R(d)
 * (rr, ri). */
TFMM_OP_FN void tfmm_op_l2l_coeff(int p, int j, int k, const double *lr,
                                  const double *li, const double *rr,
                                  const double *ri, double *sr, double *si) {
  double r = 0.0, i = 0.0;
  for (int l = j; l <= p; l++) {
    const int q = l - j;
    const double *ar = lr + tfmm_full_index(l, 0),
                 *ai = li + tfmm_full_index(l, 0);
    const double *br = rr + tfmm_full_index(q, -k),
                 *bi = ri + tfmm_full_index(q, -k);
    const int m1 = tfmm_op_imin(l, k + q);
    for (int m = tfmm_op_imax(-l, k - q); m <= m1; m++) {
      r += ar[m] * br[m] - ai[m] * bi[m];
      i += ar[m] * bi[m] + ai[m] * br[m];
    }
  }
  *sr = r;
  *si = i;
}

/* L2P at one point (expansion.c: tfmm_l2p derives it) from the triangle
 * of R_n^m(x - c), degrees 0..p: out[0] = Phi, out[1..3] = grad Phi. */
TFMM_OP_FN void tfmm_op_l2p_eval(int p, const double *L, const double *re,
                                 const double *im, double out[4]) {
  double f = L[0], fz = 0.0, lr = 0.0, li = 0.0;
  for (int l = 1; l <= p; l++) {
    const double *x = L + 2 * tfmm_harmonics_index(l, 0);
    const int t = tfmm_harmonics_index(l, 0);     /* R_l^m at t + m */
    const int s = tfmm_harmonics_index(l - 1, 0); /* R_{l-1}^m at s + m */
    /* m = 0: L_l^0 is real. */
    f += x[0] * re[t];
    fz += x[0] * re[s];
    if (l >= 2) { /* -conj(L_l^0 R_{l-1}^1) */
      lr -= x[0] * re[s + 1];
      li += x[0] * im[s + 1];
    }
    for (int m = 1; m <= l; m++) {
      const double ar = x[2 * m], ai = x[2 * m + 1];
      f += 2.0 * (ar * re[t + m] - ai * im[t + m]);
      /* + L_l^m R_{l-1}^{m-1} */
      lr += ar * re[s + m - 1] - ai * im[s + m - 1];
      li += ar * im[s + m - 1] + ai * re[s + m - 1];
      if (m <= l - 1) /* both m and -m: 2 Re(L_l^m R_{l-1}^m) */
        fz += 2.0 * (ar * re[s + m] - ai * im[s + m]);
      if (m <= l - 2) { /* -conj(L_l^m R_{l-1}^{m+1}) from order -m */
        lr -= ar * re[s + m + 1] - ai * im[s + m + 1];
        li += ar * im[s + m + 1] + ai * re[s + m + 1];
      }
    }
  }
  out[0] = f;
  out[1] = -lr;
  out[2] = li;
  out[3] = fz;
}

/* M2P at one point (expansion.c: tfmm_m2p derives it) from the triangle
 * of I_n^m(x - c), degrees 0..p + 1: out[0] = Phi, out[1..3] = grad Phi. */
TFMM_OP_FN void tfmm_op_m2p_eval(int p, const double *M, const double *re,
                                 const double *im, double out[4]) {
  double f = 0.0, fz = 0.0, wr = 0.0, wi = 0.0;
  for (int l = 0; l <= p; l++) {
    const double *x = M + 2 * tfmm_harmonics_index(l, 0);
    const int t = tfmm_harmonics_index(l, 0);     /* I_l^m at t + m */
    const int s = tfmm_harmonics_index(l + 1, 0); /* I_{l+1}^m at s + m */
    /* m = 0: M_l^0 is real. */
    f += x[0] * re[t];
    fz -= x[0] * re[s];
    wr += x[0] * re[s + 1];
    wi += x[0] * im[s + 1];
    for (int m = 1; m <= l; m++) {
      const double ar = x[2 * m], ai = x[2 * m + 1];
      f += 2.0 * (ar * re[t + m] + ai * im[t + m]);
      fz -= 2.0 * (ar * re[s + m] + ai * im[s + m]);
      /* + conj(M_l^m) I_{l+1}^{m+1} */
      wr += ar * re[s + m + 1] + ai * im[s + m + 1];
      wi += ar * im[s + m + 1] - ai * re[s + m + 1];
      /* - M_l^m conj(I_{l+1}^{m-1}), from order -m */
      wr -= ar * re[s + m - 1] + ai * im[s + m - 1];
      wi -= ai * re[s + m - 1] - ar * im[s + m - 1];
    }
  }
  out[0] = f;
  out[1] = wr;
  out[2] = wi;
  out[3] = fz;
}

#endif
