/* The state of a run (see run_state.h). */
#define _POSIX_C_SOURCE 200809L
#include "run_state.h"

#include "body_input.h"

#include "bodyio.h"
#include "cli.h"
#include "mpi_cli.h"
#include "run_ranks.h"

#include "tilefmm.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Written into /RunState:format; a checkpoint of another format is
 * refused. */
#define CHECKPOINT_FORMAT "tilefmm-run-checkpoint-1"

typedef tfmm_status (*ic_model)(size_t, uint64_t, double *, double *, double *);

static const struct {
  const char *name;
  ic_model make;
} models[] = {{"plummer", tfmm_ic_plummer},
              {"hernquist", tfmm_ic_hernquist},
              {"uniform", tfmm_ic_uniform},
              {"cold", tfmm_ic_cold},
              {"merger", tfmm_ic_merger}};

int run_state_is_model(const char *name) {
  for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
    if (strcmp(models[k].name, name) == 0)
      return 1;
  return 0;
}

void run_state_free(run_state *s) {
  free(s->pos);
  free(s->vel);
  free(s->mass);
  free(s->acc);
  free(s->pot);
  free(s->ids);
  free(s->bins);
  memset(s, 0, sizeof *s);
}

/* Arrays for n bodies; ids 1..n. */
static int allocate(run_state *s, size_t n) {
  memset(s, 0, sizeof *s);
  s->n = n;
  s->pos = malloc(3 * n * sizeof(double));
  s->vel = malloc(3 * n * sizeof(double));
  s->mass = malloc(n * sizeof(double));
  s->ids = malloc(n * sizeof(uint64_t));
  if (s->pos == NULL || s->vel == NULL || s->mass == NULL || s->ids == NULL) {
    cli_error("out of memory for %zu bodies", n);
    run_state_free(s);
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    s->ids[i] = (uint64_t)i + 1;
  return 1;
}

static int from_model(run_state *s, ic_model make, const run_options *ro) {
  if (!allocate(s, (size_t)ro->n))
    return 0;
  tfmm_status st = make(s->n, ro->seed, s->pos, s->vel, s->mass);
  if (st != TFMM_OK) {
    cli_error("--ic %s with --n %" PRIu64 ": %s", ro->ic, ro->n,
              tfmm_status_name(st));
    run_state_free(s);
    return 0;
  }
  /* N-body units to the run's: the same model of mass M and virial
   * radius R (tfmm_ic_scale). */
  st = tfmm_ic_scale(s->n, ro->model_mass, ro->model_radius, ro->sc.cfg.G,
                     s->pos, s->vel, s->mass);
  if (st != TFMM_OK) {
    cli_error("--model-mass %g, --model-radius %g with G %g: %s",
              ro->model_mass, ro->model_radius, ro->sc.cfg.G,
              tfmm_status_name(st));
    run_state_free(s);
    return 0;
  }
  return 1;
}

/* A text body file, or a stream (a pipe, standard input) read once as
 * text (body_input_read). */
static int from_text(run_state *s, const char *path) {
  bodyio_bodies b;
  if (!body_input_read(path, NULL, &b)) {
    bodyio_free(&b);
    return 0;
  }
  int ok = allocate(s, b.n);
  if (ok) {
    memcpy(s->pos, b.pos, 3 * b.n * sizeof(double));
    memcpy(s->vel, b.vel, 3 * b.n * sizeof(double));
    memcpy(s->mass, b.mass, b.n * sizeof(double));
  }
  bodyio_free(&b);
  return ok;
}

/* The initial conditions' units against the run's. A file with units
 * into a run with none: the run takes them (G derives from them unless
 * given); with other units than the run's: the bodies and the time are
 * converted to the run's; a file without units (an older tilefmm's, or
 * one of N-body units) into a run with units: its numbers are taken in
 * the run's units. Each case says so on stderr: never silently. */
static int reconcile_units(run_state *s, const snapshot *snap,
                           run_options *ro) {
  char file[160], run[160];
  units_describe(&snap->units, file, sizeof file);
  units_describe(&ro->units, run, sizeof run);
  if (!units_physical(&snap->units)) {
    if (snap->units_source == SNAPSHOT_UNITS_NONE)
      fprintf(stderr,
              "tilefmm run: note: %s carries no units: its numbers are taken "
              "in the run's %s\n",
              ro->ic, run);
    else if (units_physical(&ro->units))
      fprintf(stderr,
              "tilefmm run: note: %s is in N-body units: its numbers are "
              "taken in the run's %s\n",
              ro->ic, run);
    return 1;
  }
  if (!units_physical(&ro->units) && ro->units_preset != NULL) {
    fprintf(stderr,
            "tilefmm run: note: %s is in %s; its numbers are taken as N-body "
            "units (--units %s)\n",
            ro->ic, file, ro->units_preset);
    return 1;
  }
  if (!units_physical(&ro->units)) {
    if (!run_options_adopt_units(ro, &snap->units))
      return 0;
    fprintf(stderr,
            "tilefmm run: note: the run takes the units of %s (%s), and G = "
            "%.9g in them\n",
            ro->ic, file, ro->sc.cfg.G);
    return 1;
  }
  if (units_same(&snap->units, &ro->units))
    return 1;
  const double length = snap->units.length / ro->units.length,
               velocity = snap->units.velocity / ro->units.velocity,
               mass = snap->units.mass / ro->units.mass,
               time = units_time(&snap->units) / units_time(&ro->units);
  for (size_t i = 0; i < 3 * s->n; i++) {
    s->pos[i] *= length;
    s->vel[i] *= velocity;
  }
  for (size_t i = 0; i < s->n; i++)
    s->mass[i] *= mass;
  s->time_initial *= time;
  fprintf(stderr,
          "tilefmm run: note: %s is in %s; its bodies and time are converted "
          "to the run's %s\n",
          ro->ic, file, run);
  return 1;
}

/* A snapshot's bodies: the particle types --types names (TEXT, or NULL:
 * one type, not gas), in the run's units. */
static int from_snapshot(run_state *s, const char *path, body_input_kind kind,
                         const char *types, run_options *ro) {
  snapshot snap;
  uint64_t mask = SNAPSHOT_TYPES_DEFAULT;
  if (types != NULL && !body_input_parse_types(types, &mask)) {
    cli_error("--types %s: not %s", types, BODY_INPUT_TYPES_EXPECT);
    return 0;
  }
  if (!body_input_read_snapshot(path, kind, mask, "--types", &snap)) {
    snapshot_free(&snap);
    return 0;
  }
  memset(s, 0, sizeof *s);
  s->n = snap.n;
  s->pos = snap.pos;
  s->vel = snap.vel;
  s->mass = snap.mass;
  s->ids = snap.ids;
  s->time_initial = snap.time;
  snap.pos = snap.vel = snap.mass = NULL;
  snap.ids = NULL;
  const int ok = reconcile_units(s, &snap, ro);
  snapshot_free(&snap);
  if (!ok)
    run_state_free(s);
  return ok;
}

int run_state_from_ic(run_state *s, run_options *ro) {
  for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
    if (strcmp(ro->ic, models[k].name) == 0)
      return from_model(s, models[k].make, ro);
  const char *ic = body_input_path(ro->ic); /* "-": /dev/stdin, if a file */
  const int stream = body_input_is_stream(ic);
  const body_input_kind kind = body_input_kind_of(ic);
  FILE *fp = kind == BODY_INPUT_GADGET2 || stream ? NULL : fopen(ic, "rb");
  if (kind != BODY_INPUT_GADGET2 && !stream && fp == NULL) {
    cli_error("--ic %s: neither a model (plummer, hernquist, uniform, cold, "
              "merger) nor a readable file: %s",
              ro->ic, strerror(errno));
    return 0;
  }
  if (fp != NULL)
    fclose(fp);
  if (kind == BODY_INPUT_TEXT && ro->types != NULL) {
    cli_error("--types %s: %s is %s, which has no particle types", ro->types,
              ro->ic,
              stream ? "read through a pipe as a text body file"
                     : "a text body file");
    return 0;
  }
  const int ok = kind != BODY_INPUT_TEXT
                     ? from_snapshot(s, ic, kind, ro->types, ro)
                     : from_text(s, ic);
  if (!ok)
    return 0;
  if (run_options_explicit(ro, "--n") && ro->n != (uint64_t)s->n) {
    cli_error("--ic %s holds %zu bodies, but --n %" PRIu64 " was given", ro->ic,
              s->n, ro->n);
    run_state_free(s);
    return 0;
  }
  ro->n = (uint64_t)s->n;
  return 1;
}

/* A /RunState value parsed whole as a double or an int64. */
static int state_double(const snapshot *cp, const char *path, const char *name,
                        double *out) {
  const char *v = snapshot_attr_find(cp->state, cp->nstate, name);
  char *end = NULL;
  if (v != NULL) {
    errno = 0;
    *out = strtod(v, &end);
  }
  if (v == NULL || *v == '\0' || *end != '\0' || !isfinite(*out)) {
    cli_error("%s: /RunState %s is %s%s%s, not a finite number", path, name,
              v != NULL ? "'" : "missing", v != NULL ? v : "",
              v != NULL ? "'" : "");
    return 0;
  }
  return 1;
}

/* Forces are not checked by snapshot_read (a picture does not need them);
 * a run continues from them, so a non-finite one is refused here, named
 * for what it is. */
static int check_forces(const snapshot *cp, const char *path) {
  for (size_t i = 0; i < cp->n; i++) {
    const double *a = cp->acc + 3 * i;
    const char *what = !isfinite(a[0]) || !isfinite(a[1]) || !isfinite(a[2])
                           ? "a non-finite acceleration"
                       : !isfinite(cp->pot[i]) ? "a non-finite potential"
                                               : NULL;
    if (what != NULL) {
      cli_error("%s: body %zu (ParticleID %llu) has %s", path, i,
                (unsigned long long)cp->ids[i], what);
      return 0;
    }
  }
  return 1;
}

/* The body count the run was set up with (run_options' key
 * InitialConditions:n) must be the count of bodies the checkpoint holds. */
static int check_count(const snapshot *cp, const char *path) {
  const char *name = "InitialConditions:n";
  const char *v = snapshot_attr_find(cp->params, cp->nparams, name);
  if (v == NULL)
    return 1; /* run_options_merge_checkpoint decides what is required */
  char *end = NULL;
  errno = 0;
  const unsigned long long n = strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 ||
      n != (unsigned long long)cp->n) {
    cli_error("%s: /Parameters %s is '%s', but the checkpoint holds %zu "
              "bodies",
              path, name, v, cp->n);
    return 0;
  }
  return 1;
}

