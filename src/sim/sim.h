/* The simulation object (tfmm_sim in tilefmm.h), shared by its files:
 * sim.c (creation, restoration, the state and the accessors), sim_check.c
 * (the checks of what a caller gives) and sim_step.c (the steps and the
 * diagnostics). */
#ifndef TFMM_SIM_H
#define TFMM_SIM_H

#include "internal.h"
#include "sim/timestep.h"
#include "sim_gpu.h"

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
  /* The clock (tilefmm.h): ticks since time_initial, a tick's length and
   * the top bin K; one global step is K = 0, tick = dt. */
  int64_t ticks;
  double tick;
  int max_bin;
  int individual;        /* eta > 0 */
  double two_eta_eps;    /* 2 eta eps, the criterion's numerator */
  signed char *bin;      /* n: each body's bin */
  unsigned char *active; /* n: the targets of the step's forces */
  int64_t bin_count[TFMM_TIMESTEP_MAX_BIN + 1]; /* bodies in each bin */
  /* The state on the GPU, when the solver runs there (sim_device.c): the
   * bodies, forces and bins live in gpu between steps, and the arrays
   * above are its copy as of the last download (host_current). NULL: the
   * state is the host arrays. */
  tfmm_sim_gpu *gpu;
  int host_current;
  /* tfmm_sim_save_begin's state: its scalars, and on the CPU its copy of
   * pos, vel, acc, pot (10n doubles) and the bins (n bytes), in two
   * buffers used in turn (snap_copy[snap_last], the last one written). */
  int snap_pending, snap_last;
  tfmm_sim_state snap;
  double *snap_copy[2];
  double energy_initial; /* E at step 0; NaN until known */
  int forces_known;      /* acc and pot are the forces at pos */
  /* A force evaluation failed in the middle of a step: the bodies are
   * part-way through it and no further step is taken. TFMM_OK otherwise. */
  tfmm_status broken;
  tfmm_step_stats stats; /* of the last start, step or advance_to */
  tfmm_error err;
  /* Over several processes (tfmm_sim_create_mpi): n is this rank's share
   * of n_total bodies, and bin_count counts all ranks' bodies; the state
   * stays on the host. One process: distributed 0, n_total = n. */
  int distributed;
  size_t n_total;
  /* The domain layer behind the solver (src/domain/, domain.h): the
   * reductions and the moves of bodies between ranks; NULL for one
   * process. */
  struct tfmm_domain *domain;
  /* The error criterion's |a|_A (TFMM_MAC_ERROR) from the forces of each
   * body's last evaluation, acc (1, the default), or from the solver's
   * estimate (0: for comparisons, tfmm_sim_set_prior_accel). */
  int prior_accel;
};

/* Whether the sim's error criterion takes |a|_A from the bodies' last
 * forces (on, the default: tilefmm.h, TFMM_MAC_ERROR) or from the
 * solver's estimate (off); bench/bench_sim.c compares them. */
void tfmm_sim_set_prior_accel(tfmm_sim *s, int on);

/* Makes the sim's solver: tfmm_solver_create, or over a communicator
 * (sim_mpi.c: tfmm_solver_create_mpi). */
typedef tfmm_status (*tfmm_sim_solver_maker)(void *ctx, const tfmm_config *cfg,
                                             tfmm_solver **out);

/* tfmm_sim_create and tfmm_sim_restore with the solver from make (NULL:
 * one process). With make, n may be 0 on a rank, the checks are agreed on
 * by every rank, and the bin counts are summed over them. */
tfmm_status tfmm_sim_create_by(tfmm_sim **out, const tfmm_sim_config *cfg,
                               size_t n, const double *pos, const double *vel,
                               const double *mass, const uint64_t *ids,
                               tfmm_sim_solver_maker make, void *ctx);
tfmm_status tfmm_sim_restore_by(tfmm_sim **out, const tfmm_sim_config *cfg,
                                const tfmm_sim_state *state,
                                tfmm_sim_solver_maker make, void *ctx);

/* Over several processes: the bodies, with their whole state, to the rank
 * whose key range holds them (sim_migrate.c); nothing for one process. */
tfmm_status tfmm_sim_migrate(tfmm_sim *s);

/* The checks of tfmm_sim_create and tfmm_sim_restore (sim_check.c); the
 * message names the field or the body. */
tfmm_status tfmm_sim_check_config(const tfmm_sim_config *cfg, tfmm_error *err);
tfmm_status tfmm_sim_check_bodies(size_t n, const double *pos,
                                  const double *vel, const double *mass,
                                  tfmm_error *err);
tfmm_status tfmm_sim_check_state(const tfmm_sim_state *state, const tfmm_sim *s,
                                 tfmm_error *err);

/* The state on the GPU (sim_device.c): tfmm_sim_device_attach moves a
 * sim whose solver runs on the GPU there (forces uploaded when known),
 * doing nothing otherwise; tfmm_sim_device_sync copies it back into the
 * host arrays when they are stale. */
tfmm_status tfmm_sim_device_attach(tfmm_sim *s);
tfmm_status tfmm_sim_device_sync(tfmm_sim *s);

/* The parts of a step on the GPU, as those on the host (sim_host.c) and
 * with the same bits; the forces (all: at every body, else at those
 * activated) by tfmm_solver_compute_device on the state's stream. */
int64_t tfmm_sim_device_open(tfmm_sim *s, int sync_bin, int limit,
                             tfmm_status *st);
tfmm_status tfmm_sim_device_drift(tfmm_sim *s, double h);
tfmm_status tfmm_sim_device_activate(tfmm_sim *s, int active_bin);
tfmm_status tfmm_sim_device_forces(tfmm_sim *s, int all);
/* The forces at the `targets` bodies activated, summed directly on the
 * GPU (sim_gpu.h, tfmm_sim_gpu_direct) with the solver's G, eps and
 * softening. */
tfmm_status tfmm_sim_device_direct(tfmm_sim *s, size_t targets);
tfmm_status tfmm_sim_device_close(tfmm_sim *s, int active_bin);
tfmm_status tfmm_sim_device_diagnostics(tfmm_sim *s, tfmm_diagnostics *d);

/* The clock of cfg (tick, K) and whether it takes individual steps; cfg
 * checked. */
void tfmm_sim_clock(const tfmm_sim_config *cfg, double *tick, int *max_bin);

/* The kicks and the drift on the host (sim_host.c), element-wise: the bits
 * do not depend on the thread count.
 * open: bodies with bin <= sync_bin (their step ended) get a new bin from
 * the criterion (individual steps, at most limit) and the opening half
 * kick; the bins are recounted into bin_count; the bodies that asked for
 * less than a tick are returned.
 * close: the closing half kick of the bodies with bin <= active_bin.
 * activate: active[i] = bin[i] <= active_bin; returns the count. */
int64_t tfmm_sim_host_open(tfmm_sim *s, int sync_bin, int limit);
void tfmm_sim_host_close(tfmm_sim *s, int active_bin);
size_t tfmm_sim_host_activate(tfmm_sim *s, int active_bin);

#endif
