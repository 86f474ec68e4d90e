/* The arithmetic of the opening criterion (mac.h), written once for the
 * CPU traversal (src/tree/lists.c) and the GPU's
 * (kernels/traversal/traverse_gpu.cu): the test on one pair of cells from their
 * centres, radii and the source's mass, and the mass criterion's theta of one
 * cell. mac.h says what they mean and cites the sources. Each value is formed
 * by the same operations in the same order on both sides, so that, compiled
 * without fused multiply-add (the CPU's default in C11 mode, --fmad=false for
 * the .cu file), both traversals take the same decisions. */
#ifndef TFMM_MAC_RULE_H
#define TFMM_MAC_RULE_H

#include <math.h>

#if defined(__CUDACC__)
#define TFMM_MAC_FN static __host__ __device__ __forceinline__
#else
#define TFMM_MAC_FN static inline
#endif

/* What the criterion needs besides the two cells (tfmm_mac's scalars). */
typedef struct tfmm_mac_rule {
  double separation; /* s: no two bodies of an accepted pair closer */
  int error;         /* whether the error test applies (accel given) */
  double epsilon;    /* error allowed per interaction, relative to |a|_A */
  int order;         /* p of the expansions */
  double soft_term;  /* 3/2 eps^2 with Plummer softening, else 0 */
} tfmm_mac_rule;

/* The force error bound of a series of order p about centres rho = r_A +
 * r_B apart at distance d, q = rho / d < 1: M q^(p+1) / (d - rho)^2. */
TFMM_MAC_FN double tfmm_mac_series_error(double mass, double q, double gap,
                                         int p) {
  double qp = q;
  for (int k = 0; k < p; k++)
    qp *= q;
  return mass * qp / (gap * gap);
}

/* Whether source B (centre cb, radius rb, mass mb, its theta) acts on
 * target A (centre ca, radius ra, |a|_A accel_a) through its expansion. */
TFMM_MAC_FN int tfmm_mac_rule_accept(const tfmm_mac_rule *m, const double *ca,
                                     double ra, double accel_a,
                                     const double *cb, double rb, double mb,
                                     double theta) {
  double dx = ca[0] - cb[0];
  double dy = ca[1] - cb[1];
  double dz = ca[2] - cb[2];
  double r = ra + rb;
  double d2 = dx * dx + dy * dy + dz * dz;
  /* Squared, so that no square root is taken per test; r < theta d with
   * both sides non-negative. */
  if (!(r * r < theta * theta * d2))
    return 0;
  if (m->separation > 0) {
    double reach = r + m->separation; /* d >= r + s */
    if (!(reach * reach <= d2))
      return 0;
  }
  if (!m->error)
    return 1;
  double d = sqrt(d2), gap = d - r; /* > 0: r < theta d */
  double e = tfmm_mac_series_error(mb, r / d, gap, m->order);
  if (m->soft_term > 0)
    e += m->soft_term * mb / (gap * gap * gap * gap);
  return e < m->epsilon * accel_a;
}

/* The error test's softening factor (mac.h): 3/2 eps^2 under the error
 * criterion with Plummer softening, else 0. */
TFMM_MAC_FN double tfmm_mac_soft_term(int error, int plummer, double eps) {
  return error && plummer ? 1.5 * eps * eps : 0;
}

/* The mass criterion's theta never exceeds this: the expansions converge
 * for any theta < 1, but slowly near it. */
#define TFMM_MAC_THETA_CAP 0.95

TFMM_MAC_FN double tfmm_mac_mass_lhs(double theta, int p) {
  return (p + 2) * log(theta) - 2 * log(1 - theta);
}

/* theta(M) >= theta0 solving (p + 2) ln theta - 2 ln(1 - theta) = that of
 * theta0 - ln(mass_ratio) / 3, capped (Newton's method; the left side is
 * increasing, so Newton from below converges). theta0 outside (0, cap):
 * theta0 itself. */
TFMM_MAC_FN double tfmm_mac_mass_theta(double theta0, int p,
                                       double mass_ratio) {
  if (!(theta0 > 0 && theta0 < TFMM_MAC_THETA_CAP))
    return theta0;
  double rhs = tfmm_mac_mass_lhs(theta0, p) - log(mass_ratio) / 3;
  if (tfmm_mac_mass_lhs(TFMM_MAC_THETA_CAP, p) <= rhs)
    return TFMM_MAC_THETA_CAP;
  double x = theta0;
  for (int k = 0; k < 30; k++) {
    double f = tfmm_mac_mass_lhs(x, p) - rhs, df = (p + 2) / x + 2 / (1 - x);
    double next = x - f / df;
    next = next < theta0               ? theta0
           : next > TFMM_MAC_THETA_CAP ? TFMM_MAC_THETA_CAP
                                       : next;
    if (fabs(next - x) < 1e-12)
      return next;
    x = next;
  }
  return x;
}

/* The error criterion's |a| of one body from its acceleration a (3
 * values) of a previous evaluation in the caller's units, G applied:
 * scale = 2^(2k - j) / G brings it to the internal units of units.h
 * (a = G 2^(j - 2k) a'). The least over a cell's bodies is |a|_A
 * (accel_estimate.h, tfmm_accel_prior). */
TFMM_MAC_FN double tfmm_mac_prior_accel(const double *a, double scale) {
  return scale * sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/* The error criterion's estimate of |a|_A (accel_estimate.h): a monopole
 * walk that takes a cell of radius r at squared distance d2 whole when it
 * is a leaf or r < TFMM_ESTIMATE_THETA d, ... */
#define TFMM_ESTIMATE_THETA 0.5

TFMM_MAC_FN int tfmm_estimate_whole(int leaf, double radius, double d2) {
  return leaf ||
         radius * radius < TFMM_ESTIMATE_THETA * TFMM_ESTIMATE_THETA * d2;
}

/* ... and adds its field there with the Plummer kernel at eps (eps2 its
 * square), (dx, dy, dz) from the point to the cell's centre. */
TFMM_MAC_FN void tfmm_estimate_add(double *g, double mass, double dx, double dy,
                                   double dz, double d2, double eps2) {
  double r2 = d2 + eps2;
  if (r2 > 0) {
    double inv = 1 / sqrt(r2), f = mass * inv * inv * inv;
    g[0] += f * dx;
    g[1] += f * dy;
    g[2] += f * dz;
  }
}

#endif
