/* The exact forces at a sample of targets (reference_gpu.h): the tiled
 * sum of GPU Gems 3, chapter 31 (section 31.4), targets in registers and
 * sources streamed through shared memory, all in double.
 *
 * A sample is small (a few thousand targets) and the sources many, so a
 * block per target group alone would leave most of the GPU idle (2,000
 * targets fill 8 blocks). The sources are cut into chunks as well: block
 * (x, y) sums chunk y of the sources on target group x, 256 targets (two a
 * thread), and writes its partial sums to the workspace; a second kernel
 * adds the chunks' partial sums of each target in chunk order. No atomics
 * in the sums: the same input on the same device gives the same bits.
 * The chunk count makes the grid a whole number of waves (WAVES times
 * the blocks the device holds at once), so that no wave runs part-empty.
 *
 * Sums are two-level as in direct_tiled.cu: a tile's 128 pairs first, then
 * the chunk's running total, then the chunks; the rounding of the sums
 * grows with about sqrt(128) + sqrt(tiles a chunk) + sqrt(chunks) rather
 * than sqrt(n).
 *
 * Cost per pair (sm_90 SASS of tfmm_soft_pair_f64, Plummer, as counted in
 * direct_tiled.cu): 3 DADD (r), DMUL + 2 DFMA + DADD (r^2 + eps^2),
 * rsqrt() as MUFU.RSQ64H and a Newton step of 2 DMUL + 3 DFMA, 2 DMUL
 * (1/r^3), DMUL (m/r^3), 3 DFMA (a) and 1 DFMA (phi): 19 FP64
 * instructions (18 without the potential), about 28 flops counting an FMA
 * as two; the spline outside its support trades the eps^2 add for a
 * compare. Beside them one LDS.128 (two a source, shared by the two
 * targets) and the loop's integer work, on other pipes. Limit: the FP64
 * pipe, 64 lanes an SM: 132 x 64 x 1.98 GHz / 19 = 8.8e11 pairs a second
 * on an H100 SXM (direct_tiled.cu's double kernel reaches 68 % of it,
 * 6.0e11). The FP64 tensor cores (DMMA, twice the rate) take matrix
 * products only, not this formula. Memory: each target group reads the
 * n sources once, 32 bytes a source (x, y, z from d_pos, m from d_mass),
 * 32 n ceil(k / 256) bytes in all: 0.27 GB for k = 2,000 and n = 10^6,
 * mostly from L2, against 2e9 pairs. The partial sums: 32 bytes a target
 * and chunk, written once and read once.
 *
 * Built with the compiler's defaults (FMA contraction on): a fused
 * multiply-add rounds once where a multiply and an add round twice, so
 * it is the more exact; the CPU reference is not matched bit for bit in
 * any case (its 1 / sqrt is not rsqrt(), its sums are compensated and in
 * another order). --prec-* would touch single precision only; --ftz
 * (src/CMakeLists.txt) touches only the fast sums: their rsqrtf is then
 * MUFU.RSQ alone, without the scaling of a denormal input around it, and
 * every normal float rounds as before (on an H200, 256 targets among
 * 10^6 bodies, a build of 6 blocks an SM: 0.267 ms without it, 0.254
 * with it). */
#include "reference_gpu.h"

#include "pair.cuh"

#define CUDA_TRY_WHO "reference at targets"
#include "cuda_try.cuh"
#include "gpu_context.h"

#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <math_constants.h>
#include <stdint.h>
#include <string.h>

