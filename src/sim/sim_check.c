/* What tfmm_sim_create and tfmm_sim_restore refuse, checked before
 * anything is allocated: a step that is not a positive finite number,
 * bodies that are not finite or masses that are not positive, a state
 * whose forces or counters cannot be continued from. Each message names
 * the field, or the body by its index. */
#include "sim/sim.h"

#include <math.h>

tfmm_status tfmm_sim_check_config(const tfmm_sim_config *cfg, tfmm_error *err) {
  const tfmm_status bad = TFMM_ERR_INVALID_ARGUMENT;
  if (cfg == NULL)
    return tfmm_error_set(err, bad, "configuration is NULL");
  if (!isfinite(cfg->dt) || !(cfg->dt > 0))
    return tfmm_error_set(err, bad, "dt = %g: must be finite and > 0", cfg->dt);
  if (!isfinite(cfg->time_initial))
    return tfmm_error_set(err, bad, "time_initial = %g: must be finite",
                          cfg->time_initial);
  if (!isfinite(cfg->eta) || !(cfg->eta >= 0))
    return tfmm_error_set(err, bad, "eta = %g: must be finite and >= 0",
                          cfg->eta);
  if (cfg->eta == 0)
    return TFMM_OK;
  if (!(cfg->solver.eps > 0))
    return tfmm_error_set(err, bad,
                          "eta = %g: individual time steps need a softening "
                          "length (eps > 0): the criterion is sqrt(2 eta eps "
                          "/ |a|)",
                          cfg->eta);
  const double dt_max = cfg->dt_max > 0 ? cfg->dt_max : cfg->dt;
  if (!isfinite(cfg->dt_max) || !(cfg->dt_max >= 0))
    return tfmm_error_set(err, bad, "dt_max = %g: must be finite and > 0",
                          cfg->dt_max);
  if (!isfinite(cfg->dt_min) || !(cfg->dt_min >= 0))
    return tfmm_error_set(err, bad, "dt_min = %g: must be finite and > 0",
                          cfg->dt_min);
  if (cfg->dt_min > dt_max)
    return tfmm_error_set(err, bad, "dt_min = %g is longer than dt_max = %g",
                          cfg->dt_min, dt_max);
  if (cfg->dt_min > 0 &&
      !(dt_max / cfg->dt_min < ldexp(1.0, TFMM_TIMESTEP_MAX_BIN + 1)))
    return tfmm_error_set(err, bad,
                          "dt_min = %g: at most 2^%d times shorter than "
                          "dt_max = %g",
                          cfg->dt_min, TFMM_TIMESTEP_MAX_BIN, dt_max);
  if (cfg->keep_tree != 0 && cfg->keep_tree != 1)
    return tfmm_error_set(err, bad, "keep_tree = %d: must be 0 or 1",
                          cfg->keep_tree);
  return TFMM_OK;
}

void tfmm_sim_clock(const tfmm_sim_config *cfg, double *tick, int *max_bin) {
  if (cfg->eta == 0) {
    *tick = cfg->dt;
    *max_bin = 0;
    return;
  }
  const double dt_max = cfg->dt_max > 0 ? cfg->dt_max : cfg->dt;
  int k = 16;
  if (cfg->dt_min > 0) {
    /* floor(log2(dt_max / dt_min)), so that dt_max / 2^K >= dt_min. */
    k = ilogb(dt_max / cfg->dt_min);
    while (k > 0 && ldexp(dt_max, -k) < cfg->dt_min)
      k--;
  }
  *max_bin = k;
  *tick = ldexp(dt_max, -k);
}

