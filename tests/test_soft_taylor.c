/* The Cartesian Taylor expansions of the Plummer-softened kernel
 * (src/farfield/soft_taylor.h) against independent truths: a direct sum of
 * (r^2 + eps^2)^(-1/2) in double over a cluster, seen from targets d away;
 * closed forms of the low derivatives and the kernel's Laplacian; the
 * Newtonian solid-harmonic M2P (farfield/expansion.h) at eps = 0; P2M
 * about the parent for M2M; the same sum over a whole tree for the
 * softened FMM's passes (farfield/soft_passes.h). Fresh random clusters every
 * run (the seed is logged). */
#include "testutil.h"

#include "farfield/expansion.h"
#include "farfield/passes.h"
#include "farfield/soft_passes.h"
#include "farfield/soft_taylor.h"
#include "nearfield/p2p_cpu.h"
#include "tree/lists.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>

enum { NB = 200, NT = 64, P_MAX = TFMM_SOFT_TAYLOR_ORDER_MAX };

typedef struct cluster {
  double c[3];               /* the expansion centre */
  double pos[3 * NB], m[NB]; /* bodies within A of c */
} cluster;

static const double A = 1.0; /* the cluster's radius */

/* A point uniform in the ball of radius r. */
static void in_ball(test_rng *rng, double r, double *x) {
  double s;
  do {
    s = 0;
    for (int d = 0; d < 3; d++) {
      x[d] = 2 * test_uniform(rng) - 1;
      s += x[d] * x[d];
    }
  } while (s > 1);
  for (int d = 0; d < 3; d++)
    x[d] *= r;
}

/* NB bodies within A of a random centre; masses in [0.5, 1.5). */
static void make_cluster(test_rng *rng, cluster *k) {
  for (int d = 0; d < 3; d++)
    k->c[d] = 4 * test_uniform(rng) - 2;
  for (int i = 0; i < NB; i++) {
    double y[3];
    in_ball(rng, A, y);
    for (int d = 0; d < 3; d++)
      k->pos[3 * i + d] = k->c[d] + y[d];
    k->m[i] = 0.5 + test_uniform(rng);
  }
}

/* NT targets at distance dist from the centre in random directions. */
static void make_targets(test_rng *rng, const cluster *k, double dist,
                         double *x) {
  for (int i = 0; i < NT; i++) {
    double u[3], s = 0;
    do {
      in_ball(rng, 1, u);
      s = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    } while (s < 0.1);
    for (int d = 0; d < 3; d++)
      x[3 * i + d] = k->c[d] + dist * u[d] / s;
  }
}

/* Phi and grad Phi of the cluster at the targets, summed directly with
 * kernel (r^2 + eps^2)^(-1/2) (eps = 0: Newton's). */
static void direct(const cluster *k, double eps, const double *x, double *phi,
                   double *grad) {
  for (int i = 0; i < NT; i++) {
    double f = 0, g[3] = {0, 0, 0};
    for (int j = 0; j < NB; j++) {
      double r[3], r2 = eps * eps;
      for (int d = 0; d < 3; d++) {
        r[d] = k->pos[3 * j + d] - x[3 * i + d];
        r2 += r[d] * r[d];
      }
      const double inv = 1 / sqrt(r2);
      f += k->m[j] * inv;
      for (int d = 0; d < 3; d++)
        g[d] += k->m[j] * r[d] * inv * inv * inv;
    }
    phi[i] = f;
    for (int d = 0; d < 3; d++)
      grad[3 * i + d] = g[d];
  }
}

/* The largest relative error over the targets of grad (|g - g_true| /
 * |g_true|) and of phi. */
static double grad_error(const double *g, const double *truth) {
  double worst = 0;
  for (int i = 0; i < NT; i++) {
    double num = 0, den = 0;
    for (int d = 0; d < 3; d++) {
      num +=
          (g[3 * i + d] - truth[3 * i + d]) * (g[3 * i + d] - truth[3 * i + d]);
      den += truth[3 * i + d] * truth[3 * i + d];
    }
    const double e = isfinite(num) ? sqrt(num / den) : INFINITY;
    worst = e > worst ? e : worst;
  }
  return worst;
}

static double phi_error(const double *f, const double *truth) {
  double worst = 0;
  for (int i = 0; i < NT; i++) {
    const double e =
        isfinite(f[i]) ? fabs(f[i] - truth[i]) / fabs(truth[i]) : INFINITY;
    worst = e > worst ? e : worst;
  }
  return worst;
}

