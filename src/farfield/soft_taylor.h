/* Cartesian Taylor expansions of the Plummer-softened kernel
 * g(x) = (|x|^2 + eps^2)^(-1/2), in double precision, of run-time order p
 * (multi-indices n = (a, b, c) with |n| = a + b + c <= p).
 *
 * Why not the solid harmonics of expansion.h: with eps > 0 the kernel is
 * not harmonic (Laplacian -3 eps^2 (r^2 + eps^2)^(-5/2)), so its
 * derivative tensors are not traceless and the full Cartesian moments are
 * needed (the route of falcON, Dehnen 2002, J. Comput. Phys. 179, 27, and
 * GADGET-4, Springel et al. 2021, MNRAS 506, 2871, named by issue 28).
 * With eps = 0 the series are Newton's, term for term those of expansion.h.
 *
 * The field: Phi(x) = sum_j m_j g(x - x_j) and grad Phi (no G, no sign;
 * the acceleration is G grad Phi, as for expansion.h). With y_j = x_j - c
 * and R = x - c, Taylor's theorem about R gives
 *
 *   Phi(x) = sum_{|n| <= p} (-1)^|n| M_n D^n g(R),  M_n = sum_j m_j y_j^n / n!
 *
 * with n! = a! b! c! and y^n = y_x^a y_y^b y_z^c. Its error falls like
 * (a_c / sqrt(d^2 + eps^2))^(p+1) for sources within a_c of c and targets d
 * from it: the kernel's singularities are eps off the real axis, so
 * softening only widens the series' radius of convergence.
 *
 * Storage: entry n at tfmm_soft_taylor_index(n) (soft_taylor_ops.h, with
 * the operators' arithmetic), tfmm_soft_taylor_size(p)
 * doubles, degree by degree. Operators are pure: explicit inputs, outputs
 * added to (+=), no state, no allocation, scratch on the stack (12 KiB at
 * most, in M2P), reentrant. Every operator needs eps >= 0 and
 * 0 <= p <= TFMM_SOFT_TAYLOR_ORDER_MAX. */
#ifndef TFMM_SOFT_TAYLOR_H
#define TFMM_SOFT_TAYLOR_H

#include "farfield/soft_taylor_ops.h"

#include <stddef.h>

enum { TFMM_SOFT_TAYLOR_ORDER_MAX = 12 };

/* Doubles per expansion of order p: (p + 1)(p + 2)(p + 3) / 6. */
size_t tfmm_soft_taylor_size(int p);

/* D^n g(R) for |n| <= q (q <= TFMM_SOFT_TAYLOR_ORDER_MAX + 1) into D
 * (tfmm_soft_taylor_size(q) doubles, overwritten). R may be 0 when
 * eps > 0. */
void tfmm_soft_taylor_derivatives(int q, double eps, const double R[3],
                                  double *D);

/* y^n / n! for |n| <= p into out (tfmm_soft_taylor_size(p) doubles,
 * overwritten): the monomials of P2M, M2M, L2L and L2P. */
void tfmm_soft_taylor_monomials(int p, const double y[3], double *out);

/* Particles to multipole about c: M_n += sum_j m_j (x_j - c)^n / n!. */
void tfmm_soft_taylor_p2m(int p, const double c[3], size_t n, const double *pos,
                          const double *mass, double *M);

/* Multipole about c_child to multipole about c_parent: Mp += shifted Mc,
 * exact (the binomial theorem: no truncation beyond order p). */
void tfmm_soft_taylor_m2m(int p, const double *Mc, const double c_child[3],
                          const double c_parent[3], double *Mp);

/* Multipole about c evaluated at n bodies with softening eps (Barnes-Hut):
 * phi[i] += Phi(x_i), grad[3i..3i+2] += grad Phi(x_i); phi or grad may be
 * NULL. Each x_i should lie outside the sphere about c that holds the
 * sources (the series then converges; with eps > 0 it converges further
 * in). Cost per body: the derivatives to order p + 1 (3 C(p + 5, 4)
 * flops, 2,145 at p = 8) and 8 C(p + 3, 3) for the sums (1,320). */
void tfmm_soft_taylor_m2p(int p, double eps, const double *M, const double c[3],
                          size_t n, const double *pos, double *phi,
                          double *grad);

/* ---- The local (Taylor) expansions of the FMM: soft_taylor_local.c ----
 *
 * A local expansion of order p about c_t holds L_k, |k| <= p, such that
 *
 *   Phi(x) = sum_{|k| <= p} L_k z^k / k!,  z = x - c_t.
 *
 * The FMM's truncation is the standard Cartesian one, |n| + |k| <= p
 * (Dehnen 2002, J. Comput. Phys. 179, 27, section 2: the Taylor series of
 * the multipole's potential about c_t, cut at total degree p): the
 * potential keeps every term of total degree <= p in (y, z), the gradient
 * every term of degree <= p - 1, so the force of an order-p FMM is that of
 * an order p - 1 series (M2P of soft_taylor_m2p keeps degree p in the
 * force: the derivatives go to p + 1). The error falls like
 * ((a_s + a_t) / sqrt(|R|^2 + eps^2))^p for sources within a_s of c_s and
 * targets within a_t of c_t (the series in (y + z) of D^n g(R + z - y)). */

/* Multipole M about c_s (order p) to local about c_t: L += L', with
 *
 *   L'_k = sum_{|n| <= p - |k|} (-1)^|n| M_n D^{n+k} g(R),  R = c_t - c_s,
 *
 * the derivatives to order p only (R = 0 allowed when eps > 0). Cost: the
 * derivatives (3 C(p + 4, 4) flops, 1,485 at p = 8) and 2 C(p + 6, 6) for
 * the sums over (n, k) (6,006 at p = 8, 924 at p = 5). */
void tfmm_soft_taylor_m2l(int p, double eps, const double *M,
                          const double c_s[3], const double c_t[3], double *L);

/* Local about c_parent to local about c_child: Lc += L shifted,
 *
 *   L'_k = sum_{|m| <= p - |k|} L_{k+m} d^m / m!,  d = c_child - c_parent,
 *
 * exact: the polynomial of order p re-centred (Taylor's theorem on a
 * polynomial has no remainder). Cost 2 C(p + 6, 6) flops, no eps. */
void tfmm_soft_taylor_l2l(int p, const double *L, const double c_parent[3],
                          const double c_child[3], double *Lc);

/* Local about c evaluated at n bodies: phi[i] += Phi(x_i),
 * grad[3i..3i+2] += grad Phi(x_i) (the polynomial's own gradient,
 * sum_{|m| <= p - 1} L_{m + e} z^m / m!); phi or grad may be NULL. Cost per
 * body: the monomials (C(p + 3, 3) flops) and 8 C(p + 3, 3) for the sums. */
void tfmm_soft_taylor_l2p(int p, const double *L, const double c[3], size_t n,
                          const double *pos, double *phi, double *grad);

#endif
