/* Conserved quantities of a system: mass, energies, momenta, centre of
 * mass. Each sum runs over fixed blocks of bodies with Neumaier's
 * compensation, and the blocks' sums are added in block order, so the
 * result is the same whatever the thread count. */
#include "tilefmm.h"

#include "team.h"

#include "ksum.h"

#include <math.h>
#include <stdlib.h>

/* Bodies per block: the unit of parallel work and of the fixed order. */
#define BLOCK 4096

enum { S_MASS, S_KIN, S_POT, S_P = 3, S_L = 6, S_X = 9, S_COUNT = 12 };

static void block_sums(size_t begin, size_t end, const double *pos,
                       const double *vel, const double *mass, const double *pot,
                       tfmm_ksum *s) {
  for (int q = 0; q < S_COUNT; q++)
    s[q] = (tfmm_ksum){0.0, 0.0};
  for (size_t i = begin; i < end; i++) {
    const double m = mass[i];
    const double *x = pos + 3 * i, *v = vel + 3 * i;
    tfmm_ksum_add(&s[S_MASS], m);
    tfmm_ksum_add(&s[S_KIN],
                  0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    tfmm_ksum_add(&s[S_POT], 0.5 * m * pot[i]);
    for (int d = 0; d < 3; d++) {
      tfmm_ksum_add(&s[S_P + d], m * v[d]);
      tfmm_ksum_add(&s[S_X + d], m * x[d]);
    }
    tfmm_ksum_add(&s[S_L + 0], m * (x[1] * v[2] - x[2] * v[1]));
    tfmm_ksum_add(&s[S_L + 1], m * (x[2] * v[0] - x[0] * v[2]));
    tfmm_ksum_add(&s[S_L + 2], m * (x[0] * v[1] - x[1] * v[0]));
  }
}

tfmm_status tfmm_diagnostics_compute(size_t n, const double *pos,
                                     const double *vel, const double *mass,
                                     const double *pot, tfmm_diagnostics *out) {
  if (n == 0 || pos == NULL || vel == NULL || mass == NULL || pot == NULL ||
      out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  const size_t blocks = (n + BLOCK - 1) / BLOCK;
  tfmm_ksum *part = malloc(blocks * S_COUNT * sizeof *part);
  if (part == NULL)
    return TFMM_ERR_NO_MEMORY;
  const int team = tfmm_team(n, TFMM_GRAIN_BODIES);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (ptrdiff_t b = 0; b < (ptrdiff_t)blocks; b++) {
    const size_t begin = (size_t)b * BLOCK;
    const size_t end = begin + BLOCK < n ? begin + BLOCK : n;
    block_sums(begin, end, pos, vel, mass, pot, part + (size_t)b * S_COUNT);
  }
  double total[S_COUNT];
  for (int q = 0; q < S_COUNT; q++) {
    tfmm_ksum k = {0.0, 0.0};
    for (size_t b = 0; b < blocks; b++) {
      tfmm_ksum_add(&k, part[b * S_COUNT + q].sum);
      tfmm_ksum_add(&k, part[b * S_COUNT + q].comp);
    }
    total[q] = tfmm_ksum_value(&k);
  }
  free(part);
  out->mass = total[S_MASS];
  out->kinetic = total[S_KIN];
  out->potential = total[S_POT];
  out->total = out->kinetic + out->potential;
  out->virial_ratio =
      out->potential != 0.0 ? 2.0 * out->kinetic / fabs(out->potential) : 0.0;
  for (int d = 0; d < 3; d++) {
    out->momentum[d] = total[S_P + d];
    out->angular_momentum[d] = total[S_L + d];
    out->centre_of_mass[d] = total[S_X + d] / out->mass;
  }
  return TFMM_OK;
}
