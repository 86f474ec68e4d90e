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
 * Two precisions (template parameter T): bodies, targets, tiles and sums
 * in float or double, positions relative to the bodies' centre
 * (tfmm_bodies_pack_f32 / _f64). Double is built for unroll 4 and r in
 * {1, 2} only (8 kernels beside single precision's 72); its 32-byte
 * bodies take two 16-byte copies and twice the shared memory a tile, and
 * its blocks at most 512 threads (gpu.h, tfmm_direct_shape_ok_for).
 *
 * Cost per interaction (nearfield/interaction.h), single precision,
 * Plummer: 13 FP32 instructions and one MUFU.RSQ (12 without the
 * potential), plus 1/r of an LDS.128. Limit: the FP32 pipe, SMs x 128
 * lanes x clock / 12 to 13 interactions per second (about 2.6e12 to
 * 2.8e12 on an H100 SXM at 1.98 GHz); memory traffic is 16 bytes per body
 * per tile pass, negligible for N >> p. Cubic spline (the kind a template
 * parameter, one kernel each): outside the support h = 2.8 eps the same
 * less the eps^2 add plus a compare and the mass select (about 15
 * instructions: the same limit, about 2.3e12 per second); a pair inside h
 * adds a square root, a reciprocal and about 12 FFMA, with both sides of
 * the branch run by a warp whose lanes disagree.
 *
 * Double precision, Plummer (sm_90 SASS of CUDA 13.0): 3 DADD (r), DMUL
 * + 2 DFMA + DADD (r^2 + eps^2); rsqrt(): MUFU.RSQ64H and one Newton step,
 * 2 DMUL + 3 DFMA (1 ulp; a range check branches off for extreme r^2);
 * then 2 DMUL (1/r^3), DMUL (m/r^3), 3 DFMA (a) and 1 DFMA (phi): 19 FP64
 * instructions (18 without the potential), plus the MUFU on its own pipe,
 * about 8 integer and branch instructions and 2/r LDS.128. Limit: the
 * FP64 pipe, half the FP32 rate (64 lanes an SM): 132 x 64 x 1.98 GHz / 19
 * = 8.8e11 interactions per second on an H100 SXM (the 1.4e12 of 12
 * instructions an interaction is out of reach: the refinement of the
 * seed alone takes 5). Measured (N = 262144, p 128, q 1, r 2, with the
 * potential): 6.0e11 per second, 68 % of it, against 1.75e12 in single
 * precision in the same run (0.34 times). Spline: outside h the same less
 * the eps^2 add plus the compare and selects; inside h the IEEE square
 * root, a reciprocal and a division (--prec-div/--prec-sqrt do not touch
 * FP64), some tens of instructions more, branched as in single precision.
 * Memory: 32 bytes per body per tile pass.
 *
 * No atomics: the same input gives the same bits, run after run.
 */
#include "cp_async.cuh"
#include "gpu_context.h"
#include "pair.cuh"

#include <stdint.h>
#include <stdio.h>

namespace {

template <typename T> struct target_set {
  T x, y, z;
  int index;
};

/* Adds slice sources [0, count) from shared memory to the r targets under
 * the kernel of kind SPLINE. SELF: compare indices to skip each target's
 * own pair (only in slices that overlap the block's targets; elsewhere the
 * check compiles away). */
template <typename T, int UNROLL, int R, bool SELF, bool SPLINE>
__device__ __forceinline__ void
sum_slice(const typename tfmm_prec<T>::vec *__restrict__ src, int count,
          int first, const target_set<T> (&t)[R],
          const typename tfmm_prec<T>::soft &kern,
          typename tfmm_prec<T>::acc (&acc)[R]) {
  typedef typename tfmm_prec<T>::vec vec;
  typename tfmm_prec<T>::acc part[R];
#pragma unroll
  for (int r = 0; r < R; r++)
    part[r] = {(T)0, (T)0, (T)0, (T)0};
  if (!SELF) {
    /* count == p, a multiple of 32 and so of UNROLL. */
    for (int j = 0; j < count; j += UNROLL) {
#pragma unroll
      for (int u = 0; u < UNROLL; u++) {
        vec s = src[j + u];
#pragma unroll
        for (int r = 0; r < R; r++)
          tfmm_add(part[r],
                   tfmm_pair<SPLINE>(kern, t[r].x, t[r].y, t[r].z, s, 0));
      }
    }
  } else {
    for (int j = 0; j < count; j++) {
      vec s = src[j];
#pragma unroll
      for (int r = 0; r < R; r++)
        tfmm_add(part[r], tfmm_pair<SPLINE>(kern, t[r].x, t[r].y, t[r].z, s,
                                            first + j == t[r].index));
    }
  }
  /* Two-level sum: a tile's slice first, then the running total, so that
   * rounding grows with sqrt(p) + sqrt(N / p) rather than sqrt(N). */
#pragma unroll
  for (int r = 0; r < R; r++)
    tfmm_add(acc[r], part[r]);
}

/* Starts loading tile `tile` (p sources, clamped to valid addresses; the
 * sums never read past n) into a warp's buffer, in 16-byte words: one a
 * body in single precision, two in double. */
template <typename V>
__device__ __forceinline__ void load_tile(V *buf, const V *bodies, int n, int p,
                                          int tile, int lane) {
  constexpr int W = sizeof(V) / 16;
  float4 *dst = reinterpret_cast<float4 *>(buf);
  const float4 *src = reinterpret_cast<const float4 *>(bodies);
  for (int k = lane; k < W * p; k += 32) {
    int j = tile * p + k / W;
    copy16_async(dst + k, src + (size_t)W * (j < n ? j : n - 1) + k % W);
  }
  copy_commit();
}

/* A result (or partial sum) as stored: without POT the potential is dead
 * code, kept out of memory so that the compiler drops its add from the
 * inner loop. */
template <bool POT, typename V, typename A>
__device__ __forceinline__ V result(const A &a) {
  return V{a.x, a.y, a.z, POT ? a.w : 0};
}

/* Threads a block may have: r = 4 needs more than the 64 registers a
 * 1024-thread block allows, and so does double precision (targets,
 * sources and sums twice the size); those blocks are capped at 512
 * threads (tfmm_direct_max_threads_for), 128 registers a thread. */
template <typename T, int R> constexpr int block_max() {
  return R >= 4 || sizeof(T) == 8 ? 512 : 1024;
}

/* Each warp streams its own tiles through a private, double-buffered piece
 * of shared memory, synchronising only with itself (__syncwarp): no block
 * barrier inside the loop, so warps drift apart and their rsqrt and
 * shared-memory bursts interleave instead of queueing together. Row y of
 * the block takes tiles y, y + q, y + 2q, ... */
template <typename T, int UNROLL, int R, bool POT, bool SPLINE>
__global__ void __launch_bounds__(block_max<T, R>())
    direct_tiled(const typename tfmm_prec<T>::vec *__restrict__ bodies, int n,
                 typename tfmm_prec<T>::soft kern,
                 typename tfmm_prec<T>::vec *__restrict__ out) {
  typedef typename tfmm_prec<T>::vec vec;
  typedef typename tfmm_prec<T>::acc acc_t;
  extern __shared__ float4 shared_words[];
  vec *smem = reinterpret_cast<vec *>(shared_words); /* 2 p per warp;
                                                        p * q at the end */
  const int p = blockDim.x, q = blockDim.y;
  const int x = threadIdx.x, y = threadIdx.y, lane = x & 31;
  const int warp = (y * p + x) >> 5;
  vec *buf = smem + (size_t)warp * 2 * p;
  const int base = blockIdx.x * p * R; /* the block's first target */

  target_set<T> t[R];
  acc_t acc[R];
#pragma unroll
  for (int r = 0; r < R; r++) {
    int i = base + x + r * p;
    /* Threads past the end still compute (on a valid body) so that every
     * thread reaches every barrier; they store nothing. */
    vec b = bodies[i < n ? i : n - 1];
    t[r] = target_set<T>{b.x, b.y, b.z, i};
    acc[r] = {(T)0, (T)0, (T)0, (T)0};
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
      sum_slice<T, UNROLL, R, false, SPLINE>(buf + k * p, p, first, t, kern,
                                             acc);
    else
      sum_slice<T, UNROLL, R, true, SPLINE>(buf + k * p, count, first, t, kern,
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
      smem[slot] = result<POT, vec>(acc[r]);
      __syncthreads();
      if (y == 0)
        for (int k = 1; k < q; k++) {
          vec o = smem[k * p + x];
          acc[r].x += o.x;
          acc[r].y += o.y;
          acc[r].z += o.z;
          if (POT)
            acc[r].w += o.w;
        }
      __syncthreads();
    }
    if (y == 0 && t[r].index < n)
      out[t[r].index] = result<POT, vec>(acc[r]);
  }
}

template <typename T>
using kernel_fn = void (*)(const typename tfmm_prec<T>::vec *, int,
                           typename tfmm_prec<T>::soft,
                           typename tfmm_prec<T>::vec *);

template <typename T, int UNROLL, int R, bool POT>
kernel_fn<T> pick_spline(int spline) {
  return spline ? direct_tiled<T, UNROLL, R, POT, true>
                : direct_tiled<T, UNROLL, R, POT, false>;
}

template <typename T, int UNROLL, int R>
kernel_fn<T> pick_potential(int potential, int spline) {
  return potential ? pick_spline<T, UNROLL, R, true>(spline)
                   : pick_spline<T, UNROLL, R, false>(spline);
}

template <int UNROLL>
kernel_fn<float> pick_r_f32(int r, int potential, int spline) {
  switch (r) {
  case 1:
    return pick_potential<float, UNROLL, 1>(potential, spline);
  case 2:
    return pick_potential<float, UNROLL, 2>(potential, spline);
  case 4:
    return pick_potential<float, UNROLL, 4>(potential, spline);
  default:
    return NULL;
  }
}

/* Single precision: every unroll in {1, 2, 4, ..., 32} and r in {1, 2, 4}
 * (72 kernels). */
kernel_fn<float> pick_kernel(float, int unroll, int r, int potential,
                             int spline) {
  switch (unroll) {
  case 1:
    return pick_r_f32<1>(r, potential, spline);
  case 2:
    return pick_r_f32<2>(r, potential, spline);
  case 4:
    return pick_r_f32<4>(r, potential, spline);
  case 8:
    return pick_r_f32<8>(r, potential, spline);
  case 16:
    return pick_r_f32<16>(r, potential, spline);
  case 32:
    return pick_r_f32<32>(r, potential, spline);
  default:
    return NULL;
  }
}

/* Double precision: unroll 4 whatever was asked (resolve reports it), r
 * in {1, 2}: 8 kernels. An interaction is some 30 FP64 instructions, so a
 * longer unroll buys no latency hiding the r targets and 16 warps an SM do
 * not already give, and r = 4 would spill. */
kernel_fn<double> pick_kernel(double, int unroll, int r, int potential,
                              int spline) {
  (void)unroll;
  switch (r) {
  case 1:
    return pick_potential<double, 4, 1>(potential, spline);
  case 2:
    return pick_potential<double, 4, 2>(potential, spline);
  default:
    return NULL;
  }
}

/* The launch shape for n bodies, filling in what the caller left at 0
 * (GPU Gems 3, 31.4.1: small N leaves multiprocessors idle unless several
 * threads share each body). In single precision the GPU is full at about
 * 1024 threads per SM (64 registers each); in double at 512 (128 each).
 * Measured on an H100 (bench/results/direct), single precision: with
 * enough bodies, p = 128 and r = 2 (one shared-memory load feeds two
 * interactions); with few, r = 1, q as large as the block allows and so
 * p = 32. q then grows until the grid fills the GPU, never past the number
 * of tiles. Every step keeps to the precision's limits
 * (tfmm_direct_shape_ok_for): in double a tile takes twice the shared
 * memory and a block half the threads. */
/* A shape the kernel accepts whose tiles fit the device's shared memory
 * (`most` bytes a block: 99 KB on sm_86, sm_89 and sm_120, where p = 128
 * with q = 8 in single or q = 4 in double would need 128 KB). */
int fits(int p, int q, int r, tfmm_precision prec, int most) {
  return tfmm_direct_shape_ok_for(p, q, r, prec) &&
         tfmm_direct_shared_bytes_for(p, q, prec) <= most;
}

void choose_shape(int n, int sm_count, int most, tfmm_precision prec,
                  tfmm_gpu_direct_params *prm) {
  const long long full =
      (long long)tfmm_direct_max_threads_for(1, prec) * sm_count;
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
    while (p > 32 && !fits(p, want, r, prec, most))
      p /= 2;
    while (want > 1 && !fits(p, want, r, prec, most))
      want /= 2;
  } else if (p == 0) {
    p = 128;
    while (p > 32 && !fits(p, q, r, prec, most))
      p /= 2;
  }
  if (q == 0) {
    long long tiles = (n + p - 1) / p;
    q = 1;
    while (fits(p, 2 * q, r, prec, most) && 2 * q <= tiles &&
           threads * q < full)
      q *= 2;
  }
  prm->tile = p;
  prm->threads_per_body = q;
  prm->bodies_per_thread = r;
}

/* The kernel alone on device arrays, enqueued on stream s of the current
 * device, in precision T. */
template <typename T>
tfmm_status enqueue(const tfmm_gpu_direct_params *prm, size_t n,
                    const void *d_in, void *d_out, cudaStream_t s,
                    tfmm_error *err) {
  typedef typename tfmm_prec<T>::vec vec;
  const int spline = prm->pair.softening == TFMM_SOFTENING_SPLINE;
  const typename tfmm_prec<T>::soft kern =
      tfmm_prec<T>::make(spline, prm->pair.eps);
  const int p = prm->tile, q = prm->threads_per_body,
            r = prm->bodies_per_thread;
  kernel_fn<T> kernel =
      pick_kernel(T(0), prm->unroll, r, prm->potential, spline);
  if (kernel == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "no all-pairs kernel for unroll %d, r %d",
                          prm->unroll, r);
  dim3 block(p, q);
  unsigned grid = (unsigned)((n + (size_t)p * r - 1) / ((size_t)p * r));
  size_t shared =
      (size_t)tfmm_direct_shared_bytes_for(p, q, prm->pair.precision);
  TFMM_CUDA_TRY(cudaFuncSetAttribute(
                    (const void *)kernel,
                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
                err);
  kernel<<<grid, block, shared, s>>>((const vec *)d_in, (int)n, kern,
                                     (vec *)d_out);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

/* Fills in the launch shape left at 0 and checks it. */
tfmm_status resolve(tfmm_gpu_direct_params *prm, size_t n, int sm_count,
                    int shared_most, tfmm_error *err) {
  const tfmm_precision prec = prm->pair.precision;
  const int f64 = prec == TFMM_PRECISION_DOUBLE;
  if (f64 && prm->bodies_per_thread == 4)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu_bodies_per_thread = 4 in double precision: "
                          "the double-precision all-pairs kernel holds 1 or "
                          "2 bodies a thread (0 chooses)");
  if (f64)
    prm->unroll = 4; /* the one unroll it is built for */
  choose_shape((int)n, sm_count, shared_most, prec, prm);
  const int p = prm->tile, q = prm->threads_per_body,
            r = prm->bodies_per_thread;
  if (fits(p, q, r, prec, shared_most))
    return TFMM_OK;
  const int most = tfmm_direct_max_threads_for(r, prec);
  const long shared = tfmm_direct_shared_bytes_for(p, q, prec);
  if (p * q > most)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu_tile = %d with gpu_threads_per_body = %d: "
                          "%d threads a block, more than the %d of the "
                          "%s-precision all-pairs kernel (r = %d)",
                          p, q, p * q, most, tfmm_precision_name(prec), r);
  if (shared > TFMM_DIRECT_MAX_SHARED || shared > shared_most)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu_tile = %d with gpu_threads_per_body = %d: "
                          "%ld bytes of shared memory in %s precision "
                          "(%d-byte bodies: %sgpu_tile^2 * q), more than "
                          "the %d a block may have on this GPU",
                          p, q, shared, tfmm_precision_name(prec),
                          tfmm_direct_body_bytes(prec), f64 ? "2 " : "",
                          shared_most < TFMM_DIRECT_MAX_SHARED
                              ? shared_most
                              : (int)TFMM_DIRECT_MAX_SHARED);
  return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "bad kernel shape in %s precision (p %d, q %d, "
                        "unroll %d, r %d)",
                        tfmm_precision_name(prec), p, q, prm->unroll, r);
}

