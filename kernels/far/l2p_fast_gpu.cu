/* L2P for the gpu schedule (farfield_gpu.h, tfmm_farfield_gpu_l2p_fast):
 * one warp a leaf, one lane a body (every 32nd of a larger leaf), the
 * leaf's local expansion read by every lane (one broadcast load a
 * coefficient). The order is a template argument, so that the operators'
 * loops (src/farfield/operators.h: the regular harmonics from the tables
 * of tfmm_op_regular_factors, then tfmm_op_l2p_eval; the CPU's formulas)
 * are unrolled and the harmonics kept in registers. The CPU-equal kernel
 * (farfield_gpu.cu) takes the order at run time, keeps its harmonics in
 * local memory and gives a leaf of ~20 bodies a block of 64 threads.
 *
 * Cost per body: the regular harmonics of degrees 0..p (about 6 (p + 1)
 * (p + 2) / 2 flops) and the evaluation (about 12 (p + 1)(p + 2) / 2
 * flops): ~380 flops in double at p = 5; 32 bytes written. */
#include "farfield_gpu.h"

#include "gpu_context.h"

#include "farfield/operators.h"
#include "order_dispatch.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int WARPS = 4; /* a block */
constexpr int FAST_ORDER_MAX = 8;

template <int P>
__global__ void __launch_bounds__(32 * WARPS)
    l2p_warp(int64_t nleaves, const int32_t *leaves, const int32_t *body_begin,
             const int32_t *body_end, const int32_t *targets, const double *pos,
             const double *center, const double *L, double *phi, double *grad) {
  constexpr int TRI = (P + 1) * (P + 2) / 2;
  __shared__ double diag[P + 1], degree[TRI];
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(P, diag, degree);
  __syncthreads();
  const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= nleaves)
    return;
  const int32_t leaf = leaves[w];
  if (targets != nullptr && targets[leaf] == 0)
    return; /* the whole warp: no target here */
  const double cx = center[3 * leaf], cy = center[3 * leaf + 1],
               cz = center[3 * leaf + 2];
  const double *Lc = L + (size_t)leaf * (2 * TRI);
  for (int32_t b = body_begin[leaf] + lane; b < body_end[leaf]; b += 32) {
    double re[TRI], im[TRI], out[4];
    tfmm_op_regular_by(P, pos[3 * (size_t)b] - cx, pos[3 * (size_t)b + 1] - cy,
                       pos[3 * (size_t)b + 2] - cz, diag, degree, re, im);
    tfmm_op_l2p_eval(P, Lc, re, im, out);
    phi[b] = out[0];
    for (int k = 0; k < 3; k++)
      grad[3 * (size_t)b + k] = out[1 + k];
  }
}

template <int P>
tfmm_status launch(const tfmm_tree_gpu *tree, const double *d_L, double *d_phi,
                   double *d_grad, cudaStream_t s, tfmm_error *err) {
  const int64_t n = tree->nleaves;
  l2p_warp<P><<<(unsigned)((n + WARPS - 1) / WARPS), 32 * WARPS, 0, s>>>(
      n, tree->d_leaves, tree->d_body_begin, tree->d_body_end, tree->d_targets,
      tree->d_pos, tree->d_center, d_L, d_phi, d_grad);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_farfield_gpu_l2p_fast(const tfmm_tree_gpu *tree,
                                                  int p, const double *d_L,
                                                  double *d_phi, double *d_grad,
                                                  void *stream,
                                                  tfmm_error *err) {
  if (tree == NULL || p < 0 || p > FAST_ORDER_MAX || tree->nleaves < 1 ||
      d_L == NULL || d_phi == NULL || d_grad == NULL)
    return tfmm_farfield_gpu_l2p(tree, p, d_L, d_phi, d_grad, stream, err);
  cudaStream_t s = (cudaStream_t)stream;
  return tfmm_order_dispatch<8>(p, [&](auto order) {
    return launch<decltype(order)::value>(tree, d_L, d_phi, d_grad, s, err);
  });
}
