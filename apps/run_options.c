/* Settings of 'tilefmm run' (see run_options.h): the option table, the
 * defaults and --help. Parameter files: run_options_params.c; units and
 * the checks after parsing: run_options_units.c; checkpoints and the YAML
 * files: run_options_saved.c. */
#define _POSIX_C_SOURCE 200809L
#include "run_options_internal.h"

#include "atomic_file.h"
#include "body_input.h"
#include "cli.h"
#include "params.h"
#include "run_report.h"
#include "run_state.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int positive_double(const void *v) { return *(const double *)v > 0; }
static int non_negative_double(const void *v) {
  return *(const double *)v >= 0;
}
static int non_negative_int(const void *v) { return *(const int *)v >= 0; }
static int positive_int(const void *v) { return *(const int *)v >= 1; }
static int count_ok(const void *v) {
  const uint64_t n = *(const uint64_t *)v;
  return n >= 1 && n <= SIZE_MAX / (3 * sizeof(double));
}
static int on_off(const void *v) {
  const char *s = *(const char *const *)v;
  return strcmp(s, "on") == 0 || strcmp(s, "off") == 0;
}
static int progress_ok(const void *v) {
  const char *s = *(const char *const *)v;
  return strcmp(s, "auto") == 0 || strcmp(s, "on") == 0 ||
         strcmp(s, "off") == 0;
}
static int nonempty(const void *v) { return **(const char *const *)v != '\0'; }
/* A run writes a directory of files: "-", standard output for the other
 * commands, would be a directory named "-". */
static int directory_ok(const void *v) {
  return nonempty(v) && strcmp(*(const char *const *)v, "-") != 0;
}
static int fields_ok(const void *v) {
  unsigned fields;
  return snapshot_parse_fields(*(const char *const *)v, &fields);
}
static int precision_word_ok(const void *v) {
  const char *s = *(const char *const *)v;
  return strcmp(s, "single") == 0 || strcmp(s, "double") == 0;
}
/* --units: named unit systems (mass, length, velocity in cgs), with
 * SWIFT's solar mass and the IAU parsec. */
const run_preset run_presets[] = {
    {"nbody", 0, 0, 0},
    {"galactic", 1.98841e43, 3.0856775814913673e21, 1e5},
    {"cosmological", 1.98841e43, 3.0856775814913673e24, 1e5},
};
const size_t run_npresets = sizeof run_presets / sizeof run_presets[0];

static int preset_ok(const void *v) {
  const char *s = *(const char *const *)v;
  for (size_t k = 0; k < run_npresets; k++)
    if (strcmp(run_presets[k].name, s) == 0)
      return 1;
  return 0;
}
static int gzip_level(const void *v) {
  return *(const int *)v >= 0 && *(const int *)v <= 9;
}

char *run_options_keep(run_options *ro, char *s) {
  char **owned =
      s != NULL ? realloc(ro->owned, (ro->nowned + 1) * sizeof *owned) : NULL;
  if (owned == NULL) {
    free(s);
    return NULL;
  }
  ro->owned = owned;
  ro->owned[ro->nowned++] = s;
  return s;
}

void run_options_free(run_options *ro) {
  for (size_t k = 0; k < ro->nowned; k++)
    free(ro->owned[k]);
  free(ro->owned);
  ro->owned = NULL;
  ro->nowned = 0;
  for (size_t k = 0; k < ro->ngiven; k++) {
    free(ro->given[k].section);
    free(ro->given[k].key);
    free(ro->given[k].value);
    free(ro->given[k].where);
  }
  free(ro->given);
  ro->given = NULL;
  ro->ngiven = 0;
}