namespace {

typedef tfmm_vec4_f64 vec;

constexpr int THREADS = 128; /* a block; also the sources of a tile */
constexpr int R = 2;         /* targets a thread: one LDS feeds two pairs */
constexpr int GROUP = THREADS * R; /* targets a block */

/* Thread x's r-th target slot in its block: a warp's R * 32 slots are
 * consecutive, so that where only the first `upto` slots are summed
 * (tfmm_gpu_reference_at's d_upto) the warps past them skip the pairs. */
__device__ __forceinline__ int slot(int x, int r) {
  return (x / 32) * (32 * R) + r * 32 + x % 32;
}

/* The targets summed: the first min(k, *d_upto) (d_upto NULL: k). */
__device__ __forceinline__ int summed(int k, const int64_t *d_upto) {
  if (d_upto == nullptr)
    return k;
  const int64_t u = *d_upto;
  return u < 0 ? 0 : u < k ? (int)u : k;
}

/* At most 128 registers a thread (65536 / (128 x 4)): the targets, the
 * sums and an unrolled pair or two, without spilling. */
constexpr int MIN_BLOCKS = 4;
constexpr int UNROLL = 4;
/* Waves of blocks: one would end together on a quiet device, but a block
 * held back by other work on the device (the solver's streams) then
 * doubles the time; with two it adds half. */
constexpr int WAVES = 2;
constexpr int FINISH_THREADS = 256;
/* Chunks whose loads a finish thread has in flight at once. */
constexpr int FINISH_LOADS = 8;

/* The workspace: the check's two words, then the partial sums. */
struct check_words {
  unsigned long long bad_index; /* first target whose index is outside */
  unsigned long long nonfinite; /* first target with a non-finite result */
};
constexpr size_t HEAD = 256; /* bytes before the partial sums */

/* The launch: target groups, source chunks and the workspace they need. */
struct shape {
  int groups, chunks;
  size_t bytes;
};

/* Source j as the tiles hold it; past the end zeros, which no sum reads. */
__device__ __forceinline__ vec source(const double *__restrict__ pos,
                                      const double *__restrict__ mass, int n,
                                      int64_t j) {
  if (j >= n)
    return vec{0, 0, 0, 0};
  return vec{pos[3 * j], pos[3 * j + 1], pos[3 * j + 2], mass[j]};
}

/* Adds tile src (sources first .. first + count) to the R targets' sums.
 * SELF: count may be short and a target's own body may be among them
 * (compared by index: self[r], -1 for none); else count == THREADS and
 * no target's body is, and the compare compiles away. */
template <bool SPLINE, bool SELF>
__device__ __forceinline__ void
sum_tile(const vec *src, int count, int first, const double (&tx)[R],
         const double (&ty)[R], const double (&tz)[R], const int (&self)[R],
         const tfmm_soft_f64 &kern, tfmm_acc_f64 (&acc)[R]) {
  tfmm_acc_f64 part[R];
#pragma unroll
  for (int r = 0; r < R; r++)
    part[r] = tfmm_acc_f64{0, 0, 0, 0};
  if (!SELF) {
#pragma unroll UNROLL
    for (int j = 0; j < THREADS; j++) {
      const vec s = src[j];
#pragma unroll
      for (int r = 0; r < R; r++)
        tfmm_add(part[r], tfmm_pair<SPLINE>(kern, tx[r], ty[r], tz[r], s, 0));
    }
  } else {
    for (int j = 0; j < count; j++) {
      const vec s = src[j];
#pragma unroll
      for (int r = 0; r < R; r++)
        tfmm_add(part[r], tfmm_pair<SPLINE>(kern, tx[r], ty[r], tz[r], s,
                                            first + j == self[r]));
    }
  }
#pragma unroll
  for (int r = 0; r < R; r++)
    tfmm_add(acc[r], part[r]);
}

/* Chunk blockIdx.y of the sources (tiles [chunk tiles / chunks,
 * (chunk + 1) tiles / chunks): whole tiles, equal to one tile) on target
 * group blockIdx.x; partial[chunk * groups * GROUP + t] = its sums on
 * target t. A target past k or with an index outside [0, n) is computed
 * on body 0 (every thread reaches every barrier and reads only valid
 * addresses) and excluded nowhere; the finish kernel discards it. Slots
 * from upto (summed()) on are not summed: a block wholly past it leaves
 * at once, a warp wholly past it only loads its share of each tile; the
 * finish writes those targets zeros without reading their sums. Without
 * POT the potential is never stored and its adds are dropped as dead. */
template <bool SPLINE, bool POT>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    partial_sums(const double *__restrict__ pos,
                 const double *__restrict__ mass, int n,
                 const int64_t *__restrict__ targets, int k,
                 const int64_t *__restrict__ d_upto, tfmm_soft_f64 kern,
                 vec *__restrict__ partial) {
  __shared__ vec tile[THREADS];
  const int x = threadIdx.x;
  const int upto = summed(k, d_upto);
  if ((int)blockIdx.x * GROUP >= upto)
    return; /* the whole block: every thread leaves, no barrier waits */
  /* Whether the warp's first slot is summed. */
  const bool busy = (int)blockIdx.x * GROUP + slot(x - x % 32, 0) < upto;
  const int tiles = (int)(((int64_t)n + THREADS - 1) / THREADS);
  const int chunk = blockIdx.y, chunks = gridDim.y;
  const int tile0 = (int)((int64_t)tiles * chunk / chunks);
  const int tile1 = (int)((int64_t)tiles * (chunk + 1) / chunks);

  double tx[R], ty[R], tz[R];
  int self[R];
  tfmm_acc_f64 acc[R];
#pragma unroll
  for (int r = 0; r < R; r++) {
    const int t = blockIdx.x * GROUP + slot(x, r);
    const int64_t i = t < k ? targets[t] : -1;
    const bool valid = i >= 0 && i < n;
    const size_t at = valid ? (size_t)i : 0;
    tx[r] = pos[3 * at];
    ty[r] = pos[3 * at + 1];
    tz[r] = pos[3 * at + 2];
    self[r] = valid ? (int)i : -1;
    acc[r] = tfmm_acc_f64{0, 0, 0, 0};
  }

  /* The next tile waits in registers while this one is summed. */
  vec next = source(pos, mass, n, (int64_t)tile0 * THREADS + x);
  for (int t = tile0; t < tile1; t++) {
    __syncthreads(); /* every thread is done with the previous tile */
    tile[x] = next;
    __syncthreads();
    const int first = t * THREADS;
    if (t + 1 < tile1)
      next = source(pos, mass, n, (int64_t)first + THREADS + x);
    const int count = min(THREADS, n - first);
    bool mine = false; /* a target's own body is in this tile */
#pragma unroll
    for (int r = 0; r < R; r++)
      mine |= (unsigned)(self[r] - first) < (unsigned)count;
    /* count and busy are the warp's, so every lane of a warp votes or
     * none. */
    if (!busy)
      continue;
    if (count == THREADS && !__any_sync(0xffffffffu, mine))
      sum_tile<SPLINE, false>(tile, THREADS, first, tx, ty, tz, self, kern,
                              acc);
    else
      sum_tile<SPLINE, true>(tile, count, first, tx, ty, tz, self, kern, acc);
  }

  const size_t row = (size_t)chunk * gridDim.x * GROUP;
#pragma unroll
  for (int r = 0; r < R; r++) {
    const int t = blockIdx.x * GROUP + slot(x, r);
    partial[row + t] = vec{acc[r].x, acc[r].y, acc[r].z, POT ? acc[r].w : 0};
  }
}

/* ---- The fast sums (reference_gpu.h, tfmm_gpu_reference_fast_at) ------
 *
 * Positions relative to the block's first target c (in double, exact
 * enough: one rounding), then split: a source in shared memory as two
 * words of floats, hi = (x - c, m) rounded to float, lo = what rounding
 * x - c lost (in double, rounded), 0. A target keeps its hi and lo in
 * registers. */
struct fast_source {
  float4 hi, lo;
};

__device__ __forceinline__ void split(double x, float &hi, float &lo) {
  hi = __double2float_rn(x);
  lo = __double2float_rn(x - (double)hi);
}

__device__ __forceinline__ fast_source
fast_load(const double *__restrict__ pos, const double *__restrict__ mass,
          int n, int64_t j, const double (&c)[3]) {
  fast_source f;
  const vec v = source(pos, mass, n, j);
  split(v.x - c[0], f.hi.x, f.lo.x);
  split(v.y - c[1], f.hi.y, f.lo.y);
  split(v.z - c[2], f.hi.z, f.lo.z);
  f.hi.w = (float)v.w;
  f.lo.w = 0;
  return f;
}

/* The FP32 partial sums of FAST_RUN pairs are added to the double sums:
 * the float sums' rounding grows with the run, not the source count. */
constexpr int FAST_RUN = 16;

/* Sources [j0, j1) of the tile (j1 - j0 <= FAST_RUN) on the R targets:
 * r = (s_hi - t_hi) + (s_lo - t_lo) in float, then the pair of
 * interaction.h in float at the origin (its r = source - 0 is r itself),
 * summed in float, the run's sum added to acc in double. */
template <bool SPLINE, bool SELF>
__device__ __forceinline__ void
fast_run(const fast_source *src, int j0, int j1, int first,
         const float (&th)[3][R], const float (&tl)[3][R], const int (&self)[R],
         const tfmm_soft_f32 &kern, tfmm_acc_f64 (&acc)[R]) {
  tfmm_acc_f32 part[R];
#pragma unroll
  for (int r = 0; r < R; r++)
    part[r] = tfmm_acc_f32{0, 0, 0, 0};
#pragma unroll
  for (int j = j0; j < j1; j++) {
    const float4 hi = src[j].hi, lo = src[j].lo;
#pragma unroll
    for (int r = 0; r < R; r++) {
      const float4 s = {(hi.x - th[0][r]) + (lo.x - tl[0][r]),
                        (hi.y - th[1][r]) + (lo.y - tl[1][r]),
                        (hi.z - th[2][r]) + (lo.z - tl[2][r]), hi.w};
      tfmm_acc_add(&part[r], tfmm_pair<SPLINE>(kern, 0.0f, 0.0f, 0.0f, s,
                                               SELF && first + j == self[r]));
    }
  }
#pragma unroll
  for (int r = 0; r < R; r++) {
    acc[r].x += (double)part[r].x;
    acc[r].y += (double)part[r].y;
    acc[r].z += (double)part[r].z;
  }
}

/* partial_sums' blocks and tiles with the fast pairs: chunk blockIdx.y of
 * the sources on target group blockIdx.x, acceleration only (w = 0). */
template <bool SPLINE>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    partial_sums_fast(const double *__restrict__ pos,
                      const double *__restrict__ mass, int n,
                      const int64_t *__restrict__ targets, int k,
                      const int64_t *__restrict__ d_upto, tfmm_soft_f32 kern,
                      vec *__restrict__ partial) {
  __shared__ fast_source tile[THREADS];
  const int x = threadIdx.x;
  const int upto = summed(k, d_upto);
  if ((int)blockIdx.x * GROUP >= upto)
    return; /* as partial_sums */
  const bool busy = (int)blockIdx.x * GROUP + slot(x - x % 32, 0) < upto;
  const int tiles = (int)(((int64_t)n + THREADS - 1) / THREADS);
  const int chunk = blockIdx.y, chunks = gridDim.y;
  const int tile0 = (int)((int64_t)tiles * chunk / chunks);
  const int tile1 = (int)((int64_t)tiles * (chunk + 1) / chunks);

  /* The origin: the group's first target (a valid index, else body 0). */
  double c[3];
  {
    const int64_t i = targets[blockIdx.x * GROUP];
    const size_t at = i >= 0 && i < n ? (size_t)i : 0;
#pragma unroll
    for (int d = 0; d < 3; d++)
      c[d] = pos[3 * at + d];
  }
  float th[3][R], tl[3][R];
  int self[R];
  tfmm_acc_f64 acc[R];
#pragma unroll
  for (int r = 0; r < R; r++) {
    const int t = blockIdx.x * GROUP + slot(x, r);
    const int64_t i = t < k ? targets[t] : -1;
    const bool valid = i >= 0 && i < n;
    const size_t at = valid ? (size_t)i : 0;
#pragma unroll
    for (int d = 0; d < 3; d++)
      split(pos[3 * at + d] - c[d], th[d][r], tl[d][r]);
    self[r] = valid ? (int)i : -1;
    acc[r] = tfmm_acc_f64{0, 0, 0, 0};
  }

  fast_source next = fast_load(pos, mass, n, (int64_t)tile0 * THREADS + x, c);
  for (int t = tile0; t < tile1; t++) {
    __syncthreads(); /* every thread is done with the previous tile */
    tile[x] = next;
    __syncthreads();
    const int first = t * THREADS;
    if (t + 1 < tile1)
      next = fast_load(pos, mass, n, (int64_t)first + THREADS + x, c);
    const int count = min(THREADS, n - first);
    bool mine = false;
#pragma unroll
    for (int r = 0; r < R; r++)
      mine |= (unsigned)(self[r] - first) < (unsigned)count;
    if (!busy)
      continue;
    if (count == THREADS && !__any_sync(0xffffffffu, mine)) {
      for (int j0 = 0; j0 < THREADS; j0 += FAST_RUN)
        fast_run<SPLINE, false>(tile, j0, j0 + FAST_RUN, first, th, tl, self,
                                kern, acc);
    } else {
      for (int j0 = 0; j0 < count; j0 += FAST_RUN)
        fast_run<SPLINE, true>(tile, j0, min(j0 + FAST_RUN, count), first, th,
                               tl, self, kern, acc);
    }
  }

  const size_t row = (size_t)chunk * gridDim.x * GROUP;
#pragma unroll
  for (int r = 0; r < R; r++) {
    const int t = blockIdx.x * GROUP + slot(x, r);
    partial[row + t] = vec{acc[r].x, acc[r].y, acc[r].z, 0};
  }
}

/* Target t's sums: its chunks' partial sums in chunk order, to acc and
 * pot; NaN for an index outside [0, n). Notes the first such target and
 * the first with a non-finite result in the check's words. */
__global__ void __launch_bounds__(FINISH_THREADS)
    finish(const vec *__restrict__ partial, int chunks, size_t stride,
           const int64_t *__restrict__ targets, int k,
           const int64_t *__restrict__ d_upto, int n, double *__restrict__ acc,
           double *__restrict__ pot, check_words *check) {
  const int t = blockIdx.x * FINISH_THREADS + threadIdx.x;
  if (t >= k)
    return;
  if (t >= summed(k, d_upto)) { /* not summed: zeros, nothing checked */
    for (int d = 0; d < 3; d++)
      acc[3 * (size_t)t + d] = 0;
    if (pot != nullptr)
      pot[t] = 0;
    return;
  }
  tfmm_acc_f64 s = {0, 0, 0, 0};
  /* FINISH_LOADS chunks' loads in flight, added in chunk order as one at
   * a time would be (the same bits): a thread reading ~1,000 chunks one
   * after the other waits on each. */
  for (int c0 = 0; c0 < chunks; c0 += FINISH_LOADS) {
    vec v[FINISH_LOADS];
#pragma unroll
    for (int u = 0; u < FINISH_LOADS; u++)
      if (c0 + u < chunks)
        v[u] = partial[(size_t)(c0 + u) * stride + t];
#pragma unroll
    for (int u = 0; u < FINISH_LOADS; u++)
      if (c0 + u < chunks)
        tfmm_add(s, v[u]);
  }
  const int64_t i = targets[t];
  if (i < 0 || i >= n) {
    s.x = s.y = s.z = s.w = CUDART_NAN;
    atomicMin(&check->bad_index, (unsigned long long)t);
  } else if (!isfinite(s.x) || !isfinite(s.y) || !isfinite(s.z) ||
             (pot != nullptr && !isfinite(s.w))) {
    atomicMin(&check->nonfinite, (unsigned long long)t);
  }
  acc[3 * (size_t)t] = s.x;
  acc[3 * (size_t)t + 1] = s.y;
  acc[3 * (size_t)t + 2] = s.z;
  if (pot != nullptr)
    pot[t] = s.w;
}

/* The fast sums' finish: a warp a target (a thread a target leaves a
 * sample of 256 with one block reading its ~1,000 chunks one after the
 * other: 0.1 ms of latency on an H100). Lane l adds chunks l, l + 32, ...
 * in order, then the lanes' sums meet in a fixed tree of shuffles: the
 * same bits run to run. Checks as finish. */
__global__ void __launch_bounds__(FINISH_THREADS)
    finish_warp(const vec *__restrict__ partial, int chunks, size_t stride,
                const int64_t *__restrict__ targets, int k,
                const int64_t *__restrict__ d_upto, int n,
                double *__restrict__ acc, check_words *check) {
  const int t = (int)((blockIdx.x * (size_t)FINISH_THREADS + threadIdx.x) /
                      32); /* one per warp: the warp leaves together */
  const int lane = threadIdx.x % 32;
  if (t >= k)
    return;
  if (t >= summed(k, d_upto)) { /* as finish */
    if (lane < 3)
      acc[3 * (size_t)t + lane] = 0;
    return;
  }
  double x = 0, y = 0, z = 0;
  for (int c0 = lane; c0 < chunks; c0 += 32 * FINISH_LOADS) { /* as finish */
    vec v[FINISH_LOADS];
#pragma unroll
    for (int u = 0; u < FINISH_LOADS; u++)
      if (c0 + 32 * u < chunks)
        v[u] = partial[(size_t)(c0 + 32 * u) * stride + t];
#pragma unroll
    for (int u = 0; u < FINISH_LOADS; u++)
      if (c0 + 32 * u < chunks) {
        x += v[u].x;
        y += v[u].y;
        z += v[u].z;
      }
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    x += __shfl_xor_sync(0xffffffffu, x, off);
    y += __shfl_xor_sync(0xffffffffu, y, off);
    z += __shfl_xor_sync(0xffffffffu, z, off);
  }
  if (lane != 0)
    return;
  const int64_t i = targets[t];
  if (i < 0 || i >= n) {
    x = y = z = CUDART_NAN;
    atomicMin(&check->bad_index, (unsigned long long)t);
  } else if (!isfinite(x) || !isfinite(y) || !isfinite(z)) {
    atomicMin(&check->nonfinite, (unsigned long long)t);
  }
  acc[3 * (size_t)t] = x;
  acc[3 * (size_t)t + 1] = y;
  acc[3 * (size_t)t + 2] = z;
}

typedef void (*partial_fn)(const double *, const double *, int, const int64_t *,
                           int, const int64_t *, tfmm_soft_f64, vec *);

partial_fn pick(int spline, int potential) {
  if (spline)
    return potential ? partial_sums<true, true> : partial_sums<true, false>;
  return potential ? partial_sums<false, true> : partial_sums<false, false>;
}

/* The chunks: as many as make WAVES waves of the blocks the current
 * device holds at once with this kernel, given the target groups, never
 * more than the tiles nor than a grid's height. */
tfmm_status plan(size_t n, size_t k, const void *kernel, shape *out,
                 tfmm_error *err) {
  int device = 0, sms = 0, per_sm = 0;
  TRY(cudaGetDevice(&device));
  TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS,
                                                    0));
  const long long tiles = ((long long)n + THREADS - 1) / THREADS;
  const long long groups = ((long long)k + GROUP - 1) / GROUP;
  const long long want =
      (long long)WAVES * (sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
  long long chunks = want / groups;
  if (chunks > tiles)
    chunks = tiles;
  if (chunks > 65535)
    chunks = 65535;
  if (chunks < 1)
    chunks = 1;
  out->groups = (int)groups;
  out->chunks = (int)chunks;
  out->bytes = HEAD + (size_t)chunks * (size_t)groups * GROUP * sizeof(vec);
  return TFMM_OK;
}