/* The clock of individual steps (/RunState ticks and tick, and the bins),
 * all or none: a checkpoint of one global step, or one older than
 * individual steps, has none. */
static int read_clock(run_state *s, const snapshot *cp, const char *path) {
  const int has_ticks =
      snapshot_attr_find(cp->state, cp->nstate, "ticks") != NULL;
  if (!has_ticks && s->bins == NULL)
    return 1;
  double ticks, tick;
  if (!state_double(cp, path, "ticks", &ticks) ||
      !state_double(cp, path, "tick", &tick))
    return 0;
  if (s->bins == NULL) {
    cli_error("%s: /RunState has ticks but PartType1 has no TimeBins", path);
    return 0;
  }
  if (ticks < 0 || ticks != floor(ticks) || ticks > 0x1p62 || !(tick > 0)) {
    cli_error("%s: /RunState ticks %g, tick %g: not a clock", path, ticks,
              tick);
    return 0;
  }
  s->ticks = (int64_t)ticks;
  s->tick = tick;
  return 1;
}

/* The planner's state as /RunState Choice* attributes: every field of
 * tfmm_choice, doubles with %.17g and integers whole, so that they read
 * back to the same bits. */
typedef struct choice_text {
  char chosen[8], theta[32], order[16], factor[32], since[16], evaluations[32],
      n[32], accuracy[32], leaf[16], near_gpu[8], precision[8], failed_cost[32],
      epsilon[32];
} choice_text;

