/* A simulation's state on the GPU (sim_gpu.h): the object, the copies, the
 * kicks and the drift. The diagnostics and the snapshots are in
 * sim_gpu_diag.cu.
 *
 * Built with --fmad=false, and the kicks and the drift spelt with
 * __dmul_rn and __dadd_rn besides: each rounds the product and then the
 * sum, as the CPU's `v[k] += h * a[k]` does (src/sim/leapfrog.c). The bins
 * come from src/sim/timestep.h, whose fma, sqrt, division and ilogb are
 * correctly rounded (or exact) on both sides.
 *
 * Cost: every kernel is a stream over the bodies, bound by memory. Per
 * body the opening kick reads the bin and a (25 bytes) and, when kicked,
 * reads and writes v (48 bytes) and the bin: about 100 bytes, ~20 flops,
 * a sqrt and two divisions; 100M bodies all kicked, 10 GB, take ~3 ms at
 * the H100's 3.35 TB/s (measured 2.9 ms, the drift 2.5 ms:
 * bench/results/sim_gpu). The drift reads x, v and writes x (72 bytes, 6
 * flops), the closing kick as the opening one without the bin, activate
 * reads a byte and writes one. The minimum and the counts are reduced in
 * each block (cub::BlockReduce) and added across blocks with one integer
 * atomic each, so they are exact and independent of the order. */
#include "sim_gpu.h"
#include "sim_gpu_state.cuh"

#define CUDA_TRY_WHO "sim_gpu"
#include "cuda_try.cuh"

#include "sim/timestep.h"

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>

namespace {

constexpr int THREADS = 256;

/* Enough blocks to fill the device with the grid-stride loops below,
 * and none without work. */
unsigned grid_for(const tfmm_sim_gpu *g, size_t count) {
  const size_t want = (count + THREADS - 1) / THREADS;
  const size_t most = 8 * (size_t)(g->sm_count > 0 ? g->sm_count : 1);
  return (unsigned)(want < most ? want : most);
}

__device__ void kick(double *v, const double *a, double h) {
  for (int d = 0; d < 3; d++)
    v[d] = __dadd_rn(v[d], __dmul_rn(h, a[d]));
}

struct MinBin {
  __device__ int operator()(int a, int b) const { return b < a ? b : a; }
};

/* Adds a block's minimum bin and count into res (one atomic each). */
__device__ void block_totals(int lo, unsigned long long count,
                             tfmm_sim_gpu_counts *res) {
  using Min = cub::BlockReduce<int, THREADS>;
  using Sum = cub::BlockReduce<unsigned long long, THREADS>;
  __shared__ union {
    typename Min::TempStorage min;
    typename Sum::TempStorage sum;
  } tmp;
  const int block_lo = Min(tmp.min).Reduce(lo, MinBin{});
  __syncthreads();
  const unsigned long long block_count = Sum(tmp.sum).Sum(count);
  if (threadIdx.x == 0) {
    atomicMin(&res->min_bin, block_lo);
    atomicAdd(&res->count, block_count);
  }
}

__global__ void reset_counts(tfmm_sim_gpu_counts *res) {
  res->min_bin = INT_MAX;
  res->count = 0;
}

__global__ void __launch_bounds__(THREADS)
    open_kernel(size_t n, int sync_bin, int individual, double two_eta_eps,
                double tick, int limit, signed char *bin, double *vel,
                const double *acc, tfmm_sim_gpu_counts *res) {
  int lo = INT_MAX;
  unsigned long long shorts = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int b = bin[i];
    if (b <= sync_bin) {
      const double a[3] = {acc[3 * i], acc[3 * i + 1], acc[3 * i + 2]};
      if (individual) {
        int short_step = 0;
        b = tfmm_timestep_bin(a[0], a[1], a[2], two_eta_eps, tick, limit,
                              &short_step);
        shorts += (unsigned long long)short_step;
        bin[i] = (signed char)b;
      }
      kick(vel + 3 * i, a, tfmm_timestep_half(b, tick));
    }
    lo = b < lo ? b : lo;
  }
  block_totals(lo, shorts, res);
}

