/* The octree on the GPU: keys, sort, gather, cells, moments (tree_gpu.h).
 * Every rule is src/tree/octree.c's, restated here for the device: the
 * cube's formula, the keys (src/tree/morton.c), the octant bounds by binary
 * search, the leaf rule, the breadth-first placement of children by a
 * prefix sum of their counts, the moments' formulas and order of
 * summation. Scans, sorts, reductions and compaction are CUB's. Products
 * and sums in the moments use the _rn intrinsics: no fused multiply-add,
 * as on an x86-64 CPU build, so that the results are the CPU's bits.
 *
 * Cost: keys, gather and the moments of the leaves read each body once
 * (~100 bytes a body in all with the sort's passes); each level reads its
 * cells and does 7 binary searches per cell; the radius of a cell is a
 * branch-and-bound search over its subtree, as on the CPU, which reads the
 * few leaves near its farthest body. */
#include "tree_gpu.h"

#define CUDA_TRY_WHO "tree_gpu"
#include "cuda_try.cuh"

#include "tree/keys.h"
#include "tree_gpu_levels.cuh"
#include "tree_gpu_moments.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>

namespace {

/* src/tree/keys.h: key bits per axis and the deepest level; octree.c: the
 * cube's relative margin. */
constexpr int MORTON_BITS = TFMM_KEY_BITS;
constexpr int MAX_DEPTH = TFMM_KEY_LEVELS;
constexpr double BOX_MARGIN = 1e-12;
constexpr int THREADS = 256;
constexpr size_t ALIGN = 256;

#define LAUNCHED(what) TRY(cudaGetLastError())

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

/* ---- Stage 1: the cube and the keys ------------------------------------- */

struct Box {
  double lo[3], hi[3];
};

struct BodyBox {
  const double *pos;
  __host__ __device__ Box operator()(int64_t i) const {
    Box b;
    for (int k = 0; k < 3; k++)
      b.lo[k] = b.hi[k] = pos[3 * i + k];
    return b;
  }
};

/* Comparisons as octree.c's bounding_cube: the minimum and maximum of
 * finite values do not depend on the order they are met in. */
struct MergeBox {
  __host__ __device__ Box operator()(const Box &a, const Box &b) const {
    Box r;
    for (int k = 0; k < 3; k++) {
      r.lo[k] = b.lo[k] < a.lo[k] ? b.lo[k] : a.lo[k];
      r.hi[k] = b.hi[k] > a.hi[k] ? b.hi[k] : a.hi[k];
    }
    return r;
  }
};

using BoxIter =
    thrust::transform_iterator<BodyBox, thrust::counting_iterator<int64_t>>;

/* A cube given by the caller (side > 0), passed by value. */
struct Given {
  double v[4];
};

/* d_box: box_min[3], box_size, then the bodies' extent, lowest and highest
 * corners (checked on the host): the given cube, else the bodies' own. */
__global__ void finish_cube(const Box *box, Given given, double *d_box) {
  double extent = fmax(box->hi[0] - box->lo[0],
                       fmax(box->hi[1] - box->lo[1], box->hi[2] - box->lo[2]));
  for (int k = 0; k < 3; k++) {
    d_box[k] = given.v[3] > 0 ? given.v[k] : box->lo[k];
    d_box[5 + k] = box->lo[k];
    d_box[8 + k] = box->hi[k];
  }
  d_box[3] = given.v[3] > 0 ? given.v[3]
             : extent > 0   ? extent * (1 + BOX_MARGIN)
                            : 1.0;
  d_box[4] = extent;
}

/* The lowest index of a body outside the given cube (octree.c's test). */
__global__ void first_outside(int64_t n, const double *pos, Given g,
                              int32_t *index) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  for (int d = 0; d < 3; d++) {
    const double x = pos[3 * i + d];
    if (!(x >= g.v[d] && x <= g.v[d] + g.v[3]))
      atomicMin(index, (int32_t)i);
  }
}

