/* The expansion operators of the Laplace kernel in scaled solid harmonics
 * (farfield/harmonics.h): R_n^m regular, I_n^m irregular.
 *
 * Representation. A multipole expansion about c holds
 *   M_n^m = sum_j m_j R_n^m(x_j - c),
 *   Phi(x) = sum_{n,m} conj(M_n^m) I_n^m(x - c),          |x - c| > radius,
 * and a local expansion about c holds L_n^m with
 *   Phi(x) = sum_{n,m} L_n^m R_n^m(x - c),
 * both summed over 0 <= n <= p, -n <= m <= n. These are the multipole and
 * local expansions of Greengard & Rokhlin (1987, J. Comput. Phys. 73, 325)
 * and Cheng, Greengard & Rokhlin (1999, J. Comput. Phys. 155, 468)
 * with the factors A_n^m and i^{|k|-|m|-|k-m|} of their translation
 * theorems absorbed into the normalisation of R and I, as in Epton &
 * Dembart (1995, SIAM J. Sci. Comput. 16, 865) and Dehnen (2014, Comput.
 * Astrophys. Cosmol. 1:1). Each operator below states the identity it
 * applies, derived from the three of harmonics.h.
 *
 * Storage. M and L obey X_n^{-m} = (-1)^m conj(X_n^m) (the masses are
 * real), so only 0 <= m <= n is stored: Re X_n^m and Im X_n^m at doubles
 * 2 k and 2 k + 1, k = tfmm_harmonics_index(n, m), (p + 1)(p + 2) doubles
 * in all. X_n^0 is real: only zeros are added to its imaginary slot.
 *
 * Truncation. The multipole series stops at degree p, and M2L keeps the
 * terms with n + l <= p (source degree l, local degree n), as Dehnen (2014)
 * does: the result is the Taylor series of order p of the far field, with
 * error O(((a + b) / d)^{p+1}) for source and target radii a, b at distance
 * d. M2M, L2L and the evaluations add no error of their own: they are exact
 * for the series they are given (L2P's gradient is that of the local
 * series, so of order p - 1).
 *
 * Cost. P2M, L2P and M2P O(p^2) per body; M2M, M2L and L2L O(p^4) per call
 * (M2L: sum_{n=0}^{p} (n + 1)(p - n + 1)^2 complex multiply-adds, 825 at
 * p = 8). Scratch lives on the stack, sized for TFMM_ORDER_MAX. */
#include "farfield/expansion.h"

#include "farfield/harmonics.h"
#include "farfield/operators.h"

#include <math.h>

enum {
  /* Harmonics up to degree TFMM_ORDER_MAX + 1 (M2P needs one more). */
  TRI_MAX = (TFMM_ORDER_MAX + 2) * (TFMM_ORDER_MAX + 3) / 2,
  /* All orders -n..n of degrees 0..TFMM_ORDER_MAX. */
  FULL_MAX = (TFMM_ORDER_MAX + 1) * (TFMM_ORDER_MAX + 1)
};

size_t tfmm_expansion_size(int p) { return (size_t)(p + 1) * (size_t)(p + 2); }

/* P2M: M_n^m += sum_j m_j R_n^m(x_j - c), the multipole moments of the
 * expansion 1/|x - y| = sum conj(R_n^m(y)) I_n^m(x) (the multipole
 * expansion theorem of Greengard & Rokhlin 1987 and Cheng, Greengard &
 * Rokhlin 1999, in Epton & Dembart's 1995 normalisation). */
void tfmm_p2m(int p, const double c[3], size_t n, const double *pos,
              const double *mass, double *M) {
  double re[TRI_MAX], im[TRI_MAX];
  const int count = tfmm_harmonics_count(p);
  for (size_t b = 0; b < n; b++) {
    const double d[3] = {pos[3 * b] - c[0], pos[3 * b + 1] - c[1],
                         pos[3 * b + 2] - c[2]};
    tfmm_harmonics_regular(p, d, re, im); /* Im R_n^0 = 0 exactly */
    const double m = mass[b];
    for (int t = 0; t < count; t++) {
      M[2 * t] += m * re[t];
      M[2 * t + 1] += m * im[t];
    }
  }
}

/* M2M: with d = c_child - c_parent, the addition theorem
 * R_n^m(y + d) = sum_{j,k} R_j^k(d) R_{n-j}^{m-k}(y) gives
 *   Mp_n^m += sum_{j=0}^{n} sum_k R_j^k(d) Mc_{n-j}^{m-k},  |m - k| <= n - j
 * (the translation theorem for multipole expansions of Greengard & Rokhlin
 * 1987 and Cheng, Greengard & Rokhlin 1999, whose factors A_n^m and powers
 * of i the scaled R absorbs). Exact for degrees <= p. */
