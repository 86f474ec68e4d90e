/* The diagnostics and the snapshots of a simulation's state on the GPU
 * (sim_gpu.h).
 *
 * Diagnostics: the terms of each body as src/sim/diagnostics.c forms them
 * (this file is built with --fmad=false, so each product and sum is
 * rounded on its own, as there), reduced by one cub::DeviceReduce over the
 * bodies into 12 pairs (s, c) whose value is s + c. Two pairs combine by
 * Knuth's TwoSum (TAOCP vol. 2, sec. 4.2.2, Theorem B): s1 + s2 = t + e
 * exactly, e carried in c, so no digit of any partial sum is lost until
 * the final s + c; the c's own sums lose only O(u^2) of the terms'
 * magnitudes (Ogita, Rump & Oishi 2005, SIAM J. Sci. Comput. 26, 1955,
 * sec. 4). CUB's reduction has no atomics and a fixed shape for a given n
 * and device, so the bits are the same run to run.
 *
 * Cost: one pass, 64 bytes a body read (x, v, m, phi), ~40 flops a body
 * for the terms and ~10 a pair combined: 100M bodies in ~2 ms of memory
 * traffic at 3.35 TB/s (measured on the H100: 2.2 ms); the 192-byte
 * partials keep one body per thread, in 118 to 128 registers, no spills. */
#include "sim_gpu.h"
#include "sim_gpu_state.cuh"

#define CUDA_TRY_WHO "sim_gpu"
#include "cuda_try.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "sim/diagnostics_terms.h"

#include <math.h>
#include <stdint.h>

