/* The softened far field on the GPU (soft_far_gpu.h): the CPU's
 * operators (src/farfield/soft_taylor_ops.h) in kernels whose order is a
 * template argument, so that each thread's expansions and derivatives
 * are arrays of the order's size. */
#include "soft_far_gpu.h"

#include "gpu_context.h"

#include "farfield/soft_taylor_ops.h"
#include "order_dispatch.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int ORDER_MAX = 12; /* TFMM_SOFT_TAYLOR_ORDER_MAX */
constexpr int THREADS = 128;  /* a block of the thread-a-cell kernels */
constexpr int WARPS = 2;      /* a block of the warp-a-target kernels */

__device__ __forceinline__ double warp_sum(double v) {
  for (int k = 16; k >= 1; k >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

__device__ __forceinline__ void point(const double *xyz, int64_t i,
                                      double out[3]) {
  out[0] = __ldg(xyz + 3 * i);
  out[1] = __ldg(xyz + 3 * i + 1);
  out[2] = __ldg(xyz + 3 * i + 2);
}

template <int P>
__global__ void __launch_bounds__(THREADS)
    p2m_leaves(int64_t nleaves, const int32_t *leaves,
               const int32_t *body_begin, const int32_t *body_end,
               const double *pos, const double *mass, const double *center,
               double *M) {
  constexpr int S = tfmm_soft_op_size(P);
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= nleaves)
    return;
  const int32_t leaf = leaves[i];
  double m[S], y_n[S], c[3], x[3];
  for (int k = 0; k < S; k++)
    m[k] = 0;
  point(center, leaf, c);
  for (int32_t b = body_begin[leaf]; b < body_end[leaf]; b++) {
    point(pos, b, x);
    const double y[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
    tfmm_soft_op_p2m(P, y, mass[b], y_n, m);
  }
  for (int k = 0; k < S; k++)
    M[(size_t)leaf * S + k] = m[k];
}

/* The coefficients a lane of a warp owns: k = lane + 32 q, q < COUNT. */
template <int P> struct Slots {
  static constexpr int S = tfmm_soft_op_size(P), COUNT = (S + 31) / 32;
};

/* M2M, one warp a parent: the children's shifts' monomials in shared
 * memory (a lane a child), then each lane its coefficients' sums over
 * the children in turn. */
template <int P>
__global__ void __launch_bounds__(32)
    m2m_level(int64_t begin, const int32_t *child_begin,
              const int32_t *child_count, const double *center, double *M) {
  constexpr int S = tfmm_soft_op_size(P), SLOTS = Slots<P>::COUNT;
  __shared__ double d_n[8][S];
  const int64_t cell = begin + blockIdx.x;
  const int lane = threadIdx.x;
  const int count = child_count[cell];
  if (count == 0)
    return; /* the whole warp: a leaf */
  const int32_t first = child_begin[cell];
  if (lane < count) {
    double c[3], cc[3];
    point(center, cell, c);
    point(center, first + lane, cc);
    const double d[3] = {cc[0] - c[0], cc[1] - c[1], cc[2] - c[2]};
    tfmm_soft_op_monomials(P, d, d_n[lane]);
  }
  __syncwarp();
  int a[SLOTS], b[SLOTS], c[SLOTS];
  double m[SLOTS];
#pragma unroll
  for (int q = 0; q < SLOTS; q++) {
    int t = 0, j = 0, cc = 0;
    if (lane + 32 * q < S)
      tfmm_soft_op_entry(lane + 32 * q, &t, &j, &cc);
    a[q] = t - j, b[q] = j - cc, c[q] = cc, m[q] = 0;
  }
  for (int ch = 0; ch < count; ch++) {
    const double *Mc = M + (size_t)(first + ch) * S;
#pragma unroll
    for (int q = 0; q < SLOTS; q++)
      if (lane + 32 * q < S)
        m[q] += tfmm_soft_op_m2m_one(a[q], b[q], c[q], Mc, d_n[ch]);
  }
#pragma unroll
  for (int q = 0; q < SLOTS; q++)
    if (lane + 32 * q < S)
      M[(size_t)cell * S + lane + 32 * q] = m[q];
}

constexpr int M2L_WARPS = 4; /* a block of m2l_shared */

/* M2L, one warp a target, its lanes over the list's sources, each lane
 * the derivatives and the contraction of its source in local memory, the
 * 32 partial expansions then added by shuffles. Below order 8 it beat
 * m2l_shared on the H200 (1M Plummer bodies, theta 0.6, leaf 64: far
 * field 11.9 against 28.7 ms at p 4, 59 against 70 ms at p 6), above it
 * lost (184 against 149 ms at p 8): the local arrays grow with the order
 * past what the cache holds. */
template <int P>
__global__ void __launch_bounds__(32 * WARPS)
    m2l_sources(int64_t ncells, const int64_t *offset, const int32_t *index,
                const double *center, double eps, const double *M, double *L) {
  constexpr int S = tfmm_soft_op_size(P), LEVEL = tfmm_soft_op_level_max(P);
  const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= ncells)
    return; /* the whole warp */
  double l[S], D[S], buf[3 * LEVEL], ct[3], cs[3];
  for (int k = 0; k < S; k++)
    l[k] = 0;
  point(center, w, ct);
  for (int64_t e = offset[w] + lane; e < offset[w + 1]; e += 32) {
    const int32_t src = __ldg(index + e);
    point(center, src, cs);
    const double R[3] = {ct[0] - cs[0], ct[1] - cs[1], ct[2] - cs[2]};
    tfmm_soft_op_m2l(P, eps, M + (size_t)src * S, R, D, buf, LEVEL, l);
  }
  for (int k = 0; k < S; k++) {
    const double v = warp_sum(l[k]);
    if (k % 32 == lane)
      L[(size_t)w * S + k] = v;
  }
}

/* M2L, one warp a target, its list's sources one at a time: the
 * derivatives of the separation a level at a time in shared memory (a
 * lane a value), then each lane its coefficients' contractions (order 8
 * and above). */
template <int P>
__global__ void __launch_bounds__(32 * M2L_WARPS)
    m2l_shared(int64_t ncells, const int64_t *offset, const int32_t *index,
               const double *center, double eps, const double *M, double *L) {
  constexpr int S = tfmm_soft_op_size(P), LEVEL = tfmm_soft_op_level_max(P),
                SLOTS = Slots<P>::COUNT;
  __shared__ double sD[M2L_WARPS][S], sbuf[M2L_WARPS][3 * LEVEL];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t w = (int64_t)blockIdx.x * M2L_WARPS + warp;
  if (w >= ncells)
    return; /* the whole warp */
  double *D = sD[warp], *buf = sbuf[warp];
  int tk[SLOTS], jk[SLOTS], kc[SLOTS];
  double l[SLOTS];
#pragma unroll
  for (int q = 0; q < SLOTS; q++) {
    tk[q] = jk[q] = kc[q] = 0;
    if (lane + 32 * q < S)
      tfmm_soft_op_entry(lane + 32 * q, &tk[q], &jk[q], &kc[q]);
    l[q] = 0;
  }
  double ct[3], cs[3];
  point(center, w, ct);
  for (int64_t e = offset[w]; e < offset[w + 1]; e++) {
    const int32_t src = __ldg(index + e);
    point(center, src, cs);
    const double R[3] = {ct[0] - cs[0], ct[1] - cs[1], ct[2] - cs[2]};
    if (lane == 0) {
      tfmm_soft_op_level0(P, eps, R, buf);
      D[0] = buf[0];
    }
    __syncwarp();
    for (int t = 1; t <= P; t++) {
      const double *u = buf + ((t - 1) % 3) * LEVEL,
                   *v = buf + ((t + 1) % 3) * LEVEL;
      double *cur = buf + (t % 3) * LEVEL;
      const int nc = tfmm_soft_op_level_count(t),
                n1 = tfmm_soft_op_level_count(t - 1),
                n2 = t >= 2 ? tfmm_soft_op_level_count(t - 2) : 0;
      for (int i = lane; i < (P - t + 1) * nc; i += 32) {
        const int mm = i / nc, k = i - mm * nc;
        const double x = tfmm_soft_op_level_entry(t, k, R, u + (mm + 1) * n1,
                                                  v + (mm + 1) * n2);
        cur[i] = x;
        if (mm == 0)
          D[tfmm_soft_op_level_offset(t) + k] = x;
      }
      __syncwarp();
    }
    const double *Ms = M + (size_t)src * S;
#pragma unroll
    for (int q = 0; q < SLOTS; q++)
      if (lane + 32 * q < S)
        l[q] += tfmm_soft_op_contract_one(P, tk[q], jk[q], kc[q], Ms, D, 1);
    __syncwarp(); /* D and buf are the next source's */
  }
#pragma unroll
  for (int q = 0; q < SLOTS; q++)
    if (lane + 32 * q < S)
      L[(size_t)w * S + lane + 32 * q] = l[q];
}

template <int P>
__global__ void __launch_bounds__(THREADS)
    l2l_level(int64_t begin, int64_t end, const int32_t *parent,
              const int32_t *targets, const double *center, double *L) {
  constexpr int S = tfmm_soft_op_size(P);
  const int64_t cell = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (cell >= end || (targets != nullptr && targets[cell] == 0))
    return;
  const int32_t up = parent[cell];
  double l[S], d_m[S], c[3], cp[3];
  for (int k = 0; k < S; k++)
    l[k] = L[(size_t)cell * S + k];
  point(center, cell, c);
  point(center, up, cp);
  const double d[3] = {c[0] - cp[0], c[1] - cp[1], c[2] - cp[2]};
  tfmm_soft_op_l2l(P, L + (size_t)up * S, d, d_m, l);
  for (int k = 0; k < S; k++)
    L[(size_t)cell * S + k] = l[k];
}

template <int P>
__global__ void __launch_bounds__(32 * WARPS)
    l2p_warp(int64_t nleaves, const int32_t *leaves, const int32_t *body_begin,
             const int32_t *body_end, const int32_t *targets, const double *pos,
             const double *center, const double *L, double *phi, double *grad) {
  constexpr int S = tfmm_soft_op_size(P);
  const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= nleaves)
    return;
  const int32_t leaf = leaves[w];
  if (targets != nullptr && targets[leaf] == 0)
    return;
  double z_m[S], c[3], x[3];
  point(center, leaf, c);
  for (int32_t b = body_begin[leaf] + lane; b < body_end[leaf]; b += 32) {
    point(pos, b, x);
    const double z[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
    double out[4] = {0, 0, 0, 0};
    tfmm_soft_op_l2p(P, L + (size_t)leaf * S, z, z_m, out);
    phi[b] += out[0];
    for (int k = 0; k < 3; k++)
      grad[3 * (size_t)b + k] += out[1 + k];
  }
}

template <int P>
__global__ void __launch_bounds__(32 * WARPS)
    m2p_warp(int64_t nleaves, const int32_t *leaves, const int32_t *parent,
             const int32_t *body_begin, const int32_t *body_end,
             const int32_t *targets, const double *pos, const double *center,
             const int64_t *offset, const int32_t *index, double eps,
             const double *M, double *phi, double *grad) {
  constexpr int S = tfmm_soft_op_size(P), Q = P + 1,
                LEVEL = tfmm_soft_op_level_max(Q);
  const int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= nleaves)
    return; /* the whole warp */
  const int32_t leaf = leaves[w];
  if (targets != nullptr && targets[leaf] == 0)
    return;
  bool any = false;
  for (int32_t c = leaf; c >= 0 && !any; c = parent[c])
    any = offset[c + 1] > offset[c];
  if (!any)
    return;
  double D[tfmm_soft_op_size(Q)], buf[3 * LEVEL], x[3], cs[3];
  for (int32_t b = body_begin[leaf]; b < body_end[leaf]; b++) {
    point(pos, b, x);
    double acc[4] = {0, 0, 0, 0};
    for (int32_t c = leaf; c >= 0; c = parent[c])
      for (int64_t e = offset[c] + lane; e < offset[c + 1]; e += 32) {
        const int32_t src = __ldg(index + e);
        point(center, src, cs);
        const double R[3] = {x[0] - cs[0], x[1] - cs[1], x[2] - cs[2]};
        tfmm_soft_op_m2p(P, eps, M + (size_t)src * S, R, D, buf, LEVEL, acc);
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

unsigned blocks(int64_t items, int per_block) {
  return (unsigned)((items + per_block - 1) / per_block);
}

tfmm_status check(const tfmm_tree_gpu *tree, int p, const void *a,
                  const void *b, const char *who, tfmm_error *err) {
  if (tree == NULL || tree->ncells < 1 || tree->nleaves < 1 || a == NULL ||
      b == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "softened far field (%s): no tree or no arrays", who);
  if (p < 0 || p > ORDER_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "softened far field (%s): order %d outside 0..%d",
                          who, p, ORDER_MAX);
  return TFMM_OK;
}

tfmm_status check_list(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *list,
                       const char *who, tfmm_error *err) {
  if (list == NULL || list->ntargets != tree->ncells)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "softened far field (%s): the list is not by the "
                          "tree's cells",
                          who);
  return TFMM_OK;
}

template <int P>
tfmm_status upward(const tfmm_tree_gpu *t, double *M, cudaStream_t s,
                   tfmm_error *err) {
  p2m_leaves<P><<<blocks(t->nleaves, THREADS), THREADS, 0, s>>>(
      t->nleaves, t->d_leaves, t->d_body_begin, t->d_body_end, t->d_pos,
      t->d_mass, t->d_center, M);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  for (int level = t->depth - 1; level >= 0; level--) {
    const int64_t begin = t->level_begin[level],
                  end = t->level_begin[level + 1];
    if (end <= begin)
      continue;
    m2m_level<P><<<(unsigned)(end - begin), 32, 0, s>>>(
        begin, t->d_child_begin, t->d_child_count, t->d_center, M);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  return TFMM_OK;
}

template <int P>
tfmm_status m2l(const tfmm_tree_gpu *t, const tfmm_csr_gpu *list, double eps,
                const double *M, double *L, cudaStream_t s, tfmm_error *err) {
  if constexpr (P < 8)
    m2l_sources<P><<<blocks(t->ncells, WARPS), 32 * WARPS, 0, s>>>(
        t->ncells, list->offset, list->index, t->d_center, eps, M, L);
  else
    m2l_shared<P><<<blocks(t->ncells, M2L_WARPS), 32 * M2L_WARPS, 0, s>>>(
        t->ncells, list->offset, list->index, t->d_center, eps, M, L);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

template <int P>
tfmm_status downward(const tfmm_tree_gpu *t, double *L, double *phi,
                     double *grad, cudaStream_t s, tfmm_error *err) {
  for (int level = 1; level <= t->depth; level++) {
    const int64_t begin = t->level_begin[level],
                  end = t->level_begin[level + 1];
    if (end <= begin)
      continue;
    l2l_level<P><<<blocks(end - begin, THREADS), THREADS, 0, s>>>(
        begin, end, t->d_parent, t->d_targets, t->d_center, L);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  l2p_warp<P><<<blocks(t->nleaves, WARPS), 32 * WARPS, 0, s>>>(
      t->nleaves, t->d_leaves, t->d_body_begin, t->d_body_end, t->d_targets,
      t->d_pos, t->d_center, L, phi, grad);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

template <int P>
tfmm_status m2p(const tfmm_tree_gpu *t, const tfmm_csr_gpu *list, double eps,
                const double *M, double *phi, double *grad, cudaStream_t s,
                tfmm_error *err) {
  m2p_warp<P><<<blocks(t->nleaves, WARPS), 32 * WARPS, 0, s>>>(
      t->nleaves, t->d_leaves, t->d_parent, t->d_body_begin, t->d_body_end,
      t->d_targets, t->d_pos, t->d_center, list->offset, list->index, eps, M,
      phi, grad);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

} // namespace

extern "C" size_t tfmm_soft_far_gpu_size(int p) {
  return (size_t)tfmm_soft_op_size(p);
}

extern "C" tfmm_status tfmm_soft_far_gpu_upward(const tfmm_tree_gpu *tree,
                                                int p, double *d_M,
                                                void *stream, tfmm_error *err) {
  tfmm_status st = check(tree, p, d_M, d_M, "upward", err);
  if (st != TFMM_OK)
    return st;
  return tfmm_order_dispatch<ORDER_MAX>(p, [&](auto order) {
    return upward<decltype(order)::value>(tree, d_M, (cudaStream_t)stream, err);
  });
}

extern "C" tfmm_status tfmm_soft_far_gpu_m2l(const tfmm_tree_gpu *tree,
                                             const tfmm_csr_gpu *list, int p,
                                             double eps, const double *d_M,
                                             double *d_L, void *stream,
                                             tfmm_error *err) {
  tfmm_status st = check(tree, p, d_M, d_L, "M2L", err);
  if (st == TFMM_OK)
    st = check_list(tree, list, "M2L", err);
  if (st != TFMM_OK)
    return st;
  return tfmm_order_dispatch<ORDER_MAX>(p, [&](auto order) {
    return m2l<decltype(order)::value>(tree, list, eps, d_M, d_L,
                                       (cudaStream_t)stream, err);
  });
}

extern "C" tfmm_status tfmm_soft_far_gpu_downward(const tfmm_tree_gpu *tree,
                                                  int p, double *d_L,
                                                  double *d_phi, double *d_grad,
                                                  void *stream,
                                                  tfmm_error *err) {
  tfmm_status st = check(tree, p, d_L, d_phi, "L2L and L2P", err);
  if (st == TFMM_OK && d_grad == NULL)
    st = check(tree, p, d_grad, d_grad, "L2L and L2P", err);
  if (st != TFMM_OK)
    return st;
  return tfmm_order_dispatch<ORDER_MAX>(p, [&](auto order) {
    return downward<decltype(order)::value>(tree, d_L, d_phi, d_grad,
                                            (cudaStream_t)stream, err);
  });
}

extern "C" tfmm_status tfmm_soft_far_gpu_m2p(const tfmm_tree_gpu *tree,
                                             const tfmm_csr_gpu *list, int p,
                                             double eps, const double *d_M,
                                             double *d_phi, double *d_grad,
                                             void *stream, tfmm_error *err) {
  tfmm_status st = check(tree, p, d_M, d_phi, "M2P", err);
  if (st == TFMM_OK && d_grad == NULL)
    st = check(tree, p, d_grad, d_grad, "M2P", err);
  if (st == TFMM_OK)
    st = check_list(tree, list, "M2P", err);
  if (st != TFMM_OK)
    return st;
  return tfmm_order_dispatch<ORDER_MAX>(p, [&](auto order) {
    return m2p<decltype(order)::value>(tree, list, eps, d_M, d_phi, d_grad,
                                       (cudaStream_t)stream, err);
  });
}
