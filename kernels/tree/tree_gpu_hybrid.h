/* The GPU tree for the hybrid schedule (issue 12): bodies on the host in,
 * the tree and its multipoles on the host out, built on the GPU
 * (tree_gpu.h, upward_gpu.h) where that is faster than the CPU's OpenMP
 * build, so that the CPU lists and far field can take them as they take
 * tfmm_octree_build's. The far field can run on the GPU too
 * (farfield_gpu.h), from the CPU's lists: then the multipoles stay on the
 * device and the far field's potentials and gradients come back. For the same
 * input the tree is the CPU's, array for array, and so are the multipoles (bit
 * for bit; TFMM_UPWARD_GPU_TOL is the bound the tests state): the hybrid
 * schedule gives the same forces with either tree. The gpu schedule
 * (pipeline_gpu.h) builds its tree with the same object.
 *
 * The device context (gpu_context.h, arena.h) owns what the tree uses:
 * its device, made current for each call and restored after it; its
 * SOLVE stream, on which all the work runs, each call returning with it
 * idle; and the four slots of the arena's TREE group (bodies, the tree's
 * workspace, the multipoles, the far field), kept between evaluations,
 * grown when N grows and released when the context is destroyed. One
 * context serves one tree object, since they share those slots. */
#ifndef TFMM_TREE_GPU_HYBRID_H
#define TFMM_TREE_GPU_HYBRID_H

#include "arena.h"
#include "base/error.h"
#include "tree_gpu.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tfmm_octree;

/* A list in CSR form by target cell (tree/lists.h): on the host, or
 * its copy on the device. */
typedef struct tfmm_tree_gpu_hybrid_list {
  int64_t ntargets;
  const int64_t *offset;
  const int32_t *index;
} tfmm_tree_gpu_hybrid_list;

/* Zero-initialise; release with tfmm_tree_gpu_hybrid_release. */
typedef struct tfmm_tree_gpu_hybrid {
  tfmm_gpu *gpu;      /* the context, from the first upload (not owned) */
  size_t n;           /* bodies uploaded, or 0 */
  tfmm_tree_gpu tree; /* the last tree built */
  int order;          /* of its multipoles (upward), or -1: none yet */
  int far_ready;      /* the far field's lists are uploaded */
  int far_fmm;        /* with M2L and the downward pass */
  tfmm_tree_gpu_hybrid_list far_m2l, far_m2p; /* their device copies */
} tfmm_tree_gpu_hybrid;

/* The tree's slots in its context's arena (arena.h). */
enum {
  TFMM_TREE_GPU_HYBRID_BODIES = TFMM_SLOTS_TREE, /* 3n positions, n masses */
  TFMM_TREE_GPU_HYBRID_WORK,                     /* the tree's workspace */
  TFMM_TREE_GPU_HYBRID_M,                        /* the multipoles */
  TFMM_TREE_GPU_HYBRID_FAR, /* the far field: L, phi, grad, lists */
  TFMM_TREE_GPU_HYBRID_SLOTS = TFMM_TREE_GPU_HYBRID_FAR + 1 - TFMM_SLOTS_TREE
};

/* The n bodies (1 <= n <= INT32_MAX; finite, positive masses: checked
 * by the caller) into the BODIES slot on gpu's device, waited for: host
 * arrays, or arrays of that device; none are copied when they are that
 * slot already (tfmm_tree_gpu_hybrid_bodies). h keeps gpu for the calls
 * that follow. */
tfmm_status tfmm_tree_gpu_hybrid_upload(tfmm_tree_gpu_hybrid *h, tfmm_gpu *gpu,
                                        size_t n, const double *pos,
                                        const double *mass, tfmm_error *err);

/* The tree (params) of the uploaded bodies, kept on the device in
 * h->tree. */
tfmm_status tfmm_tree_gpu_hybrid_build(tfmm_tree_gpu_hybrid *h,
                                       const tfmm_tree_gpu_params *params,
                                       tfmm_error *err);

