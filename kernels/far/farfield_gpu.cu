/* The far field on the GPU: see farfield_gpu.h. Built with --fmad=false
 * (src/CMakeLists.txt), so that every product and sum is rounded as the
 * CPU rounds it. */
#include "farfield_gpu.h"

#include "gpu_context.h"

#include "farfield/operators.h"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int BLOCK = 64;
/* Entries of the tables of the regular recurrences' degree factors. */
constexpr int FACTORS = (TFMM_ORDER_MAX + 1) * (TFMM_ORDER_MAX + 2) / 2;

struct tree_view {
  const double *pos, *center;
  const int32_t *parent, *body_begin, *body_end, *leaves;
};

tree_view view_of(const tfmm_tree_gpu *t) {
  return {t->d_pos,        t->d_center,   t->d_parent,
          t->d_body_begin, t->d_body_end, t->d_leaves};
}

struct csr_view {
  const int64_t *offset;
  const int32_t *index;
};

/* Doubles of shared memory for one translation: two full arrays (complex)
 * and the triangle of harmonics. */
__host__ __device__ int translation_doubles(int p) {
  return 4 * (p + 1) * (p + 1) + 2 * tfmm_harmonics_count(p);
}

/* Warps of an M2L block, each translating one source at a time. */
constexpr int M2L_WARPS = 4;

/* Doubles of one warp's slot in an M2L block: a translation's arrays and
 * its contribution to the target's coefficients. */
__host__ __device__ int m2l_slot_doubles(int p) {
  return translation_doubles(p) + 2 * tfmm_harmonics_count(p);
}

/* One source's M2L by one warp into contrib (2 doubles a coefficient, the
 * scale applied as tfmm_m2l applies it). */
__device__ void m2l_one(const tree_view &t, int p, const double ct[3],
                        int32_t src, const double *M, double *slot) {
  const int lane = threadIdx.x % 32;
  const int full = (p + 1) * (p + 1), tri = tfmm_harmonics_count(p);
  double *ir = slot, *ii = ir + full, *mr = ii + full, *mi = mr + full;
  double *tre = mi + full, *tim = tre + tri, *contrib = tim + tri;
  const double D[3] = {ct[0] - t.center[3 * src], ct[1] - t.center[3 * src + 1],
                       ct[2] - t.center[3 * src + 2]};
  const double rho = sqrt(D[0] * D[0] + D[1] * D[1] + D[2] * D[2]);
  const double inv_rho = 1.0 / rho;
  for (int m = lane; m <= p; m += 32)
    tfmm_op_irregular_column(p, m, D[0] * inv_rho, D[1] * inv_rho,
                             D[2] * inv_rho, tre, tim);
  __syncwarp();
  const double *Ms = M + (size_t)src * (size_t)(2 * tri);
  for (int k = lane; k < full; k += 32) {
    int n, m;
    tfmm_op_full_entry(k, &n, &m);
    double s = 1.0; /* |D|^{-n}, as tfmm_op_coeffs_to_full forms it */
    for (int q = 0; q < n; q++)
      s *= inv_rho;
    tfmm_op_harmonic_full(tre, tim, n, m, ir + k, ii + k);
    tfmm_op_coeff_full(Ms, s, n, m, mr + k, mi + k);
  }
  __syncwarp();
  for (int idx = lane; idx < tri; idx += 32) {
    int j, k;
    tfmm_op_triangle_entry(idx, &j, &k);
    double scale = inv_rho; /* (-1)^j |D|^{-j-1}, as tfmm_m2l forms it */
    for (int q = 0; q < j; q++)
      scale *= -inv_rho;
    double sr, si;
    tfmm_op_m2l_coeff(p, j, k, mr, mi, ir, ii, &sr, &si);
    contrib[2 * idx] = scale * sr;
    contrib[2 * idx + 1] = scale * si;
  }
}

/* M2L into one target cell a block: its warps translate M2L_WARPS sources
 * at a time, then the contributions are added to L in list order (as
 * tfmm_m2l_pass calls tfmm_m2l source after source on a zeroed L). */
