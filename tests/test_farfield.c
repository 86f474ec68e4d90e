/* The expansion operators against direct double-precision sums of
 * m_j / |x - x_j| and its gradient, on fresh random clusters, and against
 * the closed-form truncation error of the worst-case geometry.
 *
 * The truncation error of a multipole (or local) series of order p falls
 * like rho^{p+1}, rho = (source radius) / (distance) for M2P and
 * (a + b) / d for M2L (Greengard & Rokhlin 1987; Dehnen 2014); the
 * gradient of a local series of order p is a series of order p - 1, so its
 * error falls like rho^p. The random-cluster tests hold each order to
 * C rho^{p+1} (rho^p) with a fixed C, and the highest orders to rounding
 * level; the line test pins every order to its exact error. */
#include "testutil.h"

#include "../src/farfield/expansion.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

enum { NS = 50, NT = 40, SIZE_MAX_EXP = 512 };

/* Bound constant of the random-cluster checks. Over 1500 random
 * geometries the largest error / bound was 0.64 (potentials) and 1.4 (the
 * local gradient at p = 1). Random clusters sit so far below the bound that
 * a lost order can hide under any such C: worst_case_line_matches_closed_
 * form is the test that catches one. */
static const double C = 4.0;

typedef struct cluster {
  double pos[3 * NS], mass[NS];
} cluster;

typedef struct field {
  double phi[NT], grad[3 * NT];
} field;

static void random_unit(test_rng *rng, double u[3]) {
  for (;;) {
    double r2 = 0;
    for (int k = 0; k < 3; k++) {
      u[k] = 2 * test_uniform(rng) - 1;
      r2 += u[k] * u[k];
    }
    if (r2 > 1e-2 && r2 <= 1) {
      double r = sqrt(r2);
      for (int k = 0; k < 3; k++)
        u[k] /= r;
      return;
    }
  }
}

static void random_in_ball(test_rng *rng, const double c[3], double radius,
                           double x[3]) {
  for (;;) {
    double v[3], r2 = 0;
    for (int k = 0; k < 3; k++) {
      v[k] = 2 * test_uniform(rng) - 1;
      r2 += v[k] * v[k];
    }
    if (r2 <= 1) {
      for (int k = 0; k < 3; k++)
        x[k] = c[k] + radius * v[k];
      return;
    }
  }
}

/* NS bodies of mass 0.5..1.5 in the ball of radius a about c. */
static void make_sources(test_rng *rng, const double c[3], double a,
                         cluster *s) {
  for (int j = 0; j < NS; j++) {
    random_in_ball(rng, c, a, s->pos + 3 * j);
    s->mass[j] = 0.5 + test_uniform(rng);
  }
}

static void make_targets(test_rng *rng, const double c[3], double b,
                         double *pos) {
  for (int i = 0; i < NT; i++)
    random_in_ball(rng, c, b, pos + 3 * i);
}

/* The truth: Phi = sum m_j / |x - x_j|, grad = sum m_j (x_j - x) / r^3. */
static void direct_sum(const cluster *s, size_t nt, const double *tpos,
                       double *phi, double *grad) {
  for (size_t i = 0; i < nt; i++) {
    double f = 0, g[3] = {0, 0, 0};
    for (int j = 0; j < NS; j++) {
      double d[3];
      for (int k = 0; k < 3; k++)
        d[k] = s->pos[3 * j + k] - tpos[3 * i + k];
      double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
      f += s->mass[j] / r;
      for (int k = 0; k < 3; k++)
        g[k] += s->mass[j] * d[k] / (r * r * r);
    }
    phi[i] = f;
    for (int k = 0; k < 3; k++)
      grad[3 * i + k] = g[k];
  }
}

/* Largest relative error over targets, of the potential and of the
 * gradient vector. */