/* The softened M2P of order p at the targets (P2M about the centre). */
static void soft_m2p(const cluster *k, int p, double eps, const double *x,
                     double *phi, double *grad) {
  double M[1000] = {0};
  cr_assert_leq(tfmm_soft_taylor_size(p), 1000);
  tfmm_soft_taylor_p2m(p, k->c, NB, k->pos, k->m, M);
  for (int i = 0; i < NT; i++)
    phi[i] = 0, grad[3 * i] = grad[3 * i + 1] = grad[3 * i + 2] = 0;
  tfmm_soft_taylor_m2p(p, eps, M, k->c, NT, x, phi, grad);
}

/* At each eps and ratio A / dist: the error falls at least 2-fold from p
 * to p + 2 (p >= 1; the monopole's error is the cluster's dipole about c,
 * small by chance) while above 1e-12 (round-off), stays under the
 * Newtonian bound (p + 2) (A / d)^(p+1) / (1 - A / d)^2, and at
 * A / dist = 1/8 it is below 1e-10 by p = 12. */
Test(soft_taylor, error_falls_with_order) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  const double epss[] = {0, 0.3, 1.0}, dists[] = {3, 4, 8};
  static cluster k;
  double x[3 * NT], phi[NT], grad[3 * NT], tphi[NT], tgrad[3 * NT];
  for (int e = 0; e < 3; e++)
    for (int q = 0; q < 3; q++) {
      make_cluster(&rng, &k);
      make_targets(&rng, &k, dists[q], x);
      direct(&k, epss[e], x, tphi, tgrad);
      double err[P_MAX + 1];
      for (int p = 0; p <= P_MAX; p++) {
        soft_m2p(&k, p, epss[e], x, phi, grad);
        const double ep = phi_error(phi, tphi);
        err[p] = grad_error(grad, tgrad);
        cr_log_info("seed %llu eps %g d %g p %d: grad %.3g phi %.3g",
                    (unsigned long long)seed, epss[e], dists[q], p, err[p], ep);
        cr_expect_leq(ep, 2 * err[p] + 1e-14,
                      "seed %llu eps %g d %g p %d: phi error %.3g above the "
                      "gradient's %.3g",
                      (unsigned long long)seed, epss[e], dists[q], p, ep,
                      err[p]);
        if (p >= 3 && err[p - 2] > 1e-12)
          cr_expect_leq(err[p], err[p - 2] / 2,
                        "seed %llu eps %g d %g: %.3g at p %d after %.3g at "
                        "p %d",
                        (unsigned long long)seed, epss[e], dists[q], err[p], p,
                        err[p - 2], p - 2);
      }
      /* (A / d)^(p+1) with the gradient's (p + 2) / (1 - A / d)^2. */
      const double r = A / dists[q];
      for (int p = 0; p <= P_MAX; p++)
        cr_expect_leq(err[p],
                      (p + 2) * pow(r, p + 1) / ((1 - r) * (1 - r)) + 1e-13,
                      "seed %llu eps %g d %g p %d: %.3g above the bound",
                      (unsigned long long)seed, epss[e], dists[q], p, err[p]);
      if (dists[q] == 8)
        cr_expect_leq(err[P_MAX], 1e-10, "seed %llu eps %g: %.3g at p %d",
                      (unsigned long long)seed, epss[e], err[P_MAX], P_MAX);
    }
}

/* eps = 0: the Newtonian solid-harmonic M2P of the same order. */
Test(soft_taylor, newton_at_eps_zero) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  static cluster k;
  double x[3 * NT], phi[NT], grad[3 * NT], nphi[NT], ngrad[3 * NT];
  double M[2 * 1000];
  for (int p = 0; p <= P_MAX; p++) {
    make_cluster(&rng, &k);
    make_targets(&rng, &k, 1.5 + 3 * test_uniform(&rng), x);
    soft_m2p(&k, p, 0, x, phi, grad);
    cr_assert_leq(tfmm_expansion_size(p), 2 * 1000);
    for (size_t i = 0; i < tfmm_expansion_size(p); i++)
      M[i] = 0;
    for (int i = 0; i < NT; i++)
      nphi[i] = 0, ngrad[3 * i] = ngrad[3 * i + 1] = ngrad[3 * i + 2] = 0;
    tfmm_p2m(p, k.c, NB, k.pos, k.m, M);
    tfmm_m2p(p, M, k.c, NT, x, nphi, ngrad);
    const double eg = grad_error(grad, ngrad), ep = phi_error(phi, nphi);
    cr_expect_leq(eg, 1e-12, "seed %llu p %d: gradient %.3g from Newton's",
                  (unsigned long long)seed, p, eg);
    cr_expect_leq(ep, 1e-12, "seed %llu p %d: potential %.3g from Newton's",
                  (unsigned long long)seed, p, ep);
  }
}

