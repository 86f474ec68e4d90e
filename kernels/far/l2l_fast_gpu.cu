/* L2L for the gpu schedule (farfield_gpu.h, tfmm_farfield_gpu_l2l_fast):
 * one thread a cell, one launch a level from level 1 down, the order a
 * template argument so that the operators' loops unroll and the regular
 * harmonics of the shift stay in registers. The CPU-equal kernel
 * (farfield_gpu.cu, l2l_level) gives every cell a block, full arrays in
 * shared memory and three barriers, which left the H100 waiting on
 * latency: 5.7 ms at 16M bodies (leaf 64, order 5) for ~3 GFlop.
 *
 * The translation is the CPU's (src/farfield/operators.h,
 * tfmm_op_l2l_coeff, in the same order of sums):
 *
 *   L_j^k(child) += sum_{l=j}^{p} sum_m Lp_l^m R_{l-j}^{m-k}(d),
 *   |m - k| <= l - j, d = c_child - c_parent,
 *
 * the parent's coefficients read as tfmm_op_coeff_full forms them (through
 * the cache: siblings are adjacent, so a warp's loads of one parent are
 * broadcasts) and R by tfmm_op_harmonic_full, whose indices the unrolled
 * loops make constants, so R stays in registers. Fused
 * multiply-adds make it equal to the CPU's to rounding, not bit for bit.
 *
 * Cost per cell at order p: the regular harmonics of d (~6 (p + 1)(p + 2)
 * / 2 flops) and sum_j sum_k sum_{l>=j} (2 (l - j) + 1) complex
 * multiply-adds (~150 at p = 5, ~1,200 flops in double); (p + 1)(p + 2)
 * doubles read and written. */
#include "farfield_gpu.h"

#include "gpu_context.h"

#include "farfield/operators.h"
#include "order_dispatch.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int THREADS = 128;
/* Past 7 the harmonics and sums spill (2.4 KB a thread at 8). */
constexpr int FAST_ORDER_MAX = 7;

__host__ __device__ constexpr int tri(int n, int m) {
  return n * (n + 1) / 2 + m;
}

template <int P>
__global__ void __launch_bounds__(THREADS)
    l2l_cells(int64_t begin, int64_t end, const int32_t *parent,
              const int32_t *targets, const double *center, double *L) {
  constexpr int TRI = (P + 1) * (P + 2) / 2;
  __shared__ double diag[P + 1], degree[TRI];
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(P, diag, degree);
  __syncthreads();
  const int64_t cell = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (cell >= end || (targets != nullptr && targets[cell] == 0))
    return; /* no target below: its L is never read */
  const int32_t up = parent[cell];
  double rr[TRI], ri[TRI];
  tfmm_op_regular_by(P, center[3 * cell] - center[3 * (int64_t)up],
                     center[3 * cell + 1] - center[3 * (int64_t)up + 1],
                     center[3 * cell + 2] - center[3 * (int64_t)up + 2], diag,
                     degree, rr, ri);
  const double *Lp = L + (size_t)up * (size_t)(2 * TRI);
  double *Lc = L + (size_t)cell * (size_t)(2 * TRI);
#pragma unroll
  for (int j = 0; j <= P; j++) {
#pragma unroll
    for (int k = 0; k <= j; k++) {
      double sr = 0.0, si = 0.0;
#pragma unroll
      for (int l = j; l <= P; l++) {
        const int q = l - j;
        const int m0 = -l > k - q ? -l : k - q, m1 = l < k + q ? l : k + q;
#pragma unroll
        for (int m = m0; m <= m1; m++) {
          double ar, ai, br, bi;
          tfmm_op_coeff_full(Lp, 1.0, l, m, &ar, &ai);
          tfmm_op_harmonic_full(rr, ri, q, m - k, &br, &bi);
          sr += ar * br - ai * bi;
          si += ar * bi + ai * br;
        }
      }
      Lc[2 * tri(j, k)] += sr;
      if (k > 0)
        Lc[2 * tri(j, k) + 1] += si;
    }
  }
}

template <int P>
tfmm_status launch(const tfmm_tree_gpu *tree, double *d_L, cudaStream_t s,
                   tfmm_error *err) {
  for (int level = 1; level <= tree->depth; level++) {
    const int64_t begin = tree->level_begin[level],
                  end = tree->level_begin[level + 1];
    if (end <= begin)
      continue;
    l2l_cells<P>
        <<<(unsigned)((end - begin + THREADS - 1) / THREADS), THREADS, 0, s>>>(
            begin, end, tree->d_parent, tree->d_targets, tree->d_center, d_L);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_farfield_gpu_l2l_fast(const tfmm_tree_gpu *tree,
                                                  int p, double *d_L,
                                                  void *stream,
                                                  tfmm_error *err) {
  if (tree == NULL || p < 0 || p > FAST_ORDER_MAX || tree->ncells < 1 ||
      d_L == NULL)
    return tfmm_farfield_gpu_l2l(tree, p, d_L, stream, err);
  cudaStream_t s = (cudaStream_t)stream;
  return tfmm_order_dispatch<7>(p, [&](auto order) {
    return launch<decltype(order)::value>(tree, d_L, s, err);
  });
}
