/* M2L for the gpu schedule (farfield_gpu.h, tfmm_farfield_gpu_m2l_fast):
 * a group of G lanes a target cell (G a power of two <= 32, lanes of one
 * warp), each lane's partial local expansion in registers over every G-th
 * source of the list, the G partials then added by a butterfly of warp
 * shuffles (the same order every run for the same G). G grows with the
 * work: one lane a cell when the cells alone fill the GPU (tens of
 * thousands of cells and more), up to a warp a cell on small trees, where
 * one thread a cell left most of the GPU idle (262,144 bodies at leaf 64:
 * ~8,000 cells, 2 warps an SM). The same translation as
 * tfmm_op_m2l_coeff (src/farfield/operators.h), regrouped so that every
 * number is loaded or formed once per translation:
 *
 *   L_j^k += (-1)^j sum_{l <= p - j} sum_{|m| <= l} M_l^m (x) I~_{l+j}^{m+k}
 *
 * with I~_n = I_n(u) |D|^{-n-1} the irregular harmonics of D = c_target -
 * c_source (formed at the unit vector u = D / |D| by the operators' column
 * recurrence, then scaled), M_l^m read once from the source's triangle and
 * used for every (j, k), and (x) the operators' product (conjugating as
 * their full arrays do for negative orders). The order of the sums is not
 * the CPU's, and fused multiply-adds are allowed: the results match the
 * CPU's to rounding (tests/test_farfield_gpu.c states the bound), not bit
 * for bit; the hybrid schedule keeps the exact kernel.
 *
 * Cost per translation at order p: sum_n (n + 1)(p - n + 1)^2 complex
 * multiply-adds (196 at p = 5) on values in registers, 2 (p + 1)(p + 2) / 2
 * loads of M (hits in L1/L2: neighbouring targets share sources) and the
 * p + 1 harmonic columns. Registers: 4 (p + 1)(p + 2) / 2 doubles (L and
 * I~) up to p = 6; at p = 7 and 8 I~ moves to the thread's slice of
 * shared memory (64 threads x (p + 1)(p + 2) doubles: 46 KB at p = 8) and
 * L alone stays in registers. Higher orders take the exact kernel. */
#include "farfield_gpu.h"

#include "gpu_context.h"

#include "farfield/operators.h"
#include "order_dispatch.cuh"

#include <cuda_runtime.h>

#include <stdint.h>