__global__ void make_keys(int64_t n, const double *pos, const double *d_box,
                          uint64_t *keys, int32_t *order) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  keys[i] = tfmm_key_encode(pos + 3 * i, d_box, d_box[3]);
  order[i] = (int32_t)i;
}

/* ---- Stage 3: the bodies into key order --------------------------------- */

__global__ void gather(int64_t n, const int32_t *order, const double *pos,
                       const double *mass, double *spos, double *smass) {
  int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  int64_t i = order[k];
  spos[3 * k] = pos[3 * i];
  spos[3 * k + 1] = pos[3 * i + 1];
  spos[3 * k + 2] = pos[3 * i + 2];
  smass[k] = mass[i];
}

/* ---- Stage 4: the cells, level by level (tree_gpu_levels.cuh) ---------- */

/* A leaf's first body names it; every other entry stays -1. */
__global__ void mark_leaves(Cells cells, int32_t ncells, int32_t *leaf_at) {
  int32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < ncells && cells.child_count[c] == 0)
    leaf_at[cells.body_begin[c]] = c;
}

struct IsCell {
  __host__ __device__ bool operator()(int32_t c) const { return c >= 0; }
};

/* ---- The workspace ------------------------------------------------------ */

struct Layout {
  size_t pos, mass, keys[2], order[2], box, reduced, counters, levels, leaves;
  size_t center, radius, radius0, cmass, box_center, size;
  size_t level, parent, child_begin, child_count, body_begin, body_end;
  size_t temp, temp_bytes, total;
};

size_t place(size_t *at, size_t bytes) {
  size_t offset = *at;
  *at += (bytes + ALIGN - 1) / ALIGN * ALIGN;
  return offset;
}

int64_t cell_bound(int64_t n, int leaf_size, int max_depth) {
  int64_t split = n / ((int64_t)leaf_size + 1);
  int64_t level = 8 * split < n ? 8 * split : n;
  return 1 + (int64_t)max_depth * level;
}

/* CUB's scratch for every call the build makes, the largest. */
cudaError_t cub_bytes(int64_t n, cudaStream_t stream, size_t *bytes) {
  size_t b[5] = {0, 0, 0, 0, 0};
  int nn = (int)n;
  BoxIter boxes(thrust::counting_iterator<int64_t>(0), BodyBox{nullptr});
  Box init{};
  cudaError_t e = cub::DeviceReduce::Reduce(
      nullptr, b[0], boxes, (Box *)nullptr, nn, MergeBox{}, init, stream);
  cub::DoubleBuffer<uint64_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<int32_t> order(nullptr, nullptr);
  if (e == cudaSuccess)
    e = cub::DeviceRadixSort::SortPairs(nullptr, b[1], keys, order, nn, 0,
                                        3 * MORTON_BITS, stream);
  if (e == cudaSuccess)
    e = cub::DeviceScan::InclusiveSum(nullptr, b[2], (int32_t *)nullptr,
                                      (int32_t *)nullptr, nn, stream);
  if (e == cudaSuccess)
    e = cub::DeviceSelect::If(nullptr, b[3], (int32_t *)nullptr,
                              (int32_t *)nullptr, (int32_t *)nullptr, nn,
                              IsCell{}, stream);
  if (e == cudaSuccess) {
    GrowthIter growth(thrust::counting_iterator<int64_t>(0),
                      LeafGrowth{nullptr, nullptr, nullptr});
    e = cub::DeviceReduce::Sum(nullptr, b[4], growth, (double *)nullptr, nn,
                               stream);
  }
  *bytes = 0;
  for (int k = 0; k < 5; k++)
    *bytes = b[k] > *bytes ? b[k] : *bytes;
  return e;
}

/* The arrays, each aligned; after the sort the spare key buffer holds the
 * per-level counts and sums, the spare order buffer the leaf marks. */
