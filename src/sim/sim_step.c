/* The steps of a simulation: the kick-drift-kick leapfrog of
 * src/sim/leapfrog.c (Springel 2005, MNRAS 364, 1105, eqs. 27-28) with one
 * global step, each step exactly the calls tilefmm.h lists, so that a sim
 * gives the bits of those calls made by hand; and the diagnostics. */
#include "sim/sim.h"

#include "domain/domain.h"

#include "sim/diagnostics_terms.h"

#include <math.h>
#include <string.h>

/* The most pairs (active bodies times all bodies) a sub-step sums
 * directly instead of through the tree: 2^30, about 1.2 ms in double
 * precision on an H100 or H200 (reference_gpu.h: 8.8e11 pairs a second),
 * below the 2-3 ms that a sparse sub-step's tree evaluation took at
 * 262,144 bodies (bench/results/run, "What a sub-step costs"): 4,096
 * active bodies of 262,144, 1,024 of 1,048,576. */
#define TFMM_SIM_DIRECT_PAIRS 1073741824.0

/* Refuses a handle whose creation failed, and one whose last step failed
 * part-way (its status and message again). */
static tfmm_status check_usable(tfmm_sim *s) {
  if (s->broken != TFMM_OK)
    return s->broken;
  if (s->solver == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "the simulation was not created (tfmm_sim_create "
                          "or tfmm_sim_restore failed)");
  return TFMM_OK;
}

/* The forces at the current positions, timed into the stats: at every
 * body (all), or at those marked active. The message of a failure names
 * the step (the steps done) and the solver's cause. */
static tfmm_status compute_forces(tfmm_sim *s, int all, size_t targets) {
  const double t0 = tfmm_wtime();
  /* The error criterion's |a|_A from the forces each body had at its last
   * evaluation (Dehnen 2014 sec. 3.2; SWIFT's previous-step |a|): the
   * state's acc, which an inactive body keeps between its evaluations and
   * a restored sim has from its state, so restarts keep the bits. Before
   * the first forces, the solver's estimate. */
  const int prior = s->prior_accel && s->forces_known;
  tfmm_solver_set_prior_accel(s->solver,
                              !prior           ? NULL
                              : s->gpu != NULL ? tfmm_sim_gpu_acc(s->gpu)
                                               : s->acc,
                              s->gpu != NULL);
  /* The bodies are the last evaluation's, moved: the gpu schedule may
   * refit its tree (pipeline/tree_life.h). Not over several processes,
   * whose bodies move between them. */
  tfmm_solver_keep_tree(s->solver,
                        s->cfg.keep_tree && s->gpu != NULL && !s->distributed);
  /* A sub-step of few active bodies on the GPU: their k n pairs summed
   * directly cost less than a tree's evaluation (TFMM_SIM_DIRECT_PAIRS). */
  const int direct = !all && s->gpu != NULL && !s->distributed &&
                     (s->cfg.solver.method == TFMM_METHOD_FMM ||
                      s->cfg.solver.method == TFMM_METHOD_BH) &&
                     (double)targets * (double)s->n <= TFMM_SIM_DIRECT_PAIRS;
  tfmm_status st;
  if (direct)
    st = tfmm_sim_device_direct(s, targets);
  else if (s->gpu != NULL)
    st = tfmm_sim_device_forces(s, all);
  else if (all)
    st = tfmm_solver_compute(s->solver, s->n, s->pos, s->mass, s->acc, s->pot);
  else
    st = tfmm_solver_compute_active(s->solver, s->n, s->pos, s->mass, s->active,
                                    s->acc, s->pot);
  tfmm_solver_set_prior_accel(s->solver, NULL, 0);
  s->stats.time_forces += tfmm_wtime() - t0;
  s->stats.evaluations++;
  s->stats.updates += (int64_t)targets;
  if (st != TFMM_OK)
    return tfmm_error_set(&s->err, st, "step %lld: %s", (long long)s->step,
                          direct ? s->err.message
                                 : tfmm_solver_message(s->solver));
  if (direct) {
    s->stats.direct_substeps++;
    s->stats.time_near += tfmm_wtime() - t0;
    return TFMM_OK;
  }
  const tfmm_stats *x = tfmm_solver_stats(s->solver);
  const int tree = x->method == TFMM_METHOD_FMM || x->method == TFMM_METHOD_BH;
  s->stats.time_tree += tree ? x->time[TFMM_PHASE_TREE] : 0;
  s->stats.time_lists += tree ? x->time[TFMM_PHASE_LISTS] : 0;
  s->stats.time_near += tree ? x->near_time : x->time_total;
  s->stats.time_far += tree ? x->far_time : 0;
  s->stats.tree_refits += x->tree_refits > 0;
  return TFMM_OK;
}

