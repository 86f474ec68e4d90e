/* One evaluation of a tree method as the stages see it: the inputs, the
 * settings resolved for it, the workspace it fills and the outputs. Each
 * stage (stages.h) reads and writes only this. */
#ifndef TFMM_EVAL_H
#define TFMM_EVAL_H

#include "accuracy.h"
#include "gpu.h"
#include "internal.h"
#include "p2p_gpu.h"
#include "pipeline/workspace.h"

typedef struct tfmm_eval {
  /* Given. */
  const tfmm_config *cfg;
  int leaf_size;
  tfmm_gpu *gpu; /* the near field's device, or NULL: the CPU's */
  size_t n;
  const double *pos, *mass; /* checked bodies, input order */
  double *acc, *pot;        /* outputs (pot may be NULL), input order */
  /* An evaluation at a subset of the bodies (tfmm_solver_compute_active):
   * n bytes in input order, nonzero for a target (a device array when
   * on_device), or NULL: every body. Only the targets' outputs are
   * written; the sources are all n bodies. */
  const unsigned char *active;
  tfmm_workspace *w;
  /* Bodies that live on the GPU (the gpu schedule only): pos, mass, acc
   * and pot are then device arrays, ready after `stream`; the results go
   * to the caller's units there (the host path does that in solver.c). */
  int on_device;
  int host_results; /* with on_device: acc and pot are host arrays all the
                       same (the results copied there once, in the
                       caller's units; tfmm_solver_compute's bodies) */
  void *stream;
  double caller_G;
  int acc_exp, pot_exp;
  tfmm_stats *stats;
  tfmm_error *err;
  /* The measurement asked for (pipeline/measure.h): the estimate's sample
   * size (0: none) and its seed. */
  size_t measure_k;
  uint64_t measure_seed;
  double measure_confidence; /* its bound's (0: TFMM_MEASURE_CONFIDENCE) */
  /* Set by the stages. */
  tfmm_resolved set;         /* theta, order, separation, precision */
  tfmm_p2p_gpu_run near;     /* the GPU near field in flight */
  const void *near_out;      /* its results once waited for, or NULL */
  double far_begin, far_end; /* the far field's span (tfmm_wtime) */
  double finish_begin;       /* when the gpu schedule's finish began */
  int counted;               /* the work counts are in stats already */
} tfmm_eval;

#endif
