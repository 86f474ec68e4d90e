/* The octree's cells, level by level (tree_gpu.cu's stage 4): octree.c's
 * rules for which cell splits and where its children go, eight lanes a
 * cell. Two drivers share them: the host's loop (count_children, a CUB
 * scan, a copy of the level's total and a wait, add_children: a wait on
 * the host a level) and one cooperative launch (build_levels: two waits on
 * the grid a level, none on the host). Both place every child at the same
 * index: the cells are the same bits either way. Included by tree_gpu.cu
 * alone. */
#ifndef TFMM_TREE_GPU_LEVELS_CUH
#define TFMM_TREE_GPU_LEVELS_CUH

#include "tree/keys.h"
#include "tree_gpu.h"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <stdint.h>

namespace {

struct Cells {
  int32_t *level, *parent, *child_begin, *child_count, *body_begin, *body_end;
};

__global__ void init_root(Cells cells, int32_t n) {
  cells.level[0] = 0;
  cells.parent[0] = -1;
  cells.child_begin[0] = -1;
  cells.child_count[0] = 0;
  cells.body_begin[0] = 0;
  cells.body_end[0] = n;
}

/* Eight lanes a cell, lane o finding where octant o of the next level
 * starts (tfmm_key_octant_start; lane 0 the cell's first body): the
 * boundaries of tfmm_key_octants at once instead of seven searches one
 * after the other, which left the few cells of the upper levels with a
 * long chain of dependent loads. *mine is this lane's octant's first
 * body and *next the next octant's; returns the group's mask of
 * non-empty octants (bit o), 0 for a cell that stays a leaf (few bodies,
 * the deepest level allowed, or one key for all its bodies), as
 * octree.c's count_children decides. Every lane of the group calls it. */
__device__ unsigned octant_split(Cells cells, const uint64_t *keys, int32_t c,
                                 int level, int leaf_size, int max_depth, int o,
                                 int32_t *mine, int32_t *next) {
  const unsigned lane = threadIdx.x % 32, base = lane & ~7u;
  const unsigned group = 0xffu << base;
  const int32_t b = cells.body_begin[c], e = cells.body_end[c];
  const bool split =
      !(e - b <= leaf_size || level >= max_depth || keys[b] == keys[e - 1]);
  *mine = !split || o == 0
              ? b
              : (int32_t)tfmm_key_octant_start(keys, b, e, level, o);
  const int32_t after = __shfl_down_sync(group, *mine, 1, 8);
  *next = o == 7 ? e : after;
  const unsigned nonempty =
      __ballot_sync(group, split && *mine < *next) >> base;
  return nonempty & 0xffu;
}

/* Cell c's children counted (octree.c's count_children), lane o of its
 * group of eight: the count, also written to child_count by lane 0. */
__device__ int32_t count_cell(Cells cells, const uint64_t *keys, int32_t c,
                              int level, int leaf_size, int max_depth, int o) {
  int32_t mine, next;
  const unsigned nonempty = octant_split(cells, keys, c, level, leaf_size,
                                         max_depth, o, &mine, &next);
  const int32_t k = __popc(nonempty);
  if (o == 0)
    cells.child_count[c] = k;
  return k;
}

/* Cell c's k children placed from `first` in octant order (octree.c's
 * add_children), lane o of its group of eight writing octant o's child
 * when it is not empty, lane 0 the cell's child_begin. */
__device__ void place_children(Cells cells, const uint64_t *keys, int32_t c,
                               int level, int leaf_size, int max_depth, int o,
                               int32_t k, int32_t first) {
  if (o == 0)
    cells.child_begin[c] = k > 0 ? first : -1;
  if (k == 0)
    return; /* the whole group: k is the cell's */
  int32_t mine, next;
  const unsigned nonempty = octant_split(cells, keys, c, level, leaf_size,
                                         max_depth, o, &mine, &next);
  if (!(nonempty >> o & 1u))
    return;
  const int32_t child = first + __popc(nonempty & ((1u << o) - 1u));
  cells.level[child] = level + 1;
  cells.parent[child] = c;
  cells.child_begin[child] = -1;
  cells.child_count[child] = 0;
  cells.body_begin[child] = mine;
  cells.body_end[child] = next;
}

/* The host's loop: count_children over the level's m cells, eight lanes a
 * cell. */
__global__ void count_children(Cells cells, const uint64_t *keys, int32_t begin,
                               int32_t m, int level, int leaf_size,
                               int max_depth, int32_t *count) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const int32_t j = (int32_t)(i / 8);
  const int o = (int)(i % 8);
  if (j >= m)
    return; /* the whole group: m is the same for its eight lanes */
  const int32_t k =
      count_cell(cells, keys, begin + j, level, leaf_size, max_depth, o);
  if (o == 0)
    count[j] = k;
}

/* The host's loop: the children of the level's cell j start at `end` (the
 * next level's first cell) plus the exclusive prefix sum of the counts. */
__global__ void add_children(Cells cells, const uint64_t *keys, int32_t begin,
                             int32_t end, int level, int leaf_size,
                             int max_depth, const int32_t *count,
                             const int32_t *inclusive) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const int32_t j = (int32_t)(i / 8);
  const int o = (int)(i % 8);
  if (j >= end - begin)
    return; /* the whole group */
  const int32_t k = count[j];
  place_children(cells, keys, begin + j, level, leaf_size, max_depth, o, k,
                 end + inclusive[j] - k);
}

