/* The near field's inputs on the device (near_inputs_gpu.h). Built with
 * --fmad=false, as the gpu schedule's other glue: the leaves' origins and
 * the bodies' offsets from them round as the hybrid schedule's do on the
 * CPU (p2p_gpu.c). */
#include "near_inputs_gpu.h"

#include "nearfield/near_frame.h"

#define CUDA_TRY_WHO "near field inputs"
#include "cuda_try.cuh"

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

namespace {

constexpr int THREADS = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

constexpr int PACK_THREADS = 64; /* a block of pack_leaves and exact_leaves */

/* v reduced over the block (PACK_THREADS threads) with op, in shared
 * memory red; every thread gets the result. */
template <class Op>
__device__ double block_reduce(double v, double *red, Op op) {
  red[threadIdx.x] = v;
  __syncthreads();
  for (int s = PACK_THREADS / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      red[threadIdx.x] = op(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  const double out = red[0];
  __syncthreads(); /* red is free again */
  return out;
}

struct op_min {
  __device__ double operator()(double a, double b) const { return fmin(a, b); }
};
struct op_max {
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

/* Leaf k (one block): its origin and first body, its reach and scale
 * (frame[2k], frame[2k + 1]), and its bodies relative to the origin in the
 * precision T of the sums (p2p_gpu.c's pack): in single precision the
 * frame's (near_frame.h, the box of its bodies), in double 0 (the
 * coordinates themselves, differenced once in the kernel: issue 29). The scale
 * takes the n^2 / 2 distances of its bodies (in double) where its reach exceeds
 * K eps, for the single-precision near field. */
template <class T>
__global__ void __launch_bounds__(PACK_THREADS)
    pack_leaves(int64_t nleaves, const int32_t *leaves,
                const int32_t *body_begin, const int32_t *body_end,
                const double *pos, const double *mass, int64_t n, double eps,
                T *body, double *centre, double *frame, int32_t *leaf_begin,
                int32_t *position) {
  __shared__ double red[PACK_THREADS];
  const int64_t k = blockIdx.x;
  const int32_t c = leaves[k];
  double o[3], far = 0;
  for (int d = 0; d < 3; d++) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t b = body_begin[c] + threadIdx.x; b < body_end[c];
         b += blockDim.x) {
      lo = fmin(lo, pos[3 * b + d]);
      hi = fmax(hi, pos[3 * b + d]);
    }
    lo = block_reduce(lo, red, op_min());
    hi = block_reduce(hi, red, op_max());
    o[d] = sizeof(T) == sizeof(double) ? 0.0 : tfmm_near_frame_origin(lo, hi);
    far = fmax(far,
               tfmm_near_frame_reach(lo, hi, tfmm_near_frame_origin(lo, hi)));
  }
  /* far is the block's: every thread takes the same branch. */
  double scale = eps;
  if (sizeof(T) == sizeof(float) && tfmm_near_frame_needs_spacing(far, eps)) {
    double least = INFINITY;
    for (int64_t i = body_begin[c] + threadIdx.x; i < body_end[c];
         i += blockDim.x)
      for (int64_t j = i + 1; j < body_end[c]; j++) {
        const double dx = pos[3 * j] - pos[3 * i],
                     dy = pos[3 * j + 1] - pos[3 * i + 1],
                     dz = pos[3 * j + 2] - pos[3 * i + 2];
        least = fmin(least, dx * dx + dy * dy + dz * dz);
      }
    scale = tfmm_near_frame_scale(eps, block_reduce(least, red, op_min()));
  }
  if (threadIdx.x == 0) {
    centre[3 * k] = o[0];
    centre[3 * k + 1] = o[1];
    centre[3 * k + 2] = o[2];
    frame[2 * k] = far;
    frame[2 * k + 1] = scale;
    leaf_begin[k] = body_begin[c];
    position[c] = (int32_t)k;
    if (k == nleaves - 1)
      leaf_begin[nleaves] = (int32_t)n;
  }
  for (int64_t b = body_begin[c] + threadIdx.x; b < body_end[c];
       b += blockDim.x) {
    body[4 * b] = (T)(pos[3 * b] - o[0]);
    body[4 * b + 1] = (T)(pos[3 * b + 1] - o[1]);
    body[4 * b + 2] = (T)(pos[3 * b + 2] - o[2]);
    body[4 * b + 3] = (T)mass[b];
  }
}

/* Leaf k (one block) again in double where near_frame.h's rule says no
 * float origin serves it (its reach against its scale, or the demand of
 * an exact leaf of its list), written over the float results out (4 a
 * sorted body). The sum: every pair of its list in double, the positions
 * differenced themselves, as tfmm_p2p_cpu_exact. Cost on ordinary inputs:
 * a block reads its list's reaches and scales (16 bytes an entry, from
 * L2); the rare exact leaf then costs its pairs in FP64. */
__global__ void __launch_bounds__(PACK_THREADS)
    exact_leaves(tfmm_near_view v, const double *centre, const double *frame,
                 const double *pos, const double *mass, tfmm_soft_f64 kern,
                 float4 *out) {
  __shared__ double red[PACK_THREADS];
  const int64_t k = blockIdx.x;
  const double ot[3] = {centre[3 * k], centre[3 * k + 1], centre[3 * k + 2]};
  const double rt = frame[2 * k], lt = frame[2 * k + 1];
  double demand = 0; /* its list's exact leaves' (itself included) */
  for (int64_t e = v.offset[k] + threadIdx.x; e < v.offset[k + 1];
       e += blockDim.x) {
    const int32_t s = v.list_leaf[e];
    if (tfmm_near_frame_exact(frame[2 * s + 1], frame[2 * s])) {
      const double os[3] = {centre[3 * s], centre[3 * s + 1],
                            centre[3 * s + 2]};
      demand = fmax(demand, tfmm_near_frame_demand(ot, rt, os, frame[2 * s]));
    }
  }
  demand = block_reduce(demand, red, op_max());
  if (!tfmm_near_frame_exact(lt, rt) && !tfmm_near_frame_exact(lt, demand))
    return; /* the whole block: demand is the same in every thread */
  const int64_t begin = v.leaf_begin[k], end = v.leaf_begin[k + 1];
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    tfmm_acc_f64 a = {0, 0, 0, 0};
    for (int64_t e = v.offset[k]; e < v.offset[k + 1]; e++) {
      const int32_t s = v.list_leaf[e];
      for (int64_t j = v.leaf_begin[s]; j < v.leaf_begin[s + 1]; j++)
        tfmm_acc_add_f64(
            &a, tfmm_soft_pair_f64(&kern, pos[3 * i], pos[3 * i + 1],
                                   pos[3 * i + 2], pos[3 * j], pos[3 * j + 1],
                                   pos[3 * j + 2], mass[j], j == i));
    }
    out[i] = make_float4((float)a.x, (float)a.y, (float)a.z, (float)a.w);
  }
}

/* Entries as leaf positions, and each entry's bodies. */
__global__ void entries_as_leaves(int64_t nentries, const int32_t *index,
                                  const int32_t *position,
                                  const int32_t *body_begin,
                                  const int32_t *body_end, int32_t *list_leaf,
                                  int32_t *entry_bodies) {
  int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (e >= nentries)
    return;
  const int32_t c = index[e];
  list_leaf[e] = position[c];
  entry_bodies[e] = body_end[c] - body_begin[c];
}

/* The source bodies of leaf k's whole list, summed by the warp (every
 * lane gets the sum); the leaf's bodies and chunks in *bodies, *chunks. */
__device__ int64_t list_bodies(const tfmm_near_view &v, int64_t k, int lane,
                               int64_t *bodies, int64_t *chunks) {
  int64_t sum = 0;
  for (int64_t e = v.offset[k] + lane; e < v.offset[k + 1]; e += 32)
    sum += tfmm_near_entry_bodies(&v, e);
  for (int d = 16; d > 0; d /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, d);
  *bodies = v.leaf_begin[k + 1] - v.leaf_begin[k];
  *chunks = tfmm_near_chunks(*bodies);
  return sum;
}

/* Whether no chunk of the leaf has its list cut (near_items.h's rule):
 * its largest chunk times the list's source bodies within the budget, or
 * a list of at most one entry. Then the leaf has one item a chunk. */
__device__ bool uncut(const tfmm_near_view &v, int64_t k, int64_t budget,
                      int64_t sources, int64_t bodies, int64_t chunks) {
  const int64_t largest = (bodies + chunks - 1) / chunks;
  return largest * sources <= budget || v.offset[k + 1] - v.offset[k] <= 1;
}

/* tfmm_near_leaf_items by a whole warp (every lane calls it and gets *n):
 * the same runs, items, splits and slots. The rule is greedy: a run takes
 * entries while its work stays within the budget (at least one entry).
 * The warp reads 32 entries' work at a time, scans it, and finds the
 * first entry that would break the run with a ballot; the run is cut
 * there and the window restarts at that entry. A list of L entries cut
 * into R runs costs about L / 32 + R window steps instead of L dependent
 * loads on one lane. */
__device__ void warp_leaf_items(const tfmm_near_view &v, int64_t k,
                                int64_t budget, const tfmm_near_span *at,
                                tfmm_near_span *n, tfmm_gpu_near_item *item,
                                tfmm_gpu_near_split *split, int lane) {
  const int64_t begin = v.leaf_begin[k];
  const int64_t bodies = v.leaf_begin[k + 1] - begin;
  const int64_t chunks = tfmm_near_chunks(bodies);
  const int64_t e0 = v.offset[k], e1 = v.offset[k + 1];
  *n = tfmm_near_span{0, 0, 0};
  for (int64_t j = 0; j < chunks; j++) {
    int64_t lo, count;
    tfmm_near_chunk(bodies, chunks, j, &lo, &count);
    const int64_t first_item = n->items;
    int64_t run = e0, work = 0, e = e0;
    while (e < e1) {
      const int64_t mine = e + lane;
      const int64_t w =
          mine < e1 ? count * tfmm_near_entry_bodies(&v, mine) : 0;
      int64_t sum = w; /* inclusive scan over the window */
      for (int d = 1; d < 32; d *= 2) {
        const int64_t up = __shfl_up_sync(0xffffffffu, sum, d);
        if (lane >= d)
          sum += up;
      }
      const int64_t before = work + sum - w; /* the run's work before it */
      const unsigned cut = __ballot_sync(0xffffffffu, mine < e1 && before > 0 &&
                                                          before + w > budget);
      if (cut == 0) { /* the whole window joins the run */
        work += __shfl_sync(0xffffffffu, sum, 31);
        e += 32;
        continue;
      }
      const int c = __ffs(cut) - 1; /* the run ends before entry e + c */
      if (item != nullptr && lane == 0)
        item[at->items + n->items] =
            tfmm_near_item_of(k, begin + lo, count, run, e + c);
      n->items++;
      run = e + c;
      work = 0;
      e = e + c;
    }
    /* The last run (also the only one of an empty list). */
    if (item != nullptr && lane == 0)
      item[at->items + n->items] =
          tfmm_near_item_of(k, begin + lo, count, run, e1);
    n->items++;
    const int64_t parts = n->items - first_item;
    if (parts > 1) {
      const int64_t slot = at->slots + n->slots;
      for (int64_t p = lane; item != nullptr && p < parts; p += 32)
        item[at->items + first_item + p].slot = (int32_t)(slot + p * count);
      if (split != nullptr && lane == 0)
        split[at->splits + n->splits] =
            tfmm_near_split_of(begin + lo, count, slot, parts);
      n->splits++;
      n->slots += parts * count;
    }
    __syncwarp();
  }
}

/* One warp a leaf: its items, splits and slots counted (count[k];
 * count[nleaves] = 0 for the scans), and the least and most bodies of a
 * leaf. The common leaf, no list cut, is counted at once; one whose list
 * is cut is walked by the warp (warp_leaf_items). */
__global__ void count_items(tfmm_near_view v, int64_t budget, int64_t *items,
                            int64_t *splits, int64_t *slots,
                            unsigned long long *occupancy) {
  const int64_t k = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (k > v.nleaves)
    return;
  tfmm_near_span n = {0, 0, 0};
  if (k < v.nleaves) {
    int64_t bodies, chunks;
    const int64_t sources = list_bodies(v, k, lane, &bodies, &chunks);
    if (uncut(v, k, budget, sources, bodies, chunks)) {
      n.items = chunks;
    } else {
      const tfmm_near_span zero = {0, 0, 0};
      warp_leaf_items(v, k, budget, &zero, &n, nullptr, nullptr, lane);
    }
    if (lane != 0)
      return;
    atomicMin(&occupancy[0], (unsigned long long)bodies);
    atomicMax(&occupancy[1], (unsigned long long)bodies);
  }
  if (lane == 0) {
    items[k] = n.items;
    splits[k] = n.splits;
    slots[k] = n.slots;
  }
}

/* One warp a leaf: its items (and splits) written where the scans put
 * them; the same items as tfmm_near_leaf_items writes. */
__global__ void write_items(tfmm_near_view v, int64_t budget,
                            const int64_t *items, const int64_t *splits,
                            const int64_t *slots, tfmm_gpu_near_item *item,
                            tfmm_gpu_near_split *split) {
  const int64_t k = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (k >= v.nleaves)
    return;
  int64_t bodies, chunks;
  const int64_t sources = list_bodies(v, k, lane, &bodies, &chunks);
  if (uncut(v, k, budget, sources, bodies, chunks)) {
    const int64_t begin = v.leaf_begin[k];
    for (int64_t j = lane; j < chunks; j += 32) {
      int64_t lo, count;
      tfmm_near_chunk(bodies, chunks, j, &lo, &count);
      item[items[k] + j] =
          tfmm_near_item_of(k, begin + lo, count, v.offset[k], v.offset[k + 1]);
    }
  } else {
    const tfmm_near_span at = {items[k], splits[k], slots[k]};
    tfmm_near_span n;
    warp_leaf_items(v, k, budget, &at, &n, item, split, lane);
  }
}

} // namespace