namespace {

constexpr int THREADS = 64;
constexpr int FAST_ORDER_MAX = 8;
/* Lanes a cell are doubled until the launch has this many threads (about
 * four resident waves of this register-heavy kernel on an H100), so the
 * lane count, and with it the order of the sums, depends on the tree
 * alone, not on the device. */
constexpr int64_t WANTED_THREADS = (int64_t)1 << 17;

__host__ __device__ constexpr int tri(int n, int m) {
  return n * (n + 1) / 2 + m;
}

/* The harmonics I~ of one translation: in registers up to order
 * REGISTER_ORDER_MAX, above in the thread's slice of shared memory
 * (entry t at t * THREADS: consecutive threads, consecutive banks). */
template <int P, bool SHARED, typename T> struct harmonics;

template <int P, typename T> struct harmonics<P, false, T> {
  T r[(P + 1) * (P + 2) / 2], i[(P + 1) * (P + 2) / 2];
  __device__ T &re(int t) { return r[t]; }
  __device__ T &im(int t) { return i[t]; }
};

template <int P, typename T> struct harmonics<P, true, T> {
  T *base;
  __device__ T &re(int t) { return base[(2 * t) * THREADS]; }
  __device__ T &im(int t) { return base[(2 * t + 1) * THREADS]; }
};

/* Column m of the irregular harmonics into h (the operators' recurrence,
 * tfmm_op_irregular_column, written through the accessors). */
template <int P, typename T, class H>
__device__ __forceinline__ void irregular_column(H &h, int m, T x, T y, T z) {
  const T inv_r2 = T(1) / (x * x + y * y + z * z);
  T dr = sqrt(inv_r2), di = T(0);
  for (int k = 1; k <= m; k++) {
    const T s = -T(2 * k - 1) * inv_r2;
    const T t = s * (x * dr - y * di);
    di = s * (x * di + y * dr);
    dr = t;
  }
  h.re(tri(m, m)) = dr;
  h.im(tri(m, m)) = di;
  if (m == P)
    return;
  const T zc1 = T(2 * m + 1) * z * inv_r2;
  h.re(tri(m + 1, m)) = zc1 * dr;
  h.im(tri(m + 1, m)) = zc1 * di;
#pragma unroll
  for (int n = m + 2; n <= P; n++) {
    const T zc = T(2 * n - 1) * z * inv_r2;
    const T w = T((n + m - 1) * (n - m - 1)) * inv_r2;
    h.re(tri(n, m)) = zc * h.re(tri(n - 1, m)) - w * h.re(tri(n - 2, m));
    h.im(tri(n, m)) = zc * h.im(tri(n - 1, m)) - w * h.im(tri(n - 2, m));
  }
}

constexpr int REGISTER_ORDER_MAX = 6;

/* v summed over the `lanes` lanes of this lane's group (a butterfly: every
 * lane of the group ends with the same bits). Every lane of the warp
 * calls it. */
template <typename T> __device__ __forceinline__ T group_sum(T v, int lanes) {
  for (int k = lanes >> 1; k >= 1; k >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, k);
  return v;
}

/* v's minimum over the `lanes` lanes of this lane's group (as group_sum). */
__device__ __forceinline__ double group_min(double v, int lanes) {
  for (int k = lanes >> 1; k >= 1; k >>= 1)
    v = fmin(v, __shfl_xor_sync(0xffffffffu, v, k));
  return v;
}

/* The float kernel's length a for a target of radius r and side lambda:
 * a = max(r, min(rho_min, 2^-30 lambda)), rho_min the least |D| of its
 * list (looked for only when r < 2^-30 lambda: lone bodies, coincident
 * ones). See m2l_group. Every lane of the warp calls it (it shuffles). */
__device__ __forceinline__ double
target_scale(bool live, double r, double lambda, double cx, double cy,
             double cz, const double *center, const int64_t *offset,
             const int32_t *index, int64_t cell, int lane, int lanes) {
  const double floor = ldexp(lambda, -30);
  double near = INFINITY;
  if (live && r < floor) {
    const int64_t e1 = offset[cell + 1];
    for (int64_t e = offset[cell] + lane; e < e1; e += lanes) {
      const int32_t src = __ldg(index + e);
      const double dx = cx - __ldg(center + 3 * (int64_t)src),
                   dy = cy - __ldg(center + 3 * (int64_t)src + 1),
                   dz = cz - __ldg(center + 3 * (int64_t)src + 2);
      near = fmin(near, sqrt(dx * dx + dy * dy + dz * dz));
    }
  }
  near = group_min(near, lanes);
  const double a = fmax(r, fmin(near, floor));
  return live && a > 0 && a < INFINITY ? a : 1.0;
}

/* The translation of every source of a target's list in precision T, the
 * harmonics formed at the unit vector u = D / |D| (rho = |D|).
 *
 * In double: the harmonics are scaled by rho^{-n-1} and M is the upward
 * pass's, as the formula above reads.
 *
 * In float, rho^{-n-1} and M_l leave float's range deep in a tree, so every
 * factor is made a ratio of lengths at most 1, scaled per translation:
 * with b the source's radius (M_l arrives as M_l / b^l, scale_multipoles;
 * zero for l >= 1 when b = 0, where M_l is) and a a length of the target,
 *
 *   a^{j+1} L_j += (a / rho)^{j+1} sum_l (b / rho)^l (M_l / b^l) (x) I_{l+j}(u)
 *
 * and L_j is unscaled in double when written. The opening criterion
 * (mac_rule.h: r_A + r_B < theta rho) makes b / rho < theta < 1; a is the
 * target's radius r, so a / rho < theta as well, except where r is nearly
 * 0 (a lone body): there a = min(rho_min, 2^-30 lambda) >= r keeps
 * a / rho <= 1 and the gradient's (a / rho)^2 above float's least normal
 * (rho <= 2^21 sqrt 3 lambda in a tree of at most 21 levels below the
 * root). What (a / rho)^{j+1} can lose to underflow reaches the bodies,
 * all within r <= a of the centre, as (r / a)^j (a / rho)^{j+1}: beyond
 * float's precision against the monopole's a / rho. Cost over double's
 * formula: a second array of TRI complex partial sums per translation and
 * TRI complex multiply-adds to scale it into L. */
template <int P, typename T>
__global__ void __launch_bounds__(THREADS)
    m2l_group(int64_t ncells, int lanes, const double *center,
              const double *radius, const double *side, const int64_t *offset,
              const int32_t *index, const T *M, double *L) {
  constexpr int TRI = (P + 1) * (P + 2) / 2;
  constexpr bool SHARED = P > REGISTER_ORDER_MAX;
  constexpr bool SCALED = sizeof(T) == 4;
  extern __shared__ __align__(8) unsigned char slice_bytes[];
  T *slices = reinterpret_cast<T *>(slice_bytes);
  const int64_t thread = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const int64_t cell = thread / lanes;
  const int lane = (int)(thread % lanes);
  /* A warp whose every lane is past the cells leaves together; the others
   * stay whole to the shuffles, their extra lanes with empty ranges. */
  if ((thread & ~(int64_t)31) / lanes >= ncells)
    return;
  harmonics<P, SHARED, T> h;
  if constexpr (SHARED)
    h.base = slices + threadIdx.x;
  T lr[TRI], li[TRI];
#pragma unroll
  for (int t = 0; t < TRI; t++)
    lr[t] = li[t] = T(0);
  const bool live = cell < ncells;
  const double cx = live ? center[3 * cell] : 0.0,
               cy = live ? center[3 * cell + 1] : 0.0,
               cz = live ? center[3 * cell + 2] : 0.0;
  double alen = 1.0; /* SCALED: the target's length a */
  if constexpr (SCALED)
    alen =
        target_scale(live, live ? radius[cell] : 0.0, live ? side[cell] : 1.0,
                     cx, cy, cz, center, offset, index, cell, lane, lanes);
  const int64_t e1 = live ? offset[cell + 1] : 0;
  for (int64_t e = (live ? offset[cell] : 0) + lane; e < e1; e += lanes) {
    const int32_t src = __ldg(index + e);
    const double dx = cx - __ldg(center + 3 * (int64_t)src),
                 dy = cy - __ldg(center + 3 * (int64_t)src + 1),
                 dz = cz - __ldg(center + 3 * (int64_t)src + 2);
    const double inv_rho = rsqrt(dx * dx + dy * dy + dz * dz);
#pragma unroll
    for (int m = 0; m <= P; m++)
      irregular_column<P, T>(h, m, T(dx * inv_rho), T(dy * inv_rho),
                             T(dz * inv_rho));
    T q = T(1); /* SCALED: b / rho */
    if constexpr (SCALED) {
      q = T(__ldg(radius + src) * inv_rho);
    } else {
      double s = inv_rho; /* |D|^{-n-1} */
#pragma unroll
      for (int n = 0; n <= P; n++) {
#pragma unroll
        for (int m = 0; m <= n; m++) {
          h.re(tri(n, m)) *= s;
          h.im(tri(n, m)) *= s;
        }
        s *= inv_rho;
      }
    }
    /* The translation's sums: SCALED, its own (then scaled into L by
     * (a / rho)^{j+1}); else L's directly. */
    T cr[SCALED ? TRI : 1], ci[SCALED ? TRI : 1];
    T *sr = lr, *si = li;
    if constexpr (SCALED) {
#pragma unroll
      for (int t = 0; t < TRI; t++)
        cr[t] = ci[t] = T(0);
      sr = cr;
      si = ci;
    }
    const T *Ms = M + (size_t)src * (size_t)(2 * TRI);
    T ql = T(1); /* q^l */
#pragma unroll
    for (int l = 0; l <= P; l++) {
#pragma unroll
      for (int a = 0; a <= l; a++) {
        const T xr = ql * __ldg(Ms + 2 * tri(l, a));
        const T xi = a == 0 ? T(0) : ql * __ldg(Ms + 2 * tri(l, a) + 1);
#pragma unroll
        for (int sgn = 1; sgn >= -1; sgn -= 2) {
          if (a == 0 && sgn < 0)
            continue;
          const int m = sgn * a;
          /* M_l^m as tfmm_op_coeff_full forms it. */
          const T par = (a & 1) ? T(-1) : T(1);
          const T ar = m >= 0 ? xr : par * xr;
          const T ai = a == 0 ? T(0) : m > 0 ? xi : -par * xi;
#pragma unroll
          for (int j = 0; j <= P - l; j++) {
            const T sj = (j & 1) ? T(-1) : T(1);
#pragma unroll
            for (int k = 0; k <= j; k++) {
              /* I~_{l+j}^{m+k} as tfmm_op_harmonic_full forms it. */
              const int n = l + j, qq = m + k, b = qq < 0 ? -qq : qq;
              const T pb = (b & 1) ? T(-1) : T(1);
              const T hr = h.re(tri(n, b)), hi = h.im(tri(n, b));
              const T br = qq > 0 ? hr : pb * hr;
              const T bi = qq > 0 ? hi : -pb * hi;
              sr[tri(j, k)] += sj * (ar * br + ai * bi);
              si[tri(j, k)] += sj * (ai * br - ar * bi);
            }
          }
        }
      }
      ql *= q;
    }
    if constexpr (SCALED) {
      const T t = T(alen * inv_rho);
      T tj = t; /* (a / rho)^{j+1} */
#pragma unroll
      for (int j = 0; j <= P; j++) {
#pragma unroll
        for (int k = 0; k <= j; k++) {
          lr[tri(j, k)] += tj * cr[tri(j, k)];
          li[tri(j, k)] += tj * ci[tri(j, k)];
        }
        tj *= t;
      }
    }
  }
#pragma unroll
  for (int t = 0; t < TRI; t++) {
    lr[t] = group_sum(lr[t], lanes);
    li[t] = group_sum(li[t], lanes);
  }
  if (!live || lane != 0)
    return;
  double *Lc = L + (size_t)cell * (size_t)(2 * TRI);
  const double inv_a = 1.0 / alen;
  double unscale = inv_a; /* a^{-(j+1)} */
#pragma unroll
  for (int j = 0; j <= P; j++) {
#pragma unroll
    for (int k = 0; k <= j; k++) {
      Lc[2 * tri(j, k)] = unscale * (double)lr[tri(j, k)];
      Lc[2 * tri(j, k) + 1] = k > 0 ? unscale * (double)li[tri(j, k)] : 0.0;
    }
    unscale *= inv_a;
  }
}

/* Ms = M_l^m / b^l in float for every cell, b its radius (zero for
 * l >= 1 where b = 0: all its bodies at its centre, so M_l = 0): the float
 * kernel's sources (see m2l_group). |M_l^m| <= mass b^l, so Ms stays
 * within float's range wherever the masses do. */
__global__ void scale_multipoles(int64_t ncells, int p, const double *radius,
                                 const double *M, float *Ms) {
  const int tri_count = (p + 1) * (p + 2) / 2;
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= ncells * tri_count)
    return;
  const int64_t cell = i / tri_count;
  const int t = (int)(i % tri_count);
  int l = 0;
  while ((l + 1) * (l + 2) / 2 <= t)
    l++;
  const double b = radius[cell];
  double scale = l == 0 ? 1.0 : b > 0 ? 1.0 / b : 0.0, inv = scale;
  for (int k = 1; k < l; k++)
    scale *= inv;
  Ms[2 * i] = (float)(M[2 * i] * scale);
  Ms[2 * i + 1] = (float)(M[2 * i + 1] * scale);
}