namespace {

using Pair = tfmm_sim_gpu_pair;
using Sums = tfmm_sim_gpu_sums;

/* (a.s + a.c) + (b.s + b.c) with the rounding of a.s + b.s kept. */
__host__ __device__ Pair two_sum(const Pair &a, const Pair &b) {
  const double t = a.s + b.s;
  const double bv = t - a.s;
  const double e = (a.s - (t - bv)) + (b.s - bv);
  return Pair{t, (a.c + b.c) + e};
}

struct MergeSums {
  __host__ __device__ Sums operator()(const Sums &a, const Sums &b) const {
    Sums r;
    for (int q = 0; q < TFMM_SIM_GPU_SUMS; q++)
      r.q[q] = two_sum(a.q[q], b.q[q]);
    return r;
  }
};

/* Body i's terms, written as diagnostics.c's block_sums writes them. */
struct BodyTerms {
  const double *pos, *vel, *mass, *pot;
  __host__ __device__ Sums operator()(int64_t i) const {
    double t[TFMM_SIM_GPU_SUMS];
    tfmm_diagnostics_terms(mass[i], pos + 3 * i, vel + 3 * i, pot[i], t);
    Sums r;
    for (int q = 0; q < TFMM_SIM_GPU_SUMS; q++)
      r.q[q] = Pair{t[q], 0.0};
    return r;
  }
};

using TermsIter =
    thrust::transform_iterator<BodyTerms, thrust::counting_iterator<int64_t>>;

/* The 12 sums into g->h_sums: CUB's scratch sized in two calls and kept
 * in the state's scratch slot of the arena, a quarter more room when it
 * grows. */
tfmm_status reduce_sums(tfmm_sim_gpu *g, tfmm_error *err) {
  const TermsIter it(thrust::counting_iterator<int64_t>(0),
                     BodyTerms{g->pos, g->vel, g->mass, g->pot});
  const Sums zero = {};
  const int64_t n = (int64_t)g->n;
  size_t bytes = 0;
  TRY(cub::DeviceReduce::Reduce(nullptr, bytes, it, g->d_sums, n, MergeSums{},
                                zero, g->stream));
  tfmm_device_buffer *scratch = tfmm_arena_slot(g->gpu, TFMM_SIM_SLOT_SCRATCH);
  TRY(tfmm_device_buffer_reserve(scratch, bytes));
  TRY(cub::DeviceReduce::Reduce(scratch->p, bytes, it, g->d_sums, n,
                                MergeSums{}, zero, g->stream));
  TRY(cudaMemcpyAsync(g->h_sums, g->d_sums, sizeof *g->h_sums,
                      cudaMemcpyDeviceToHost, g->stream));
  TRY(cudaStreamSynchronize(g->stream));
  return TFMM_OK;
}

/* Bytes of the snapshot's arrays: 10n doubles, then n bins. */
size_t shadow_bytes(const tfmm_sim_gpu *g) {
  return 10 * g->n * sizeof(double) + g->n;
}

tfmm_status allocate_shadow(tfmm_sim_gpu *g, tfmm_error *err) {
  if (g->d_shadow != NULL)
    return TFMM_OK;
  const size_t bytes = shadow_bytes(g);
  void *d = NULL, *h[2] = {NULL, NULL};
  CHECK(tfmm_arena_reserve(g->gpu, TFMM_SIM_SLOT_SHADOW, bytes, 0, &d, err));
  for (int k = 0; k < 2; k++)
    CHECK(tfmm_arena_pinned(g->gpu, TFMM_SIM_PINNED_SHADOW + k, bytes, 0, &h[k],
                            err));
  g->d_shadow = d;
  g->h_shadow[0] = h[0];
  g->h_shadow[1] = h[1];
  g->copied = 1; /* the first snapshot goes to buffer 0 */
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_sim_gpu_diagnostics(tfmm_sim_gpu *g,
                                                tfmm_diagnostics *out,
                                                tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  if (out == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: diagnostics: the destination is NULL");
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  CHECK(reduce_sums(g, err));
  double total[TFMM_SIM_GPU_SUMS];
  for (int q = 0; q < TFMM_SIM_GPU_SUMS; q++)
    total[q] = g->h_sums->q[q].s + g->h_sums->q[q].c;
  tfmm_diagnostics_finish(total, out);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_snapshot_begin(tfmm_sim_gpu *g,
                                                   tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  CHECK(allocate_shadow(g, err));
  const size_t n = g->n;
  double *shadow = (double *)g->d_shadow;
  const cudaMemcpyKind d2d = cudaMemcpyDeviceToDevice;
  /* The last snapshot's copy to the host must have read the shadow
   * before it is written again. */
  if (g->snapshot_begun)
    TRY(cudaStreamWaitEvent(g->stream, g->copy_done, 0));
  TRY(cudaMemcpyAsync(shadow, g->pos, 3 * n * sizeof(double), d2d, g->stream));
  TRY(cudaMemcpyAsync(shadow + 3 * n, g->vel, 3 * n * sizeof(double), d2d,
                      g->stream));
  TRY(cudaMemcpyAsync(shadow + 6 * n, g->acc, 3 * n * sizeof(double), d2d,
                      g->stream));
  TRY(cudaMemcpyAsync(shadow + 9 * n, g->pot, n * sizeof(double), d2d,
                      g->stream));
  TRY(cudaMemcpyAsync(shadow + 10 * n, g->bin, n, d2d, g->stream));
  TRY(cudaEventRecord(g->shadow_done, g->stream));
  TRY(cudaStreamWaitEvent(g->copy_stream, g->shadow_done, 0));
  /* The other host buffer than the last snapshot's, which its caller may
   * still be reading (tfmm_sim_save_end's views). */
  const int k = 1 - g->copied;
  TRY(cudaMemcpyAsync(g->h_shadow[k], g->d_shadow, shadow_bytes(g),
                      cudaMemcpyDeviceToHost, g->copy_stream));
  g->copied = k;
  /* The other buffer copied to once now, after this one (its contents are
   * not read: the next begin copies into it again), so that both buffers'
   * first use is the first snapshot's and not a later one's, mid-run;
   * copy_done then covers both copies. */
  if (!g->warmed) {
    TRY(cudaMemcpyAsync(g->h_shadow[1 - k], g->d_shadow, shadow_bytes(g),
                        cudaMemcpyDeviceToHost, g->copy_stream));
    g->warmed = 1;
  }
  TRY(cudaEventRecord(g->copy_done, g->copy_stream));
  g->snapshot_begun = 1;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_sim_gpu_snapshot_wait(
    tfmm_sim_gpu *g, const double **pos, const double **vel, const double **acc,
    const double **pot, const signed char **bin, tfmm_error *err) {
  CHECK(tfmm_sim_gpu_check(g, err));
  if (!g->snapshot_begun)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "sim_gpu: snapshot_wait: no snapshot was begun");
  tfmm_device_scope scope(g->device);
  TRY(scope.status);
  TRY(cudaEventSynchronize(g->copy_done));
  const size_t n = g->n;
  const double *h = (const double *)g->h_shadow[g->copied];
  if (pos != NULL)
    *pos = h;
  if (vel != NULL)
    *vel = h + 3 * n;
  if (acc != NULL)
    *acc = h + 6 * n;
  if (pot != NULL)
    *pot = h + 9 * n;
  if (bin != NULL)
    *bin = (const signed char *)(h + 10 * n);
  return TFMM_OK;
}