/* M2M of eight child clusters into the parent equals P2M about the parent,
 * entry by entry within round-off of sum_j m_j |y_j^n| / n!. */
Test(soft_taylor, m2m_equals_p2m) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  static cluster kids[8];
  const int p = P_MAX;
  const size_t size = tfmm_soft_taylor_size(p);
  double parent[3] = {0.3, -0.2, 0.1}, Mp[1000] = {0}, Md[1000] = {0};
  double scale[1000] = {0};
  for (int q = 0; q < 8; q++) {
    make_cluster(&rng, &kids[q]);
    double Mc[1000] = {0};
    tfmm_soft_taylor_p2m(p, kids[q].c, NB, kids[q].pos, kids[q].m, Mc);
    tfmm_soft_taylor_m2m(p, Mc, kids[q].c, parent, Mp);
    tfmm_soft_taylor_p2m(p, parent, NB, kids[q].pos, kids[q].m, Md);
    for (int i = 0; i < NB; i++) { /* the round-off scale */
      double y[3];
      for (int d = 0; d < 3; d++)
        y[d] = fabs(kids[q].pos[3 * i + d] - parent[d]);
      double one[1000] = {0};
      const double m1 = kids[q].m[i];
      tfmm_soft_taylor_p2m(p, (double[3]){0, 0, 0}, 1, y, &m1, one);
      for (size_t e = 0; e < size; e++)
        scale[e] += one[e];
    }
  }
  for (int t = 0; t <= p; t++)
    for (int b = 0; b <= t; b++)
      for (int c = 0; b + c <= t; c++) {
        const int e = tfmm_soft_taylor_index(t - b - c, b, c);
        cr_expect_leq(fabs(Mp[e] - Md[e]), 1e-13 * scale[e],
                      "seed %llu n (%d,%d,%d): M2M %.17g, P2M %.17g",
                      (unsigned long long)seed, t - b - c, b, c, Mp[e], Md[e]);
      }
  /* The moments are not all zero (a test that could not fail). */
  cr_expect_gt(fabs(Md[tfmm_soft_taylor_index(3, 1, 2)]), 0);
}

/* eps as large as the distance: Newton's field is wrong there by more
 * than 1 %, the softened series is right to its order's accuracy. */
Test(soft_taylor, eps_comparable_to_distance) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  static cluster k;
  double x[3 * NT], phi[NT], grad[3 * NT], tphi[NT], tgrad[3 * NT];
  double nphi[NT], ngrad[3 * NT];
  const double dist = 5, eps = 5, r = A / dist;
  make_cluster(&rng, &k);
  make_targets(&rng, &k, dist, x);
  direct(&k, eps, x, tphi, tgrad);
  direct(&k, 0, x, nphi, ngrad);
  const double newton = grad_error(ngrad, tgrad);
  cr_assert_gt(newton, 0.01, "Newton's field is off by only %.3g", newton);
  for (int p = 2; p <= 10; p += 2) {
    soft_m2p(&k, p, eps, x, phi, grad);
    const double e = grad_error(grad, tgrad);
    cr_log_info("seed %llu eps %g d %g p %d: %.3g (Newton's field: %.3g)",
                (unsigned long long)seed, eps, dist, p, e, newton);
    cr_expect_leq(e, (p + 2) * pow(r, p + 1) / ((1 - r) * (1 - r)),
                  "seed %llu p %d: %.3g", (unsigned long long)seed, p, e);
    cr_expect_leq(phi_error(phi, tphi), 2 * e + 1e-14);
  }
}

/* The low derivatives against closed forms (s = 1 / (r^2 + eps^2)), and
 * the kernel's Laplacian -3 eps^2 s^(5/2) and its x derivative
 * 15 eps^2 x s^(7/2), the sums of D^{n + 2 e_k} over k; also at R = 0. */
