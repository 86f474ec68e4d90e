/* The upward pass on the GPU: see upward_gpu.h. Built with --fmad=false
 * (src/CMakeLists.txt), so that every product and sum is rounded as the
 * CPU rounds it. */
#include "upward_gpu.h"

#include "gpu_context.h"

#include "farfield/operators.h"
#include "order_dispatch.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int P2M_THREADS = 128;
constexpr int M2M_THREADS = 64;
constexpr int M2M_FAST_THREADS = 128;
/* The fast M2M spills 408 bytes a thread at 5 and 1.4 KB at 6. */
constexpr int M2M_FAST_ORDER_MAX = 5;
constexpr int MAX_CHILDREN = 8;

/* The arrays of the tree the pass reads. */
struct tree_view {
  const double *pos, *mass, *center;
  const int32_t *child_begin, *child_count, *body_begin, *body_end, *leaves;
};

tree_view view_of(const tfmm_tree_gpu *t) {
  return {t->d_pos,         t->d_mass,       t->d_center,   t->d_child_begin,
          t->d_child_count, t->d_body_begin, t->d_body_end, t->d_leaves};
}

unsigned grid_for(int64_t threads, int block) {
  return (unsigned)((threads + block - 1) / block);
}

/* Doubles of one child's expansions in shared memory: full R(d) and full
 * multipole (real and imaginary), and the triangle of R(d). */
__host__ __device__ int child_doubles(int p) {
  return 4 * (p + 1) * (p + 1) + 2 * tfmm_harmonics_count(p);
}

/* P2M, one thread per (leaf, order m): column m of the leaf's multipole,
 * each coefficient summed over the leaf's bodies in order (as tfmm_p2m
 * adds body after body). Per body the column's recurrence runs once,
 * O(p) steps in registers: the loop over the column is unrolled to the
 * size class PMAX >= p, so that its sums stay in registers (a runtime
 * index would put them in local memory). O(p^2) flops a body in all. */
template <int PMAX>
__global__ void p2m_columns(tree_view t, int p, int64_t nleaves, double *M) {
  __shared__ double diag[TFMM_ORDER_MAX + 1];
  __shared__ double degree[(TFMM_ORDER_MAX + 1) * (TFMM_ORDER_MAX + 2) / 2];
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(p, diag, degree);
  __syncthreads();
  const int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= nleaves * (p + 1))
    return;
  const int32_t cell = t.leaves[id / (p + 1)];
  const int m = (int)(id % (p + 1)), last = p - m; /* column n = m..p */
  const double c[3] = {t.center[3 * cell], t.center[3 * cell + 1],
                       t.center[3 * cell + 2]};
  double sr[PMAX + 1], si[PMAX + 1];
#pragma unroll
  for (int k = 0; k <= PMAX; k++)
    sr[k] = si[k] = 0.0;
  for (int32_t b = t.body_begin[cell]; b < t.body_end[cell]; b++) {
    const double x = t.pos[3 * b] - c[0], y = t.pos[3 * b + 1] - c[1],
                 z = t.pos[3 * b + 2] - c[2];
    const double r2 = x * x + y * y + z * z, mb = t.mass[b];
    double ar = 1.0, ai = 0.0; /* R_m^m, then R_{n-1}^m */
    for (int k = 1; k <= m; k++)
      tfmm_op_regular_diagonal_step_by(diag[k], x, y, &ar, &ai);
    double br = 0.0, bi = 0.0; /* R_{n-2}^m */
#pragma unroll
    for (int k = 0; k <= PMAX; k++) {
      if (k > last)
        break;
      if (k == 1) { /* n = m + 1: z R_m^m */
        br = ar;
        bi = ai;
        ar = z * br;
        ai = z * bi;
      } else if (k >= 2) {
        const double v = degree[tfmm_harmonics_index(m + k, m)];
        const double cr =
            tfmm_op_regular_degree_step_by(v, m + k, z, r2, ar, br);
        const double ci =
            tfmm_op_regular_degree_step_by(v, m + k, z, r2, ai, bi);
        br = ar;
        bi = ai;
        ar = cr;
        ai = ci;
      }
      sr[k] += mb * ar;
      si[k] += mb * ai;
    }
  }
  double *Mc = M + (size_t)cell * (size_t)(2 * tfmm_harmonics_count(p));
#pragma unroll
  for (int k = 0; k <= PMAX; k++) {
    if (k > last)
      break;
    const int e = tfmm_harmonics_index(m + k, m);
    Mc[2 * e] = sr[k];
    Mc[2 * e + 1] = si[k];
  }
}