/* The conserved quantities of the current state, where it lives. */
static tfmm_status diagnose(tfmm_sim *s, tfmm_diagnostics *d) {
  if (s->gpu != NULL)
    return tfmm_sim_device_diagnostics(s, d);
  /* Over several ranks each rank's totals are summed over the ranks before
   * the quantities are formed. */
  double total[TFMM_DIAG_SUMS];
  tfmm_status st =
      tfmm_diagnostics_totals(s->n, s->pos, s->vel, s->mass, s->pot, total);
  if (st != TFMM_OK)
    tfmm_error_set(&s->err, st, "step %lld: diagnostics: out of memory",
                   (long long)s->step);
  if (s->distributed) {
    tfmm_domain *dist = s->domain;
    st = tfmm_domain_agree(dist, st, &s->err);
    if (st == TFMM_OK)
      st = tfmm_domain_sum(dist, total, TFMM_DIAG_SUMS, &s->err);
  }
  if (st == TFMM_OK)
    tfmm_diagnostics_finish(total, d);
  return st;
}

/* The forces of a sim from tfmm_sim_create (a restored one has them), at
 * its step 0, and the initial energy from them. */
static tfmm_status start(tfmm_sim *s) {
  if (s->forces_known)
    return TFMM_OK;
  tfmm_status st = compute_forces(s, 1, s->n_total);
  tfmm_diagnostics d;
  if (st == TFMM_OK)
    st = diagnose(s, &d);
  if (st != TFMM_OK) {
    for (size_t k = 0; k < 3 * s->n; k++)
      s->acc[k] = NAN;
    /* (a rank of several may hold no body) */
    for (size_t i = 0; i < s->n; i++)
      s->pot[i] = NAN;
    return st;
  }
  s->energy_initial = d.total;
  s->forces_known = 1;
  return TFMM_OK;
}

/* The parts of a step where the state lives: the host (sim_host.c) or the
 * GPU (sim_device.c), with the same bits. */
static tfmm_status open_kicks(tfmm_sim *s, int sync_bin) {
  tfmm_status st = TFMM_OK;
  s->stats.short_steps += s->gpu != NULL
                              ? tfmm_sim_device_open(s, sync_bin, sync_bin, &st)
                              : tfmm_sim_host_open(s, sync_bin, sync_bin);
  return st;
}

static tfmm_status drift(tfmm_sim *s, double h) {
  if (s->gpu != NULL)
    return tfmm_sim_device_drift(s, h);
  tfmm_leapfrog_drift(s->n, s->pos, s->vel, h);
  return TFMM_OK;
}

static tfmm_status activate(tfmm_sim *s, int active_bin) {
  if (s->gpu != NULL)
    return tfmm_sim_device_activate(s, active_bin);
  tfmm_sim_host_activate(s, active_bin);
  return TFMM_OK;
}

static tfmm_status close_kicks(tfmm_sim *s, int active_bin) {
  if (s->gpu != NULL)
    return tfmm_sim_device_close(s, active_bin);
  tfmm_sim_host_close(s, active_bin);
  return TFMM_OK;
}

/* One step, from the current tick to the next at which some body's step
 * ends (tilefmm.h, "The simulation"): with one global step, exactly
 *   kick(dt / 2), drift(dt), forces, kick(dt / 2).
 * A failure part-way leaves the sim broken. */
