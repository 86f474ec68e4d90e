/* Settings of 'tilefmm run' (see run_options.h). */
#define _POSIX_C_SOURCE 200809L
#include "run_options.h"

#include "atomic_file.h"
#include "body_input.h"
#include "cli.h"
#include "params.h"
#include "run_state.h"

#include "tilefmm.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_N 262144
#define DEFAULT_STEPS 20
#define DEFAULT_DT 0.0078125 /* 1/128: t = step * dt exactly */
#define DEFAULT_EPS 0.01
#define DEFAULT_OUT "tilefmm_run"
/* Leaf sizes measured fastest for the main job on the H100 (262,144
 * Plummer bodies, accuracy 1e-3: bench/results/h100/gpu_schedule/s9,
 * ladder/main_leaf*.log): the gpu schedule 30.5 ms a step at 64, the
 * library's default (34.7 at 128, 38.0 at 256, 66.9 at 1024; in s8, before
 * the faster tree, M2M and L2L, 128 was ahead); hybrid, whose lists and far
 * field are the CPU's, at 1024. */
#define LEAF_HYBRID 1024

/* A parameter-file key, the flag it stands for, and whether a restart may
 * change it (free) or must keep it (the run's physics and solver). */
typedef struct run_key {
  const char *section, *key, *flag;
  int free;
} run_key;

static const run_key keys[] = {
    {"InitialConditions", "type", "--ic", 0},
    {"InitialConditions", "n", "--n", 0},
    {"InitialConditions", "seed", "--seed", 0},
    {"InitialConditions", "types", "--types", 0},
    {"TimeIntegration", "dt", "--dt", 0},
    {"TimeIntegration", "dt_max", "--dt-max", 0},
    {"TimeIntegration", "dt_min", "--dt-min", 0},
    {"TimeIntegration", "steps", "--steps", 1},
    {"TimeIntegration", "t_end", "--t-end", 1},
    {"Gravity", "G", "--G", 0},
    {"Gravity", "eps", "--eps", 0},
    {"Gravity", "eta", "--eta", 0},
    {"Gravity", "softening", "--softening", 0},
    {"Gravity", "method", "--method", 0},
    {"Gravity", "precision", "--precision", 0},
    {"Gravity", "accuracy", "--accuracy", 0},
    {"Gravity", "theta", "--theta", 0},
    {"Gravity", "order", "--order", 0},
    {"Gravity", "mac", "--mac", 0},
    {"Gravity", "leaf_size", "--leaf", 0},
    {"Gravity", "max_depth", "--max-depth", 0},
    {"Gravity", "device", "--device", 1},
    {"Gravity", "schedule", "--schedule", 1},
    {"Gravity", "tree_device", "--tree-device", 1},
    {"Gravity", "far_device", "--far-device", 1},
    {"GPU", "tile", "--gpu-tile", 0},
    {"GPU", "threads_per_body", "--gpu-threads-per-body", 0},
    {"GPU", "unroll", "--gpu-unroll", 0},
    {"GPU", "bodies_per_thread", "--gpu-bodies-per-thread", 0},
    {"Scheduler", "threads", "--threads", 1},
    {"Output", "directory", "--out", 1},
    {"Output", "snapshot_every", "--snapshot-every", 1},
    {"Output", "checkpoint_every", "--checkpoint-every", 1},
    {"Output", "statistics_every", "--stats-every", 1},
    {"Output", "progress", "--progress", 1},
    {"Output", "plots", "--plots", 1},
    {"Snapshots", "delta_time", "--snapshot-dt", 1},
    {"Snapshots", "fields", "--snapshot-fields", 1},
    {"Snapshots", "precision", "--snapshot-precision", 1},
    {"Snapshots", "compression", "--snapshot-compression", 1},
    {"InternalUnitSystem", "UnitMass_in_cgs", "--unit-mass", 0},
    {"InternalUnitSystem", "UnitLength_in_cgs", "--unit-length", 0},
    {"InternalUnitSystem", "UnitVelocity_in_cgs", "--unit-velocity", 0},
    {"InternalUnitSystem", "UnitCurrent_in_cgs", "--unit-current", 0},
    {"InternalUnitSystem", "UnitTemp_in_cgs", "--unit-temp", 0},
    {"Statistics", "delta_time", "--stats-dt", 1},
    {"Restart", "file", "--restart", 1},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* SWIFT's names (its parameter_example.yml) for settings tilefmm has, read
 * as the tilefmm key of the same flag; the canonical lists keep tilefmm's
 * names. TimeIntegration:time_begin has no flag: the run starts at its
 * initial conditions' time, which time_begin must equal (checked once the
 * initial conditions are read). */
static const run_key aliases[] = {
    {"InitialConditions", "file_name", "--ic", 0},
    {"TimeIntegration", "time_end", "--t-end", 1},
    {"TimeIntegration", "time_begin", NULL, 1},
    {"Gravity", "comoving_DM_softening", "--eps", 0},
    {"Gravity", "max_physical_DM_softening", "--eps", 0},
    {"Gravity", "theta_cr", "--theta", 0},
    {"PhysicalConstants", "G", "--G", 0},
};
#define NALIASES (sizeof aliases / sizeof aliases[0])