Test(soft_taylor, derivatives_closed_form) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  for (int trial = 0; trial < 20; trial++) {
    double R[3], D[1000];
    for (int d = 0; d < 3; d++)
      R[d] = trial == 0 ? 0 : 4 * test_uniform(&rng) - 2;
    const double eps = trial < 2 ? 0.5 : 2 * test_uniform(&rng);
    test_poison(D, tfmm_soft_taylor_size(P_MAX + 1));
    tfmm_soft_taylor_derivatives(P_MAX + 1, eps, R, D);
    cr_assert_eq(test_first_nonfinite(D, tfmm_soft_taylor_size(P_MAX + 1)),
                 tfmm_soft_taylor_size(P_MAX + 1));
    const double x = R[0], y = R[1], z = R[2];
    const double s = 1 / (x * x + y * y + z * z + eps * eps);
    const double s1 = sqrt(s), s3 = s1 * s, s5 = s3 * s, s7 = s5 * s;
#define AT(a, b, c) D[tfmm_soft_taylor_index(a, b, c)]
    const double want[][2] = {
        {AT(0, 0, 0), s1},
        {AT(1, 0, 0), -x * s3},
        {AT(0, 0, 1), -z * s3},
        {AT(2, 0, 0), -s3 + 3 * x * x * s5},
        {AT(0, 1, 1), 3 * y * z * s5},
        {AT(1, 1, 1), -15 * x * y * z * s7},
        {AT(3, 0, 0), 9 * x * s5 - 15 * x * x * x * s7},
        {AT(0, 2, 1), 3 * z * s5 - 15 * y * y * z * s7},
        {AT(2, 0, 0) + AT(0, 2, 0) + AT(0, 0, 2), -3 * eps * eps * s5},
        {AT(3, 0, 0) + AT(1, 2, 0) + AT(1, 0, 2), 15 * eps * eps * x * s7}};
#undef AT
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
      cr_expect_leq(fabs(want[i][0] - want[i][1]),
                    1e-13 * (fabs(want[i][1]) + s1 * s3),
                    "seed %llu trial %d entry %zu: %.17g, closed form %.17g",
                    (unsigned long long)seed, trial, i, want[i][0], want[i][1]);
  }
}

/* ---- The local expansions: M2L, L2L, L2P (soft_taylor_local.c) ---- */

static const double B = 1.0; /* the targets' radius about c_t */

/* NT targets within r of t (uniform in the ball). */
static void targets_in_ball(test_rng *rng, const double t[3], double r,
                            double *x) {
  for (int i = 0; i < NT; i++) {
    in_ball(rng, r, x + 3 * i);
    for (int d = 0; d < 3; d++)
      x[3 * i + d] += t[d];
  }
}

/* c_t at distance dist from c in a random direction. */
static void centre_at(test_rng *rng, const double c[3], double dist,
                      double *t) {
  double u[3], s;
  do {
    in_ball(rng, 1, u);
    s = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  } while (s < 0.1);
  for (int d = 0; d < 3; d++)
    t[d] = c[d] + dist * u[d] / s;
}

static void zero(double *phi, double *grad) {
  for (int i = 0; i < NT; i++)
    phi[i] = 0, grad[3 * i] = grad[3 * i + 1] = grad[3 * i + 2] = 0;
}

/* P2M about the cluster's centre, M2L to ct, L2P at x: the softened FMM
 * of order p between two cells. L (size(p)) is left with the local. */
static void soft_fmm(const cluster *k, int p, double eps, const double ct[3],
                     const double *x, double *L, double *phi, double *grad) {
  double M[1000] = {0};
  const size_t size = tfmm_soft_taylor_size(p);
  tfmm_soft_taylor_p2m(p, k->c, NB, k->pos, k->m, M);
  for (size_t e = 0; e < size; e++)
    L[e] = 0;
  tfmm_soft_taylor_m2l(p, eps, M, k->c, ct, L);
  zero(phi, grad);
  tfmm_soft_taylor_l2p(p, L, ct, NT, x, phi, grad);
}

/* The least-squares slope of log(err[p]) over p in [lo, hi] where err
 * stays above the round-off floor: the measured error factor per order is
 * exp(slope). Returns NAN when fewer than 4 orders are above it. */
static double rate_per_order(const double *err, int lo, int hi) {
  double sp = 0, se = 0, spp = 0, spe = 0;
  int n = 0;
  for (int p = lo; p <= hi && err[p] > 1e-12; p++, n++) {
    const double y = log(err[p]);
    sp += p, se += y, spp += (double)p * p, spe += p * y;
  }
  if (n < 4)
    return NAN;
  return exp((n * spe - sp * se) / (n * spp - sp * sp));
}

