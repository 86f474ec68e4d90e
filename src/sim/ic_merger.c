/* A merger of two Plummer spheres in N-body units (G = 1, total mass 1).
 *
 * Each sphere is tfmm_ic_plummer's model (scale length 3 pi / 16) holding
 * the mass m_k = n_k / n of its n_k bodies (1/2 each for an even n). A
 * model of mass m keeps its equilibrium when its velocities are scaled by
 * sqrt(m) (v^2 ~ G m / r); its energy is then -m^2 / 4.
 *
 * The centres follow the Kepler orbit of two point masses m_1 + m_2 = 1
 * with apocentre r_a = 4 and pericentre r_p = 1/2: semi-major axis
 * a = (r_a + r_p) / 2 = 9/4, and at apocentre the relative speed is
 * v_a = sqrt(G M (2 / r_a - 1 / a)) = sqrt(1/18) (vis-viva), perpendicular
 * to the separation. The orbit starts at apocentre in the x-y plane, sphere
 * 1 on +x moving along +y (angular momentum along +z); pericentre comes
 * half a period later, pi sqrt(a^3 / (G M)) = 27 pi / 8 = 10.6.
 *
 * Bit reproducibility: only +, -, *, / and sqrt, compiled with
 * -ffp-contract=off. */
#include "ic_common.h"

#include <math.h>
#include <stdint.h>

static const double apocentre = 4.0;
static const double pericentre = 0.5;

tfmm_status tfmm_ic_merger(size_t n, uint64_t seed, double *pos, double *vel,
                           double *mass) {
  if (!tfmm_ic_args_ok(n, 2, pos, vel, mass))
    return TFMM_ERR_INVALID_ARGUMENT;

  /* The first sphere holds the odd body. */
  const size_t count[2] = {n - n / 2, n / 2};
  const double m[2] = {(double)count[0] / (double)n,
                       (double)count[1] / (double)n};

  /* Relative orbit of the centres (G M = 1), each centre then placed so
   * that the centre of mass is at the origin: x_1 = m_2 r, x_2 = -m_1 r. */
  const double semi_major = 0.5 * (apocentre + pericentre);
  const double v_apo = sqrt(2.0 / apocentre - 1.0 / semi_major);
  const double centre[2][3] = {{m[1] * apocentre, 0.0, 0.0},
                               {-m[0] * apocentre, 0.0, 0.0}};
  const double drift[2][3] = {{0.0, m[1] * v_apo, 0.0},
                              {0.0, -m[0] * v_apo, 0.0}};

  /* One stream per sphere, each seeded from the seed through splitmix64,
   * so that the spheres are independent. */
  uint64_t mix = seed;
  size_t first = 0;
  for (int k = 0; k < 2; k++) {
    tfmm_rng rng;
    tfmm_rng_seed(&rng, tfmm_rng_splitmix64(&mix));
    double *p = pos + 3 * first, *v = vel + 3 * first;
    tfmm_ic_plummer_sample(count[k], &rng, p, v);
    const double speed_scale = sqrt(m[k]);
    for (size_t i = 0; i < count[k]; i++) {
      for (int d = 0; d < 3; d++) {
        p[3 * i + d] += centre[k][d];
        v[3 * i + d] = v[3 * i + d] * speed_scale + drift[k][d];
      }
    }
    first += count[k];
  }
  for (size_t i = 0; i < n; i++)
    mass[i] = 1.0 / (double)n;

  /* Rounding leaves the centre of mass off the origin by ~1e-16: remove
   * it, so that it is at rest at the origin as the contract says. */
  tfmm_ic_remove_mean(n, pos);
  tfmm_ic_remove_mean(n, vel);
  return TFMM_OK;
}
