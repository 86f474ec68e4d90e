/* The octree built on the GPU (issue 12), from device-resident bodies:
 *
 *   keys:    the bounding cube by a CUB reduction, 63-bit Morton keys;
 *   sort:    cub::DeviceRadixSort of (key, index) pairs, stable;
 *   gather:  positions and masses into key order;
 *   cells:   level by level from the sorted keys: a count of each cell's
 *            children, a CUB scan placing them, a scatter writing them
 *            (stream compaction, Horn, GPU Gems 2 ch. 36); the leaves in key
 *            order by cub::DeviceSelect;
 *   moments: cube, mass, centre of mass and radius, leaves first, then the
 *            levels bottom up.
 *
 * It follows src/tree/octree.c rule for rule, so that for the same input
 * the tree is the CPU's: the same cube (same formula, in double), the same
 * keys, the same body order (both sorts are stable), the same cells in the
 * same breadth-first order, the same leaves and level_begin. The moments
 * are computed by the CPU's formulas in the CPU's order of summation with
 * no fused multiply-add, so on a CPU build without FMA contraction they
 * agree bit for bit; the stated bound (tests/test_tree_gpu.c) is
 * TFMM_TREE_GPU_MOMENT_TOL relative: mass to the cell's mass, centre and
 * radius to the cell's side.
 *
 * Plain C. The stream is a cudaStream_t passed as void * (NULL: the legacy
 * default stream). Scratch is sized in two calls, as CUB does: with
 * workspace == NULL, tfmm_tree_gpu_build stores the bytes it needs in
 * *workspace_bytes and does nothing else. The tree's device arrays point
 * into the caller's workspace and live as long as it does. The build waits
 * on the stream once per level (the next level's size is needed on the host
 * to launch it). */
#ifndef TFMM_TREE_GPU_H
#define TFMM_TREE_GPU_H

#include "base/error.h"
#include "tilefmm.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tfmm_octree;

/* Relative bound on the moments against the CPU's (see above). */
#define TFMM_TREE_GPU_MOMENT_TOL 1e-12

/* Levels: root 0 .. 21, the deepest a 63-bit key names. */
enum { TFMM_TREE_GPU_LEVELS = 22 };

typedef struct tfmm_tree_gpu_params {
  int leaf_size;     /* L >= 1: a cell of more bodies is split ... */
  int max_depth;     /* ... unless at this level, 0 .. 21 */
  int64_t max_cells; /* room for this many cells; 0: the bound that always
                        holds, 1 + max_depth min(n, 8 floor(n / (L + 1)));
                        a tree that needs more fails with
                        TFMM_ERR_NO_MEMORY naming the count */
  int timed;         /* whether to time the stages (CUDA events) */
  int host_levels;   /* 1: the cells level by level from the host (a wait a
                        level), as before one cooperative launch built them
                        all; the same cells either way (a check of it). 0:
                        one launch where the device can */
  double box[4];     /* the cube the keys are taken in: lowest corner and
                        side, as tfmm_octree_build_in takes it (several
                        trees then share one key space; a body outside is
                        TFMM_ERR_INVALID_ARGUMENT naming it); side 0: the
                        bodies' own bounding cube */
} tfmm_tree_gpu_params;

/* Milliseconds of each stage, by CUDA events, when params.timed. */
typedef struct tfmm_tree_gpu_times {
  double keys, sort, gather, cells, moments, total;
} tfmm_tree_gpu_times;

/* The tree. Device arrays (d_) point into the workspace; the counts and
 * level_begin are on the host once the build returns. Cells are structure
 * of arrays, stored as tfmm_cell's fields (src/tree/octree.h). */
