/* All-pairs forces: the tiled kernel of GPU Gems 3, chapter 31 (Nyland,
 * Harris & Prins 2007), section 31.4.
 *
 * A block of p x q threads owns p * r target bodies, r per thread, held in
 * registers. Sources stream through shared memory in tiles of p * q bodies,
 * each thread loading one; thread row y sums slice y (p sources) of every
 * tile, so the q rows of a block share each body's sum (section 31.4.1,
 * "multiple threads per body") and their partial sums are added at the end
 * in a fixed order. Holding r targets per thread lets one shared-memory
 * load feed r interactions.
 *
 * Cost per interaction (nearfield/interaction.h): 13 FP32 instructions and
 * one MUFU.RSQ (12 without the potential), plus 1/r of an LDS.128. Limit:
 * the FP32 pipe, SMs x 128 lanes x clock / 12 to 13 interactions per
 * second (about 2.6e12 to 2.8e12 on an H100 SXM at 1.98 GHz); memory
 * traffic is 16 bytes per body per tile pass, negligible for N >> p.
 *
 * No atomics: the same input gives the same bits, run after run.
 */
#include "gpu_context.h"
#include "nearfield/interaction.h"

#include <stdio.h>

namespace {

struct target_set {
  float x, y, z;
  int index;
};

/* Adds slice sources [0, count) from shared memory to the r targets.
 * SELF: compare indices to skip each target's own pair (only in slices that
 * overlap the block's targets; elsewhere the check compiles away). */
template <int UNROLL, int R, bool SELF>
__device__ __forceinline__ void
sum_slice(const float4 *__restrict__ src, int count, int first,
          const target_set (&t)[R], float eps2, tfmm_acc_f32 (&acc)[R]) {
  tfmm_acc_f32 part[R];
#pragma unroll
  for (int r = 0; r < R; r++)
    part[r] = tfmm_acc_f32{0.f, 0.f, 0.f, 0.f};
  if (!SELF) {
    /* count == p, a multiple of 32 and so of UNROLL. */
    for (int j = 0; j < count; j += UNROLL) {
#pragma unroll
      for (int u = 0; u < UNROLL; u++) {
        float4 s = src[j + u];
#pragma unroll
        for (int r = 0; r < R; r++)
          tfmm_interaction_f32(t[r].x, t[r].y, t[r].z, s.x, s.y, s.z, s.w, eps2,
                               0, &part[r]);
      }
    }
  } else {
    for (int j = 0; j < count; j++) {
      float4 s = src[j];
#pragma unroll
      for (int r = 0; r < R; r++)
        tfmm_interaction_f32(t[r].x, t[r].y, t[r].z, s.x, s.y, s.z, s.w, eps2,
                             first + j == t[r].index, &part[r]);
    }
  }
  /* Two-level sum: a tile's slice first, then the running total, so that
   * rounding grows with sqrt(p) + sqrt(N / p) rather than sqrt(N). */
#pragma unroll
  for (int r = 0; r < R; r++) {
    acc[r].x += part[r].x;
    acc[r].y += part[r].y;
    acc[r].z += part[r].z;
    acc[r].w += part[r].w;
  }
}

/* r = 4 needs more than the 64 registers a 1024-thread block allows; its
 * blocks are capped at 512 threads (tfmm_direct_max_threads) instead. */
template <int UNROLL, int R, bool POT>
__global__ void __launch_bounds__(R >= 4 ? 512 : 1024)
    direct_tiled(const float4 *__restrict__ bodies, int n, float eps2,
                 float4 *__restrict__ out) {
  extern __shared__ float4 tile[]; /* p * q bodies */
  const int p = blockDim.x, q = blockDim.y;
  const int x = threadIdx.x, y = threadIdx.y;
  const int lane = y * p + x;
  const int base = blockIdx.x * p * R; /* the block's first target */

  target_set t[R];
  tfmm_acc_f32 acc[R];
#pragma unroll
  for (int r = 0; r < R; r++) {
    int i = base + x + r * p;
    /* Threads past the end still compute (on a valid body) so that every
     * thread reaches every barrier; they store nothing. */
    float4 b = bodies[i < n ? i : n - 1];
    t[r] = target_set{b.x, b.y, b.z, i};
    acc[r] = tfmm_acc_f32{0.f, 0.f, 0.f, 0.f};
  }

  for (int start = 0; start < n; start += p * q) {
    int j = start + lane;
    tile[lane] = j < n ? bodies[j] : make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    /* This row's slice; uniform across a warp since p % 32 == 0. */
    int first = start + y * p;
    int count = min(p, n - first);
    bool diagonal = first < base + p * R && first + p > base;
    if (count == p && !diagonal)
      sum_slice<UNROLL, R, false>(tile + y * p, p, first, t, eps2, acc);
    else if (count > 0)
      sum_slice<UNROLL, R, true>(tile + y * p, count, first, t, eps2, acc);
    __syncthreads();
  }

  /* Combine the q rows' partial sums in row order, one target at a time,
   * through the tile buffer (p * q slots: one per thread). */
#pragma unroll
  for (int r = 0; r < R; r++) {
    if (q > 1) {
      /* Without POT the potential is dead code: keep it out of the tile so
       * that the compiler drops its FADD from the inner loop. */
      tile[lane] =
          make_float4(acc[r].x, acc[r].y, acc[r].z, POT ? acc[r].w : 0.f);
      __syncthreads();
      if (y == 0)
        for (int k = 1; k < q; k++) {
          float4 o = tile[k * p + x];
          acc[r].x += o.x;
          acc[r].y += o.y;
          acc[r].z += o.z;
          if (POT)
            acc[r].w += o.w;
        }
      __syncthreads();
    }
    if (y == 0 && t[r].index < n)
      out[t[r].index] =
          make_float4(acc[r].x, acc[r].y, acc[r].z, POT ? acc[r].w : 0.f);
  }
}

typedef void (*kernel_fn)(const float4 *, int, float, float4 *);

template <int UNROLL, int R> kernel_fn pick_potential(int potential) {
  return potential ? direct_tiled<UNROLL, R, true>
                   : direct_tiled<UNROLL, R, false>;
}

template <int UNROLL> kernel_fn pick_r(int r, int potential) {
  switch (r) {
  case 1:
    return pick_potential<UNROLL, 1>(potential);
  case 2:
    return pick_potential<UNROLL, 2>(potential);
  case 4:
    return pick_potential<UNROLL, 4>(potential);
  default:
    return NULL;
  }
}

kernel_fn pick_kernel(int unroll, int r, int potential) {
  switch (unroll) {
  case 1:
    return pick_r<1>(r, potential);
  case 2:
    return pick_r<2>(r, potential);
  case 4:
    return pick_r<4>(r, potential);
  case 8:
    return pick_r<8>(r, potential);
  case 16:
    return pick_r<16>(r, potential);
  case 32:
    return pick_r<32>(r, potential);
  default:
    return NULL;
  }
}

/* q when the caller leaves it to us: more threads per body until the grid
 * has enough threads to fill the GPU (section 31.4.1: small N leaves
 * multiprocessors idle), never more slices than the input has. */
int choose_threads_per_body(int n, int p, int r, int sm_count) {
  long long blocks = (n + (long long)p * r - 1) / ((long long)p * r);
  long long slices = (n + p - 1) / p;
  int q = 1;
  while (2 * q * p <= tfmm_direct_max_threads(r) && 2 * q <= slices &&
         blocks * p * q < 1024LL * sm_count)
    q *= 2;
  return q;
}

} // namespace

