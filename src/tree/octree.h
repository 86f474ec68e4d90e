/* The octree: bodies sorted by 63-bit Morton key, cells as plain arrays.
 *
 * Stages: keys (tfmm_morton_*), a parallel radix sort of the keys, the
 * bodies permuted into key order, then the cells built level by level from
 * the sorted keys. Every cell owns the contiguous range of sorted bodies
 * whose keys share its prefix. Cells are stored breadth first: the cells of
 * one level are contiguous, and so are the children of one cell. */
#ifndef TFMM_OCTREE_H
#define TFMM_OCTREE_H

#include "internal.h"
#include "tree/keys.h"

#include <stddef.h>
#include <stdint.h>

/* 21 bits per axis: a 63-bit key, and the deepest level. */
enum { TFMM_MORTON_BITS = TFMM_KEY_BITS, TFMM_MAX_DEPTH = TFMM_KEY_LEVELS };

typedef struct tfmm_cell {
  double center[3];     /* expansion centre: the bodies' centre of mass */
  double radius;        /* max |x_i - center| over the cell's bodies */
  double mass;          /* total mass */
  double box_center[3]; /* the geometric cube: its centre ... */
  double size;          /* ... and side length */
  int32_t level;        /* root = 0 */
  int32_t parent;       /* -1 for the root */
  int32_t child_begin;  /* index of the first child (children contiguous);
                           -1 for a leaf */
  int32_t child_count;  /* 0 for a leaf; else 1..8 non-empty children */
  int64_t body_begin, body_end; /* [begin, end) in sorted order */
} tfmm_cell;

typedef struct tfmm_tree_times {
  double keys, sort, permute, build, moments; /* seconds */
} tfmm_tree_times;

typedef struct tfmm_octree {
  size_t n;          /* bodies */
  double *pos;       /* 3n positions in key order */
  double *mass;      /* n masses in key order */
  int64_t *order;    /* order[k]: the input index of sorted body k */
  uint64_t *keys;    /* n keys, ascending */
  double box_min[3]; /* the bounding cube: lowest corner ... */
  double box_size;   /* ... and side (> 0 even for one body) */
  tfmm_cell *cells;  /* cells[0] is the root */
  int64_t ncells;
  int32_t *leaves; /* the leaf cells, in key order */
  int64_t nleaves;
  int64_t *level_begin; /* cells of level l: [level_begin[l], level_begin[l+1]),
                           for l = 0 .. depth (depth + 2 entries) */
  int depth;            /* deepest level present (root only: 0) */
  int leaf_size;        /* L used */
  int max_depth;        /* the deepest level allowed */
  tfmm_tree_times times;
} tfmm_octree;

/* Builds the tree of n >= 1 bodies (finite positions, positive masses,
 * checked by the caller). A cell with more than leaf_size bodies is split
 * unless it is at max_depth (<= TFMM_MAX_DEPTH) or all its bodies share one
 * key (coincident or closer than the key resolution): such cells stay leaves
 * past leaf_size. n = 0, a NULL array, leaf_size < 1 or max_depth outside
 * [0, TFMM_MAX_DEPTH] is TFMM_ERR_INVALID_ARGUMENT naming it. *t is zeroed
 * first; release with tfmm_octree_free, also after a failure. OpenMP in
 * every stage; the stages' times are in t->times. */
tfmm_status tfmm_octree_build(tfmm_octree *t, size_t n, const double *pos,
                              const double *mass, int leaf_size, int max_depth,
                              tfmm_error *err);
/* The same with the keys taken in the cube box (lowest corner box[0..2],
 * side box[3] > 0) instead of the bodies' own: several trees (several
 * GPUs) then share one key space. A body outside it is
 * TFMM_ERR_INVALID_ARGUMENT naming the body. box NULL: tfmm_octree_build. */
tfmm_status tfmm_octree_build_in(tfmm_octree *t, size_t n, const double *pos,
                                 const double *mass, int leaf_size,
                                 int max_depth, const double box[4],
                                 tfmm_error *err);
void tfmm_octree_free(tfmm_octree *t);

/* Leaf occupancy: the fewest, mean and most bodies in a leaf. */
void tfmm_octree_occupancy(const tfmm_octree *t, int64_t *min, double *mean,
                           int64_t *max);

/* Keys: 21 bits per axis of the position in the cube [lo, lo + size),
 * interleaved x, y, z from the most significant bit (x highest). */
uint64_t tfmm_morton_encode(const double x[3], const double lo[3], double size);

/* Sorts keys ascending and applies the same permutation to idx (LSD radix
 * sort, 8 bits a pass, OpenMP). scratch: n of each. Stable. Passes whose
 * digit is the same in every key are skipped. */
void tfmm_radix_sort(size_t n, uint64_t *keys, int64_t *idx,
                     uint64_t *key_scratch, int64_t *idx_scratch);

#endif