static void max_errors(size_t nt, const field *got, const field *ref,
                       double *e_phi, double *e_grad) {
  *e_phi = *e_grad = 0;
  for (size_t i = 0; i < nt; i++) {
    double e = fabs(got->phi[i] - ref->phi[i]) / fabs(ref->phi[i]);
    *e_phi = fmax(*e_phi, e);
    double num = 0, den = 0;
    for (int k = 0; k < 3; k++) {
      double dg = got->grad[3 * i + k] - ref->grad[3 * i + k];
      num += dg * dg;
      den += ref->grad[3 * i + k] * ref->grad[3 * i + k];
    }
    *e_grad = fmax(*e_grad, sqrt(num / den));
  }
}

static void add3(const double a[3], double s, const double u[3], double x[3]) {
  for (int k = 0; k < 3; k++)
    x[k] = a[k] + s * u[k];
}

static double dist3(const double a[3], const double b[3]) {
  double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
  return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static void zero_field(field *f) { memset(f, 0, sizeof *f); }

/* Sources about c_s, P2M of order p, M2P at the targets. */
static void via_m2p(int p, const cluster *s, const double c_s[3], size_t nt,
                    const double *tpos, field *out) {
  double M[SIZE_MAX_EXP] = {0};
  tfmm_p2m(p, c_s, NS, s->pos, s->mass, M);
  zero_field(out);
  tfmm_m2p(p, M, c_s, nt, tpos, out->phi, out->grad);
}

/* P2M about c_s, M2M to c_sp, M2L to c_tp, L2L to c_t, L2P. */
static void via_chain(int p, const cluster *s, const double c_s[3],
                      const double c_sp[3], const double c_tp[3],
                      const double c_t[3], size_t nt, const double *tpos,
                      field *out) {
  double M[SIZE_MAX_EXP] = {0}, Mp[SIZE_MAX_EXP] = {0};
  double Lp[SIZE_MAX_EXP] = {0}, L[SIZE_MAX_EXP] = {0};
  tfmm_p2m(p, c_s, NS, s->pos, s->mass, M);
  tfmm_m2m(p, M, c_s, c_sp, Mp);
  tfmm_m2l(p, Mp, c_sp, c_tp, Lp);
  tfmm_l2l(p, Lp, c_tp, c_t, L);
  zero_field(out);
  tfmm_l2p(p, L, c_t, nt, tpos, out->phi, out->grad);
}

Test(farfield, expansion_size) {
  for (int p = 0; p <= TFMM_ORDER_MAX; p++)
    cr_assert_eq(tfmm_expansion_size(p), (size_t)((p + 1) * (p + 2)));
  cr_assert_leq(tfmm_expansion_size(TFMM_ORDER_MAX), (size_t)SIZE_MAX_EXP);
}

/* P2M then M2P: error below C (a / (d - b))^{p+1} at every order, falling
 * overall, and at rounding level for p = 20 with d / a = 10. */
Test(farfield, p2m_m2p_converges) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  const double a = 1.0, b = 1.0, d = 10.0, rho = a / (d - b);
  for (int trial = 0; trial < 4; trial++) {
    double c_s[3], u[3], c_t[3], tpos[3 * NT];
    for (int k = 0; k < 3; k++)
      c_s[k] = 4 * test_uniform(&rng) - 2;
    random_unit(&rng, u);
    add3(c_s, d, u, c_t);
    cluster s;
    make_sources(&rng, c_s, a, &s);
    make_targets(&rng, c_t, b, tpos);
    field ref, got;
    direct_sum(&s, NT, tpos, ref.phi, ref.grad);
    double e0_phi = 0, e0_grad = 0;
    for (int p = 0; p <= TFMM_ORDER_MAX; p++) {
      via_m2p(p, &s, c_s, NT, tpos, &got);
      double e_phi, e_grad;
      max_errors(NT, &got, &ref, &e_phi, &e_grad);
      double bound = fmax(C * pow(rho, p + 1), 1e-13);
      cr_assert_leq(e_phi, bound, "seed %llu trial %d p %d: phi error %g",
                    (unsigned long long)seed, trial, p, e_phi);
      cr_assert_leq(e_grad, bound, "seed %llu trial %d p %d: grad error %g",
                    (unsigned long long)seed, trial, p, e_grad);
      if (p == 0) {
        e0_phi = e_phi;
        e0_grad = e_grad;
      }
      if (p == 12) {
        cr_assert_lt(e_phi, 1e-7 * e0_phi, "seed %llu",
                     (unsigned long long)seed);
        cr_assert_lt(e_grad, 1e-7 * e0_grad, "seed %llu",
                     (unsigned long long)seed);
      }
      if (p == TFMM_ORDER_MAX) {
        cr_assert_lt(e_phi, 1e-12, "seed %llu: phi error %g at p = 20",
                     (unsigned long long)seed, e_phi);
        cr_assert_lt(e_grad, 1e-12, "seed %llu: grad error %g at p = 20",
                     (unsigned long long)seed, e_grad);
      }
    }
  }
}

