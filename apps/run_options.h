/* The settings of 'tilefmm run': its flags, the same settings in a YAML
 * parameter file (params.h), the defaults, the checks joining several
 * settings, and the canonical "Section:key = value" list that the run
 * writes beside its output and into every snapshot, and that a restart
 * compares with its checkpoint's. */
#ifndef TFMM_RUN_OPTIONS_H
#define TFMM_RUN_OPTIONS_H

#include "args.h"
#include "snapshot.h"
#include "solver_cli.h"
#include "units.h"

#include <stdint.h>
#include <stdio.h>

/* Every flag of 'run': its own, --params, --restart and --force, and the
 * solver's. */
#define RUN_FLAGS (34 + SOLVER_CLI_FLAGS)

/* A parameter given by the file or by -P, as given (an alias keeps its
 * own name), and what became of it. */
typedef struct run_given {
  char *section, *key, *value;
  char *where;     /* "FILE:LINE" or "-P" */
  const char *opt; /* the flag it sets ("--eps"), or NULL: time_begin */
  const char *overridden_by; /* the flag or "-P" that won, or NULL */
} run_given;

typedef struct run_options {
  const char *params_path, *restart_path;
  const char *ic;           /* a model name or a file */
  const char *types;        /* a snapshot's particle types to read (--types:
                               "all" or "1,4"); NULL: one type, not gas */
  uint64_t n, seed;         /* bodies of a model, its seed */
  double model_mass;        /* a model's total mass, in the run's mass unit */
  double model_radius;      /* its virial radius (the N-body unit of length),
                               in the run's length unit: the model's N-body
                               velocities are scaled by sqrt(G M / R) */
  double max_energy_error;  /* > 0: the run stops (exit 1) once |dE/E|
                               passes it; 0: never */
  double dt;                /* the fixed step (the longest with --eta, unless
                               --dt-max) */
  double eta;               /* > 0: individual time steps (tfmm_sim_config) */
  double dt_max, dt_min;    /* their longest and shortest; 0: the library's
                               defaults (dt, dt_max / 2^16) */
  int steps;                /* the step at which the run ends (from the ICs) */
  double t_end;             /* or the time at which it ends */
  const char *out;          /* output directory */
  int snapshot_every;       /* steps between snapshots; 0: none after 0000 */
  int checkpoint_every;     /* steps between checkpoints (and one at the end) */
  int stats_every;          /* steps between diagnostics lines and CSV rows */
  double snapshot_dt;       /* > 0: a snapshot at the first step at or after
                               each multiple of it (instead of snapshot_every) */
  double stats_dt;          /* > 0: the same for the diagnostics */
  const char *output_times; /* an output list file (output_list.h): the
                               snapshots at its times instead, or NULL */
  int output_list_on;       /* SWIFT's Snapshots:output_list_on: 0 turns
                               the list off, 1 needs one; -1: not given */
  const char *progress;     /* auto, on, off */
  const char *plots;        /* on, off: picture.png and energy.png at the end */
  int force;                /* start afresh in a directory that holds a run */
  double time_begin;        /* TimeIntegration:time_begin, checked against the
                               initial conditions' time (time_begin_given) */
  int time_begin_given;
  units units; /* InternalUnitSystem (--unit-mass, ...): mass 0 for N-body
                  units; G derives from it unless given */
  int G_kept;  /* a restart: the checkpoint's G, which stays */
  const char *units_preset;       /* --units: nbody, galactic, cosmological, or
                                     NULL (the flags or InternalUnitSystem) */
  int preset_applied;             /* --units has set the unit fields */
  const char *snapshot_fields;    /* Snapshots:fields: "all" or a list */
  const char *snapshot_precision; /* Snapshots:precision: single, double */
  int snapshot_compression;       /* Snapshots:compression: gzip 0-9 */
  snapshot_output output;         /* the three, parsed by finish */
  run_given *given; /* the file's parameters, then -P's, in order; string
                       settings they gave point at their values */
  size_t ngiven;
  solver_cli sc; /* method, device, eps, softening, theta, order, leaf, ... */
  args_option opts[RUN_FLAGS];
  /* Where each setting came from: 1 when a flag, -P or the parameter file
   * gave it (a restart must not contradict those), per entry of opts. */
  int explicit_[RUN_FLAGS];
  /* Strings the settings point to that ro allocated (copies of a parameter
   * file's or a checkpoint's words, canonical words): run_options_free. */
  char **owned;
  size_t nowned;
} run_options;

