/* The gpu schedule's evaluation (pipeline_gpu.h): the stages' glue on the
 * device. Built with --fmad=false: the bodies' offsets from their leaf and
 * the final sums round as the hybrid schedule's do on the CPU. */
#include "pipeline_gpu.h"

#define CUDA_TRY_WHO "gpu schedule"
#include "cuda_try.cuh"

#include "device_buffer.cuh"
#include "farfield_gpu.h"
#include "gpu.h"
#include "nearfield/near_items.h"
#include "upward_gpu.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <new>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int THREADS = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

/* ---- Checks ----------------------------------------------------------------
 */

/* The lowest index of a body with a position not finite (first) or a mass
 * not finite and positive (second), as tfmm_bodies_check tests. */
__global__ void first_invalid(int64_t n, const double *pos, const double *mass,
                              unsigned long long *bad) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (!isfinite(pos[3 * i]) || !isfinite(pos[3 * i + 1]) ||
      !isfinite(pos[3 * i + 2]))
    atomicMin(&bad[0], (unsigned long long)i);
  if (!isfinite(mass[i]) || !(mass[i] > 0))
    atomicMin(&bad[1], (unsigned long long)i);
}

/* How far back in a run of equal keys a body looks for one at its point
 * (a run longer than this without a match is left to the CPU's search). */
constexpr int64_t RUN_LOOKBACK = 64;

/* Sorted bodies that may share a point with another (counted): one whose
 * key equals its predecessor's and whose position equals that of one of
 * the RUN_LOOKBACK bodies before it in the run, or that lies deeper in a
 * run than that. Bodies at one point share a key, so a run of equal keys
 * without such a body has none at one point: the count is then 0 and the
 * CPU's search (tfmm_octree_find_coincident, on a copy of the tree) is
 * skipped. At 64M Plummer bodies a few keys are shared by bodies apart,
 * and that copy took 3 s. */
__global__ void maybe_coincident(int64_t n, const uint64_t *keys,
                                 const double *pos, unsigned long long *count) {
  const int64_t k = 1 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= n || keys[k] != keys[k - 1])
    return;
  const double x = pos[3 * k], y = pos[3 * k + 1], z = pos[3 * k + 2];
  for (int64_t j = k - 1; j >= 0 && keys[j] == keys[k]; j--) {
    if (k - j > RUN_LOOKBACK ||
        (pos[3 * j] == x && pos[3 * j + 1] == y && pos[3 * j + 2] == z)) {
      atomicAdd(count, 1ull);
      return;
    }
  }
}

/* ---- The near field's inputs ----------------------------------------------
 */

/* Leaf k (one block): its centre and first body, and its bodies relative
 * to the centre in the precision T of the sums (p2p_gpu.c's pack). */
template <class T>
__global__ void
pack_leaves(int64_t nleaves, const int32_t *leaves, const double *center,
            const int32_t *body_begin, const int32_t *body_end,
            const double *pos, const double *mass, int64_t n, T *body,
            double *centre, int32_t *leaf_begin, int32_t *position) {
  const int64_t k = blockIdx.x;
  const int32_t c = leaves[k];
  const double cx = center[3 * (int64_t)c], cy = center[3 * (int64_t)c + 1],
               cz = center[3 * (int64_t)c + 2];
  if (threadIdx.x == 0) {
    centre[3 * k] = cx;
    centre[3 * k + 1] = cy;
    centre[3 * k + 2] = cz;
    leaf_begin[k] = body_begin[c];
    position[c] = (int32_t)k;
    if (k == nleaves - 1)
      leaf_begin[nleaves] = (int32_t)n;
  }
  for (int64_t b = body_begin[c] + threadIdx.x; b < body_end[c];
       b += blockDim.x) {
    body[4 * b] = (T)(pos[3 * b] - cx);
    body[4 * b + 1] = (T)(pos[3 * b + 1] - cy);
    body[4 * b + 2] = (T)(pos[3 * b + 2] - cz);
    body[4 * b + 3] = (T)mass[b];
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

/* ---- The targets ----------------------------------------------------------
 */

/* Whether body i (input order) is a target. */
struct IsTarget {
  const unsigned char *active;
  __host__ __device__ int64_t operator()(int64_t i) const {
    return active[i] != 0;
  }
};

/* Whether sorted body k is a target: the mask through the permutation. */
struct SortedTarget {
  const unsigned char *active;
  const int32_t *order;
  __host__ __device__ int32_t operator()(int64_t k) const {
    return active[order[k]] != 0;
  }
};

/* Whether cell c holds a target. */
struct CellHolds {
  const int32_t *count;
  __host__ __device__ int64_t operator()(int64_t c) const {
    return count[c] > 0;
  }
};

using HoldsTarget =
    thrust::transform_iterator<CellHolds, thrust::counting_iterator<int64_t>>;
using TargetIter =
    thrust::transform_iterator<IsTarget, thrust::counting_iterator<int64_t>>;
using SortedTargetIter =
    thrust::transform_iterator<SortedTarget,
                               thrust::counting_iterator<int64_t>>;

/* count[c] = the targets among cell c's bodies, from below[k] = those
 * among sorted bodies [0, k) (a cell's bodies are a range of them). */
__global__ void targets_per_cell(int64_t ncells, const int32_t *body_begin,
                                 const int32_t *body_end, const int32_t *below,
                                 int32_t *count) {
  int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (c < ncells)
    count[c] = below[body_end[c]] - below[body_begin[c]];
}

/* ---- The sum ------------------------------------------------------------ */

/* The lowest input index whose sums are not finite goes to bad[0]; with
 * to_caller, the one whose results in the caller's units are not (the
 * sums were) to bad[1]. */
template <class T>
__global__ void
combine(int64_t n, const int32_t *order, const unsigned char *active, double G,
        const double *far_phi, const double *far_g, const T *near, double *acc,
        double *pot, tfmm_pipeline_gpu_output out, unsigned long long *bad) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  const int64_t i = order[k];
  if (active != nullptr && !active[i])
    return; /* not a target: its entries are the caller's */
  int finite = 1, beyond = 0;
  for (int d = 0; d < 3; d++) {
    double a = G * (far_g[3 * k + d] + (double)near[4 * k + d]);
    finite &= isfinite(a);
    if (out.to_caller) {
      a = out.caller_G * ldexp(a, out.acc_exp);
      beyond |= !isfinite(a);
    }
    acc[3 * i + d] = a;
  }
  if (pot != nullptr) {
    double p = G * ((double)near[4 * k + 3] - far_phi[k]);
    finite &= isfinite(p);
    if (out.to_caller) {
      p = out.caller_G * ldexp(p, out.pot_exp);
      beyond |= !isfinite(p);
    }
    pot[i] = p;
  }
  if (!finite)
    atomicMin(&bad[0], (unsigned long long)i);
  else if (beyond)
    atomicMin(&bad[1], (unsigned long long)i);
}

/* Bounds of the bodies: lowest and highest corners, largest mass. */
struct Bounds {
  double lo[3], hi[3], heaviest;
};

struct BodyBounds {
  const double *pos, *mass;
  __host__ __device__ Bounds operator()(int64_t i) const {
    Bounds b;
    for (int d = 0; d < 3; d++)
      b.lo[d] = b.hi[d] = pos[3 * i + d];
    b.heaviest = mass[i];
    return b;
  }
};

/* Order-free: the minimum and maximum of finite values (units.c's). */
struct MergeBounds {
  __host__ __device__ Bounds operator()(const Bounds &a,
                                        const Bounds &b) const {
    Bounds r;
    for (int d = 0; d < 3; d++) {
      r.lo[d] = b.lo[d] < a.lo[d] ? b.lo[d] : a.lo[d];
      r.hi[d] = b.hi[d] > a.hi[d] ? b.hi[d] : a.hi[d];
    }
    r.heaviest = b.heaviest > a.heaviest ? b.heaviest : a.heaviest;
    return r;
  }
};

using BoundsIter =
    thrust::transform_iterator<BodyBounds, thrust::counting_iterator<int64_t>>;

/* pos 2^-k and mass 2^-j, exactly (units.c's tfmm_units_scale). */
__global__ void scale_bodies(int64_t n, const double *pos, const double *mass,
                             int k, int j, double *out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  for (int d = 0; d < 3; d++)
    out[3 * i + d] = ldexp(pos[3 * i + d], -k);
  out[3 * n + i] = ldexp(mass[i], -j);
}

} // namespace