__global__ void m2l_targets(tree_view t, csr_view list, int p, const double *M,
                            double *L) {
  extern __shared__ double shared[];
  const int64_t cell = blockIdx.x;
  const int tri = tfmm_harmonics_count(p), slot = m2l_slot_doubles(p);
  const int warp = threadIdx.x / 32;
  double *Lc = L + (size_t)cell * (size_t)(2 * tri);
  for (int k = threadIdx.x; k < 2 * tri; k += blockDim.x)
    Lc[k] = 0.0;
  const double ct[3] = {t.center[3 * cell], t.center[3 * cell + 1],
                        t.center[3 * cell + 2]};
  const int64_t e0 = list.offset[cell], e1 = list.offset[cell + 1];
  for (int64_t base = e0; base < e1; base += M2L_WARPS) {
    if (base + warp < e1) /* the whole warp */
      m2l_one(t, p, ct, list.index[base + warp], M,
              shared + (size_t)warp * slot);
    __syncthreads();
    const int batch = (int)(e1 - base < M2L_WARPS ? e1 - base : M2L_WARPS);
    for (int idx = threadIdx.x; idx < tri; idx += blockDim.x) {
      int j, k;
      tfmm_op_triangle_entry(idx, &j, &k);
      double re = Lc[2 * idx], im = Lc[2 * idx + 1];
      for (int w = 0; w < batch; w++) {
        const double *contrib =
            shared + (size_t)w * slot + translation_doubles(p);
        re += contrib[2 * idx];
        if (k > 0)
          im += contrib[2 * idx + 1];
      }
      Lc[2 * idx] = re;
      Lc[2 * idx + 1] = im;
    }
    __syncthreads(); /* before the next batch overwrites the slots */
  }
}

/* L2L into the cells [begin, begin + gridDim.x), one block a cell, from
 * their parents' complete local expansions. */
__global__ void l2l_level(tree_view t, int p, int64_t begin, double *L) {
  extern __shared__ double shared[];
  __shared__ double diag[TFMM_ORDER_MAX + 1], degree[FACTORS];
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(p, diag, degree);
  __syncthreads();
  const int64_t cell = begin + blockIdx.x;
  const int32_t parent = t.parent[cell];
  const int full = (p + 1) * (p + 1), tri = tfmm_harmonics_count(p);
  const size_t size = (size_t)(2 * tri);
  double *rr = shared, *ri = rr + full, *lr = ri + full, *li = lr + full;
  double *tre = li + full, *tim = tre + tri;
  const double d[3] = {t.center[3 * cell] - t.center[3 * parent],
                       t.center[3 * cell + 1] - t.center[3 * parent + 1],
                       t.center[3 * cell + 2] - t.center[3 * parent + 2]};
  for (int m = threadIdx.x; m <= p; m += blockDim.x)
    tfmm_op_regular_column_by(p, m, d[0], d[1], d[2], diag, degree, tre, tim);
  __syncthreads();
  for (int k = threadIdx.x; k < full; k += blockDim.x) {
    int n, m;
    tfmm_op_full_entry(k, &n, &m);
    tfmm_op_harmonic_full(tre, tim, n, m, rr + k, ri + k);
    tfmm_op_coeff_full(L + (size_t)parent * size, 1.0, n, m, lr + k, li + k);
  }
  __syncthreads();
  double *Lc = L + (size_t)cell * size;
  for (int idx = threadIdx.x; idx < tri; idx += blockDim.x) {
    int j, k;
    tfmm_op_triangle_entry(idx, &j, &k);
    double sr, si;
    tfmm_op_l2l_coeff(p, j, k, lr, li, rr, ri, &sr, &si);
    Lc[2 * idx] += sr;
    if (k > 0)
      Lc[2 * idx + 1] += si;
  }
}

/* Triangle entries of degrees 0..P. */
template <int P> struct triangle {
  static constexpr int count = (P + 1) * (P + 2) / 2;
};

/* L2P: one block a leaf, one thread a body; the body's results are
 * overwritten (0 + the local series, as tfmm_downward_pass zeroes them and
 * tfmm_l2p adds). */
template <int P>
__global__ void l2p_leaves(tree_view t, int p, const double *L, double *phi,
                           double *grad) {
  __shared__ double diag[TFMM_ORDER_MAX + 1], degree[FACTORS];
  if (threadIdx.x == 0)
    tfmm_op_regular_factors(p, diag, degree);
  __syncthreads();
  const int32_t cell = t.leaves[blockIdx.x];
  const size_t size = (size_t)(2 * tfmm_harmonics_count(p));
  const double *Lc = L + (size_t)cell * size;
  const double c[3] = {t.center[3 * cell], t.center[3 * cell + 1],
                       t.center[3 * cell + 2]};
  double re[triangle<P>::count], im[triangle<P>::count];
  for (int32_t b = t.body_begin[cell] + threadIdx.x; b < t.body_end[cell];
       b += blockDim.x) {
    tfmm_op_regular_by(p, t.pos[3 * b] - c[0], t.pos[3 * b + 1] - c[1],
                       t.pos[3 * b + 2] - c[2], diag, degree, re, im);
    double out[4];
    tfmm_op_l2p_eval(p, Lc, re, im, out);
    const double zero = 0.0;
    phi[b] = zero + out[0];
    for (int k = 0; k < 3; k++)
      grad[3 * (size_t)b + k] = zero + out[1 + k];
  }
}