static size_t choice_attrs(const tfmm_choice *c, choice_text *t,
                           snapshot_attr *out) {
  snprintf(t->chosen, sizeof t->chosen, "%d", c->chosen);
  snprintf(t->theta, sizeof t->theta, "%.17g", c->theta);
  snprintf(t->order, sizeof t->order, "%d", c->order);
  snprintf(t->factor, sizeof t->factor, "%.17g", c->factor);
  snprintf(t->since, sizeof t->since, "%d", c->since);
  snprintf(t->evaluations, sizeof t->evaluations, "%" PRIu64, c->evaluations);
  snprintf(t->n, sizeof t->n, "%zu", c->n);
  snprintf(t->accuracy, sizeof t->accuracy, "%.17g", c->accuracy);
  snprintf(t->leaf, sizeof t->leaf, "%d", c->leaf);
  snprintf(t->near_gpu, sizeof t->near_gpu, "%d", c->near_gpu);
  snprintf(t->precision, sizeof t->precision, "%d", (int)c->precision);
  snprintf(t->failed_cost, sizeof t->failed_cost, "%.17g", c->failed_cost);
  snprintf(t->epsilon, sizeof t->epsilon, "%.17g", c->epsilon);
  const snapshot_attr a[] = {{"ChoiceChosen", t->chosen},
                             {"ChoiceTheta", t->theta},
                             {"ChoiceOrder", t->order},
                             {"ChoiceFactor", t->factor},
                             {"ChoiceSince", t->since},
                             {"ChoiceEvaluations", t->evaluations},
                             {"ChoiceN", t->n},
                             {"ChoiceAccuracy", t->accuracy},
                             {"ChoiceLeaf", t->leaf},
                             {"ChoiceNearGpu", t->near_gpu},
                             {"ChoicePrecision", t->precision},
                             {"ChoiceFailedCost", t->failed_cost},
                             {"ChoiceEpsilon", t->epsilon}};
  memcpy(out, a, sizeof a);
  return sizeof a / sizeof a[0];
}