Layout make_layout(int64_t n, int64_t cells, size_t temp_bytes) {
  Layout l;
  size_t at = 0;
  l.pos = place(&at, 3 * n * sizeof(double));
  l.mass = place(&at, n * sizeof(double));
  for (int k = 0; k < 2; k++) {
    l.keys[k] = place(&at, n * sizeof(uint64_t));
    l.order[k] = place(&at, n * sizeof(int32_t));
  }
  l.box = place(&at, 11 * sizeof(double));
  l.reduced = place(&at, sizeof(Box));
  l.counters = place(&at, 4 * sizeof(int32_t));
  l.levels = place(&at, sizeof(LevelOut));
  /* Leaves: at most one a cell (the selection writes only those). */
  l.leaves = place(&at, (cells < n ? cells : n) * sizeof(int32_t));
  l.center = place(&at, 3 * cells * sizeof(double));
  l.radius = place(&at, cells * sizeof(double));
  l.radius0 = place(&at, cells * sizeof(double));
  l.cmass = place(&at, cells * sizeof(double));
  l.box_center = place(&at, 3 * cells * sizeof(double));
  l.size = place(&at, cells * sizeof(double));
  l.level = place(&at, cells * sizeof(int32_t));
  l.parent = place(&at, cells * sizeof(int32_t));
  l.child_begin = place(&at, cells * sizeof(int32_t));
  l.child_count = place(&at, cells * sizeof(int32_t));
  l.body_begin = place(&at, cells * sizeof(int32_t));
  l.body_end = place(&at, cells * sizeof(int32_t));
  l.temp_bytes = temp_bytes;
  l.temp = place(&at, temp_bytes);
  l.total = at;
  return l;
}

tfmm_status check(size_t n, const double *pos, const double *mass,
                  const tfmm_tree_gpu_params *p, size_t *bytes,
                  tfmm_tree_gpu *tree, tfmm_error *err) {
  if (p == NULL || bytes == NULL || tree == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: %s is NULL",
                          p == NULL       ? "params"
                          : bytes == NULL ? "workspace_bytes"
                                          : "tree");
  if (n == 0)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "n = 0: the octree needs at least one body");
  if (n > (size_t)INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: n = %zu: at most %d bodies", n, INT32_MAX);
  if (pos == NULL || mass == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT, "%s is NULL",
                          pos == NULL ? "pos" : "mass");
  if (p->leaf_size < 1)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "leaf_size = %d: must be >= 1", p->leaf_size);
  if (p->max_depth < 0 || p->max_depth > MAX_DEPTH)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "max_depth = %d: must be in [0, %d]", p->max_depth,
                          MAX_DEPTH);
  const double *g = p->box;
  if (g[3] != 0 && (!(g[3] > 0) || !isfinite(g[3]) || !isfinite(g[0]) ||
                    !isfinite(g[1]) || !isfinite(g[2])))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "octree: the given cube (%g, %g, %g) side %g is not "
                          "finite with a positive side",
                          g[0], g[1], g[2], g[3]);
  if (p->max_cells < 0 || p->max_cells > INT32_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "max_cells = %lld: must be in [0, %d]",
                          (long long)p->max_cells, INT32_MAX);
  return TFMM_OK;
}

/* ---- The stages --------------------------------------------------------- */

struct Build {
  tfmm_tree_gpu *t;
  char *ws;
  Layout l;
  cudaStream_t s;
  cudaEvent_t ev[6]; /* before keys, sort, gather, cells, moments; after */
  int timed;
  Given given;       /* side 0: none */
  const double *pos; /* the input positions */
  Cells cells;
  Moments mo;
  int host_levels; /* tfmm_tree_gpu_params.host_levels */
  LevelOut levels; /* build_levels' figures, copied back */
};

tfmm_status mark(Build *b, int k, tfmm_error *err) {
  if (b->timed)
    TRY(cudaEventRecord(b->ev[k], b->s));
  return TFMM_OK;
}

