/* The formulas of the upward pass, written once for the CPU (harmonics.c,
 * expansion.c) and the GPU (kernels/upward_gpu.cu), so that both compute
 * the same multipoles: the regular solid harmonics by their recurrences,
 * one column (fixed order m) at a time, and one coefficient of M2M.
 *
 * harmonics.h and expansion.c say what the functions and coefficients
 * mean; this header holds only the arithmetic. Each value is formed by the
 * same operations in the same order on both sides, so that, compiled
 * without fused multiply-add (the CPU's default in C11 mode, and
 * --fmad=false for upward_gpu.cu), the GPU's multipoles are the CPU's bit
 * for bit.
 *
 * Storage. Triangles: entry (n, m), 0 <= m <= n, at tfmm_harmonics_index.
 * "Full" arrays: all orders -n..n of degree n at tfmm_full_index(n, m),
 * (p + 1)^2 entries. */
#ifndef TFMM_OPERATORS_H
#define TFMM_OPERATORS_H

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

TFMM_OP_FN int tfmm_op_imax(int a, int b) { return a > b ? a : b; }
TFMM_OP_FN int tfmm_op_imin(int a, int b) { return a < b ? a : b; }

/* The recurrences of the regular harmonics at (x, y, z) (harmonics.c
 * derives them), one step each:
 *   diagonal:  R_k^k = -(x + i y) R_{k-1}^{k-1} / (2k),   R_0^0 = 1
 *   degree:    R_n^m = ((2n - 1) z R_{n-1}^m - r^2 R_{n-2}^m) / ((n + m)(n -
 * m)) (the term in n - 2 vanishes at n = m + 1, where the step is z R_m^m). */
TFMM_OP_FN void tfmm_op_regular_diagonal_step(int k, double x, double y,
                                              double *re, double *im) {
  const double s = -0.5 / k;
  const double t = s * (x * *re - y * *im);
  *im = s * (x * *im + y * *re);
  *re = t;
}

TFMM_OP_FN double tfmm_op_regular_degree_step(int n, int m, double z, double r2,
                                              double a, double b) {
  const double inv = 1.0 / ((double)(n + m) * (double)(n - m));
  const double zc = (2 * n - 1) * z;
  return (zc * a - r2 * b) * inv;
}

/* Column m of the regular harmonics: R_n^m for n = m..p into re[n - m],
 * im[n - m]. */
TFMM_OP_FN void tfmm_op_regular_column(int p, int m, double x, double y,
                                       double z, double *re, double *im) {
  const double r2 = x * x + y * y + z * z;
  double dr = 1.0, di = 0.0;
  for (int k = 1; k <= m; k++)
    tfmm_op_regular_diagonal_step(k, x, y, &dr, &di);
  re[0] = dr;
  im[0] = di;
  if (m == p)
    return;
  re[1] = z * dr;
  im[1] = z * di;
  for (int n = m + 2; n <= p; n++) {
    re[n - m] =
        tfmm_op_regular_degree_step(n, m, z, r2, re[n - m - 1], re[n - m - 2]);
    im[n - m] =
        tfmm_op_regular_degree_step(n, m, z, r2, im[n - m - 1], im[n - m - 2]);
  }
}

/* One harmonic R_n^m by the same steps as tfmm_op_regular_column (so the
 * same value, bit for bit), keeping only the last two in registers. */
TFMM_OP_FN void tfmm_op_regular_term(int n, int m, double x, double y, double z,
                                     double *re, double *im) {
  const double r2 = x * x + y * y + z * z;
  double dr = 1.0, di = 0.0;
  for (int k = 1; k <= m; k++)
    tfmm_op_regular_diagonal_step(k, x, y, &dr, &di);
  if (n > m) {
    double br = dr, bi = di; /* degree l - 2 */
    dr = z * br;             /* degree l - 1 */
    di = z * bi;
    for (int l = m + 2; l <= n; l++) {
      const double cr = tfmm_op_regular_degree_step(l, m, z, r2, dr, br);
      const double ci = tfmm_op_regular_degree_step(l, m, z, r2, di, bi);
      br = dr;
      bi = di;
      dr = cr;
      di = ci;
    }
  }
  *re = dr;
  *im = di;
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

#endif