__global__ void __launch_bounds__(THREADS)
    close_kernel(size_t n, int active_bin, double tick, const signed char *bin,
                 double *vel, const double *acc) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int b = bin[i];
    if (b <= active_bin) {
      const double a[3] = {acc[3 * i], acc[3 * i + 1], acc[3 * i + 2]};
      kick(vel + 3 * i, a, tfmm_timestep_half(b, tick));
    }
  }
}

__global__ void __launch_bounds__(THREADS)
    activate_kernel(size_t n, int active_bin, const signed char *bin,
                    unsigned char *active, tfmm_sim_gpu_counts *res) {
  unsigned long long count = 0;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const unsigned char on = bin[i] <= active_bin;
    active[i] = on;
    count += on;
  }
  block_totals(INT_MAX, count, res);
}

/* Bodies per bin: a block's histogram in shared memory, added into hist
 * (TFMM_TIMESTEP_MAX_BIN + 1 counters) with one atomic per bin. */
__global__ void __launch_bounds__(THREADS)
    histogram_kernel(size_t n, const signed char *bin,
                     unsigned long long *hist) {
  __shared__ unsigned int local[TFMM_TIMESTEP_MAX_BIN + 1];
  for (int b = threadIdx.x; b <= TFMM_TIMESTEP_MAX_BIN; b += blockDim.x)
    local[b] = 0;
  __syncthreads();
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    atomicAdd(&local[bin[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b <= TFMM_TIMESTEP_MAX_BIN; b += blockDim.x)
    if (local[b] != 0)
      atomicAdd(&hist[b], (unsigned long long)local[b]);
}

/* x[k] += h v[k] over the 3n coordinates. */
__global__ void __launch_bounds__(THREADS)
    drift_kernel(size_t m, double h, double *pos, const double *vel) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
       k += stride)
    pos[k] = __dadd_rn(pos[k], __dmul_rn(h, vel[k]));
}

tfmm_status check_tick(double tick, tfmm_error *err) {
  if (!(isfinite(tick) && tick > 0.0))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: tick = %g: must be finite and > 0", tick);
  return TFMM_OK;
}

/* The counts of the last reduction, copied to the host. */
tfmm_status read_counts(tfmm_sim_gpu *g, tfmm_error *err) {
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(g->h_counts, g->d_counts, sizeof *g->h_counts,
                      cudaMemcpyDeviceToHost, g->stream));
  TRY(cudaStreamSynchronize(g->stream));
  return TFMM_OK;
}

/* A device slot of g's context for `bytes`, its pointer into *p. */
template <typename T>
tfmm_status reserve(tfmm_sim_gpu *g, int slot, size_t bytes, T **p,
                    tfmm_error *err) {
  void *q = NULL;
  CHECK(tfmm_arena_reserve(g->gpu, slot, bytes, 0, &q, err));
  *p = (T *)q;
  return TFMM_OK;
}

/* The same for a pinned host slot. */
template <typename T>
tfmm_status pinned(tfmm_sim_gpu *g, int slot, size_t bytes, T **p,
                   tfmm_error *err) {
  void *q = NULL;
  CHECK(tfmm_arena_pinned(g->gpu, slot, bytes, 0, &q, err));
  *p = (T *)q;
  return TFMM_OK;
}

