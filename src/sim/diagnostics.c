/* Conserved quantities of a system: mass, energies, momenta, centre of
 * mass. Each sum runs over fixed blocks of bodies with Neumaier's
 * compensation, and the blocks' sums are added in block order, so the
 * result is the same whatever the thread count. */
#include "tilefmm.h"

#include "team.h"

#include "diagnostics_terms.h"
#include "ksum.h"

#include <math.h>
#include <stdlib.h>

/* Bodies per block: the unit of parallel work and of the fixed order. */
#define BLOCK 4096

enum { S_COUNT = TFMM_DIAG_SUMS };

static void block_sums(size_t begin, size_t end, const double *pos,
                       const double *vel, const double *mass, const double *pot,
                       tfmm_ksum *s) {
  for (int q = 0; q < S_COUNT; q++)
    s[q] = (tfmm_ksum){0.0, 0.0};
  for (size_t i = begin; i < end; i++) {
    double t[S_COUNT];
    tfmm_diagnostics_terms(mass[i], pos + 3 * i, vel + 3 * i, pot[i], t);
    for (int q = 0; q < S_COUNT; q++)
      tfmm_ksum_add(&s[q], t[q]);
  }
}

tfmm_status tfmm_diagnostics_totals(size_t n, const double *pos,
                                    const double *vel, const double *mass,
                                    const double *pot, double *total) {
  for (int q = 0; q < S_COUNT; q++)
    total[q] = 0.0;
  if (n == 0)
    return TFMM_OK;
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
  for (int q = 0; q < S_COUNT; q++) {
    tfmm_ksum k = {0.0, 0.0};
    for (size_t b = 0; b < blocks; b++) {
      tfmm_ksum_add(&k, part[b * S_COUNT + q].sum);
      tfmm_ksum_add(&k, part[b * S_COUNT + q].comp);
    }
    total[q] = tfmm_ksum_value(&k);
  }
  free(part);
  return TFMM_OK;
}

tfmm_status tfmm_diagnostics_compute(size_t n, const double *pos,
                                     const double *vel, const double *mass,
                                     const double *pot, tfmm_diagnostics *out) {
  if (n == 0 || pos == NULL || vel == NULL || mass == NULL || pot == NULL ||
      out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  double total[S_COUNT];
  const tfmm_status st = tfmm_diagnostics_totals(n, pos, vel, mass, pot, total);
  if (st == TFMM_OK)
    tfmm_diagnostics_finish(total, out);
  return st;
}
