/* A simulation's state on the GPU in a build without CUDA: there is no
 * device, no object can be made, and every request says so. */
#include "sim_gpu.h"

static tfmm_status none(tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                        "sim_gpu: this tilefmm was built without CUDA "
                        "(configure with TILEFMM_CUDA=ON)");
}

tfmm_status tfmm_sim_gpu_create(tfmm_sim_gpu **out, tfmm_gpu *gpu, size_t n,
                                tfmm_error *err) {
  (void)gpu, (void)n;
  if (out != NULL)
    *out = NULL;
  return none(err);
}

void tfmm_sim_gpu_destroy(tfmm_sim_gpu *g) { (void)g; }

size_t tfmm_sim_gpu_count(const tfmm_sim_gpu *g) {
  (void)g;
  return 0;
}

double *tfmm_sim_gpu_pos(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

double *tfmm_sim_gpu_vel(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

double *tfmm_sim_gpu_mass(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

double *tfmm_sim_gpu_acc(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

double *tfmm_sim_gpu_pot(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

signed char *tfmm_sim_gpu_bin(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

unsigned char *tfmm_sim_gpu_active(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

void *tfmm_sim_gpu_stream(tfmm_sim_gpu *g) {
  (void)g;
  return NULL;
}

tfmm_status tfmm_sim_gpu_upload(tfmm_sim_gpu *g, const double *pos,
                                const double *vel, const double *mass,
                                const double *acc, const double *pot,
                                const signed char *bin, tfmm_error *err) {
  (void)g, (void)pos, (void)vel, (void)mass, (void)acc, (void)pot, (void)bin;
  return none(err);
}

tfmm_status tfmm_sim_gpu_download(tfmm_sim_gpu *g, double *pos, double *vel,
                                  double *acc, double *pot, signed char *bin,
                                  tfmm_error *err) {
  (void)g, (void)pos, (void)vel, (void)acc, (void)pot, (void)bin;
  return none(err);
}

tfmm_status tfmm_sim_gpu_open(tfmm_sim_gpu *g, int sync_bin, int individual,
                              double two_eta_eps, double tick, int limit_bin,
                              int *min_bin, int64_t *short_steps,
                              tfmm_error *err) {
  (void)g, (void)sync_bin, (void)individual, (void)two_eta_eps, (void)tick,
      (void)limit_bin, (void)min_bin, (void)short_steps;
  return none(err);
}

tfmm_status tfmm_sim_gpu_drift(tfmm_sim_gpu *g, double h, tfmm_error *err) {
  (void)g, (void)h;
  return none(err);
}

tfmm_status tfmm_sim_gpu_activate(tfmm_sim_gpu *g, int active_bin,
                                  size_t *count, tfmm_error *err) {
  (void)g, (void)active_bin, (void)count;
  return none(err);
}

tfmm_status tfmm_sim_gpu_direct(tfmm_sim_gpu *g, size_t k, double G,
                                const tfmm_pair_params *pair, tfmm_error *err) {
  (void)g, (void)k, (void)G, (void)pair;
  return none(err);
}

tfmm_status tfmm_sim_gpu_close(tfmm_sim_gpu *g, int active_bin, double tick,
                               tfmm_error *err) {
  (void)g, (void)active_bin, (void)tick;
  return none(err);
}

tfmm_status tfmm_sim_gpu_diagnostics(tfmm_sim_gpu *g, tfmm_diagnostics *out,
                                     tfmm_error *err) {
  (void)g, (void)out;
  return none(err);
}

tfmm_status tfmm_sim_gpu_snapshot_begin(tfmm_sim_gpu *g, tfmm_error *err) {
  (void)g;
  return none(err);
}

tfmm_status tfmm_sim_gpu_snapshot_wait(tfmm_sim_gpu *g, const double **pos,
                                       const double **vel, const double **acc,
                                       const double **pot,
                                       const signed char **bin,
                                       tfmm_error *err) {
  (void)g, (void)pos, (void)vel, (void)acc, (void)pot, (void)bin;
  return none(err);
}

tfmm_status tfmm_sim_gpu_bins(tfmm_sim_gpu *g, int64_t *counts,
                              tfmm_error *err) {
  (void)g, (void)counts;
  return none(err);
}