/* P2M, M2M to a parent centre, M2L, L2L to a child centre, L2P: error below
 * C rho^{p+1} (potential) and C rho^p (gradient), rho = (a_p + b_p) / |D|
 * with a_p, b_p the radii about the parent centres. */
static void check_chain(double d, int p_lo, int p_hi, double floor_phi,
                        double floor_grad) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  const double a = 1.0, b = 1.0;
  for (int trial = 0; trial < 4; trial++) {
    double c_s[3], u[3], c_t[3], c_sp[3], c_tp[3], tpos[3 * NT];
    for (int k = 0; k < 3; k++)
      c_s[k] = 4 * test_uniform(&rng) - 2;
    random_unit(&rng, u);
    add3(c_s, d, u, c_t);
    random_unit(&rng, u);
    add3(c_s, 0.5 * a, u, c_sp);
    random_unit(&rng, u);
    add3(c_t, 0.5 * b, u, c_tp);
    const double rho = (1.5 * a + 1.5 * b) / dist3(c_sp, c_tp);
    cluster s;
    make_sources(&rng, c_s, a, &s);
    make_targets(&rng, c_t, b, tpos);
    field ref, got;
    direct_sum(&s, NT, tpos, ref.phi, ref.grad);
    double e0_phi = 0, e0_grad = 0;
    for (int p = p_lo; p <= p_hi; p++) {
      via_chain(p, &s, c_s, c_sp, c_tp, c_t, NT, tpos, &got);
      double e_phi, e_grad;
      max_errors(NT, &got, &ref, &e_phi, &e_grad);
      double bphi = fmax(C * pow(rho, p + 1), floor_phi);
      double bgrad = fmax(C * pow(rho, p), floor_grad);
      cr_assert_leq(e_phi, bphi, "seed %llu trial %d p %d: phi error %g",
                    (unsigned long long)seed, trial, p, e_phi);
      cr_assert_leq(e_grad, bgrad, "seed %llu trial %d p %d: grad error %g",
                    (unsigned long long)seed, trial, p, e_grad);
      if (p == 0) {
        e0_phi = e_phi;
        e0_grad = e_grad;
      }
      if (p == 12) {
        cr_assert_lt(e_phi, 1e-4 * e0_phi, "seed %llu",
                     (unsigned long long)seed);
        cr_assert_lt(e_grad, 1e-4 * e0_grad, "seed %llu",
                     (unsigned long long)seed);
      }
    }
  }
}

Test(farfield, m2l_chain_converges) { check_chain(10.0, 0, 12, 0, 0); }

/* d = 40: rho^21 ~ 1e-23, so what is left is rounding. */
Test(farfield, m2l_chain_p20_at_rounding_level) {
  check_chain(40.0, TFMM_ORDER_MAX, TFMM_ORDER_MAX, 1e-12, 1e-11);
}