static int finite3(const double *v) {
  return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

tfmm_status tfmm_sim_check_bodies(size_t n, const double *pos,
                                  const double *vel, const double *mass,
                                  tfmm_error *err) {
  const tfmm_status bad = TFMM_ERR_INVALID_ARGUMENT;
  if (n == 0)
    return tfmm_error_set(err, bad, "n = 0: a simulation needs bodies");
  if (pos == NULL || vel == NULL || mass == NULL)
    return tfmm_error_set(err, bad, "%s is NULL",
                          pos == NULL   ? "pos"
                          : vel == NULL ? "vel"
                                        : "mass");
  for (size_t i = 0; i < n; i++) {
    if (!finite3(pos + 3 * i))
      return tfmm_error_set(err, bad,
                            "body %zu: position (%g, %g, %g) is "
                            "not finite",
                            i, pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    if (!finite3(vel + 3 * i))
      return tfmm_error_set(err, bad,
                            "body %zu: velocity (%g, %g, %g) is "
                            "not finite",
                            i, vel[3 * i], vel[3 * i + 1], vel[3 * i + 2]);
    if (!isfinite(mass[i]) || !(mass[i] > 0))
      return tfmm_error_set(
          err, bad, "body %zu: mass %g: must be finite and > 0", i, mass[i]);
  }
  return TFMM_OK;
}

tfmm_status tfmm_sim_check_state(const tfmm_sim_state *s, const tfmm_sim *sim,
                                 tfmm_error *err) {
  const tfmm_status bad = TFMM_ERR_INVALID_ARGUMENT;
  if (s == NULL)
    return tfmm_error_set(err, bad, "state is NULL");
  tfmm_status st = tfmm_sim_check_bodies(s->n, s->pos, s->vel, s->mass, err);
  if (st != TFMM_OK)
    return st;
  if (s->acc == NULL || s->pot == NULL)
    return tfmm_error_set(err, bad, "state: %s is NULL",
                          s->acc == NULL ? "acc" : "pot");
  for (size_t i = 0; i < s->n; i++)
    if (!finite3(s->acc + 3 * i) || !isfinite(s->pot[i]))
      return tfmm_error_set(err, bad,
                            "state: body %zu: the %s is not finite (a "
                            "state saved before the forces were computed?)",
                            i,
                            isfinite(s->pot[i]) ? "acceleration" : "potential");
  /* At most 1e15 (as tilefmm run's checkpoints): (double)step is exact
   * below 2^53. */
  if (s->step < 0 || s->step > (int64_t)1e15)
    return tfmm_error_set(err, bad, "state: step %lld: must be in [0, 1e15]",
                          (long long)s->step);
  if (!isfinite(s->time_initial) || !isfinite(s->energy_initial))
    return tfmm_error_set(
        err, bad, "state: %s = %g: must be finite",
        isfinite(s->time_initial) ? "energy_initial" : "time_initial",
        isfinite(s->time_initial) ? s->energy_initial : s->time_initial);
  /* The clock: a state of one global step (tick 0) has ticks = step. */
  const int legacy = s->tick == 0 && s->ticks == 0 && s->bins == NULL;
  const int64_t ticks = legacy ? s->step : s->ticks;
  if (!legacy && s->tick != sim->tick)
    return tfmm_error_set(err, bad,
                          "state: tick %.17g differs from the configuration's "
                          "%.17g (dt, or dt_max / 2^K with individual steps: "
                          "give the eta, dt, dt_max and dt_min it ran with)",
                          s->tick, sim->tick);
  if (ticks < 0 || ticks > ((int64_t)1 << 62))
    return tfmm_error_set(err, bad, "state: ticks %lld: must be in [0, 2^62]",
                          (long long)ticks);
  if (s->bins != NULL)
    for (size_t i = 0; i < s->n; i++)
      if (s->bins[i] < 0 || s->bins[i] > sim->max_bin)
        return tfmm_error_set(err, bad,
                              "state: body %zu: bin %d: must be in [0, %d]", i,
                              s->bins[i], sim->max_bin);
  if (!isfinite(s->time_initial + (double)ticks * sim->tick))
    return tfmm_error_set(err, bad,
                          "state: the time at tick %lld with a tick of %g is "
                          "not finite",
                          (long long)ticks, sim->tick);
  return TFMM_OK;
}