/* SWIFT's keys that tilefmm has no setting for, and what to do instead:
 * an error quoting the reason, rather than "unknown key". */
static const struct {
  const char *section, *key, *why;
} swift_only[] = {
    {"Snapshots", "basename",
     "SWIFT's key: tilefmm names its snapshots DIR/snapshot_NNNN.hdf5 (set DIR "
     "with Output:directory)"},
    {"Snapshots", "select_output",
     "SWIFT's key: tilefmm chooses a snapshot's datasets with "
     "Snapshots:fields (a list of names), not an output-list file"},
    {"Snapshots", "UnitMass_in_cgs",
     "SWIFT's key: tilefmm writes snapshots in its internal units "
     "(InternalUnitSystem), which every reader converts"},
    {"Snapshots", "UnitLength_in_cgs",
     "SWIFT's key: tilefmm writes snapshots in its internal units "
     "(InternalUnitSystem), which every reader converts"},
    {"Snapshots", "UnitVelocity_in_cgs",
     "SWIFT's key: tilefmm writes snapshots in its internal units "
     "(InternalUnitSystem), which every reader converts"},
    {"Snapshots", "subdir",
     "SWIFT's key: set the output directory with Output:directory"},
    {"Snapshots", "time_first",
     "SWIFT's key: tilefmm's snapshots fall at multiples of delta_time from "
     "the start"},
    {"Statistics", "time_first",
     "SWIFT's key: tilefmm's statistics fall at multiples of delta_time from "
     "the start"},
    {"Gravity", "epsilon_fmm",
     "SWIFT's key: tilefmm's force error target is Gravity:accuracy (a "
     "relative error, not SWIFT's adaptive criterion)"},
    {"Gravity", "mesh_side_length",
     "SWIFT's key: tilefmm's runs are not periodic and have no mesh"},
    {"Restarts", "enable",
     "SWIFT's key: tilefmm always writes DIR/checkpoint.hdf5 (every "
     "Output:checkpoint_every steps, at the end and on a signal)"},
    {"Restarts", "delta_hours",
     "SWIFT's key: checkpoints are every Output:checkpoint_every steps"},
};
#define NSWIFT_ONLY (sizeof swift_only / sizeof swift_only[0])
#define NTABLE (NKEYS + NALIASES + NSWIFT_ONLY)

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
static const struct {
  const char *name;
  double mass, length, velocity;
} presets[] = {
    {"nbody", 0, 0, 0},
    {"galactic", 1.98841e43, 3.0856775814913673e21, 1e5},
    {"cosmological", 1.98841e43, 3.0856775814913673e24, 1e5},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

static int preset_ok(const void *v) {
  const char *s = *(const char *const *)v;
  for (size_t k = 0; k < NPRESETS; k++)
    if (strcmp(presets[k].name, s) == 0)
      return 1;
  return 0;
}
static int gzip_level(const void *v) {
  return *(const int *)v >= 0 && *(const int *)v <= 9;
}

/* Takes s (allocated, or NULL when out of memory) into ro->owned, so that
 * run_options_free releases it. Returns s, or NULL (s released) when out
 * of memory. */
static char *keep(run_options *ro, char *s) {
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
  ro->dt = DEFAULT_DT;
  ro->steps = -1;
  ro->t_end = -1.0;
  ro->out = DEFAULT_OUT;
  ro->snapshot_every = 10;
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
       .valid = nonempty,
       .expect = "a directory"},
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

static args_option *find_opt(run_options *ro, const char *flag) {
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
      "stderr when it is a terminal. Units are N-body units for the models\n"
      "(G = M = 1, E = -1/4); a FILE's units are its own (set --G, --eps).\n"
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
      "  --types LIST      a snapshot's particle types to read as one set\n"
      "                    of bodies, in type order: 1,4 or all (default:\n"
      "                    a file of one type, not gas; others are refused)\n"
      "  --dt DT           time step, > 0 (default: %g)\n"
      "  --eta ETA         individual time steps (GADGET-4, SWIFT): each\n"
      "                    body takes power-of-two steps no longer than\n"
      "                    sqrt(2 ETA eps / |a|) (needs --eps > 0; 0.025 is\n"
      "                    usual). A step of the run (--steps, the outputs'\n"
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
      "                    only (default: %d)\n"
      "  --checkpoint-every K  steps between checkpoints; one is also\n"
      "                    written at the end (default: %d)\n"
      "  --stats-every K   steps between diagnostics, also done at every\n"
      "                    checkpoint (default: %d)\n"
      "  --snapshot-dt T   a snapshot at the first step at or after each\n"
      "                    multiple of T from the start (NNNN = that\n"
      "                    multiple), instead of --snapshot-every\n"
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
      "                    with a checkpoint\n"
      "  --progress P      auto (a live line when stderr is a terminal), on\n"
      "                    or off (default: %s)\n"
      "  --plots P         on: end with DIR/picture.png (the bodies' surface\n"
      "                    density along z) and DIR/energy.png (the energy\n"
      "                    error against time; needs gnuplot), or off\n"
      "                    (default: %s)\n"
      "Solver (the leaf size defaults to %d on the CPU, %d with the gpu\n"
      "schedule and %d with hybrid; --eps defaults to %g here, and the\n"
      "softening to the spline, as in GADGET and SWIFT, where 'forces' and\n"
      "'validate' use Plummer's):\n",
      d->ic, d->n, d->seed, d->dt, DEFAULT_STEPS, d->out, d->snapshot_every,
      d->checkpoint_every, d->stats_every, d->progress, d->plots,
      d->sc.cfg.leaf_size, d->sc.cfg.leaf_size, LEAF_HYBRID, DEFAULT_EPS);
  solver_cli_help(fp, &d->sc.cfg);
  fprintf(fp, "  -h, --help        show this help\n"
              "\n"
              "Exit status: 0 on success, 1 on a runtime error, 2 on a usage "
              "error.\n");
}

