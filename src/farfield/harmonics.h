/* Regular and irregular solid harmonics of the Laplace equation, in the
 * "scaled" normalisation of Epton & Dembart (1995, SIAM J. Sci. Comput. 16,
 * 865), also used by Dehnen (2014, Comput. Astrophys. Cosmol. 1:1):
 *
 *   R_n^m(r) = r^n P_n^m(cos theta) e^{i m phi} / (n + m)!
 *   I_n^m(r) = (n - m)! P_n^m(cos theta) e^{i m phi} / r^{n+1}
 *
 * with P_n^m the associated Legendre functions including the Condon-Shortley
 * phase (-1)^m. For negative orders R_n^{-m} = (-1)^m conj(R_n^m), and the
 * same for I_n^m. In this normalisation the expansion of the Laplace kernel
 * and its translations carry no extra factors (Epton & Dembart 1995; the
 * first is the addition theorem of the Legendre polynomials):
 *
 *   1/|x - y|   = sum_{n,m} conj(R_n^m(y)) I_n^m(x)                |y| < |x|
 *   R_n^m(x+y)  = sum_{j,k} R_j^k(x) R_{n-j}^{m-k}(y)
 *   I_n^m(x-y)  = sum_{j,k} conj(R_j^k(y)) I_{n+j}^{m+k}(x)        |y| < |x|
 *
 * (sums over all degrees and orders for which the terms are defined). The
 * tests check all three through the operators built on them.
 *
 * Both families are computed from Cartesian components by recurrences, so
 * no angle is formed: points on the z axis need no special case and R is a
 * polynomial, finite at r = 0.
 *
 * Values are stored for 0 <= m <= n <= p, at triangle index
 * tfmm_harmonics_index(n, m), real and imaginary parts in separate arrays
 * of tfmm_harmonics_count(p) doubles. */
#ifndef TFMM_HARMONICS_H
#define TFMM_HARMONICS_H

/* tfmm_harmonics_index and tfmm_harmonics_count. */
#include "operators.h" /* same folder */

/* R_n^m(r) for 0 <= m <= n <= p. */
void tfmm_harmonics_regular(int p, const double r[3], double *re, double *im);

/* I_n^m(r) for 0 <= m <= n <= p; r must not be 0. */
void tfmm_harmonics_irregular(int p, const double r[3], double *re, double *im);

#endif
