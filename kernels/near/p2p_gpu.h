/* The near field on the GPU, its host half (the device layer's; built
 * with or without CUDA, over gpu.h): the tree's bodies and leaf neighbour
 * lists packed into the pinned arrays of tfmm_gpu_near_host (the kernel
 * sees only bodies and lists, never the tree); its upload, kernels and
 * download enqueued (gpu.h), and waited for. The CPU stages know no GPU: the
 * hybrid schedule's stages (src/pipeline/stages.c) join the two. */
#ifndef TFMM_P2P_GPU_H
#define TFMM_P2P_GPU_H

#include "gpu.h"
#include "nearfield/near_items.h"
#include "tree/lists.h"

/* The most interactions one work item may take when the near field has
 * `total` on a GPU of sm_count multiprocessors: total / (16384 sm_count /
 * 132), about four items for every warp the GPU holds (on an H100, 132
 * SMs: a 16384th, as tuned there), and at least 65536. */
int64_t tfmm_p2p_gpu_budget(double total, int sm_count);

/* The work items of the near field (tfmm_gpu_near_item): every leaf's
 * bodies in chunks of at most TFMM_NEAR_ITEM_MAX, as even as possible (a
 * leaf of 100 bodies gives chunks of 50 and 50, not 64 and 36), as many as
 * keep most lanes busy (a leaf of 40 gives two chunks of 20, which a warp
 * holds three times over, rather than one it holds once); each chunk's
 * width is ceil(count / 2). A chunk's list is cut into consecutive runs of
 * entries of at most `budget` interactions each (a run holds at least one
 * entry), with a split (tfmm_gpu_near_split) when there is more than one.
 * Items follow the leaves' key order (near_items.h holds the rule, for
 * the CPU and the GPU). Sets sz->nitems, nsplits and nslots,
 * and writes the items and splits when item and split are not NULL (sized
 * by a first call with NULL). Returns -1 when out of memory, else 0. */
int tfmm_p2p_gpu_items(const tfmm_near_view *v, int64_t budget,
                       tfmm_gpu_near_size *sz, tfmm_gpu_near_item *item,
                       tfmm_gpu_near_split *split);

/* One launched evaluation. */
typedef struct tfmm_p2p_gpu_run {
  tfmm_gpu_near_size size;
  tfmm_gpu_near_host host;
  double launched; /* tfmm_wtime() when the work was enqueued */
} tfmm_p2p_gpu_run;

/* Packs t and near (near->ntargets == t->nleaves, `total` interactions)
 * in a precision into the pinned arrays of run, reserved for them
 * (tfmm_gpu_near_reserve): sets run->size and run->host. */
tfmm_status tfmm_p2p_gpu_pack(tfmm_gpu *gpu, const tfmm_octree *t,
                              const tfmm_csr *near, double total,
                              tfmm_precision precision, tfmm_p2p_gpu_run *run,
                              tfmm_error *err);

/* Enqueues the packed near field's upload, kernels (with pair's softening;
 * its precision the packing's) and download, in that order, on the
 * context's NEAR stream, and returns without waiting; sets run->launched. */
tfmm_status tfmm_p2p_gpu_launch(tfmm_gpu *gpu, const tfmm_pair_params *pair,
                                int potential, tfmm_p2p_gpu_run *run,
                                tfmm_error *err);

/* Waits for it: run->host.out then holds 4 values per sorted body
 * (acceleration, potential; G = 1), floats or doubles as
 * run->host.precision says. */
tfmm_status tfmm_p2p_gpu_wait(tfmm_gpu *gpu, tfmm_p2p_gpu_run *run,
                              tfmm_gpu_times *times, tfmm_error *err);

#endif