tfmm_status refuse(tfmm_error *err, const char *what) {
  return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "reference at targets on the GPU: %s", what);
}

/* The arguments every call needs, sizes and softening. */
tfmm_status check_sizes(size_t n, size_t k, const tfmm_pair_params *pair,
                        tfmm_error *err) {
  if (pair == NULL)
    return refuse(err, "pair is NULL");
  /* Indices, tiles and target slots (rounded up to a group) are ints. */
  if (n == 0 || k == 0 || n > INT_MAX - GROUP || k > INT_MAX - GROUP)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "reference at targets on the GPU: %zu bodies and "
                          "%zu targets (each from 1 to 2^31 - 257)",
                          n, k);
  if (pair->softening != TFMM_SOFTENING_PLUMMER &&
      pair->softening != TFMM_SOFTENING_SPLINE)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "reference at targets on the GPU: softening %d is "
                          "neither Plummer nor the spline",
                          (int)pair->softening);
  if (!(pair->eps >= 0) || !isfinite(pair->eps))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "reference at targets on the GPU: eps = %g (a "
                          "finite length >= 0)",
                          pair->eps);
  return TFMM_OK;
}

/* The FP32 pairs' kernel of a softening kind. */
typedef void (*fast_fn)(const double *, const double *, int, const int64_t *,
                        int, const int64_t *, tfmm_soft_f32, vec *);