/* Defaults, and the flag table pointing into ro (ro must not move). */
void run_options_init(run_options *ro);

/* Releases the strings ro allocated; its string settings then dangle. */
void run_options_free(run_options *ro);

void run_options_help(FILE *fp, const run_options *defaults);

/* Flags, then -P Section:key:value overrides, then the parameter file
 * (--params) for what neither set. Returns a CLI_* exit code; prints
 * every error of the file and -P. ARGS_HELP prints the help and returns
 * -1. */
int run_options_parse(run_options *ro, int argc, char **argv);

/* Whether flag (say "--n") was given by a flag, -P or the parameter
 * file. */
int run_options_explicit(const run_options *ro, const char *flag);

/* A restart: every setting neither a flag nor the parameter file gave is
 * taken from the checkpoint's parameters; one that was given must equal the
 * checkpoint's, unless it is free to change (the end, the outputs'
 * cadence and place, the threads, the device, the progress line). The
 * output directory, unless given, is the checkpoint's own directory (not
 * the one recorded, which may be relative to another working directory).
 * Prints what differs and returns 0 on a mismatch. */
int run_options_merge_checkpoint(run_options *ro, const char *path,
                                 const snapshot_attr *params, size_t count);

/* A checkpoint written before Gravity:softening, precision, accuracy and
 * mac existed ran with Plummer softening, single precision and the
 * geometric criterion at its recorded theta and order: adds those keys to
 * its parameters (reallocating *attrs), saying so on stderr, so that a
 * restart keeps them; one written before individual time steps ran with
 * one global step (Gravity:eta, TimeIntegration:dt_max and dt_min 0,
 * added without a note). Returns 0 (printed) when out of memory. */
int run_options_upgrade_checkpoint(const char *path, snapshot_attr **attrs,
                                   size_t *count);

/* After run_options_finish on a restart: every setting a restart must keep
 * (physics, solver, initial conditions, step) equals the checkpoint's.
 * Prints the first that differs, naming it, and returns 0 if one does. */
int run_options_compare(const run_options *ro, const char *path,
                        const snapshot_attr *params, size_t count);

/* The unit system's checks and G: the mass, length and velocity units
 * together or none (current and temperature 1 unless given); G derived
 * from the units unless given, and a given G that differs from theirs by
 * more than UNITS_G_TOLERANCE refused. Called by run_options_finish, and
 * again once initial conditions gave the run their units. Prints what is
 * wrong and returns 0. */
int run_options_units(run_options *ro);

/* Adopts the unit system of initial conditions for a run that gave none:
 * its keys become the run's (written into every snapshot and checkpoint),
 * and G derives from them unless given. Returns 0 (printed) when G
 * contradicts them. */
int run_options_adopt_units(run_options *ro, const units *u);

/* After parsing: the device-dependent leaf default (64 on the CPU, 1024
 * when the near field runs on a GPU), --steps or --t-end, and the solver
 * configuration; the solver's words made canonical ("auto" or %.17g for
 * theta, names for the softening, precision and criterion). Prints what
 * is wrong and returns 0 on failure. */
int run_options_finish(run_options *ro);

/* Refuses the flag --types with a model, which has no particle types to
 * choose among; from a parameter file or -P it is listed in
 * unused_parameters.yml instead, as a shared file's settings are. Prints
 * what is wrong and returns 0. */
int run_options_types_fit_ic(const run_options *ro);

/* The canonical list of settings ("InitialConditions:n" = "262144", ...),
 * numbers printed so that they read back to the same bits. The array and
 * its strings are allocated; release with run_options_free_attrs. */
snapshot_attr *run_options_attrs(const run_options *ro, size_t *count);
void run_options_free_attrs(snapshot_attr *a, size_t count);

/* After run_options_finish: writes the parameters given (file or -P)
 * that the run did not use, as YAML (SWIFT's unused_parameters.yml), each
 * with the reason as a comment; "{}" when none. Returns 0 on a write
 * error. */
int run_options_write_unused(FILE *fp, const run_options *ro);

/* Writes the settings as a YAML parameter file that 'run --params' reads
 * back to the same run, with note (one line, or NULL) as a comment below
 * the heading. Returns 0 on a write error. */
int run_options_write_yaml(FILE *fp, const snapshot_attr *a, size_t count,
                           const char *note);

#endif