/* ---- The state ------------------------------------------------------------
 */

/* Memory. The far field's phi (n) and grad (3n) go where the bodies were
 * uploaded (the tree's input, pl->base.d_bodies, 4n doubles, dead once the
 * tree is built; the caller's device bodies are scaled into it). The
 * stages' scratch is taken from the memory the traversal lends once its
 * lists are made (tfmm_traverse_gpu_spare): the near field's results
 * first, which live until finish, then each stage's own scratch after
 * them, the stages sharing that memory since they run one after the other
 * on the stream (near: its bodies, leaves, entries and counts; far: L and
 * the scaled multipoles; finish: the results). What does not fit is
 * given a buffer of its own below. */
struct tfmm_pipeline_gpu_state {
  enum {
    BODY, /* the near field's */
    CENTRE,
    LEAF_BEGIN,
    POSITION,
    LIST_LEAF,
    ENTRY_BODIES,
    ITEMS, /* the counts, then their scans: three arrays of nleaves + 1 */
    ITEM,
    SPLIT,
    NEAR_OUT,
    NEAR_WORK,
    SCAN_TEMP,
    FAR_L,
    FAR_MS,     /* the float M2L's scaled multipoles */
    RESULT,     /* acc (3n), then pot (n): the device's outputs */
    BOUNDS,     /* the caller's device bodies' bounds */
    ACTIVE,     /* the targets' mask uploaded from the host (n bytes) */
    BELOW,      /* the targets among sorted bodies [0, k), k = 0..n */
    TARGETS,    /* the targets of each cell */
    TARGET_SUM, /* their count */
    CHECKS,     /* two first-invalid indices, equal keys, leaf min, max */
    BUFFERS
  };
  tfmm_device_buffer buf[BUFFERS];
  unsigned long long *host = nullptr; /* pinned: CHECKS copied back */
  enum { CHECK_VALUES = 5 };
  int64_t *host_totals = nullptr; /* pinned: the item totals */
  enum { EV_START, EV_TREE, EV_UPWARD, EV_LISTS, EV_NEAR, EV_FAR, EV_END, EVS };
  cudaEvent_t ev[EVS] = {};
  int recorded[EVS] = {};
  double upload_ms = 0;
  tfmm_gpu_near_size near_size{};
  tfmm_precision precision = TFMM_PRECISION_SINGLE;
  int potential = 0;
  void *near_out = nullptr; /* the near field's results (4n) */
  size_t near_out_bytes = 0;
  uint64_t near_run = 0; /* the traversal run the near field followed */
  const unsigned char *active = nullptr; /* the targets' mask on the
                                            device, or NULL: every body */
  int64_t target_cells = 0; /* cells holding a target (with active) */
};