/* M2P: one block a leaf, one thread a body, the lists of the leaf and of
 * each ancestor in turn, each in order (tfmm_m2p_pass). */
template <int P>
__global__ void m2p_leaves(tree_view t, csr_view list, int p, const double *M,
                           double *phi, double *grad) {
  const int32_t leaf = t.leaves[blockIdx.x];
  const size_t size = (size_t)(2 * tfmm_harmonics_count(p));
  double re[triangle<P + 1>::count], im[triangle<P + 1>::count];
  for (int32_t b = t.body_begin[leaf] + threadIdx.x; b < t.body_end[leaf];
       b += blockDim.x) {
    const double x[3] = {t.pos[3 * b], t.pos[3 * b + 1], t.pos[3 * b + 2]};
    double acc[4] = {phi[b], grad[3 * (size_t)b], grad[3 * (size_t)b + 1],
                     grad[3 * (size_t)b + 2]};
    for (int32_t c = leaf; c >= 0; c = t.parent[c])
      for (int64_t e = list.offset[c]; e < list.offset[c + 1]; e++) {
        const int32_t src = list.index[e];
        tfmm_op_irregular(p + 1, x[0] - t.center[3 * src],
                          x[1] - t.center[3 * src + 1],
                          x[2] - t.center[3 * src + 2], re, im);
        double out[4];
        tfmm_op_m2p_eval(p, M + (size_t)src * size, re, im, out);
        for (int k = 0; k < 4; k++)
          acc[k] += out[k];
      }
    phi[b] = acc[0];
    for (int k = 0; k < 3; k++)
      grad[3 * (size_t)b + k] = acc[1 + k];
  }
}

tfmm_status check(const tfmm_tree_gpu *tree, int p, const void *a,
                  const void *b, tfmm_error *err) {
  if (tree == NULL || a == NULL || b == NULL)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "farfield_gpu: an argument is NULL");
  if (p < 0 || p > TFMM_ORDER_MAX)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "farfield_gpu: order %d is outside 0..%d", p,
                          TFMM_ORDER_MAX);
  if (tree->ncells < 1 || tree->nleaves < 1 || tree->depth < 0 ||
      tree->depth >= TFMM_TREE_GPU_LEVELS)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "farfield_gpu: the tree is empty or not built");
  return TFMM_OK;
}

/* Opts the kernel into `bytes` of dynamic shared memory, within what the
 * current device allows a block (99 KB on sm_86, sm_89 and sm_120). */
template <typename K>
tfmm_status opt_in(K kernel, int bytes, int p, tfmm_error *err) {
  const int most = tfmm_gpu_shared_limit((const void *)kernel);
  if (bytes > most)
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "farfield_gpu: order %d needs %d bytes of shared "
                          "memory, more than the %d a block may have on this "
                          "GPU",
                          p, bytes, most);
  TFMM_CUDA_TRY(cudaFuncSetAttribute(
                    kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                err);
  return TFMM_OK;
}

} // namespace

extern "C" tfmm_status tfmm_farfield_gpu_m2l(const tfmm_tree_gpu *tree,
                                             const tfmm_csr_gpu *m2l, int p,
                                             const double *d_M, double *d_L,
                                             void *stream, tfmm_error *err) {
  tfmm_status st = check(tree, p, d_M, d_L, err);
  if (st == TFMM_OK && (m2l == NULL || m2l->ntargets != tree->ncells))
    st = tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "farfield_gpu: the M2L list must have one row a cell");
  const int shared = M2L_WARPS * m2l_slot_doubles(p) * (int)sizeof(double);
  if (st == TFMM_OK)
    st = opt_in(m2l_targets, shared, p, err);
  if (st != TFMM_OK)
    return st;
  m2l_targets<<<(unsigned)tree->ncells, 32 * M2L_WARPS, shared,
                (cudaStream_t)stream>>>(view_of(tree),
                                        {m2l->offset, m2l->index}, p, d_M, d_L);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

