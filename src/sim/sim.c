/* The simulation object: creation from bodies or from a saved state, the
 * state as views of its arrays, and its accessors. The steps are in
 * sim_step.c, the checks of what callers give in sim_check.c. */
#include "sim/sim.h"

#include "domain/domain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tfmm_sim_config_defaults(tfmm_sim_config *cfg) {
  if (cfg == NULL)
    return;
  tfmm_config_defaults(&cfg->solver);
  cfg->dt = 0.0078125; /* 1/128 */
  cfg->time_initial = 0.0;
  cfg->eta = 0.0;
  cfg->dt_max = 0.0;
  cfg->dt_min = 0.0;
  cfg->keep_tree = 1;
}

/* NaN in n doubles: forces not yet computed read as such. */
static void poison(double *v, size_t n) {
  for (size_t k = 0; k < n; k++)
    v[k] = NAN;
}

/* A handle with nothing in it yet; *out is NULL only when it could not
 * be allocated. */
static tfmm_status new_handle(tfmm_sim **out, const tfmm_sim_config *cfg) {
  tfmm_sim *s = calloc(1, sizeof *s);
  *out = s;
  if (s == NULL)
    return TFMM_ERR_NO_MEMORY;
  s->energy_initial = NAN;
  s->prior_accel = 1;
  const tfmm_status st = tfmm_sim_check_config(cfg, &s->err);
  if (st == TFMM_OK) {
    s->cfg = *cfg;
    tfmm_sim_clock(cfg, &s->tick, &s->max_bin);
    s->individual = cfg->eta > 0;
    s->two_eta_eps = 2.0 * cfg->eta * cfg->solver.eps;
  }
  return st;
}

/* The arrays for n bodies (n >= 1, or 0 on a rank of several), the forces
 * poisoned. */
static tfmm_status allocate(tfmm_sim *s, size_t n) {
  s->n = n;
  s->n_total = n;
  if (n > SIZE_MAX / (3 * sizeof(double)))
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  n = n > 0 ? n : 1;
  s->pos = malloc(3 * n * sizeof *s->pos);
  s->vel = malloc(3 * n * sizeof *s->vel);
  s->mass = malloc(n * sizeof *s->mass);
  s->acc = malloc(3 * n * sizeof *s->acc);
  s->pot = malloc(n * sizeof *s->pot);
  s->ids = malloc(n * sizeof *s->ids);
  s->bin = calloc(n, sizeof *s->bin);
  s->active = malloc(n * sizeof *s->active);
  if (s->pos == NULL || s->vel == NULL || s->mass == NULL || s->acc == NULL ||
      s->pot == NULL || s->ids == NULL || s->bin == NULL || s->active == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                          "no memory for %zu bodies", n);
  poison(s->acc, 3 * n);
  poison(s->pot, n);
  s->bin_count[0] = (int64_t)s->n;
  return TFMM_OK;
}

/* The bodies (and ids, or 1..n) copied in. */
static void copy_bodies(tfmm_sim *s, const double *pos, const double *vel,
                        const double *mass, const uint64_t *ids) {
  const size_t n = s->n;
  memcpy(s->pos, pos, 3 * n * sizeof *pos);
  memcpy(s->vel, vel, 3 * n * sizeof *vel);
  memcpy(s->mass, mass, n * sizeof *mass);
  for (size_t i = 0; i < n; i++)
    s->ids[i] = ids != NULL ? ids[i] : (uint64_t)i + 1;
}

/* The solver for s->cfg.solver (made by make, NULL: tfmm_solver_create);
 * its message becomes the sim's. */
static tfmm_status create_solver(tfmm_sim *s, const tfmm_config *cfg,
                                 tfmm_sim_solver_maker make, void *ctx) {
  const tfmm_status st = make != NULL ? make(ctx, cfg, &s->solver)
                                      : tfmm_solver_create(&s->solver, cfg);
  if (st == TFMM_OK)
    return TFMM_OK;
  if (s->solver == NULL)
    return tfmm_error_set(&s->err, st, "no memory for the solver");
  tfmm_error_set(&s->err, st, "%s", tfmm_solver_message(s->solver));
  tfmm_solver_destroy(s->solver);
  s->solver = NULL; /* the mark of a sim that was not created */
  return st;
}