/* Sources within A of c_s, targets within B of c_t, |c_t - c_s| = d. The
 * force of an order-p FMM is a series in rho = (A + B) / sqrt(d^2 + eps^2)
 * of terms of degree <= p - 1 (soft_taylor.h): at every eps (0, a third of
 * A, and eps = d, comparable to the separation) and d, the error factor
 * per order, fitted over p = 2..12 above round-off, is at most rho, the
 * series' geometric rate (measured: 0.72-0.85 rho over 108 fresh cases);
 * at eps = d that is below Newton's rate, sqrt(2) times faster: softening
 * widens the radius of convergence. Each error is under the bound p (rho_0)^p /
 * (1 - rho_0)^2 with Newton's rho_0 = (A + B) / d; at rho_0 = 1/4 and p = 12
 * the error is below 1e-7. */
Test(soft_taylor, m2l_error_falls_with_order) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  const double dists[] = {4, 5, 8};
  static cluster k;
  double ct[3], x[3 * NT], L[1000], phi[NT], grad[3 * NT], tphi[NT],
      tgrad[3 * NT];
  for (int q = 0; q < 3; q++) {
    const double epss[] = {0, A / 3, dists[q]};
    for (int e = 0; e < 3; e++) {
      const double eps = epss[e], d = dists[q];
      make_cluster(&rng, &k);
      centre_at(&rng, k.c, d, ct);
      targets_in_ball(&rng, ct, B, x);
      direct(&k, eps, x, tphi, tgrad);
      double err[P_MAX + 1];
      for (int p = 0; p <= P_MAX; p++) {
        soft_fmm(&k, p, eps, ct, x, L, phi, grad);
        err[p] = grad_error(grad, tgrad);
        cr_log_info("seed %llu eps %g d %g p %d: grad %.3g phi %.3g",
                    (unsigned long long)seed, eps, d, p, err[p],
                    phi_error(phi, tphi));
      }
      const double rho0 = (A + B) / d, rho = (A + B) / sqrt(d * d + eps * eps);
      const double rate = rate_per_order(err, 2, P_MAX);
      cr_log_info("seed %llu eps %g d %g: factor %.3g per order, rho %.3g",
                  (unsigned long long)seed, eps, d, rate, rho);
      cr_expect(isfinite(rate) && rate <= rho,
                "seed %llu eps %g d %g: error factor %.3g per order, rho "
                "%.3g",
                (unsigned long long)seed, eps, d, rate, rho);
      for (int p = 1; p <= P_MAX; p++)
        cr_expect_leq(err[p], p * pow(rho0, p) / ((1 - rho0) * (1 - rho0)),
                      "seed %llu eps %g d %g p %d: %.3g above the bound",
                      (unsigned long long)seed, eps, d, p, err[p]);
      if (d == 8)
        cr_expect_leq(err[P_MAX], 1e-7, "seed %llu eps %g: %.3g at p %d",
                      (unsigned long long)seed, eps, err[P_MAX], P_MAX);
    }
  }
}

/* eps = 0: P2M, M2L, L2P of the Cartesian series equal those of the
 * solid harmonics (expansion.h), which cut the degrees at l + j <= p too:
 * both are the Taylor polynomial of total degree p in (y, z) of
 * 1 / |R + z - y|. */
Test(soft_taylor, m2l_newton_at_eps_zero) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  static cluster k;
  double ct[3], x[3 * NT], L[1000], phi[NT], grad[3 * NT], nphi[NT],
      ngrad[3 * NT];
  double M[2 * 1000], NL[2 * 1000];
  for (int p = 0; p <= P_MAX; p++) {
    make_cluster(&rng, &k);
    centre_at(&rng, k.c, 3 + 3 * test_uniform(&rng), ct);
    targets_in_ball(&rng, ct, B, x);
    soft_fmm(&k, p, 0, ct, x, L, phi, grad);
    cr_assert_leq(tfmm_expansion_size(p), 2 * 1000);
    for (size_t i = 0; i < tfmm_expansion_size(p); i++)
      M[i] = NL[i] = 0;
    zero(nphi, ngrad);
    tfmm_p2m(p, k.c, NB, k.pos, k.m, M);
    tfmm_m2l(p, M, k.c, ct, NL);
    tfmm_l2p(p, NL, ct, NT, x, nphi, ngrad);
    const double eg = grad_error(grad, ngrad), ep = phi_error(phi, nphi);
    cr_expect_leq(eg, 1e-11, "seed %llu p %d: gradient %.3g from Newton's",
                  (unsigned long long)seed, p, eg);
    cr_expect_leq(ep, 1e-12, "seed %llu p %d: potential %.3g from Newton's",
                  (unsigned long long)seed, p, ep);
  }
}