/* One body and one target on a line through the expansion centres, the
 * body and the target each displaced from its centre towards the other:
 * the worst case, where the truncation error is known in closed form and a
 * lost order shows as a factor 1/t (any direction u). With t the ratio below,
 *   M2P, body at c + a u, target at c + r u (r > a), t = a / r:
 *     Phi_p = Phi (1 - t^{p+1}),  grad_p = grad (1 - ((p+2) - (p+1) t) t^{p+1})
 *   M2L, body at c_s + a u, target at c_t - b u, D = |c_t - c_s|,
 *   t = (a + b) / D (the terms with n + l <= p sum to the first p + 1
 *   terms of 1 / (D - a - b) = sum_n (a + b)^n / D^{n+1}):
 *     Phi_p = Phi (1 - t^{p+1}),  grad_p = grad (1 - ((p+1) - p t) t^p). */
static void check_line(int p, const double *M_or_L, int local,
                       const double c[3], const double x[3], double t,
                       const double phi_true, const double grad_true[3],
                       uint64_t seed) {
  double phi = 0, grad[3] = {0, 0, 0};
  if (local)
    tfmm_l2p(p, M_or_L, c, 1, x, &phi, grad);
  else
    tfmm_m2p(p, M_or_L, c, 1, x, &phi, grad);
  const double tp = pow(t, p);
  const double e_phi = tp * t;
  const double e_grad =
      local ? tp * ((p + 1) - p * t) : tp * t * ((p + 2) - (p + 1) * t);
  const double tol = 1e-13;
  cr_assert_float_eq(phi / phi_true, 1 - e_phi, tol,
                     "seed %llu local %d p %d: relative error %g, not %g",
                     (unsigned long long)seed, local, p, 1 - phi / phi_true,
                     e_phi);
  for (int k = 0; k < 3; k++)
    cr_assert_float_eq(grad[k], grad_true[k] * (1 - e_grad),
                       tol * fabs(grad_true[0]) + tol * fabs(grad_true[1]) +
                           tol * fabs(grad_true[2]),
                       "seed %llu local %d p %d k %d", (unsigned long long)seed,
                       local, p, k);
}

Test(farfield, worst_case_line_matches_closed_form) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  for (int trial = 0; trial < 4; trial++) {
    const double m = 0.5 + test_uniform(&rng), a = 1.5, b = 1.5, D = 10.0;
    double u[3], w[3], c_sp[3], c_tp[3], c_s[3], c_t[3], body[3], x[3];
    for (int k = 0; k < 3; k++)
      c_sp[k] = 4 * test_uniform(&rng) - 2;
    random_unit(&rng, u);
    add3(c_sp, D, u, c_tp);
    add3(c_sp, a, u, body);
    add3(c_tp, -b, u, x);
    /* Off-line child centres: M2M and L2L are exact, so they must not
     * change the closed form. */
    random_unit(&rng, w);
    add3(body, 0.7, w, c_s);
    random_unit(&rng, w);
    add3(x, 0.7, w, c_t);
    const double s = D - a - b,
                 grad_line[3] = {-m * u[0] / (s * s), -m * u[1] / (s * s),
                                 -m * u[2] / (s * s)};
    /* M2P from c_sp at c_sp + r u, beyond the body: t = a / r. */
    const double r = 8.0;
    double xm[3];
    add3(c_sp, r, u, xm);
    const double q = r - a,
                 grad_m2p[3] = {-m * u[0] / (q * q), -m * u[1] / (q * q),
                                -m * u[2] / (q * q)};
    for (int p = 0; p <= TFMM_ORDER_MAX; p++) {
      double M[SIZE_MAX_EXP] = {0}, Mp[SIZE_MAX_EXP] = {0};
      double Lp[SIZE_MAX_EXP] = {0}, L[SIZE_MAX_EXP] = {0};
      tfmm_p2m(p, c_s, 1, body, &m, M);
      tfmm_m2m(p, M, c_s, c_sp, Mp);
      check_line(p, Mp, 0, c_sp, xm, a / r, m / q, grad_m2p, seed);
      tfmm_m2l(p, Mp, c_sp, c_tp, Lp);
      tfmm_l2l(p, Lp, c_tp, c_t, L);
      check_line(p, L, 1, c_t, x, (a + b) / D, m / s, grad_line, seed);
    }
  }
}

