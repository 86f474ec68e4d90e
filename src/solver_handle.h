/* The solver handle's insides, shared by solver.c (the configuration,
 * the host entry points, dispatch to the methods) and solver_device.c (the
 * entry points for bodies that live on the GPU). Nothing here is
 * exported. */
#ifndef TFMM_SOLVER_HANDLE_H
#define TFMM_SOLVER_HANDLE_H

#include "config.h"
#include "gpu.h"
#include "internal.h"
#include "pipeline/allpairs.h"
#include "pipeline/workspace.h"
#include "planner.h"
#include "solver_over.h"
#include "units.h"

struct tfmm_solver {
  tfmm_config cfg; /* as the caller gave it */
  /* The evaluation under way, in internal units (units.h): cfg with eps
   * scaled and G = 1 (applied on the way out). */
  tfmm_config run;
  tfmm_units units;
  double *scaled_pos, *scaled_mass; /* the bodies in internal units */
  size_t scaled_capacity;
  tfmm_workspace work; /* the tree methods' buffers, kept between calls */
  tfmm_doubles staged; /* device-resident bodies on the host: 8n doubles */
  tfmm_device device;  /* the plan's: CPU or GPU (plan.h) */
  tfmm_stats stats;
  tfmm_error err;
  tfmm_gpu *gpu;
  int leaf; /* the leaf size of the next tree evaluation (the plan's
               first, then leaf_auto.h's with TFMM_LEAF_AUTO) */
  /* The evaluation under way at a subset of the bodies: their bytes in
   * input order (nonzero: a target), or NULL: every body. */
  const unsigned char *active;
  tfmm_doubles active_out;      /* its results, before they go to the caller */
  tfmm_allpairs_scratch direct; /* the direct method's CPU buffers */
  /* A handle whose evaluations a layer above makes (solver_over.h: the
   * domain layer's, tfmm_solver_create_mpi): its calls and its state;
   * NULL for a solver of its own. */
  const tfmm_solver_over *over;
  void *over_ctx;
  tfmm_dist_stats dist_stats; /* of the last evaluation over the ranks */
  tfmm_planner plan;          /* theta and order chosen from measurements */
  /* tfmm_solver_set_prior_accel's accelerations, or NULL. */
  const double *prior_acc;
  int prior_on_device;
};

/* The workspace's prior accelerations (workspace.h) for an evaluation in
 * s->units: acc (NULL: none) with its factor to internal units. */
void tfmm_solver_use_prior(tfmm_solver *s, const double *acc);

/* A traversal of the gpu schedule whose lists would pass their cap (2^31
 * - 1 entries: a near field of ~10^11 pairs, as Plummer softening at the
 * system's scale or clusters smaller than eps make at 10^6 bodies) is run
 * again with leaves large enough to hold them. leaf_from > 0: the leaf
 * size was raised from it, because a list held `entries`. */
typedef struct tfmm_leaf_raise {
  int leaf_from;
  int64_t entries;
} tfmm_leaf_raise;

/* After an evaluation that returned st: 1 when it failed for lists past
 * their cap and s->leaf was raised for another try (entries fall as the
 * square of the leaf size; at most TFMM_LEAF_RAISE_MAX), 0 otherwise. */
int tfmm_solver_leaf_raise(tfmm_solver *s, tfmm_status st, tfmm_leaf_raise *r);

/* The raise, if any, said at the end of stats.plan. */
void tfmm_solver_leaf_raise_note(tfmm_solver *s, const tfmm_leaf_raise *r);

/* stats.device_name for the device in use. */
void tfmm_solver_describe(tfmm_solver *s);

/* s->run: cfg with eps and the cube in the internal units of s->units,
 * and G = 1. */
void tfmm_solver_set_run(tfmm_solver *s);

/* The statistics of an evaluation at no body, begun at t0: nothing
 * computed. */
void tfmm_solver_no_targets(tfmm_solver *s, size_t n, double t0);

/* Whether tfmm_solver_compute takes n host bodies the device's way
 * (tfmm_solver_compute_host_gpu): a tree method under the gpu schedule. */
int tfmm_solver_host_on_gpu(const tfmm_solver *s, size_t n);

/* tfmm_solver_compute on host arrays, begun at t0, the arguments checked
 * but not the bodies: the bodies copied as they are into the tree's
 * buffer on the GPU (one DMA from pinned memory, tfmm_host_alloc's, else
 * staged through pinned chunks), checked, measured and scaled into
 * internal units there (as tfmm_solver_compute_device does), and the
 * results, in the caller's units, copied once into acc and pot. The same
 * bits as the host's scaling would give (tests/test_host_memory.c), with
 * three passes over the bodies and two over the results taken off the
 * host. */
tfmm_status tfmm_solver_compute_host_gpu(tfmm_solver *s, size_t n,
                                         const double *pos, const double *mass,
                                         double *acc, double *pot, double t0);

#endif