/* The table of every key the file and -P may hold: tilefmm's, SWIFT's
 * aliases, then SWIFT's keys refused with a reason. */
static void key_table(params_key *pk) {
  for (size_t k = 0; k < NKEYS; k++)
    pk[k] = (params_key){keys[k].section, keys[k].key, keys[k].flag, NULL};
  for (size_t k = 0; k < NALIASES; k++)
    pk[NKEYS + k] =
        (params_key){aliases[k].section, aliases[k].key,
                     aliases[k].flag != NULL ? aliases[k].flag : "", NULL};
  for (size_t k = 0; k < NSWIFT_ONLY; k++)
    pk[NKEYS + NALIASES + k] = (params_key){
        swift_only[k].section, swift_only[k].key, "", swift_only[k].why};
}

static const params_key *key_of(const params_key *pk, const char *section,
                                const char *key) {
  for (size_t k = 0; k < NTABLE; k++)
    if (strcmp(pk[k].section, section) == 0 && strcmp(pk[k].key, key) == 0 &&
        pk[k].refused == NULL)
      return &pk[k];
  return NULL;
}

/* Appends a given parameter (copies of its words). */
static int add_given(run_options *ro, const char *section, const char *key,
                     const char *value, const char *where, const char *opt) {
  run_given *g = realloc(ro->given, (ro->ngiven + 1) * sizeof *g);
  if (g == NULL)
    return 0;
  ro->given = g;
  g = &ro->given[ro->ngiven++];
  *g = (run_given){strdup(section),
                   strdup(key),
                   strdup(value),
                   strdup(where),
                   opt[0] != '\0' ? opt : NULL,
                   NULL};
  return g->section != NULL && g->key != NULL && g->value != NULL &&
         g->where != NULL;
}

/* Takes "-P S:k:v", "--param S:k:v" and "--param=S:k:v" out of argv into
 * ro->given, the rest into kept (*nkept words). Returns the number of
 * errors printed. */
static int take_overrides(run_options *ro, const params_key *pk, int argc,
                          char **argv, char **kept, int *nkept) {
  int errors = 0;
  *nkept = 0;
  for (int i = 0; i < argc; i++) {
    const char *word = NULL;
    if (strcmp(argv[i], "-P") == 0 || strcmp(argv[i], "--param") == 0) {
      if (i + 1 >= argc) {
        cli_error("%s: missing value (Section:key:value)", argv[i]);
        errors++;
        continue;
      }
      word = argv[++i];
    } else if (strncmp(argv[i], "--param=", 8) == 0) {
      word = argv[i] + 8;
    } else {
      kept[(*nkept)++] = argv[i];
      continue;
    }
    /* The value is everything after the second colon: a path may hold
     * colons. */
    const char *c1 = strchr(word, ':');
    const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL || c1 == word || c2 == c1 + 1 || c2[1] == '\0') {
      cli_error("-P '%s': expected Section:key:value (say "
                "TimeIntegration:dt_max:0.01)",
                word);
      errors++;
      continue;
    }
    char section[256], key[256];
    snprintf(section, sizeof section, "%.*s", (int)(c1 - word), word);
    snprintf(key, sizeof key, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    const params_key *k = key_of(pk, section, key);
    if (k == NULL) {
      params_report_unknown("-P", section, key, pk, NTABLE);
      errors++;
    } else if (!add_given(ro, section, key, c2 + 1, "-P", k->flag)) {
      cli_error("out of memory");
      errors++;
    }
  }
  return errors;
}

static int same_source(const run_given *a, const run_given *b) {
  return (strcmp(a->where, "-P") == 0) == (strcmp(b->where, "-P") == 0);
}

/* Two parameters of one source (the file, or -P) that set one flag: an
 * alias and its tilefmm key, two aliases, or one -P twice. Returns the
 * number of errors printed. */
static int report_clashes(const run_options *ro) {
  int errors = 0;
  for (size_t i = 0; i < ro->ngiven; i++) {
    const run_given *a = &ro->given[i];
    for (size_t j = i + 1; j < ro->ngiven; j++) {
      const run_given *b = &ro->given[j];
      const int same_key =
          strcmp(a->section, b->section) == 0 && strcmp(a->key, b->key) == 0;
      if (!same_source(a, b) ||
          (a->opt == NULL ? !same_key
                          : b->opt == NULL || strcmp(a->opt, b->opt) != 0))
        continue;
      if (same_key)
        cli_error("%s: %s:%s given more than once", b->where, b->section,
                  b->key);
      else
        cli_error("%s: %s:%s and %s: %s:%s both set %s: give one", a->where,
                  a->section, a->key, b->where, b->section, b->key, a->opt);
      errors++;
    }
  }
  return errors;
}