extern "C" tfmm_status tfmm_gpu_direct(tfmm_gpu *g, tfmm_gpu_direct_params *prm,
                                       size_t n, tfmm_gpu_times *times,
                                       tfmm_error *err) {
  const int p = prm->tile, r = prm->bodies_per_thread;
  kernel_fn kernel = pick_kernel(prm->unroll, r, prm->potential);
  if (kernel == NULL || p % 32 != 0 || p > tfmm_direct_max_threads(r) ||
      (prm->threads_per_body * p > tfmm_direct_max_threads(r)) ||
      n > g->capacity)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "bad kernel parameters (p %d, unroll %d, r %d)", p,
                          prm->unroll, r);
  int q = prm->threads_per_body;
  if (q == 0)
    q = choose_threads_per_body((int)n, p, r, g->sm_count);
  prm->threads_per_body = q;

  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = g->stream;
  size_t bytes = n * sizeof(float4);
  dim3 block(p, q);
  unsigned grid = (unsigned)((n + (size_t)p * r - 1) / ((size_t)p * r));
  size_t shared = (size_t)p * q * sizeof(float4);

  TFMM_CUDA_TRY(cudaEventRecord(g->events[0], s), err);
  TFMM_CUDA_TRY(
      cudaMemcpyAsync(g->d_in, g->h_in, bytes, cudaMemcpyHostToDevice, s), err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[1], s), err);
  kernel<<<grid, block, shared, s>>>(g->d_in, (int)n, prm->eps2, g->d_out);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[2], s), err);
  TFMM_CUDA_TRY(
      cudaMemcpyAsync(g->h_out, g->d_out, bytes, cudaMemcpyDeviceToHost, s),
      err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[3], s), err);
  TFMM_CUDA_TRY(cudaEventSynchronize(g->events[3]), err);

  float ms[3];
  for (int k = 0; k < 3; k++)
    TFMM_CUDA_TRY(cudaEventElapsedTime(&ms[k], g->events[k], g->events[k + 1]),
                  err);
  times->upload = 1e-3 * ms[0];
  times->kernel = 1e-3 * ms[1];
  times->download = 1e-3 * ms[2];
  return TFMM_OK;
}
