/* Internal declarations shared by the library's C and CUDA sources. */
#ifndef TFMM_INTERNAL_H
#define TFMM_INTERNAL_H

#include "tilefmm.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/pair.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Checks every field of a configuration; the message names the field. */
tfmm_status tfmm_config_check(const tfmm_config *cfg, tfmm_error *err);

/* The device context of a solver that runs on the GPU (its streams and
 * arena: kernels/context/arena.h), for the simulation's state; NULL for
 * one on the CPU. The solver owns it. */
typedef struct tfmm_gpu tfmm_gpu;
tfmm_gpu *tfmm_solver_gpu_context(const tfmm_solver *s);

#ifdef __cplusplus
}
#endif

/* Whether a softening length acts as none: its square underflows in the
 * precision of the sums (single: below FLT_MIN, which the GPU flushes to
 * zero). Then coincident bodies have an infinite force, as with eps = 0,
 * and are refused the same way. */
static inline int tfmm_eps_vanishes(double eps, int single) {
  const double e2 = eps * eps;
  return e2 == 0 || (single && e2 < 1.1754943508222875e-38);
}

#endif
