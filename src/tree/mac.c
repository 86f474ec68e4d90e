#include "tree/mac.h"

#include "team.h"

#include <math.h>
#include <stdlib.h>

/* Largest theta the mass criterion gives: the expansions converge for any
 * theta < 1, but slowly near it. */
static const double THETA_CAP = 0.95;

static double lhs(double theta, int p) {
  return (p + 2) * log(theta) - 2 * log(1 - theta);
}

static double theta_of_mass(double theta0, int p, double mass_ratio) {
  double rhs = lhs(theta0, p) - log(mass_ratio) / 3;
  if (lhs(THETA_CAP, p) <= rhs)
    return THETA_CAP;
  double x = theta0; /* lhs is increasing: Newton from below converges */
  for (int k = 0; k < 30; k++) {
    double f = lhs(x, p) - rhs, df = (p + 2) / x + 2 / (1 - x);
    double next = x - f / df;
    next = next < theta0 ? theta0 : next > THETA_CAP ? THETA_CAP : next;
    if (fabs(next - x) < 1e-12)
      return next;
    x = next;
  }
  return x;
}

double *tfmm_mac_mass_thetas(const tfmm_octree *t, double theta0, int p) {
  double *th = malloc((size_t)(t->ncells > 0 ? t->ncells : 1) * sizeof *th);
  if (th == NULL)
    return NULL;
  const double total = t->cells[0].mass;
  if (!(theta0 > 0 && theta0 < THETA_CAP)) {
    for (int64_t c = 0; c < t->ncells; c++)
      th[c] = theta0;
    return th;
  }
  const int team = tfmm_team(t->ncells, TFMM_GRAIN_CELLS);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t c = 0; c < t->ncells; c++)
    th[c] = theta_of_mass(theta0, p, t->cells[c].mass / total);
  return th;
}