namespace {

using State = tfmm_pipeline_gpu_state;

template <class T> T *at(State *s, int k) { return (T *)s->buf[k].p; }

tfmm_status reserve(State *s, int k, size_t bytes, tfmm_error *err) {
  TRY(tfmm_device_buffer_reserve(&s->buf[k], bytes > 0 ? bytes : 1));
  return TFMM_OK;
}

cudaStream_t stream_of(tfmm_pipeline_gpu *pl) {
  return (cudaStream_t)pl->base.stream;
}

tfmm_status mark(tfmm_pipeline_gpu *pl, int k, tfmm_error *err) {
  State *s = pl->state;
  TRY(cudaEventRecord(s->ev[k], stream_of(pl)));
  s->recorded[k] = 1;
  return TFMM_OK;
}

/* The traversal's spare memory, handed out first fit in 256-byte steps. */
struct Arena {
  tfmm_traverse_gpu_region r[TFMM_TRAVERSE_GPU_SPARES];
  size_t used[TFMM_TRAVERSE_GPU_SPARES];
  int count;
};

/* Room for `bytes` from the arena, else in buffer k of the state. */
template <class T>
tfmm_status take(State *s, Arena *a, int k, size_t bytes, T **out,
                 tfmm_error *err) {
  const size_t need = bytes > 0 ? (bytes + 255) / 256 * 256 : 256;
  for (int i = 0; i < a->count; i++)
    if (a->r[i].bytes - a->used[i] >= need) {
      *out = (T *)((char *)a->r[i].p + a->used[i]);
      a->used[i] += need;
      return TFMM_OK;
    }
  CHECK(reserve(s, k, bytes, err));
  *out = (T *)s->buf[k].p;
  return TFMM_OK;
}

/* The arena of a stage: the traversal's spare memory after the near
 * field's results (s->near_out_bytes, placed there the same way by every
 * stage), whose place goes to *near_out. */
tfmm_status stage_arena(tfmm_pipeline_gpu *pl, Arena *a, void **near_out,
                        tfmm_error *err) {
  *a = Arena{};
  a->count = tfmm_traverse_gpu_spare(&pl->lists, a->r);
  return take(pl->state, a, State::NEAR_OUT, pl->state->near_out_bytes,
              near_out, err);
}

tfmm_status make_state(tfmm_pipeline_gpu *pl, tfmm_error *err) {
  if (pl->state != nullptr)
    return TFMM_OK;
  State *s = new (std::nothrow) State();
  if (s == nullptr)
    return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                          "no memory for the gpu schedule's state");
  pl->state = s;
  TRY(cudaMallocHost((void **)&s->host, State::CHECK_VALUES * sizeof *s->host));
  TRY(cudaMallocHost((void **)&s->host_totals, 3 * sizeof *s->host_totals));
  for (int k = 0; k < State::EVS; k++)
    TRY(cudaEventCreate(&s->ev[k]));
  return TFMM_OK;
}

/* Runs f(pl, err) with the pipeline's device current. */
template <class F>
tfmm_status entered(tfmm_pipeline_gpu *pl, int device, tfmm_error *err, F f) {
  int previous = -1;
  tfmm_status st =
      tfmm_tree_gpu_hybrid_enter(&pl->base, device, &previous, err);
  if (st == TFMM_OK)
    st = make_state(pl, err);
  if (st == TFMM_OK)
    st = f();
  return tfmm_tree_gpu_hybrid_leave(previous, st);
}

tfmm_status built(tfmm_pipeline_gpu *pl, tfmm_error *err) {
  if (pl == nullptr || pl->base.stream == nullptr || pl->state == nullptr ||
      pl->base.tree.ncells < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no tree built");
  return TFMM_OK;
}

tfmm_status check_device_bodies(tfmm_pipeline_gpu *pl, size_t n,
                                const double *pos, const double *mass,
                                tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  CHECK(reserve(s, State::CHECKS,
                State::CHECK_VALUES * sizeof(unsigned long long), err));
  unsigned long long *bad = at<unsigned long long>(s, State::CHECKS);
  TRY(cudaMemsetAsync(bad, 0xff, 2 * sizeof *bad, st));
  first_invalid<<<blocks((int64_t)n), THREADS, 0, st>>>((int64_t)n, pos, mass,
                                                        bad);
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(s->host, bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                      st));
  TRY(cudaStreamSynchronize(st));
  const unsigned long long first =
      s->host[0] < s->host[1] ? s->host[0] : s->host[1];
  if (first == ~0ull)
    return TFMM_OK;
  double x[4];
  TRY(cudaMemcpy(x, pos + 3 * first, 3 * sizeof(double),
                 cudaMemcpyDeviceToHost));
  TRY(cudaMemcpy(x + 3, mass + first, sizeof(double), cudaMemcpyDeviceToHost));
  if (first == s->host[0])
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "body %llu: position (%g, %g, %g) is not finite",
                          first, x[0], x[1], x[2]);
  return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "body %llu: mass %g is not finite and positive", first,
                        x[3]);
}

/* Room for the cells of a tree of n bodies, leaves of L, as usual: 8
 * n / (L + 1) (a Plummer sphere has about 4, a uniform cube about 2.3),
 * or 5/4 of the last tree's when it had as many bodies; 0 (the bound that
 * always holds, tree_gpu.h) when that is no smaller. */
int64_t cell_bound(int64_t n, int leaf, int max_depth) {
  const int64_t split = n / ((int64_t)leaf + 1);
  const int64_t level = 8 * split < n ? 8 * split : n;
  return 1 + (int64_t)max_depth * level;
}

int64_t usual_cells(const tfmm_pipeline_gpu *pl, int64_t n, int leaf,
                    int max_depth) {
  const int64_t split = n / ((int64_t)leaf + 1);
  const int64_t bound = cell_bound(n, leaf, max_depth);
  int64_t usual = 1 + 8 * (split + 1) + 8 * TFMM_TREE_GPU_LEVELS;
  if (pl->last_n == n && pl->last_cells + pl->last_cells / 4 > usual)
    usual = pl->last_cells + pl->last_cells / 4;
  return usual < bound ? usual : 0;
}