extern "C" tfmm_status tfmm_near_inputs_gpu_pack(
    const tfmm_near_inputs_tree *t, tfmm_precision precision, double eps,
    const tfmm_near_inputs_packed *o, void *stream, tfmm_error *err) {
  cudaStream_t st = (cudaStream_t)stream;
  if (precision == TFMM_PRECISION_DOUBLE)
    pack_leaves<double><<<(unsigned)t->nleaves, PACK_THREADS, 0, st>>>(
        t->nleaves, t->leaves, t->body_begin, t->body_end, t->pos, t->mass,
        t->n, eps, (double *)o->body, o->centre, o->frame, o->leaf_begin,
        o->position);
  else
    pack_leaves<float><<<(unsigned)t->nleaves, PACK_THREADS, 0, st>>>(
        t->nleaves, t->leaves, t->body_begin, t->body_end, t->pos, t->mass,
        t->n, eps, (float *)o->body, o->centre, o->frame, o->leaf_begin,
        o->position);
  TRY(cudaGetLastError());
  if (t->nentries > 0) {
    entries_as_leaves<<<blocks(t->nentries), THREADS, 0, st>>>(
        t->nentries, t->index, o->position, t->body_begin, t->body_end,
        o->list_leaf, o->entry_bodies);
    TRY(cudaGetLastError());
  }
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_near_inputs_gpu_count(
    void *scratch, size_t *scratch_bytes, const tfmm_near_view *v,
    int64_t budget, int64_t *counts, int64_t *starts,
    unsigned long long *occupancy, void *stream, tfmm_error *err) {
  cudaStream_t st = (cudaStream_t)stream;
  const int64_t m = v->nleaves + 1;
  if (scratch == nullptr) {
    *scratch_bytes = 0;
    TRY(cub::DeviceScan::ExclusiveSum(nullptr, *scratch_bytes, counts, starts,
                                      (int)m, st));
    return TFMM_OK;
  }
  TRY(cudaMemsetAsync(occupancy, 0xff, sizeof *occupancy, st));
  TRY(cudaMemsetAsync(occupancy + 1, 0, sizeof *occupancy, st));
  count_items<<<blocks(32 * m), THREADS, 0, st>>>(
      *v, budget, counts, counts + m, counts + 2 * m, occupancy);
  TRY(cudaGetLastError());
  for (int k = 0; k < 3; k++)
    TRY(cub::DeviceScan::ExclusiveSum(scratch, *scratch_bytes, counts + k * m,
                                      starts + k * m, (int)m, st));
  return TFMM_OK;
}

extern "C" tfmm_status
tfmm_near_inputs_gpu_write(const tfmm_near_view *v, int64_t budget,
                           const int64_t *starts, tfmm_gpu_near_item *item,
                           tfmm_gpu_near_split *split, void *stream,
                           tfmm_error *err) {
  const int64_t m = v->nleaves + 1;
  write_items<<<blocks(32 * v->nleaves), THREADS, 0, (cudaStream_t)stream>>>(
      *v, budget, starts, starts + m, starts + 2 * m, item, split);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

extern "C" tfmm_status
tfmm_near_inputs_gpu_exact(const tfmm_near_inputs_tree *t,
                           const tfmm_near_view *v, const double *centre,
                           const double *frame, const tfmm_pair_params *pair,
                           void *out, void *stream, tfmm_error *err) {
  if (pair->precision == TFMM_PRECISION_DOUBLE || t->nleaves == 0)
    return TFMM_OK;
  const int spline = pair->softening == TFMM_SOFTENING_SPLINE;
  exact_leaves<<<(unsigned)t->nleaves, PACK_THREADS, 0, (cudaStream_t)stream>>>(
      *v, centre, frame, t->pos, t->mass, tfmm_soft_make_f64(spline, pair->eps),
      (float4 *)out);
  TRY(cudaGetLastError());
  return TFMM_OK;
}
