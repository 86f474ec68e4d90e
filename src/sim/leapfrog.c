/* The kick and the drift of the kick-drift-kick leapfrog: the symplectic,
 * time-reversible second-order scheme of Verlet (1967); see e.g. Springel
 * (2005), MNRAS 364, 1105, eqs. 27-28, for the KDK form used by GADGET.
 * Element-wise, so the bits do not depend on the thread count. */
#include "tilefmm.h"

#include "team.h"

#include <stddef.h>

void tfmm_leapfrog_kick(size_t n, double *vel, const double *acc, double h) {
  const ptrdiff_t m = (ptrdiff_t)(3 * n);
  const int team = tfmm_team(m, 3 * TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (ptrdiff_t k = 0; k < m; k++)
    vel[k] += h * acc[k];
}

void tfmm_leapfrog_drift(size_t n, double *pos, const double *vel, double h) {
  const ptrdiff_t m = (ptrdiff_t)(3 * n);
  const int team = tfmm_team(m, 3 * TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(static) num_threads(team)
  for (ptrdiff_t k = 0; k < m; k++)
    pos[k] += h * vel[k];
}