tfmm_status keys_and_sort(Build *b, const double *pos, const double *mass,
                          tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  int64_t n = (int64_t)t->n;
  void *temp = b->ws + b->l.temp;
  size_t temp_bytes = b->l.temp_bytes;
  Box *reduced = (Box *)(b->ws + b->l.reduced);
  Box init;
  for (int k = 0; k < 3; k++) {
    init.lo[k] = INFINITY;
    init.hi[k] = -INFINITY;
  }
  BoxIter boxes(thrust::counting_iterator<int64_t>(0), BodyBox{pos});
  TRY(cub::DeviceReduce::Reduce(temp, temp_bytes, boxes, reduced, (int)n,
                                MergeBox{}, init, b->s));
  finish_cube<<<1, 1, 0, b->s>>>(reduced, b->given, t->d_box);
  LAUNCHED(finish_cube);
  uint64_t *k0 = (uint64_t *)(b->ws + b->l.keys[0]);
  uint64_t *k1 = (uint64_t *)(b->ws + b->l.keys[1]);
  int32_t *o0 = (int32_t *)(b->ws + b->l.order[0]);
  int32_t *o1 = (int32_t *)(b->ws + b->l.order[1]);
  make_keys<<<blocks(n), THREADS, 0, b->s>>>(n, pos, t->d_box, k0, o0);
  LAUNCHED(make_keys);
  tfmm_status st = mark(b, 1, err);
  if (st != TFMM_OK)
    return st;
  /* LSD radix sort: stable, so equal keys keep their input order, as in
   * tfmm_radix_sort. */
  cub::DoubleBuffer<uint64_t> keys(k0, k1);
  cub::DoubleBuffer<int32_t> order(o0, o1);
  TRY(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, order, (int)n, 0,
                                      3 * MORTON_BITS, b->s));
  t->d_keys = keys.Current();
  t->d_order = order.Current();
  if ((st = mark(b, 2, err)) != TFMM_OK)
    return st;
  gather<<<blocks(n), THREADS, 0, b->s>>>(n, t->d_order, pos, mass, t->d_pos,
                                          t->d_mass);
  LAUNCHED(gather);
  /* The spare buffers, now free, become the cells' scratch. */
  b->l.keys[0] = (size_t)((char *)keys.Alternate() - b->ws);
  b->l.order[0] = (size_t)((char *)order.Alternate() - b->ws);
  return mark(b, 3, err);
}

/* Names the first body outside the given cube (there is one). */
tfmm_status name_outside(Build *b, tfmm_error *err) {
  int32_t *index = (int32_t *)(b->ws + b->l.reduced); /* free again */
  const int32_t none = INT32_MAX;
  TRY(cudaMemcpyAsync(index, &none, sizeof none, cudaMemcpyHostToDevice, b->s));
  first_outside<<<blocks((int64_t)b->t->n), THREADS, 0, b->s>>>(
      (int64_t)b->t->n, b->pos, b->given, index);
  LAUNCHED(first_outside);
  int32_t i = none;
  double x[3] = {0, 0, 0};
  TRY(cudaMemcpyAsync(&i, index, sizeof i, cudaMemcpyDeviceToHost, b->s));
  TRY(cudaStreamSynchronize(b->s));
  if (i != none)
    TRY(cudaMemcpy(x, b->pos + 3 * (size_t)i, sizeof x,
                   cudaMemcpyDeviceToHost));
  const double *g = b->given.v;
  return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "body %d: position (%g, %g, %g) is outside the "
                        "given cube [%g, %g] x [%g, %g] x [%g, %g]",
                        (int)i, x[0], x[1], x[2], g[0], g[0] + g[3], g[1],
                        g[1] + g[3], g[2], g[2] + g[3]);
}

tfmm_status check_cube(Build *b, tfmm_error *err) {
  double box[11];
  TRY(cudaMemcpyAsync(box, b->t->d_box, sizeof box, cudaMemcpyDeviceToHost,
                      b->s));
  TRY(cudaStreamSynchronize(b->s));
  if (!isfinite(box[4]))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "octree: the bodies span %g, beyond the range of "
                          "double",
                          box[4]);
  const double *g = b->given.v;
  for (int d = 0; g[3] > 0 && d < 3; d++)
    if (!(box[5 + d] >= g[d] && box[8 + d] <= g[d] + g[3]))
      return name_outside(b, err);
  for (int k = 0; k < 3; k++)
    b->t->box_min[k] = box[k];
  b->t->box_size = box[3];
  return TFMM_OK;
}