tfmm_status allocate(tfmm_sim_gpu *g, tfmm_error *err) {
  const size_t n = g->n;
  TRY(cudaEventCreateWithFlags(&g->shadow_done, cudaEventDisableTiming));
  TRY(cudaEventCreateWithFlags(&g->copy_done, cudaEventDisableTiming));
  CHECK(reserve(g, TFMM_SIM_SLOT_POS, 3 * n * sizeof(double), &g->pos, err));
  CHECK(reserve(g, TFMM_SIM_SLOT_VEL, 3 * n * sizeof(double), &g->vel, err));
  CHECK(reserve(g, TFMM_SIM_SLOT_ACC, 3 * n * sizeof(double), &g->acc, err));
  CHECK(reserve(g, TFMM_SIM_SLOT_MASS, n * sizeof(double), &g->mass, err));
  CHECK(reserve(g, TFMM_SIM_SLOT_POT, n * sizeof(double), &g->pot, err));
  CHECK(reserve(g, TFMM_SIM_SLOT_BIN, n, &g->bin, err));
  CHECK(reserve(g, TFMM_SIM_SLOT_ACTIVE, n, &g->active, err));
  CHECK(
      reserve(g, TFMM_SIM_SLOT_COUNTS, sizeof *g->d_counts, &g->d_counts, err));
  CHECK(pinned(g, TFMM_SIM_PINNED_COUNTS, sizeof *g->h_counts, &g->h_counts,
               err));
  CHECK(reserve(g, TFMM_SIM_SLOT_SUMS, sizeof *g->d_sums, &g->d_sums, err));
  CHECK(pinned(g, TFMM_SIM_PINNED_SUMS, sizeof *g->h_sums, &g->h_sums, err));
  const size_t hist = (TFMM_TIMESTEP_MAX_BIN + 1) * sizeof *g->d_hist;
  CHECK(reserve(g, TFMM_SIM_SLOT_HIST, hist, &g->d_hist, err));
  CHECK(pinned(g, TFMM_SIM_PINNED_HIST, hist, &g->h_hist, err));
  /* NaN (all bits set) until forces are uploaded or computed. */
  TRY(cudaMemsetAsync(g->acc, 0xff, 3 * n * sizeof(double), g->stream));
  TRY(cudaMemsetAsync(g->pot, 0xff, n * sizeof(double), g->stream));
  TRY(cudaMemsetAsync(g->bin, 0, n, g->stream));
  TRY(cudaMemsetAsync(g->active, 0, n, g->stream));
  TRY(cudaStreamSynchronize(g->stream));
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_sim_gpu_create(tfmm_sim_gpu **out, tfmm_gpu *gpu,
                                           size_t n, tfmm_error *err) {
  if (out == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: the destination is NULL");
  *out = NULL;
  if (gpu == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: the device context is NULL");
  if (n == 0 || n > (SIZE_MAX / 3) / sizeof(double))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: n = %zu bodies: must be >= 1 and fit "
                          "in memory",
                          n);
  if (tfmm_arena_at(gpu, TFMM_SIM_SLOT_POS) != NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: the context already holds a "
                          "simulation's state");
  tfmm_sim_gpu *g = (tfmm_sim_gpu *)calloc(1, sizeof *g);
  if (g == NULL)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "sim_gpu: no memory");
  g->gpu = gpu;
  g->device = gpu->device;
  g->sm_count = gpu->sm_count;
  g->n = n;
  g->stream = gpu->streams[TFMM_STREAM_STEP];
  g->copy_stream = gpu->streams[TFMM_STREAM_COPY];
  tfmm_status st;
  {
    tfmm_device_scope scope(g->device);
    st = scope.status != cudaSuccess
             ? tfmm_cuda_try_fail(err, scope.status, CUDA_TRY_WHO,
                                  "cudaSetDevice", __FILE__, __LINE__)
             : allocate(g, err);
  }
  if (st != TFMM_OK) {
    tfmm_sim_gpu_destroy(g);
    return st;
  }
  *out = g;
  return TFMM_OK;
}

/* Release: results not reported (there is nobody left to tell, and a
 * device in error must still give back what it can); the error state they
 * may leave is cleared so that it does not reach the application. The
 * streams stay the context's; the slots go back to it. */
extern "C" void tfmm_sim_gpu_destroy(tfmm_sim_gpu *g) {
  if (g == NULL)
    return;
  {
    tfmm_device_scope scope(g->device);
    if (g->stream != NULL)
      cudaStreamSynchronize(g->stream);
    if (g->copy_stream != NULL)
      cudaStreamSynchronize(g->copy_stream);
    if (g->shadow_done != NULL)
      cudaEventDestroy(g->shadow_done);
    if (g->copy_done != NULL)
      cudaEventDestroy(g->copy_done);
    tfmm_arena_free(g->gpu, TFMM_SLOTS_SIM, TFMM_SLOTS_SIM_COUNT);
    tfmm_arena_pinned_free(g->gpu, TFMM_PINNED_SIM,
                           TFMM_SIM_PINNED_END - TFMM_PINNED_SIM);
    cudaGetLastError();
  }
  free(g);
}

extern "C" size_t tfmm_sim_gpu_count(const tfmm_sim_gpu *g) {
  return g != NULL ? g->n : 0;
}
extern "C" double *tfmm_sim_gpu_pos(tfmm_sim_gpu *g) {
  return g != NULL ? g->pos : NULL;
}
extern "C" double *tfmm_sim_gpu_vel(tfmm_sim_gpu *g) {
  return g != NULL ? g->vel : NULL;
}
extern "C" double *tfmm_sim_gpu_mass(tfmm_sim_gpu *g) {
  return g != NULL ? g->mass : NULL;
}
extern "C" double *tfmm_sim_gpu_acc(tfmm_sim_gpu *g) {
  return g != NULL ? g->acc : NULL;
}
extern "C" double *tfmm_sim_gpu_pot(tfmm_sim_gpu *g) {
  return g != NULL ? g->pot : NULL;
}
extern "C" signed char *tfmm_sim_gpu_bin(tfmm_sim_gpu *g) {
  return g != NULL ? g->bin : NULL;
}
extern "C" unsigned char *tfmm_sim_gpu_active(tfmm_sim_gpu *g) {
  return g != NULL ? g->active : NULL;
}
extern "C" void *tfmm_sim_gpu_stream(tfmm_sim_gpu *g) {
  return g != NULL ? (void *)g->stream : NULL;
}

extern "C" tfmm_status
tfmm_sim_gpu_upload(tfmm_sim_gpu *g, const double *pos, const double *vel,
                    const double *mass, const double *acc, const double *pot,
                    const signed char *bin, tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  if (pos == NULL || vel == NULL || mass == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: upload: pos, vel and mass are required");
  const size_t n = g->n;
  for (size_t i = 0; bin != NULL && i < n; i++)
    if (bin[i] < 0 || bin[i] > TFMM_TIMESTEP_MAX_BIN)
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "sim_gpu: upload: body %zu: bin %d not in [0, %d]",
                            i, (int)bin[i], TFMM_TIMESTEP_MAX_BIN);
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  const size_t b3 = 3 * n * sizeof(double), b1 = n * sizeof(double);
  const cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
  TRY(cudaMemcpyAsync(g->pos, pos, b3, h2d, g->stream));
  TRY(cudaMemcpyAsync(g->vel, vel, b3, h2d, g->stream));
  TRY(cudaMemcpyAsync(g->mass, mass, b1, h2d, g->stream));
  if (acc != NULL)
    TRY(cudaMemcpyAsync(g->acc, acc, b3, h2d, g->stream));
  else
    TRY(cudaMemsetAsync(g->acc, 0xff, b3, g->stream));
  if (pot != NULL)
    TRY(cudaMemcpyAsync(g->pot, pot, b1, h2d, g->stream));
  else
    TRY(cudaMemsetAsync(g->pot, 0xff, b1, g->stream));
  if (bin != NULL)
    TRY(cudaMemcpyAsync(g->bin, bin, n, h2d, g->stream));
  else
    TRY(cudaMemsetAsync(g->bin, 0, n, g->stream));
  TRY(cudaMemsetAsync(g->active, 0, n, g->stream));
  TRY(cudaStreamSynchronize(g->stream));
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_download(tfmm_sim_gpu *g, double *pos,
                                             double *vel, double *acc,
                                             double *pot, signed char *bin,
                                             tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  const size_t n = g->n;
  const size_t b3 = 3 * n * sizeof(double), b1 = n * sizeof(double);
  const cudaMemcpyKind d2h = cudaMemcpyDeviceToHost;
  if (pos != NULL)
    TRY(cudaMemcpyAsync(pos, g->pos, b3, d2h, g->stream));
  if (vel != NULL)
    TRY(cudaMemcpyAsync(vel, g->vel, b3, d2h, g->stream));
  if (acc != NULL)
    TRY(cudaMemcpyAsync(acc, g->acc, b3, d2h, g->stream));
  if (pot != NULL)
    TRY(cudaMemcpyAsync(pot, g->pot, b1, d2h, g->stream));
  if (bin != NULL)
    TRY(cudaMemcpyAsync(bin, g->bin, n, d2h, g->stream));
  TRY(cudaStreamSynchronize(g->stream));
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_open(tfmm_sim_gpu *g, int sync_bin,
                                         int individual, double two_eta_eps,
                                         double tick, int limit_bin,
                                         int *min_bin, int64_t *short_steps,
                                         tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  CHECK(check_tick(tick, err));
  if (individual && !(isfinite(two_eta_eps) && two_eta_eps >= 0.0))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: open: 2 eta eps = %g: must be finite and "
                          ">= 0",
                          two_eta_eps);
  if (individual && (limit_bin < 0 || limit_bin > TFMM_TIMESTEP_MAX_BIN))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: open: limit bin %d not in [0, %d]",
                          limit_bin, TFMM_TIMESTEP_MAX_BIN);
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  reset_counts<<<1, 1, 0, g->stream>>>(g->d_counts);
  open_kernel<<<grid_for(g, g->n), THREADS, 0, g->stream>>>(
      g->n, sync_bin, individual != 0, two_eta_eps, tick, limit_bin, g->bin,
      g->vel, g->acc, g->d_counts);
  CHECK(read_counts(g, err));
  if (min_bin != NULL)
    *min_bin = g->h_counts->min_bin;
  if (short_steps != NULL)
    *short_steps = (int64_t)g->h_counts->count;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_drift(tfmm_sim_gpu *g, double h,
                                          tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  if (!isfinite(h))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: drift: h = %g: must be finite", h);
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  drift_kernel<<<grid_for(g, 3 * g->n), THREADS, 0, g->stream>>>(
      3 * g->n, h, g->pos, g->vel);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_activate(tfmm_sim_gpu *g, int active_bin,
                                             size_t *count, tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  reset_counts<<<1, 1, 0, g->stream>>>(g->d_counts);
  activate_kernel<<<grid_for(g, g->n), THREADS, 0, g->stream>>>(
      g->n, active_bin, g->bin, g->active, g->d_counts);
  CHECK(read_counts(g, err));
  if (count != NULL)
    *count = (size_t)g->h_counts->count;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_close(tfmm_sim_gpu *g, int active_bin,
                                          double tick, tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  CHECK(check_tick(tick, err));
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  close_kernel<<<grid_for(g, g->n), THREADS, 0, g->stream>>>(
      g->n, active_bin, tick, g->bin, g->vel, g->acc);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_bins(tfmm_sim_gpu *g, int64_t *counts,
                                         tfmm_error *err) {
  tfmm_status st = tfmm_sim_gpu_check(g, err);
  if (st != TFMM_OK)
    return st;
  tfmm_device_scope scope(g->device);
  const size_t bytes = (TFMM_TIMESTEP_MAX_BIN + 1) * sizeof *g->d_hist;
  TRY(cudaMemsetAsync(g->d_hist, 0, bytes, g->stream));
  histogram_kernel<<<grid_for(g, g->n), THREADS, 0, g->stream>>>(g->n, g->bin,
                                                                 g->d_hist);
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(g->h_hist, g->d_hist, bytes, cudaMemcpyDeviceToHost,
                      g->stream));
  TRY(cudaStreamSynchronize(g->stream));
  for (int b = 0; b <= TFMM_TIMESTEP_MAX_BIN; b++)
    counts[b] = (int64_t)g->h_hist[b];
  return TFMM_OK;
}