/* Whether a -P sets flag (which then overrides the file). */
static int set_by_override(const run_options *ro, const char *flag) {
  for (size_t k = 0; k < ro->ngiven; k++)
    if (strcmp(ro->given[k].where, "-P") == 0 && ro->given[k].opt != NULL &&
        strcmp(ro->given[k].opt, flag) == 0)
      return 1;
  return 0;
}

/* Sets every given parameter that neither a flag nor a -P overrides.
 * Returns the number of errors printed. */
static int apply_given(run_options *ro) {
  int errors = 0;
  for (size_t k = 0; k < ro->ngiven; k++) {
    run_given *g = &ro->given[k];
    char where[600];
    snprintf(where, sizeof where, "%s: %s:%s", g->where, g->section, g->key);
    if (g->opt == NULL) { /* time_begin */
      args_option o = {.name = "time_begin",
                       .kind = ARGS_DOUBLE,
                       .value = &ro->time_begin,
                       .expect = "a number"};
      if (args_set(&o, g->value, where))
        ro->time_begin_given = 1;
      else
        errors++;
      continue;
    }
    args_option *o = find_opt(ro, g->opt);
    if (o->seen) {
      g->overridden_by = o->name;
      continue;
    }
    if (strcmp(g->where, "-P") != 0 && set_by_override(ro, g->opt)) {
      g->overridden_by = "-P";
      continue;
    }
    /* A string setting points at the word, which ro keeps. */
    if (!args_set(o, g->value, where))
      errors++;
    ro->explicit_[o - ro->opts] = 1;
  }
  return errors;
}

int run_options_parse(run_options *ro, int argc, char **argv) {
  params_key pk[NTABLE];
  key_table(pk);
  char **kept = malloc((size_t)(argc + 1) * sizeof *kept);
  if (kept == NULL) {
    cli_error("out of memory");
    return CLI_RUNTIME_ERROR;
  }
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      free(kept);
      run_options d;
      run_options_init(&d);
      run_options_help(stdout, &d);
      return -1;
    }
  int nkept = 0;
  /* The overrides are read first, kept apart, and placed after the file's
   * parameters below. */
  run_options over;
  memset(&over, 0, sizeof over);
  int errors = take_overrides(&over, pk, argc, argv, kept, &nkept);
  const args_result parsed = args_parse(nkept, kept, ro->opts, RUN_FLAGS);
  free(kept);
  /* After a bad -P the file is still read, its errors reported too. */
  if (parsed == ARGS_ERROR) {
    run_options_free(&over);
    fprintf(stderr, "Try 'tilefmm run --help'.\n");
    return CLI_USAGE_ERROR;
  }
  for (size_t k = 0; k < RUN_FLAGS; k++)
    ro->explicit_[k] = ro->opts[k].seen;
  if (ro->params_path != NULL) {
    params p;
    atomic_file_protect(ro->params_path);
    errors += !params_read(ro->params_path, pk, NTABLE, &p);
    for (size_t e = 0; p.complete && e < p.count; e++) {
      char where[512];
      snprintf(where, sizeof where, "%s:%d", p.path, p.entries[e].line);
      const params_entry *pe = &p.entries[e];
      if (!add_given(ro, pe->section, pe->key, pe->value, where,
                     key_of(pk, pe->section, pe->key)->flag)) {
        cli_error("out of memory");
        errors++;
      }
    }
    const int complete = p.complete;
    params_free(&p);
    if (!complete) {
      run_options_free(&over);
      return CLI_USAGE_ERROR;
    }
  }
  for (size_t k = 0; k < over.ngiven; k++) {
    const run_given *g = &over.given[k];
    if (!add_given(ro, g->section, g->key, g->value, g->where,
                   g->opt != NULL ? g->opt : "")) {
      cli_error("out of memory");
      errors++;
    }
  }
  run_options_free(&over);
  errors += report_clashes(ro);
  errors += apply_given(ro);
  return errors == 0 ? CLI_OK : CLI_USAGE_ERROR;
}

