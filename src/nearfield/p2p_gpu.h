/* The near field on the GPU: the tree's bodies and leaf neighbour lists
 * packed into the pinned arrays of tfmm_gpu_near_host (the kernel sees
 * only bodies and lists, never the tree), launched asynchronously, and
 * waited for. */
#ifndef TFMM_P2P_GPU_H
#define TFMM_P2P_GPU_H

#include "gpu.h"
#include "tree/lists.h"

/* The work items of the near field: every leaf's bodies in chunks of at
 * most TFMM_NEAR_ITEM_MAX, as even as possible (a leaf of 100 bodies gives
 * two of 50, not 64 and 36), each with the narrowest power-of-two width
 * that holds it two bodies per lane. Items follow the leaves' key order.
 * Returns the number of items; writes them when item is not NULL. */
int64_t tfmm_p2p_gpu_items(const tfmm_octree *t, tfmm_gpu_near_item *item);

/* One launched evaluation. */
typedef struct tfmm_p2p_gpu_run {
  tfmm_gpu_near_size size;
  tfmm_gpu_near_host host;
  double launched; /* tfmm_wtime() when the work was enqueued */
} tfmm_p2p_gpu_run;

/* Packs t and near (near->ntargets == t->nleaves) and enqueues the near
 * field with softening eps; returns without waiting. */
tfmm_status tfmm_p2p_gpu_launch(tfmm_gpu *gpu, const tfmm_octree *t,
                                const tfmm_csr *near, double eps, int potential,
                                tfmm_p2p_gpu_run *run, tfmm_error *err);

/* Waits for it: run->host.out then holds 4 floats per sorted body
 * (acceleration, potential; G = 1). */
tfmm_status tfmm_p2p_gpu_wait(tfmm_gpu *gpu, tfmm_p2p_gpu_run *run,
                              tfmm_gpu_times *times, tfmm_error *err);

#endif