fast_fn pick_fast(int spline) {
  return spline ? partial_sums_fast<true> : partial_sums_fast<false>;
}

/* Both entry points: sizes (workspace NULL) or enqueues the partial sums
 * (FP64, or with fast the FP32 pairs) and the finish. */
tfmm_status reference_at(void *workspace, size_t *workspace_bytes, size_t n,
                         const double *d_pos, const double *d_mass, size_t k,
                         const int64_t *d_targets, const int64_t *d_upto,
                         const tfmm_pair_params *pair, double *d_acc,
                         double *d_pot, int fast, void *stream,
                         tfmm_error *err) {
  if (workspace_bytes == NULL)
    return refuse(err, "workspace_bytes is NULL");
  CHECK(check_sizes(n, k, pair, err));
  const int spline = pair->softening == TFMM_SOFTENING_SPLINE;
  const partial_fn kernel = pick(spline, d_pot != NULL);
  const fast_fn kernel_fast = pick_fast(spline);
  shape sh;
  CHECK(plan(n, k, fast ? (const void *)kernel_fast : (const void *)kernel, &sh,
             err));
  if (workspace == NULL) { /* the size query */
    *workspace_bytes = sh.bytes;
    return TFMM_OK;
  }
  if (d_pos == NULL || d_mass == NULL || d_targets == NULL || d_acc == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "reference at targets on the GPU: %s is NULL",
                          d_pos == NULL       ? "d_pos"
                          : d_mass == NULL    ? "d_mass"
                          : d_targets == NULL ? "d_targets"
                                              : "d_acc");
  if (*workspace_bytes < sh.bytes)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "reference at targets on the GPU: a workspace of "
                          "%zu bytes, %zu needed (ask with workspace NULL, "
                          "the same arguments and device)",
                          *workspace_bytes, sh.bytes);
  if ((uintptr_t)workspace % alignof(vec) != 0)
    return refuse(err, "the workspace is not 32-byte aligned");

  cudaStream_t s = (cudaStream_t)stream;
  check_words *check = (check_words *)workspace;
  vec *partial = (vec *)((char *)workspace + HEAD);
  TRY(cudaMemsetAsync(check, 0xff, sizeof *check, s)); /* none found */
  const dim3 grid((unsigned)sh.groups, (unsigned)sh.chunks);
  if (fast)
    kernel_fast<<<grid, THREADS, 0, s>>>(
        d_pos, d_mass, (int)n, d_targets, (int)k, d_upto,
        tfmm_soft_make_f32(spline, pair->eps), partial);
  else
    kernel<<<grid, THREADS, 0, s>>>(
        d_pos, d_mass, (int)n, d_targets, (int)k, d_upto,
        tfmm_soft_make_f64(spline, pair->eps), partial);
  TRY(cudaGetLastError());
  if (fast)
    finish_warp<<<(unsigned)((32 * k + FINISH_THREADS - 1) / FINISH_THREADS),
                  FINISH_THREADS, 0, s>>>(partial, sh.chunks,
                                          (size_t)sh.groups * GROUP, d_targets,
                                          (int)k, d_upto, (int)n, d_acc, check);
  else
    finish<<<(unsigned)((k + FINISH_THREADS - 1) / FINISH_THREADS),
             FINISH_THREADS, 0, s>>>(
        partial, sh.chunks, (size_t)sh.groups * GROUP, d_targets, (int)k,
        d_upto, (int)n, d_acc, d_pot, check);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_gpu_reference_at(void *workspace, size_t *workspace_bytes, size_t n,
                      const double *d_pos, const double *d_mass, size_t k,
                      const int64_t *d_targets, const int64_t *d_upto,
                      const tfmm_pair_params *pair, double *d_acc,
                      double *d_pot, void *stream, tfmm_error *err) {
  return reference_at(workspace, workspace_bytes, n, d_pos, d_mass, k,
                      d_targets, d_upto, pair, d_acc, d_pot, 0, stream, err);
}

