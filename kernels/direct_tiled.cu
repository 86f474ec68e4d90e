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
 * Cost per interaction (nearfield/interaction.h), Plummer: 13 FP32
 * instructions and one MUFU.RSQ (12 without the potential), plus 1/r of
 * an LDS.128. Limit: the FP32 pipe, SMs x 128 lanes x clock / 12 to 13
 * interactions per second (about 2.6e12 to 2.8e12 on an H100 SXM at 1.98
 * GHz); memory traffic is 16 bytes per body per tile pass, negligible for
 * N >> p. Cubic spline (the kind a template parameter, one kernel each):
 * outside the support h = 2.8 eps the same less the eps^2 add plus a
 * compare and the mass select (about 15 instructions: the same limit,
 * about 2.3e12 per second); a pair inside h adds a square root, a
 * reciprocal and about 12 FFMA, with both sides of the branch run by a
 * warp whose lanes disagree. Single precision only: the bodies come packed
 * as floats (tfmm_gpu_reserve); double-precision all pairs run on the CPU.
 *
 * No atomics: the same input gives the same bits, run after run.
 */
#include "cp_async.cuh"
#include "gpu_context.h"
#include "pair.cuh"

#include <stdio.h>

namespace {

struct target_set {
  float x, y, z;
  int index;
};

/* Adds slice sources [0, count) from shared memory to the r targets under
 * the kernel of kind SPLINE. SELF: compare indices to skip each target's
 * own pair (only in slices that overlap the block's targets; elsewhere the
 * check compiles away). */
template <int UNROLL, int R, bool SELF, bool SPLINE>
__device__ __forceinline__ void
sum_slice(const float4 *__restrict__ src, int count, int first,
          const target_set (&t)[R], const tfmm_soft_f32 &kern,
          tfmm_acc_f32 (&acc)[R]) {
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
          tfmm_add(part[r],
                   tfmm_pair<SPLINE>(kern, t[r].x, t[r].y, t[r].z, s, 0));
      }
    }
  } else {
    for (int j = 0; j < count; j++) {
      float4 s = src[j];
#pragma unroll
      for (int r = 0; r < R; r++)
        tfmm_add(part[r], tfmm_pair<SPLINE>(kern, t[r].x, t[r].y, t[r].z, s,
                                            first + j == t[r].index));
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

/* Starts loading tile `tile` (p sources, clamped to valid addresses; the
 * sums never read past n) into a warp's buffer. */
__device__ __forceinline__ void load_tile(float4 *buf, const float4 *bodies,
                                          int n, int p, int tile, int lane) {
  for (int k = lane; k < p; k += 32) {
    int j = tile * p + k;
    copy16_async(buf + k, bodies + (j < n ? j : n - 1));
  }
  copy_commit();
}

/* r = 4 needs more than the 64 registers a 1024-thread block allows; its
 * blocks are capped at 512 threads (tfmm_direct_max_threads) instead.
 *
 * Each warp streams its own tiles through a private, double-buffered piece
 * of shared memory, synchronising only with itself (__syncwarp): no block
 * barrier inside the loop, so warps drift apart and their rsqrt and
 * shared-memory bursts interleave instead of queueing together. Row y of
 * the block takes tiles y, y + q, y + 2q, ... */
template <int UNROLL, int R, bool POT, bool SPLINE>
__global__ void __launch_bounds__(R >= 4 ? 512 : 1024)
    direct_tiled(const float4 *__restrict__ bodies, int n, tfmm_soft_f32 kern,
                 float4 *__restrict__ out) {
  extern __shared__ float4 smem[]; /* 2 p per warp; p * q at the end */
  const int p = blockDim.x, q = blockDim.y;
  const int x = threadIdx.x, y = threadIdx.y, lane = x & 31;
  const int warp = (y * p + x) >> 5;
  float4 *buf = smem + (size_t)warp * 2 * p;
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

  const int tiles = (n + p - 1) / p;
  if (y < tiles)
    load_tile(buf, bodies, n, p, y, lane);
  for (int tile = y, k = 0; tile < tiles; tile += q, k ^= 1) {
    if (tile + q < tiles)
      load_tile(buf + (k ^ 1) * p, bodies, n, p, tile + q, lane);
    else
      copy_commit(); /* an empty group keeps the count of pending ones */
    copy_wait<1>();  /* this tile's copies, from every lane: */
    __syncwarp();
    int first = tile * p;
    int count = min(p, n - first);
    bool diagonal = first < base + p * R && first + p > base;
    if (count == p && !diagonal)
      sum_slice<UNROLL, R, false, SPLINE>(buf + k * p, p, first, t, kern, acc);
    else
      sum_slice<UNROLL, R, true, SPLINE>(buf + k * p, count, first, t, kern,
                                         acc);
    __syncwarp(); /* before the next prefetch overwrites this buffer */
  }
  copy_wait<0>();
  __syncthreads();

  /* Combine the q rows' partial sums in row order, one target at a time,
   * through shared memory (p * q slots: one per thread). */
  const int slot = y * p + x;
#pragma unroll
  for (int r = 0; r < R; r++) {
    if (q > 1) {
      /* Without POT the potential is dead code: keep it out of shared
       * memory so that the compiler drops its FADD from the inner loop. */
      smem[slot] =
          make_float4(acc[r].x, acc[r].y, acc[r].z, POT ? acc[r].w : 0.f);
      __syncthreads();
      if (y == 0)
        for (int k = 1; k < q; k++) {
          float4 o = smem[k * p + x];
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

typedef void (*kernel_fn)(const float4 *, int, tfmm_soft_f32, float4 *);

template <int UNROLL, int R, bool POT> kernel_fn pick_spline(int spline) {
  return spline ? direct_tiled<UNROLL, R, POT, true>
                : direct_tiled<UNROLL, R, POT, false>;
}

template <int UNROLL, int R>
kernel_fn pick_potential(int potential, int spline) {
  return potential ? pick_spline<UNROLL, R, true>(spline)
                   : pick_spline<UNROLL, R, false>(spline);
}

template <int UNROLL> kernel_fn pick_r(int r, int potential, int spline) {
  switch (r) {
  case 1:
    return pick_potential<UNROLL, 1>(potential, spline);
  case 2:
    return pick_potential<UNROLL, 2>(potential, spline);
  case 4:
    return pick_potential<UNROLL, 4>(potential, spline);
  default:
    return NULL;
  }
}

kernel_fn pick_kernel(int unroll, int r, int potential, int spline) {
  switch (unroll) {
  case 1:
    return pick_r<1>(r, potential, spline);
  case 2:
    return pick_r<2>(r, potential, spline);
  case 4:
    return pick_r<4>(r, potential, spline);
  case 8:
    return pick_r<8>(r, potential, spline);
  case 16:
    return pick_r<16>(r, potential, spline);
  case 32:
    return pick_r<32>(r, potential, spline);
  default:
    return NULL;
  }
}

/* The launch shape for n bodies, filling in what the caller left at 0
 * (GPU Gems 3, 31.4.1: small N leaves multiprocessors idle unless several
 * threads share each body). The GPU is full at about 1024 threads per SM
 * (64 registers each). Measured on an H100 (bench/results/h100): with
 * enough bodies, p = 128 and r = 2 (one shared-memory load feeds two
 * interactions); with few, r = 1, q as large as the block allows and so
 * p = 32. q then grows until the grid fills the GPU, never past the number
 * of tiles. */
void choose_shape(int n, int sm_count, tfmm_gpu_direct_params *prm) {
  const long long full = 1024LL * sm_count;
  int r = prm->bodies_per_thread, p = prm->tile, q = prm->threads_per_body;
  if (r == 0)
    r = n >= full ? 2 : 1;
  long long threads = (n + r - 1) / r;
  if (q == 0 && p == 0) {
    /* The q that fills the GPU, then the largest p that allows it. */
    int want = 1;
    while (threads * want < full && want < 32)
      want *= 2;
    p = 128;
    while (p > 32 && !tfmm_direct_shape_ok(p, want, r))
      p /= 2;
  } else if (p == 0) {
    p = 128;
    while (p > 32 && !tfmm_direct_shape_ok(p, q, r))
      p /= 2;
  }
  if (q == 0) {
    long long tiles = (n + p - 1) / p;
    q = 1;
    while (tfmm_direct_shape_ok(p, 2 * q, r) && 2 * q <= tiles &&
           threads * q < full)
      q *= 2;
  }
  prm->tile = p;
  prm->threads_per_body = q;
  prm->bodies_per_thread = r;
}

} // namespace

extern "C" tfmm_status tfmm_gpu_direct(tfmm_gpu *g, tfmm_gpu_direct_params *prm,
                                       size_t n, tfmm_gpu_times *times,
                                       tfmm_error *err) {
  /* Its bodies come packed in single precision (tfmm_gpu_reserve). */
  if (prm->pair.precision != TFMM_PRECISION_SINGLE)
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "the GPU all-pairs kernel sums in single precision "
                          "only: for precision %s use device cpu, or a tree "
                          "method (fmm, bh), whose GPU near field sums in "
                          "double",
                          tfmm_precision_name(prm->pair.precision));
  const int spline = prm->pair.softening == TFMM_SOFTENING_SPLINE;
  const tfmm_soft_f32 kern = tfmm_soft_make_f32(spline, prm->pair.eps);
  choose_shape((int)n, g->sm_count, prm);
  const int p = prm->tile, q = prm->threads_per_body,
            r = prm->bodies_per_thread;
  kernel_fn kernel = pick_kernel(prm->unroll, r, prm->potential, spline);
  if (kernel == NULL || !tfmm_direct_shape_ok(p, q, r) || n > g->capacity)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "bad kernel shape (p %d, q %d, unroll %d, r %d)", p,
                          q, prm->unroll, r);

  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = g->stream;
  size_t bytes = n * sizeof(float4);
  dim3 block(p, q);
  unsigned grid = (unsigned)((n + (size_t)p * r - 1) / ((size_t)p * r));
  size_t shared = (size_t)tfmm_direct_shared_bytes(p, q);
  TFMM_CUDA_TRY(cudaFuncSetAttribute(
                    (const void *)kernel,
                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
                err);

  TFMM_CUDA_TRY(cudaEventRecord(g->events[0], s), err);
  TFMM_CUDA_TRY(
      cudaMemcpyAsync(g->d_in, g->h_in, bytes, cudaMemcpyHostToDevice, s), err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[1], s), err);
  kernel<<<grid, block, shared, s>>>(g->d_in, (int)n, kern, g->d_out);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[2], s), err);
  TFMM_CUDA_TRY(
      cudaMemcpyAsync(g->h_out, g->d_out, bytes, cudaMemcpyDeviceToHost, s),
      err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[3], s), err);
  return tfmm_gpu_elapsed(g, times, err);
}
