/* Snapshots and checkpoints of a run written while the simulation steps
 * on: the state is taken with tfmm_sim_save_begin (on the GPU, copied out
 * on a stream of its own during the next step), handed after that step to
 * a thread that writes the HDF5 files (the snapshot, then the checkpoint
 * when one is due at the same step: one state for both) to temporaries,
 * then syncs and renames them, while the steps and the next writes go
 * on. Two states may be held at once (tfmm_sim_save_end's views last
 * until the second begin after theirs): a state is taken while the one
 * before is still being written, and a step waits only when the state
 * before that one is not yet written. The threads write their data one
 * after the other, in the order the states were taken (the HDF5 library
 * is not thread-safe), and the files take their names in that order,
 * each whole on disk (fsync) before its name, a checkpoint after its
 * step's snapshot and before any later file. A write that fails stops
 * the files behind it: none takes its name (a checkpoint due with a
 * failed snapshot is not written), so the checkpoint in place is older
 * than any file missing, and no state is taken after the failure is
 * seen. At the end every write is waited for. What the writing cost is
 * summed in totals. Under mpirun every rank takes its state and hands it
 * to rank 0 (run_ranks_gather), whose threads write every body; the calls
 * are collective and their results every rank's. */
#ifndef TFMM_SNAPSHOT_WRITER_H
#define TFMM_SNAPSHOT_WRITER_H

#include "run_options.h"
#include "run_ranks.h"
#include "run_report.h"
#include "snapshot.h"

#include "tilefmm.h"

#include <pthread.h>
#include <stdint.h>

/* One state taken and its files: what a writing thread reads. */
typedef struct writer_slot {
  char *path;       /* its snapshot's file, or NULL (a checkpoint alone) */
  char *checkpoint; /* its checkpoint's file, or NULL */
  int clock;        /* the checkpoint holds the clock of individual steps */
  /* The run's parameters and the Measured:* attributes as of its taking
   * (text in measured_text), for /Parameters. */
  snapshot_attr *all;
  size_t nall;
  char measured_text[8][32];
  tfmm_sim_state state; /* what the snapshot holds */
  tfmm_sim_state taken; /* the same as taken: the checkpoint's */
  /* A snapshot at a time of an output list: the state taken carried to
   * time at (snapshot_writer_begin_at), into pos_at and vel_at. */
  int at_given;
  double at;
  double *pos_at, *vel_at;
  run_ranks_state ranks; /* every rank's bodies, on rank 0 (MPI) */
  int64_t job;           /* the number of the write that holds it, 0: none */
} writer_slot;

typedef struct snapshot_writer {
  tfmm_sim *sim;
  const run_options *ro;       /* the units, G and the snapshots' output */
  const snapshot_attr *params; /* the run's parameters, for /Parameters */
  size_t nparams;
  const char *device; /* the device named in a checkpoint */
  /* The slots, used in turn as the sim's two saved states are; cur: the
   * one the next state is taken into; begun: a state is taken there
   * (tfmm_sim_save_begin), not yet handed to a thread. */
  writer_slot slot[2];
  int cur, begun;
  /* Writes handed to threads (each numbered: 1, 2, ...); of them, those
   * whose data are written (under lock: a thread writes after the one
   * numbered before it, then signals written); a write failed; the
   * latest thread (each joins the one before it); lock and written made
   * (synced). */
  int64_t jobs, written_jobs;
  int failed, synced;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t written;
  /* What the writing cost so far (under lock while a thread runs; read
   * after snapshot_writer_finish). */
  run_output totals;
  /* The setting of the latest evaluation and the last error measured
   * (snapshot_writer_note), written into each snapshot's /Parameters as
   * Measured:*; the worst group's when that measurement measured it
   * (group). */
  int tree, order, measured, group;
  double theta, p99, max, group_p99, group_max;
  size_t samples;
  int64_t measured_step;
} snapshot_writer;

/* Takes the state now for path (allocated; the writer frees it), once
 * the state taken two before is written. Returns 0 on a failure
 * (printed). */
int snapshot_writer_begin(snapshot_writer *w, char *path);

/* Notes the statistics of the evaluation of step (the setting, and the
 * error when it measured one), for the snapshots taken from then on. */
void snapshot_writer_note(snapshot_writer *w, const tfmm_stats *s,
                          int64_t step);

/* snapshot_writer_begin for a snapshot at time at, within a step of the
 * state taken now: its positions and velocities carried from the state's
 * time t to at by the second-order prediction x + v tau + a tau^2 / 2,
 * v + a tau (tau = at - t, a the accelerations of the state), as SWIFT
 * and GADGET-4 drift their particles to an output time between steps; its
 * time is at. The run's own state does not change. */
int snapshot_writer_begin_at(snapshot_writer *w, char *path, double at);

/* A checkpoint of the state now to path (allocated; the writer frees
 * it), written after the snapshot taken at this step if there is one
 * (from the same state, never one carried to an output time), else from
 * a state taken for it alone; clock: the sim takes individual steps.
 * Whoever needs it on disk calls snapshot_writer_finish. Returns 0 on a
 * failure (printed), as snapshot_writer_begin. */
int snapshot_writer_checkpoint(snapshot_writer *w, char *path, int clock);

/* Hands a taken state to a writing thread. Call once the sim has
 * stepped on (or at once: the state is the begin's either way). */
int snapshot_writer_hand_off(snapshot_writer *w);

/* Hands off what is taken and waits for every write. Returns 0 when one
 * failed (printed by the writer). */
int snapshot_writer_finish(snapshot_writer *w);

#endif
