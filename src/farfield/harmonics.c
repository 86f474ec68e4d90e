/* Solid harmonics by recurrence in Cartesian components.
 *
 * Both families follow from two recurrences of the associated Legendre
 * functions P_n^m (Condon-Shortley phase), written for r^n P_n^m e^{i m phi}
 * with x + i y = r sin(theta) e^{i phi} and z = r cos(theta):
 *   diagonal:  P_m^m = -(2m - 1) sin(theta) P_{m-1}^{m-1}
 *   degree:    (n - m) P_n^m = (2n - 1) cos(theta) P_{n-1}^m
 *                              - (n + m - 1) P_{n-2}^m
 * (Press et al., Numerical Recipes, 3rd ed., Sec. 6.7). Upward in n at
 * fixed m, started from the diagonal, is the stable direction on
 * |cos(theta)| <= 1 (same section), so the values stay accurate to n = 20
 * and well beyond. With the scalings of harmonics.h the recurrences become
 *   R_m^m = -(x + i y) R_{m-1}^{m-1} / (2m)
 *   R_n^m = ((2n - 1) z R_{n-1}^m - r^2 R_{n-2}^m) / ((n + m)(n - m))
 *   I_m^m = -(2m - 1) (x + i y) I_{m-1}^{m-1} / r^2
 *   I_n^m = ((2n - 1) z I_{n-1}^m - (n + m - 1)(n - m - 1) I_{n-2}^m) / r^2
 * starting from R_0^0 = 1 and I_0^0 = 1/r (the term in n - 2 vanishes at
 * n = m + 1). Only products and sums of x, y, z appear: no angle, no
 * special case on the z axis, and R is a polynomial, finite at r = 0.
 *
 * The recurrence of R is in farfield/operators.h (tfmm_op_regular_column),
 * which the GPU's upward pass compiles too; I is used on the CPU only. */
#include "farfield/harmonics.h"

#include "farfield/expansion.h"

#include <math.h>

void tfmm_harmonics_regular(int p, const double r[3], double *re, double *im) {
  double cr[TFMM_ORDER_MAX + 2], ci[TFMM_ORDER_MAX + 2];
  for (int m = 0; m <= p; m++) {
    tfmm_op_regular_column(p, m, r[0], r[1], r[2], cr, ci);
    for (int n = m; n <= p; n++) {
      re[tfmm_harmonics_index(n, m)] = cr[n - m];
      im[tfmm_harmonics_index(n, m)] = ci[n - m];
    }
  }
}

void tfmm_harmonics_irregular(int p, const double r[3], double *re,
                              double *im) {
  const double x = r[0], y = r[1], z = r[2];
  const double inv_r2 = 1.0 / (x * x + y * y + z * z);
  double dr = sqrt(inv_r2), di = 0.0; /* I_m^m */
  for (int m = 0; m <= p; m++) {
    if (m > 0) {
      const double s = -(2 * m - 1) * inv_r2;
      const double t = s * (x * dr - y * di);
      di = s * (x * di + y * dr);
      dr = t;
    }
    int k = tfmm_harmonics_index(m, m);
    re[k] = dr;
    im[k] = di;
    if (m == p)
      break;
    const double zc1 = (2 * m + 1) * z * inv_r2;
    int k1 = tfmm_harmonics_index(m + 1, m);
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
}