/* An integer attribute of /RunState in [lo, hi]. */
static int state_int(const snapshot *cp, const char *path, const char *name,
                     double lo, double hi, double *out) {
  if (!state_double(cp, path, name, out))
    return 0;
  if (*out < lo || *out > hi || *out != floor(*out)) {
    cli_error("%s: /RunState %s %g is not an integer in [%g, %g]", path, name,
              *out, lo, hi);
    return 0;
  }
  return 1;
}

/* The planner's state (choice_attrs), all or none: a checkpoint older
 * than the planner has none, and the restart chooses afresh (said on
 * stderr: its forces then need not be the run straight through's). */
static int read_choice(run_state *s, const snapshot *cp, const char *path) {
  memset(&s->choice, 0, sizeof s->choice);
  if (snapshot_attr_find(cp->state, cp->nstate, "ChoiceChosen") == NULL) {
    fprintf(stderr,
            "tilefmm run: note: %s holds no planner state (a checkpoint "
            "older than measured accuracy): theta and order are chosen "
            "afresh, so the continuation need not be the run straight "
            "through bit for bit\n",
            path);
    return 1;
  }
  /* evaluations is a uint64 (the samples' seeds): parsed whole. */
  const char *ev =
      snapshot_attr_find(cp->state, cp->nstate, "ChoiceEvaluations");
  char *end = NULL;
  errno = 0;
  const unsigned long long evaluations =
      ev != NULL ? strtoull(ev, &end, 10) : 0;
  if (ev == NULL || *ev < '0' || *ev > '9' || *end != '\0' || errno != 0) {
    cli_error("%s: /RunState ChoiceEvaluations is %s, not a count", path,
              ev != NULL ? ev : "missing");
    return 0;
  }
  double chosen, theta, order, factor, since, n, accuracy, leaf, near_gpu,
      precision, failed_cost = -1, epsilon = 0;
  if (!state_int(cp, path, "ChoiceChosen", 0, 1, &chosen) ||
      !state_double(cp, path, "ChoiceTheta", &theta) ||
      !state_int(cp, path, "ChoiceOrder", 0, TFMM_MAX_ORDER, &order) ||
      !state_double(cp, path, "ChoiceFactor", &factor) ||
      !state_int(cp, path, "ChoiceSince", 0, 1e9, &since) ||
      !state_int(cp, path, "ChoiceN", 0, 0x1p53, &n) ||
      !state_double(cp, path, "ChoiceAccuracy", &accuracy) ||
      !state_int(cp, path, "ChoiceLeaf", -1e9, 1e9, &leaf) ||
      !state_int(cp, path, "ChoiceNearGpu", 0, 1, &near_gpu) ||
      !state_int(cp, path, "ChoicePrecision", 0, 16, &precision))
    return 0;
  /* Later than the other fields: without it, nothing measured a miss. */
  if (snapshot_attr_find(cp->state, cp->nstate, "ChoiceFailedCost") != NULL &&
      !state_double(cp, path, "ChoiceFailedCost", &failed_cost))
    return 0;
  /* Later still (the error criterion's planned epsilon): without it, 0. */
  if (snapshot_attr_find(cp->state, cp->nstate, "ChoiceEpsilon") != NULL &&
      !state_double(cp, path, "ChoiceEpsilon", &epsilon))
    return 0;
  s->choice = (tfmm_choice){.chosen = (int)chosen,
                            .theta = theta,
                            .order = (int)order,
                            .factor = factor,
                            .since = (int)since,
                            .evaluations = (uint64_t)evaluations,
                            .n = (size_t)n,
                            .accuracy = accuracy,
                            .leaf = (int)leaf,
                            .near_gpu = (int)near_gpu,
                            .precision = (tfmm_precision)precision,
                            .failed_cost = failed_cost,
                            .epsilon = epsilon};
  return 1;
}