/* The end of a creation: the solver, then one process's state moves to
 * the GPU; several processes agree on the checks (st: this rank's) and
 * count their bodies and bins together. */
static tfmm_status finish(tfmm_sim *s, const tfmm_sim_config *cfg,
                          tfmm_status st, tfmm_sim_solver_maker make,
                          void *ctx) {
  if (make == NULL) {
    if (st == TFMM_OK)
      st = create_solver(s, &cfg->solver, NULL, NULL);
    return st != TFMM_OK ? st : tfmm_sim_device_attach(s);
  }
  /* Collective: every rank makes its solver, whatever its own checks. */
  tfmm_error mine = s->err;
  const tfmm_status made = create_solver(s, &cfg->solver, make, ctx);
  if (made != TFMM_OK)
    return made;
  s->err = mine;
  tfmm_domain *d = s->domain = tfmm_domain_of(s->solver);
  st = tfmm_domain_agree(d, st, &s->err);
  int64_t n = (int64_t)s->n;
  if (st == TFMM_OK)
    st = tfmm_domain_sum_i64(d, &n, 1, &s->err);
  if (st == TFMM_OK)
    st = tfmm_domain_sum_i64(d, s->bin_count, TFMM_TIMESTEP_MAX_BIN + 1,
                             &s->err);
  s->n_total = (size_t)n;
  if (st == TFMM_OK && n == 0)
    st = tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                        "no bodies on any rank");
  if (st != TFMM_OK) {
    tfmm_solver_destroy(s->solver);
    s->solver = NULL;
  }
  return st;
}