/* The error of a tree that needs more than max_cells cells. */
tfmm_status too_many_cells(const tfmm_tree_gpu *t, int64_t next,
                           tfmm_error *err) {
  return tfmm_error_set(err, TFMM_ERR_NO_MEMORY,
                        "tree_gpu: more than max_cells = %lld cells "
                        "(at least %lld)",
                        (long long)t->max_cells, (long long)next);
}

/* The levels in one cooperative launch (build_levels), a grid of up to
 * two blocks an SM; *done 0 where the device cannot launch it (no
 * cooperative launch, or fewer SMs than it counts, as under an MPS share):
 * the host's loop then builds them. */
tfmm_status levels_at_once(Build *b, int *done, tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  *done = 0;
  int device = 0, cooperative = 0, sms = 0, per_sm = 0;
  TRY(cudaGetDevice(&device));
  TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch,
                             device));
  if (!cooperative)
    return TFMM_OK;
  TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, build_levels,
                                                    LEVEL_THREADS, 0));
  per_sm = per_sm < 2 ? per_sm : 2;
  int grid = sms * per_sm;
  grid = grid < LEVEL_BLOCKS_MAX ? grid : LEVEL_BLOCKS_MAX;
  if (grid < 1)
    return TFMM_OK;
  Cells cells = b->cells;
  const uint64_t *keys = t->d_keys;
  int leaf_size = t->leaf_size, max_depth = t->max_depth;
  int64_t max_cells = t->max_cells;
  int32_t *count = (int32_t *)(b->ws + b->l.keys[0]);
  int32_t *first = count + t->n;
  LevelOut *out = (LevelOut *)(b->ws + b->l.levels);
  void *args[] = {&cells,     &keys,  &leaf_size, &max_depth,
                  &max_cells, &count, &first,     &out};
  const cudaError_t launched = cudaLaunchCooperativeKernel(
      (const void *)build_levels, grid, LEVEL_THREADS, args, 0, b->s);
  if (launched == cudaErrorCooperativeLaunchTooLarge) {
    (void)cudaGetLastError();
    return TFMM_OK;
  }
  TRY(launched);
  LevelOut *h = &b->levels;
  TRY(cudaMemcpyAsync(h, out, offsetof(LevelOut, block_sum),
                      cudaMemcpyDeviceToHost, b->s));
  TRY(cudaStreamSynchronize(b->s));
  if (h->overflow)
    return too_many_cells(t, h->needed, err);
  t->depth = h->depth;
  for (int k = 0; k <= h->depth + 1; k++)
    t->level_begin[k] = h->begin[k];
  t->ncells = h->begin[h->depth + 1];
  *done = 1;
  return TFMM_OK;
}