/* G for n cells: see WANTED_THREADS. */
int lanes_for(int64_t ncells) {
  int lanes = 1;
  while (lanes < 32 && ncells * lanes < WANTED_THREADS)
    lanes *= 2;
  return lanes;
}

template <int P, typename T>
tfmm_status launch(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *m2l,
                   const T *d_M, double *d_L, int lanes, cudaStream_t s,
                   tfmm_error *err) {
  const int64_t n = tree->ncells, threads = n * lanes;
  const size_t shared =
      P > REGISTER_ORDER_MAX
          ? (size_t)THREADS * (size_t)((P + 1) * (P + 2)) * sizeof(T)
          : 0;
  if (shared > 48 * 1024)
    TFMM_CUDA_TRY(cudaFuncSetAttribute(
                      m2l_group<P, T>,
                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared),
                  err);
  m2l_group<P, T>
      <<<(unsigned)((threads + THREADS - 1) / THREADS), THREADS, shared, s>>>(
          n, lanes, tree->d_center, tree->d_radius, tree->d_size, m2l->offset,
          m2l->index, d_M, d_L);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return TFMM_OK;
}

template <typename T>
tfmm_status launch_order(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *m2l,
                         int p, const T *d_M, double *d_L, int lanes,
                         cudaStream_t s, tfmm_error *err) {
  return tfmm_order_dispatch<8>(p, [&](auto order) {
    return launch<decltype(order)::value, T>(tree, m2l, d_M, d_L, lanes, s,
                                             err);
  });
}

