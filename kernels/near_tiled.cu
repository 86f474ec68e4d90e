/* The near field of the tree methods: target leaves against the source
 * leaves of their neighbour lists, tiled through shared memory as the
 * all-pairs kernel of GPU Gems 3 chapter 31 (section 31.6 puts it inside a
 * hierarchical method; this is that use).
 *
 * Each warp owns one work item (tfmm_gpu_near_item): up to 64 bodies of
 * one target leaf, two per lane in registers, and a run of its list. The
 * sources of 32 list entries at a time are taken as one concatenation and
 * streamed through the warp's own double-buffered shared-memory tiles of
 * TILE bodies, whatever the leaves' sizes: a tile spans several small
 * leaves, and a leaf larger than a tile takes several tiles, so the cost
 * of a tile is paid per TILE sources and not per leaf. Loads go through
 * registers (the next tile is fetched while this one is summed) because
 * each source is moved into the target leaf's frame on the way. Leaves
 * smaller than a warp do not leave most lanes idle: an item of count
 * bodies is held by width = ceil(count / 2) lanes, and the warp's
 * groups = floor(32 / width) lane groups take every groups-th source of
 * each tile, their partial sums added at the end by shuffles in a fixed
 * order. Warps synchronise only with themselves: no block barrier, no
 * atomics; the same input gives the same bits, run after run.
 *
 * Precision: positions are stored relative to their own leaf's centre; a
 * source of leaf S is moved by c_S - c_T (taken in double, then rounded)
 * into the frame of target leaf T, so that every pair is computed at the
 * precision of its own separation, whatever the size of the system.
 *
 * Cost per interaction: that of the all-pairs kernel (13 FP32 instructions
 * and one MUFU.RSQ with the potential, 12 without), plus half a broadcast
 * LDS.128 (one load feeds a lane's two targets). Per source per tile: a
 * 5-step shuffle search for its entry, one LDG.128, three FADD, two STS.
 * Limit: the FP32 pipe, as for the all-pairs kernel (about 2.6e12 to
 * 2.8e12 interactions per second on an H100 SXM); a warp runs at
 * count groups / 64 of it on its item (that fraction of its lanes does
 * useful work), less the loop tails of tiles of fewer than TILE sources.
 * Memory: each source body (16 bytes) is read once per target item that
 * lists it, i.e. 16 / count bytes per interaction, mostly from L2.
 */
#include "gpu_context.h"
#include "nearfield/interaction.h"