template <int PMAX>
tfmm_status p2m(const tree_view &t, int p, int64_t nleaves, double *M,
                cudaStream_t s, tfmm_error *err) {
  const int64_t columns = nleaves * (p + 1);
  p2m_columns<PMAX>
      <<<grid_for(columns, P2M_THREADS), P2M_THREADS, 0, s>>>(t, p, nleaves, M);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

/* M2M for the parents among cells [begin, begin + gridDim.x), one block a
 * cell; leaves (P2M's) return at once. */
__global__ void m2m_level(tree_view t, int p, int64_t begin, double *M) {
  extern __shared__ double shared[];
  __shared__ double diag[TFMM_ORDER_MAX + 1];
  __shared__ double degree[(TFMM_ORDER_MAX + 1) * (TFMM_ORDER_MAX + 2) / 2];
  const int64_t cell = begin + blockIdx.x;
  const int count = t.child_count[cell];
  if (count == 0)
    return; /* the whole block: no barrier is left behind */
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(p, diag, degree);
  __syncthreads();
  const int full = (p + 1) * (p + 1), tri = tfmm_harmonics_count(p);
  const size_t size = (size_t)(2 * tri);
  const int first = t.child_begin[cell];
  /* The harmonics of d = c_child - c_parent, one thread a (child, entry);
   * then both full arrays, one thread a (child, full entry). */
  const int stride = child_doubles(p);
  for (int k = threadIdx.x; k < count * tri; k += blockDim.x) {
    const int ch = first + k / tri, e = k % tri;
    double *tre = shared + (size_t)(k / tri) * stride + 4 * full;
    int n, m;
    tfmm_op_triangle_entry(e, &n, &m);
    tfmm_op_regular_term_by(n, m, t.center[3 * ch] - t.center[3 * cell],
                            t.center[3 * ch + 1] - t.center[3 * cell + 1],
                            t.center[3 * ch + 2] - t.center[3 * cell + 2], diag,
                            degree, tre + e, tre + tri + e);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < count * full; k += blockDim.x) {
    double *rr = shared + (size_t)(k / full) * stride, *ri = rr + full;
    double *mr = ri + full, *mi = mr + full, *tre = mi + full;
    const int ch = first + k / full, e = k % full;
    int n, m;
    tfmm_op_full_entry(e, &n, &m);
    tfmm_op_harmonic_full(tre, tre + tri, n, m, rr + e, ri + e);
    tfmm_op_coeff_full(M + (size_t)ch * size, 1.0, n, m, mr + e, mi + e);
  }
  __syncthreads();
  /* One thread a coefficient, the children added in order (as tfmm_m2m
   * is called child after child on a zeroed parent). */
  double *Mp = M + (size_t)cell * size;
  for (int idx = threadIdx.x; idx < tri; idx += blockDim.x) {
    int n, m;
    tfmm_op_triangle_entry(idx, &n, &m);
    double re = 0.0, im = 0.0;
    for (int k = 0; k < count; k++) {
      const double *rr = shared + (size_t)k * child_doubles(p), *ri = rr + full;
      const double *mr = ri + full, *mi = mr + full;
      double sr, si;
      tfmm_op_m2m_coeff(n, m, rr, ri, mr, mi, &sr, &si);
      re += sr;
      if (m > 0)
        im += si;
    }
    Mp[2 * idx] = re;
    Mp[2 * idx + 1] = im;
  }
}

/* M2M for the gpu schedule (tfmm_upward_gpu_fast): one thread a parent
 * cell of one level, the order a template argument so that the
 * translation's loops unroll and the shift's harmonics and the parent's
 * sums stay in registers. The same formula and order of sums as
 * tfmm_op_m2m_coeff, the children added in order; the children's
 * coefficients are read by tfmm_op_coeff_full. m2m_level gives
 * each parent a block, full arrays in shared memory and two barriers,
 * which left the GPU waiting on latency (3.6 ms at 16M bodies, order 5).
 * Cost a parent: per child the regular harmonics (~6 (p + 1)(p + 2) / 2
 * flops) and sum_{n,m>=0} sum_j (2 min(j, ...) + 1) complex multiply-adds
 * (~150 at p = 5). */
template <int P>
__global__ void __launch_bounds__(M2M_FAST_THREADS)
    m2m_cells(tree_view t, int64_t begin, int64_t end, double *M) {
  constexpr int TRI = (P + 1) * (P + 2) / 2;
  __shared__ double diag[P + 1], degree[TRI];
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(P, diag, degree);
  __syncthreads();
  const int64_t cell = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (cell >= end)
    return;
  const int count = t.child_count[cell];
  if (count == 0)
    return; /* a leaf: P2M's */
  const int first = t.child_begin[cell];
  double accr[TRI], acci[TRI];
#pragma unroll
  for (int e = 0; e < TRI; e++)
    accr[e] = acci[e] = 0.0;
  for (int c = first; c < first + count; c++) {
    double rr[TRI], ri[TRI];
    tfmm_op_regular_by(P, t.center[3 * (int64_t)c] - t.center[3 * cell],
                       t.center[3 * (int64_t)c + 1] - t.center[3 * cell + 1],
                       t.center[3 * (int64_t)c + 2] - t.center[3 * cell + 2],
                       diag, degree, rr, ri);
    const double *Mc = M + (size_t)c * (size_t)(2 * TRI);
#pragma unroll
    for (int n = 0; n <= P; n++) {
#pragma unroll
      for (int m = 0; m <= n; m++) {
        double sr = 0.0, si = 0.0;
#pragma unroll
        for (int j = 0; j <= n; j++) {
          const int l = n - j;
          const int k0 = -j > m - l ? -j : m - l, k1 = j < m + l ? j : m + l;
#pragma unroll
          for (int k = k0; k <= k1; k++) {
            double ar, ai, br, bi;
            tfmm_op_harmonic_full(rr, ri, j, k, &ar, &ai);
            tfmm_op_coeff_full(Mc, 1.0, l, m - k, &br, &bi);
            sr += ar * br - ai * bi;
            si += ar * bi + ai * br;
          }
        }
        accr[tfmm_harmonics_index(n, m)] += sr;
        if (m > 0)
          acci[tfmm_harmonics_index(n, m)] += si;
      }
    }
  }
  double *Mp = M + (size_t)cell * (size_t)(2 * TRI);
#pragma unroll
  for (int e = 0; e < TRI; e++) {
    Mp[2 * e] = accr[e];
    Mp[2 * e + 1] = acci[e];
  }
}

template <int P>
tfmm_status m2m_fast(const tfmm_tree_gpu *tree, double *d_M, cudaStream_t s,
                     tfmm_error *err) {
  const tree_view t = view_of(tree);
  for (int level = tree->depth - 1; level >= 0; level--) {
    const int64_t begin = tree->level_begin[level],
                  end = tree->level_begin[level + 1];
    if (end <= begin)
      continue;
    m2m_cells<P>
        <<<grid_for(end - begin, M2M_FAST_THREADS), M2M_FAST_THREADS, 0, s>>>(
            t, begin, end, d_M);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_upward_gpu(const tfmm_tree_gpu *tree, int p,
                                       double *d_M, void *stream,
                                       tfmm_error *err) {
  if (tree == NULL || d_M == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "upward_gpu: %s is NULL",
                          tree == NULL ? "the tree" : "the multipole array");
  if (p < 0 || p > TFMM_ORDER_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "upward_gpu: order %d is outside 0..%d", p,
                          TFMM_ORDER_MAX);
  if (tree->ncells < 1 || tree->nleaves < 1 || tree->depth < 0 ||
      tree->depth >= TFMM_TREE_GPU_LEVELS)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "upward_gpu: the tree is empty or not built");
  cudaStream_t s = (cudaStream_t)stream;
  const tree_view t = view_of(tree);
  tfmm_status st = p <= 4   ? p2m<4>(t, p, tree->nleaves, d_M, s, err)
                   : p <= 8 ? p2m<8>(t, p, tree->nleaves, d_M, s, err)
                   : p <= 12
                       ? p2m<12>(t, p, tree->nleaves, d_M, s, err)
                       : p2m<TFMM_ORDER_MAX>(t, p, tree->nleaves, d_M, s, err);
  if (st != TFMM_OK)
    return st;
  const int shared = MAX_CHILDREN * child_doubles(p) * (int)sizeof(double);
  /* 139 KB at order 20: past order 16 on the 99 KB of sm_86, sm_89 and
   * sm_120. */
  const int most = tfmm_gpu_shared_limit((const void *)m2m_level);
  if (shared > most)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "upward_gpu: order %d needs %d bytes of shared "
                          "memory, more than the %d a block may have on this "
                          "GPU",
                          p, shared, most);
  TFMM_CUDA_TRY(
      cudaFuncSetAttribute(m2m_level,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, shared),
      err);
  /* Levels from the deepest parents up: a level's children are complete
   * (P2M's leaves, or the launch before) when its parents gather them. */
  for (int level = tree->depth - 1; level >= 0; level--) {
    const int64_t begin = tree->level_begin[level],
                  cells = tree->level_begin[level + 1] - begin;
    if (cells <= 0)
      continue;
    m2m_level<<<(unsigned)cells, M2M_THREADS, shared, s>>>(t, p, begin, d_M);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_upward_gpu_fast(const tfmm_tree_gpu *tree, int p,
                                            double *d_M, void *stream,
                                            tfmm_error *err) {
  if (tree == NULL || d_M == NULL || p < 0 || p > M2M_FAST_ORDER_MAX ||
      tree->ncells < 1 || tree->nleaves < 1 || tree->depth < 0 ||
      tree->depth >= TFMM_TREE_GPU_LEVELS)
    return tfmm_upward_gpu(tree, p, d_M, stream, err);
  cudaStream_t s = (cudaStream_t)stream;
  const tree_view t = view_of(tree);
  tfmm_status st = p <= 4 ? p2m<4>(t, p, tree->nleaves, d_M, s, err)
                          : p2m<8>(t, p, tree->nleaves, d_M, s, err);
  if (st != TFMM_OK)
    return st;
  return tfmm_order_dispatch<5>(p, [&](auto order) {
    return m2m_fast<decltype(order)::value>(tree, d_M, s, err);
  });
}