tfmm_status tfmm_sim_create_by(tfmm_sim **out, const tfmm_sim_config *cfg,
                               size_t n, const double *pos, const double *vel,
                               const double *mass, const uint64_t *ids,
                               tfmm_sim_solver_maker make, void *ctx) {
  if (out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  tfmm_status st = new_handle(out, cfg);
  tfmm_sim *s = *out;
  if (s == NULL)
    return st;
  s->distributed = make != NULL;
  if (st == TFMM_OK && (n > 0 || make == NULL))
    st = tfmm_sim_check_bodies(n, pos, vel, mass, &s->err);
  if (st == TFMM_OK)
    st = allocate(s, n);
  if (st == TFMM_OK)
    copy_bodies(s, pos, vel, mass, ids);
  if (cfg == NULL || (make == NULL && st != TFMM_OK))
    return st;
  return finish(s, cfg, st, make, ctx);
}

tfmm_status tfmm_sim_create(tfmm_sim **out, const tfmm_sim_config *cfg,
                            size_t n, const double *pos, const double *vel,
                            const double *mass, const uint64_t *ids) {
  return tfmm_sim_create_by(out, cfg, n, pos, vel, mass, ids, NULL, NULL);
}

tfmm_status tfmm_sim_restore_by(tfmm_sim **out, const tfmm_sim_config *cfg,
                                const tfmm_sim_state *state,
                                tfmm_sim_solver_maker make, void *ctx) {
  if (out == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  tfmm_status st = new_handle(out, cfg);
  tfmm_sim *s = *out;
  if (s == NULL)
    return st;
  s->distributed = make != NULL;
  if (st == TFMM_OK && state == NULL)
    st = tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT, "state is NULL");
  if (st == TFMM_OK && (state->n > 0 || make == NULL))
    st = tfmm_sim_check_state(state, s, &s->err);
  if (st == TFMM_OK)
    st = allocate(s, state->n);
  if (st == TFMM_OK) {
    copy_bodies(s, state->pos, state->vel, state->mass, state->ids);
    memcpy(s->acc, state->acc, 3 * s->n * sizeof *s->acc);
    memcpy(s->pot, state->pot, s->n * sizeof *s->pot);
    s->forces_known = 1;
    s->step = state->step;
    const int legacy = state->tick == 0 && state->ticks == 0;
    s->ticks = legacy ? state->step : state->ticks;
    if (state->bins != NULL) {
      memcpy(s->bin, state->bins, s->n * sizeof *s->bin);
      memset(s->bin_count, 0, sizeof s->bin_count);
      for (size_t i = 0; i < s->n; i++)
        s->bin_count[s->bin[i]]++;
    }
    s->cfg.time_initial = state->time_initial;
    s->energy_initial = state->energy_initial;
  }
  if (cfg == NULL || (make == NULL && st != TFMM_OK))
    return st;
  st = finish(s, cfg, st, make, ctx);
  /* The planner's state, over ranks the domain's (every rank given the
   * checkpoint's, which its rank 0 wrote): the evaluations go on at the
   * settings and with the measurements they had. */
  const int choose = st == TFMM_OK;
  if (choose)
    st = tfmm_solver_set_choice(s->solver, &state->choice);
  if (st != TFMM_OK && (make == NULL || choose) && s->solver != NULL)
    tfmm_error_set(&s->err, st, "%s", tfmm_solver_message(s->solver));
  if (choose && make != NULL)
    st = tfmm_domain_agree(s->domain, st, &s->err);
  return st;
}

tfmm_status tfmm_sim_restore(tfmm_sim **out, const tfmm_sim_config *cfg,
                             const tfmm_sim_state *state) {
  return tfmm_sim_restore_by(out, cfg, state, NULL, NULL);
}

void tfmm_sim_destroy(tfmm_sim *s) {
  if (s == NULL)
    return;
  tfmm_sim_gpu_destroy(s->gpu);
  free(s->snap_copy[0]);
  free(s->snap_copy[1]);
  tfmm_solver_destroy(s->solver);
  free(s->pos);
  free(s->vel);
  free(s->mass);
  free(s->acc);
  free(s->pot);
  free(s->ids);
  free(s->bin);
  free(s->active);
  free(s);
}

double tfmm_sim_time(const tfmm_sim *s) {
  return s == NULL ? NAN : s->cfg.time_initial + (double)s->ticks * s->tick;
}

int64_t tfmm_sim_steps(const tfmm_sim *s) { return s == NULL ? 0 : s->step; }

int64_t tfmm_sim_syncs(const tfmm_sim *s) {
  return s == NULL ? 0 : s->ticks >> s->max_bin;
}

int tfmm_sim_synchronised(const tfmm_sim *s) {
  if (s == NULL)
    return 0;
  const int aligned = tfmm_timestep_aligned_bin(s->ticks, s->max_bin);
  for (int b = aligned + 1; b <= s->max_bin; b++)
    if (s->bin_count[b] > 0)
      return 0;
  return 1;
}

int tfmm_sim_bins(const tfmm_sim *s, int64_t *counts, int size) {
  if (s == NULL)
    return -1;
  for (int b = 0; counts != NULL && b < size && b <= s->max_bin; b++)
    counts[b] = s->bin_count[b];
  return s->max_bin;
}

size_t tfmm_sim_count(const tfmm_sim *s) { return s == NULL ? 0 : s->n; }

static tfmm_choice choice_of(const tfmm_solver *solver) {
  tfmm_choice c = {0};
  tfmm_solver_choice(solver, &c);
  return c;
}

/* The state as views of the host arrays. */
static tfmm_sim_state host_state(const tfmm_sim *s) {
  return (tfmm_sim_state){.n = s->n,
                          .pos = s->pos,
                          .vel = s->vel,
                          .mass = s->mass,
                          .acc = s->acc,
                          .pot = s->pot,
                          .ids = s->ids,
                          .step = s->step,
                          .time_initial = s->cfg.time_initial,
                          .energy_initial = s->energy_initial,
                          .ticks = s->ticks,
                          .tick = s->tick,
                          .bins = s->bin,
                          .choice = choice_of(s->solver)};
}

/* What a state can be saved from: a sim that was created and is not
 * broken, whose forces are known (else its acc and pot are NaN). */
static tfmm_status savable(tfmm_sim *s) {
  if (s->solver == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "the simulation was not created");
  return s->broken;
}

tfmm_status tfmm_sim_save(tfmm_sim *s, tfmm_sim_state *out) {
  if (out != NULL)
    memset(out, 0, sizeof *out);
  if (s == NULL || out == NULL)
    return s == NULL ? TFMM_ERR_INVALID_ARGUMENT
                     : tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                                      "the state's destination is NULL");
  tfmm_status st = savable(s); /* no state a restart could continue from */
  if (st == TFMM_OK)
    st = tfmm_sim_device_sync(s);
  if (st != TFMM_OK)
    return st;
  /* A restart from this state builds its tree: so does this run. */
  tfmm_solver_rebuild_tree(s->solver);
  *out = host_state(s);
  s->err.message[0] = '\0';
  return TFMM_OK;
}