/* p = 0 is the monopole: Phi = M / r, grad = M (c - x) / r^3 for M2P; M2L
 * gives the constant M / |D|. */
Test(farfield, order_zero_is_monopole) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  double c_s[3] = {0.1, -0.3, 0.7}, u[3], c_t[3], tpos[3 * NT];
  cluster s;
  make_sources(&rng, c_s, 1.0, &s);
  random_unit(&rng, u);
  add3(c_s, 5.0, u, c_t);
  make_targets(&rng, c_t, 1.0, tpos);
  double mtot = 0;
  for (int j = 0; j < NS; j++)
    mtot += s.mass[j];
  field got;
  via_m2p(0, &s, c_s, NT, tpos, &got);
  for (int i = 0; i < NT; i++) {
    double r = dist3(tpos + 3 * i, c_s);
    cr_assert_float_eq(got.phi[i], mtot / r, 1e-14 * mtot / r, "seed %llu",
                       (unsigned long long)seed);
    for (int k = 0; k < 3; k++) {
      double g = mtot * (c_s[k] - tpos[3 * i + k]) / (r * r * r);
      cr_assert_float_eq(got.grad[3 * i + k], g, 1e-14 * mtot / (r * r),
                         "seed %llu", (unsigned long long)seed);
    }
  }
  via_chain(0, &s, c_s, c_s, c_t, c_t, NT, tpos, &got);
  double D = dist3(c_s, c_t);
  for (int i = 0; i < NT; i++) {
    cr_assert_float_eq(got.phi[i], mtot / D, 1e-14 * mtot / D);
    for (int k = 0; k < 3; k++)
      cr_assert_eq(got.grad[3 * i + k], 0.0);
  }
}

/* Evaluation at the expansion centre and on its z axis (theta = 0, pi),
 * with every displacement along z as well: finite and correct. */
Test(farfield, centre_and_z_axis) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  const int p = 12;
  const double a = 1.0, h = 0.5;
  for (int sign = -1; sign <= 1; sign += 2) {
    /* Sources below or above the targets on the z axis. */
    double c_s[3] = {0.25, -0.5, 0.0}, c_t[3] = {0.25, -0.5, sign * 10.0};
    double c_sp[3] = {0.25, -0.5, -0.5 * sign};
    double c_tp[3] = {0.25, -0.5, sign * 10.5};
    cluster s;
    make_sources(&rng, c_s, a, &s);
    /* The centre, points on the axis, and near it. */
    const double offsets[5][3] = {
        {0, 0, 0}, {0, 0, h}, {0, 0, -h}, {0, 0, 1e-300}, {1e-9, 0, -h}};
    double tpos[3 * 5];
    for (int i = 0; i < 5; i++)
      add3(c_t, 1.0, offsets[i], tpos + 3 * i);
    field ref, got;
    direct_sum(&s, 5, tpos, ref.phi, ref.grad);
    via_chain(p, &s, c_s, c_sp, c_tp, c_t, 5, tpos, &got);
    cr_assert_eq(test_first_nonfinite(got.phi, 5), 5);
    cr_assert_eq(test_first_nonfinite(got.grad, 15), 15);
    double e_phi, e_grad;
    max_errors(5, &got, &ref, &e_phi, &e_grad);
    const double rho = (1.5 * a + 1.5 * h) / dist3(c_sp, c_tp);
    cr_assert_leq(e_phi, C * pow(rho, p + 1), "seed %llu: phi error %g",
                  (unsigned long long)seed, e_phi);
    cr_assert_leq(e_grad, C * pow(rho, p), "seed %llu: grad error %g",
                  (unsigned long long)seed, e_grad);
    /* M2P on the z axis of the source centre. */
    double apos[3 * 2] = {c_s[0], c_s[1], c_s[2] + 8.0,
                          c_s[0], c_s[1], c_s[2] - 8.0};
    direct_sum(&s, 2, apos, ref.phi, ref.grad);
    via_m2p(p, &s, c_s, 2, apos, &got);
    max_errors(2, &got, &ref, &e_phi, &e_grad);
    cr_assert_leq(e_phi, C * pow(a / 8.0, p + 1), "seed %llu",
                  (unsigned long long)seed);
    cr_assert_leq(e_grad, C * pow(a / 8.0, p + 1), "seed %llu",
                  (unsigned long long)seed);
  }
}