tfmm_status tree(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                 const double *mass, int on_device, void *after,
                 const tfmm_tree_gpu_params *params, tfmm_error *err) {
  State *s = pl->state;
  for (int k = 0; k < State::EVS; k++)
    s->recorded[k] = 0;
  s->active = nullptr; /* every body, unless targets says otherwise */
  if (on_device)       /* the caller's work on the bodies comes first */
    TRY(cudaStreamSynchronize((cudaStream_t)after));
  CHECK(mark(pl, State::EV_START, err));
  tfmm_tree_gpu_hybrid_times times;
  memset(&pl->base.tree, 0, sizeof pl->base.tree);
  tfmm_tree_gpu_params p = *params;
  if (p.max_cells == 0)
    p.max_cells = usual_cells(pl, (int64_t)n, p.leaf_size, p.max_depth);
  tfmm_status st = tfmm_tree_gpu_hybrid_build(
      &pl->base, pl->base.device, n, pos, mass, &p, nullptr, &times, err);
  while (st == TFMM_ERR_NO_MEMORY && p.max_cells != params->max_cells) {
    /* More cells than that room (or no memory for them): four times the
     * room, then the bound, so that the workspace (kept) grows no further
     * than the tree needs; the bound is 250 bytes a body at leaf 64. */
    const int64_t bound = cell_bound((int64_t)n, p.leaf_size, p.max_depth);
    p.max_cells = p.max_cells < bound / 4 ? 4 * p.max_cells : params->max_cells;
    memset(&pl->base.tree, 0, sizeof pl->base.tree);
    st = tfmm_tree_gpu_hybrid_build(&pl->base, pl->base.device, n, pos, mass,
                                    &p, nullptr, &times, err);
  }
  CHECK(st);
  pl->last_n = (int64_t)n;
  pl->last_cells = pl->base.tree.ncells;
  s->upload_ms = 1e3 * times.upload;
  return mark(pl, State::EV_TREE, err);
}

tfmm_status near(tfmm_pipeline_gpu *pl, const tfmm_pair_params *pair,
                 int potential, int sm_count, tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  const tfmm_traverse_gpu_lists *l = &pl->lists.lists;
  cudaStream_t st = stream_of(pl);
  const int64_t n = (int64_t)t->n, nleaves = t->nleaves;
  const int64_t nentries = l->near_count;
  const int f64 = pair->precision == TFMM_PRECISION_DOUBLE;
  const size_t real = f64 ? sizeof(double) : sizeof(float);
  s->near_out_bytes = 4 * n * real;
  s->near_run = pl->lists.runs;
  Arena a;
  CHECK(stage_arena(pl, &a, &s->near_out, err));
  void *body = nullptr;
  double *centre = nullptr;
  int32_t *leaf_begin = nullptr, *position = nullptr, *list_leaf = nullptr,
          *entry_bodies = nullptr;
  int64_t *counts = nullptr;
  CHECK(take(s, &a, State::BODY, 4 * n * real, &body, err));
  CHECK(take(s, &a, State::CENTRE, 3 * nleaves * sizeof(double), &centre, err));
  CHECK(take(s, &a, State::LEAF_BEGIN, (nleaves + 1) * sizeof(int32_t),
             &leaf_begin, err));
  CHECK(take(s, &a, State::POSITION, t->ncells * sizeof(int32_t), &position,
             err));
  CHECK(take(s, &a, State::LIST_LEAF, nentries * sizeof(int32_t), &list_leaf,
             err));
  CHECK(take(s, &a, State::ENTRY_BODIES, nentries * sizeof(int32_t),
             &entry_bodies, err));
  CHECK(take(s, &a, State::ITEMS, 6 * (nleaves + 1) * sizeof(int64_t), &counts,
             err));
  const double *d_pos = (const double *)pl->base.tree.d_pos;
  const double *d_mass = (const double *)pl->base.tree.d_mass;
  if (f64)
    pack_leaves<double><<<(unsigned)nleaves, 64, 0, st>>>(
        nleaves, t->d_leaves, t->d_center, t->d_body_begin, t->d_body_end,
        d_pos, d_mass, n, (double *)body, centre, leaf_begin, position);
  else
    pack_leaves<float><<<(unsigned)nleaves, 64, 0, st>>>(
        nleaves, t->d_leaves, t->d_center, t->d_body_begin, t->d_body_end,
        d_pos, d_mass, n, (float *)body, centre, leaf_begin, position);
  TRY(cudaGetLastError());
  if (nentries > 0) {
    entries_as_leaves<<<blocks(nentries), THREADS, 0, st>>>(
        nentries, l->near.index, position, t->d_body_begin, t->d_body_end,
        list_leaf, entry_bodies);
    TRY(cudaGetLastError());
  }
  const tfmm_near_view view = {nleaves, leaf_begin, l->near.offset, list_leaf,
                               entry_bodies};
  const int64_t budget = tfmm_near_budget(l->near_interactions, sm_count);
  int64_t *starts = counts + 3 * (nleaves + 1);
  const int64_t m = nleaves + 1;
  CHECK(reserve(s, State::CHECKS,
                State::CHECK_VALUES * sizeof(unsigned long long), err));
  unsigned long long *occupancy = at<unsigned long long>(s, State::CHECKS) + 3;
  TRY(cudaMemsetAsync(occupancy, 0xff, sizeof *occupancy, st));
  TRY(cudaMemsetAsync(occupancy + 1, 0, sizeof *occupancy, st));
  count_items<<<blocks(32 * m), THREADS, 0, st>>>(
      view, budget, counts, counts + m, counts + 2 * m, occupancy);
  TRY(cudaGetLastError());
  size_t bytes = 0;
  TRY(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, starts, (int)m,
                                    st));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  for (int k = 0; k < 3; k++)
    TRY(cub::DeviceScan::ExclusiveSum(s->buf[State::SCAN_TEMP].p, bytes,
                                      counts + k * m, starts + k * m, (int)m,
                                      st));
  for (int k = 0; k < 3; k++)
    TRY(cudaMemcpyAsync(s->host_totals + k, starts + k * m + nleaves,
                        sizeof(int64_t), cudaMemcpyDeviceToHost, st));
  TRY(cudaMemcpyAsync(s->host + 3, occupancy, 2 * sizeof *occupancy,
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  pl->leaf_min = (int64_t)s->host[3];
  pl->leaf_max = (int64_t)s->host[4];
  tfmm_gpu_near_size *sz = &s->near_size;
  *sz = tfmm_gpu_near_size{
      (size_t)n,         nleaves,           nentries,       s->host_totals[0],
      s->host_totals[1], s->host_totals[2], pair->precision};
  if (sz->nitems > INT32_MAX || sz->nslots > INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_UNSUPPORTED,
                          "near field: %lld list entries and %lld work items; "
                          "the GPU kernel takes at most 2^31 - 1 (use a "
                          "larger leaf size)",
                          (long long)nentries, (long long)sz->nitems);
  CHECK(reserve(s, State::ITEM, sz->nitems * sizeof(tfmm_gpu_near_item), err));
  CHECK(
      reserve(s, State::SPLIT, sz->nsplits * sizeof(tfmm_gpu_near_split), err));
  write_items<<<blocks(32 * nleaves), THREADS, 0, st>>>(
      view, budget, starts, starts + m, starts + 2 * m,
      at<tfmm_gpu_near_item>(s, State::ITEM),
      at<tfmm_gpu_near_split>(s, State::SPLIT));
  TRY(cudaGetLastError());
  const tfmm_gpu_near_device arrays = {body,
                                       centre,
                                       leaf_begin,
                                       list_leaf,
                                       at<tfmm_gpu_near_item>(s, State::ITEM),
                                       at<tfmm_gpu_near_split>(s, State::SPLIT),
                                       s->near_out};
  bytes = 0;
  CHECK(tfmm_gpu_near_device_run(nullptr, &bytes, sz, &arrays, pair, potential,
                                 st, err));
  void *work = nullptr;
  CHECK(take(s, &a, State::NEAR_WORK, bytes, &work, err));
  CHECK(tfmm_gpu_near_device_run(work, &bytes, sz, &arrays, pair, potential, st,
                                 err));
  s->precision = pair->precision;
  s->potential = potential;
  return mark(pl, State::EV_NEAR, err);
}

/* The far field's phi (n) and grad (3n) of the sorted bodies: where the
 * tree's bodies were uploaded (dead once it is built; the build made room
 * for 4n doubles there). */
tfmm_status far_bodies(tfmm_pipeline_gpu *pl, double **phi, double **grad,
                       tfmm_error *err) {
  const size_t n = pl->base.tree.n;
  if (pl->base.d_bodies == nullptr ||
      pl->base.bodies_bytes < 4 * n * sizeof(double))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no room for the far field of %zu "
                          "bodies where they were uploaded",
                          n);
  *phi = (double *)pl->base.d_bodies;
  *grad = *phi + n;
  return TFMM_OK;
}