void run_options_init(run_options *ro) {
  memset(ro, 0, sizeof *ro);
  ro->ic = "plummer";
  ro->n = DEFAULT_N;
  ro->seed = 1;
  ro->model_mass = 1;
  ro->model_radius = 1;
  ro->max_energy_error = DEFAULT_MAX_ENERGY_ERROR;
  ro->dt = DEFAULT_DT;
  ro->steps = -1;
  ro->t_end = -1.0;
  ro->out = DEFAULT_OUT;
  ro->snapshot_every = 10;
  ro->output_list_on = -1;
  ro->checkpoint_every = 100;
  ro->stats_every = 1;
  ro->progress = "auto";
  ro->plots = "on";
  ro->snapshot_fields = "all";
  ro->snapshot_precision = "double";
  const args_option own[RUN_FLAGS - SOLVER_CLI_FLAGS] = {
      {.name = "--params", .kind = ARGS_STRING, .value = &ro->params_path},
      {.name = "--restart", .kind = ARGS_STRING, .value = &ro->restart_path},
      {.name = "--force", .kind = ARGS_FLAG, .value = &ro->force},
      {.name = "--ic",
       .kind = ARGS_STRING,
       .value = &ro->ic,
       .valid = nonempty,
       .expect = "plummer, hernquist, uniform, cold, merger or a file"},
      {.name = "--n",
       .kind = ARGS_U64,
       .value = &ro->n,
       .valid = count_ok,
       .expect = "an integer >= 1"},
      {.name = "--seed",
       .kind = ARGS_U64,
       .value = &ro->seed,
       .expect = "an integer in [0, 2^64)"},
      {.name = "--model-mass",
       .kind = ARGS_DOUBLE,
       .value = &ro->model_mass,
       .valid = positive_double,
       .expect = "a mass > 0 in the run's mass unit"},
      {.name = "--model-radius",
       .kind = ARGS_DOUBLE,
       .value = &ro->model_radius,
       .valid = positive_double,
       .expect = "a length > 0 in the run's length unit"},
      {.name = "--max-energy-error",
       .kind = ARGS_DOUBLE,
       .value = &ro->max_energy_error,
       .valid = non_negative_double,
       .expect = "a number >= 0 (0: never stop)"},
      {.name = "--dt",
       .kind = ARGS_DOUBLE,
       .value = &ro->dt,
       .valid = positive_double,
       .expect = "a number > 0"},
      {.name = "--steps",
       .kind = ARGS_INT,
       .value = &ro->steps,
       .valid = non_negative_int,
       .expect = "an integer >= 0"},
      {.name = "--t-end",
       .kind = ARGS_DOUBLE,
       .value = &ro->t_end,
       .valid = positive_double,
       .expect = "a number > 0"},
      {.name = "--out",
       .kind = ARGS_STRING,
       .value = &ro->out,
       .valid = directory_ok,
       .expect = "a directory (not -: a run's files do not go to standard "
                 "output)"},
      {.name = "--snapshot-every",
       .kind = ARGS_INT,
       .value = &ro->snapshot_every,
       .valid = non_negative_int,
       .expect = "an integer >= 0"},
      {.name = "--checkpoint-every",
       .kind = ARGS_INT,
       .value = &ro->checkpoint_every,
       .valid = non_negative_int,
       .expect = "an integer >= 0"},
      {.name = "--stats-every",
       .kind = ARGS_INT,
       .value = &ro->stats_every,
       .valid = positive_int,
       .expect = "an integer >= 1"},
      {.name = BODY_INPUT_TYPES_FLAG,
       .kind = ARGS_STRING,
       .value = &ro->types,
       .valid = body_input_types_ok,
       .expect = BODY_INPUT_TYPES_EXPECT},
      {.name = "--progress",
       .kind = ARGS_STRING,
       .value = &ro->progress,
       .valid = progress_ok,
       .expect = "auto, on or off"},
      {.name = "--plots",
       .kind = ARGS_STRING,
       .value = &ro->plots,
       .valid = on_off,
       .expect = "on or off"},
      {.name = "--eta",
       .kind = ARGS_DOUBLE,
       .value = &ro->eta,
       .valid = non_negative_double,
       .expect = "a number >= 0"},
      {.name = "--dt-max",
       .kind = ARGS_DOUBLE,
       .value = &ro->dt_max,
       .valid = non_negative_double,
       .expect = "a number >= 0"},
      {.name = "--dt-min",
       .kind = ARGS_DOUBLE,
       .value = &ro->dt_min,
       .valid = non_negative_double,
       .expect = "a number >= 0"},
      {.name = "--snapshot-dt",
       .kind = ARGS_DOUBLE,
       .value = &ro->snapshot_dt,
       .valid = non_negative_double,
       .expect = "a number >= 0"},
      {.name = "--output-times",
       .kind = ARGS_STRING,
       .value = &ro->output_times},
      {.name = "--stats-dt",
       .kind = ARGS_DOUBLE,
       .value = &ro->stats_dt,
       .valid = non_negative_double,
       .expect = "a number >= 0"},
      {.name = "--snapshot-fields",
       .kind = ARGS_STRING,
       .value = &ro->snapshot_fields,
       .valid = fields_ok,
       .expect = SNAPSHOT_FIELDS_EXPECT},
      {.name = "--snapshot-precision",
       .kind = ARGS_STRING,
       .value = &ro->snapshot_precision,
       .valid = precision_word_ok,
       .expect = "single or double"},
      {.name = "--snapshot-compression",
       .kind = ARGS_INT,
       .value = &ro->snapshot_compression,
       .valid = gzip_level,
       .expect = "a gzip level, 0 (none) to 9"},
      {.name = "--units",
       .kind = ARGS_STRING,
       .value = &ro->units_preset,
       .valid = preset_ok,
       .expect = "nbody, galactic (kpc, 1e10 Msun, km/s) or cosmological "
                 "(Mpc, 1e10 Msun, km/s)"},
      {.name = "--unit-mass",
       .kind = ARGS_DOUBLE,
       .value = &ro->units.mass,
       .valid = positive_double,
       .expect = "a mass in grams > 0"},
      {.name = "--unit-length",
       .kind = ARGS_DOUBLE,
       .value = &ro->units.length,
       .valid = positive_double,
       .expect = "a length in centimetres > 0"},
      {.name = "--unit-velocity",
       .kind = ARGS_DOUBLE,
       .value = &ro->units.velocity,
       .valid = positive_double,
       .expect = "a velocity in cm/s > 0"},
      {.name = "--unit-current",
       .kind = ARGS_DOUBLE,
       .value = &ro->units.current,
       .valid = positive_double,
       .expect = "a current in amperes > 0"},
      {.name = "--unit-temp",
       .kind = ARGS_DOUBLE,
       .value = &ro->units.temperature,
       .valid = positive_double,
       .expect = "a temperature in kelvin > 0"},
  };
  memcpy(ro->opts, own, sizeof own);
  solver_cli_init(&ro->sc, ro->opts + (RUN_FLAGS - SOLVER_CLI_FLAGS));
  ro->sc.cfg.eps = DEFAULT_EPS;
  /* As GADGET and SWIFT: Newtonian beyond 2.8 eps, so that the far field
   * is exact for the expansions. forces and validate keep the library's
   * Plummer, the chapter's physics. */
  ro->sc.cfg.softening = TFMM_SOFTENING_SPLINE;
}