/* M2M and L2L are exact for the truncated series: P2M about the parent
 * equals M2M of P2M about the child, and L2P of the shifted local equals
 * L2P of the original, to rounding, at every order. */
Test(farfield, shifts_are_exact) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  double c[3] = {1, 2, 3}, cp[3], u[3], far[3], tpos[3 * NT];
  cluster s;
  make_sources(&rng, c, 1.0, &s);
  random_unit(&rng, u);
  add3(c, 0.7, u, cp);
  random_unit(&rng, u);
  add3(c, 12.0, u, far);
  make_targets(&rng, c, 1.0, tpos);
  for (int p = 0; p <= TFMM_ORDER_MAX; p++) {
    const size_t size = tfmm_expansion_size(p);
    double Mc[SIZE_MAX_EXP] = {0}, Mp[SIZE_MAX_EXP] = {0};
    double Md[SIZE_MAX_EXP] = {0};
    tfmm_p2m(p, c, NS, s.pos, s.mass, Mc);
    tfmm_m2m(p, Mc, c, cp, Mp);
    tfmm_p2m(p, cp, NS, s.pos, s.mass, Md);
    double norm = 0;
    for (size_t k = 0; k < size; k++)
      norm = fmax(norm, fabs(Md[k]));
    for (size_t k = 0; k < size; k++)
      cr_assert_float_eq(Mp[k], Md[k], 1e-13 * norm, "seed %llu p %d k %zu",
                         (unsigned long long)seed, p, k);
    /* A local expansion about cp of far-away sources, shifted to c. */
    cluster t;
    make_sources(&rng, far, 1.0, &t);
    double Mf[SIZE_MAX_EXP] = {0}, Lp[SIZE_MAX_EXP] = {0};
    double Lc[SIZE_MAX_EXP] = {0};
    tfmm_p2m(p, far, NS, t.pos, t.mass, Mf);
    tfmm_m2l(p, Mf, far, cp, Lp);
    tfmm_l2l(p, Lp, cp, c, Lc);
    field f1, f2;
    zero_field(&f1);
    zero_field(&f2);
    tfmm_l2p(p, Lp, cp, NT, tpos, f1.phi, f1.grad);
    tfmm_l2p(p, Lc, c, NT, tpos, f2.phi, f2.grad);
    double e_phi, e_grad;
    max_errors(NT, &f2, &f1, &e_phi, &e_grad);
    cr_assert_lt(e_phi, 1e-13, "seed %llu p %d", (unsigned long long)seed, p);
    if (p > 0)
      cr_assert_lt(e_grad, 1e-12, "seed %llu p %d", (unsigned long long)seed,
                   p);
  }
}

/* The four operators that produce coefficients, by number, into x. */
static const double OP_C[3] = {0.5, 0.5, 0.5}, OP_C2[3] = {0.9, 0.1, 0.4},
                    OP_FAR[3] = {6, -5, 4};

static void coeff_op(int op, int p, const cluster *s, const double *M,
                     double *x) {
  switch (op) {
  case 0:
    tfmm_p2m(p, OP_C, NS, s->pos, s->mass, x);
    break;
  case 1:
    tfmm_m2m(p, M, OP_C, OP_C2, x);
    break;
  case 2:
    tfmm_m2l(p, M, OP_C, OP_FAR, x);
    break;
  default:
    tfmm_l2l(p, M, OP_C, OP_C2, x);
    break;
  }
}

/* Every operator adds to its output: on top of random contents it adds
 * what it writes into zeros, twice into zeros is twice once, and nothing is
 * written past tfmm_expansion_size(p). */