template <int P>
static tfmm_status l2p(const tfmm_tree_gpu *tree, int p, const double *d_L,
                       double *d_phi, double *d_grad, cudaStream_t s,
                       tfmm_error *err) {
  l2p_leaves<P><<<(unsigned)tree->nleaves, BLOCK, 0, s>>>(view_of(tree), p, d_L,
                                                          d_phi, d_grad);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_farfield_gpu_l2p(const tfmm_tree_gpu *tree, int p,
                                             const double *d_L, double *d_phi,
                                             double *d_grad, void *stream,
                                             tfmm_error *err) {
  tfmm_status st = check(tree, p, d_L, d_phi, err);
  if (st == TFMM_OK && d_grad == NULL)
    st = tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "farfield_gpu: an argument is NULL");
  if (st != TFMM_OK)
    return st;
  cudaStream_t s = (cudaStream_t)stream;
  if (p <= 8)
    return l2p<8>(tree, p, d_L, d_phi, d_grad, s, err);
  if (p <= 14)
    return l2p<14>(tree, p, d_L, d_phi, d_grad, s, err);
  return l2p<TFMM_ORDER_MAX>(tree, p, d_L, d_phi, d_grad, s, err);
}

static tfmm_status downward(const tfmm_tree_gpu *tree, int p, double *d_L,
                            double *d_phi, double *d_grad, int with_l2p,
                            void *stream, tfmm_error *err) {
  tfmm_status st = check(tree, p, d_L, d_phi, err);
  if (st == TFMM_OK && d_grad == NULL)
    st = tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "farfield_gpu: an argument is NULL");
  const int shared = translation_doubles(p) * (int)sizeof(double);
  if (st == TFMM_OK)
    st = opt_in(l2l_level, shared, p, err);
  if (st != TFMM_OK)
    return st;
  cudaStream_t s = (cudaStream_t)stream;
  for (int level = 1; level <= tree->depth; level++) {
    const int64_t begin = tree->level_begin[level],
                  cells = tree->level_begin[level + 1] - begin;
    if (cells <= 0)
      continue;
    l2l_level<<<(unsigned)cells, BLOCK, shared, s>>>(view_of(tree), p, begin,
                                                     d_L);
    TFMM_CUDA_TRY(cudaGetLastError(), err);
  }
  if (!with_l2p)
    return TFMM_OK;
  return tfmm_farfield_gpu_l2p(tree, p, d_L, d_phi, d_grad, stream, err);
}

template <int P>
static tfmm_status m2p(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *list,
                       int p, const double *d_M, double *d_phi, double *d_grad,
                       cudaStream_t s, tfmm_error *err) {
  m2p_leaves<P><<<(unsigned)tree->nleaves, BLOCK, 0, s>>>(
      view_of(tree), {list->offset, list->index}, p, d_M, d_phi, d_grad);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_farfield_gpu_m2p(const tfmm_tree_gpu *tree,
                                             const tfmm_csr_gpu *list, int p,
                                             const double *d_M, double *d_phi,
                                             double *d_grad, void *stream,
                                             tfmm_error *err) {
  tfmm_status st = check(tree, p, d_M, d_phi, err);
  if (st == TFMM_OK &&
      (list == NULL || d_grad == NULL || list->ntargets != tree->ncells))
    st = tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                        "farfield_gpu: the M2P list must have one row a cell");
  if (st != TFMM_OK)
    return st;
  cudaStream_t s = (cudaStream_t)stream;
  if (p <= 8)
    return m2p<8>(tree, list, p, d_M, d_phi, d_grad, s, err);
  if (p <= 14)
    return m2p<14>(tree, list, p, d_M, d_phi, d_grad, s, err);
  return m2p<TFMM_ORDER_MAX>(tree, list, p, d_M, d_phi, d_grad, s, err);
}

extern "C" tfmm_status tfmm_farfield_gpu_downward(const tfmm_tree_gpu *tree,
                                                  int p, double *d_L,
                                                  double *d_phi, double *d_grad,
                                                  void *stream,
                                                  tfmm_error *err) {
  return downward(tree, p, d_L, d_phi, d_grad, 1, stream, err);
}

extern "C" tfmm_status tfmm_farfield_gpu_l2l(const tfmm_tree_gpu *tree, int p,
                                             double *d_L, void *stream,
                                             tfmm_error *err) {
  double unused;
  return downward(tree, p, d_L, &unused, &unused, 0, stream, err);
}