int run_state_from_checkpoint(run_state *s, snapshot *cp, const char *path) {
  memset(s, 0, sizeof *s);
  const char *format = snapshot_attr_find(cp->state, cp->nstate, "format");
  if (format == NULL || strcmp(format, CHECKPOINT_FORMAT) != 0) {
    cli_error("%s: not a checkpoint of tilefmm run (/RunState:format is %s; "
              "expected %s): restart from DIR/checkpoint.hdf5",
              path, format != NULL ? format : "missing", CHECKPOINT_FORMAT);
    return 0;
  }
  if (cp->acc == NULL || cp->pot == NULL) {
    cli_error("%s: a checkpoint needs /PartType1/Accelerations and "
              "Potentials",
              path);
    return 0;
  }
  if (!check_forces(cp, path) || !check_count(cp, path))
    return 0;
  double step, t0, e0;
  if (!state_double(cp, path, "step", &step) ||
      !state_double(cp, path, "time_initial", &t0) ||
      !state_double(cp, path, "energy_initial", &e0))
    return 0;
  if (step < 0 || step != floor(step) || step > 1e15) {
    cli_error("%s: /RunState step %g is not a step count", path, step);
    return 0;
  }
  s->n = cp->n;
  s->pos = cp->pos;
  s->vel = cp->vel;
  s->mass = cp->mass;
  s->acc = cp->acc;
  s->pot = cp->pot;
  s->ids = cp->ids;
  s->bins = cp->bins;
  cp->pos = cp->vel = cp->mass = cp->acc = cp->pot = NULL;
  cp->ids = NULL;
  cp->bins = NULL;
  s->step = (int64_t)step;
  s->time_initial = t0;
  s->energy_initial = e0;
  return read_clock(s, cp, path) && read_choice(s, cp, path);
}

