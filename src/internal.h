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

/* The error criterion (TFMM_MAC_ERROR) of s's next evaluations: |a|_A
 * from acc, the bodies' accelerations at their previous evaluation (3n,
 * input order, the caller's units with G; a device array when on_device,
 * for the device entry points, else a host one for the host's), the least
 * |a| of each cell's bodies (accel_estimate.h, tfmm_accel_prior); NULL:
 * the estimate, as for any caller but the simulation, which passes its
 * state's forces (src/sim/sim_step.c). acc may be the very array the
 * evaluation writes its results into: it is read before. Used by an
 * evaluation on one process with the criterion error; the other paths
 * (over several processes, host bodies under the gpu schedule) keep the
 * estimate. */
void tfmm_solver_set_prior_accel(tfmm_solver *s, const double *acc,
                                 int on_device);

/* Whether s's next evaluations, device bodies under the gpu schedule, are
 * of the bodies of the last one, moved (the same bodies in the same
 * slots): their tree is then kept and refit while that pays
 * (pipeline/tree_life.h). A simulation on one process says so
 * (src/sim/sim_step.c). Forces are as accurate either way. */
void tfmm_solver_keep_tree(tfmm_solver *s, int on);

/* The next evaluation builds its tree afresh, as a solver's first does:
 * a simulation calls it at each state it saves, so that a restart from
 * that state repeats the run that saved it bit for bit. */
void tfmm_solver_rebuild_tree(tfmm_solver *s);

/* The most entries a list of the gpu schedule's traversal may hold (0:
 * 2^31 - 1, the default): past it an evaluation raises its leaf size
 * (src/solver_device.c). For tests, which reach the limit at small N. */
void tfmm_solver_set_list_cap(tfmm_solver *s, int64_t cap);

/* Fixes the setting of s's next evaluations, as if its configuration had
 * given theta, order and (under the error criterion) mac_epsilon: its
 * planner then chooses nothing (tfmm_planner_active) and each evaluation
 * resolves that setting as one process resolves a given one
 * (tfmm_accuracy_resolve). The domain (src/domain/evaluate.c) calls it
 * before each evaluation of its rank's solver with the setting its own
 * planner chose over the ranks, so that the rank's near and far fields and
 * the multipoles it sends and receives take one setting. */
void tfmm_solver_set_setting(tfmm_solver *s, double theta, int order,
                             double mac_epsilon);

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
