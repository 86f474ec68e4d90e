/* The far field on the GPU (issue 13): M2L over the interaction lists,
 * the downward pass (L2L level by level, then L2P at the leaves) and M2P,
 * as src/farfield/passes.c does them on the CPU, over a tree built by
 * tfmm_tree_gpu_build and multipoles from tfmm_upward_gpu.
 *
 * The formulas are the CPU's (src/farfield/operators.h, compiled without
 * fused multiply-add), each result summed in the CPU's order: for the same
 * tree, lists and multipoles the local expansions, potentials and
 * gradients are the CPU's bit for bit. tests/test_farfield_gpu.c states
 * the bound it checks (TFMM_FARFIELD_GPU_TOL, relative).
 *
 * Work and cost (p the order; flops in double):
 *   M2L: one block a target cell, its four warps translating four of its
 *        sources at a time (per source: the irregular harmonics of the
 *        unit vector, one lane a column; both full arrays; then one lane a
 *        coefficient), the contributions added to L in list order:
 *        sum_{n<=p} (n + 1)(p - n + 1)^2 complex multiply-adds (825 at
 *        p = 8, ~6600 flops) per translation.
 *   L2L: one block a cell, one launch per level, like M2L with R.
 *   L2P, M2P: one thread a body (blocks of a leaf's bodies), harmonics in
 *        local arrays sized for the order's class (p <= 8, 14, 20);
 *        O(p^2) flops a body per expansion.
 * Every function enqueues on the caller's stream (a cudaStream_t; NULL: the
 * legacy default stream) and returns without waiting; none needs scratch
 * in global memory. */
#ifndef TFMM_FARFIELD_GPU_H
#define TFMM_FARFIELD_GPU_H

#include "base/error.h"
#include "tree_gpu.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFMM_FARFIELD_GPU_TOL 1e-13

/* A list in CSR form by target (src/tree/lists.h), in device memory. */
typedef struct tfmm_csr_gpu {
  int64_t ntargets;      /* cells */
  const int64_t *offset; /* ntargets + 1 */
  const int32_t *index;  /* source cells */
} tfmm_csr_gpu;

/* L (ncells * (p + 1)(p + 2) doubles) = for every target cell the sum over
 * its list of M2L(M[source]); overwritten. */
tfmm_status tfmm_farfield_gpu_m2l(const tfmm_tree_gpu *tree,
                                  const tfmm_csr_gpu *m2l, int p,
                                  const double *d_M, double *d_L, void *stream,
                                  tfmm_error *err);

/* The same M2L for the gpu schedule (m2l_fast_gpu.cu): a group of lanes
 * a target (1 to 32, by the number of cells), fused multiply-adds, the
 * sums regrouped; equal to
 * tfmm_farfield_gpu_m2l to rounding, not bit for bit. Orders 0..8; above,
 * and for arguments that kernel refuses, it is tfmm_farfield_gpu_m2l.
 * The bound TFMM_FARFIELD_GPU_FAST_TOL is relative to a cell's largest
 * coefficient: a coefficient is a sum whose terms can be far larger than
 * it (on a line of bodies, order 7, a term-to-sum ratio of ~1e4 gave a
 * difference of 3.2e-12), so summing in another order moves it by about
 * 1e-16 times the terms, not times the result. 1e-10 stays two orders
 * below the finest accuracy the solver offers (1e-8, tfmm_config.accuracy
 * in double), which the accuracy tests check against direct sums. */
#define TFMM_FARFIELD_GPU_FAST_TOL 1e-10
tfmm_status tfmm_farfield_gpu_m2l_fast(const tfmm_tree_gpu *tree,
                                       const tfmm_csr_gpu *m2l, int p,
                                       const double *d_M, double *d_L,
                                       void *stream, tfmm_error *err);

/* The lanes a target that tfmm_farfield_gpu_m2l_fast (and _float, lanes
 * 0) gives a tree of `targets` cells: more for fewer. An evaluation at a
 * subset of the bodies, whose M2L lists are empty but at the cells that
 * hold a target, asks for the lanes of those cells instead: the same
 * work over as many lanes as a whole tree keeps busy (the order of the
 * sums, and so the last bits, then follow the lanes). */
int tfmm_farfield_gpu_m2l_lanes_for(int64_t targets);

/* tfmm_farfield_gpu_m2l_fast with the lanes a target given: a power of
 * two from 1 to 32, or 0 for the choice tfmm_farfield_gpu_m2l_fast makes
 * (the tests compare every group size with the CPU). The sums' order, and
 * so the last bits, depend on it. */
tfmm_status tfmm_farfield_gpu_m2l_lanes(const tfmm_tree_gpu *tree,
                                        const tfmm_csr_gpu *m2l, int p,
                                        int lanes, const double *d_M,
                                        double *d_L, void *stream,
                                        tfmm_error *err);

/* L2L from level 1 down (L updated in place), then L2P at the leaves:
 * phi[k] = Phi and grad[3k..] = grad Phi of sorted body k (overwritten). */