void tfmm_m2m(int p, const double *Mc, const double c_child[3],
              const double c_parent[3], double *Mp) {
  double tre[TRI_MAX], tim[TRI_MAX];
  double rr[FULL_MAX], ri[FULL_MAX], mr[FULL_MAX], mi[FULL_MAX];
  const double d[3] = {c_child[0] - c_parent[0], c_child[1] - c_parent[1],
                       c_child[2] - c_parent[2]};
  tfmm_harmonics_regular(p, d, tre, tim);
  tfmm_op_harmonics_to_full(p, tre, tim, rr, ri);
  tfmm_op_coeffs_to_full(p, Mc, 1.0, mr, mi);
  for (int n = 0; n <= p; n++) {
    for (int m = 0; m <= n; m++) {
      double sr, si;
      tfmm_op_m2m_coeff(n, m, rr, ri, mr, mi, &sr, &si);
      const int t = tfmm_harmonics_index(n, m);
      Mp[2 * t] += sr;
      if (m > 0)
        Mp[2 * t + 1] += si;
    }
  }
}

/* M2L: with D = c_tgt - c_src and r = x - c_tgt, the translation
 * I_l^m(D + r) = sum_{j,k} (-1)^j conj(R_j^k(r)) I_{l+j}^{m+k}(D), |r| < |D|,
 * turns Phi = sum conj(M_l^m) I_l^m(D + r) into sum L_j^k R_j^k(r) with
 *   L_j^k += (-1)^j sum_{l=0}^{p-j} sum_{m=-l}^{l} M_l^m conj(I_{l+j}^{m+k}(D))
 * (the multipole-to-local conversion theorem of Greengard & Rokhlin 1987
 * and Cheng, Greengard & Rokhlin 1999 in scaled form; the triangular
 * truncation l + j <= p is Dehnen's 2014). I is evaluated at the unit
 * vector D / |D| and the powers of |D| are applied to M and L, so that no
 * I_n^m(D) ~ |D|^{-n-1} over- or underflows whatever the length unit.
 * Needs |D| > 0; meaningful for well-separated cells only. */
void tfmm_m2l(int p, const double *M, const double c_src[3],
              const double c_tgt[3], double *L) {
  double tre[TRI_MAX], tim[TRI_MAX];
  double ir[FULL_MAX], ii[FULL_MAX], mr[FULL_MAX], mi[FULL_MAX];
  const double D[3] = {c_tgt[0] - c_src[0], c_tgt[1] - c_src[1],
                       c_tgt[2] - c_src[2]};
  const double rho = sqrt(D[0] * D[0] + D[1] * D[1] + D[2] * D[2]);
  const double inv_rho = 1.0 / rho;
  const double u[3] = {D[0] * inv_rho, D[1] * inv_rho, D[2] * inv_rho};
  tfmm_harmonics_irregular(p, u, tre, tim);
  tfmm_op_harmonics_to_full(p, tre, tim, ir, ii);
  /* M_l^m |D|^{-l}: I_{l+j}(D) = I_{l+j}(u) |D|^{-l-j-1}. */
  tfmm_op_coeffs_to_full(p, M, inv_rho, mr, mi);
  double scale = inv_rho; /* (-1)^j |D|^{-j-1} */
  for (int j = 0; j <= p; j++, scale *= -inv_rho) {
    for (int k = 0; k <= j; k++) {
      double sr, si;
      tfmm_op_m2l_coeff(p, j, k, mr, mi, ir, ii, &sr, &si);
      const int t = tfmm_harmonics_index(j, k);
      L[2 * t] += scale * sr;
      if (k > 0)
        L[2 * t + 1] += scale * si;
    }
  }
}

/* L2L: with d = c_child - c_parent, r = x - c_child, the addition theorem
 * R_l^m(r + d) = sum_{j,k} R_j^k(r) R_{l-j}^{m-k}(d) gives
 *   Lc_j^k += sum_{l=j}^{p} sum_m Lp_l^m R_{l-j}^{m-k}(d),  |m - k| <= l - j
 * (the translation theorem for local expansions of Greengard & Rokhlin
 * 1987 and Cheng, Greengard & Rokhlin 1999 in scaled form). Exact for
 * degrees <= p: a local expansion is a polynomial. */