static tfmm_status kdk(tfmm_sim *s) {
  double t0 = tfmm_wtime();
  /* The bodies whose step ended at this tick begin their next one; a new
   * bin must begin here too. */
  const int sync_bin = tfmm_timestep_aligned_bin(s->ticks, s->max_bin);
  /* Over several ranks the bodies move to their owners at a
   * synchronisation point, then the bins are counted over all ranks. */
  tfmm_status st = TFMM_OK;
  if (s->distributed && tfmm_sim_synchronised(s))
    st = tfmm_sim_migrate(s);
  const int64_t short_before = s->stats.short_steps;
  if (st == TFMM_OK)
    st = open_kicks(s, sync_bin);
  if (st == TFMM_OK && s->distributed) {
    /* The bins and the short steps of every rank. */
    int64_t counts[TFMM_TIMESTEP_MAX_BIN + 2];
    memcpy(counts, s->bin_count, sizeof s->bin_count);
    counts[TFMM_TIMESTEP_MAX_BIN + 1] = s->stats.short_steps - short_before;
    st = tfmm_domain_sum_i64(s->domain, counts, TFMM_TIMESTEP_MAX_BIN + 2,
                             &s->err);
    memcpy(s->bin_count, counts, sizeof s->bin_count);
    s->stats.short_steps = short_before + counts[TFMM_TIMESTEP_MAX_BIN + 1];
  }
  int min_bin = 0;
  while (min_bin < s->max_bin && s->bin_count[min_bin] == 0)
    min_bin++;
  const int64_t span = tfmm_timestep_ticks(min_bin);
  const int64_t next = (s->ticks / span + 1) * span;
  if (st == TFMM_OK)
    st = drift(s, (double)(next - s->ticks) * s->tick);
  /* The bodies whose step ends at next: all of them at a
   * synchronisation point, which is every step with one global step. */
  const int active_bin = tfmm_timestep_aligned_bin(next, s->max_bin);
  size_t targets = s->n_total;
  for (int b = active_bin + 1; b <= s->max_bin; b++)
    targets -= (size_t)s->bin_count[b];
  const int all = targets == s->n_total;
  if (st == TFMM_OK && !all)
    st = activate(s, active_bin);
  s->stats.time_integrate += tfmm_wtime() - t0;
  if (st == TFMM_OK)
    st = compute_forces(s, all, targets);
  t0 = tfmm_wtime();
  if (st == TFMM_OK)
    st = close_kicks(s, active_bin);
  s->stats.time_integrate += tfmm_wtime() - t0;
  if (st != TFMM_OK) {
    s->broken = st;
    return st;
  }
  s->ticks = next;
  s->step++;
  s->stats.steps++;
  return TFMM_OK;
}

/* A call's stats start from zero; its total is set on the way out. */
static tfmm_status begin(tfmm_sim *s, double *t0) {
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  const tfmm_status st = check_usable(s);
  if (st != TFMM_OK)
    return st;
  memset(&s->stats, 0, sizeof s->stats);
  s->err.message[0] = '\0';
  *t0 = tfmm_wtime();
  return TFMM_OK;
}

static tfmm_status steps(tfmm_sim *s, int64_t count, double t0) {
  tfmm_status st = start(s);
  for (int64_t k = 0; st == TFMM_OK && k < count; k++)
    st = kdk(s);
  s->stats.time_total = tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_sim_start(tfmm_sim *s) {
  double t0;
  const tfmm_status st = begin(s, &t0);
  return st != TFMM_OK ? st : steps(s, 0, t0);
}

tfmm_status tfmm_sim_step(tfmm_sim *s, int64_t nsteps) {
  double t0;
  const tfmm_status st = begin(s, &t0);
  if (st != TFMM_OK)
    return st;
  if (nsteps < 0 || nsteps > (int64_t)1e15 - s->step)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "nsteps = %lld: must be >= 0 and end within 1e15 "
                          "steps",
                          (long long)nsteps);
  return steps(s, nsteps, t0);
}

/* Steps until the tick count reaches target (a synchronisation point). */
static tfmm_status steps_to(tfmm_sim *s, int64_t target, double t0) {
  tfmm_status st = start(s);
  while (st == TFMM_OK && s->ticks < target)
    st = kdk(s);
  s->stats.time_total = tfmm_wtime() - t0;
  return st;
}