tfmm_status tfmm_farfield_gpu_downward(const tfmm_tree_gpu *tree, int p,
                                       double *d_L, double *d_phi,
                                       double *d_grad, void *stream,
                                       tfmm_error *err);

/* The same M2L in float (orders 0..TFMM_FARFIELD_GPU_FLOAT_ORDER_MAX;
 * above, the exact kernel in double), used by the gpu schedule beside a
 * single-precision near field. Every factor of a translation is made a
 * ratio of lengths at most 1 (m2l_fast_gpu.cu, m2l_group): the source's
 * multipoles are scaled into d_Ms (tfmm_farfield_gpu_m2l_float_bytes
 * (ncells, p) bytes of the caller's) as M_l / b^l with b its radius, the
 * harmonics formed at the unit vector, and each translation's sums
 * multiplied by (b / |D|)^l and (a / |D|)^{j+1}, a the target's radius
 * (or, for a target whose bodies are all at its centre, a length no
 * larger than its nearest source's distance); L is unscaled and written in
 * double. The opening criterion keeps those ratios below theta, so no
 * factor leaves float's range however many levels a pair's cells lie
 * apart or however tightly a cell's bodies are packed; what underflows
 * reaches the bodies below float's precision. Error: float's rounding
 * times the ratio of a sum's terms to the sum (tests/test_farfield_gpu.c
 * states the bound it checks and logs the worst it sees). */
#define TFMM_FARFIELD_GPU_FLOAT_ORDER_MAX 8
size_t tfmm_farfield_gpu_m2l_float_bytes(int64_t ncells, int p);
tfmm_status tfmm_farfield_gpu_m2l_float(const tfmm_tree_gpu *tree,
                                        const tfmm_csr_gpu *m2l, int p,
                                        int lanes, const double *d_M,
                                        float *d_Ms, double *d_L, void *stream,
                                        tfmm_error *err);

/* The L2L half of tfmm_farfield_gpu_downward (L updated in place, level 1
 * down), for a schedule that takes L2P from tfmm_farfield_gpu_l2p_fast. */
tfmm_status tfmm_farfield_gpu_l2l(const tfmm_tree_gpu *tree, int p, double *d_L,
                                  void *stream, tfmm_error *err);

/* L2L for the gpu schedule (l2l_fast_gpu.cu): one thread a cell, the
 * order a template argument, fused multiply-adds; L updated in place from
 * level 1 down, equal to tfmm_farfield_gpu_l2l to rounding (relative to a
 * cell's largest coefficient, as TFMM_FARFIELD_GPU_FAST_TOL), not bit for
 * bit. Orders 0..7; above, and for arguments it refuses, it is
 * tfmm_farfield_gpu_l2l. */
tfmm_status tfmm_farfield_gpu_l2l_fast(const tfmm_tree_gpu *tree, int p,
                                       double *d_L, void *stream,
                                       tfmm_error *err);

/* The L2P half: phi and grad of every sorted body overwritten by its
 * leaf's local expansion (the CPU's bits). */
tfmm_status tfmm_farfield_gpu_l2p(const tfmm_tree_gpu *tree, int p,
                                  const double *d_L, double *d_phi,
                                  double *d_grad, void *stream,
                                  tfmm_error *err);

/* L2P for the gpu schedule (l2p_fast_gpu.cu): one warp a leaf, one lane a
 * body, the order a template argument (the harmonics in registers), fused
 * multiply-adds; phi and grad of every sorted body overwritten, equal to
 * tfmm_farfield_gpu_downward's L2P to rounding (relative to the largest
 * term, as TFMM_FARFIELD_GPU_FAST_TOL), not bit for bit. Orders 0..8;
 * above, the CPU-equal kernel. */
tfmm_status tfmm_farfield_gpu_l2p_fast(const tfmm_tree_gpu *tree, int p,
                                       const double *d_L, double *d_phi,
                                       double *d_grad, void *stream,
                                       tfmm_error *err);

/* phi and grad of every body ADDED the multipoles on the M2P lists of its
 * leaf and of each ancestor, leaf first (tfmm_m2p_pass). */
tfmm_status tfmm_farfield_gpu_m2p(const tfmm_tree_gpu *tree,
                                  const tfmm_csr_gpu *m2p, int p,
                                  const double *d_M, double *d_phi,
                                  double *d_grad, void *stream,
                                  tfmm_error *err);

/* The same M2P for the gpu schedule (m2p_fast_gpu.cu): one warp a leaf,
 * the lanes over the list entries, fused multiply-adds, the sums
 * regrouped; equal to tfmm_farfield_gpu_m2p to rounding (relative to the
 * largest term, as TFMM_FARFIELD_GPU_FAST_TOL), not bit for bit. Orders
 * 0..8; above, it is tfmm_farfield_gpu_m2p. */
tfmm_status tfmm_farfield_gpu_m2p_fast(const tfmm_tree_gpu *tree,
                                       const tfmm_csr_gpu *m2p, int p,
                                       const double *d_M, double *d_phi,
                                       double *d_grad, void *stream,
                                       tfmm_error *err);

#ifdef __cplusplus
}
#endif

#endif
