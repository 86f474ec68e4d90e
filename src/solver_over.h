/* A solver handle whose evaluations a layer above the solver makes: the
 * domain layer (src/domain/) gives tfmm_solver_create_mpi's caller such a
 * handle, so that the one public type tfmm_solver and its entry points
 * serve a solver over several processes too. The handle holds a table of
 * the layer's calls and the layer's state, and hands the entry points over
 * by that table (dispatch by data): the solver includes and calls nothing
 * of the layer above it. The layer evaluates with solvers of its own (a
 * plain tfmm_solver per rank), through the public entry points. */
#ifndef TFMM_SOLVER_OVER_H
#define TFMM_SOLVER_OVER_H

#include "internal.h"

#include <stddef.h>

typedef struct tfmm_solver_over {
  /* Makes ctx ready for cfg (not yet checked: it checks it), the device
   * its evaluations use into *device. */
  tfmm_status (*open)(void *ctx, const tfmm_config *cfg, tfmm_device *device,
                      tfmm_error *err);
  /* tfmm_solver_compute_active (active NULL: tfmm_solver_compute): the
   * statistics into *stats and *dist. */
  tfmm_status (*compute)(void *ctx, size_t n, const double *pos,
                         const double *mass, const unsigned char *active,
                         double *acc, double *pot, tfmm_stats *stats,
                         tfmm_dist_stats *dist, tfmm_error *err);
  /* The layer's planner state (the domain's, chosen over the ranks), which
   * tfmm_solver_choice reads and tfmm_solver_set_choice writes in place of
   * the handle's own: a checkpoint keeps the choice that the evaluations
   * use. */
  tfmm_choice *(*choice)(void *ctx);
  /* tfmm_solver_ranks and tfmm_solver_rank. */
  int (*ranks)(const void *ctx);
  int (*rank)(const void *ctx);
  /* Frees ctx (tfmm_solver_destroy). */
  void (*destroy)(void *ctx);
} tfmm_solver_over;

/* A handle over ctx: cfg kept, then ops->open. From this call on ctx is
 * the handle's (ops->destroy frees it with the handle, or here when no
 * handle can be made). On failure *out is the handle with the message, as
 * tfmm_solver_create leaves it, or NULL (no memory). */
tfmm_status tfmm_solver_create_over(tfmm_solver **out, const tfmm_config *cfg,
                                    const tfmm_solver_over *ops, void *ctx);

/* The ctx of a handle made over ops; NULL for any other handle. */
void *tfmm_solver_over_of(const tfmm_solver *s, const tfmm_solver_over *ops);

#endif