tfmm_status tfmm_sim_advance_to(tfmm_sim *s, double t) {
  double t0;
  const tfmm_status st = begin(s, &t0);
  if (st != TFMM_OK)
    return st;
  /* The step count of tilefmm run's --t-end: a t within 1e-9 dt below a
   * grid time counts as on it, so that rounding in t does not add a
   * step. The grid is that of the synchronisation points. */
  const double sync = ldexp(s->tick, s->max_bin);
  const double k = ceil((t - s->cfg.time_initial) / sync - 1e-9);
  if (!isfinite(t) || !(fabs(k) < 1e15) ||
      !(ldexp(fabs(k), s->max_bin) < ldexp(1.0, 62)))
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "t = %g: must be finite and within 1e15 steps", t);
  /* A product, not a shift: k < 0 (a t before the start, refused below)
   * may not be shifted (UBSan). */
  const int64_t target = (int64_t)k * ((int64_t)1 << s->max_bin);
  if (target < s->ticks)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "t = %.17g is before the simulation's time %.17g "
                          "(step %lld)",
                          t, tfmm_sim_time(s), (long long)s->step);
  return steps_to(s, target, t0);
}

tfmm_status tfmm_sim_step_criterion(tfmm_sim *s, double eta, double *shortest,
                                    size_t *longer) {
  if (shortest != NULL)
    *shortest = NAN;
  if (longer != NULL)
    *longer = 0;
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (shortest == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "the criterion's destination is NULL");
  if (!(eta > 0) || !isfinite(eta) || !(s->cfg.solver.eps > 0))
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "the step criterion sqrt(2 eta eps / |a|) needs eta "
                          "> 0 (%g) and eps > 0 (%g)",
                          eta, s->cfg.solver.eps);
  tfmm_status st = check_usable(s);
  if (st == TFMM_OK && !s->forces_known)
    st = tfmm_sim_start(s);
  if (st == TFMM_OK)
    st = tfmm_sim_device_sync(s);
  if (st != TFMM_OK)
    return st;
  const double two_eta_eps = 2.0 * eta * s->cfg.solver.eps;
  const double step = ldexp(s->tick, s->max_bin);
  double amax = 0.0;
  size_t count = 0;
  for (size_t i = 0; i < s->n; i++) {
    const double *a = s->acc + 3 * i;
    const double a2 = fma(a[0], a[0], fma(a[1], a[1], a[2] * a[2]));
    amax = a2 > amax ? a2 : amax;
    count += a2 > 0 && step * step * sqrt(a2) > two_eta_eps;
  }
  double reduced[2] = {amax, (double)count};
  st = tfmm_domain_max(s->domain, reduced, 1, &s->err);
  if (st == TFMM_OK)
    st = tfmm_domain_sum(s->domain, reduced + 1, 1, &s->err);
  if (st != TFMM_OK)
    return st;
  amax = reduced[0];
  count = (size_t)reduced[1];
  *shortest = amax > 0 ? sqrt(two_eta_eps / sqrt(amax)) : INFINITY;
  if (longer != NULL)
    *longer = count;
  s->err.message[0] = '\0';
  return TFMM_OK;
}

tfmm_status tfmm_sim_diagnostics(tfmm_sim *s, tfmm_diagnostics *out,
                                 double *energy_error) {
  /* Poisoned first: a failure leaves no stale values behind. */
  _Static_assert(sizeof(tfmm_diagnostics) % sizeof(double) == 0,
                 "tfmm_diagnostics holds doubles only");
  if (out != NULL) {
    double *v = (double *)out;
    for (size_t k = 0; k < sizeof *out / sizeof(double); k++)
      v[k] = NAN;
  }
  if (energy_error != NULL)
    *energy_error = NAN;
  if (s == NULL)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (out == NULL)
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "the diagnostics' destination is NULL");
  tfmm_status st = check_usable(s);
  if (st == TFMM_OK && !s->forces_known)
    st = tfmm_sim_start(s);
  if (st != TFMM_OK)
    return st;
  if (!tfmm_sim_synchronised(s))
    return tfmm_error_set(&s->err, TFMM_ERR_INVALID_ARGUMENT,
                          "step %lld, time %.17g: the bodies are not "
                          "synchronised (diagnostics are taken at multiples "
                          "of dt_max)",
                          (long long)s->step, tfmm_sim_time(s));
  tfmm_diagnostics d;
  st = diagnose(s, &d);
  if (st != TFMM_OK)
    return st;
  *out = d;
  if (energy_error != NULL) {
    const double e0 = s->energy_initial;
    *energy_error = e0 != 0.0 ? (d.total - e0) / fabs(e0) : 0.0;
  }
  s->err.message[0] = '\0';
  return TFMM_OK;
}