int run_options_merge_checkpoint(run_options *ro, const char *path,
                                 const snapshot_attr *given, size_t count) {
  const int end_given = ro->explicit_[find_opt(ro, "--steps") - ro->opts] ||
                        ro->explicit_[find_opt(ro, "--t-end") - ro->opts];
  for (size_t a = 0; a < count; a++) {
    const char *colon = strchr(given[a].name, ':');
    const run_key *k = NULL;
    for (size_t j = 0; colon != NULL && j < NKEYS; j++)
      if (strncmp(given[a].name, keys[j].section,
                  (size_t)(colon - given[a].name)) == 0 &&
          strlen(keys[j].section) == (size_t)(colon - given[a].name) &&
          strcmp(colon + 1, keys[j].key) == 0)
        k = &keys[j];
    if (k == NULL) {
      cli_error("%s: unknown parameter '%s' in /Parameters: not a checkpoint "
                "of this version of tilefmm run",
                path, given[a].name);
      return 0;
    }
    args_option *o = find_opt(ro, k->flag);
    const size_t i = (size_t)(o - ro->opts);
    if (strcmp(k->flag, "--t-end") == 0 || strcmp(k->flag, "--restart") == 0 ||
        strcmp(k->flag, "--out") == 0)
      continue; /* the end is --steps; the restart is this one; the
                 * directory is the checkpoint's (below) */
    if (strcmp(k->flag, "--steps") == 0 && end_given)
      continue;
    if (ro->explicit_[i])
      continue; /* compared once every setting is final */
    if (strcmp(k->flag, "--G") == 0)
      ro->G_kept = 1; /* not derived again from the units */
    /* A string setting points at its word: copy the checkpoint's, which
     * is released before the run ends. */
    char where[512];
    snprintf(where, sizeof where, "%s: /Parameters %s", path, given[a].name);
    const char *word = o->kind == ARGS_STRING ? keep(ro, strdup(given[a].value))
                                              : given[a].value;
    if (word == NULL)
      cli_error("out of memory");
    if (word == NULL || !args_set(o, word, where))
      return 0;
  }
  if (!ro->explicit_[find_opt(ro, "--out") - ro->opts]) {
    const char *slash = strrchr(path, '/');
    ro->out = keep(ro, slash == NULL   ? strdup(".")
                       : slash == path ? strdup("/")
                                       : strndup(path, (size_t)(slash - path)));
    if (ro->out == NULL) {
      cli_error("out of memory");
      return 0;
    }
  }
  return 1;
}

/* The snapshot output settings, parsed (checked by their options). */
static void finish_output(run_options *ro) {
  snapshot_parse_fields(ro->snapshot_fields, &ro->output.fields);
  ro->output.single = strcmp(ro->snapshot_precision, "single") == 0;
  ro->output.compression = ro->snapshot_compression;
}

/* --units: the three units of its preset, as if given by their flags
 * (so that the canonical list and a restart hold them); with any of those
 * flags too, refused. */
static int apply_preset(run_options *ro) {
  static const char *const flags[] = {"--unit-mass", "--unit-length",
                                      "--unit-velocity"};
  for (size_t k = 0; k < 3; k++)
    if (run_options_explicit(ro, flags[k])) {
      cli_error("--units %s and %s both given: choose one", ro->units_preset,
                flags[k]);
      return 0;
    }
  for (size_t k = 0; k < NPRESETS; k++)
    if (strcmp(presets[k].name, ro->units_preset) == 0) {
      ro->units.mass = presets[k].mass;
      ro->units.length = presets[k].length;
      ro->units.velocity = presets[k].velocity;
    }
  for (size_t k = 0; units_physical(&ro->units) && k < 3; k++)
    ro->explicit_[find_opt(ro, flags[k]) - ro->opts] = 1;
  return 1;
}

int run_options_units(run_options *ro) {
  units *u = &ro->units;
  if (ro->units_preset != NULL && !ro->preset_applied) {
    if (!apply_preset(ro))
      return 0;
    ro->preset_applied = 1;
  }
  static const char *const need[] = {"--unit-mass", "--unit-length",
                                     "--unit-velocity"};
  const double given[] = {u->mass, u->length, u->velocity};
  int count = 0;
  for (int k = 0; k < 3; k++)
    count += given[k] > 0;
  if (count != 0 && count != 3) {
    char missing[128] = "";
    for (int k = 0; k < 3; k++)
      if (!(given[k] > 0))
        snprintf(missing + strlen(missing), sizeof missing - strlen(missing),
                 "%s%s", missing[0] != '\0' ? ", " : "", need[k]);
    cli_error("InternalUnitSystem: UnitMass_in_cgs, UnitLength_in_cgs and "
              "UnitVelocity_in_cgs (--unit-mass, --unit-length, "
              "--unit-velocity) come together: missing %s",
              missing);
    return 0;
  }
  if (count == 0) {
    if (u->current > 0 || u->temperature > 0) {
      cli_error("InternalUnitSystem: UnitCurrent_in_cgs and UnitTemp_in_cgs "
                "need the mass, length and velocity units too");
      return 0;
    }
    return 1; /* N-body units: G as given, 1 by default */
  }
  if (!(u->current > 0))
    u->current = 1;
  if (!(u->temperature > 0))
    u->temperature = 1;
  double *G = &ro->sc.cfg.G;
  const double derived = units_G(u);
  if (!run_options_explicit(ro, "--G") && !ro->G_kept) {
    *G = derived;
    return 1;
  }
  if (fabs(*G - derived) > UNITS_G_TOLERANCE * derived) {
    char text[160];
    cli_error("Gravity:G (--G) %.9g contradicts the unit system (%s), in "
              "which G = %.9g (G = %.5e in cgs): drop Gravity:G to derive it "
              "from the units, or give the units it belongs to",
              *G, units_describe(u, text, sizeof text), derived, UNITS_G_CGS);
    return 0;
  }
  return 1; /* the G given, within UNITS_G_TOLERANCE of the units' */
}

