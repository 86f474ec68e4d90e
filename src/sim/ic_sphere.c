/* Homogeneous spheres in N-body units (G = M = 1): a hot one in virial
 * equilibrium and the cold collapse. A homogeneous sphere of radius R has
 * potential energy W = -3 G M^2 / (5 R) (Binney & Tremaine 2008, eq.
 * 2.41), so E = -1/4 needs R = 6/5 with 2K = -W (virial theorem), or
 * R = 12/5 with K = 0.
 *
 * Bit reproducibility: only +, -, *, / and sqrt, compiled with
 * -ffp-contract=off. */
#include "ic_common.h"

#include <math.h>
#include <stdint.h>

/* W = -3 / (5 R) = -1/2 and K = 1/4: E = -1/4. */
static const double hot_radius = 6.0 / 5.0;
/* W = -3 / (5 R) = -1/4 and K = 0: E = -1/4. */
static const double cold_radius = 12.0 / 5.0;

/* A standard normal deviate, approximately: the sum of 12 uniforms minus 6
 * (the Irwin-Hall law, mean 0, variance 1, cut at +-6 sigma). It needs no
 * transcendental, and the sum is exact (26-bit uniforms). */
static double sample_normal(tfmm_rng *rng) {
  double sum = 0.0;
  for (int k = 0; k < 12; k++)
    sum += tfmm_rng_uniform26(rng);
  return sum - 6.0;
}

/* n positions uniform in the ball of radius R, then moved so that their
 * mean (the centre of mass: equal masses) is at the origin; masses 1/n. */
static void sample_ball(size_t n, double R, tfmm_rng *rng, double *pos,
                        double *mass) {
  for (size_t i = 0; i < n; i++) {
    tfmm_ic_in_ball(rng, pos + 3 * i);
    for (int d = 0; d < 3; d++)
      pos[3 * i + d] *= R;
    mass[i] = 1.0 / (double)n;
  }
  tfmm_ic_remove_mean(n, pos);
}

tfmm_status tfmm_ic_uniform(size_t n, uint64_t seed, double *pos, double *vel,
                            double *mass) {
  if (!tfmm_ic_args_ok(n, 1, pos, vel, mass))
    return TFMM_ERR_INVALID_ARGUMENT;

  tfmm_rng rng;
  tfmm_rng_seed(&rng, seed);
  sample_ball(n, hot_radius, &rng, pos, mass);
  for (size_t i = 0; i < 3 * n; i++)
    vel[i] = sample_normal(&rng);
  tfmm_ic_remove_mean(n, vel);

  /* Scale the drawn velocities so that K = sum v^2 / (2n) is exactly the
   * virial 1/4 = -W / 2 of the analytic sphere (isotropy is kept). */
  tfmm_ksum v2 = {0.0, 0.0};
  for (size_t i = 0; i < 3 * n; i++)
    tfmm_ksum_add(&v2, vel[i] * vel[i]);
  const double kinetic = 0.5 * (v2.sum + v2.comp) / (double)n;
  if (kinetic > 0.0) {
    const double f = sqrt(0.25 / kinetic);
    for (size_t i = 0; i < 3 * n; i++)
      vel[i] *= f;
  }
  return TFMM_OK;
}

tfmm_status tfmm_ic_cold(size_t n, uint64_t seed, double *pos, double *vel,
                         double *mass) {
  if (!tfmm_ic_args_ok(n, 1, pos, vel, mass))
    return TFMM_ERR_INVALID_ARGUMENT;

  tfmm_rng rng;
  tfmm_rng_seed(&rng, seed);
  sample_ball(n, cold_radius, &rng, pos, mass);
  for (size_t i = 0; i < 3 * n; i++)
    vel[i] = 0.0;
  return TFMM_OK;
}

tfmm_status tfmm_ic_scale(size_t n, double M, double R, double G, double *pos,
                          double *vel, double *mass) {
  if (!tfmm_ic_args_ok(n, 0, pos, vel, mass) || !(M > 0) || !(R > 0) ||
      !(G > 0) || !isfinite(M) || !isfinite(R) || !isfinite(G))
    return TFMM_ERR_INVALID_ARGUMENT;
  const double v = sqrt(G * M / R);
  for (size_t i = 0; i < n; i++) {
    mass[i] *= M;
    for (int d = 0; d < 3; d++) {
      pos[3 * i + d] *= R;
      vel[3 * i + d] *= v;
    }
  }
  return TFMM_OK;
}
