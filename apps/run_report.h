/* What 'tilefmm run' tells: one line per diagnostics step on stdout, the
 * same as a row of DIR/statistics.csv, a live progress line on stderr when
 * it is a terminal, and a summary at the end. */
#ifndef TFMM_RUN_REPORT_H
#define TFMM_RUN_REPORT_H

#include "tilefmm.h"
#include "units.h"

#include <stdint.h>
#include <stdio.h>

/* Wall-clock seconds of one step, by phase. */
typedef struct run_times {
  double tree;      /* octree and interaction lists */
  double near;      /* near field (its GPU span, or CPU time) */
  double far;       /* far field (CPU) */
  double integrate; /* kicks, drift and diagnostics */
  double io;        /* snapshots, checkpoints, the CSV (a row counts what came
                      before it: a checkpoint is written after its step's row) */
  double step;      /* the whole step */
} run_times;

/* What the run's output cost (the snapshot writer's thread, summed over
 * its files): the files written and their bytes, the thread's seconds
 * writing their data and syncing and renaming them, and the main
 * thread's seconds waiting for it before taking the next state. */
typedef struct run_output {
  int64_t files;
  double bytes, write, sync, waited;
  int64_t snapshot_every; /* the run's cadence in steps, 0: by time or list */
} run_output;

typedef struct run_report {
  FILE *csv;
  char *csv_path;
  int progress;        /* draw the live line on stderr */
  int progress_drawn;  /* a live line is on the screen */
  int64_t first, last; /* steps of this invocation: (first, last] */
  int64_t last_row;    /* the step of the last row written, -1 for none */
  double started;      /* cli_seconds() at the first step */
  run_times sum;       /* over this invocation's steps */
  int64_t steps_timed; /* steps summed in sum */
  double last_writes;  /* seconds waited after the last step for the
                          snapshot and checkpoint writes still under way */
  run_output output;   /* the writer's totals, for the summary */
  double worst_error;  /* max |dE/E| seen */
  double final_error;  /* the last |dE/E| */
  int energy_warned;   /* the warning of RUN_ENERGY_WARNING is printed */
  char header[2560];   /* of the CSV, with the run's units */
} run_report;

/* |dE/E| past this is said on stderr, once: a leapfrog with a step that
 * resolves the orbits keeps it far below (docs/units.md). */
#define RUN_ENERGY_WARNING 1e-2

/* Opens DIR/statistics.csv: new (header, its column names carrying the
 * units of u) for a fresh run, else (restart)
 * the existing file cut to its rows up to from_step (atomically), or a new
 * one if there is none, then appended to. A torn last row (no newline: a crash
 * or a full disk) is dropped; the rows kept must end with from_step's, as
 * a run writes and syncs every checkpoint's row before the checkpoint.
 * Prints what is wrong and returns 0. dir NULL: no file (a rank other
 * than 0 under mpirun keeps the same steps without one). */
int run_report_open(run_report *r, const char *dir, const units *u,
                    int64_t from_step, int64_t last_step, int restart,
                    int progress);

/* Diagnostics of a step, err its relative energy error (E - E0) / |E0|
 * (tfmm_sim_diagnostics): a line on stdout and a CSV row, with the leaf
 * size, theta and order of its last force evaluation (s) and the error it
 * measured (p99, max, samples; empty when it did not measure). Returns 0
 * after a write error of the CSV (printed). */
int run_report_step(run_report *r, int64_t step, double time, double err,
                    const tfmm_diagnostics *d, const run_times *t,
                    const tfmm_stats *s);

/* The energy check of a diagnostics step, err its relative energy error:
 * a warning on stderr the first time |err| passes RUN_ENERGY_WARNING, and
 * 0 (printed) when |err| passes max > 0 (--max-energy-error): the run
 * stops there. A non-finite err passes every bound. */
int run_report_energy(run_report *r, int64_t step, double time, double err,
                      double max);

/* Makes the rows written so far durable (fsync), before the checkpoint
 * that covers them. Returns 0 after a write error (printed). */
int run_report_sync(run_report *r);

/* Counts a step's times toward the summary and redraws the live line. */
void run_report_tick(run_report *r, int64_t step, double time,
                     const run_times *t);

/* The summary on stdout, solver describing the forces (softening, theta
 * and order used); closes the CSV (returns 0 on a write error). */
int run_report_close(run_report *r, size_t n, const char *device,
                     const char *solver);

/* Closes without a summary (after a failure). */
void run_report_abort(run_report *r);

#endif