extern "C" tfmm_status
tfmm_gpu_reference_fast_at(void *workspace, size_t *workspace_bytes, size_t n,
                           const double *d_pos, const double *d_mass, size_t k,
                           const int64_t *d_targets, const int64_t *d_upto,
                           const tfmm_pair_params *pair, double *d_acc,
                           void *stream, tfmm_error *err) {
  return reference_at(workspace, workspace_bytes, n, d_pos, d_mass, k,
                      d_targets, d_upto, pair, d_acc, NULL, 1, stream, err);
}

static_assert(sizeof(check_words) == TFMM_GPU_REFERENCE_FOUND,
              "the words reference_gpu.h names");

extern "C" const void *tfmm_gpu_reference_found(const void *workspace) {
  return workspace; /* the check's words head the workspace */
}

extern "C" tfmm_status tfmm_gpu_reference_judge(const void *found, size_t n,
                                                size_t k,
                                                const int64_t *d_targets,
                                                void *stream, tfmm_error *err) {
  if (found == NULL || d_targets == NULL)
    return refuse(err, found == NULL ? "found is NULL" : "d_targets is NULL");
  check_words words;
  memcpy(&words, found, sizeof words);
  cudaStream_t s = (cudaStream_t)stream;
  if (words.bad_index < k) {
    int64_t index = 0;
    TRY(cudaMemcpyAsync(&index, d_targets + words.bad_index, sizeof index,
                        cudaMemcpyDeviceToHost, s));
    TRY(cudaStreamSynchronize(s));
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "reference at targets on the GPU: target %llu: "
                          "index %lld is not in [0, n = %zu)",
                          words.bad_index, (long long)index, n);
  }
  if (words.nonfinite < k)
    return tfmm_error_set(err, TFMM_ERR_NONFINITE,
                          "reference at targets on the GPU: target %llu: "
                          "force is not finite (with eps = 0, a body at the "
                          "same point as another?)",
                          words.nonfinite);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_reference_check(const void *workspace, size_t n,
                                                size_t k,
                                                const int64_t *d_targets,
                                                void *stream, tfmm_error *err) {
  if (workspace == NULL || d_targets == NULL)
    return refuse(err, workspace == NULL ? "workspace is NULL"
                                         : "d_targets is NULL");
  cudaStream_t s = (cudaStream_t)stream;
  check_words found;
  TRY(cudaMemcpyAsync(&found, workspace, sizeof found, cudaMemcpyDeviceToHost,
                      s));
  TRY(cudaStreamSynchronize(s));
  return tfmm_gpu_reference_judge(&found, n, k, d_targets, stream, err);
}