tfmm_status far(tfmm_pipeline_gpu *pl, int p, int fmm, int far_on,
                tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  const tfmm_traverse_gpu_lists *l = &pl->lists.lists;
  cudaStream_t st = stream_of(pl);
  const size_t n = t->n;
  double *phi = nullptr, *grad = nullptr;
  CHECK(far_bodies(pl, &phi, &grad, err));
  if (!far_on || !fmm) /* M2P adds; no far field is zero */
    TRY(cudaMemsetAsync(phi, 0, 4 * n * sizeof(double), st));
  if (far_on && fmm) {
    const size_t size = (size_t)(p + 1) * (size_t)(p + 2);
    Arena a;
    void *near_out = nullptr;
    CHECK(stage_arena(pl, &a, &near_out, err));
    double *L = nullptr;
    CHECK(
        take(s, &a, State::FAR_L, t->ncells * size * sizeof(double), &L, err));
    /* At a subset, the lanes of the cells that hold a target: they alone
     * have M2L lists (0: the whole tree's). */
    const int lanes = s->active != nullptr
                          ? tfmm_farfield_gpu_m2l_lanes_for(
                                s->target_cells > 0 ? s->target_cells : 1)
                          : 0;
    /* M2L in float beside a single-precision near field (farfield_gpu.h
     * states its scaling and error), else in double. */
    if (s->precision == TFMM_PRECISION_SINGLE &&
        p <= TFMM_FARFIELD_GPU_FLOAT_ORDER_MAX) {
      float *Ms = nullptr;
      CHECK(take(s, &a, State::FAR_MS,
                 tfmm_farfield_gpu_m2l_float_bytes(t->ncells, p), &Ms, err));
      CHECK(tfmm_farfield_gpu_m2l_float(t, &l->m2l, p, lanes, pl->base.d_M, Ms,
                                        L, st, err));
    } else {
      CHECK(tfmm_farfield_gpu_m2l_lanes(t, &l->m2l, p, lanes, pl->base.d_M, L,
                                        st, err));
    }
    CHECK(tfmm_farfield_gpu_l2l_fast(t, p, L, st, err));
    CHECK(tfmm_farfield_gpu_l2p_fast(t, p, L, phi, grad, st, err));
  }
  if (far_on)
    CHECK(tfmm_farfield_gpu_m2p_fast(t, &l->m2p, p, pl->base.d_M, phi, grad, st,
                                     err));
  return mark(pl, State::EV_FAR, err);
}

double elapsed(State *s, int a, int b) {
  float ms = 0;
  if (!s->recorded[a] || !s->recorded[b] ||
      cudaEventElapsedTime(&ms, s->ev[a], s->ev[b]) != cudaSuccess)
    return 0;
  return ms;
}

