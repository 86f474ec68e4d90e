/* The near field's inputs made on the device from a tree and its near list
 * (the gpu schedule's near stage), the same arrays that the hybrid
 * schedule packs on the CPU (p2p_gpu.c) and by the same rule
 * (src/nearfield/near_items.h): bodies relative to their leaf's origin
 * (near_frame.h), the leaves' origins, reaches and extents, the list entries as
 * leaf positions, and the work items and splits of the tiled kernel
 * (near_tiled.cu).
 *
 * Three entry points, each enqueued on the caller's stream (a
 * cudaStream_t of the current device; NULL: the legacy default stream)
 * over device arrays, without allocating or waiting: pack, then count
 * (whose totals the caller reads to size the items), then write. Cost:
 * pack and the entries read each body and entry once; count and write one
 * warp a leaf, reading its list 32 entries at a time. */
#ifndef TFMM_NEAR_INPUTS_GPU_H
#define TFMM_NEAR_INPUTS_GPU_H

#include "base/error.h"
#include "base/pair.h"
#include "nearfield/near_items.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tree's arrays that the packing reads (tree_gpu.h's, on the device),
 * and the near list (CSR by leaf, entries as cell indices). */
typedef struct tfmm_near_inputs_tree {
  int64_t n, ncells, nleaves;
  const int32_t *leaves;     /* nleaves: the leaves' cells, in key order */
  const int32_t *body_begin; /* ncells */
  const int32_t *body_end;   /* ncells */
  const double *pos;         /* 3 n, sorted */
  const double *mass;        /* n, sorted */
  int64_t nentries;          /* entries of the near list */
  const int32_t *index;      /* nentries: source cells */
} tfmm_near_inputs_tree;

/* Where the packing writes (device arrays). */
typedef struct tfmm_near_inputs_packed {
  void *body;            /* 4 n in precision: x, y, z relative to the leaf,
                            mass */
  double *centre;        /* 3 nleaves: the leaves' origins */
  double *frame;         /* 2 nleaves: their reaches and scales
                            (near_frame.h) */
  int32_t *leaf_begin;   /* nleaves + 1 */
  int32_t *position;     /* ncells: a leaf cell's position among leaves */
  int32_t *list_leaf;    /* nentries: the entries as leaf positions */
  int32_t *entry_bodies; /* nentries: each entry's source bodies */
} tfmm_near_inputs_packed;

/* Bodies, origins, frames (with the softening length eps), leaf extents
 * and entries (one block a leaf, then one thread an entry). */
tfmm_status tfmm_near_inputs_gpu_pack(const tfmm_near_inputs_tree *tree,
                                      tfmm_precision precision, double eps,
                                      const tfmm_near_inputs_packed *out,
                                      void *stream, tfmm_error *err);

/* Every leaf's items, splits and slots counted into counts (three arrays
 * of m = v->nleaves + 1: items, splits, slots; the last entries 0) and
 * scanned into starts (three arrays of m, exclusive: the totals at
 * starts[k m + nleaves]); the least and most bodies of a leaf into
 * occupancy[0] and [1]. CUB's way: with scratch NULL only
 * *scratch_bytes is set and nothing is enqueued. */
tfmm_status tfmm_near_inputs_gpu_count(void *scratch, size_t *scratch_bytes,
                                       const tfmm_near_view *v, int64_t budget,
                                       int64_t *counts, int64_t *starts,
                                       unsigned long long *occupancy,
                                       void *stream, tfmm_error *err);

/* The items and splits written where starts puts them (item: as many as
 * the items' total; split: the splits'). */
tfmm_status tfmm_near_inputs_gpu_write(const tfmm_near_view *v, int64_t budget,
                                       const int64_t *starts,
                                       tfmm_gpu_near_item *item,
                                       tfmm_gpu_near_split *split, void *stream,
                                       tfmm_error *err);

/* After the near field's kernels (single precision; nothing in double):
 * the leaves that near_frame.h's rule runs in double (from the packed
 * origins, reaches and scales), summed so from the tree's positions and masses
 * and written over out (4 floats a sorted body), one block a leaf
 * (tfmm_p2p_cpu_exact's rule and sums). */
tfmm_status tfmm_near_inputs_gpu_exact(const tfmm_near_inputs_tree *tree,
                                       const tfmm_near_view *v,
                                       const double *centre,
                                       const double *frame,
                                       const tfmm_pair_params *pair, void *out,
                                       void *stream, tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