int run_options_adopt_units(run_options *ro, const units *u) {
  ro->units = *u;
  const char *flags[] = {"--unit-mass", "--unit-length", "--unit-velocity",
                         "--unit-current", "--unit-temp"};
  for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
    ro->explicit_[find_opt(ro, flags[k]) - ro->opts] = 1;
  return run_options_units(ro);
}

int run_options_finish(run_options *ro) {
  solver_cli_finish(&ro->sc);
  finish_output(ro);
  if (!run_options_units(ro))
    return 0;
  tfmm_config *c = &ro->sc.cfg;
  if (ro->steps >= 0 && ro->t_end > 0) {
    cli_error("--steps and --t-end both given: choose one end");
    return 0;
  }
  if (ro->steps < 0 && ro->t_end < 0)
    ro->steps = DEFAULT_STEPS;
  if (ro->eta == 0 && (ro->dt_max > 0 || ro->dt_min > 0)) {
    cli_error("--dt-max and --dt-min need individual time steps (--eta)");
    return 0;
  }
  if (ro->snapshot_dt > 0 && run_options_explicit(ro, "--snapshot-every")) {
    cli_error("--snapshot-every and --snapshot-dt both given: choose one");
    return 0;
  }
  if (ro->stats_dt > 0 && run_options_explicit(ro, "--stats-every")) {
    cli_error("--stats-every and --stats-dt both given: choose one");
    return 0;
  }
  if (ro->sc.leaf == NULL) {
    /* The library's default, but LEAF_HYBRID for hybrid beside a GPU: the
     * device is the library's plan's. */
    tfmm_plan plan = {.device = TFMM_DEVICE_CPU};
    tfmm_plan_resolve(c, 0, &plan, NULL, 0);
    tfmm_config d;
    tfmm_config_defaults(&d);
    const int gpu_near =
        (c->method == TFMM_METHOD_FMM || c->method == TFMM_METHOD_BH) &&
        plan.device == TFMM_DEVICE_GPU;
    c->leaf_size = gpu_near && c->schedule == TFMM_SCHEDULE_HYBRID
                       ? LEAF_HYBRID
                       : d.leaf_size;
  }
  /* The words every canonical list holds: names, and numbers that read
   * back to the same bits. */
  ro->sc.method = tfmm_method_name(c->method);
  ro->sc.device = tfmm_device_name(c->device);
  ro->sc.schedule = tfmm_schedule_name(c->schedule);
  ro->sc.tree_device = tfmm_device_name(c->tree_device);
  ro->sc.far_device = tfmm_device_name(c->far_device);
  ro->sc.softening = tfmm_softening_name(c->softening);
  ro->sc.precision = tfmm_precision_name(c->precision);
  ro->sc.mac = tfmm_mac_name(c->mac);
  char *leaf = keep(ro, malloc(32)), *theta = keep(ro, malloc(32)),
       *order = keep(ro, malloc(32));
  if (leaf == NULL || theta == NULL || order == NULL) {
    cli_error("out of memory");
    return 0;
  }
  if (c->leaf_size == TFMM_LEAF_AUTO)
    snprintf(leaf, 32, "auto");
  else
    snprintf(leaf, 32, "%d", c->leaf_size);
  if (c->theta == TFMM_FROM_ACCURACY)
    snprintf(theta, 32, "auto");
  else
    snprintf(theta, 32, "%.17g", c->theta);
  if (c->order == TFMM_FROM_ACCURACY)
    snprintf(order, 32, "auto");
  else
    snprintf(order, 32, "%d", c->order);
  ro->sc.leaf = leaf;
  ro->sc.theta = theta;
  ro->sc.order = order;
  return 1;
}

/* The settings a checkpoint of tilefmm before the softening kernels and
 * the accuracy target lacks, and the values it ran with. */
static const struct {
  const char *name, *value;
} legacy[] = {{"Gravity:softening", "plummer"},
              {"Gravity:precision", "single"},
              {"Gravity:accuracy", "0.001"},
              {"Gravity:mac", "geometric"}};
#define NLEGACY (sizeof legacy / sizeof legacy[0])

/* The settings a checkpoint of tilefmm before individual time steps
 * lacks: it ran with one global step. */
static const struct {
  const char *name, *value;
} before_time_bins[] = {{"Gravity:eta", "0"},
                        {"TimeIntegration:dt_max", "0"},
                        {"TimeIntegration:dt_min", "0"}};

/* Adds to *attrs the entries of names/values (count n) it lacks. Returns
 * how many, or -1 when out of memory (printed). */
static int add_missing(snapshot_attr **attrs, size_t *count,
                       const char *const *names, const char *const *values,
                       size_t n) {
  int added = 0;
  for (size_t k = 0; k < n; k++) {
    if (snapshot_attr_find(*attrs, *count, names[k]) != NULL)
      continue;
    snapshot_attr *a = realloc(*attrs, (*count + 1) * sizeof *a);
    if (a == NULL) {
      cli_error("out of memory");
      return -1;
    }
    *attrs = a;
    a[*count].name = strdup(names[k]);
    a[*count].value = strdup(values[k]);
    (*count)++;
    if (a[*count - 1].name == NULL || a[*count - 1].value == NULL) {
      cli_error("out of memory");
      return -1;
    }
    added++;
  }
  return added;
}

