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
  /* One parallel pass over the bodies: the box's corners, the heaviest. */
  double x0 = pos[0], y0 = pos[1], z0 = pos[2], x1 = x0, y1 = y0, z1 = z0;
  double heaviest = 0;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for num_threads(team) reduction(min                       \
                                                     : x0, y0, z0)             \
    reduction(max                                                              \
              : x1, y1, z1, heaviest)
  for (size_t i = 0; i < n; i++) {
    const double *x = pos + 3 * i;
    x0 = x[0] < x0 ? x[0] : x0;
    y0 = x[1] < y0 ? x[1] : y0;
    z0 = x[2] < z0 ? x[2] : z0;
    x1 = x[0] > x1 ? x[0] : x1;
    y1 = x[1] > y1 ? x[1] : y1;
    z1 = x[2] > z1 ? x[2] : z1;
    heaviest = mass[i] > heaviest ? mass[i] : heaviest;
  }
  const double lo[3] = {x0, y0, z0}, hi[3] = {x1, y1, z1};
  return tfmm_units_from_bounds(lo, hi, heaviest, box_size);
}

tfmm_units tfmm_units_from_bounds(const double lo[3], const double hi[3],
                                  double heaviest, double box_size) {
  double half_side = 0, reach = 0;
  for (int d = 0; d < 3; d++) {
    /* Halves first: hi - lo itself may overflow. */
    double h = 0.5 * hi[d] - 0.5 * lo[d];
    half_side = h > half_side ? h : half_side;
    reach = fmax(reach, fmax(fabs(lo[d]), fabs(hi[d])));
  }
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