tfmm_status finish(tfmm_pipeline_gpu *pl, const tfmm_pipeline_gpu_output *out,
                   tfmm_pipeline_gpu_times *times, tfmm_error *err) {
  State *s = pl->state;
  const tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const int64_t n = (int64_t)t->n;
  if (!s->recorded[State::EV_NEAR] || !s->recorded[State::EV_FAR])
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the near or far field was not run");
  if (s->near_run != pl->lists.runs)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the lists were made again after the "
                          "near field");
  Arena a;
  void *near_out = nullptr;
  CHECK(stage_arena(pl, &a, &near_out, err));
  double *d_acc = out->acc, *d_pot = out->pot;
  if (!out->on_device) {
    CHECK(take(s, &a, State::RESULT, 4 * n * sizeof(double), &d_acc, err));
    d_pot = out->pot != nullptr ? d_acc + 3 * n : nullptr;
  }
  if (!s->potential)
    d_pot = nullptr;
  double *phi = nullptr, *grad = nullptr;
  CHECK(far_bodies(pl, &phi, &grad, err));
  CHECK(reserve(s, State::CHECKS,
                State::CHECK_VALUES * sizeof(unsigned long long), err));
  unsigned long long *bad = at<unsigned long long>(s, State::CHECKS);
  TRY(cudaMemsetAsync(bad, 0xff, 2 * sizeof *bad, st));
  if (s->precision == TFMM_PRECISION_DOUBLE)
    combine<double><<<blocks(n), THREADS, 0, st>>>(
        n, t->d_order, s->active, out->G, phi, grad, (const double *)near_out,
        d_acc, d_pot, *out, bad);
  else
    combine<float><<<blocks(n), THREADS, 0, st>>>(
        n, t->d_order, s->active, out->G, phi, grad, (const float *)near_out,
        d_acc, d_pot, *out, bad);
  TRY(cudaGetLastError());
  TRY(cudaMemcpyAsync(s->host, bad, 2 * sizeof *bad, cudaMemcpyDeviceToHost,
                      st));
  CHECK(mark(pl, State::EV_END, err));
  if (!out->on_device) {
    TRY(cudaMemcpyAsync(out->acc, d_acc, 3 * n * sizeof(double),
                        cudaMemcpyDeviceToHost, st));
    if (out->pot != nullptr && d_pot != nullptr)
      TRY(cudaMemcpyAsync(out->pot, d_pot, n * sizeof(double),
                          cudaMemcpyDeviceToHost, st));
  }
  TRY(cudaStreamSynchronize(st));
  pl->first_nonfinite = s->host[0] == ~0ull ? -1 : (int64_t)s->host[0];
  pl->first_beyond = s->host[1] == ~0ull ? -1 : (int64_t)s->host[1];
  if (times != nullptr) {
    *times = tfmm_pipeline_gpu_times{};
    times->upload = s->upload_ms;
    times->tree = elapsed(s, State::EV_START, State::EV_TREE);
    times->upward = elapsed(s, State::EV_TREE, State::EV_UPWARD);
    times->lists = elapsed(s, State::EV_UPWARD, State::EV_LISTS);
    times->near = elapsed(s, State::EV_LISTS, State::EV_NEAR);
    times->far = elapsed(s, State::EV_NEAR, State::EV_FAR);
    times->finish = elapsed(s, State::EV_FAR, State::EV_END);
  }
  return TFMM_OK;
}