/* The all-pairs buffers of the context's arena: bodies in, results out,
 * each a device slot (TFMM_SLOTS_DIRECT) and a pinned one
 * (TFMM_PINNED_DIRECT). */
enum { IN, OUT };

tfmm_device_buffer &device_half(tfmm_gpu *g, int k) {
  return g->slot[TFMM_SLOTS_DIRECT + k];
}

tfmm_device_buffer &pinned_half(tfmm_gpu *g, int k) {
  return g->pinned[TFMM_PINNED_DIRECT + k];
}

/* Whether the four buffers hold n bodies of a precision. */
tfmm_status check_room(tfmm_gpu *g, size_t n, tfmm_precision prec,
                       tfmm_error *err) {
  const size_t bytes = n * (size_t)tfmm_direct_body_bytes(prec);
  for (int k = IN; k <= OUT; k++)
    if (bytes > device_half(g, k).bytes || bytes > pinned_half(g, k).bytes)
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "%zu bodies in %s precision: more than "
                            "tfmm_gpu_reserve made room for",
                            n, tfmm_precision_name(prec));
  return TFMM_OK;
}

/* One copy on the NEAR stream between events[first] and events[first + 1]
 * (tfmm_gpu_elapsed reads them). */
tfmm_status copy_timed(tfmm_gpu *g, void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind, int first, tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = g->streams[TFMM_STREAM_NEAR];
  TFMM_CUDA_TRY(cudaEventRecord(g->events[first], s), err);
  TFMM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, s), err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[first + 1], s), err);
  return TFMM_OK;
}

} // namespace

