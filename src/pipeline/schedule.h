/* A schedule: the stages of one evaluation as data, run in order.
 *
 * `hybrid` is the seed's design: the tree, the lists and the far field on
 * the CPU (OpenMP), the near field on the GPU when there is one, enqueued
 * before the far field and waited for after it, so that the two overlap;
 * without a GPU the near field runs on the CPU after the far field.
 * `hybrid` with the GPU tree builds the tree and its multipoles on the GPU
 * instead (tfmm_config.tree_device), the rest as before; with the GPU far
 * field (tfmm_config.far_device) the far field runs there too, from the
 * CPU's lists.
 * `gpu` runs every stage on the GPU, one stream, the lists included
 * (kernels/schedule/pipeline_gpu.h). */
#ifndef TFMM_SCHEDULE_H
#define TFMM_SCHEDULE_H

#include "pipeline/eval.h"

typedef struct tfmm_stage {
  const char *name;
  tfmm_status (*run)(tfmm_eval *e);
  int far; /* 1: part of the far field (skipped with near_only, timed as
              the far field's span) */
} tfmm_stage;

typedef struct tfmm_schedule {
  const char *name;
  const tfmm_stage *stages;
  int count;
} tfmm_schedule;

extern const tfmm_schedule TFMM_STAGES_HYBRID;
extern const tfmm_schedule TFMM_STAGES_HYBRID_GPU_TREE;
extern const tfmm_schedule TFMM_STAGES_HYBRID_GPU_FAR;
extern const tfmm_schedule TFMM_STAGES_GPU;

/* Runs every stage of s on e in order; stops at the first failure. */
tfmm_status tfmm_schedule_run(const tfmm_schedule *s, tfmm_eval *e);

#endif