tfmm_status build_cells(Build *b, tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  int32_t *count = (int32_t *)(b->ws + b->l.keys[0]);
  int32_t *inclusive = count + t->n;
  void *temp = b->ws + b->l.temp;
  size_t temp_bytes = b->l.temp_bytes;
  init_root<<<1, 1, 0, b->s>>>(b->cells, (int32_t)t->n);
  LAUNCHED(init_root);
  t->level_begin[0] = 0;
  t->level_begin[1] = 1;
  int done = 0;
  if (!b->host_levels)
    CHECK(levels_at_once(b, &done, err));
  for (int level = 0; !done; level++) {
    int32_t begin = (int32_t)t->level_begin[level];
    int32_t end = (int32_t)t->level_begin[level + 1], m = end - begin;
    count_children<<<blocks(8 * (int64_t)m), THREADS, 0, b->s>>>(
        b->cells, t->d_keys, begin, m, level, t->leaf_size, t->max_depth,
        count);
    LAUNCHED(count_children);
    TRY(cub::DeviceScan::InclusiveSum(temp, temp_bytes, count, inclusive, m,
                                      b->s));
    int32_t total = 0;
    TRY(cudaMemcpyAsync(&total, inclusive + m - 1, sizeof total,
                        cudaMemcpyDeviceToHost, b->s));
    TRY(cudaStreamSynchronize(b->s));
    if (total == 0) {
      t->depth = level;
      break;
    }
    int64_t next = (int64_t)end + total;
    if (next > t->max_cells)
      return too_many_cells(t, next, err);
    add_children<<<blocks(8 * (int64_t)m), THREADS, 0, b->s>>>(
        b->cells, t->d_keys, begin, end, level, t->leaf_size, t->max_depth,
        count, inclusive);
    LAUNCHED(add_children);
    t->level_begin[level + 2] = next;
    t->ncells = next;
  }
  /* The leaves in key order: each leaf marks its first body, and the marks
   * are compacted in body order. */
  int32_t *leaf_at = (int32_t *)(b->ws + b->l.order[0]);
  int32_t *d_nleaves = (int32_t *)(b->ws + b->l.counters);
  TRY(cudaMemsetAsync(leaf_at, 0xff, t->n * sizeof *leaf_at, b->s));
  mark_leaves<<<blocks(t->ncells), THREADS, 0, b->s>>>(
      b->cells, (int32_t)t->ncells, leaf_at);
  LAUNCHED(mark_leaves);
  TRY(cub::DeviceSelect::If(temp, temp_bytes, leaf_at, t->d_leaves, d_nleaves,
                            (int)t->n, IsCell{}, b->s));
  int32_t nleaves = 0;
  TRY(cudaMemcpyAsync(&nleaves, d_nleaves, sizeof nleaves,
                      cudaMemcpyDeviceToHost, b->s));
  TRY(cudaStreamSynchronize(b->s));
  t->nleaves = nleaves;
  return mark(b, 4, err);
}

/* The cells' moments from their bodies; with boxes, their cubes first (a
 * refit keeps the build's). */
tfmm_status moments(Build *b, int boxes, tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  int32_t ncells = (int32_t)t->ncells;
  if (boxes) {
    cell_box<<<blocks(ncells), THREADS, 0, b->s>>>(b->cells, b->mo, t->d_keys,
                                                   t->d_box, ncells);
    LAUNCHED(cell_box);
  }
  leaf_moments<<<blocks(ncells), THREADS, 0, b->s>>>(b->cells, b->mo, ncells);
  LAUNCHED(leaf_moments);
  for (int level = t->depth - 1; level >= 0; level--) {
    int32_t begin = (int32_t)t->level_begin[level];
    int32_t m = (int32_t)t->level_begin[level + 1] - begin;
    parent_moments<<<blocks(m), THREADS, 0, b->s>>>(b->cells, b->mo, begin, m);
    LAUNCHED(parent_moments);
  }
  if (t->ncells > 1) {
    ancestor_radii<<<(unsigned)((t->nleaves + RADII_WARPS - 1) / RADII_WARPS),
                     32 * RADII_WARPS, 0, b->s>>>(b->cells, b->mo, t->d_leaves,
                                                  (int32_t)t->nleaves);
    LAUNCHED(ancestor_radii);
  }
  return mark(b, 5, err);
}

tfmm_status read_times(Build *b, tfmm_error *err) {
  float ms[5];
  for (int k = 0; k < 5; k++)
    TRY(cudaEventElapsedTime(&ms[k], b->ev[k], b->ev[k + 1]));
  float total;
  TRY(cudaEventElapsedTime(&total, b->ev[0], b->ev[5]));
  tfmm_tree_gpu_times *tt = &b->t->times;
  tt->keys = ms[0];
  tt->sort = ms[1];
  tt->gather = ms[2];
  tt->cells = ms[3];
  tt->moments = ms[4];
  tt->total = total;
  return TFMM_OK;
}

/* A refit's growth (tree_gpu.h): the mean of LeafGrowth over the leaves,
 * summed by CUB into the free scratch and read on the host. */
