/* The diagnostics' sums (tfmm_diagnostics), written once for the CPU
 * (src/sim/diagnostics.c) and the GPU (kernels/sim/sim_gpu_diag.cu): the 12
 * terms of one body, and the quantities formed from the 12 totals. How
 * the terms are summed is each side's own (compensated both). */
#ifndef TFMM_DIAGNOSTICS_TERMS_H
#define TFMM_DIAGNOSTICS_TERMS_H

#include "tilefmm.h"

#include <math.h>

#ifdef __CUDACC__
#define TFMM_DIAG_FN static inline __host__ __device__
#else
#define TFMM_DIAG_FN static inline
#endif

/* The sums: mass, kinetic and potential energy, momentum (3), angular
 * momentum (3), mass times position (3). */
enum {
  TFMM_DIAG_MASS,
  TFMM_DIAG_KIN,
  TFMM_DIAG_POT,
  TFMM_DIAG_P = 3,
  TFMM_DIAG_L = 6,
  TFMM_DIAG_X = 9,
  TFMM_DIAG_SUMS = 12
};

#ifndef __CUDACC__
#include <stddef.h>
/* The 12 totals of n >= 0 bodies (zeros for none), summed as
 * tfmm_diagnostics_compute sums them (src/sim/diagnostics.c): what ranks
 * of several processes add up before tfmm_diagnostics_finish. */
tfmm_status tfmm_diagnostics_totals(size_t n, const double *pos,
                                    const double *vel, const double *mass,
                                    const double *pot, double *total);
#endif

/* Body (m, x, v) with potential phi: its term of each sum. */
TFMM_DIAG_FN void tfmm_diagnostics_terms(double m, const double *x,
                                         const double *v, double phi,
                                         double *t) {
  t[TFMM_DIAG_MASS] = m;
  t[TFMM_DIAG_KIN] = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  t[TFMM_DIAG_POT] = 0.5 * m * phi;
  for (int d = 0; d < 3; d++) {
    t[TFMM_DIAG_P + d] = m * v[d];
    t[TFMM_DIAG_X + d] = m * x[d];
  }
  t[TFMM_DIAG_L + 0] = m * (x[1] * v[2] - x[2] * v[1]);
  t[TFMM_DIAG_L + 1] = m * (x[2] * v[0] - x[0] * v[2]);
  t[TFMM_DIAG_L + 2] = m * (x[0] * v[1] - x[1] * v[0]);
}

/* The diagnostics from the 12 totals. */
TFMM_DIAG_FN void tfmm_diagnostics_finish(const double *total,
                                          tfmm_diagnostics *out) {
  out->mass = total[TFMM_DIAG_MASS];
  out->kinetic = total[TFMM_DIAG_KIN];
  out->potential = total[TFMM_DIAG_POT];
  out->total = out->kinetic + out->potential;
  out->virial_ratio =
      out->potential != 0.0 ? 2.0 * out->kinetic / fabs(out->potential) : 0.0;
  for (int d = 0; d < 3; d++) {
    out->momentum[d] = total[TFMM_DIAG_P + d];
    out->angular_momentum[d] = total[TFMM_DIAG_L + d];
    out->centre_of_mass[d] = total[TFMM_DIAG_X + d] / out->mass;
  }
}

#endif
