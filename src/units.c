#include "units.h"

#include "team.h"

#include <math.h>

/* The exponent e of x = f 2^e with f in [0.5, 1); 0 for x = 0. */
static int exponent(double x) {
  int e = 0;
  frexp(x, &e);
  return x == 0 ? 0 : e;
}

tfmm_units tfmm_units_choose(size_t n, const double *pos, const double *mass,
                             double box_size) {
  double half_side = 0, reach = 0, heaviest = 0;
  for (int d = 0; d < 3; d++) {
    double lo = pos[d], hi = pos[d];
    for (size_t i = 1; i < n; i++) {
      double v = pos[3 * i + d];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    /* Halves first: hi - lo itself may overflow. */
    double h = 0.5 * hi - 0.5 * lo;
    half_side = h > half_side ? h : half_side;
    reach = fmax(reach, fmax(fabs(lo), fabs(hi)));
  }
  for (size_t i = 0; i < n; i++)
    heaviest = mass[i] > heaviest ? mass[i] : heaviest;
  tfmm_units u;
  /* 2^k >= the side: scaled, the system fits in [-1, 1]. */
  u.length_exp = box_size > 0    ? exponent(box_size)
                 : half_side > 0 ? exponent(half_side) + 1
                                 : exponent(reach);
  u.mass_exp = exponent(heaviest);
  return u;
}

void tfmm_units_scale(const tfmm_units *u, size_t n, const double *pos,
                      const double *mass, double *pos_out, double *mass_out) {
  const int k = u->length_exp, j = u->mass_exp;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++)
      pos_out[3 * i + d] = ldexp(pos[3 * i + d], -k);
    mass_out[i] = ldexp(mass[i], -j);
  }
}

void tfmm_units_unscale(const tfmm_units *u, double G, size_t n, double *acc,
                        double *pot) {
  const int a_exp = u->mass_exp - 2 * u->length_exp;
  const int p_exp = u->mass_exp - u->length_exp;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (size_t i = 0; i < n; i++) {
    for (int d = 0; d < 3; d++)
      acc[3 * i + d] = G * ldexp(acc[3 * i + d], a_exp);
    if (pot != NULL)
      pot[i] = G * ldexp(pot[i], p_exp);
  }
}