namespace {

/* One warp a block: items differ in cost, and a block of several would
 * stay resident until its slowest warp finished, its other warps idle. */
constexpr int WARPS = 1;
constexpr int TILE = 64; /* sources in one warp's tile */
/* Blocks an SM must hold at once: 32 warps, 64 registers a thread. */
constexpr int MIN_BLOCKS = 32;

struct near_args {
  const float4 *body;
  const double *centre;
  const int *leaf_begin;
  const int *list_leaf;
  const tfmm_gpu_near_item *item;
  int nitems;
  float eps2;
  float4 *out;     /* results of the items that hold a whole list */
  float4 *partial; /* slots of the items of cut lists */
};

/* The source leaves of 32 consecutive list entries, one per lane, loaded
 * together so that the warp pays one memory latency per 32 entries rather
 * than a chain of dependent loads per tile; read back by shuffles. The
 * entries' sources are taken as one concatenation, cut into tiles of TILE
 * whatever the leaves' sizes: a tile often spans several small leaves. */
struct batch {
  int first, count; /* the entry's leaf: bodies [first, first + count) */
  int offset;       /* where its sources start in the concatenation */
  int self;         /* whether it is the target's own leaf */
  float dx, dy, dz; /* c_S - c_T, taken in double then rounded */
  int total;        /* sources in the concatenation (the same in every lane) */
};

__device__ __forceinline__ int lane_int(int v, int j) {
  return __shfl_sync(0xffffffffu, v, j);
}
__device__ __forceinline__ float lane_float(float v, int j) {
  return __shfl_sync(0xffffffffu, v, j);
}

__device__ __forceinline__ batch load_batch(const near_args &a, int e, int end,
                                            int leaf, double cx, double cy,
                                            double cz, int lane) {
  batch b = {0, 0, 0, 0, 0.f, 0.f, 0.f, 0};
  if (e < end) {
    const int s = a.list_leaf[e];
    b.self = s == leaf;
    b.first = a.leaf_begin[s];
    b.count = a.leaf_begin[s + 1] - b.first;
    b.dx = (float)(a.centre[3 * s] - cx);
    b.dy = (float)(a.centre[3 * s + 1] - cy);
    b.dz = (float)(a.centre[3 * s + 2] - cz);
  }
  int upto = b.count; /* inclusive scan of the counts */
  for (int o = 1; o < 32; o <<= 1) {
    int v = __shfl_up_sync(0xffffffffu, upto, o);
    if (lane >= o)
      upto += v;
  }
  b.offset = upto - b.count;
  b.total = lane_int(upto, 31);
  return b;
}

/* Source `pos` of the batch's concatenation, moved into the target leaf's
 * frame (x + c_S - c_T), and its body index; whether its leaf is the
 * target's own. Every lane must call it (it shuffles); lanes whose pos is
 * past the end get a massless body that is never read. */
struct staged {
  float4 v;
  int index, self;
};

__device__ __forceinline__ staged fetch(const near_args &a, const batch &b,
                                        int pos, int entries) {
  /* The entry holding pos: the last whose offset is <= pos (offsets
   * strictly increase: leaves are never empty). */
  int j = 0;
  for (int step = 16; step > 0; step >>= 1) {
    int o = lane_int(b.offset, (j + step) & 31);
    if (j + step < entries && o <= pos)
      j += step;
  }
  const int first = lane_int(b.first, j), offset = lane_int(b.offset, j);
  const float dx = lane_float(b.dx, j), dy = lane_float(b.dy, j),
              dz = lane_float(b.dz, j);
  staged out = {make_float4(0.f, 0.f, 0.f, 0.f), -1, lane_int(b.self, j)};
  if (pos < b.total) {
    out.index = first + pos - offset;
    float4 v = a.body[out.index];
    out.v = make_float4(v.x + dx, v.y + dy, v.z + dz, v.w);
  } else {
    out.self = 0;
  }
  return out;
}

struct target {
  float x, y, z;
  int index;
};

/* A target's running total, in double: the tiles' float sums are added
 * without further rounding, as the CPU adds its leaf pairs' (8 DADD a
 * tile, about 1 % of its work). */
struct acc_f64 {
  double x, y, z, w;
};

/* Sources j = start, start + groups, ... < count of the tile to the two
 * targets. SELF: the tile holds sources of the target's own leaf, so
 * compare indices to skip the self pair. */
template <bool SELF>
__device__ __forceinline__ void
sum_tile(const float4 *__restrict__ src, const int *__restrict__ idx, int count,
         int start, int groups, const target (&t)[2], float eps2,
         acc_f64 (&acc)[2]) {
  tfmm_acc_f32 part[2] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll 4
  for (int j = start; j < count; j += groups) {
    float4 s = src[j];
    int i = SELF ? idx[j] : -1;
#pragma unroll
    for (int r = 0; r < 2; r++)
      tfmm_acc_add(&part[r],
                   tfmm_interaction_f32(t[r].x, t[r].y, t[r].z, s.x, s.y, s.z,
                                        s.w, eps2, SELF && i == t[r].index));
  }
  /* Two-level sum: the tile in float, then the running total. */
#pragma unroll
  for (int r = 0; r < 2; r++) {
    acc[r].x += part[r].x;
    acc[r].y += part[r].y;
    acc[r].z += part[r].z;
    acc[r].w += part[r].w;
  }
}

template <bool POT>
__global__ void __launch_bounds__(WARPS * 32, MIN_BLOCKS)
    near_tiled(near_args a) {
  __shared__ float4 tile[WARPS][2][TILE];
  __shared__ int tile_index[WARPS][2][TILE];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int it = blockIdx.x * WARPS + warp;
  /* The whole warp leaves together; nothing below waits on other warps. */
  if (it >= a.nitems)
    return;
  const tfmm_gpu_near_item item = a.item[it];
  const int leaf = item.leaf, width = item.width;
  const int groups = 32 / width, group = lane / width, slot = lane % width;
  /* Lanes past the last whole group take no sources. */
  const int start = group < groups ? group : 1 << 30;

  /* Targets slot and slot + width of the item, relative to the leaf's
   * centre; lanes past the count compute on a valid body, store nothing. */
  target t[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    int k = slot + r * width;
    float4 v = a.body[k < item.count ? item.first + k : item.first];
    t[r] = target{v.x, v.y, v.z, k < item.count ? item.first + k : -1};
  }
  const double cx = a.centre[3 * leaf], cy = a.centre[3 * leaf + 1],
               cz = a.centre[3 * leaf + 2];

  acc_f64 acc[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  const int end = item.entry_end;
  for (int base = item.entry_begin; base < end; base += 32) {
    const batch b = load_batch(a, base + lane, end, leaf, cx, cy, cz, lane);
    const int entries = min(32, end - base);
    /* Registers hold the next tile while shared memory serves this one. */
    staged r0 = fetch(a, b, lane, entries),
           r1 = fetch(a, b, lane + 32, entries);
    for (int at = 0, k = 0; at < b.total; at += TILE, k ^= 1) {
      tile[warp][k][lane] = r0.v;
      tile[warp][k][lane + 32] = r1.v;
      tile_index[warp][k][lane] = r0.index;
      tile_index[warp][k][lane + 32] = r1.index;
      const bool self = __any_sync(0xffffffffu, r0.self || r1.self);
      __syncwarp(); /* the tile is whole; and every lane is done with the
                       tile before last, whose buffer the next store uses */
      if (at + TILE < b.total) {
        r0 = fetch(a, b, at + TILE + lane, entries);
        r1 = fetch(a, b, at + TILE + 32 + lane, entries);
      }
      const int count = min(TILE, b.total - at);
      if (self)
        sum_tile<true>(tile[warp][k], tile_index[warp][k], count, start, groups,
                       t, a.eps2, acc);
      else
        sum_tile<false>(tile[warp][k], tile_index[warp][k], count, start,
                        groups, t, a.eps2, acc);
    }
    __syncwarp(); /* before the next batch reuses the buffers */
  }

  /* The lane groups' partial sums, added to group 0's in group order. */
  const int index[2] = {t[0].index, t[1].index};
#pragma unroll
  for (int r = 0; r < 2; r++) {
    const acc_f64 mine = acc[r];
    for (int g = 1; g < groups; g++) {
      const int from = slot + g * width;
      acc[r].x += __shfl_sync(0xffffffffu, mine.x, from);
      acc[r].y += __shfl_sync(0xffffffffu, mine.y, from);
      acc[r].z += __shfl_sync(0xffffffffu, mine.z, from);
      if (POT)
        acc[r].w += __shfl_sync(0xffffffffu, mine.w, from);
    }
  }
  if (group == 0)
#pragma unroll
    for (int r = 0; r < 2; r++)
      if (index[r] >= 0) {
        float4 v = make_float4((float)acc[r].x, (float)acc[r].y,
                               (float)acc[r].z, POT ? (float)acc[r].w : 0.f);
        if (item.slot < 0)
          a.out[index[r]] = v;
        else
          a.partial[item.slot + index[r] - item.first] = v;
      }
}

/* The cut lists: each body's partial sums added in the order of the parts,
 * one warp per split, two bodies per lane. */
__global__ void __launch_bounds__(WARPS * 32)
    near_combine(const tfmm_gpu_near_split *__restrict__ split, int nsplits,
                 const float4 *__restrict__ partial, float4 *__restrict__ out) {
  const int it = blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (it >= nsplits)
    return;
  const tfmm_gpu_near_split sp = split[it];
  for (int k = threadIdx.x & 31; k < sp.count; k += 32) {
    float4 sum = partial[sp.slot + k];
    for (int p = 1; p < sp.parts; p++) {
      float4 v = partial[sp.slot + p * sp.count + k];
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    out[sp.first + k] = sum;
  }
}

/* The near field's arrays: those uploaded, then the results and the
 * partial sums (on the device only). */
enum { BODY, CENTRE, LEAF_BEGIN, LIST_LEAF, ITEM, SPLIT, OUT, PARTIAL };

size_t bytes_of(int which, const tfmm_gpu_near_size *sz) {
  switch (which) {
  case BODY:
  case OUT:
    return sz->n * sizeof(float4);
  case CENTRE:
    return (size_t)sz->nleaves * 3 * sizeof(double);
  case LEAF_BEGIN:
    return (size_t)(sz->nleaves + 1) * sizeof(int);
  case LIST_LEAF:
    return (size_t)sz->nentries * sizeof(int);
  case ITEM:
    return (size_t)sz->nitems * sizeof(tfmm_gpu_near_item);
  case SPLIT:
    return (size_t)sz->nsplits * sizeof(tfmm_gpu_near_split);
  default:
    return (size_t)sz->nslots * sizeof(float4);
  }
}

tfmm_status grow(tfmm_gpu_buffer *b, size_t bytes, int pinned,
                 tfmm_error *err) {
  if (bytes <= b->bytes && b->dev != NULL)
    return TFMM_OK;
  tfmm_gpu_buffer_free(b);
  /* Geometric growth: slowly growing inputs reallocate rarely. */
  size_t want = bytes + bytes / 4 + 256;
  TFMM_CUDA_TRY(cudaMalloc(&b->dev, want), err);
  if (pinned)
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
    tfmm_status st = grow(&g->near[k], bytes_of(k, sz), k != PARTIAL, err);
    if (st != TFMM_OK)
      return st; /* what was allocated stays owned by g */
  }
  host->body = (float *)g->near[BODY].host;
  host->centre = (double *)g->near[CENTRE].host;
  host->leaf_begin = (int32_t *)g->near[LEAF_BEGIN].host;
  host->list_leaf = (int32_t *)g->near[LIST_LEAF].host;
  host->item = (tfmm_gpu_near_item *)g->near[ITEM].host;
  host->split = (tfmm_gpu_near_split *)g->near[SPLIT].host;
  host->out = (const float *)g->near[OUT].host;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_near_launch(tfmm_gpu *g,
                                            const tfmm_gpu_near_size *sz,
                                            const tfmm_pair_params *pair,
                                            int potential, tfmm_error *err) {
  if (pair->softening != TFMM_SOFTENING_PLUMMER ||
      pair->precision != TFMM_PRECISION_SINGLE)
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "the GPU near field has no %s softening in %s "
                          "precision yet",
                          tfmm_softening_name(pair->softening),
                          tfmm_precision_name(pair->precision));
  const float eps2 = (float)(pair->eps * pair->eps);
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
                 (const int *)g->near[LIST_LEAF].dev,
                 (const tfmm_gpu_near_item *)g->near[ITEM].dev,
                 (int)sz->nitems,
                 eps2,
                 (float4 *)g->near[OUT].dev,
                 (float4 *)g->near[PARTIAL].dev};
  unsigned blocks = (unsigned)((sz->nitems + WARPS - 1) / WARPS);
  if (blocks > 0) {
    if (potential)
      near_tiled<true><<<blocks, WARPS * 32, 0, s>>>(a);
    else
      near_tiled<false><<<blocks, WARPS * 32, 0, s>>>(a);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  if (sz->nsplits > 0) {
    unsigned split_blocks = (unsigned)((sz->nsplits + WARPS - 1) / WARPS);
    near_combine<<<split_blocks, WARPS * 32, 0, s>>>(
        (const tfmm_gpu_near_split *)g->near[SPLIT].dev, (int)sz->nsplits,
        a.partial, a.out);
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
  return tfmm_gpu_elapsed(g, times, err);
}
