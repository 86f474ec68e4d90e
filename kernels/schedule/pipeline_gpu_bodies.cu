/* The gpu schedule's entry points for bodies that live on the device
 * (pipeline_gpu.h): their checks and bounds, the count of their targets,
 * and their scaling into the tree's input. */
#include "pipeline_gpu.h"

#define CUDA_TRY_WHO "gpu schedule"
#include "cuda_try.cuh"

#include "bodies_gpu.h"
#include "host_copy.h"
#include "pipeline_gpu_state.cuh"
#include "targets_gpu.h"

namespace {

tfmm_status check_device_bodies(tfmm_pipeline_gpu *pl, size_t n,
                                const double *pos, const double *mass,
                                tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  CHECK(reserve(s, State::CHECKS,
                State::CHECK_VALUES * sizeof(unsigned long long), err));
  unsigned long long *bad = at<unsigned long long>(s, State::CHECKS);
  CHECK(tfmm_bodies_gpu_first_invalid(n, pos, mass, bad, st, err));
  TRY(cudaMemcpyAsync(s->host, bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                      st));
  TRY(cudaStreamSynchronize(st));
  const unsigned long long first =
      s->host[0] < s->host[1] ? s->host[0] : s->host[1];
  if (first == ~0ull)
    return TFMM_OK;
  double x[4];
  TRY(cudaMemcpy(x, pos + 3 * first, 3 * sizeof(double),
                 cudaMemcpyDeviceToHost));
  TRY(cudaMemcpy(x + 3, mass + first, sizeof(double), cudaMemcpyDeviceToHost));
  if (first == s->host[0])
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "body %llu: position (%g, %g, %g) is not finite",
                          first, x[0], x[1], x[2]);
  return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "body %llu: mass %g is not finite and positive", first,
                        x[3]);
}

/* The targets among n bytes of the device (tfmm_pipeline_gpu_count_targets). */
tfmm_status count_targets(tfmm_pipeline_gpu *pl, size_t n,
                          const unsigned char *active, size_t *count,
                          tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  CHECK(reserve(s, State::TARGET_SUM, sizeof(int64_t), err));
  int64_t *sum = at<int64_t>(s, State::TARGET_SUM);
  size_t bytes = 0;
  CHECK(tfmm_targets_gpu_count(nullptr, &bytes, n, active, sum, st, err));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  CHECK(tfmm_targets_gpu_count(s->buf[State::SCAN_TEMP].p, &bytes, n, active,
                               sum, st, err));
  int64_t h = 0;
  TRY(cudaMemcpyAsync(&h, sum, sizeof h, cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  *count = (size_t)h;
  return TFMM_OK;
}

tfmm_status bounds(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                   const double *mass, void *after, double out[7],
                   tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  TRY(cudaStreamSynchronize((cudaStream_t)after));
  CHECK(check_device_bodies(pl, n, pos, mass, err));
  CHECK(reserve(s, State::BOUNDS, 7 * sizeof(double), err));
  double *d_out = at<double>(s, State::BOUNDS);
  size_t bytes = 0;
  CHECK(tfmm_bodies_gpu_bounds(nullptr, &bytes, n, pos, mass, d_out, st, err));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  CHECK(tfmm_bodies_gpu_bounds(s->buf[State::SCAN_TEMP].p, &bytes, n, pos, mass,
                               d_out, st, err));
  TRY(cudaMemcpyAsync(out, d_out, 7 * sizeof(double), cudaMemcpyDeviceToHost,
                      st));
  TRY(cudaStreamSynchronize(st));
  return TFMM_OK;
}
/* Host bodies as they are into the tree's buffer (tfmm_pipeline_gpu_put). */
tfmm_status put(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                const double *mass, const double **d_pos, const double **d_mass,
                tfmm_error *err) {
  double *out = nullptr;
  CHECK(tfmm_tree_gpu_hybrid_bodies(&pl->base, n, &out, err));
  CHECK(tfmm_gpu_copy_host(pl->base.gpu, out, pos, 3 * n * sizeof *pos, 1,
                           stream_of(pl), err));
  CHECK(tfmm_gpu_copy_host(pl->base.gpu, out + 3 * n, mass, n * sizeof *mass, 1,
                           stream_of(pl), err));
  *d_pos = out;
  *d_mass = out + 3 * n;
  return TFMM_OK;
}

/* The room put takes (tfmm_pipeline_gpu_reserve). */
tfmm_status reserve_put(tfmm_pipeline_gpu *pl, size_t n, tfmm_error *err) {
  double *out = nullptr;
  CHECK(tfmm_tree_gpu_hybrid_bodies(&pl->base, n, &out, err));
  return tfmm_gpu_copy_host_reserve(pl->base.gpu, 3 * n * sizeof(double), err);
}

tfmm_status scale(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                  const double *mass, int k, int j, const double **spos,
                  const double **smass, tfmm_error *err) {
  /* Where the tree takes its bodies from (no copy then). */
  double *out = nullptr;
  CHECK(tfmm_tree_gpu_hybrid_bodies(&pl->base, n, &out, err));
  CHECK(tfmm_bodies_gpu_scale(n, pos, mass, k, j, out, stream_of(pl), err));
  *spos = out;
  *smass = out + 3 * n;
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_pipeline_gpu_count_targets(tfmm_pipeline_gpu *pl, size_t n,
                                const unsigned char *d_active, size_t *count,
                                tfmm_error *err) {
  if (pl == nullptr || pl->base.gpu == nullptr || pl->state == nullptr ||
      d_active == nullptr || count == nullptr || n == 0 ||
      n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the bounds first, and a mask of "
                          "1..2^31 - 1 bodies");
  return entered(pl, pl->base.gpu, err,
                 [&] { return count_targets(pl, n, d_active, count, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_bounds(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu, size_t n,
                         const double *d_pos, const double *d_mass, void *after,
                         double out[7], tfmm_error *err) {
  if (pl == nullptr || d_pos == nullptr || d_mass == nullptr || n == 0 ||
      n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no state, no bodies or too many");
  return entered(pl, gpu, err,
                 [&] { return bounds(pl, n, d_pos, d_mass, after, out, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_scale(tfmm_pipeline_gpu *pl, size_t n, const double *d_pos,
                        const double *d_mass, int length_exp, int mass_exp,
                        const double **pos, const double **mass,
                        tfmm_error *err) {
  if (pl == nullptr || pl->base.gpu == nullptr || pl->state == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the bounds first");
  return entered(pl, pl->base.gpu, err, [&] {
    return scale(pl, n, d_pos, d_mass, length_exp, mass_exp, pos, mass, err);
  });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_put(tfmm_pipeline_gpu *pl, tfmm_gpu *gpu, size_t n,
                      const double *pos, const double *mass,
                      const double **d_pos, const double **d_mass,
                      tfmm_error *err) {
  if (pl == nullptr || pos == nullptr || mass == nullptr || n == 0 ||
      n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no state, no bodies or too many");
  return entered(pl, gpu, err,
                 [&] { return put(pl, n, pos, mass, d_pos, d_mass, err); });
}

extern "C" tfmm_status tfmm_pipeline_gpu_reserve(tfmm_pipeline_gpu *pl,
                                                 tfmm_gpu *gpu, size_t n,
                                                 tfmm_error *err) {
  if (pl == nullptr || gpu == nullptr || n == 0 || n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no state, no device, no bodies or "
                          "too many");
  return entered(pl, gpu, err, [&] { return reserve_put(pl, n, err); });
}