/* Sized in bytes: one set of buffers serves both precisions, a double
 * body taking the room of two floats. */
extern "C" tfmm_status tfmm_gpu_reserve(tfmm_gpu *g, size_t n,
                                        tfmm_precision precision, void **in,
                                        void **out, tfmm_error *err) {
  const size_t bytes = n * (size_t)tfmm_direct_body_bytes(precision);
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  for (int k = IN; k <= OUT; k++) {
    /* Slack 4: slowly growing inputs reallocate rarely. */
    tfmm_status st =
        tfmm_arena_reserve(g, TFMM_SLOTS_DIRECT + k, bytes, 4, NULL, err);
    if (st == TFMM_OK)
      st = tfmm_arena_pinned(g, TFMM_PINNED_DIRECT + k, bytes, 4, NULL, err);
    if (st != TFMM_OK)
      return st; /* what was allocated stays owned by g */
  }
  *in = pinned_half(g, IN).p;
  *out = pinned_half(g, OUT).p;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_direct_upload(tfmm_gpu *g, size_t n,
                                              tfmm_precision precision,
                                              tfmm_error *err) {
  tfmm_status st = check_room(g, n, precision, err);
  if (st != TFMM_OK)
    return st;
  return copy_timed(g, device_half(g, IN).p, pinned_half(g, IN).p,
                    n * (size_t)tfmm_direct_body_bytes(precision),
                    cudaMemcpyHostToDevice, 0, err);
}

/* The kernel takes no scratch (tfmm_gpu_direct_device's size query says 0,
 * test_kernels_device checks it), so any non-NULL pointer stands for it.
 * Its tiles are fitted to the shared memory of the current device: the
 * context's, entered here (g->max_shared). */
extern "C" tfmm_status tfmm_gpu_direct_run(tfmm_gpu *g,
                                           tfmm_gpu_direct_params *prm,
                                           size_t n, tfmm_error *err) {
  tfmm_status st = check_room(g, n, prm->pair.precision, err);
  if (st != TFMM_OK)
    return st;
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  char no_scratch;
  size_t scratch_bytes = 0;
  return tfmm_gpu_direct_device(&no_scratch, &scratch_bytes, n,
                                device_half(g, IN).p, device_half(g, OUT).p,
                                prm, g->sm_count, g->streams[TFMM_STREAM_NEAR],
                                err);
}

extern "C" tfmm_status tfmm_gpu_direct_download(tfmm_gpu *g, size_t n,
                                                tfmm_precision precision,
                                                tfmm_error *err) {
  tfmm_status st = check_room(g, n, precision, err);
  if (st != TFMM_OK)
    return st;
  return copy_timed(g, pinned_half(g, OUT).p, device_half(g, OUT).p,
                    n * (size_t)tfmm_direct_body_bytes(precision),
                    cudaMemcpyDeviceToHost, 2, err);
}

extern "C" tfmm_status tfmm_gpu_direct_wait(tfmm_gpu *g, tfmm_gpu_times *times,
                                            tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  return tfmm_gpu_elapsed(g, times, err);
}

extern "C" tfmm_status tfmm_gpu_direct_device(void *workspace,
                                              size_t *workspace_bytes, size_t n,
                                              const void *d_body, void *d_out,
                                              tfmm_gpu_direct_params *params,
                                              int sm_count, void *stream,
                                              tfmm_error *err) {
  if (workspace_bytes == NULL || params == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "all pairs on device arrays: %s is NULL",
                          workspace_bytes == NULL ? "workspace_bytes"
                                                  : "params");
  if (workspace == NULL) { /* the size query: no scratch is needed */
    *workspace_bytes = 0;
    return TFMM_OK;
  }
  if (n == 0 || n > INT32_MAX || d_body == NULL || d_out == NULL ||
      sm_count < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "all pairs on device arrays: %zu bodies, bodies "
                          "%p, results %p, %d multiprocessors",
                          n, d_body, d_out, sm_count);
  tfmm_status st =
      resolve(params, n, sm_count, tfmm_gpu_shared_limit(NULL), err);
  if (st != TFMM_OK)
    return st;
  cudaStream_t s = (cudaStream_t)stream;
  return params->pair.precision == TFMM_PRECISION_DOUBLE
             ? enqueue<double>(params, n, d_body, d_out, s, err)
             : enqueue<float>(params, n, d_body, d_out, s, err);
}
