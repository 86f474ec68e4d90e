/* The softening kernels of interaction.h against their definitions: the
 * spline's force is the enclosed mass of its density over r^2 (quadrature
 * in long double), its potential is the integral of the force, both are
 * continuous at u = 1/2 and u = 1, and it is Newton's law beyond the
 * support; Plummer's matches its closed form; float agrees with double;
 * the far field's separation (accuracy.c) is where Plummer's force is
 * within the stated fraction of Newton's. */
#include "accuracy.h"
#include "nearfield/interaction.h"

#include <criterion/criterion.h>
#include <math.h>

static const long double PI = 3.14159265358979323846264338327950288L;

/* The spline's density of unit mass, support h (Springel 2005 eq. 4). */
static long double density(long double r, long double h) {
  long double u = r / h, c = 8 / (PI * h * h * h);
  if (u < 0.5L)
    return c * (1 - 6 * u * u + 6 * u * u * u);
  if (u < 1)
    return c * 2 * (1 - u) * (1 - u) * (1 - u);
  return 0;
}

/* Mass inside r by Simpson's rule on 2 * 4000 panels. */
static long double enclosed(long double r, long double h) {
  const int m = 8000;
  long double dr = r / m, s = 0;
  for (int k = 0; k <= m; k++) {
    long double x = k * dr, w = k == 0 || k == m ? 1 : (k % 2 ? 4 : 2);
    s += w * 4 * PI * x * x * density(x, h);
  }
  return s * dr / 3;
}

static tfmm_acc_f64 pull64(double eps, int spline, double r) {
  tfmm_soft_f64 k = tfmm_soft_make_f64(spline, eps);
  return tfmm_soft_pair_f64(&k, 0, 0, 0, r, 0, 0, 1, 0);
}

Test(softening, spline_force_is_enclosed_mass_over_r2) {
  const double eps = 0.3, h = TFMM_SPLINE_SUPPORT * eps;
  cr_assert_float_eq(h, 0.84, 1e-15);
  for (int k = 1; k <= 60; k++) {
    double r = h * k / 50.0; /* through both pieces and past the support */
    long double truth = enclosed(r, h) / ((long double)r * r);
    double a = pull64(eps, 1, r).x;
    cr_assert_float_eq(a, (double)truth, 1e-10 * (double)truth + 1e-14,
                       "r = %g: %.15g, enclosed mass gives %.15Lg", r, a,
                       truth);
  }
}

Test(softening, spline_potential_integrates_the_force) {
  /* phi(r) = -1/R - int_r^R g(s) ds for any R past the support. */
  const double eps = 0.05, h = TFMM_SPLINE_SUPPORT * eps, R = 1.5 * h;
  for (int k = 0; k <= 30; k++) {
    double r = h * k / 20.0;
    long double integral = 0;
    const int m = 20000;
    long double ds = (R - r) / m;
    for (int j = 0; j <= m; j++) {
      double s = r + (double)(j * ds);
      long double w = j == 0 || j == m ? 1 : (j % 2 ? 4 : 2);
      integral += w * (long double)pull64(eps, 1, s).x;
    }
    integral *= ds / 3;
    long double truth = -1 / (long double)R - integral;
    double phi = pull64(eps, 1, r).w;
    cr_assert_float_eq(phi, (double)truth, 1e-9 / eps,
                       "r = %g: %.15g vs %.15Lg", r, phi, truth);
  }
  /* The depth is Plummer's: -1/eps. */
  cr_assert_float_eq(pull64(eps, 1, 0).w, -1 / eps, 1e-12 / eps);
}

Test(softening, spline_is_continuous_and_newtonian_outside) {
  const double eps = 1.0, h = TFMM_SPLINE_SUPPORT;
  const double knots[] = {0.5 * h, h};
  for (int k = 0; k < 2; k++) {
    tfmm_acc_f64 lo = pull64(eps, 1, knots[k] * (1 - 1e-12));
    tfmm_acc_f64 hi = pull64(eps, 1, knots[k] * (1 + 1e-12));
    cr_assert_float_eq(lo.x, hi.x, 1e-9 * fabs(hi.x));
    cr_assert_float_eq(lo.w, hi.w, 1e-9 * fabs(hi.w));
  }
  for (double r = h; r < 10 * h; r *= 1.37) {
    tfmm_acc_f64 a = pull64(eps, 1, r);
    cr_assert_float_eq(a.x, 1 / (r * r), 1e-15 / (r * r));
    cr_assert_float_eq(a.w, -1 / r, 1e-15 / r);
  }
}

Test(softening, plummer_matches_its_closed_form) {
  const double eps = 0.1;
  for (double r = 1e-3; r < 10; r *= 1.9) {
    tfmm_acc_f64 a = pull64(eps, 0, r);
    double s = r * r + eps * eps;
    cr_assert_float_eq(a.x, r / (s * sqrt(s)), 1e-14 * a.x);
    cr_assert_float_eq(a.w, -1 / sqrt(s), 1e-14 / sqrt(s));
  }
}

Test(softening, single_agrees_with_double_and_self_is_zero) {
  for (int spline = 0; spline < 2; spline++) {
    tfmm_soft_f32 k32 = tfmm_soft_make_f32(spline, 0.02);
    tfmm_soft_f64 k64 = tfmm_soft_make_f64(spline, 0.02);
    for (double r = 1e-4; r < 2; r *= 1.23) {
      double x = r / sqrt(3.0);
      tfmm_acc_f32 a = tfmm_soft_pair_f32(&k32, 0, 0, 0, (float)x, (float)x,
                                          (float)x, 2.0f, 0);
      tfmm_acc_f64 b = tfmm_soft_pair_f64(&k64, 0, 0, 0, x, x, x, 2.0, 0);
      cr_assert_float_eq(a.x, b.x, 2e-6 * fabs(b.x), "r = %g", r);
      cr_assert_float_eq(a.w, b.w, 2e-6 * fabs(b.w), "r = %g", r);
    }
    /* The self pair contributes nothing; two distinct bodies at one point
     * feel no force and the kernel's finite depth. */
    tfmm_acc_f32 self = tfmm_soft_pair_f32(&k32, 1, 2, 3, 1, 2, 3, 1, 1);
    cr_assert(self.x == 0 && self.w == 0);
    tfmm_acc_f32 same = tfmm_soft_pair_f32(&k32, 1, 2, 3, 1, 2, 3, 1, 0);
    cr_assert(same.x == 0 && isfinite(same.w) && same.w < 0);
  }
}

Test(softening, plummer_separation_bounds_the_force_difference) {
  const double eps = 0.01;
  for (double delta = 1e-8; delta < 0.5; delta *= 10) {
    double s = tfmm_plummer_separation(eps, delta);
    cr_assert(s > eps);
    /* At s the softened force is (1 - delta) of Newton's; beyond, closer. */
    for (double f = 1; f < 100; f *= 3.1) {
      double r = s * f, soft = pull64(eps, 0, r).x * r * r;
      cr_assert(1 - soft <= delta + 1e-14, "delta %g r %g: %g", delta, r,
                1 - soft);
      if (f == 1)
        cr_assert_float_eq(1 - soft, delta, 1e-6 * delta + 1e-14);
    }
  }
  cr_assert_eq(tfmm_plummer_separation(0, 1e-3), 0);
}