const tfmm_solver *tfmm_sim_solver(const tfmm_sim *s) {
  return s == NULL ? NULL : s->solver;
}

const tfmm_step_stats *tfmm_sim_stats(const tfmm_sim *s) {
  return s == NULL ? NULL : &s->stats;
}

const char *tfmm_sim_message(const tfmm_sim *s) {
  return s == NULL ? "simulation is NULL" : s->err.message;
}

tfmm_status tfmm_sim_save_begin(tfmm_sim *s) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  tfmm_status st = savable(s);
  if (st != TFMM_OK)
    return st;
  const size_t n = s->n;
  /* From the device whenever it holds the state (the host's copy, when
   * current, is the same bits): the copy out then overlaps the steps, and
   * the device's buffers are reserved at the first snapshot, not at a
   * later one mid-run. Before the forces are known the device has none. */
  const int on_gpu = s->gpu != NULL && (!s->host_current || s->forces_known);
  if (on_gpu) {
    st = tfmm_sim_gpu_snapshot_begin(s->gpu, &s->err);
    if (st != TFMM_OK)
      return st;
  } else {
    /* The other buffer than the last one's, whose views the caller may
     * still read. */
    const int k = 1 - s->snap_last;
    if (s->snap_copy[k] == NULL)
      s->snap_copy[k] = malloc(10 * n * sizeof(double) + n);
    if (s->snap_copy[k] == NULL)
      return tfmm_error_set(&s->err, TFMM_ERR_NO_MEMORY,
                            "no memory for a snapshot of %zu bodies", n);
    s->snap_last = k;
    double *c = s->snap_copy[k];
    memcpy(c, s->pos, 3 * n * sizeof *c);
    memcpy(c + 3 * n, s->vel, 3 * n * sizeof *c);
    memcpy(c + 6 * n, s->acc, 3 * n * sizeof *c);
    memcpy(c + 9 * n, s->pot, n * sizeof *c);
    memcpy(c + 10 * n, s->bin, n);
  }
  tfmm_solver_rebuild_tree(s->solver); /* as tfmm_sim_save */
  s->snap = host_state(s); /* its arrays replaced by the copy's at the end */
  s->snap_pending = on_gpu ? 2 : 1;
  s->err.message[0] = '\0';
  return TFMM_OK;
}

tfmm_status tfmm_sim_save_end(tfmm_sim *s, tfmm_sim_state *out) {
  if (out != NULL)
    memset(out, 0, sizeof *out);
  if (s == NULL || out == NULL)
    return s == NULL ? TFMM_ERR_INVALID_ARGUMENT
                     : tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                                      "the state's destination is NULL");
  if (s->snap_pending == 0)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "no tfmm_sim_save_begin to end");
  tfmm_sim_state st = s->snap;
  if (s->snap_pending == 2) {
    const tfmm_status r = tfmm_sim_gpu_snapshot_wait(
        s->gpu, &st.pos, &st.vel, &st.acc, &st.pot, &st.bins, &s->err);
    if (r != TFMM_OK)
      return r;
  } else {
    const size_t n = s->n;
    const double *c = s->snap_copy[s->snap_last];
    st.pos = c;
    st.vel = c + 3 * n;
    st.acc = c + 6 * n;
    st.pot = c + 9 * n;
    st.bins = (const signed char *)(c + 10 * n);
  }
  *out = st;
  s->err.message[0] = '\0';
  return TFMM_OK;
}

void tfmm_sim_set_prior_accel(tfmm_sim *s, int on) {
  if (s != NULL)
    s->prior_accel = on != 0;
}
