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
 * Both are written in farfield/operators.h, which the GPU compiles too. */
#include "farfield/harmonics.h"

#include <math.h>

void tfmm_harmonics_regular(int p, const double r[3], double *re, double *im) {
  tfmm_op_regular(p, r[0], r[1], r[2], re, im);
}

void tfmm_harmonics_irregular(int p, const double r[3], double *re,
                              double *im) {
  tfmm_op_irregular(p, r[0], r[1], r[2], re, im);
}