/* L2L is exact: the shifted local, evaluated anywhere, is the original
 * polynomial (L2P of both at the same points agree to round-off of
 * sum_k |L_k| |z^k| / k!, L2P of |L| at |z|), and two shifts make one. */
Test(soft_taylor, l2l_exact) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  for (int p = 0; p <= P_MAX; p++) {
    const size_t size = tfmm_soft_taylor_size(p);
    double L[1000], La[1000] = {0}, L1[1000] = {0}, L2[1000] = {0},
                    L12[1000] = {0}, c0[3], c1[3], c2[3], x[3 * NT];
    for (size_t e = 0; e < size; e++) /* entries of mixed size and sign */
      L[e] = (2 * test_uniform(&rng) - 1) * pow(10, 2 * test_uniform(&rng));
    for (size_t e = 0; e < size; e++)
      La[e] = fabs(L[e]);
    for (int d = 0; d < 3; d++)
      c0[d] = 2 * test_uniform(&rng) - 1;
    centre_at(&rng, c0, 0.5, c1);
    centre_at(&rng, c1, 0.25, c2);
    tfmm_soft_taylor_l2l(p, L, c0, c1, L1);
    tfmm_soft_taylor_l2l(p, L1, c1, c2, L12);
    tfmm_soft_taylor_l2l(p, L, c0, c2, L2);
    targets_in_ball(&rng, c2, 0.5, x);
    double f0[NT], g0[3 * NT], f1[NT], g1[3 * NT], f2[NT], g2[3 * NT];
    double fs[NT], gs[3 * NT], ax[3 * NT];
    zero(f0, g0), zero(f1, g1), zero(f2, g2), zero(fs, gs);
    tfmm_soft_taylor_l2p(p, L, c0, NT, x, f0, g0);
    tfmm_soft_taylor_l2p(p, L1, c1, NT, x, f1, g1);
    tfmm_soft_taylor_l2p(p, L12, c2, NT, x, f2, g2);
    for (int i = 0; i < 3 * NT; i++) /* |z| about c0 */
      ax[i] = fabs(x[i] - c0[i % 3]);
    tfmm_soft_taylor_l2p(p, La, (double[3]){0, 0, 0}, NT, ax, fs, gs);
    for (int i = 0; i < NT; i++) {
      const double gscale = 1e-13 * (fabs(gs[3 * i]) + fabs(gs[3 * i + 1]) +
                                     fabs(gs[3 * i + 2]) + fs[i]);
      cr_expect_leq(fabs(f1[i] - f0[i]), 1e-13 * fs[i],
                    "seed %llu p %d: L2L then L2P %.17g, L2P %.17g",
                    (unsigned long long)seed, p, f1[i], f0[i]);
      cr_expect_leq(fabs(f2[i] - f0[i]), 1e-13 * fs[i]);
      for (int d = 0; d < 3; d++)
        cr_expect_leq(fabs(g1[3 * i + d] - g0[3 * i + d]), gscale,
                      "seed %llu p %d: gradient %.17g, %.17g",
                      (unsigned long long)seed, p, g1[3 * i + d],
                      g0[3 * i + d]);
    }
    /* Two shifts, one shift: entry by entry. */
    for (size_t e = 0; e < size; e++)
      cr_expect_leq(fabs(L12[e] - L2[e]), 1e-12 * (fabs(L2[e]) + 1e3),
                    "seed %llu p %d entry %zu: %.17g, %.17g",
                    (unsigned long long)seed, p, e, L12[e], L2[e]);
    /* The shifted local is not the original (a test that could fail). */
    if (p >= 1)
      cr_expect_gt(fabs(L1[0] - L[0]), 0);
  }
}

/* M2L to the parent centre then L2L to a child, against M2L straight to
 * the child: the two differ by the parent's truncation only (degrees above
 * p of the shift), so their difference, at targets in the child, falls
 * with the order like the error itself (factor <= rho per order;
 * measured 0.70-0.86 rho),
 * and each stays within the bound of the direct sum. eps 0, 0.3 and 5
 * (the distance). */
