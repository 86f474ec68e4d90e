/* The near field of the tree methods: target leaves against the source
 * leaves of their neighbour lists, tiled through shared memory as the
 * all-pairs kernel of GPU Gems 3 chapter 31 (section 31.6 puts it inside a
 * hierarchical method; this is that use).
 *
 * Each warp owns one work item (tfmm_gpu_near_item): up to 64 bodies of
 * one target leaf, two per lane in registers, and streams the bodies of
 * every source leaf on the leaf's list through its own double-buffered
 * shared-memory tiles (cp.async; a tile is up to TILE bodies of one source
 * leaf, so a leaf larger than a tile takes several). Leaves smaller than a
 * warp do not leave lanes idle: an item of count bodies is held by `width`
 * lanes (2 width >= count), and the warp's 32 / width lane groups take
 * every (32 / width)-th source of each tile, their partial sums added at
 * the end by shuffles in a fixed order. Warps synchronise only with
 * themselves: no block barrier, no atomics; the same input gives the same
 * bits, run after run.
 *
 * Precision: positions are stored relative to their own leaf's centre; for
 * source leaf S the warp moves its targets into S's frame by c_T - c_S,
 * taken in double and rounded once, so that every pair is computed at the
 * precision of its own separation, whatever the size of the system.
 *
 * Cost per interaction: that of the all-pairs kernel (13 FP32 instructions
 * and one MUFU.RSQ with the potential, 12 without), plus half a broadcast
 * LDS.128 (one load feeds a lane's two targets). Per tile: one cp.async per
 * source per lane group, three DADD and conversions for the frame. Limit:
 * the FP32 pipe, as for the all-pairs kernel (about 2.6e12 to 2.8e12
 * interactions per second on an H100 SXM); a warp runs at count / (2 width)
 * of it on its item, plus the tail of tiles of fewer than TILE sources.
 * Memory: each source body (16 bytes) is read once per target item that
 * lists it, i.e. 16 / count bytes per interaction, mostly from L2.
 */
#include "cp_async.cuh"
#include "gpu_context.h"
#include "nearfield/interaction.h"

