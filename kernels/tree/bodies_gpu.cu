/* Bodies on the device before their tree (bodies_gpu.h). */
#include "bodies_gpu.h"

#define CUDA_TRY_WHO "device bodies"
#include "cuda_try.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <math.h>

namespace {

constexpr int THREADS = 256;

unsigned blocks(int64_t count) {
  return (unsigned)((count + THREADS - 1) / THREADS);
}

/* The lowest index of a body with a position not finite (first) or a mass
 * not finite and positive (second), as tfmm_bodies_check tests. */
__global__ void first_invalid(int64_t n, const double *pos, const double *mass,
                              unsigned long long *bad) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (!isfinite(pos[3 * i]) || !isfinite(pos[3 * i + 1]) ||
      !isfinite(pos[3 * i + 2]))
    atomicMin(&bad[0], (unsigned long long)i);
  if (!isfinite(mass[i]) || !(mass[i] > 0))
    atomicMin(&bad[1], (unsigned long long)i);
}

/* How far back in a run of equal keys a body looks for one at its point
 * (a run longer than this without a match is left to the CPU's search). */
constexpr int64_t RUN_LOOKBACK = 64;

/* Sorted bodies that may share a point with another (counted): one whose
 * key equals its predecessor's and whose position equals that of one of
 * the RUN_LOOKBACK bodies before it in the run, or that lies deeper in a
 * run than that. Bodies at one point share a key, so a run of equal keys
 * without such a body has none at one point: the count is then 0 and the
 * CPU's search (tfmm_octree_find_coincident, on a copy of the tree) is
 * skipped. At 64M Plummer bodies a few keys are shared by bodies apart,
 * and that copy took 3 s. */
__global__ void maybe_coincident(int64_t n, const uint64_t *keys,
                                 const double *pos, unsigned long long *count) {
  const int64_t k = 1 + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (k >= n || keys[k] != keys[k - 1])
    return;
  const double x = pos[3 * k], y = pos[3 * k + 1], z = pos[3 * k + 2];
  for (int64_t j = k - 1; j >= 0 && keys[j] == keys[k]; j--) {
    if (k - j > RUN_LOOKBACK ||
        (pos[3 * j] == x && pos[3 * j + 1] == y && pos[3 * j + 2] == z)) {
      atomicAdd(count, 1ull);
      return;
    }
  }
}

/* Bounds of the bodies: lowest and highest corners, largest mass. */
struct Bounds {
  double lo[3], hi[3], heaviest;
};

struct BodyBounds {
  const double *pos, *mass;
  __host__ __device__ Bounds operator()(int64_t i) const {
    Bounds b;
    for (int d = 0; d < 3; d++)
      b.lo[d] = b.hi[d] = pos[3 * i + d];
    b.heaviest = mass[i];
    return b;
  }
};

/* Order-free: the minimum and maximum of finite values (units.c's). */
struct MergeBounds {
  __host__ __device__ Bounds operator()(const Bounds &a,
                                        const Bounds &b) const {
    Bounds r;
    for (int d = 0; d < 3; d++) {
      r.lo[d] = b.lo[d] < a.lo[d] ? b.lo[d] : a.lo[d];
      r.hi[d] = b.hi[d] > a.hi[d] ? b.hi[d] : a.hi[d];
    }
    r.heaviest = b.heaviest > a.heaviest ? b.heaviest : a.heaviest;
    return r;
  }
};

using BoundsIter =
    thrust::transform_iterator<BodyBounds, thrust::counting_iterator<int64_t>>;

/* pos 2^-k and mass 2^-j, exactly (units.c's tfmm_units_scale). */
__global__ void scale_bodies(int64_t n, const double *pos, const double *mass,
                             int k, int j, double *out) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  for (int d = 0; d < 3; d++)
    out[3 * i + d] = ldexp(pos[3 * i + d], -k);
  out[3 * n + i] = ldexp(mass[i], -j);
}

} // namespace

extern "C" tfmm_status
tfmm_bodies_gpu_first_invalid(size_t n, const double *pos, const double *mass,
                              unsigned long long *bad, void *stream,
                              tfmm_error *err) {
  cudaStream_t st = (cudaStream_t)stream;
  TRY(cudaMemsetAsync(bad, 0xff, 2 * sizeof *bad, st));
  first_invalid<<<blocks((int64_t)n), THREADS, 0, st>>>((int64_t)n, pos, mass,
                                                        bad);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_bodies_gpu_bounds(void *scratch,
                                              size_t *scratch_bytes, size_t n,
                                              const double *pos,
                                              const double *mass, double *out,
                                              void *stream, tfmm_error *err) {
  static_assert(sizeof(Bounds) == 7 * sizeof(double), "bounds are 7 doubles");
  cudaStream_t st = (cudaStream_t)stream;
  Bounds init;
  for (int d = 0; d < 3; d++) {
    init.lo[d] = INFINITY;
    init.hi[d] = -INFINITY;
  }
  init.heaviest = 0;
  BoundsIter it(thrust::counting_iterator<int64_t>(0), BodyBounds{pos, mass});
  if (scratch == nullptr)
    *scratch_bytes = 0;
  TRY(cub::DeviceReduce::Reduce(scratch, *scratch_bytes, it, (Bounds *)out,
                                (int)n, MergeBounds{}, init, st));
  return TFMM_OK;
}

extern "C" tfmm_status tfmm_bodies_gpu_scale(size_t n, const double *pos,
                                             const double *mass, int length_exp,
                                             int mass_exp, double *out,
                                             void *stream, tfmm_error *err) {
  scale_bodies<<<blocks((int64_t)n), THREADS, 0, (cudaStream_t)stream>>>(
      (int64_t)n, pos, mass, length_exp, mass_exp, out);
  TRY(cudaGetLastError());
  return TFMM_OK;
}

extern "C" tfmm_status
tfmm_bodies_gpu_maybe_coincident(size_t n, const uint64_t *keys,
                                 const double *pos, unsigned long long *count,
                                 void *stream, tfmm_error *err) {
  cudaStream_t st = (cudaStream_t)stream;
  TRY(cudaMemsetAsync(count, 0, sizeof *count, st));
  if (n > 1)
    maybe_coincident<<<blocks((int64_t)n - 1), THREADS, 0, st>>>(
        (int64_t)n, keys, pos, count);
  TRY(cudaGetLastError());
  return TFMM_OK;
}
