/* The state of a domain (domain.h) between evaluations, shared by the
 * files of src/domain/ (built with MPI only): the communicator, this rank's
 * solver, the planner's choice over the ranks, the split of the last
 * evaluation and its measured costs. Data only. */
#ifndef TFMM_DOMAIN_STATE_H
#define TFMM_DOMAIN_STATE_H

#include <mpi.h>

#include "internal.h"
#include "planner.h"

#include <stdint.h>

typedef struct tfmm_domain tfmm_domain;

struct tfmm_domain {
  MPI_Comm caller; /* the caller's communicator, until opened */
  MPI_Comm comm;   /* its duplicate */
  int rank, size;
  tfmm_config cfg;    /* as the caller gave it, far_kernel newton for the
                         tree methods (the locally essential trees carry
                         Newton's multipoles) */
  tfmm_solver *local; /* this rank's solver: its bodies and those received */
  /* The planner (planner.h) over the ranks: theta and order chosen from
   * the error measured over every rank's bodies, the same on every rank
   * (evaluate.c); tfmm_solver_choice reads it, and so a checkpoint keeps
   * it. run: the configuration its evaluations use (cfg in the internal
   * units of the last evaluation, the setting the planner chose). */
  tfmm_planner plan;
  tfmm_config run;
  /* Agreed when the domain opens, alike on every rank: the near field on
   * the GPU (every rank's solver there), and the leaf size the planner
   * and the worst group go by (the configuration's, or its first automatic
   * one: each rank's solver may move its own). */
  int near_gpu, leaf;
  /* This rank's GPU (its solver's): where the measured error's exact sums
   * run when near_gpu (measure_ranks.c). */
  int gpu_id;
  /* The split of the last evaluation: rank r owns the keys in
   * [split[r], split[r + 1]) of the cube (lowest corner, side); split has
   * size + 1 entries, split[0] = 0 and split[size] = UINT64_MAX. */
  uint64_t *split;
  double cube[4];
  int have_split;
  /* Each rank's measured cost per body in the last evaluation (seconds of
   * its local and remote stages over the bodies it owned): the weights of
   * the next split. */
  double *cost;
  tfmm_dist_stats stats;
};

#endif