/* ---- The level loop in one cooperative launch ---------------------------- */

constexpr int LEVEL_THREADS = 256;
/* The most blocks of build_levels' grid (their sums' room). */
constexpr int LEVEL_BLOCKS_MAX = 2048;

/* What build_levels leaves for the host: the levels' first cells, the
 * depth, and whether a level passed max_cells (and the cells it asked). */
struct LevelOut {
  int64_t begin[TFMM_TREE_GPU_LEVELS + 1];
  int64_t needed;
  int32_t depth;
  int32_t overflow;
  int32_t block_sum[LEVEL_BLOCKS_MAX];
};

/* Every level in one launch. The level's cells [begin, end) are cut into
 * gridDim.x runs, a block each: the block counts its cells' children
 * (count_children's rule) and sums them; after a wait on the grid it takes
 * the sum of the blocks before it, places its cells' children
 * (add_children's rule: the level's first child at end, then by cell and
 * octant) and block 0 writes the next level's start; a second wait, and the
 * next level. Every block sees the same totals, so all leave together at
 * the level whose cells all stay leaves (or that passes max_cells).
 * count and first: room for the widest level's cells. */
__global__ void __launch_bounds__(LEVEL_THREADS)
    build_levels(Cells cells, const uint64_t *keys, int leaf_size,
                 int max_depth, int64_t max_cells, int32_t *count,
                 int32_t *first, LevelOut *out) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  typedef cub::BlockScan<int32_t, LEVEL_THREADS> Scan;
  typedef cub::BlockReduce<int32_t, LEVEL_THREADS> Reduce;
  __shared__ union {
    typename Scan::TempStorage scan;
    typename Reduce::TempStorage reduce;
  } tmp;
  __shared__ int32_t shared_before, shared_total;
  const int nblocks = (int)gridDim.x, me = (int)blockIdx.x;
  const int tid = (int)threadIdx.x;
  if (me == 0 && tid == 0) {
    out->begin[0] = 0;
    out->begin[1] = 1;
    out->overflow = 0;
    out->needed = 0;
  }
  int32_t begin = 0, end = 1;
  for (int level = 0;; level++) {
    const int64_t m = end - begin;
    const int64_t run = (m + nblocks - 1) / nblocks;
    const int64_t lo = me * run < m ? me * run : m;
    const int64_t hi = lo + run < m ? lo + run : m;
    /* 1. Each cell's children counted, eight lanes a cell: a group of
     * eight threads is one cell's, whole (the runs are whole cells). */
    int32_t mine_sum = 0;
    for (int64_t base = 8 * lo; base < 8 * hi; base += LEVEL_THREADS) {
      const int64_t i = base + tid;
      if (i < 8 * hi) {
        const int32_t j = (int32_t)(i / 8);
        const int o = (int)(i % 8);
        const int32_t k =
            count_cell(cells, keys, begin + j, level, leaf_size, max_depth, o);
        if (o == 0) {
          count[j] = k;
          mine_sum += k;
        }
      }
    }
    const int32_t block_sum = Reduce(tmp.reduce).Sum(mine_sum);
    if (tid == 0)
      out->block_sum[me] = block_sum;
    grid.sync();
    /* 2. The blocks before this one, and all of them. */
    int32_t before = 0, all = 0;
    for (int k = tid; k < nblocks; k += LEVEL_THREADS) {
      const int32_t v = out->block_sum[k];
      all += v;
      before += k < me ? v : 0;
    }
    __syncthreads();
    before = Reduce(tmp.reduce).Sum(before);
    __syncthreads();
    all = Reduce(tmp.reduce).Sum(all);
    if (tid == 0) {
      shared_before = before;
      shared_total = all;
    }
    __syncthreads();
    const int32_t total = shared_total;
    if (total == 0) {
      if (me == 0 && tid == 0)
        out->depth = level;
      return; /* every block: the same total */
    }
    const int64_t next = (int64_t)end + total;
    if (next > max_cells) {
      if (me == 0 && tid == 0) {
        out->overflow = 1;
        out->needed = next;
        out->depth = level;
      }
      return;
    }
    /* 3. Where each cell's children start: end plus the children of the
     * cells before it, a block scan over the run tile by tile. */
    int32_t carry = shared_before;
    for (int64_t t0 = lo; t0 < hi; t0 += LEVEL_THREADS) {
      const int64_t j = t0 + tid;
      const int32_t k = j < hi ? count[j] : 0;
      int32_t exclusive, tile;
      Scan(tmp.scan).ExclusiveSum(k, exclusive, tile);
      if (j < hi)
        first[j] = end + carry + exclusive;
      carry += tile;
      __syncthreads(); /* the scan's storage again */
    }
    __syncthreads(); /* first[] of the run, for the block */
    /* 4. The children, eight lanes a cell. */
    for (int64_t base = 8 * lo; base < 8 * hi; base += LEVEL_THREADS) {
      const int64_t i = base + tid;
      if (i < 8 * hi) {
        const int32_t j = (int32_t)(i / 8);
        const int o = (int)(i % 8);
        place_children(cells, keys, begin + j, level, leaf_size, max_depth, o,
                       count[j], first[j]);
      }
    }
    if (me == 0 && tid == 0)
      out->begin[level + 2] = next;
    grid.sync();
    begin = end;
    end = (int32_t)next;
  }
}

} // namespace

#endif