Test(soft_taylor, m2l_l2l_against_m2l_to_child) {
  const uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  const double dist = 5, epss[] = {0, 0.3, 5};
  static cluster k;
  double ct[3], cc[3], x[3 * NT], L[1000], Lc[1000], tphi[NT], tgrad[3 * NT];
  double fa[NT], ga[3 * NT], fb[NT], gb[3 * NT];
  for (int e = 0; e < 3; e++) {
    const double eps = epss[e];
    make_cluster(&rng, &k);
    centre_at(&rng, k.c, dist, ct);
    centre_at(&rng, ct, B / 2, cc);
    targets_in_ball(&rng, cc, B / 2, x);
    direct(&k, eps, x, tphi, tgrad);
    double diff[P_MAX + 1];
    for (int p = 0; p <= P_MAX; p++) {
      const size_t size = tfmm_soft_taylor_size(p);
      soft_fmm(&k, p, eps, ct, x, L, fa, ga); /* L about the parent */
      for (size_t i = 0; i < size; i++)
        Lc[i] = 0;
      tfmm_soft_taylor_l2l(p, L, ct, cc, Lc);
      zero(fa, ga);
      tfmm_soft_taylor_l2p(p, Lc, cc, NT, x, fa, ga);
      soft_fmm(&k, p, eps, cc, x, L, fb, gb); /* straight to the child */
      diff[p] = grad_error(ga, gb);
      const double ea = grad_error(ga, tgrad), eb = grad_error(gb, tgrad);
      const double rho0 = (A + B) / dist;
      cr_log_info("seed %llu eps %g p %d: via parent %.3g, direct %.3g, "
                  "apart %.3g",
                  (unsigned long long)seed, eps, p, ea, eb, diff[p]);
      if (p >= 1) {
        const double bound = p * pow(rho0, p) / ((1 - rho0) * (1 - rho0));
        cr_expect_leq(ea, bound, "seed %llu eps %g p %d: via parent %.3g",
                      (unsigned long long)seed, eps, p, ea);
        cr_expect_leq(eb, bound, "seed %llu eps %g p %d: direct %.3g",
                      (unsigned long long)seed, eps, p, eb);
      }
    }
    const double rho = (A + B) / sqrt(dist * dist + eps * eps);
    const double rate = rate_per_order(diff, 2, P_MAX);
    cr_log_info("seed %llu eps %g: apart by a factor %.3g per order, rho %.3g",
                (unsigned long long)seed, eps, rate, rho);
    cr_expect(isfinite(rate) && rate <= rho,
              "seed %llu eps %g: difference falls %.3g per order, rho %.3g",
              (unsigned long long)seed, eps, rate, rho);
  }
}

/* ---- The softened FMM's passes over the octree (soft_passes.h) ---- */

enum { NF = 2000, P_FMM = 10 };

/* The p99 over the bodies of |a - a_true| / |a_true|, a in sorted order,
 * truth in input order. */
static double p99_sorted(const tfmm_octree *t, const double *a,
                         const double *truth) {
  static double err[NF];
  for (size_t k = 0; k < t->n; k++) {
    const int64_t i = t->order[k];
    double num = 0, den = 0;
    for (int d = 0; d < 3; d++) {
      const double e = a[3 * k + d] - truth[3 * i + d];
      num += e * e, den += truth[3 * i + d] * truth[3 * i + d];
    }
    err[k] = isfinite(num) ? sqrt(num / den) : INFINITY;
  }
  for (size_t k = 1; k < t->n; k++) /* insertion sort: NF is small */
    for (size_t j = k; j > 0 && err[j - 1] > err[j]; j--) {
      const double tmp = err[j];
      err[j] = err[j - 1], err[j - 1] = tmp;
    }
  return err[(size_t)ceil(0.99 * (double)t->n) - 1];
}

/* One FMM over t with lists l at order p: the softened expansions (soft)
 * or Newton's (expansion.h), the near field softened in double; a (3 per
 * sorted body) is overwritten. */
static void tree_fmm(const tfmm_octree *t, const tfmm_lists *l, int p,
                     double eps, int soft, double *a) {
  const size_t cells = (size_t)t->ncells, n = t->n;
  const size_t size = soft ? tfmm_soft_taylor_size(p) : tfmm_expansion_size(p);
  double *M = malloc(cells * size * sizeof *M),
         *L = malloc(cells * size * sizeof *L);
  double *phi = malloc(n * sizeof *phi), *near = malloc(3 * n * sizeof *near),
         *npot = malloc(n * sizeof *npot);
  cr_assert(M && L && phi && near && npot);
  test_poison(a, 3 * n);
  if (soft) {
    tfmm_soft_upward_pass(t, p, M);
    tfmm_soft_m2l_pass(t, &l->m2l, p, eps, M, L);
    tfmm_soft_downward_pass(t, p, L, phi, a);
    tfmm_soft_m2p_pass(t, &l->m2p, p, eps, M, phi, a);
  } else {
    tfmm_upward_pass(t, p, M);
    tfmm_m2l_pass(t, &l->m2l, p, M, L);
    tfmm_downward_pass(t, p, L, phi, a);
    tfmm_m2p_pass(t, &l->m2p, p, M, phi, a);
  }
  const tfmm_pair_params pair = {TFMM_SOFTENING_PLUMMER, eps,
                                 TFMM_PRECISION_DOUBLE};
  tfmm_error err;
  cr_assert_eq(tfmm_p2p_cpu(t, &l->near, &pair, near, npot, &err), TFMM_OK);
  for (size_t k = 0; k < 3 * n; k++)
    a[k] += near[k];
  free(M), free(L), free(phi), free(near), free(npot);
}

