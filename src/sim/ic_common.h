/* Helpers shared by the initial-condition generators (src/sim/ic_*.c).
 *
 * Bit reproducibility: everything here uses only +, -, *, / and sqrt,
 * which IEEE 754 rounds exactly, and the generators' sources are compiled
 * with -ffp-contract=off (src/CMakeLists.txt), so that no compiler may fuse
 * a * b + c into an FMA: a seed gives the same bits on every machine. */
#ifndef TFMM_IC_COMMON_H
#define TFMM_IC_COMMON_H

#include "tilefmm.h"

#include "ksum.h"

#include "rng.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define TFMM_IC_PI 3.14159265358979323846

/* Whether the common arguments are valid: at least min_n bodies, few enough
 * that 3n doubles can be addressed, and no NULL array. */
static inline int tfmm_ic_args_ok(size_t n, size_t min_n, const double *pos,
                                  const double *vel, const double *mass) {
  return n >= min_n && n <= SIZE_MAX / (3 * sizeof(double)) && pos != NULL &&
         vel != NULL && mass != NULL;
}

/* Subtracts the mean of each component of n 3-vectors: with equal masses
 * this moves the centre of mass (or its velocity) to zero. */
static inline void tfmm_ic_remove_mean(size_t n, double *v) {
  for (int d = 0; d < 3; d++) {
    tfmm_ksum k = {0.0, 0.0};
    for (size_t i = 0; i < n; i++)
      tfmm_ksum_add(&k, v[3 * i + d]);
    const double mean = (k.sum + k.comp) / (double)n;
    for (size_t i = 0; i < n; i++)
      v[3 * i + d] -= mean;
  }
}

/* A point uniform on the sphere of radius len: Marsaglia (1972), Ann. Math.
 * Stat. 43, 645, which needs only a square root, unlike the
 * cos(theta), phi recipe. */
static inline void tfmm_ic_direction(tfmm_rng *rng, double len, double out[3]) {
  double x, y, s;
  do {
    x = 2.0 * tfmm_rng_uniform26(rng) - 1.0;
    y = 2.0 * tfmm_rng_uniform26(rng) - 1.0;
    s = x * x + y * y;
  } while (s >= 1.0);
  const double f = 2.0 * sqrt(1.0 - s);
  out[0] = len * f * x;
  out[1] = len * f * y;
  out[2] = len * (1.0 - 2.0 * s);
}

/* A point uniform in the unit ball, by rejection from the cube [-1, 1]^3
 * (acceptance pi / 6). */
static inline void tfmm_ic_in_ball(tfmm_rng *rng, double out[3]) {
  double s;
  do {
    for (int d = 0; d < 3; d++)
      out[d] = 2.0 * tfmm_rng_uniform26(rng) - 1.0;
    s = out[0] * out[0] + out[1] * out[1] + out[2] * out[2];
  } while (s > 1.0);
}

/* Plummer sphere of n bodies and total mass 1 in N-body units, built as
 * tfmm_ic_plummer does from rng's stream (masses not written): the
 * building block of tfmm_ic_plummer and tfmm_ic_merger. In ic_plummer.c;
 * hidden from the shared library's exports. */
void tfmm_ic_plummer_sample(size_t n, tfmm_rng *rng, double *pos, double *vel);

#endif