args_option *run_options_find(run_options *ro, const char *flag) {
  for (size_t k = 0; k < RUN_FLAGS; k++)
    if (strcmp(ro->opts[k].name, flag) == 0)
      return &ro->opts[k];
  return NULL;
}

int run_options_explicit(const run_options *ro, const char *flag) {
  for (size_t k = 0; k < RUN_FLAGS; k++)
    if (strcmp(ro->opts[k].name, flag) == 0)
      return ro->explicit_[k];
  return 0;
}

void run_options_help(FILE *fp, const run_options *d) {
  fprintf(
      fp,
      "Usage: tilefmm run [options]\n"
      "\n"
      "Runs a simulation: initial conditions, the kick-drift-kick leapfrog\n"
      "with a fixed step, the forces of the chosen solver at every step,\n"
      "diagnostics, HDF5 snapshots (GADGET/SWIFT layout) and checkpoints.\n"
      "One line per diagnostics step on stdout; a live progress line on\n"
      "stderr when it is a terminal. A model is made in N-body units\n"
      "(G = M = 1, E = -1/4, virial radius 1) and then scaled to the run's\n"
      "units as the same physical model: total mass --model-mass, virial\n"
      "radius --model-radius, velocities times sqrt(G M / R); a FILE's\n"
      "units are its own (set --G, --eps).\n"
      "\n"
      "Options:\n"
      "  --params FILE     YAML parameter file (SWIFT style 'Section: key:\n"
      "                    value'); -P and flags override it. Every error\n"
      "                    of the file is reported in one go. The run\n"
      "                    writes the parameters it used to\n"
      "                    DIR/used_parameters.yml (tilefmm's names), and\n"
      "                    those given that it did not use to\n"
      "                    DIR/unused_parameters.yml. SWIFT's names are\n"
      "                    read too: InitialConditions:file_name,\n"
      "                    TimeIntegration:time_end and time_begin (must\n"
      "                    be the initial conditions' time),\n"
      "                    Gravity:comoving_DM_softening or\n"
      "                    max_physical_DM_softening (eps), theta_cr\n"
      "                    (theta)\n"
      "  -P S:KEY:VALUE    set parameter KEY of section S, as in the file\n"
      "                    (SWIFT's -P; repeatable); overrides the file, and\n"
      "                    a flag overrides it\n"
      "  --ic IC           plummer, hernquist, uniform, cold (a uniform\n"
      "                    sphere at rest), merger (two Plummer spheres on a\n"
      "                    bound orbit), or a FILE: a snapshot (HDF5,\n"
      "                    Tipsy, GADGET-2 binary) or a text body file\n"
      "                    'x y z m [vx vy vz]' (default: %s)\n"
      "  --n N             bodies of a model (default: %" PRIu64 ")\n"
      "  --seed S          random seed of a model (default: %" PRIu64 ")\n"
      "  --model-mass M    a model's total mass in the run's mass unit\n"
      "                    (default: 1; 1e10 Msun with --units galactic)\n"
      "  --model-radius R  a model's virial radius (its N-body unit of\n"
      "                    length) in the run's length unit (default: 1).\n"
      "                    Its time unit is then sqrt(R^3 / (G M)), and\n"
      "                    --dt and --eps default to %g and %g of that\n"
      "                    time and of R\n"
      "  --types LIST      a snapshot's particle types to read as one set\n"
      "                    of bodies, in type order: 1,4 or all (default:\n"
      "                    a file of one type, not gas; others are refused)\n"
      "  --dt DT           time step, > 0 (default: %g)\n"
      "  --eta ETA         individual time steps (GADGET-4, SWIFT): each\n"
      "                    body takes power-of-two steps no longer than\n"
      "                    sqrt(2 ETA eps / |a|) (needs --eps > 0). 0.025\n"
      "                    (GADGET-4's default) suits systems near\n"
      "                    equilibrium; collapses and close encounters\n"
      "                    need less (a cold collapse: about 0.003 for\n"
      "                    0.1 %% energy error): watch the run's dE/E.\n"
      "                    A step of the run (--steps, the outputs'\n"
      "                    cadence) is then the longest step, --dt-max\n"
      "                    (default: 0, one global step)\n"
      "  --dt-max DT       with --eta, the longest step (default: --dt)\n"
      "  --dt-min DT       with --eta, the shortest: dt-max / 2^K for the\n"
      "                    largest K with that >= DT, K <= 40 (default:\n"
      "                    dt-max / 2^16); bodies that ask for less are\n"
      "                    counted and reported\n"
      "  --steps N         the step at which the run ends, counted from the\n"
      "                    initial conditions (default: %d)\n"
      "  --t-end T         or the time at which it ends (the first step at\n"
      "                    or past T)\n"
      "  --out DIR         output directory, created if needed: snapshots\n"
      "                    DIR/snapshot_NNNN.hdf5 (NNNN = step / K, 0000 the\n"
      "                    initial state), DIR/checkpoint.hdf5,\n"
      "                    DIR/statistics.csv (default: %s; on a restart,\n"
      "                    the checkpoint's directory). One run at a time\n"
      "                    writes to a directory (it is locked)\n"
      "  --force           start afresh in a directory that holds a run,\n"
      "                    removing that run's snapshots, checkpoint,\n"
      "                    statistics and parameters first (a restart,\n"
      "                    which continues its run, needs none)\n"
      "  --snapshot-every K  steps between snapshots, 0 for the initial one\n"
      "                    only (default: %d); with this or --snapshot-dt\n"
      "                    the end has one too, numbered after the last,\n"
      "                    when the cadence missed it (docs/outputs.md)\n"
      "  --checkpoint-every K  steps between checkpoints; one is also\n"
      "                    written at the end (default: %d)\n"
      "  --stats-every K   steps between diagnostics, also done at every\n"
      "                    checkpoint (default: %d)\n"
      "  --snapshot-dt T   a snapshot at the first step at or after each\n"
      "                    multiple of T from the start (NNNN = that\n"
      "                    multiple), instead of --snapshot-every\n"
      "  --output-times FILE  snapshots at the times FILE lists (one a\n"
      "                    line in the run's time unit, '#' comments,\n"
      "                    increasing, none before the start; SWIFT's\n"
      "                    Snapshots:output_list), NNNN the line's rank\n"
      "                    from 0: each the state of the step before it\n"
      "                    carried to that time (x + v tau + a tau^2 / 2,\n"
      "                    v + a tau), as SWIFT and GADGET-4 drift to an\n"
      "                    output time; instead of --snapshot-every/-dt\n"
      "  --stats-dt T      diagnostics likewise, instead of --stats-every\n"
      "  --snapshot-fields LIST  the datasets of a snapshot: all, or a list\n"
      "                    of Velocities, Accelerations, Potentials "
      "(Coordinates,\n"
      "                    Masses and ParticleIDs are always written; default\n"
      "                    all). Checkpoints hold everything\n"
      "  --snapshot-precision P  single or double (default) for the\n"
      "                    snapshots' floating-point datasets\n"
      "  --snapshot-compression L  gzip level 0 (none, default) to 9, with\n"
      "                    HDF5's shuffle, as SWIFT's Snapshots:compression\n"
      "  --unit-mass M, --unit-length L, --unit-velocity V  the unit system\n"
      "                    (SWIFT's InternalUnitSystem: grams, centimetres,\n"
      "                    cm/s; all three or none; default: N-body units,\n"
      "                    G = 1). G then derives from them (6.67430e-8 in\n"
      "                    cgs) unless --G is given, which must agree to 1%%.\n"
      "                    Snapshots carry the units for swiftsimio, yt and\n"
      "                    pynbody; see docs/units.md\n"
      "  --unit-current I, --unit-temp T  SWIFT's other two units (default 1)\n"
      "  --units U         nbody, galactic (1 kpc, 1e10 Msun, 1 km/s) or\n"
      "                    cosmological (1 Mpc, 1e10 Msun, 1 km/s): the three\n"
      "                    units at once\n"
      "  --restart FILE    continue from a checkpoint: the result is bit\n"
      "                    for bit the run straight through on the same\n"
      "                    device; the settings come from the checkpoint,\n"
      "                    and flags may change only the end, the outputs,\n"
      "                    the threads and the device. Ctrl-C, SIGTERM or\n"
      "                    SIGHUP stops a run after the step under way\n"
      "                    (with --eta, the sub-step) with a checkpoint;\n"
      "                    step 0 writes one too\n"
      "  --progress P      auto (a live line when stderr is a terminal), on\n"
      "                    or off (default: %s)\n"
      "  --plots P         on: end with DIR/picture.png (the bodies' surface\n"
      "                    density along z) and DIR/energy.png (the energy\n"
      "                    error against time; needs gnuplot), or off\n"
      "                    (default: %s)\n"
      "  --max-energy-error X  stop the run (exit 1) at the first\n"
      "                    diagnostics step whose |dE/E| passes X; 0: never\n"
      "                    (default: %g). A warning is printed once |dE/E|\n"
      "                    passes %g\n"
      "Solver (the leaf size defaults to %d on the CPU, %d with the gpu\n"
      "schedule and %d with hybrid; --eps defaults to %g here, times\n"
      "(%d / N)^(1/3) for a model of N > %d bodies, and the softening to\n"
      "the spline, as in GADGET and SWIFT, where 'forces' and 'validate'\n"
      "use Plummer's):\n",
      d->ic, d->n, d->seed, DEFAULT_DT, DEFAULT_EPS, d->dt, DEFAULT_STEPS,
      d->out, d->snapshot_every, d->checkpoint_every, d->stats_every,
      d->progress, d->plots, DEFAULT_MAX_ENERGY_ERROR, RUN_ENERGY_WARNING,
      d->sc.cfg.leaf_size, d->sc.cfg.leaf_size, LEAF_HYBRID, DEFAULT_EPS,
      EPS_BODIES, EPS_BODIES);
  solver_cli_help(fp, &d->sc.cfg, 1);
  fprintf(fp, "  -h, --help        show this help\n"
              "\n"
              "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
              "error.\n");
}
