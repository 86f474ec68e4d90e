/* Solver handles whose evaluations a layer above makes (solver_over.h). */
#include "solver_over.h"

#include "solver_handle.h"

#include <stdlib.h>

tfmm_status tfmm_solver_create_over(tfmm_solver **out, const tfmm_config *cfg,
                                    const tfmm_solver_over *ops, void *ctx) {
  tfmm_solver *s = calloc(1, sizeof *s);
  *out = s;
  if (s == NULL) {
    ops->destroy(ctx);
    return TFMM_ERR_NO_MEMORY;
  }
  s->over = ops;
  s->over_ctx = ctx;
  if (cfg == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "configuration is NULL");
  s->cfg = *cfg;
  return ops->open(ctx, &s->cfg, &s->device, &s->err);
}

void *tfmm_solver_over_of(const tfmm_solver *s, const tfmm_solver_over *ops) {
  return s != NULL && s->over == ops ? s->over_ctx : NULL;
}
