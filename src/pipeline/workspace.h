/* What the tree methods keep between evaluations: the buffers of every
 * stage, grown when an evaluation needs more and reused otherwise, so that
 * a simulation step allocates nothing once N has settled. The tree and
 * the lists are rebuilt at each evaluation (their builders allocate); the
 * expansions, the far-field results and the CPU near field's are kept.
 * The GPU's memory is the device context's (the solver's tfmm_gpu, whose
 * arena keeps it between evaluations); the workspace holds the one GPU
 * tree of both the hybrid and the gpu schedule (gpu.base) and the gpu
 * schedule's state over that context. One workspace belongs to one solver
 * (tfmm_solver): no sharing between threads. */
#ifndef TFMM_WORKSPACE_H
#define TFMM_WORKSPACE_H

#include "pipeline/tree_life.h"
#include "pipeline_gpu.h"
#include "tree/lists.h"
#include "tree/octree.h"

#include <stddef.h>

/* A growable array of doubles. */
typedef struct tfmm_doubles {
  double *v;
  size_t cap;
} tfmm_doubles;

/* A growable array of int32. */
typedef struct tfmm_int32s {
  int32_t *v;
  size_t cap;
} tfmm_int32s;

typedef struct tfmm_workspace {
  tfmm_octree tree;
  tfmm_lists lists;
  tfmm_doubles theta_src;      /* per-cell theta of the mass criterion */
  tfmm_doubles accel;          /* per-cell |a| of the error criterion */
  tfmm_doubles M, L;           /* expansions, cells x tfmm_expansion_size(p) */
  tfmm_doubles far_phi, far_g; /* Phi and grad Phi, sorted order */
  tfmm_doubles near_a, near_p; /* the CPU near field's results */
  tfmm_int32s targets;         /* per cell: the targets it holds, for an
                                  evaluation at a subset (tree/targets.h) */
  tfmm_pipeline_gpu gpu;       /* the GPU tree (gpu.base: the hybrid
                                  schedule's too) and the gpu schedule */
  /* The next evaluation's measurement of its error (pipeline/measure.h):
   * the estimate's sample size (0: none) and seed, set by the solver. */
  size_t measure_k;
  uint64_t measure_seed;
  double measure_confidence; /* its bound's (0: TFMM_MEASURE_CONFIDENCE) */
  /* The next evaluation's error criterion (TFMM_MAC_ERROR): the bodies'
   * accelerations at their previous evaluation (3n, input order, the
   * caller's units; a device array under the gpu schedule, else a host
   * one) and the factor to internal units (mac_rule.h,
   * tfmm_mac_prior_accel), from which |a|_A is the least over each cell's
   * bodies; NULL: the estimate (accel_estimate.h). Set by the solver. */
  const double *prior_acc;
  double prior_scale;
  /* The gpu schedule's cap on a list's entries (0: 2^31 - 1, the index's
   * range; tfmm_traverse_gpu_params.list_cap); lower only in tests of the
   * leaf size raised past it (tfmm_solver_set_list_cap). */
  int64_t list_cap;
  /* The gpu schedule's kept tree (tree_life.h): whether the next
   * evaluation's bodies are the last one's moved (set by the solver,
   * tfmm_solver_keep_tree), and the tree's life so far. */
  int keep_tree;
  tfmm_tree_life tree_life;
} tfmm_workspace;

/* At least count doubles in d (contents not kept when it grows); 0, or -1
 * with d unchanged when out of memory. */
int tfmm_doubles_reserve(tfmm_doubles *d, size_t count);

/* The same for int32. */
int tfmm_int32s_reserve(tfmm_int32s *d, size_t count);

/* The tree and lists of the last evaluation released, the buffers kept. */
void tfmm_workspace_clear(tfmm_workspace *w);

/* Everything released; w is empty and reusable. It does not touch the
 * device context, which may be destroyed before or after. */
void tfmm_workspace_release(tfmm_workspace *w);

#endif