/* That tree refit to the bodies uploaded since (tfmm_tree_gpu_refit): as
 * many as it was built of, the same bodies in the same slots, moved. Its
 * multipoles and lists are then gone, as after a build, and so are its
 * targets (d_targets NULL). timed as the build's params.timed. */
tfmm_status tfmm_tree_gpu_hybrid_refit(tfmm_tree_gpu_hybrid *h, int timed,
                                       tfmm_error *err);

/* That tree copied into *out (tree_gpu.h, tfmm_tree_gpu_copy: zeroed
 * first; release with tfmm_octree_free, also after a failure). */
tfmm_status tfmm_tree_gpu_hybrid_download(tfmm_tree_gpu_hybrid *h,
                                          struct tfmm_octree *out,
                                          tfmm_error *err);

/* Room for n bodies in the BODIES slot (3n positions, then n masses; the
 * contents are not kept when it grows), on h's device (entered); *bodies
 * gets the slot's pointer. The gpu schedule writes its scaled device
 * bodies there, and the build then takes them where they are (pos ==
 * bodies, mass == bodies + 3n: no copy). */
tfmm_status tfmm_tree_gpu_hybrid_bodies(tfmm_tree_gpu_hybrid *h, size_t n,
                                        double **bodies, tfmm_error *err);

/* The multipoles of order p of the last tree built, kept on the device
 * (the M slot), waited for. fast nonzero: M2M by tfmm_upward_gpu_fast
 * (the gpu schedule's, to rounding), else tfmm_upward_gpu (the CPU's
 * bits, which hybrid copies out). */
tfmm_status tfmm_tree_gpu_hybrid_upward(tfmm_tree_gpu_hybrid *h, int p,
                                        int fast, tfmm_error *err);

/* The same enqueued on `stream` (a cudaStream_t of h's device) and not
 * waited for: the caller orders what reads M after it. */
tfmm_status tfmm_tree_gpu_hybrid_upward_on(tfmm_tree_gpu_hybrid *h, int p,
                                           int fast, void *stream,
                                           tfmm_error *err);

/* Those multipoles copied to M (host, ncells (p + 1)(p + 2) doubles). */
tfmm_status tfmm_tree_gpu_hybrid_upward_download(tfmm_tree_gpu_hybrid *h,
                                                 double *M, tfmm_error *err);

/* The far field of the last tree and its multipoles on the GPU, in
 * three steps: the lists uploaded (with m2l, FMM: M2L, L2L and L2P, then
 * M2P over m2p; m2l NULL: Barnes-Hut, M2P only); the passes enqueued;
 * phi and grad (host, n and 3n doubles, sorted order, overwritten) copied
 * back and waited for: equal to the CPU passes' bit for bit. */
tfmm_status tfmm_tree_gpu_hybrid_far_upload(
    tfmm_tree_gpu_hybrid *h, const tfmm_tree_gpu_hybrid_list *m2l,
    const tfmm_tree_gpu_hybrid_list *m2p, tfmm_error *err);
tfmm_status tfmm_tree_gpu_hybrid_far(tfmm_tree_gpu_hybrid *h, tfmm_error *err);
tfmm_status tfmm_tree_gpu_hybrid_far_download(tfmm_tree_gpu_hybrid *h,
                                              double *phi, double *grad,
                                              tfmm_error *err);

/* Makes gpu's device current (*previous: the one to restore, or -1) and
 * h's context gpu; h already in another context is an error. */
tfmm_status tfmm_tree_gpu_hybrid_enter(tfmm_tree_gpu_hybrid *h, tfmm_gpu *gpu,
                                       int *previous, tfmm_error *err);

/* The context's SOLVE stream, on which h's work runs (a cudaStream_t). */
void *tfmm_tree_gpu_hybrid_stream(const tfmm_tree_gpu_hybrid *h);

/* Restores the previous device; returns st. */
tfmm_status tfmm_tree_gpu_hybrid_leave(int previous, tfmm_status st);

/* Forgets the context (whose arena keeps the slots until it is destroyed,
 * before or after this call); h is zeroed and reusable. */
void tfmm_tree_gpu_hybrid_release(tfmm_tree_gpu_hybrid *h);

#ifdef __cplusplus
}
#endif

#endif