/* The passes over a tree of clumps (radii 1e-3 to 0.1), lists of the
 * plain criterion r_A + r_B < theta d with no softening separation, the
 * near field summed directly: against the double direct sum with eps
 * 1e-3 and 0.02 (the size of a clump, larger than two), the p99 falls by
 * at least theta per order (fitted over p = 2..12: the cells' series
 * converge with ratio below theta; measured 0.30-0.35) and is below 3e-5
 * at p = 10 (measured 3e-6 to 1e-5); Newton's expansions over the same
 * lists stop at the softening's error, at least 10x the softened p99 at
 * p = 10 (measured: 0.15-0.3 at eps 1e-3, above 100 at 0.02: the clumps
 * smaller than eps pull far less than Newton's point masses). */
Test(soft_taylor, passes_against_direct) {
  const uint64_t seed = test_fresh_seed();
  const double theta = 0.4, epss[] = {1e-3, 0.02};
  test_bodies b = test_bodies_make(NF, TEST_CLUSTERED, seed);
  static double truth[3 * NF], a[3 * NF];
  tfmm_octree t;
  tfmm_lists l;
  tfmm_error err;
  cr_assert_eq(
      tfmm_octree_build(&t, NF, b.pos, b.mass, 16, TFMM_MAX_DEPTH, &err),
      TFMM_OK);
  const tfmm_mac mac = {.theta = theta};
  cr_assert_eq(tfmm_lists_build_fmm(&t, &mac, 1, &l, &err), TFMM_OK);
  cr_assert_gt(l.m2l.offset[t.ncells], 0, "no M2L: a test that can't fail");
  for (int e = 0; e < 2; e++) {
    const double eps = epss[e];
    for (int i = 0; i < NF; i++) { /* the truth, in input order */
      double g[3] = {0, 0, 0};
      for (int j = 0; j < NF; j++) {
        double r[3], r2 = eps * eps;
        for (int d = 0; d < 3; d++)
          r[d] = b.pos[3 * j + d] - b.pos[3 * i + d], r2 += r[d] * r[d];
        const double inv = 1 / sqrt(r2), w = j == i ? 0 : b.mass[j] * inv;
        for (int d = 0; d < 3; d++)
          g[d] += w * inv * inv * r[d];
      }
      for (int d = 0; d < 3; d++)
        truth[3 * i + d] = g[d];
    }
    double p99[P_FMM + 1];
    for (int p = 0; p <= P_FMM; p++) {
      tree_fmm(&t, &l, p, eps, 1, a);
      p99[p] = p99_sorted(&t, a, truth);
      cr_log_info("seed %llu eps %g p %d: p99 %.3g", (unsigned long long)seed,
                  eps, p, p99[p]);
    }
    const double rate = rate_per_order(p99, 2, P_FMM);
    tree_fmm(&t, &l, P_FMM, eps, 0, a);
    const double newton = p99_sorted(&t, a, truth);
    cr_log_info("seed %llu eps %g: factor %.3g per order; Newton's p99 %.3g "
                "at p %d",
                (unsigned long long)seed, eps, rate, newton, P_FMM);
    cr_expect(isfinite(rate) && rate <= theta,
              "seed %llu eps %g: p99 falls %.3g per order, theta %g",
              (unsigned long long)seed, eps, rate, theta);
    cr_expect_leq(p99[P_FMM], 3e-5, "seed %llu eps %g: p99 %.3g at p %d",
                  (unsigned long long)seed, eps, p99[P_FMM], P_FMM);
    cr_expect_geq(newton, 10 * p99[P_FMM],
                  "seed %llu: Newton's %.3g, softened %.3g",
                  (unsigned long long)seed, newton, p99[P_FMM]);
  }
  tfmm_lists_free(&l);
  tfmm_octree_free(&t);
  test_bodies_free(&b);
}