int run_options_upgrade_checkpoint(const char *path, snapshot_attr **attrs,
                                   size_t *count) {
  const char *names[NLEGACY], *values[NLEGACY];
  for (size_t k = 0; k < NLEGACY; k++) {
    names[k] = legacy[k].name;
    values[k] = legacy[k].value;
  }
  const int added = add_missing(attrs, count, names, values, NLEGACY);
  if (added < 0)
    return 0;
  if (added > 0)
    fprintf(stderr,
            "tilefmm run: note: %s predates the softening kernels and the "
            "accuracy target: it continues with softening plummer, precision "
            "single, accuracy 1e-3, mac geometric and its own theta and "
            "order\n",
            path);
  enum { NBINS = sizeof before_time_bins / sizeof before_time_bins[0] };
  const char *bn[NBINS], *bv[NBINS];
  for (size_t k = 0; k < NBINS; k++) {
    bn[k] = before_time_bins[k].name;
    bv[k] = before_time_bins[k].value;
  }
  return add_missing(attrs, count, bn, bv, NBINS) >= 0;
}

static char *format_value(const args_option *o) {
  char buf[64];
  switch (o->kind) {
  case ARGS_DOUBLE:
    snprintf(buf, sizeof buf, "%.17g", *(const double *)o->value);
    break;
  case ARGS_INT:
    snprintf(buf, sizeof buf, "%d", *(const int *)o->value);
    break;
  case ARGS_U64:
    snprintf(buf, sizeof buf, "%" PRIu64, *(const uint64_t *)o->value);
    break;
  case ARGS_STRING: {
    const char *s = *(const char *const *)o->value;
    return strdup(s != NULL ? s : "");
  }
  case ARGS_FLAG:
    snprintf(buf, sizeof buf, "%s", *(const int *)o->value ? "true" : "false");
    break;
  }
  return strdup(buf);
}

snapshot_attr *run_options_attrs(const run_options *ro, size_t *count) {
  snapshot_attr *a = calloc(NKEYS, sizeof *a);
  size_t m = 0;
  for (size_t k = 0; a != NULL && k < NKEYS; k++) {
    const args_option *o = NULL;
    for (size_t j = 0; j < RUN_FLAGS; j++)
      if (strcmp(ro->opts[j].name, keys[k].flag) == 0)
        o = &ro->opts[j];
    /* Unset: no end time, no restart file. */
    if ((strcmp(keys[k].flag, "--t-end") == 0 && ro->t_end < 0) ||
        (strcmp(keys[k].flag, "--restart") == 0 && ro->restart_path == NULL) ||
        (strcmp(keys[k].flag, "--types") == 0 && ro->types == NULL) ||
        (strncmp(keys[k].flag, "--unit-", 7) == 0 &&
         !units_physical(&ro->units)))
      continue;
    const size_t len = strlen(keys[k].section) + strlen(keys[k].key) + 2;
    a[m].name = malloc(len);
    a[m].value = format_value(o);
    if (a[m].name == NULL || a[m].value == NULL) {
      run_options_free_attrs(a, m + 1);
      return NULL;
    }
    snprintf(a[m].name, len, "%s:%s", keys[k].section, keys[k].key);
    m++;
  }
  *count = m;
  return a;
}

void run_options_free_attrs(snapshot_attr *a, size_t count) {
  for (size_t k = 0; a != NULL && k < count; k++) {
    free(a[k].name);
    free(a[k].value);
  }
  free(a);
}

/* Why the run did not use a given parameter, or NULL when it did (or
 * when a -P or a flag overrode it: those are listed apart). */
static const char *unused_reason(const run_options *ro, const run_given *g) {
  if (g->overridden_by != NULL || g->opt == NULL)
    return NULL; /* written as comments; time_begin: checked */
  const tfmm_config *c = &ro->sc.cfg;
  const char *f = g->opt;
  /* A file's n is checked against its bodies: used. */
  if (strcmp(f, "--seed") == 0 && !run_state_is_model(ro->ic))
    return "the initial conditions are a file, not a model";
  if (strcmp(f, "--types") == 0 && run_state_is_model(ro->ic))
    return "the initial conditions are a model, not a snapshot";
  if (c->method != TFMM_METHOD_FMM && c->method != TFMM_METHOD_BH &&
      (strcmp(f, "--theta") == 0 || strcmp(f, "--order") == 0 ||
       strcmp(f, "--mac") == 0 || strcmp(f, "--accuracy") == 0 ||
       strcmp(f, "--leaf") == 0 || strcmp(f, "--max-depth") == 0))
    return "the method has no tree";
  if (c->device == TFMM_DEVICE_CPU && strncmp(f, "--gpu-", 6) == 0)
    return "the forces run on the CPU";
  return NULL;
}

/* Whether word reads back from YAML, unquoted, as itself. */
static int plain_word(const char *word) {
  if (*word == '\0')
    return 0;
  for (const char *s = word; *s != '\0'; s++)
    if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
               "0123456789._+-/",
               *s) == NULL)
      return 0;
  return 1;
}

