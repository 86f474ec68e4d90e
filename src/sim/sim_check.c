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
  return TFMM_OK;
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

tfmm_status tfmm_sim_check_state(const tfmm_sim_state *s, double dt,
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
  if (!isfinite(s->time_initial + (double)s->step * dt))
    return tfmm_error_set(err, bad,
                          "state: the time at step %lld with dt = %g is not "
                          "finite",
                          (long long)s->step, dt);
  return TFMM_OK;
}