tfmm_status check_lanes(int lanes, tfmm_error *err) {
  if (lanes != 0 && (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) != 0))
    return tfmm_error_set(err, TFMM_ERR_INVALID_ARGUMENT,
                          "M2L: lanes a cell %d is not a power of two "
                          "from 1 to 32",
                          lanes);
  return TFMM_OK;
}

bool fast_applies(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *m2l, int p,
                  const double *d_M, const double *d_L) {
  return tree != NULL && m2l != NULL && p >= 0 && p <= FAST_ORDER_MAX &&
         tree->ncells >= 1 && m2l->ntargets == tree->ncells && d_M != NULL &&
         d_L != NULL;
}

} // namespace

extern "C" tfmm_status tfmm_farfield_gpu_m2l_fast(const tfmm_tree_gpu *tree,
                                                  const tfmm_csr_gpu *m2l,
                                                  int p, const double *d_M,
                                                  double *d_L, void *stream,
                                                  tfmm_error *err) {
  return tfmm_farfield_gpu_m2l_lanes(tree, m2l, p, 0, d_M, d_L, stream, err);
}

extern "C" tfmm_status
tfmm_farfield_gpu_m2l_lanes(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *m2l,
                            int p, int lanes, const double *d_M, double *d_L,
                            void *stream, tfmm_error *err) {
  if (check_lanes(lanes, err) != TFMM_OK)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (!fast_applies(tree, m2l, p, d_M, d_L))
    return tfmm_farfield_gpu_m2l(tree, m2l, p, d_M, d_L, stream, err);
  return launch_order<double>(tree, m2l, p, d_M, d_L,
                              lanes ? lanes : lanes_for(tree->ncells),
                              (cudaStream_t)stream, err);
}