int run_options_write_unused(FILE *fp, const run_options *ro) {
  fprintf(fp, "# The parameters given to this run (its parameter file and "
              "-P) that it did not use,\n# each with the reason.\n");
  /* Values a -P or a flag replaced: comments, since the key may be given
   * again below (and a key twice is no YAML mapping). */
  for (size_t i = 0; i < ro->ngiven; i++) {
    const run_given *g = &ro->given[i];
    if (g->overridden_by != NULL)
      fprintf(fp, "# %s:%s: %s, overridden by %s (%s)\n", g->section, g->key,
              g->value, g->overridden_by, g->where);
  }
  size_t written = 0;
  /* Section by section, in the order each first appears. */
  for (size_t i = 0; i < ro->ngiven; i++) {
    const run_given *first = &ro->given[i];
    int earlier = 0;
    for (size_t j = 0; j < i && !earlier; j++)
      earlier = strcmp(ro->given[j].section, first->section) == 0;
    if (earlier)
      continue;
    int heading = 0;
    for (size_t j = i; j < ro->ngiven; j++) {
      const run_given *g = &ro->given[j];
      const char *why = unused_reason(ro, g);
      if (why == NULL || strcmp(g->section, first->section) != 0)
        continue;
      if (!heading)
        fprintf(fp, "%s:\n", g->section);
      heading = 1;
      fprintf(fp, "  %s: ", g->key);
      if (plain_word(g->value)) {
        fputs(g->value, fp);
      } else {
        fputc('"', fp);
        for (const char *s = g->value; *s != '\0'; s++)
          fprintf(fp, (*s == '"' || *s == '\\') ? "\\%c" : "%c", *s);
        fputc('"', fp);
      }
      fprintf(fp, "  # %s (%s)\n", why, g->where);
      written++;
    }
  }
  if (written == 0)
    fprintf(fp, "{}\n");
  return !ferror(fp);
}

/* A string is quoted so that YAML reads it back as that string. */
int run_options_write_yaml(FILE *fp, const snapshot_attr *a, size_t count,
                           const char *note) {
  fprintf(fp, "# The parameters of this run, as 'tilefmm run --params' "
              "reads them.\n");
  if (note != NULL)
    fprintf(fp, "# %s\n", note);
  const char *section = "";
  size_t section_len = 0;
  for (size_t k = 0; k < count; k++) {
    const char *colon = strchr(a[k].name, ':');
    const size_t len = (size_t)(colon - a[k].name);
    if (len != section_len || strncmp(a[k].name, section, len) != 0) {
      fprintf(fp, "%.*s:\n", (int)len, a[k].name);
      section = a[k].name;
      section_len = len;
    }
    const run_key *rk = NULL;
    for (size_t j = 0; j < NKEYS; j++)
      if (strcmp(keys[j].key, colon + 1) == 0 &&
          strncmp(keys[j].section, a[k].name, len) == 0)
        rk = &keys[j];
    /* Paths may hold anything: quote them. */
    const int quote = rk != NULL && (strcmp(rk->flag, "--ic") == 0 ||
                                     strcmp(rk->flag, "--out") == 0 ||
                                     strcmp(rk->flag, "--restart") == 0);
    if (quote) {
      fprintf(fp, "  %s: \"", colon + 1);
      for (const char *s = a[k].value; *s != '\0'; s++)
        fprintf(fp, (*s == '"' || *s == '\\') ? "\\%c" : "%c", *s);
      fprintf(fp, "\"\n");
    } else {
      fprintf(fp, "  %s: %s\n", colon + 1, a[k].value);
    }
  }
  return !ferror(fp);
}

/* Whether two written values of key are one setting: numbers by value
 * ("0.50" is 0.5), words and paths by their text. */
static int same_setting(const run_key *key, const char *a, const char *b) {
  if (strcmp(a, b) == 0)
    return 1;
  if (strcmp(key->flag, "--ic") == 0)
    return 0;
  char *end_a = NULL, *end_b = NULL;
  double x = strtod(a, &end_a), y = strtod(b, &end_b);
  return end_a != a && *end_a == '\0' && end_b != b && *end_b == '\0' && x == y;
}

int run_options_compare(const run_options *ro, const char *path,
                        const snapshot_attr *given, size_t count) {
  size_t m = 0;
  snapshot_attr *now = run_options_attrs(ro, &m);
  if (now == NULL) {
    cli_error("out of memory");
    return 0;
  }
  int ok = 1;
  for (size_t k = 0; ok && k < NKEYS; k++) {
    if (keys[k].free)
      continue;
    char name[96];
    snprintf(name, sizeof name, "%s:%s", keys[k].section, keys[k].key);
    const char *was = snapshot_attr_find(given, count, name);
    const char *is = snapshot_attr_find(now, m, name);
    if (was == NULL && is == NULL)
      continue; /* unset in both (InitialConditions:types) */
    if (was == NULL || is == NULL || !same_setting(&keys[k], was, is)) {
      cli_error("%s: this checkpoint was written with %s = %s, not %s (%s): "
                "a restart continues the same run; drop the setting or start "
                "a new run",
                path, name, was != NULL ? was : "(unset)",
                is != NULL ? is : "(unset)", keys[k].flag);
      ok = 0;
    }
  }
  run_options_free_attrs(now, m);
  return ok;
}