tfmm_status measure_growth(Build *b, tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  double *sum = (double *)(b->ws + b->l.reduced);
  size_t temp_bytes = b->l.temp_bytes;
  GrowthIter growth(thrust::counting_iterator<int64_t>(0),
                    LeafGrowth{t->d_leaves, t->d_radius, t->d_radius0});
  TRY(cub::DeviceReduce::Sum(b->ws + b->l.temp, temp_bytes, growth, sum,
                             (int)t->nleaves, b->s));
  double total = 0;
  TRY(cudaMemcpyAsync(&total, sum, sizeof total, cudaMemcpyDeviceToHost, b->s));
  TRY(cudaStreamSynchronize(b->s));
  t->growth = total / (double)t->nleaves;
  return TFMM_OK;
}

tfmm_status run_stages(Build *b, const double *pos, const double *mass,
                       tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  tfmm_status st;
  if ((st = mark(b, 0, err)) != TFMM_OK ||
      (st = keys_and_sort(b, pos, mass, err)) != TFMM_OK ||
      (st = check_cube(b, err)) != TFMM_OK ||
      (st = build_cells(b, err)) != TFMM_OK ||
      (st = moments(b, 1, err)) != TFMM_OK)
    return st;
  /* The radii a refit's growth is measured against. */
  TRY(cudaMemcpyAsync(t->d_radius0, t->d_radius, t->ncells * sizeof(double),
                      cudaMemcpyDeviceToDevice, b->s));
  t->growth = 1;
  TRY(cudaStreamSynchronize(b->s));
  return b->timed ? read_times(b, err) : TFMM_OK;
}

/* A refit: no keys, sort or cells (their marks stand back to back), the
 * bodies gathered through the build's order, the moments, the growth. */
tfmm_status refit_stages(Build *b, const double *pos, const double *mass,
                         tfmm_error *err) {
  tfmm_tree_gpu *t = b->t;
  const int64_t n = (int64_t)t->n;
  tfmm_status st;
  for (int k = 0; k < 3; k++)
    if ((st = mark(b, k, err)) != TFMM_OK)
      return st;
  gather<<<blocks(n), THREADS, 0, b->s>>>(n, t->d_order, pos, mass, t->d_pos,
                                          t->d_mass);
  LAUNCHED(gather);
  if ((st = mark(b, 3, err)) != TFMM_OK || (st = mark(b, 4, err)) != TFMM_OK ||
      (st = moments(b, 0, err)) != TFMM_OK ||
      (st = measure_growth(b, err)) != TFMM_OK)
    return st;
  return b->timed ? read_times(b, err) : TFMM_OK;
}

/* Runs stages (run_stages or refit_stages) with the build's events when
 * timed, and leaves the stream idle. */
tfmm_status with_events(Build *b, const double *pos, const double *mass,
                        tfmm_status (*stages)(Build *, const double *,
                                              const double *, tfmm_error *),
                        tfmm_error *err) {
  tfmm_status st;
  int made = 0;
  if (b->timed)
    for (; made < 6; made++)
      if (cudaEventCreate(&b->ev[made]) != cudaSuccess)
        break;
  if (b->timed && made < 6)
    st = tfmm_error_set(err, TFMM_ERR_CUDA, "tree_gpu: cudaEventCreate failed");
  else
    st = stages(b, pos, mass, err);
  if (st != TFMM_OK)
    cudaStreamSynchronize(b->s); /* leave the stream idle; keep the first
                                    error */
  for (int k = 0; k < made; k++)
    cudaEventDestroy(b->ev[k]);
  return st;
}

