/* The upward pass on the GPU (issue 12): the multipoles of every cell of a
 * tree built by tfmm_tree_gpu_build, P2M at the leaves and then M2M level
 * by level up to the root, as src/farfield/passes.c's tfmm_upward_pass
 * does on the CPU.
 *
 * The formulas are the CPU's: src/farfield/operators.h, compiled here
 * without fused multiply-add, each coefficient summed over the same bodies
 * and children in the same order. For the same tree and order the
 * multipoles are therefore the CPU's bit for bit; the stated bound, which
 * tests/test_upward_gpu.c checks, is TFMM_UPWARD_GPU_TOL relative to
 * the cell's mass times its radius^n for degree n.
 *
 * Work: P2M one thread per (leaf, order m), each walking the leaf's
 * bodies and running the column's recurrence once a body (O(p) steps,
 * about 14 flops each, so ~7 p^2 flops a body in all: 5 * 10^8 at p = 8
 * for 1M bodies, ~15 us at the H100's 34 TFLOP/s in FP64), the column's
 * sums in registers (the loop unrolled to the order's size class). M2M one
 * block per parent cell, one launch per level: the children's harmonics and
 * multipoles expanded in shared memory, one thread a (child, entry), then one
 * thread a coefficient summing O(p^2) products per child. Depth + 1 launches on
 * the caller's stream, no host wait, no scratch in global memory (so no
 * workspace query). */
#ifndef TFMM_UPWARD_GPU_H
#define TFMM_UPWARD_GPU_H

#include "base/error.h"
#include "tree_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFMM_UPWARD_GPU_TOL 1e-13

/* M (device, tree->ncells * (p + 1)(p + 2) doubles, the layout of
 * src/farfield/expansion.c) receives the multipoles of order p,
 * 0 <= p <= TFMM_ORDER_MAX, about each cell's centre of mass
 * (tree->d_center). Enqueued on stream (a cudaStream_t; NULL: the legacy
 * default stream); returns without waiting. Invalid arguments are
 * TFMM_ERR_INVALID_ARGUMENT, launch failures TFMM_ERR_CUDA. */
tfmm_status tfmm_upward_gpu(const tfmm_tree_gpu *tree, int p, double *d_M,
                            void *stream, tfmm_error *err);

/* The same multipoles for the gpu schedule: P2M as tfmm_upward_gpu, then
 * M2M by one thread a parent (the order a template argument, the sums in
 * registers) by the CPU's formula in the CPU's order of sums, without
 * fused multiply-adds: within TFMM_UPWARD_GPU_TOL of the CPU's, as
 * tfmm_upward_gpu (tests/test_upward_gpu.c checks both; on the H100 every
 * coefficient tested was the CPU's bit for bit). Orders 0..5;
 * above, and for arguments it refuses, it is tfmm_upward_gpu. */
tfmm_status tfmm_upward_gpu_fast(const tfmm_tree_gpu *tree, int p, double *d_M,
                                 void *stream, tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