namespace {

/* The device memory and stream of one tfmm_gpu_reference_host_at call,
 * released whatever path leaves it. */
struct host_call {
  double *pos = nullptr, *mass = nullptr, *acc = nullptr;
  int64_t *targets = nullptr;
  void *work = nullptr;
  cudaStream_t stream = nullptr;
  ~host_call() {
    if (stream != nullptr)
      cudaStreamSynchronize(stream);
    cudaFree(pos), cudaFree(mass), cudaFree(acc), cudaFree(targets);
    cudaFree(work);
    if (stream != nullptr)
      cudaStreamDestroy(stream);
  }
};

} // namespace

extern "C" tfmm_status
tfmm_gpu_reference_host_at(int device, size_t n, const double *pos,
                           const double *mass, size_t k, const size_t *targets,
                           const tfmm_pair_params *pair, double *acc,
                           tfmm_error *err) {
  if (n == 0 || k == 0)
    return k == 0 ? TFMM_OK : refuse(err, "no bodies for the targets");
  if (pos == NULL || mass == NULL || targets == NULL || acc == NULL ||
      pair == NULL)
    return refuse(err, "an array or the pair parameters is NULL");
  tfmm_device_scope scope(device);
  TRY(scope.status);
  host_call c;
  TRY(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  TRY(cudaMalloc(&c.pos, 3 * n * sizeof(double)));
  TRY(cudaMalloc(&c.mass, n * sizeof(double)));
  TRY(cudaMalloc(&c.acc, 3 * k * sizeof(double)));
  TRY(cudaMalloc(&c.targets, k * sizeof(int64_t)));
  /* size_t and int64_t indices alike in width (the targets' copy is a
   * plain copy): a size_t index past INT64_MAX reads as negative, and the
   * kernels name it. */
  static_assert(sizeof(size_t) == sizeof(int64_t), "64-bit indices");
  TRY(cudaMemcpyAsync(c.pos, pos, 3 * n * sizeof(double),
                      cudaMemcpyHostToDevice, c.stream));
  TRY(cudaMemcpyAsync(c.mass, mass, n * sizeof(double), cudaMemcpyHostToDevice,
                      c.stream));
  TRY(cudaMemcpyAsync(c.targets, targets, k * sizeof(int64_t),
                      cudaMemcpyHostToDevice, c.stream));
  size_t bytes = 0;
  CHECK(tfmm_gpu_reference_at(nullptr, &bytes, n, c.pos, c.mass, k, c.targets,
                              nullptr, pair, c.acc, nullptr, c.stream, err));
  TRY(cudaMalloc(&c.work, bytes));
  CHECK(tfmm_gpu_reference_at(c.work, &bytes, n, c.pos, c.mass, k, c.targets,
                              nullptr, pair, c.acc, nullptr, c.stream, err));
  CHECK(tfmm_gpu_reference_check(c.work, n, k, c.targets, c.stream, err));
  TRY(cudaMemcpyAsync(acc, c.acc, 3 * k * sizeof(double),
                      cudaMemcpyDeviceToHost, c.stream));
  TRY(cudaStreamSynchronize(c.stream));
  return TFMM_OK;
}
