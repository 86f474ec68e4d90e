/* Hernquist-sphere initial conditions: Hernquist (1990), ApJ 356, 359
 * (hereafter H90), in N-body units (G = M = 1).
 *
 * The model: density M a / (2 pi r (r + a)^3), cumulative mass
 * M r^2 / (r + a)^2 (H90 eq. 3), potential -G M / (r + a) (eq. 2) and
 * total energy -G M^2 / (12 a) (eq. 14), so a = 1/3 gives E = -1/4.
 *
 * Bit reproducibility: only +, -, *, / and sqrt (IEEE 754 rounds them
 * exactly); the arcsine of the distribution function is a series written
 * here, not libm's asin, whose last bits differ between C libraries; the
 * file is compiled with -ffp-contract=off (no FMA contraction). */
#include "ic_common.h"

#include <math.h>
#include <stdint.h>

/* The scale length a: E = -1/(12 a) = -1/4 (H90 eq. 14). */
static const double scale = 1.0 / 3.0;

/* The sphere is cut at the radius enclosing this fraction of the mass:
 * s = r / (r + a) = sqrt(0.999), r = 1999 a = 666. The velocities are
 * drawn from the full model's distribution function and the analytic
 * scaling is kept; the sample's total energy then lies ~0.3% below -1/4
 * (its mass, all 1, sits in the 0.999 of the model's, so |W| grows by
 * 1/0.999^2 and K by 1/0.999). */
static const double mass_cut = 0.999;

/* arcsin(x) for 0 <= x <= 1/2 by its Taylor series
 * sum_k (2k)! / (4^k k!^2 (2k + 1)) x^(2k+1) (Abramowitz & Stegun 4.4.40),
 * summed until a term no longer changes the sum: successive terms shrink
 * by at least x^2 <= 1/4, so ~27 terms reach double precision. */
static double asin_series(double x) {
  const double x2 = x * x;
  double power = x; /* (2k)! / (4^k k!^2) x^(2k+1) */
  double sum = x;
  for (int k = 0; k < 60; k++) {
    power *= x2 * (2.0 * k + 1.0) / (2.0 * k + 2.0);
    const double next = sum + power / (2.0 * k + 3.0);
    if (next == sum)
      break;
    sum = next;
  }
  return sum;
}

/* arcsin(x) for 0 <= x <= 1 from + - * / and sqrt only (deterministic):
 * the series above for x <= 1/2, else the half-angle identity
 * arcsin x = pi/2 - 2 arcsin sqrt((1 - x) / 2), whose argument is <= 1/2. */
static double asin_det(double x) {
  if (x <= 0.5)
    return asin_series(x);
  return 0.5 * TFMM_IC_PI - 2.0 * asin_series(sqrt(0.5 * (1.0 - x)));
}

/* The bracket of H90 eq. 17,
 * B(q) = 3 arcsin q + q (1 - q^2)^(1/2) (1 - 2 q^2) (8 q^4 - 8 q^2 - 3),
 * whose terms cancel to O(q^5) for small q: there its Taylor series
 * (to q^21; the next term is < 1e-21 of the sum for q < 0.1). */
static double df_bracket(double q) {
  const double q2 = q * q;
  if (q < 0.1) {
    static const double c[] = {128.0 / 5.0, -192.0 / 7.0, 16.0 / 3.0,
                               8.0 / 11.0,  3.0 / 13.0,   1.0 / 10.0,
                               7.0 / 136.0, 9.0 / 304.0,  33.0 / 1792.0};
    double p = 0.0;
    for (int k = 8; k >= 0; k--)
      p = p * q2 + c[k];
    return p * q2 * q2 * q;
  }
  return 3.0 * asin_det(q) + q * sqrt(1.0 - q2) * (1.0 - 2.0 * q2) *
                                 (8.0 * q2 * q2 - 8.0 * q2 - 3.0);
}

/* The isotropic distribution function of H90 eq. 17 up to its constant
 * factor, f ~ B(q) / (1 - q^2)^(5/2), as a function of q and of
 * w = 1 - q^2 (passed apart so that it keeps its digits when small), with
 * q^2 = a (-E) / (G M) the binding energy in units of G M / a. */
static double df_shape(double q, double w) {
  return df_bracket(q) / (w * w * sqrt(w));
}

/* s = r / (r + a): M(<r) = s^2 (H90 eq. 3), so s = sqrt(X) for a uniform
 * mass fraction X, drawn below the cut. */
static double sample_s(tfmm_rng *rng) {
  for (;;) {
    const double X = tfmm_rng_uniform26(rng);
    if (X <= mass_cut)
      return sqrt(X);
  }
}

/* The speed at the radius of s as a fraction x of the escape speed
 * sqrt(2 G M / (r + a)), by von Neumann rejection from the density
 * x^2 f(E). With E = -(G M / (r + a)) (1 - x^2) and a / (r + a) = 1 - s,
 * q^2 = (1 - s)(1 - x^2) and 1 - q^2 = s + (1 - s) x^2. The Taylor series
 * of f(q) / q^5 has only positive coefficients (128/5, 256/7, 1024/21,
 * ...), so f(q) / q^5 grows with q and, q_0 being q at x = 0,
 * x^2 f(q) <= x^2 (q / q_0)^5 f(q_0) = x^2 (1 - x^2)^(5/2) f(q_0)
 * <= (2/7) (5/7)^(5/2) f(q_0) = 0.12320 f(q_0): the bound used (mean
 * acceptance ~1/2 far out, ~s near the centre). */
static double sample_escape_fraction(tfmm_rng *rng, double s) {
  const double bound = 0.1233 * df_shape(sqrt(1.0 - s), s);
  for (;;) {
    const double x = tfmm_rng_uniform26(rng);
    const double y = tfmm_rng_uniform26(rng);
    const double x2 = x * x;
    const double q = sqrt((1.0 - s) * (1.0 - x2));
    if (y * bound < x2 * df_shape(q, s + (1.0 - s) * x2))
      return x;
  }
}

/* Draws one body of the a = 1/3 model. */
static void sample_body(tfmm_rng *rng, double pos[3], double vel[3]) {
  const double s = sample_s(rng);
  const double r = scale * s / (1.0 - s);
  tfmm_ic_direction(rng, r, pos);
  const double v_escape = sqrt(2.0 / (r + scale));
  tfmm_ic_direction(rng, sample_escape_fraction(rng, s) * v_escape, vel);
}

tfmm_status tfmm_ic_hernquist(size_t n, uint64_t seed, double *pos, double *vel,
                              double *mass) {
  if (!tfmm_ic_args_ok(n, 1, pos, vel, mass))
    return TFMM_ERR_INVALID_ARGUMENT;

  tfmm_rng rng;
  tfmm_rng_seed(&rng, seed);
  for (size_t i = 0; i < n; i++) {
    sample_body(&rng, pos + 3 * i, vel + 3 * i);
    mass[i] = 1.0 / (double)n;
  }
  tfmm_ic_remove_mean(n, pos);
  tfmm_ic_remove_mean(n, vel);
  return TFMM_OK;
}
