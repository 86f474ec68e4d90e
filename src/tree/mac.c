#include "tree/mac.h"

#include "team.h"

#include <math.h>
#include <stdlib.h>

double *tfmm_mac_mass_thetas(const tfmm_octree *t, double theta0, int p) {
  double *th = malloc((size_t)(t->ncells > 0 ? t->ncells : 1) * sizeof *th);
  if (th == NULL)
    return NULL;
  const double total = t->cells[0].mass;
  const int team = tfmm_team(t->ncells, TFMM_GRAIN_CELLS);
#pragma omp parallel for schedule(static) num_threads(team)
  for (int64_t c = 0; c < t->ncells; c++)
    th[c] = tfmm_mac_mass_theta(theta0, p, t->cells[c].mass / total);
  return th;
}
