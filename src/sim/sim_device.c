/* The simulation's state on the GPU: when the solver runs there, the
 * bodies, forces and bins are uploaded once (kernels/sim/sim_gpu.h) into
 * the solver's device context and stay there between steps; the host
 * arrays are refreshed only when a caller reads the state (tfmm_sim_save,
 * tfmm_sim_step_criterion). */
#include "sim/sim.h"

#include <string.h>

tfmm_status tfmm_sim_device_attach(tfmm_sim *s) {
  if (tfmm_solver_device(s->solver) != TFMM_DEVICE_GPU || !tfmm_has_cuda())
    return TFMM_OK;
  tfmm_status st = tfmm_sim_gpu_create(
      &s->gpu, tfmm_solver_gpu_context(s->solver), s->n, &s->err);
  if (st == TFMM_OK)
    st = tfmm_sim_gpu_upload(s->gpu, s->pos, s->vel, s->mass,
                             s->forces_known ? s->acc : NULL,
                             s->forces_known ? s->pot : NULL, s->bin, &s->err);
  if (st != TFMM_OK) {
    /* The state goes back to the solver's context before the solver, and
     * with it the context, goes; no solver is the mark of a sim that was
     * not created (its message kept). */
    tfmm_sim_gpu_destroy(s->gpu);
    s->gpu = NULL;
    tfmm_solver_destroy(s->solver);
    s->solver = NULL;
    return st;
  }
  s->host_current = 1;
  return TFMM_OK;
}

tfmm_status tfmm_sim_device_sync(tfmm_sim *s) {
  if (s->gpu == NULL || s->host_current)
    return TFMM_OK;
  const tfmm_status st = tfmm_sim_gpu_download(s->gpu, s->pos, s->vel, s->acc,
                                               s->pot, s->bin, &s->err);
  if (st == TFMM_OK)
    s->host_current = 1;
  return st;
}

int64_t tfmm_sim_device_open(tfmm_sim *s, int sync_bin, int limit,
                             tfmm_status *st) {
  int min_bin = 0;
  int64_t shorter = 0;
  *st = tfmm_sim_gpu_open(s->gpu, sync_bin, s->individual, s->two_eta_eps,
                          s->tick, limit, &min_bin, &shorter, &s->err);
  /* The bins' counts: every body in bin 0 with one global step. */
  if (*st == TFMM_OK && s->individual)
    *st = tfmm_sim_gpu_bins(s->gpu, s->bin_count, &s->err);
  s->host_current = 0;
  return shorter;
}

tfmm_status tfmm_sim_device_drift(tfmm_sim *s, double h) {
  s->host_current = 0;
  return tfmm_sim_gpu_drift(s->gpu, h, &s->err);
}

tfmm_status tfmm_sim_device_activate(tfmm_sim *s, int active_bin) {
  size_t count;
  return tfmm_sim_gpu_activate(s->gpu, active_bin, &count, &s->err);
}

tfmm_status tfmm_sim_device_close(tfmm_sim *s, int active_bin) {
  s->host_current = 0;
  return tfmm_sim_gpu_close(s->gpu, active_bin, s->tick, &s->err);
}

tfmm_status tfmm_sim_device_forces(tfmm_sim *s, int all) {
  s->host_current = 0;
  tfmm_sim_gpu *g = s->gpu;
  if (all)
    return tfmm_solver_compute_device(
        s->solver, s->n, tfmm_sim_gpu_pos(g), tfmm_sim_gpu_mass(g),
        tfmm_sim_gpu_acc(g), tfmm_sim_gpu_pot(g), tfmm_sim_gpu_stream(g));
  return tfmm_solver_compute_active_device(
      s->solver, s->n, tfmm_sim_gpu_pos(g), tfmm_sim_gpu_mass(g),
      tfmm_sim_gpu_active(g), tfmm_sim_gpu_acc(g), tfmm_sim_gpu_pot(g),
      tfmm_sim_gpu_stream(g));
}

tfmm_status tfmm_sim_device_direct(tfmm_sim *s, size_t targets) {
  s->host_current = 0;
  const tfmm_config *c = &s->cfg.solver;
  const tfmm_pair_params pair = {c->softening, c->eps, TFMM_PRECISION_DOUBLE};
  return tfmm_sim_gpu_direct(s->gpu, targets, c->G, &pair, &s->err);
}

tfmm_status tfmm_sim_device_diagnostics(tfmm_sim *s, tfmm_diagnostics *d) {
  return tfmm_sim_gpu_diagnostics(s->gpu, d, &s->err);
}
