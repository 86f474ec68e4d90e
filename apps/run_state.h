/* The state a run starts from, read from initial conditions (a model or a
 * file) or from a checkpoint, and handed to the library's simulation
 * (tfmm_sim), which owns the bodies from then on; and the simulation's
 * state written as a snapshot or a checkpoint (snapshot.h): the library
 * does not know HDF5. */
#ifndef TFMM_RUN_STATE_H
#define TFMM_RUN_STATE_H

#include "run_options.h"
#include "snapshot.h"

#include "tilefmm.h"

#include <stddef.h>
#include <stdint.h>

typedef struct run_state {
  size_t n;
  double *pos, *vel, *mass; /* 3n, 3n, n */
  double *acc, *pot;        /* 3n, n: a checkpoint's forces at pos; NULL
                               for initial conditions (the simulation
                               computes them at step 0) */
  uint64_t *ids;            /* n */
  int64_t step;             /* steps done since the initial conditions */
  double time_initial;      /* time of the initial conditions */
  double energy_initial;    /* a checkpoint's total energy at step 0 */
  /* A checkpoint's clock (tfmm_sim_state): ticks, tick and the bins; 0, 0
   * and NULL for one of one global step, or one older than individual
   * steps. */
  int64_t ticks;
  double tick;
  signed char *bins;
  /* A checkpoint's planner (tfmm_choice, /RunState Choice*): the restart
   * evaluates with the settings and measurements the run had; all zero
   * for one older than the planner (the restart chooses afresh). */
  tfmm_choice choice;
} run_state;

/* Initial conditions from ro->ic: a model (ro->n, ro->seed) or a file, an
 * HDF5 snapshot (its /Parameters and /RunState not read) or a text body
 * file. Sets ro->n to the file's count (an
 * explicit --n that differs is an error). Prints what is wrong and returns
 * 0 on failure; s is then released. */
int run_state_from_ic(run_state *s, run_options *ro);

/* Whether name is a model of --ic (plummer, ...), not a file. */
int run_state_is_model(const char *name);

/* Takes the arrays of a checkpoint read with snapshot_read (cp's arrays
 * then belong to s) and its /RunState. Prints what is wrong (a snapshot
 * that is no checkpoint, a missing or malformed state, a non-finite
 * acceleration or potential, a /Parameters InitialConditions:n other than
 * the count of bodies) and returns 0. */
int run_state_from_checkpoint(run_state *s, snapshot *cp, const char *path);

/* The simulation of s with ro's solver settings and step: created from
 * initial conditions (at step 0, its forces not yet computed), or restored
 * from a checkpoint's state (its forces as the checkpoint holds them, so
 * that the continuation is the run straight through bit for bit). s is
 * released either way. A setting the library refuses as an invalid
 * argument came from the flags: prints why and returns CLI_USAGE_ERROR;
 * anything else (no GPU, no memory) CLI_RUNTIME_ERROR; else CLI_OK with
 * *sim ready (NULL otherwise). */
int run_state_make_sim(run_state *s, const run_options *ro, tfmm_sim **sim);

/* Writes a state saved (tfmm_sim_save or tfmm_sim_save_end), at its own
 * time, to path as a snapshot with params in /Parameters, and with
 * /RunState (its step, time_initial and energy_initial) when checkpoint
 * is nonzero (device names the device that computed the forces); clock:
 * it was saved with individual steps (the clock goes into a checkpoint).
 * ro gives the units and G, and for a snapshot (not a checkpoint) its
 * fields, precision and compression. Atomic; prints what is wrong and
 * returns 0. Touches no sim, so that a thread may write while the sim
 * steps on. uncommitted: NULL, or where the file is left written but not
 * yet synced and renamed (snapshot_write_uncommitted). */
int run_state_write_saved(const tfmm_sim_state *s, int clock,
                          const run_options *ro, const char *path,
                          const snapshot_attr *params, size_t nparams,
                          int checkpoint, const char *device,
                          atomic_file *uncommitted);

void run_state_free(run_state *s);

#endif