extern "C" int tfmm_farfield_gpu_m2l_lanes_for(int64_t targets) {
  return lanes_for(targets);
}

extern "C" size_t tfmm_farfield_gpu_m2l_float_bytes(int64_t ncells, int p) {
  return (size_t)ncells * (size_t)((p + 1) * (p + 2)) * sizeof(float);
}

extern "C" tfmm_status
tfmm_farfield_gpu_m2l_float(const tfmm_tree_gpu *tree, const tfmm_csr_gpu *m2l,
                            int p, int lanes, const double *d_M, float *d_Ms,
                            double *d_L, void *stream, tfmm_error *err) {
  if (check_lanes(lanes, err) != TFMM_OK)
    return TFMM_ERR_INVALID_ARGUMENT;
  if (!fast_applies(tree, m2l, p, d_M, d_L) || d_Ms == NULL)
    return tfmm_farfield_gpu_m2l(tree, m2l, p, d_M, d_L, stream, err);
  cudaStream_t s = (cudaStream_t)stream;
  const int64_t count = tree->ncells * (int64_t)((p + 1) * (p + 2) / 2);
  scale_multipoles<<<(unsigned)((count + 255) / 256), 256, 0, s>>>(
      tree->ncells, p, tree->d_radius, d_M, d_Ms);
  TFMM_CUDA_TRY(cudaGetLastError(), err);
  return launch_order<float>(tree, m2l, p, d_Ms, d_L,
                             lanes ? lanes : lanes_for(tree->ncells), s, err);
}