/* The targets of the tree just built (tfmm_pipeline_gpu_targets). */
tfmm_status targets(tfmm_pipeline_gpu *pl, const unsigned char *active,
                    int on_device, tfmm_error *err) {
  State *s = pl->state;
  tfmm_tree_gpu *t = &pl->base.tree;
  cudaStream_t st = stream_of(pl);
  const int64_t n = (int64_t)t->n;
  s->active = nullptr;
  t->d_targets = nullptr;
  if (active == nullptr)
    return TFMM_OK;
  if (!on_device) {
    CHECK(reserve(s, State::ACTIVE, (size_t)n, err));
    TRY(cudaMemcpyAsync(s->buf[State::ACTIVE].p, active, (size_t)n,
                        cudaMemcpyHostToDevice, st));
    active = at<unsigned char>(s, State::ACTIVE);
  }
  CHECK(reserve(s, State::BELOW, (n + 1) * sizeof(int32_t), err));
  CHECK(reserve(s, State::TARGETS, t->ncells * sizeof(int32_t), err));
  int32_t *below = at<int32_t>(s, State::BELOW);
  int32_t *count = at<int32_t>(s, State::TARGETS);
  TRY(cudaMemsetAsync(below, 0, sizeof *below, st));
  const SortedTargetIter flag(thrust::counting_iterator<int64_t>(0),
                              SortedTarget{active, t->d_order});
  size_t bytes = 0;
  TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, flag, below + 1, (int)n,
                                    st));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  TRY(cub::DeviceScan::InclusiveSum(s->buf[State::SCAN_TEMP].p, bytes, flag,
                                    below + 1, (int)n, st));
  targets_per_cell<<<blocks(t->ncells), THREADS, 0, st>>>(
      t->ncells, t->d_body_begin, t->d_body_end, below, count);
  TRY(cudaGetLastError());
  /* The cells holding one, for the M2L's lanes a target (far). */
  CHECK(reserve(s, State::TARGET_SUM, sizeof(int64_t), err));
  int64_t *sum = at<int64_t>(s, State::TARGET_SUM);
  const HoldsTarget holds(thrust::counting_iterator<int64_t>(0),
                          CellHolds{count});
  bytes = 0;
  TRY(cub::DeviceReduce::Sum(nullptr, bytes, holds, sum, (int)t->ncells, st));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  TRY(cub::DeviceReduce::Sum(s->buf[State::SCAN_TEMP].p, bytes, holds, sum,
                             (int)t->ncells, st));
  TRY(cudaMemcpyAsync(&s->target_cells, sum, sizeof s->target_cells,
                      cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  s->active = active;
  t->d_targets = count;
  return TFMM_OK;
}

/* The targets among n bytes of the device (tfmm_pipeline_gpu_count_targets). */
tfmm_status count_targets(tfmm_pipeline_gpu *pl, size_t n,
                          const unsigned char *active, size_t *count,
                          tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  CHECK(reserve(s, State::TARGET_SUM, sizeof(int64_t), err));
  int64_t *sum = at<int64_t>(s, State::TARGET_SUM);
  const TargetIter flag(thrust::counting_iterator<int64_t>(0),
                        IsTarget{active});
  size_t bytes = 0;
  TRY(cub::DeviceReduce::Sum(nullptr, bytes, flag, sum, (int)n, st));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  TRY(cub::DeviceReduce::Sum(s->buf[State::SCAN_TEMP].p, bytes, flag, sum,
                             (int)n, st));
  int64_t h = 0;
  TRY(cudaMemcpyAsync(&h, sum, sizeof h, cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  *count = (size_t)h;
  return TFMM_OK;
}

tfmm_status bounds(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                   const double *mass, void *after, double out[7],
                   tfmm_error *err) {
  State *s = pl->state;
  cudaStream_t st = stream_of(pl);
  TRY(cudaStreamSynchronize((cudaStream_t)after));
  CHECK(check_device_bodies(pl, n, pos, mass, err));
  CHECK(reserve(s, State::BOUNDS, sizeof(Bounds), err));
  Bounds init;
  for (int d = 0; d < 3; d++) {
    init.lo[d] = INFINITY;
    init.hi[d] = -INFINITY;
  }
  init.heaviest = 0;
  BoundsIter it(thrust::counting_iterator<int64_t>(0), BodyBounds{pos, mass});
  size_t bytes = 0;
  Bounds *d_out = at<Bounds>(s, State::BOUNDS);
  TRY(cub::DeviceReduce::Reduce(nullptr, bytes, it, d_out, (int)n,
                                MergeBounds{}, init, st));
  CHECK(reserve(s, State::SCAN_TEMP, bytes, err));
  TRY(cub::DeviceReduce::Reduce(s->buf[State::SCAN_TEMP].p, bytes, it, d_out,
                                (int)n, MergeBounds{}, init, st));
  Bounds h;
  TRY(cudaMemcpyAsync(&h, d_out, sizeof h, cudaMemcpyDeviceToHost, st));
  TRY(cudaStreamSynchronize(st));
  for (int d = 0; d < 3; d++) {
    out[d] = h.lo[d];
    out[3 + d] = h.hi[d];
  }
  out[6] = h.heaviest;
  return TFMM_OK;
}

tfmm_status scale(tfmm_pipeline_gpu *pl, size_t n, const double *pos,
                  const double *mass, int k, int j, const double **spos,
                  const double **smass, tfmm_error *err) {
  /* Where the tree takes its bodies from (no copy then). */
  CHECK(tfmm_tree_gpu_hybrid_bodies(&pl->base, n, err));
  double *out = (double *)pl->base.d_bodies;
  scale_bodies<<<blocks((int64_t)n), THREADS, 0, stream_of(pl)>>>(
      (int64_t)n, pos, mass, k, j, out);
  TRY(cudaGetLastError());
  *spos = out;
  *smass = out + 3 * n;
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_pipeline_gpu_tree(tfmm_pipeline_gpu *pl, int device, size_t n,
                       const double *pos, const double *mass, int on_device,
                       void *after, const tfmm_tree_gpu_params *params,
                       tfmm_error *err) {
  if (pl == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the state is NULL");
  return entered(pl, device, err, [&] {
    return tree(pl, n, pos, mass, on_device, after, params, err);
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_maybe_coincident(tfmm_pipeline_gpu *pl,
                                                          int64_t *count,
                                                          tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.device, err, [&]() -> tfmm_status {
    State *s = pl->state;
    cudaStream_t st = stream_of(pl);
    CHECK(reserve(s, State::CHECKS,
                  State::CHECK_VALUES * sizeof(unsigned long long), err));
    unsigned long long *c = at<unsigned long long>(s, State::CHECKS) + 2;
    TRY(cudaMemsetAsync(c, 0, sizeof *c, st));
    const int64_t n = (int64_t)pl->base.tree.n;
    if (n > 1)
      maybe_coincident<<<blocks(n - 1), THREADS, 0, st>>>(
          n, pl->base.tree.d_keys, pl->base.tree.d_pos, c);
    TRY(cudaGetLastError());
    TRY(cudaMemcpyAsync(s->host + 2, c, sizeof *c, cudaMemcpyDeviceToHost, st));
    TRY(cudaStreamSynchronize(st));
    *count = (int64_t)s->host[2];
    return TFMM_OK;
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_copy_tree(tfmm_pipeline_gpu *pl,
                                                   struct tfmm_octree *out,
                                                   tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.device, err, [&] {
    return tfmm_tree_gpu_copy(&pl->base.tree, out, pl->base.stream, err);
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_targets(tfmm_pipeline_gpu *pl,
                                                 const unsigned char *active,
                                                 int on_device,
                                                 tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.device, err,
                 [&] { return targets(pl, active, on_device, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_count_targets(tfmm_pipeline_gpu *pl, size_t n,
                                const unsigned char *d_active, size_t *count,
                                tfmm_error *err) {
  if (pl == nullptr || pl->base.stream == nullptr || pl->state == nullptr ||
      d_active == nullptr || count == nullptr || n == 0 ||
      n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the bounds first, and a mask of "
                          "1..2^31 - 1 bodies");
  return entered(pl, pl->base.device, err,
                 [&] { return count_targets(pl, n, d_active, count, err); });
}

extern "C" tfmm_status tfmm_pipeline_gpu_upward(tfmm_pipeline_gpu *pl, int p,
                                                tfmm_error *err) {
  CHECK(built(pl, err));
  double seconds = 0;
  pl->base.fast_upward = 1; /* M stays on the device: to rounding will do */
  CHECK(tfmm_tree_gpu_hybrid_upward(&pl->base, p, nullptr, &seconds, err));
  return entered(pl, pl->base.device, err,
                 [&] { return mark(pl, State::EV_UPWARD, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_lists(tfmm_pipeline_gpu *pl,
                        const tfmm_traverse_gpu_params *params,
                        tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.device, err, [&] {
    tfmm_status st = tfmm_traverse_gpu_run(&pl->lists, &pl->base.tree, params,
                                           pl->base.stream, err);
    return st == TFMM_OK ? mark(pl, State::EV_LISTS, err) : st;
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_near(tfmm_pipeline_gpu *pl,
                                              const tfmm_pair_params *pair,
                                              int potential, int sm_count,
                                              tfmm_error *err) {
  CHECK(built(pl, err));
  if (pair == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no pair parameters");
  return entered(pl, pl->base.device, err,
                 [&] { return near(pl, pair, potential, sm_count, err); });
}

extern "C" tfmm_status tfmm_pipeline_gpu_far(tfmm_pipeline_gpu *pl, int p,
                                             int fmm, int far_on,
                                             tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.device, err,
                 [&] { return far(pl, p, fmm, far_on, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_finish(tfmm_pipeline_gpu *pl,
                         const tfmm_pipeline_gpu_output *out,
                         tfmm_pipeline_gpu_times *times, tfmm_error *err) {
  CHECK(built(pl, err));
  if (out == nullptr || out->acc == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no output arrays");
  return entered(pl, pl->base.device, err,
                 [&] { return finish(pl, out, times, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_bounds(tfmm_pipeline_gpu *pl, int device, size_t n,
                         const double *d_pos, const double *d_mass, void *after,
                         double out[7], tfmm_error *err) {
  if (pl == nullptr || d_pos == nullptr || d_mass == nullptr || n == 0 ||
      n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: no state, no bodies or too many");
  return entered(pl, device, err,
                 [&] { return bounds(pl, n, d_pos, d_mass, after, out, err); });
}

extern "C" tfmm_status
tfmm_pipeline_gpu_scale(tfmm_pipeline_gpu *pl, size_t n, const double *d_pos,
                        const double *d_mass, int length_exp, int mass_exp,
                        const double **pos, const double **mass,
                        tfmm_error *err) {
  if (pl == nullptr || pl->base.stream == nullptr || pl->state == nullptr)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "gpu schedule: the bounds first");
  return entered(pl, pl->base.device, err, [&] {
    return scale(pl, n, d_pos, d_mass, length_exp, mass_exp, pos, mass, err);
  });
}

extern "C" tfmm_status tfmm_pipeline_gpu_items(tfmm_pipeline_gpu *pl,
                                               tfmm_gpu_near_size *sz,
                                               tfmm_gpu_near_item **item,
                                               tfmm_gpu_near_split **split,
                                               tfmm_error *err) {
  CHECK(built(pl, err));
  return entered(pl, pl->base.device, err, [&]() -> tfmm_status {
    State *s = pl->state;
    *sz = s->near_size;
    const size_t ib = sz->nitems * sizeof **item,
                 sb = sz->nsplits * sizeof **split;
    *item = (tfmm_gpu_near_item *)malloc(ib > 0 ? ib : 1);
    *split = (tfmm_gpu_near_split *)malloc(sb > 0 ? sb : 1);
    if (*item == nullptr || *split == nullptr)
      return tfmm_error_set(err, TFMM_ERR_NO_MEMORY, "no memory for the items");
    TRY(cudaStreamSynchronize(stream_of(pl)));
    if (ib > 0)
      TRY(cudaMemcpy(*item, s->buf[State::ITEM].p, ib, cudaMemcpyDeviceToHost));
    if (sb > 0)
      TRY(cudaMemcpy(*split, s->buf[State::SPLIT].p, sb,
                     cudaMemcpyDeviceToHost));
    return TFMM_OK;
  });
}

extern "C" size_t tfmm_pipeline_gpu_bytes(const tfmm_pipeline_gpu *pl) {
  if (pl == nullptr)
    return 0;
  /* The other buffers only grow (a larger one replaces a smaller after
   * it is freed): what they hold is the most they held. */
  size_t sum = pl->base.bodies_bytes + pl->base.work_bytes + pl->base.M_bytes +
               pl->base.far_bytes + tfmm_traverse_gpu_peak_bytes(&pl->lists);
  if (pl->state != nullptr)
    for (int k = 0; k < State::BUFFERS; k++)
      sum += pl->state->buf[k].bytes;
  return sum;
}

extern "C" void tfmm_pipeline_gpu_release(tfmm_pipeline_gpu *pl) {
  if (pl == nullptr)
    return;
  State *s = pl->state;
  if (s != nullptr) {
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess)
      previous = -1;
    cudaSetDevice(pl->base.device);
    for (int k = 0; k < State::BUFFERS; k++)
      tfmm_device_buffer_free(&s->buf[k]);
    if (s->host != nullptr)
      cudaFreeHost(s->host);
    if (s->host_totals != nullptr)
      cudaFreeHost(s->host_totals);
    for (int k = 0; k < State::EVS; k++)
      if (s->ev[k] != nullptr)
        cudaEventDestroy(s->ev[k]);
    delete s;
    if (previous >= 0)
      cudaSetDevice(previous);
  }
  tfmm_traverse_gpu_release(&pl->lists);
  tfmm_tree_gpu_hybrid_release(&pl->base);
  memset(pl, 0, sizeof *pl);
}
