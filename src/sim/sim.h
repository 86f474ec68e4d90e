/* The simulation object (tfmm_sim in tilefmm.h), shared by its files:
 * sim.c (creation, restoration, the state and the accessors), sim_check.c
 * (the checks of what a caller gives) and sim_step.c (the steps and the
 * diagnostics). */
#ifndef TFMM_SIM_H
#define TFMM_SIM_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

struct tfmm_sim {
  tfmm_sim_config cfg; /* as the caller gave it (time_initial: the state's
                          for a restored sim) */
  tfmm_solver *solver;
  size_t n;
  double *pos, *vel, *mass; /* 3n, 3n, n */
  double *acc, *pot;        /* 3n, n: the forces at pos once forces_known */
  uint64_t *ids;            /* n */
  int64_t step;             /* steps done since time_initial */
  double energy_initial;    /* E at step 0; NaN until known */
  int forces_known;         /* acc and pot are the forces at pos */
  /* A force evaluation failed in the middle of a step: the bodies are
   * part-way through it and no further step is taken. TFMM_OK otherwise. */
  tfmm_status broken;
  tfmm_step_stats stats; /* of the last start, step or advance_to */
  tfmm_error err;
};

/* The checks of tfmm_sim_create and tfmm_sim_restore (sim_check.c); the
 * message names the field or the body. */
tfmm_status tfmm_sim_check_config(const tfmm_sim_config *cfg, tfmm_error *err);
tfmm_status tfmm_sim_check_bodies(size_t n, const double *pos,
                                  const double *vel, const double *mass,
                                  tfmm_error *err);
tfmm_status tfmm_sim_check_state(const tfmm_sim_state *state, double dt,
                                 tfmm_error *err);

#endif