void tfmm_l2l(int p, const double *Lp, const double c_parent[3],
              const double c_child[3], double *Lc) {
  double tre[TRI_MAX], tim[TRI_MAX];
  double rr[FULL_MAX], ri[FULL_MAX], lr[FULL_MAX], li[FULL_MAX];
  const double d[3] = {c_child[0] - c_parent[0], c_child[1] - c_parent[1],
                       c_child[2] - c_parent[2]};
  tfmm_harmonics_regular(p, d, tre, tim);
  tfmm_op_harmonics_to_full(p, tre, tim, rr, ri);
  tfmm_op_coeffs_to_full(p, Lp, 1.0, lr, li);
  for (int j = 0; j <= p; j++) {
    for (int k = 0; k <= j; k++) {
      double sr, si;
      tfmm_op_l2l_coeff(p, j, k, lr, li, rr, ri, &sr, &si);
      const int t = tfmm_harmonics_index(j, k);
      Lc[2 * t] += sr;
      if (k > 0)
        Lc[2 * t + 1] += si;
    }
  }
}

/* A point's potential and gradient (out[0], out[1..3]) added to its own. */
static void add_field(const double out[4], double *phi, double *grad) {
  *phi += out[0];
  for (int k = 0; k < 3; k++)
    grad[k] += out[1 + k];
}

/* L2P: Phi(x) = sum L_n^m R_n^m(r), r = x - c, summed over m >= 0 with
 * X_n^{-m} R_n^{-m} = conj(X_n^m R_n^m). The gradient is that of the same
 * series, from the first-order terms of the addition theorem (harmonics.h)
 *   d/dz R_n^m = R_{n-1}^m,
 *   d/dx R_n^m = (R_{n-1}^{m+1} - R_{n-1}^{m-1}) / 2,
 *   d/dy R_n^m = -i (R_{n-1}^{m+1} + R_{n-1}^{m-1}) / 2,
 * which with Lambda = sum_{n,m} L_n^m R_{n-1}^{m-1}(r) give
 *   d/dx Phi = -Re Lambda,  d/dy Phi = Im Lambda,
 *   d/dz Phi = sum_{n,m} L_n^m R_{n-1}^m(r).
 * (equivalently, the degree-1 coefficients of L shifted to x by L2L, as
 * Dehnen 2014 evaluates forces). R is a polynomial, so the centre and the
 * z axis need no care. */
void tfmm_l2p(int p, const double *L, const double c[3], size_t n,
              const double *pos, double *phi, double *grad) {
  double re[TRI_MAX], im[TRI_MAX];
  for (size_t b = 0; b < n; b++) {
    const double r[3] = {pos[3 * b] - c[0], pos[3 * b + 1] - c[1],
                         pos[3 * b + 2] - c[2]};
    tfmm_harmonics_regular(p, r, re, im);
    double out[4];
    tfmm_op_l2p_eval(p, L, re, im, out);
    add_field(out, phi + b, grad + 3 * b);
  }
}

/* M2P: Phi(x) = sum conj(M_n^m) I_n^m(r), r = x - c, summed over m >= 0 as
 * in L2P. The gradient follows from the translation of I (harmonics.h) to
 * first order,
 *   d/dz I_n^m = -I_{n+1}^m,
 *   d/dx I_n^m = (I_{n+1}^{m+1} - I_{n+1}^{m-1}) / 2,
 *   d/dy I_n^m = -i (I_{n+1}^{m+1} + I_{n+1}^{m-1}) / 2,
 * which with Omega = sum_{n,m} conj(M_n^m) I_{n+1}^{m+1}(r) give
 *   d/dx Phi = Re Omega,  d/dy Phi = Im Omega,
 *   d/dz Phi = -sum_{n,m} conj(M_n^m) I_{n+1}^m(r)
 * (equivalently, the degree-0 and 1 terms of an M2L to x). I is needed to
 * degree p + 1; x must lie outside the sphere about c that holds the
 * sources (x = c divides by zero). */
void tfmm_m2p(int p, const double *M, const double c[3], size_t n,
              const double *pos, double *phi, double *grad) {
  double re[TRI_MAX], im[TRI_MAX];
  for (size_t b = 0; b < n; b++) {
    const double r[3] = {pos[3 * b] - c[0], pos[3 * b + 1] - c[1],
                         pos[3 * b + 2] - c[2]};
    tfmm_harmonics_irregular(p + 1, r, re, im);
    double out[4];
    tfmm_op_m2p_eval(p, M, re, im, out);
    add_field(out, phi + b, grad + 3 * b);
  }
}