namespace {

constexpr int WARPS = 4; /* independent warps per block */
constexpr int TILE = 64; /* most sources in one warp's tile */

struct near_args {
  const float4 *body;
  const double *centre;
  const int *leaf_begin;
  const int *list_offset;
  const int *list_leaf;
  const int4 *item;
  int nitems;
  float eps2;
  float4 *out;
};

/* Where a warp is in its walk over the tiles of its list: entry e (a
 * source leaf) and the first source of the tile within that leaf. */
struct cursor {
  int e, at;
};

__device__ __forceinline__ cursor advance(const near_args &a, cursor c) {
  int s = a.list_leaf[c.e];
  int m = a.leaf_begin[s + 1] - a.leaf_begin[s];
  c.at += TILE;
  if (c.at >= m) {
    c.e++;
    c.at = 0;
  }
  return c;
}

/* Starts copying the tile at c into buf; an empty group when c is past the
 * list keeps the count of pending groups. */
__device__ __forceinline__ void load(const near_args &a, cursor c, int end,
                                     float4 *buf, int lane) {
  if (c.e < end) {
    int s = a.list_leaf[c.e];
    int first = a.leaf_begin[s] + c.at;
    int count = min(TILE, a.leaf_begin[s + 1] - first);
    for (int k = lane; k < count; k += 32)
      copy16_async(buf + k, a.body + first + k);
  }
  copy_commit();
}

struct target {
  float x, y, z;
  int index;
};

/* Sources j = group, group + groups, ... < count of the tile in src, to the
 * two targets moved into the source leaf's frame. SELF: the tile is part of
 * the target's own leaf, so compare indices to skip the self pair. */
template <bool SELF>
__device__ __forceinline__ void
sum_tile(const float4 *__restrict__ src, int count, int first, int group,
         int groups, const target (&t)[2], float eps2, tfmm_acc_f32 (&acc)[2]) {
  tfmm_acc_f32 part[2] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll 4
  for (int j = group; j < count; j += groups) {
    float4 s = src[j];
#pragma unroll
    for (int r = 0; r < 2; r++)
      tfmm_acc_add(&part[r], tfmm_interaction_f32(
                                 t[r].x, t[r].y, t[r].z, s.x, s.y, s.z, s.w,
                                 eps2, SELF && first + j == t[r].index));
  }
  /* Two-level sum: the tile first, then the running total. */
#pragma unroll
  for (int r = 0; r < 2; r++)
    tfmm_acc_add(&acc[r], part[r]);
}

template <bool POT>
__global__ void __launch_bounds__(WARPS * 32) near_tiled(near_args a) {
  __shared__ float4 smem[WARPS][2][TILE];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int it = blockIdx.x * WARPS + warp;
  /* The whole warp leaves together; nothing below waits on other warps. */
  if (it >= a.nitems)
    return;
  const int4 item = a.item[it]; /* leaf, first, count, width */
  const int leaf = item.x, width = item.w;
  const int groups = 32 / width, group = lane / width, slot = lane % width;

  /* Targets slot and slot + width of the item, relative to the leaf's
   * centre; lanes past the count compute on a valid body, store nothing. */
  float4 own[2];
  int index[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    int k = slot + r * width;
    index[r] = k < item.z ? item.y + k : -1;
    own[r] = a.body[k < item.z ? item.y + k : item.y];
  }
  const double cx = a.centre[3 * leaf], cy = a.centre[3 * leaf + 1],
               cz = a.centre[3 * leaf + 2];

  tfmm_acc_f32 acc[2] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
  const int end = a.list_offset[leaf + 1];
  float4 *buf = smem[warp][0];
  cursor cur = {a.list_offset[leaf], 0};
  load(a, cur, end, buf, lane);
  for (int k = 0; cur.e < end; k ^= 1) {
    cursor next = advance(a, cur);
    load(a, next, end, smem[warp][k ^ 1], lane);
    const int s = a.list_leaf[cur.e];
    const int first = a.leaf_begin[s] + cur.at;
    const int count = min(TILE, a.leaf_begin[s + 1] - first);
    /* The targets in S's frame: x - (c_S - c_T). */
    const float dx = (float)(a.centre[3 * s] - cx),
                dy = (float)(a.centre[3 * s + 1] - cy),
                dz = (float)(a.centre[3 * s + 2] - cz);
    target t[2];
#pragma unroll
    for (int r = 0; r < 2; r++)
      t[r] = target{own[r].x - dx, own[r].y - dy, own[r].z - dz, index[r]};
    copy_wait<1>(); /* this tile's copies, from every lane: */
    __syncwarp();
    if (s == leaf)
      sum_tile<true>(smem[warp][k], count, first, group, groups, t, a.eps2,
                     acc);
    else
      sum_tile<false>(smem[warp][k], count, first, group, groups, t, a.eps2,
                      acc);
    __syncwarp(); /* before the next prefetch overwrites this buffer */
    cur = next;
  }
  copy_wait<0>();

  /* The lane groups' partial sums, added in a fixed order. */
#pragma unroll
  for (int r = 0; r < 2; r++)
    for (int o = width; o < 32; o <<= 1) {
      acc[r].x += __shfl_xor_sync(0xffffffffu, acc[r].x, o);
      acc[r].y += __shfl_xor_sync(0xffffffffu, acc[r].y, o);
      acc[r].z += __shfl_xor_sync(0xffffffffu, acc[r].z, o);
      if (POT)
        acc[r].w += __shfl_xor_sync(0xffffffffu, acc[r].w, o);
    }
  if (group == 0)
#pragma unroll
    for (int r = 0; r < 2; r++)
      if (index[r] >= 0)
        a.out[index[r]] =
            make_float4(acc[r].x, acc[r].y, acc[r].z, POT ? acc[r].w : 0.f);
}

/* The near field's arrays, in the order of tfmm_gpu_near_host. */
enum { BODY, CENTRE, LEAF_BEGIN, LIST_OFFSET, LIST_LEAF, ITEM, OUT };

size_t bytes_of(int which, const tfmm_gpu_near_size *sz) {
  switch (which) {
  case BODY:
  case OUT:
    return sz->n * sizeof(float4);
  case CENTRE:
    return (size_t)sz->nleaves * 3 * sizeof(double);
  case LEAF_BEGIN:
  case LIST_OFFSET:
    return (size_t)(sz->nleaves + 1) * sizeof(int);
  case LIST_LEAF:
    return (size_t)sz->nentries * sizeof(int);
  default:
    return (size_t)sz->nitems * sizeof(int4);
  }
}

tfmm_status grow(tfmm_gpu_buffer *b, size_t bytes, tfmm_error *err) {
  if (bytes <= b->bytes && b->host != NULL)
    return TFMM_OK;
  tfmm_gpu_buffer_free(b);
  /* Geometric growth: slowly growing inputs reallocate rarely. */
  size_t want = bytes + bytes / 4 + 256;
  TFMM_CUDA_TRY(cudaMalloc(&b->dev, want), err);
  TFMM_CUDA_TRY(cudaMallocHost(&b->host, want), err);
  b->bytes = want;
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_gpu_near_reserve(tfmm_gpu *g,
                                             const tfmm_gpu_near_size *sz,
                                             tfmm_gpu_near_host *host,
                                             tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  for (int k = 0; k < TFMM_GPU_NEAR_BUFFERS; k++) {
    tfmm_status st = grow(&g->near[k], bytes_of(k, sz), err);
    if (st != TFMM_OK)
      return st; /* what was allocated stays owned by g */
  }
  host->body = (float *)g->near[BODY].host;
  host->centre = (double *)g->near[CENTRE].host;
  host->leaf_begin = (int32_t *)g->near[LEAF_BEGIN].host;
  host->list_offset = (int32_t *)g->near[LIST_OFFSET].host;
  host->list_leaf = (int32_t *)g->near[LIST_LEAF].host;
  host->item = (tfmm_gpu_near_item *)g->near[ITEM].host;
  host->out = (const float *)g->near[OUT].host;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_near_launch(tfmm_gpu *g,
                                            const tfmm_gpu_near_size *sz,
                                            float eps2, int potential,
                                            tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = g->stream;
  TFMM_CUDA_TRY(cudaEventRecord(g->events[0], s), err);
  for (int k = 0; k < OUT; k++)
    TFMM_CUDA_TRY(cudaMemcpyAsync(g->near[k].dev, g->near[k].host,
                                  bytes_of(k, sz), cudaMemcpyHostToDevice, s),
                  err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[1], s), err);
  near_args a = {(const float4 *)g->near[BODY].dev,
                 (const double *)g->near[CENTRE].dev,
                 (const int *)g->near[LEAF_BEGIN].dev,
                 (const int *)g->near[LIST_OFFSET].dev,
                 (const int *)g->near[LIST_LEAF].dev,
                 (const int4 *)g->near[ITEM].dev,
                 (int)sz->nitems,
                 eps2,
                 (float4 *)g->near[OUT].dev};
  unsigned blocks = (unsigned)((sz->nitems + WARPS - 1) / WARPS);
  if (blocks > 0) {
    if (potential)
      near_tiled<true><<<blocks, WARPS * 32, 0, s>>>(a);
    else
      near_tiled<false><<<blocks, WARPS * 32, 0, s>>>(a);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  TFMM_CUDA_TRY(cudaEventRecord(g->events[2], s), err);
  TFMM_CUDA_TRY(cudaMemcpyAsync(g->near[OUT].host, g->near[OUT].dev,
                                bytes_of(OUT, sz), cudaMemcpyDeviceToHost, s),
                err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[3], s), err);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_near_wait(tfmm_gpu *g, tfmm_gpu_times *times,
                                          tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
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
