/* The state of a run: the bodies, their forces at the current step, the
 * step and time, and the initial energy that errors are measured from.
 * Built from initial conditions (a model or a file) or from a checkpoint,
 * and written as a snapshot or a checkpoint (snapshot.h). */
#ifndef TFMM_RUN_STATE_H
#define TFMM_RUN_STATE_H

#include "run_options.h"
#include "snapshot.h"

#include <stddef.h>
#include <stdint.h>

typedef struct run_state {
  size_t n;
  double *pos, *vel, *mass; /* 3n, 3n, n */
  double *acc, *pot;        /* 3n, n: forces at pos */
  uint64_t *ids;            /* n */
  int64_t step;             /* steps done since the initial conditions */
  double time_initial;      /* time of the initial conditions */
  double energy_initial;    /* total energy at step 0 */
} run_state;

/* The time after step steps: time_initial + step * dt, computed afresh each
 * time so that a restart reproduces it exactly. */
double run_state_time(const run_state *s, double dt);

/* Initial conditions from ro->ic: a model (ro->n, ro->seed) or a file, an
 * HDF5 snapshot (its /Parameters and /RunState not read) or a text body
 * file. Sets ro->n to the file's count (an
 * explicit --n that differs is an error). Prints what is wrong and returns
 * 0 on failure; s is then released. */
int run_state_from_ic(run_state *s, run_options *ro);

/* Takes the arrays of a checkpoint read with snapshot_read (cp's arrays
 * then belong to s) and its /RunState. Prints what is wrong (a snapshot
 * that is no checkpoint, a missing or malformed state, a non-finite
 * acceleration or potential, a /Parameters InitialConditions:n other than
 * the count of bodies) and returns 0. */
int run_state_from_checkpoint(run_state *s, snapshot *cp, const char *path);

/* Writes s to path as a snapshot with params in /Parameters, and with
 * /RunState when checkpoint is nonzero (device names the device that
 * computed the forces). Atomic; prints what is wrong and returns 0. */
int run_state_write(const run_state *s, const char *path, double dt,
                    const snapshot_attr *params, size_t nparams, int checkpoint,
                    const char *device);

void run_state_free(run_state *s);

#endif
