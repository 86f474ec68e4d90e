/* M2P for the gpu schedule (farfield_gpu.h, tfmm_farfield_gpu_m2p_fast):
 * one warp a leaf, the lanes taking every 32nd entry of the M2P lists of
 * the leaf and of its ancestors, the 32 partial sums of each body then
 * added by a butterfly of shuffles (the same order every run). M2P goes
 * to targets of few bodies (TFMM_M2P_BODIES: lone bodies), whose lists
 * are long: one thread a body, as the CPU-equal kernel does, left 63 of a
 * block's 64 threads idle and walked a list of hundreds of sources alone
 * (2.2 of 13 ms at 262,144 bodies). The order is a template argument so
 * that the operators' loops (src/farfield/operators.h, the same formulas
 * as the CPU) are unrolled and their harmonics kept in registers.
 *
 * Cost per entry and body: the irregular harmonics of degrees 0..p + 1
 * (about 6 (p + 2)(p + 3) / 2 flops) and the evaluation (about 16
 * (p + 1)(p + 2) / 2 flops: ~550 flops in double at p = 5), the source's
 * M (2 (p + 1)(p + 2) / 2 doubles) read through the L1. */
#include "farfield_gpu.h"

#include "gpu_context.h"

#include "farfield/operators.h"
#include "order_dispatch.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int WARPS = 2; /* a block */
constexpr int FAST_ORDER_MAX = 8;

__device__ __forceinline__ double warp_sum(double v) {
  for (int k = 16; k >= 1; k >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

template <int P>
__global__ void __launch_bounds__(32 * WARPS)
    m2p_warp(int64_t nleaves, const int32_t *leaves, const int32_t *parent,
             const int32_t *body_begin, const int32_t *body_end,
             const int32_t *targets, const double *pos, const double *center,
             const int64_t *offset, const int32_t *index, const double *M,
             double *phi, double *grad) {
  constexpr int TRI = (P + 1) * (P + 2) / 2, TRI1 = (P + 2) * (P + 3) / 2;
  const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= nleaves)
    return; /* the whole warp */
  const int32_t leaf = leaves[w];
  if (targets != nullptr && targets[leaf] == 0)
    return; /* the whole warp: no target here */
  bool any = false;
  for (int32_t c = leaf; c >= 0 && !any; c = parent[c])
    any = offset[c + 1] > offset[c];
  if (!any)
    return; /* the whole warp */
  for (int32_t b = body_begin[leaf]; b < body_end[leaf]; b++) {
    const double x = pos[3 * (size_t)b], y = pos[3 * (size_t)b + 1],
                 z = pos[3 * (size_t)b + 2];
    double acc[4] = {0, 0, 0, 0};
    for (int32_t c = leaf; c >= 0; c = parent[c])
      for (int64_t e = offset[c] + lane; e < offset[c + 1]; e += 32) {
        const int32_t src = __ldg(index + e);
        double re[TRI1], im[TRI1], out[4];
        tfmm_op_irregular(P + 1, x - __ldg(center + 3 * (size_t)src),
                          y - __ldg(center + 3 * (size_t)src + 1),
                          z - __ldg(center + 3 * (size_t)src + 2), re, im);
        tfmm_op_m2p_eval(P, M + (size_t)src * (2 * TRI), re, im, out);
        for (int k = 0; k < 4; k++)
          acc[k] += out[k];
      }
    for (int k = 0; k < 4; k++)
      acc[k] = warp_sum(acc[k]);
    if (lane == 0) {
      phi[b] += acc[0];
      for (int k = 0; k < 3; k++)
        grad[3 * (size_t)b + k] += acc[1 + k];
    }
  }
}

template <int P>
tfmm_status launch(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *list,
                   const double *d_M, double *d_phi, double *d_grad,
                   cudaStream_t s, tfmm_error *err) {
  const int64_t n = tree->nleaves;
  m2p_warp<P><<<(unsigned)((n + WARPS - 1) / WARPS), 32 * WARPS, 0, s>>>(
      n, tree->d_leaves, tree->d_parent, tree->d_body_begin, tree->d_body_end,
      tree->d_targets, tree->d_pos, tree->d_center, list->offset, list->index,
      d_M, d_phi, d_grad);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status
tfmm_farfield_gpu_m2p_fast(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *list,
                           int p, const double *d_M, double *d_phi,
                           double *d_grad, void *stream, tfmm_error *err) {
  if (tree == NULL || list == NULL || p < 0 || p > FAST_ORDER_MAX ||
      tree->nleaves < 1 || list->ntargets != tree->ncells || d_M == NULL ||
      d_phi == NULL || d_grad == NULL)
    return tfmm_farfield_gpu_m2p(tree, list, p, d_M, d_phi, d_grad, stream,
                                 err);
  cudaStream_t s = (cudaStream_t)stream;
  return tfmm_order_dispatch<8>(p, [&](auto order) {
    return launch<decltype(order)::value>(tree, list, d_M, d_phi, d_grad, s,
                                          err);
  });
}
