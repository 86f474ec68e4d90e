/* Plummer-sphere initial conditions after Aarseth, Henon & Wielen (1974),
 * A&A 37, 183 (hereafter AHW), in N-body units.
 *
 * Bit reproducibility: every step uses only +, -, *, / and sqrt, which IEEE
 * 754 rounds exactly; no libm transcendental (pow, cbrt, sin, cos), whose
 * last bits differ between C libraries. Every product that feeds a sum is
 * exact (26-bit uniforms, see rng.h), so the result is the same whether or
 * not the compiler fuses a * b + c into an FMA (-ffp-contract, -march). */
#include "ic_common.h"

#include <math.h>
#include <stdint.h>

/* Plummer's model with G = M = a = 1 has total energy E = -3 pi / 64
 * (AHW section 2). Scaling lengths by L and velocities by 1/sqrt(L) keeps
 * the model in equilibrium with G = M = 1 and divides E by L, so
 * L = 3 pi / 16 gives E = -1/4: the scale length in N-body units. */
static const double length_unit = 3.0 * TFMM_IC_PI / 16.0;

/* AHW cut the sphere at the radius enclosing this fraction of the mass, so
 * that no body lands at an unbounded distance (r < 23 length units here).
 * The energy of the cut sphere differs from the full model's by < 0.1%; the
 * analytic scaling above is kept. */
static const double mass_cut = 0.999;

/* The radius comes from the inverted cumulative mass
 * M(r) = r^3 / (1 + r^2)^(3/2) (AHW eq. A2): M = X gives
 * r = (X^(-2/3) - 1)^(-1/2) = u / sqrt(1 - u^2) with u = X^(1/3). The
 * largest of three uniforms has the law of X^(1/3) (its cumulative
 * distribution is u^3), which avoids cbrt. Returns u, below the cut. */
static double sample_mass_cube_root(tfmm_rng *rng) {
  for (;;) {
    double u = tfmm_rng_uniform26(rng);
    u = fmax(u, tfmm_rng_uniform26(rng));
    u = fmax(u, tfmm_rng_uniform26(rng));
    if (u * u * u <= mass_cut)
      return u;
  }
}

/* Speed as a fraction q of the local escape speed, from the distribution
 * g(q) = q^2 (1 - q^2)^(7/2) by von Neumann rejection (AHW eq. A4-A5):
 * g peaks at 0.092 (q^2 = 2/9), so 0.1 bounds it. */
static double sample_escape_fraction(tfmm_rng *rng) {
  for (;;) {
    const double q = tfmm_rng_uniform26(rng);
    const double y = 0.1 * tfmm_rng_uniform26(rng);
    const double w = 1.0 - q * q;
    if (y < q * q * w * w * w * sqrt(w))
      return q;
  }
}

/* Draws one body in Plummer units (G = M = a = 1). */
static void sample_body(tfmm_rng *rng, double pos[3], double vel[3]) {
  const double u = sample_mass_cube_root(rng);
  const double w = 1.0 - u * u; /* = 1 / (1 + r^2) */
  tfmm_ic_direction(rng, u / sqrt(w), pos);
  /* Escape speed sqrt(2) (1 + r^2)^(-1/4) (AHW eq. A4). */
  const double v_escape = sqrt(2.0 * sqrt(w));
  tfmm_ic_direction(rng, sample_escape_fraction(rng) * v_escape, vel);
}

void tfmm_ic_plummer_sample(size_t n, tfmm_rng *rng, double *pos, double *vel) {
  for (size_t i = 0; i < n; i++)
    sample_body(rng, pos + 3 * i, vel + 3 * i);

  tfmm_ic_remove_mean(n, pos);
  tfmm_ic_remove_mean(n, vel);

  const double velocity_unit = 1.0 / sqrt(length_unit);
  for (size_t i = 0; i < 3 * n; i++) {
    pos[i] *= length_unit;
    vel[i] *= velocity_unit;
  }
}

tfmm_status tfmm_ic_plummer(size_t n, uint64_t seed, double *pos, double *vel,
                            double *mass) {
  if (!tfmm_ic_args_ok(n, 1, pos, vel, mass))
    return TFMM_ERR_INVALID_ARGUMENT;

  tfmm_rng rng;
  tfmm_rng_seed(&rng, seed);
  tfmm_ic_plummer_sample(n, &rng, pos, vel);
  for (size_t i = 0; i < n; i++)
    mass[i] = 1.0 / (double)n;
  return TFMM_OK;
}
