/* Multipole and local expansions of the Laplace kernel 1/r, in double
 * precision, of run-time order p (degrees 0..p; p = 0 is the monopole).
 *
 * The field they represent is Phi(x) = sum_j m_j / |x - x_j| and its
 * gradient grad Phi(x) = sum_j m_j (x_j - x) / |x - x_j|^3 (no G, no sign:
 * the solver makes a = G grad Phi and phi = -G Phi). No softening: the far
 * field is unsoftened (softening acts in the near field only).
 *
 * Operators are pure: explicit inputs, outputs added to (+=), no state.
 * Coefficients are stored as tfmm_expansion_size(p) doubles in a layout
 * private to expansion.c (complex scaled solid-harmonic coefficients, m >= 0
 * only; expansion.c says which identities each operator applies).
 *
 * Every operator needs 0 <= p <= TFMM_ORDER_MAX and is reentrant: no
 * globals, no allocation, scratch on the stack (under 20 KiB), no threads
 * of its own. Accuracy: the far field is a Taylor series of order p,
 * relative error ~ ((a + b) / d)^{p+1} for source and target radii a, b
 * about centres d apart (M2L cuts the source and target degrees at
 * l + n <= p); M2M, L2L and the evaluations are exact for the series they
 * are given. L2P's gradient is the gradient of the order-p local series,
 * so it is one order less accurate than its potential. */
#ifndef TFMM_EXPANSION_H
#define TFMM_EXPANSION_H

#include "operators.h" /* TFMM_ORDER_MAX; same folder */

#include <stddef.h>

/* Doubles per expansion of order p. */
size_t tfmm_expansion_size(int p);

/* Particles to multipole about c: M += expansion of n bodies. */
void tfmm_p2m(int p, const double c[3], size_t n, const double *pos,
              const double *mass, double *M);

/* Multipole about c_child to multipole about c_parent: Mp += shifted Mc. */
void tfmm_m2m(int p, const double *Mc, const double c_child[3],
              const double c_parent[3], double *Mp);

/* Multipole about c_src to local about c_tgt: L += ... (well separated;
 * c_src != c_tgt). */
void tfmm_m2l(int p, const double *M, const double c_src[3],
              const double c_tgt[3], double *L);

/* Local about c_parent to local about c_child: Lc += shifted Lp. */
void tfmm_l2l(int p, const double *Lp, const double c_parent[3],
              const double c_child[3], double *Lc);

/* Local about c to n bodies: phi[i] += Phi(x_i), grad[3i..] += grad Phi.
 * Finite at any x_i, the centre and its z axis included. */
void tfmm_l2p(int p, const double *L, const double c[3], size_t n,
              const double *pos, double *phi, double *grad);

/* Multipole about c evaluated at n bodies directly (Barnes-Hut):
 * phi[i] += Phi(x_i), grad[3i..] += grad Phi. Each x_i must lie outside
 * the sphere about c that holds the sources. */
void tfmm_m2p(int p, const double *M, const double c[3], size_t n,
              const double *pos, double *phi, double *grad);

#endif
