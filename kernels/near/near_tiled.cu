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
 * Precision: positions are stored relative to their own leaf's origin (in
 * single precision the centre of its bodies' box, near_frame.h); a source
 * of leaf S is moved by c_S - c_T (taken in double, then rounded) into the
 * frame of target leaf T, so that every pair is computed at the precision
 * of its own separation, whatever the size of the system. The leaves that
 * no float origin serves are summed again in double after this kernel
 * (near_frame.h's rule).
 *
 * Cost per interaction, by variant (template parameters: precision T,
 * softening kind SPLINE, potential POT; each kernel holds one kind):
 *  - single, Plummer: that of the all-pairs kernel (13 FP32 instructions
 *    and one MUFU.RSQ with the potential, 12 without), plus half a
 *    broadcast LDS.128 (one load feeds a lane's two targets). Limit: the
 *    FP32 pipe (about 2.6e12 to 2.8e12 interactions per second on an H100
 *    SXM).
 *  - single, spline: outside the support Plummer's less the eps^2 add,
 *    plus a compare and the mass select (about 15 FP32 instructions and
 *    one MUFU.RSQ); a pair inside h = 2.8 eps adds a square root (MUFU),
 *    a reciprocal (MUFU.RCP, shell 1/2 <= u < 1) and about 12 FFMA, and
 *    the warp runs both sides of the branch when some of its pairs are
 *    inside. Limit: the FP32 pipe, about 2.3e12 per second when few pairs
 *    fall inside the support.
 *  - double (either kind): positions, sources (32 bytes, two LDS.128 per
 *    source) and sums in FP64: 3 DADD, 3 DFMA, the IEEE square root and
 *    division of 1 / sqrt (MUFU.RSQ64H / RCP64H seeds and about 16 DFMA
 *    of refinement) and 5 DMUL/DFMA: about 30 FP64 instructions. Limit:
 *    the FP64 pipe, half the FP32 rate (64 lanes an SM), 132 x 64 x 1.98
 *    GHz / 30 = about 5.6e11 interactions per second on an H100 SXM.
 * Per source per tile: a 5-step shuffle search for its entry, one
 * LDG.128 (two in double), three adds, two STS. A warp runs at
 * count groups / 64 of its limit on its item (that fraction of its lanes
 * does useful work), less the loop tails of tiles of fewer than TILE
 * sources. Memory: each source body (16 bytes, 32 in double) is read once
 * per target item that lists it, i.e. 16 / count (32 / count) bytes per
 * interaction, mostly from L2. Results: 16 bytes a body in single
 * precision, 32 in double.
 */
#include "gpu_context.h"
#include "pair.cuh"

namespace {

/* One warp a block: items differ in cost, and a block of several would
 * stay resident until its slowest warp finished, its other warps idle. */
constexpr int WARPS = 1;
constexpr int TILE = 64; /* sources in one warp's tile */

/* Registers a thread: in single precision 64, so that an SM (65,536
 * registers) holds 32 warps; in double, whose targets, sources and sums
 * take twice the registers, 128, 16 warps (64 would spill). A register cap
 * (__maxnreg__), not a count of blocks an SM must hold (launch bounds): an
 * SM of sm_86 and sm_87 holds at most 16 blocks and one of sm_89 and
 * sm_120 24, and ptxas refuses a larger minimum for them. */
template <typename T> constexpr int max_registers() {
  return sizeof(T) == 4 ? 64 : 128;
}

template <typename T> struct near_args {
  typedef typename tfmm_prec<T>::vec vec;
  const vec *body;
  const double *centre;
  const int *leaf_begin;
  const int *list_leaf;
  const tfmm_gpu_near_item *item;
  int nitems;
  typename tfmm_prec<T>::soft kern;
  vec *out;     /* results of the items that hold a whole list */
  vec *partial; /* slots of the items of cut lists */
};

/* The source leaves of 32 consecutive list entries, one per lane, loaded
 * together so that the warp pays one memory latency per 32 entries rather
 * than a chain of dependent loads per tile; read back by shuffles. The
 * entries' sources are taken as one concatenation, cut into tiles of TILE
 * whatever the leaves' sizes: a tile often spans several small leaves. */
template <typename T> struct batch {
  int first, count; /* the entry's leaf: bodies [first, first + count) */
  int offset;       /* where its sources start in the concatenation */
  int self;         /* whether it is the target's own leaf */
  T dx, dy, dz;     /* c_S - c_T, taken in double then rounded to T */
  int total;        /* sources in the concatenation (the same in every lane) */
};

/* v of lane j (int, float or double). */
template <typename V> __device__ __forceinline__ V lane_get(V v, int j) {
  return __shfl_sync(0xffffffffu, v, j);
}

template <typename T>
__device__ __forceinline__ batch<T> load_batch(const near_args<T> &a, int e,
                                               int end, int leaf, double cx,
                                               double cy, double cz, int lane) {
  batch<T> b = {0, 0, 0, 0, (T)0, (T)0, (T)0, 0};
  if (e < end) {
    const int s = a.list_leaf[e];
    b.self = s == leaf;
    b.first = a.leaf_begin[s];
    b.count = a.leaf_begin[s + 1] - b.first;
    b.dx = (T)(a.centre[3 * s] - cx);
    b.dy = (T)(a.centre[3 * s + 1] - cy);
    b.dz = (T)(a.centre[3 * s + 2] - cz);
  }
  int upto = b.count; /* inclusive scan of the counts */
  for (int o = 1; o < 32; o <<= 1) {
    int v = __shfl_up_sync(0xffffffffu, upto, o);
    if (lane >= o)
      upto += v;
  }
  b.offset = upto - b.count;
  b.total = lane_get(upto, 31);
  return b;
}

/* Source `pos` of the batch's concatenation, moved into the target leaf's
 * frame (x + c_S - c_T), and its body index; whether its leaf is the
 * target's own. Every lane must call it (it shuffles); lanes whose pos is
 * past the end get a massless body that is never read. */
template <typename T> struct staged {
  typename tfmm_prec<T>::vec v;
  int index, self;
};

template <typename T>
__device__ __forceinline__ staged<T>
fetch(const near_args<T> &a, const batch<T> &b, int pos, int entries) {
  /* The entry holding pos: the last whose offset is <= pos (offsets
   * strictly increase: leaves are never empty). */
  int j = 0;
  for (int step = 16; step > 0; step >>= 1) {
    int o = lane_get(b.offset, (j + step) & 31);
    if (j + step < entries && o <= pos)
      j += step;
  }
  const int first = lane_get(b.first, j), offset = lane_get(b.offset, j);
  const T dx = lane_get(b.dx, j), dy = lane_get(b.dy, j),
          dz = lane_get(b.dz, j);
  staged<T> out = {{(T)0, (T)0, (T)0, (T)0}, -1, lane_get(b.self, j)};
  if (pos < b.total) {
    out.index = first + pos - offset;
    const typename tfmm_prec<T>::vec v = a.body[out.index];
    out.v = {v.x + dx, v.y + dy, v.z + dz, v.w};
  } else {
    out.self = 0;
  }
  return out;
}

template <typename T> struct target {
  T x, y, z;
  int index;
};

/* Sources j = start, start + groups, ... < count of the tile to the two
 * targets, under the kernel of kind SPLINE. SELF: the tile holds sources
 * of the target's own leaf, so compare indices to skip the self pair.
 * A target's running total is in double: the tiles' sums are added
 * without further rounding, as the CPU adds its leaf pairs' (8 DADD a
 * tile, about 1 % of the single-precision work). */
template <typename T, bool SPLINE, bool SELF>
__device__ __forceinline__ void
sum_tile(const typename tfmm_prec<T>::vec *__restrict__ src,
         const int *__restrict__ idx, int count, int start, int groups,
         const target<T> (&t)[2], const typename tfmm_prec<T>::soft &kern,
         tfmm_acc_f64 (&acc)[2]) {
  typename tfmm_prec<T>::acc part[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll 4
  for (int j = start; j < count; j += groups) {
    const typename tfmm_prec<T>::vec s = src[j];
    int i = SELF ? idx[j] : -1;
#pragma unroll
    for (int r = 0; r < 2; r++)
      tfmm_add(part[r], tfmm_pair<SPLINE>(kern, t[r].x, t[r].y, t[r].z, s,
                                          SELF && i == t[r].index));
  }
  /* Two-level sum: the tile in T, then the running total. */
#pragma unroll
  for (int r = 0; r < 2; r++)
    tfmm_add(acc[r], part[r]);
}

template <typename T, bool SPLINE, bool POT>
__global__ void __maxnreg__(max_registers<T>()) near_tiled(near_args<T> a) {
  typedef typename tfmm_prec<T>::vec vec;
  __shared__ vec tile[WARPS][2][TILE];
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
  target<T> t[2];
#pragma unroll
  for (int r = 0; r < 2; r++) {
    int k = slot + r * width;
    vec v = a.body[k < item.count ? item.first + k : item.first];
    t[r] = target<T>{v.x, v.y, v.z, k < item.count ? item.first + k : -1};
  }
  const double cx = a.centre[3 * leaf], cy = a.centre[3 * leaf + 1],
               cz = a.centre[3 * leaf + 2];

  tfmm_acc_f64 acc[2] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  const int end = item.entry_end;
  for (int base = item.entry_begin; base < end; base += 32) {
    const batch<T> b = load_batch(a, base + lane, end, leaf, cx, cy, cz, lane);
    const int entries = min(32, end - base);
    /* Registers hold the next tile while shared memory serves this one. */
    staged<T> r0 = fetch(a, b, lane, entries),
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
        sum_tile<T, SPLINE, true>(tile[warp][k], tile_index[warp][k], count,
                                  start, groups, t, a.kern, acc);
      else
        sum_tile<T, SPLINE, false>(tile[warp][k], tile_index[warp][k], count,
                                   start, groups, t, a.kern, acc);
    }
    __syncwarp(); /* before the next batch reuses the buffers */
  }

  /* The lane groups' partial sums, added to group 0's in group order. */
  const int index[2] = {t[0].index, t[1].index};
#pragma unroll
  for (int r = 0; r < 2; r++) {
    const tfmm_acc_f64 mine = acc[r];
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
        const vec v = {(T)acc[r].x, (T)acc[r].y, (T)acc[r].z,
                       POT ? (T)acc[r].w : (T)0};
        if (item.slot < 0)
          a.out[index[r]] = v;
        else
          a.partial[item.slot + index[r] - item.first] = v;
      }
}

/* The cut lists: each body's partial sums added in the order of the parts,
 * one warp per split, two bodies per lane. */
template <typename V>
__global__ void __launch_bounds__(WARPS * 32)
    near_combine(const tfmm_gpu_near_split *__restrict__ split, int nsplits,
                 const V *__restrict__ partial, V *__restrict__ out) {
  const int it = blockIdx.x * WARPS + (threadIdx.x >> 5);
  if (it >= nsplits)
    return;
  const tfmm_gpu_near_split sp = split[it];
  for (int k = threadIdx.x & 31; k < sp.count; k += 32) {
    V sum = partial[sp.slot + k];
    for (int p = 1; p < sp.parts; p++)
      tfmm_add(sum, partial[sp.slot + p * sp.count + k]);
    out[sp.first + k] = sum;
  }
}

/* The near field's arrays: those uploaded, then the results and the
 * partial sums (the kernels' scratch, on the device only). Array k is
 * device slot TFMM_SLOTS_NEAR + k of the context's arena and, but for the
 * partial sums, pinned slot TFMM_PINNED_NEAR + k. */
enum { BODY, CENTRE, LEAF_BEGIN, LIST_LEAF, ITEM, SPLIT, OUT, PARTIAL };
static_assert((int)PARTIAL < (int)TFMM_SLOTS_NEAR_COUNT &&
                  (int)OUT < (int)TFMM_PINNED_NEAR_COUNT,
              "the near field's arrays fit its slots of the arena");

size_t bytes_of(int which, const tfmm_gpu_near_size *sz) {
  /* A body, a result or a partial sum: four values of the precision. */
  const size_t four = sz->precision == TFMM_PRECISION_DOUBLE
                          ? sizeof(tfmm_vec4_f64)
                          : sizeof(float4);
  switch (which) {
  case BODY:
  case OUT:
    return sz->n * four;
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
    return (size_t)sz->nslots * four;
  }
}

/* The near field's kernels in precision T with the kernel of kind SPLINE,
 * then the cut lists' sums, on stream s, over device arrays d with the
 * partial sums at `partial`. */
template <typename T, bool SPLINE>
tfmm_status launch_kernels(const tfmm_gpu_near_size *sz,
                           const tfmm_gpu_near_device *d, void *partial,
                           double eps, int potential, cudaStream_t s,
                           tfmm_error *err) {
  typedef typename tfmm_prec<T>::vec vec;
  near_args<T> a = {(const vec *)d->body,
                    d->centre,
                    (const int *)d->leaf_begin,
                    (const int *)d->list_leaf,
                    d->item,
                    (int)sz->nitems,
                    tfmm_prec<T>::make(SPLINE, eps),
                    (vec *)d->out,
                    (vec *)partial};
  unsigned blocks = (unsigned)((sz->nitems + WARPS - 1) / WARPS);
  if (blocks > 0) {
    if (potential)
      near_tiled<T, SPLINE, true><<<blocks, WARPS * 32, 0, s>>>(a);
    else
      near_tiled<T, SPLINE, false><<<blocks, WARPS * 32, 0, s>>>(a);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  if (sz->nsplits > 0) {
    unsigned split_blocks = (unsigned)((sz->nsplits + WARPS - 1) / WARPS);
    near_combine<vec><<<split_blocks, WARPS * 32, 0, s>>>(
        d->split, (int)sz->nsplits, a.partial, a.out);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  return TFMM_OK;
}

/* launch_kernels in the pair's precision and softening. */
tfmm_status launch_for(const tfmm_gpu_near_size *sz,
                       const tfmm_gpu_near_device *d, void *partial,
                       const tfmm_pair_params *pair, int potential,
                       cudaStream_t s, tfmm_error *err) {
  const int spline = pair->softening == TFMM_SOFTENING_SPLINE;
  const double eps = pair->eps;
  if (pair->precision == TFMM_PRECISION_DOUBLE)
    return spline ? launch_kernels<double, true>(sz, d, partial, eps, potential,
                                                 s, err)
                  : launch_kernels<double, false>(sz, d, partial, eps,
                                                  potential, s, err);
  return spline ? launch_kernels<float, true>(sz, d, partial, eps, potential, s,
                                              err)
                : launch_kernels<float, false>(sz, d, partial, eps, potential,
                                               s, err);
}

tfmm_device_buffer &device_half(tfmm_gpu *g, int k) {
  return g->slot[TFMM_SLOTS_NEAR + k];
}

tfmm_device_buffer &pinned_half(tfmm_gpu *g, int k) {
  return g->pinned[TFMM_PINNED_NEAR + k];
}

/* Whether arrays first to last hold an evaluation of size sz, on the
 * device and pinned. */
tfmm_status check_room(tfmm_gpu *g, const tfmm_gpu_near_size *sz, int first,
                       int last, tfmm_error *err) {
  for (int k = first; k <= last; k++)
    if (bytes_of(k, sz) > device_half(g, k).bytes ||
        bytes_of(k, sz) > pinned_half(g, k).bytes)
      return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                            "near field: array %d needs %zu bytes, more than "
                            "tfmm_gpu_near_reserve made room for",
                            k, bytes_of(k, sz));
  return TFMM_OK;
}

} // namespace

/* Slack 4 throughout: slowly growing inputs reallocate rarely. The partial
 * sums are tfmm_gpu_near_device_run's scratch, sized by its query. */
extern "C" tfmm_status tfmm_gpu_near_reserve(tfmm_gpu *g,
                                             const tfmm_gpu_near_size *sz,
                                             tfmm_gpu_near_host *host,
                                             tfmm_error *err) {
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  for (int k = BODY; k <= OUT; k++) {
    tfmm_status st = tfmm_arena_reserve(g, TFMM_SLOTS_NEAR + k, bytes_of(k, sz),
                                        4, NULL, err);
    if (st == TFMM_OK)
      st = tfmm_arena_pinned(g, TFMM_PINNED_NEAR + k, bytes_of(k, sz), 4, NULL,
                             err);
    if (st != TFMM_OK)
      return st; /* what was allocated stays owned by g */
  }
  size_t scratch = 0;
  tfmm_status st =
      tfmm_gpu_near_device_run(NULL, &scratch, sz, NULL, NULL, 0, NULL, err);
  if (st == TFMM_OK)
    st =
        tfmm_arena_reserve(g, TFMM_SLOTS_NEAR + PARTIAL, scratch, 4, NULL, err);
  if (st != TFMM_OK)
    return st;
  host->precision = sz->precision;
  host->body = pinned_half(g, BODY).p;
  host->centre = (double *)pinned_half(g, CENTRE).p;
  host->leaf_begin = (int32_t *)pinned_half(g, LEAF_BEGIN).p;
  host->list_leaf = (int32_t *)pinned_half(g, LIST_LEAF).p;
  host->item = (tfmm_gpu_near_item *)pinned_half(g, ITEM).p;
  host->split = (tfmm_gpu_near_split *)pinned_half(g, SPLIT).p;
  host->out = pinned_half(g, OUT).p;
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_near_upload(tfmm_gpu *g,
                                            const tfmm_gpu_near_size *sz,
                                            tfmm_error *err) {
  tfmm_status st = check_room(g, sz, BODY, SPLIT, err);
  if (st != TFMM_OK)
    return st;
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = g->streams[TFMM_STREAM_NEAR];
  TFMM_CUDA_TRY(cudaEventRecord(g->events[0], s), err);
  for (int k = BODY; k < OUT; k++)
    TFMM_CUDA_TRY(cudaMemcpyAsync(device_half(g, k).p, pinned_half(g, k).p,
                                  bytes_of(k, sz), cudaMemcpyHostToDevice, s),
                  err);
  TFMM_CUDA_TRY(cudaEventRecord(g->events[1], s), err);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_gpu_near_run(tfmm_gpu *g,
                                         const tfmm_gpu_near_size *sz,
                                         const tfmm_pair_params *pair,
                                         int potential, tfmm_error *err) {
  if (pair->precision != sz->precision)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "the near field was reserved in %s precision, "
                          "run in %s",
                          tfmm_precision_name(sz->precision),
                          tfmm_precision_name(pair->precision));
  tfmm_status st = check_room(g, sz, BODY, OUT, err);
  if (st != TFMM_OK)
    return st;
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  const tfmm_gpu_near_device d = {
      device_half(g, BODY).p,
      (const double *)device_half(g, CENTRE).p,
      (const int32_t *)device_half(g, LEAF_BEGIN).p,
      (const int32_t *)device_half(g, LIST_LEAF).p,
      (const tfmm_gpu_near_item *)device_half(g, ITEM).p,
      (const tfmm_gpu_near_split *)device_half(g, SPLIT).p,
      device_half(g, OUT).p};
  tfmm_device_buffer &scratch = device_half(g, PARTIAL);
  if (scratch.p == nullptr) /* a NULL workspace would only ask its size */
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "near field: run before tfmm_gpu_near_reserve");
  size_t scratch_bytes = scratch.bytes;
  return tfmm_gpu_near_device_run(scratch.p, &scratch_bytes, sz, &d, pair,
                                  potential, g->streams[TFMM_STREAM_NEAR], err);
}

extern "C" tfmm_status tfmm_gpu_near_download(tfmm_gpu *g,
                                              const tfmm_gpu_near_size *sz,
                                              tfmm_error *err) {
  tfmm_status st = check_room(g, sz, OUT, OUT, err);
  if (st != TFMM_OK)
    return st;
  tfmm_device_scope scope(g->device);
  TFMM_CUDA_TRY(scope.status, err);
  cudaStream_t s = g->streams[TFMM_STREAM_NEAR];
  TFMM_CUDA_TRY(cudaEventRecord(g->events[2], s), err);
  TFMM_CUDA_TRY(cudaMemcpyAsync(pinned_half(g, OUT).p, device_half(g, OUT).p,
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

extern "C" tfmm_status tfmm_gpu_near_device_run(
    void *workspace, size_t *workspace_bytes, const tfmm_gpu_near_size *sz,
    const tfmm_gpu_near_device *arrays, const tfmm_pair_params *pair,
    int potential, void *stream, tfmm_error *err) {
  if (workspace_bytes == NULL || sz == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "near field on device arrays: %s is NULL",
                          sz == NULL ? "the size" : "workspace_bytes");
  const size_t need = bytes_of(PARTIAL, sz);
  if (workspace == NULL) { /* the size query */
    *workspace_bytes = need;
    return TFMM_OK;
  }
  if (*workspace_bytes < need)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "near field on device arrays: a workspace of %zu "
                          "bytes, %zu needed",
                          *workspace_bytes, need);
  if (arrays == NULL || pair == NULL || pair->precision != sz->precision)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "near field on device arrays: %s",
                          arrays == NULL || pair == NULL
                              ? "no arrays or pair parameters"
                              : "the pair's precision is not the size's");
  return launch_for(sz, arrays, workspace, pair, potential,
                    (cudaStream_t)stream, err);
}