typedef struct tfmm_tree_gpu {
  size_t n;
  int64_t max_cells;
  double *d_pos;        /* 3n positions in key order */
  double *d_mass;       /* n masses in key order */
  int32_t *d_order;     /* input index of sorted body k */
  uint64_t *d_keys;     /* n keys, ascending */
  double *d_box;        /* box_min[3], box_size */
  double *d_center;     /* 3 a cell: centre of mass */
  double *d_radius;     /* max |x_i - center| over its bodies */
  double *d_radius0;    /* d_radius at the build (a refit's growth) */
  double *d_cmass;      /* total mass */
  double *d_box_center; /* 3 a cell: its cube's centre ... */
  double *d_size;       /* ... and side */
  int32_t *d_level, *d_parent, *d_child_begin, *d_child_count;
  int32_t *d_body_begin, *d_body_end; /* [begin, end) in key order */
  int32_t *d_leaves;                  /* the leaf cells in key order */
  const int32_t *d_targets;           /* per cell: the targets it holds when the
                                         evaluation is at a subset of the bodies
                                         (set after the build by its user; NULL,
                                         as the build leaves it: every body). The
                                         traversal drops the pairs of target cells
                                         without one, the fast L2L, L2P and M2P skip
                                         such cells and leaves */
  double box_min[3], box_size;        /* host copies */
  int64_t ncells, nleaves;
  int64_t level_begin[TFMM_TREE_GPU_LEVELS + 1];
  int depth, leaf_size, max_depth;
  double growth; /* 1 after a build; after a refit, the mean over the leaves
                    of (r / r0)^3, r a leaf's radius now and r0 at the
                    build (1 where r0 is 0): how much farther its pairs
                    reach, which the near field's work follows */
  tfmm_tree_gpu_times times;
} tfmm_tree_gpu;

/* Builds the tree of n bodies (1 <= n <= INT32_MAX; finite positions and
 * positive masses, checked by the caller) from device arrays d_pos (3n)
 * and d_mass (n) on `stream`. With workspace NULL: stores the bytes needed
 * in *workspace_bytes and returns. Else *workspace_bytes is the size of
 * workspace (at least that). Invalid arguments (as tfmm_octree_build names
 * them) are TFMM_ERR_INVALID_ARGUMENT, CUDA failures TFMM_ERR_CUDA, a
 * tree beyond max_cells TFMM_ERR_NO_MEMORY; the message is in err. Returns
 * with the stream idle. */
tfmm_status tfmm_tree_gpu_build(void *workspace, size_t *workspace_bytes,
                                size_t n, const double *d_pos,
                                const double *d_mass,
                                const tfmm_tree_gpu_params *params,
                                tfmm_tree_gpu *tree, void *stream,
                                tfmm_error *err);

/* Refits a built tree to its bodies moved (issue 31; GADGET-4 and SWIFT
 * drift their trees between rebuilds): the cells, their cubes, their
 * bodies and the bodies' order stay the build's; the bodies d_pos and
 * d_mass (input order, as many as built, the same bodies in the same
 * slots) are gathered again through d_order, and every cell's mass,
 * centre of mass and radius are computed anew from them, by the build's
 * kernels. The opening criterion reads centres and radii only, so a
 * refit tree gives forces as accurate as a built one; what a refit costs
 * is work: bodies that strayed widen their leaves, and more pairs of
 * cells fail the criterion (tree->growth measures it). A body may leave
 * its cell's cube, or the root's. workspace and workspace_bytes are the
 * build's. Returns with the stream idle; times as the build's, with keys,
 * sort and cells 0. */
tfmm_status tfmm_tree_gpu_refit(void *workspace, size_t workspace_bytes,
                                const double *d_pos, const double *d_mass,
                                int timed, tfmm_tree_gpu *tree, void *stream,
                                tfmm_error *err);

/* Copies a built tree into a host tfmm_octree (zeroed first; release with
 * tfmm_octree_free, also after a failure), field for field as
 * tfmm_octree_build fills it; times are left zero. In tree_gpu_copy.c,
 * the one file of kernels/ that sees src/tree/octree.h. */
tfmm_status tfmm_tree_gpu_copy(const tfmm_tree_gpu *tree,
                               struct tfmm_octree *out, void *stream,
                               tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