void point_arrays(Build *b) {
  tfmm_tree_gpu *t = b->t;
  char *ws = b->ws;
  const Layout &l = b->l;
  t->d_pos = (double *)(ws + l.pos);
  t->d_mass = (double *)(ws + l.mass);
  t->d_box = (double *)(ws + l.box);
  t->d_leaves = (int32_t *)(ws + l.leaves);
  t->d_center = (double *)(ws + l.center);
  t->d_radius = (double *)(ws + l.radius);
  t->d_radius0 = (double *)(ws + l.radius0);
  t->d_cmass = (double *)(ws + l.cmass);
  t->d_box_center = (double *)(ws + l.box_center);
  t->d_size = (double *)(ws + l.size);
  t->d_level = (int32_t *)(ws + l.level);
  t->d_parent = (int32_t *)(ws + l.parent);
  t->d_child_begin = (int32_t *)(ws + l.child_begin);
  t->d_child_count = (int32_t *)(ws + l.child_count);
  t->d_body_begin = (int32_t *)(ws + l.body_begin);
  t->d_body_end = (int32_t *)(ws + l.body_end);
  b->cells = Cells{t->d_level,       t->d_parent,     t->d_child_begin,
                   t->d_child_count, t->d_body_begin, t->d_body_end};
  b->mo = Moments{t->d_pos,   t->d_mass,       t->d_center, t->d_radius,
                  t->d_cmass, t->d_box_center, t->d_size};
}

} // namespace

extern "C" tfmm_status
tfmm_tree_gpu_build(void *workspace, size_t *workspace_bytes, size_t n,
                    const double *d_pos, const double *d_mass,
                    const tfmm_tree_gpu_params *params, tfmm_tree_gpu *tree,
                    void *stream, tfmm_error *err) {
  tfmm_status st = check(n, d_pos, d_mass, params, workspace_bytes, tree, err);
  if (st != TFMM_OK)
    return st;
  int64_t cells =
      params->max_cells > 0
          ? params->max_cells
          : cell_bound((int64_t)n, params->leaf_size, params->max_depth);
  if (cells > INT32_MAX)
    cells = INT32_MAX;
  cudaStream_t s = (cudaStream_t)stream;
  size_t temp_bytes = 0;
  TRY(cub_bytes((int64_t)n, s, &temp_bytes));
  Layout layout = make_layout((int64_t)n, cells, temp_bytes);
  if (workspace == NULL) {
    *workspace_bytes = layout.total;
    return TFMM_OK;
  }
  if (*workspace_bytes < layout.total)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: workspace of %zu bytes, %zu needed",
                          *workspace_bytes, layout.total);
  *tree = tfmm_tree_gpu{};
  tree->n = n;
  tree->max_cells = cells;
  tree->leaf_size = params->leaf_size;
  tree->max_depth = params->max_depth;
  tree->ncells = 1;
  Build b{};
  b.t = tree;
  b.ws = (char *)workspace;
  b.l = layout;
  b.s = s;
  b.timed = params->timed;
  for (int k = 0; k < 4; k++)
    b.given.v[k] = params->box[k];
  b.pos = d_pos;
  b.host_levels = params->host_levels;
  point_arrays(&b);
  return with_events(&b, d_pos, d_mass, run_stages, err);
}

extern "C" tfmm_status
tfmm_tree_gpu_refit(void *workspace, size_t workspace_bytes,
                    const double *d_pos, const double *d_mass, int timed,
                    tfmm_tree_gpu *tree, void *stream, tfmm_error *err) {
  if (tree == NULL || tree->n == 0 || tree->nleaves < 1 ||
      tree->d_order == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: a refit needs a built tree");
  if (workspace == NULL || d_pos == NULL || d_mass == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: %s is NULL",
                          workspace == NULL ? "workspace"
                          : d_pos == NULL   ? "pos"
                                            : "mass");
  cudaStream_t s = (cudaStream_t)stream;
  size_t temp_bytes = 0;
  TRY(cub_bytes((int64_t)tree->n, s, &temp_bytes));
  /* The build's layout: the same bodies and room give the same places. */
  Layout layout = make_layout((int64_t)tree->n, tree->max_cells, temp_bytes);
  if (workspace_bytes < layout.total)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "tree_gpu: workspace of %zu bytes, %zu needed",
                          workspace_bytes, layout.total);
  Build b{};
  b.t = tree;
  b.ws = (char *)workspace;
  b.l = layout;
  b.s = s;
  b.timed = timed;
  b.pos = d_pos;
  point_arrays(&b);
  return with_events(&b, d_pos, d_mass, refit_stages, err);
}
