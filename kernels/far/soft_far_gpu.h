/* The far field with Plummer's softened kernel on the GPU (issue 28): the
 * Cartesian Taylor expansions of src/farfield/soft_taylor.h, whose
 * arithmetic (src/farfield/soft_taylor_ops.h) the CPU's passes
 * (src/farfield/soft_passes.h) share, over a tree built by
 * tfmm_tree_gpu_build and the GPU traversal's lists. With the kernel in
 * the expansions no pair needs a softening separation: the lists are
 * those of eps = 0.
 *
 * Everything is in double. The expansions are about each cell's centre of
 * mass (tree->d_center), tfmm_soft_far_gpu_size(p) doubles a cell, orders
 * 0..TFMM_SOFT_TAYLOR_ORDER_MAX (12). Results equal the CPU's passes to
 * rounding (the operators' sums are the CPU's; fused multiply-adds and
 * the warps' reductions regroup them): tests/test_soft_far_gpu.c states
 * the bound it checks.
 *
 * Work (S = (p + 1)(p + 2)(p + 3) / 6, 165 at p = 8):
 *   upward: P2M one thread a leaf (its bodies in turn), then M2M one
 *           warp a parent, a lane a coefficient, one launch a level,
 *           deepest first;
 *   M2L:    one warp a target cell (the derivatives of the separation,
 *           3 C(p + 4, 4) flops, and the contraction, 2 C(p + 6, 6):
 *           2,500 at p = 6, 7,500 at p = 8). Below order 8 its lanes
 *           take its list's sources in turn, each lane the whole
 *           translation in local memory, and the 32 partial expansions
 *           are added by shuffles; from 8 the warp takes one source at a
 *           time, the derivatives a level at a time in shared memory (a
 *           lane a value), then each lane the contractions of its
 *           coefficients (measured: soft_far_gpu.cu);
 *   L2L:    one thread a cell, one launch a level from level 1 down;
 *   L2P:    one warp a leaf, one lane a body;
 *   M2P:    one warp a leaf, its lanes over the M2P lists of the leaf and
 *           its ancestors, a body at a time, added by shuffles.
 * The thread-a-cell kernels and M2L below order 8 keep each thread's
 * expansions and the derivatives' levels in local memory (about 6 KiB at
 * p = 8). Every function enqueues on the caller's
 * stream (a cudaStream_t; NULL: the legacy default stream), returns
 * without waiting and needs no scratch in global memory. Targets of a
 * subset (tree->d_targets, when set) limit L2L, L2P and M2P to the cells
 * and leaves that hold one. */
#ifndef TFMM_SOFT_FAR_GPU_H
#define TFMM_SOFT_FAR_GPU_H

#include "base/error.h"
#include "farfield_gpu.h"
#include "tree_gpu.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Doubles of one cell's expansion of order p. */
size_t tfmm_soft_far_gpu_size(int p);

/* M (ncells * tfmm_soft_far_gpu_size(p) doubles) receives the multipoles
 * of every cell; overwritten. */
tfmm_status tfmm_soft_far_gpu_upward(const tfmm_tree_gpu *tree, int p,
                                     double *d_M, void *stream,
                                     tfmm_error *err);

/* L (as M) = for every target cell the sum over its M2L list of
 * M2L(M[source]) with softening eps; overwritten. */
tfmm_status tfmm_soft_far_gpu_m2l(const tfmm_tree_gpu *tree,
                                  const tfmm_csr_gpu *m2l, int p, double eps,
                                  const double *d_M, double *d_L, void *stream,
                                  tfmm_error *err);

/* L2L from level 1 down (L updated in place), then L2P at the leaves:
 * phi[k] and grad[3k..] of sorted body k are ADDED its leaf's local
 * expansion and its gradient. */
tfmm_status tfmm_soft_far_gpu_downward(const tfmm_tree_gpu *tree, int p,
                                       double *d_L, double *d_phi,
                                       double *d_grad, void *stream,
                                       tfmm_error *err);

/* phi and grad of every body ADDED the multipoles on the M2P lists of its
 * leaf and of each ancestor, with softening eps. */
tfmm_status tfmm_soft_far_gpu_m2p(const tfmm_tree_gpu *tree,
                                  const tfmm_csr_gpu *m2p, int p, double eps,
                                  const double *d_M, double *d_phi,
                                  double *d_grad, void *stream,
                                  tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