Test(farfield, outputs_are_added) {
  uint64_t seed = test_fresh_seed();
  test_rng rng = {seed};
  cluster s;
  make_sources(&rng, OP_C, 1.0, &s);
  double tpos[3 * NT], fpos[3 * NT];
  make_targets(&rng, OP_C2, 0.5, tpos);
  make_targets(&rng, OP_FAR, 0.5, fpos);
  enum { GUARD = 8 };
  const double sentinel = 1234.5;
  for (int p = 0; p <= TFMM_ORDER_MAX; p++) {
    const size_t size = tfmm_expansion_size(p);
    double M[SIZE_MAX_EXP] = {0};
    tfmm_p2m(p, OP_C, NS, s.pos, s.mass, M);
    for (int op = 0; op < 4; op++) {
      double once[SIZE_MAX_EXP + GUARD], twice[SIZE_MAX_EXP + GUARD];
      double onto[SIZE_MAX_EXP + GUARD], base[SIZE_MAX_EXP];
      for (size_t k = 0; k < size; k++)
        base[k] = 2 * test_uniform(&rng) - 1;
      for (size_t k = 0; k < size + GUARD; k++) {
        once[k] = twice[k] = k < size ? 0.0 : sentinel;
        onto[k] = k < size ? base[k] : sentinel;
      }
      coeff_op(op, p, &s, M, once);
      coeff_op(op, p, &s, M, twice);
      coeff_op(op, p, &s, M, twice);
      coeff_op(op, p, &s, M, onto);
      double norm = 1.0;
      for (size_t k = 0; k < size; k++)
        norm = fmax(norm, fabs(once[k]));
      /* P2M adds body by body, so its sums round differently; the others
       * add each output once. */
      const double tol_twice = op == 0 ? 1e-14 * norm : 0.0;
      for (size_t k = 0; k < size; k++) {
        cr_assert_float_eq(onto[k], base[k] + once[k], 1e-14 * norm,
                           "op %d p %d k %zu", op, p, k);
        cr_assert_float_eq(twice[k], 2 * once[k], tol_twice, "op %d p %d k %zu",
                           op, p, k);
      }
      for (size_t k = size; k < size + GUARD; k++)
        cr_assert(once[k] == sentinel && twice[k] == sentinel &&
                      onto[k] == sentinel,
                  "op %d p %d wrote past the expansion", op, p);
    }
    /* L2P (M read as a local expansion) and M2P, the same checks. */
    for (int op = 0; op < 2; op++) {
      const double *where = op ? fpos : tpos;
      field once, twice, onto, values;
      zero_field(&once);
      zero_field(&twice);
      for (int i = 0; i < NT; i++) {
        values.phi[i] = 2 * test_uniform(&rng) - 1;
        for (int k = 0; k < 3; k++)
          values.grad[3 * i + k] = 2 * test_uniform(&rng) - 1;
      }
      onto = values;
      field *runs[4] = {&once, &twice, &twice, &onto};
      for (int r = 0; r < 4; r++) {
        if (op)
          tfmm_m2p(p, M, OP_C, NT, where, runs[r]->phi, runs[r]->grad);
        else
          tfmm_l2p(p, M, OP_C, NT, where, runs[r]->phi, runs[r]->grad);
      }
      for (int i = 0; i < NT; i++) {
        cr_assert_eq(twice.phi[i], 2 * once.phi[i], "op %d p %d", op, p);
        cr_assert_float_eq(onto.phi[i], values.phi[i] + once.phi[i],
                           1e-15 * (1 + fabs(once.phi[i])), "op %d p %d", op,
                           p);
        for (int k = 0; k < 3; k++) {
          const int j = 3 * i + k;
          cr_assert_eq(twice.grad[j], 2 * once.grad[j], "op %d p %d", op, p);
          cr_assert_float_eq(onto.grad[j], values.grad[j] + once.grad[j],
                             1e-15 * (1 + fabs(once.grad[j])), "op %d p %d", op,
                             p);
        }
      }
    }
  }
}