int run_state_make_sim(run_state *s, const run_options *ro, tfmm_sim **sim) {
  tfmm_sim_config cfg;
  tfmm_sim_config_defaults(&cfg);
  cfg.solver = ro->sc.cfg;
  cfg.dt = ro->dt;
  cfg.eta = ro->eta;
  cfg.dt_max = ro->dt_max;
  cfg.dt_min = ro->dt_min;
  cfg.time_initial = s->time_initial;
  cli_gpu_warn(cfg.solver.device == TFMM_DEVICE_AUTO);
  tfmm_status st;
  if (s->acc != NULL) {
    const tfmm_sim_state state = {.n = s->n,
                                  .pos = s->pos,
                                  .vel = s->vel,
                                  .mass = s->mass,
                                  .acc = s->acc,
                                  .pot = s->pot,
                                  .ids = s->ids,
                                  .step = s->step,
                                  .time_initial = s->time_initial,
                                  .energy_initial = s->energy_initial,
                                  .ticks = s->ticks,
                                  .tick = s->tick,
                                  .bins = s->bins,
                                  .choice = s->choice};
    st = mpi_cli_sim_restore(sim, &cfg, &state);
  } else {
    st = mpi_cli_sim_create(sim, &cfg, s->n, s->pos, s->vel, s->mass, s->ids);
  }
  run_state_free(s);
  if (st == TFMM_OK)
    return CLI_OK;
  cli_error("%s", *sim != NULL ? tfmm_sim_message(*sim) : tfmm_status_name(st));
  tfmm_sim_destroy(*sim);
  *sim = NULL;
  return st == TFMM_ERR_INVALID_ARGUMENT ? CLI_USAGE_ERROR : CLI_RUNTIME_ERROR;
}

int run_state_write_saved(const tfmm_sim_state *sp, int clock,
                          const run_options *ro, const char *path,
                          const snapshot_attr *params, size_t nparams,
                          int checkpoint, const char *device,
                          atomic_file *uncommitted) {
  const tfmm_sim_state s = *sp;
  char step[32], t0[32], e0[32], ticks[32], tick[32];
  snprintf(step, sizeof step, "%" PRId64, s.step);
  snprintf(t0, sizeof t0, "%.17g", s.time_initial);
  snprintf(e0, sizeof e0, "%.17g", s.energy_initial);
  snprintf(ticks, sizeof ticks, "%" PRId64, s.ticks);
  snprintf(tick, sizeof tick, "%.17g", s.tick);
  /* The clock only with individual steps: a checkpoint of one global step
   * stays as it was. */
  snapshot_attr state[8 + 13] = {{"format", CHECKPOINT_FORMAT},
                                 {"step", step},
                                 {"time_initial", t0},
                                 {"energy_initial", e0},
                                 {"device", (char *)device}};
  size_t nstate = 5;
  if (clock) {
    state[nstate++] = (snapshot_attr){"ticks", ticks};
    state[nstate++] = (snapshot_attr){"tick", tick};
  }
  /* Under mpirun, the ranks that wrote it (a restart may use any number:
   * told, not checked). */
  char ranks[16];
  snprintf(ranks, sizeof ranks, "%d", mpi_cli_ranks());
  if (mpi_cli_on())
    state[nstate++] = (snapshot_attr){"ranks", ranks};
  /* The planner's state (over ranks the domain's, alike on every rank),
   * so that a restart evaluates as the run straight through does. */
  choice_text choice;
  nstate += choice_attrs(&s.choice, &choice, state + nstate);
  /* snapshot_write reads the arrays only. */
  const snapshot snap = {.n = s.n,
                         /* tfmm_sim_time's sum, from the state */
                         .time = s.time_initial + (double)s.ticks * s.tick,
                         .pos = (double *)s.pos,
                         .vel = (double *)s.vel,
                         .mass = (double *)s.mass,
                         .acc = (double *)s.acc,
                         .pot = (double *)s.pot,
                         .ids = (uint64_t *)s.ids,
                         .bins =
                             checkpoint && clock ? (signed char *)s.bins : NULL,
                         .params = (snapshot_attr *)params,
                         .nparams = nparams,
                         .state = checkpoint ? state : NULL,
                         .nstate = checkpoint ? nstate : 0,
                         .units = ro->units,
                         .G = ro->sc.cfg.G,
                         .output = checkpoint ? NULL : &ro->output};
  return uncommitted != NULL
             ? snapshot_write_uncommitted(path, &snap, uncommitted)
             : snapshot_write(path, &snap);
}
